"""textrec's recognition models, registered with transformers' Auto classes.

`ARCHITECTURES` maps each architecture's command-line name to its configuration and model classes.
"""

from transformers import AutoConfig, AutoModelForImageTextToText

from .self_attention.configuration_self_attention import SelfAttentionRecognizerConfig
from .self_attention.modeling_self_attention import (
    SelfAttentionRecognizerEncoder,
    SelfAttentionRecognizerForTextRecognition,
)

ARCHITECTURES = {
    "self-attention": (SelfAttentionRecognizerConfig, SelfAttentionRecognizerForTextRecognition),
}

for _config_class, _model_class in ARCHITECTURES.values():
    AutoConfig.register(_config_class.model_type, _config_class, exist_ok=True)
    AutoModelForImageTextToText.register(_config_class, _model_class, exist_ok=True)

__all__ = [
    "ARCHITECTURES",
    "SelfAttentionRecognizerConfig",
    "SelfAttentionRecognizerEncoder",
    "SelfAttentionRecognizerForTextRecognition",
]
