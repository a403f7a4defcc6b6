"""Configuration of the TrOCR–CharBERT composite: a TrOCR decoder whose input embeddings are corrected by
CharBERT, and the vision encoder-decoder that holds it."""

import copy

from transformers import PretrainedConfig, TrOCRConfig, ViTConfig, VisionEncoderDecoderConfig
from transformers.configuration_utils import SubConfigSpec
from transformers.models.auto.configuration_auto import AutoConfig

from .checkpoint_format import CheckpointFormatMixin
from .configuration_charbert import CharBertConfig
from .configuration_self_attention import SelfAttentionRecognizerConfig
from .presets import ConfigPresetsMixin


class TrOCRCharBertDecoderConfig(CheckpointFormatMixin, PretrainedConfig):
    r"""
    Configuration of [`TrOCRCharBertForCausalLM`]: a TrOCR decoder (`trocr`, a `TrOCRConfig`) and the
    CharBERT corrector of its input embeddings (`charbert`, a causal `CharBertConfig`), joined by tensor
    transforms and a tensor combine.

    The decoder's (scaled) token embeddings E `(batch, T, d_model)` are mapped by one transform to
    CharBERT token embeddings `(batch, T_c, charbert.hidden_size)` and by another to character
    embeddings `(batch, T_c * max_chars_per_token, charbert.char_embedding_size)`; CharBERT's token and
    character outputs are mapped back to `(batch, T, d_model)` (T' and C'), and the combine merges E, T'
    and C' into what the decoder layers read.

    Args:
        trocr (`TrOCRConfig` or `dict`): the decoder.
        charbert (`CharBertConfig` or `dict`): the corrector; must be `causal` (no position may see the
            tokens after it, which are its own labels under teacher forcing).
        sequence_layout (`str`): `"sliding"`: T_c = T, the transforms' causal convolutions slide along
            the sequence, and a line of 20 tokens costs what 20 tokens cost; `"fixed"` (the thesis):
            the sequence axis is the convolutions' channel axis, with fixed lengths `max_decoder_length`
            -> `charbert_length` (inputs are padded to `max_decoder_length`), the channel mixing masked
            to stay causal.
        max_decoder_length, charbert_length (`int`): the fixed layout's lengths (thesis: 512 and 510).
        transform_conv_layers, transform_ffn_layers (`int`): convolutions and linear layers per transform.
        transform_ffn_size (`int`): hidden width of the transforms' feed-forward layers (default: the
            larger of the two widths the transform maps between).
        transform_batch_norm (`bool`): batch normalisation after each transform convolution. In the
            sliding layout its training-mode statistics pool over all positions of the batch, future
            ones included; off by default.
        transform_dropout (`float`): dropout between transform layers.
        leaky_relu_slope (`float`): negative slope of every LeakyReLU.
        combine (`str`): `"add"`, `"mean"`, `"linear"` or `"conv"` (see `tensor_combine.py`).
        combine_hidden_size (`int`), combine_kernel_size (`int`): the attention nets of `linear`/`conv`.
        alignment_loss_weight (`float`): weight of the thesis's cosine term, `1 - cos` between the
            transformed token embeddings fed to CharBERT and CharBERT's own (frozen) word embeddings of
            the ground-truth tokens, averaged over positions; 0 turns it off. Needs a CharBERT that
            shares the decoder's vocabulary (as TrOCR and CharBERT-RoBERTa do).
        initializer_range (`float`): not used by the transforms (Xavier) but kept for transformers.
        incremental_corrector (`bool`): in cached decoding, a step runs the corrector on its new token only,
            keeping CharBERT's keys and values and the convolutions' tails in the cache (the same tokens and
            scores as re-reading the prefix, at a cost that does not grow with it). Sliding layout with a
            per-token character GRU (`charbert.char_rnn_scope="token"`) only; otherwise the corrector
            re-reads the prefix at every step.
    """

    model_type = "textrec-trocr-charbert-decoder"
    sub_configs = {"trocr": TrOCRConfig, "charbert": CharBertConfig}

    def __init__(
        self,
        trocr: TrOCRConfig | dict | None = None,
        charbert: CharBertConfig | dict | None = None,
        sequence_layout: str = "sliding",
        max_decoder_length: int = 512,
        charbert_length: int = 510,
        transform_conv_layers: int = 1,
        transform_ffn_layers: int = 2,
        transform_ffn_size: int | None = None,
        transform_batch_norm: bool = False,
        transform_dropout: float = 0.1,
        leaky_relu_slope: float = 0.01,
        combine: str = "add",
        combine_hidden_size: int = 64,
        combine_kernel_size: int = 3,
        alignment_loss_weight: float = 0.0,
        initializer_range: float = 0.02,
        incremental_corrector: bool = True,
        **kwargs,
    ):
        trocr = trocr if isinstance(trocr, TrOCRConfig) else TrOCRConfig(**(trocr or {}))
        charbert = charbert if isinstance(charbert, CharBertConfig) else CharBertConfig(**{"causal": True, **(charbert or {})})
        if not charbert.causal:
            raise ValueError(
                "The corrector's CharBERT must be causal (charbert.causal=True): a bidirectional CharBERT lets "
                "position t read the tokens after it, which are its own labels under teacher forcing."
            )
        if sequence_layout not in ("sliding", "fixed"):
            raise ValueError(f"sequence_layout must be 'sliding' or 'fixed', got {sequence_layout!r}.")
        if combine not in ("add", "mean", "linear", "conv"):
            raise ValueError(f"combine must be one of add, mean, linear, conv; got {combine!r}.")
        if sequence_layout == "fixed" and charbert_length > max_decoder_length:
            raise ValueError("charbert_length cannot exceed max_decoder_length in the fixed layout.")
        if alignment_loss_weight > 0 and charbert.vocab_size != trocr.vocab_size:
            raise ValueError(
                f"alignment_loss_weight > 0 compares with CharBERT's word embeddings of the target tokens, so CharBERT "
                f"must share the decoder's vocabulary; got {charbert.vocab_size} and {trocr.vocab_size} tokens."
            )
        self.trocr = trocr
        self.charbert = charbert
        self.sequence_layout = sequence_layout
        self.max_decoder_length = max_decoder_length
        self.charbert_length = charbert_length
        self.transform_conv_layers = transform_conv_layers
        self.transform_ffn_layers = transform_ffn_layers
        self.transform_ffn_size = transform_ffn_size
        self.transform_batch_norm = transform_batch_norm
        self.transform_dropout = transform_dropout
        self.leaky_relu_slope = leaky_relu_slope
        self.combine = combine
        self.combine_hidden_size = combine_hidden_size
        self.combine_kernel_size = combine_kernel_size
        self.alignment_loss_weight = alignment_loss_weight
        self.initializer_range = initializer_range
        self.incremental_corrector = incremental_corrector
        kwargs.setdefault("is_decoder", True)
        kwargs.setdefault("add_cross_attention", True)
        for name in ("vocab_size", "pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"):
            kwargs.pop(name, None)  # the decoder's, held by `trocr`
        super().__init__(
            pad_token_id=trocr.pad_token_id,
            bos_token_id=trocr.bos_token_id,
            eos_token_id=trocr.eos_token_id,
            decoder_start_token_id=trocr.decoder_start_token_id,
            **kwargs,
        )

    @property
    def vocab_size(self) -> int:
        return self.trocr.vocab_size

    @property
    def hidden_size(self) -> int:
        return self.trocr.d_model

    @property
    def decodes_incrementally(self) -> bool:
        """Whether a cached decoding step runs the corrector on its new token only (see `incremental_corrector`)."""
        return self.incremental_corrector and self.sequence_layout == "sliding" and self.charbert.char_rnn_scope == "token"

    @property
    def corrector_convolutions(self) -> int:
        """The causal convolutions of the corrector: four transforms, one fusion per CharBERT layer, and two
        in the `conv` combine."""
        return 4 * self.transform_conv_layers + self.charbert.num_hidden_layers + (2 if self.combine == "conv" else 0)

    @property
    def num_hidden_layers(self) -> int:
        """Cache layers generate() allocates: one per TrOCR decoder layer, then the corrector's: in incremental
        decoding two per CharBERT layer (its two streams' keys and values) and one per convolution (its
        input's tail); otherwise one, where it keeps the embeddings of the tokens decoded so far."""
        if self.decodes_incrementally:
            return self.trocr.decoder_layers + 2 * self.charbert.num_hidden_layers + self.corrector_convolutions
        return self.trocr.decoder_layers + 1


