"""textrec's processing: tokenizers, image processors, processors, the recognition pipeline, data
and metrics. Importing it registers the `text-recognition` pipeline."""

from .image_processing_text_recognition import TextRecognitionImageProcessor, load_image
from .pipeline_text_recognition import TextRecognitionPipeline
from .processing_text_recognition import TextRecognitionProcessor
from .tokenization_char import DEFAULT_CHARSET, build_char_tokenizer, load_charset

__all__ = [
    "DEFAULT_CHARSET",
    "TextRecognitionImageProcessor",
    "TextRecognitionPipeline",
    "TextRecognitionProcessor",
    "build_char_tokenizer",
    "load_charset",
    "load_image",
]
