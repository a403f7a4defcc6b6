"""Configuration of the TrOCR recognizer: transformers' TrOCR decoder over textrec's convolutional line encoder."""

import copy

from transformers import TrOCRConfig, VisionEncoderDecoderConfig

from .checkpoint_format import CheckpointFormatMixin
from .configuration_self_attention import SelfAttentionRecognizerConfig
from .presets import ConfigPresetsMixin


class TrOCRRecognizerConfig(CheckpointFormatMixin, ConfigPresetsMixin, VisionEncoderDecoderConfig):
    r"""
    Configuration of [`TrOCRForTextRecognition`]: a `VisionEncoderDecoderModel` whose decoder is transformers'
    `TrOCRForCausalLM` and whose encoder is the self-attention recognizer's convolutional encoder
    (`SelfAttentionRecognizerEncoder`: a CNN with a strided stem, its feature map flattened column by column,
    then a transformer encoder over it), which starts reading from scratch in minutes where a ViT's patches
    take hours; with an optional CTC head on the encoder (joint CTC-attention training).

    Args:
        encoder (`dict` or `SelfAttentionRecognizerConfig`): the encoder (only its CNN, `hidden_size` and
            `encoder_layers` matter; its decoder fields are unused).
        decoder (`dict` or `TrOCRConfig`): the TrOCR decoder.
        ctc_loss_weight (`float`): 0 for none (TrOCR's cross-entropy alone); otherwise the weight of an
            auxiliary CTC loss over the encoder outputs, the cross-entropy weighted `1 - ctc_loss_weight`. It
            also enables `ctc_decode()` and `joint_decode()`.
        max_target_length (`int`): longest label in tokens, eos included; `generate()`'s default length.

    Presets (`from_preset`): `tiny` (tests), `base` (the self-attention `base` encoder, a 3-layer TrOCR
    decoder, no CTC), `fast` (the encoder of the self-attention `fast` preset, a 2-layer TrOCR decoder, CTC
    weight 0.3: textrec's line recipe, 2.5M parameters). `from_preset` takes the keyword arguments textrec-train
    gives every architecture (`vocab_size`, `num_channels`, token ids, `max_target_length`) and, as overrides,
    `encoder` and `decoder` dicts merged into the preset's, and `ctc_loss_weight`.
    """

    model_type = "textrec-trocr"
    sub_configs_defaults = {"encoder": SelfAttentionRecognizerConfig, "decoder": TrOCRConfig}

    PRESETS = {
        "tiny": dict(
            encoder=dict(cnn_stem_channels=8, cnn_channels=[8, 16, 32, 32], cnn_pooling=[[2, 2], [2, 1], [2, 1], [2, 1]],
                         cnn_convs_per_stage=1, hidden_size=32, encoder_layers=1, num_attention_heads=2, ffn_dim=64),
            decoder=dict(d_model=32, decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=64),
            ctc_loss_weight=0.3,
        ),
        "base": dict(
            encoder=dict(cnn_channels=[32, 64, 128, 256], hidden_size=256, num_attention_heads=4, ffn_dim=1024),
            decoder=dict(d_model=256, decoder_layers=3, decoder_attention_heads=4, decoder_ffn_dim=1024),
            ctc_loss_weight=0.0,
        ),
        "fast": dict(
            encoder=dict(cnn_stem_channels=16, cnn_channels=[32, 64, 128, 192], cnn_pooling=[[2, 2], [2, 1], [2, 1], [2, 1]],
                         cnn_convs_per_stage=1, hidden_size=192, encoder_layers=2, num_attention_heads=4, ffn_dim=768,
                         dropout=0.0),
            decoder=dict(d_model=192, decoder_layers=2, decoder_attention_heads=4, decoder_ffn_dim=768, dropout=0.0,
                         attention_dropout=0.0, activation_dropout=0.0),
            ctc_loss_weight=0.3,
        ),
    }

    def __init__(self, ctc_loss_weight: float = 0.0, max_target_length: int = 64, **kwargs):
        if not 0 <= ctc_loss_weight < 1:
            raise ValueError(f"ctc_loss_weight must be in [0, 1), got {ctc_loss_weight}.")
        self.ctc_loss_weight = ctc_loss_weight
        self.max_target_length = max_target_length
        super().__init__(**kwargs)
        self.tie_word_embeddings = False

    @property
    def vocab_size(self) -> int:
        return self.decoder.vocab_size

    @property
    def num_channels(self) -> int:
        return self.encoder.num_channels

    @classmethod
    def from_preset(
        cls,
        preset: str,
        vocab_size: int = 100,
        num_channels: int = 1,
        max_target_length: int = 64,
        pad_token_id: int = 0,
        bos_token_id: int = 1,
        eos_token_id: int = 2,
        decoder_start_token_id: int = 1,
        encoder: dict | None = None,
        decoder: dict | None = None,
        **overrides,
    ) -> "TrOCRRecognizerConfig":
        """A recognizer built from scratch with a preset's sizes (see the class docstring)."""
        if preset not in cls.PRESETS:
            raise ValueError(f"Unknown preset {preset!r} for {cls.__name__}; choose from {sorted(cls.PRESETS)}.")
        sizes = copy.deepcopy(cls.PRESETS[preset])
        token_ids = dict(
            pad_token_id=pad_token_id,
            bos_token_id=bos_token_id,
            eos_token_id=eos_token_id,
            decoder_start_token_id=decoder_start_token_id,
        )
        encoder_config = SelfAttentionRecognizerConfig(
            **{**sizes.pop("encoder"), "num_channels": num_channels, "vocab_size": vocab_size, **(encoder or {})}
        )
        decoder_config = TrOCRConfig(
            **{
                **sizes.pop("decoder"),
                "vocab_size": vocab_size,
                "max_position_embeddings": max_target_length + 2,
                "scale_embedding": True,
                **token_ids,
                **(decoder or {}),
            }
        )
        decoder_config.is_decoder = True
        return cls(
            encoder=encoder_config.to_dict(),
            decoder=decoder_config.to_dict(),
            max_target_length=max_target_length,
            **token_ids,
            **{**sizes, **overrides},
        )


TrOCRRecognizerConfig.register_for_auto_class()