class TrOCRCharBertConfig(CheckpointFormatMixin, ConfigPresetsMixin, VisionEncoderDecoderConfig):
    r"""
    Configuration of [`TrOCRCharBertForTextRecognition`], a `VisionEncoderDecoderModel` whose decoder is
    a [`TrOCRCharBertForCausalLM`].

    Args:
        encoder (`dict` or config): the vision encoder: ViT by default (DeiT or BEiT as in TrOCR), which reads
            images of one fixed size; or textrec's convolutional line encoder (a `SelfAttentionRecognizerConfig`,
            the encoder of `--model trocr`), which reads lines at their own width, padded columns masked.
        decoder (`dict` or `TrOCRCharBertDecoderConfig`): the corrected TrOCR decoder.
        frozen_modules (`list[str]`): parts whose parameters are not trained, any of `"encoder"`,
            `"decoder"` (TrOCR's decoder layers, positions and output projection), `"decoder_embeddings"`
            (its token embeddings), `"charbert"` (the corrector's CharBERT; the transforms and combine
            always train). Which to freeze was one of the thesis's questions.
        max_target_length (`int`): longest label in tokens, eos included; generate()'s default
            `max_new_tokens`.

    Presets (`from_preset`): `tiny` (tests), `base` (CPU studies), `thesis` (TrOCR-base sizes, a
    CharBERT-base corrector, the fixed 512 -> 510 / 3060 layout). `from_preset` takes the keyword
    arguments textrec-train gives every architecture (`vocab_size`, `num_channels`, `image_height`,
    `image_width`, token ids, `max_target_length`) and, as overrides, `encoder`, `trocr` and `charbert`
    dicts merged into the preset's and any `TrOCRCharBertDecoderConfig` argument.
    """

    model_type = "textrec-trocr-charbert"
    sub_configs_defaults = {
        "decoder": TrOCRCharBertDecoderConfig,
        "encoder": SubConfigSpec(config_class=AutoConfig, model_type="vit"),
    }

    PRESETS = {
        "tiny": dict(
            encoder=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64),
            trocr=dict(d_model=32, decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=64,
                       max_position_embeddings=64),
            charbert=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                          char_embedding_size=16, max_position_embeddings=130),
            decoder=dict(transform_ffn_size=32, combine_hidden_size=16),
            patch_width=4,
        ),
        "base": dict(
            encoder=dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024),
            trocr=dict(d_model=256, decoder_layers=3, decoder_attention_heads=4, decoder_ffn_dim=1024,
                       max_position_embeddings=256),
            charbert=dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=512,
                          char_embedding_size=64, max_position_embeddings=258),
            decoder=dict(transform_ffn_size=256, combine_hidden_size=64),
            patch_width=4,
        ),
        "thesis": dict(
            encoder=dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
            trocr=dict(d_model=1024, decoder_layers=12, decoder_attention_heads=16, decoder_ffn_dim=4096,
                       max_position_embeddings=512),
            charbert=dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                          char_embedding_size=256, max_position_embeddings=514),
            decoder=dict(sequence_layout="fixed", max_decoder_length=512, charbert_length=510),
            patch_width=16,
        ),
    }

    def __init__(self, frozen_modules: list[str] | None = None, max_target_length: int = 64, **kwargs):
        frozen_modules = list(frozen_modules or [])
        unknown = set(frozen_modules) - {"encoder", "decoder", "decoder_embeddings", "charbert"}
        if unknown:
            raise ValueError(f"Unknown frozen_modules {sorted(unknown)}; choose from encoder, decoder, decoder_embeddings, charbert.")
        self.frozen_modules = frozen_modules
        self.max_target_length = max_target_length
        encoder = kwargs.get("encoder")
        if isinstance(encoder, dict) and encoder.get("model_type") == SelfAttentionRecognizerConfig.model_type:
            # Not a transformers model type, so AutoConfig (the encoder's default resolution) cannot build it.
            kwargs["encoder"] = SelfAttentionRecognizerConfig(**encoder)
        super().__init__(**kwargs)
        self.tie_word_embeddings = False

    @property
    def reads_lines(self) -> bool:
        """Whether the encoder is textrec's convolutional line encoder (images of any width, a pixel mask), not a
        ViT-like encoder of one fixed image size."""
        return self.encoder.model_type == SelfAttentionRecognizerConfig.model_type

    @property
    def vocab_size(self) -> int:
        return self.decoder.vocab_size

    @property
    def num_channels(self) -> int:
        return self.encoder.num_channels

    @property
    def image_height(self) -> int:
        return self.image_size[0]

    @property
    def image_width(self) -> int:
        return self.image_size[1]

    @property
    def image_size(self) -> tuple[int, int]:
        if self.reads_lines:
            raise AttributeError("A composite with a convolutional line encoder has no fixed image size.")
        size = self.encoder.image_size
        return tuple(size) if isinstance(size, (list, tuple)) else (size, size)

    @classmethod
    def from_preset(
        cls,
        preset: str,
        vocab_size: int = 100,
        num_channels: int = 1,
        image_height: int = 32,
        image_width: int = 64,
        max_target_length: int = 64,
        pad_token_id: int = 0,
        bos_token_id: int = 1,
        eos_token_id: int = 2,
        decoder_start_token_id: int = 1,
        encoder: dict | None = None,
        trocr: dict | None = None,
        charbert: dict | None = None,
        frozen_modules: list[str] | None = None,
        dropout: float | None = None,
        **decoder_overrides,
    ) -> "TrOCRCharBertConfig":
        """A composite built from scratch with a preset's sizes (see the class docstring); `dropout`
        sets every dropout of the three parts."""
        if preset not in cls.PRESETS:
            raise ValueError(f"Unknown preset {preset!r} for {cls.__name__}; choose from {sorted(cls.PRESETS)}.")
        sizes = copy.deepcopy(cls.PRESETS[preset])
        patch_width = sizes.pop("patch_width")
        encoder_kwargs = {
            **sizes["encoder"],
            "image_size": [image_height, image_width],
            "patch_size": [image_height // 2, patch_width],
            "num_channels": num_channels,
            **(encoder or {}),
        }
        token_ids = dict(
            pad_token_id=pad_token_id,
            bos_token_id=bos_token_id,
            eos_token_id=eos_token_id,
            decoder_start_token_id=decoder_start_token_id,
        )
        trocr_kwargs = {**sizes["trocr"], "vocab_size": vocab_size, "scale_embedding": True, **token_ids, **(trocr or {})}
        trocr_kwargs["max_position_embeddings"] = max(trocr_kwargs["max_position_embeddings"], max_target_length + 2)
        charbert_kwargs = {**sizes["charbert"], "vocab_size": vocab_size, "causal": True, **(charbert or {})}
        if dropout is not None:
            encoder_kwargs.update(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
            trocr_kwargs.update(dropout=dropout, attention_dropout=dropout, activation_dropout=dropout)
            charbert_kwargs.update(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
            decoder_overrides.setdefault("transform_dropout", dropout)
        decoder = TrOCRCharBertDecoderConfig(
            trocr=trocr_kwargs, charbert=charbert_kwargs, **{**sizes["decoder"], **decoder_overrides}
        )
        return cls(
            encoder=ViTConfig(**encoder_kwargs).to_dict(),
            decoder=decoder,
            frozen_modules=frozen_modules,
            max_target_length=max_target_length,
            **token_ids,
        )


TrOCRCharBertDecoderConfig.register_for_auto_class()
TrOCRCharBertConfig.register_for_auto_class()
