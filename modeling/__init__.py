"""textrec's models, registered with transformers' Auto classes.

`ARCHITECTURES` maps each recognizer's command-line name to its configuration and model classes
(image in, text out: they share the test matrix). `DETECTORS` does the same for the page models (a page in,
its text lines' regions out), `LANGUAGE_MODELS` for the text-only models (token ids in), with their base model
and their pre-training model.
"""

from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoModelForImageTextToText, AutoModelForMaskedLM

from .charbert.configuration_charbert import CharBertConfig
from .charbert.modeling_charbert import CharBertForMaskedLM, CharBertModel
from .comer.configuration_comer import CoMERConfig
from .crnn.configuration_crnn import CRNNConfig
from .crnn.modeling_crnn import CRNNEncoder, CRNNForTextRecognition
from .line_detector.configuration_line_detector import LineDetectorConfig
from .line_detector.modeling_line_detector import LineDetectorForTextLineDetection
from .comer.modeling_comer import CoMEREncoder, CoMERForFormulaRecognition
from .resnet_transformer.configuration_resnet_transformer import ResNetTransformerConfig
from .resnet_transformer.modeling_resnet_transformer import (
    ResNetTransformerEncoder,
    ResNetTransformerForTextRecognition,
)
from .self_attention.configuration_self_attention import SelfAttentionRecognizerConfig
from .self_attention.modeling_self_attention import (
    SelfAttentionRecognizerEncoder,
    SelfAttentionRecognizerForTextRecognition,
)
from .sharp_attention.configuration_sharp_attention import SharpAttentionConfig
from .sharp_attention.modeling_sharp_attention import SharpAttentionEncoder, SharpAttentionForTextRecognition
from .trocr.configuration_trocr import TrOCRRecognizerConfig
from .trocr.modeling_trocr import TrOCRForTextRecognition
from .trocr_charbert.configuration_trocr_charbert import TrOCRCharBertConfig, TrOCRCharBertDecoderConfig
from .trocr_charbert.modeling_trocr_charbert import TrOCRCharBertForCausalLM, TrOCRCharBertForTextRecognition

ARCHITECTURES = {
    "self-attention": (SelfAttentionRecognizerConfig, SelfAttentionRecognizerForTextRecognition),
    "resnet-transformer": (ResNetTransformerConfig, ResNetTransformerForTextRecognition),
    "sharp-attention": (SharpAttentionConfig, SharpAttentionForTextRecognition),
    "comer": (CoMERConfig, CoMERForFormulaRecognition),
    "crnn": (CRNNConfig, CRNNForTextRecognition),
    "trocr": (TrOCRRecognizerConfig, TrOCRForTextRecognition),
    "trocr-charbert": (TrOCRCharBertConfig, TrOCRCharBertForTextRecognition),
}

DETECTORS = {
    "line-detector": (LineDetectorConfig, LineDetectorForTextLineDetection),
}

LANGUAGE_MODELS = {
    "charbert": (CharBertConfig, CharBertModel, CharBertForMaskedLM),
}

for _config_class, _model_class in ARCHITECTURES.values():
    AutoConfig.register(_config_class.model_type, _config_class, exist_ok=True)
    AutoModelForImageTextToText.register(_config_class, _model_class, exist_ok=True)

for _config_class, _model_class in DETECTORS.values():
    AutoConfig.register(_config_class.model_type, _config_class, exist_ok=True)
    AutoModel.register(_config_class, _model_class, exist_ok=True)

for _config_class, _base_class, _pretraining_class in LANGUAGE_MODELS.values():
    AutoConfig.register(_config_class.model_type, _config_class, exist_ok=True)
    AutoModel.register(_config_class, _base_class, exist_ok=True)
    AutoModelForMaskedLM.register(_config_class, _pretraining_class, exist_ok=True)

# The composite's decoder is a causal language model in its own right (a VisionEncoderDecoderModel decoder).
AutoConfig.register(TrOCRCharBertDecoderConfig.model_type, TrOCRCharBertDecoderConfig, exist_ok=True)
AutoModelForCausalLM.register(TrOCRCharBertDecoderConfig, TrOCRCharBertForCausalLM, exist_ok=True)

__all__ = [
    "ARCHITECTURES",
    "DETECTORS",
    "LANGUAGE_MODELS",
    "CharBertConfig",
    "CharBertForMaskedLM",
    "CharBertModel",
    "CoMERConfig",
    "CoMEREncoder",
    "CoMERForFormulaRecognition",
    "CRNNConfig",
    "CRNNEncoder",
    "CRNNForTextRecognition",
    "LineDetectorConfig",
    "LineDetectorForTextLineDetection",
    "ResNetTransformerConfig",
    "ResNetTransformerEncoder",
    "ResNetTransformerForTextRecognition",
    "SelfAttentionRecognizerConfig",
    "SelfAttentionRecognizerEncoder",
    "SelfAttentionRecognizerForTextRecognition",
    "SharpAttentionConfig",
    "SharpAttentionEncoder",
    "SharpAttentionForTextRecognition",
    "TrOCRCharBertConfig",
    "TrOCRForTextRecognition",
    "TrOCRRecognizerConfig",
    "TrOCRCharBertDecoderConfig",
    "TrOCRCharBertForCausalLM",
    "TrOCRCharBertForTextRecognition",
]
