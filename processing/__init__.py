"""textrec's processing: everything between images or text and the models.

Tokenizers, image processors and processors; the `text-recognition` pipeline and batched inference
(`inference`); data (`data`) and metrics (`metrics`); Tesseract, the peer (`tesseract`); and training
(`training`: the one `train()` path, the Trainer, recipes and each architecture's input settings).
Importing it registers the `text-recognition` pipeline, and textrec's processors with `AutoProcessor` and image
processors with `AutoImageProcessor` for the configurations of `textrec.modeling`.
"""

from transformers import AutoImageProcessor, AutoProcessor

from textrec.modeling import ARCHITECTURES, DETECTORS, LANGUAGE_MODELS

from .image_processing_line_detection import LineDetectionImageProcessor
from .image_processing_text_recognition import TextRecognitionImageProcessor, load_image
from .pipeline_text_recognition import TextRecognitionPipeline
from .processing_charbert import CharBertProcessor
from .processing_text_recognition import TextRecognitionProcessor
from .tokenization_char import DEFAULT_CHARSET, build_char_tokenizer, load_charset
from .tokenization_charbert import build_word_vocab, train_charbert_tokenizer
from .tokenization_latex import CROHME_DICTIONARY, build_latex_tokenizer, split_latex, unknown_latex_tokens

for _config_class, _ in ARCHITECTURES.values():
    AutoProcessor.register(_config_class, TextRecognitionProcessor, exist_ok=True)
    # transformers 5.25 resolves a processor's image processor through AutoImageProcessor by the model's config
    AutoImageProcessor.register(_config_class, TextRecognitionImageProcessor, exist_ok=True)
for _config_class, _ in DETECTORS.values():
    AutoImageProcessor.register(_config_class, LineDetectionImageProcessor, exist_ok=True)
for _config_class, *_ in LANGUAGE_MODELS.values():
    AutoProcessor.register(_config_class, CharBertProcessor, exist_ok=True)

__all__ = [
    "CROHME_DICTIONARY",
    "DEFAULT_CHARSET",
    "CharBertProcessor",
    "LineDetectionImageProcessor",
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
