"""textrec's processing: tokenizers, image processors, processors, the recognition pipeline, data
and metrics. Importing it registers the `text-recognition` pipeline."""

from .image_processing_text_recognition import TextRecognitionImageProcessor, load_image
from .pipeline_text_recognition import TextRecognitionPipeline
from .processing_charbert import CharBertProcessor
from .processing_text_recognition import TextRecognitionProcessor
from .tokenization_char import DEFAULT_CHARSET, build_char_tokenizer, load_charset
from .tokenization_charbert import build_word_vocab, train_charbert_tokenizer
from .tokenization_latex import CROHME_DICTIONARY, build_latex_tokenizer, split_latex, unknown_latex_tokens

__all__ = [
    "CROHME_DICTIONARY",
    "DEFAULT_CHARSET",
    "CharBertProcessor",
    "TextRecognitionImageProcessor",
    "TextRecognitionPipeline",
    "TextRecognitionProcessor",
    "build_char_tokenizer",
    "build_latex_tokenizer",
    "build_word_vocab",
    "load_charset",
    "load_image",
    "split_latex",
    "train_charbert_tokenizer",
    "unknown_latex_tokens",
]
