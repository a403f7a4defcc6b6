"""ResNet-Transformer recognizer.

A ResNet-50 (transformers' `ResNetModel`) without pooling or classifier reads the line image; its last
two stages keep their resolution, so the feature map is 1/8 of the image, 2048 channels deep. A 1x1
convolution with ReLU reduces it to `hidden_size` channels; each column, its height folded into the
channels, becomes one element of a sequence, brought back to `hidden_size` by a fully connected layer
with ReLU. Sinusoidal positions are added and a transformer encoder-decoder predicts the characters.

The `fast` preset keeps the design at CPU cost: a small ResNet-18-shaped backbone whose stages past 1/4 of
the width downsample the height only (`backbone_width_stride`), so that a 32-pixel line becomes one row of
width/4 features, and an auxiliary CTC head (`ctc_loss_weight`).

`generate()` decodes with beam search of 4 beams ranked by the GNMT length penalty (alpha 0.6) by
default, greedily with `num_beams=1`, both with a key/value cache, for at most the encoder sequence
length + `generation_config.extra_decode_length` tokens unless told otherwise.
"""

import torch
from torch import nn
from transformers import GenerationConfig, GenerationMixin, PreTrainedModel, ResNetConfig, ResNetModel

from .gnmt_beam_search import GNMTLengthPenaltyMixin
from .configuration_resnet_transformer import ResNetTransformerConfig
from .ctc import CTCHead
from .initialization import init_recognizer_weights
from .positional_encoding import SinusoidalPositionalEncoding1D
from .recognizer import EncoderDecoderRecognizerMixin, RecognizerEncoderOutput, downsample_pixel_mask
from .transformer_decoder import TransformerDecoder
from .transformer_encoder import TransformerEncoder

# The description's decoding: beam size 4, GNMT length penalty alpha 0.6, at most the encoder length
# + 10 tokens. `early_stopping="never"` stops only when no running beam can beat the finished ones.
PAPER_DECODING = dict(num_beams=4, length_penalty=0.6, early_stopping="never", extra_decode_length=10)


class ResNetTransformerPreTrainedModel(PreTrainedModel):
    config_class = ResNetTransformerConfig
    base_model_prefix = "recognizer"
    main_input_name = "pixel_values"
    supports_gradient_checkpointing = False
    _no_split_modules = [
        "ResNetBottleNeckLayer", "ResNetBasicLayer", "TransformerEncoderLayer", "TransformerDecoderLayer"
    ]

    def _init_weights(self, module: nn.Module) -> None:
        init_recognizer_weights(module, self.config.initializer_range)


def backbone_config(config: ResNetTransformerConfig) -> ResNetConfig:
    """The `ResNetConfig` of the backbone (ResNet-50 with the default configuration)."""
    return ResNetConfig(
        num_channels=config.num_channels,
        embedding_size=config.backbone_embedding_size,
        hidden_sizes=config.backbone_hidden_sizes,
        depths=config.backbone_depths,
        layer_type=config.backbone_layer_type,
    )


def stage_strides(config: ResNetTransformerConfig) -> list[tuple[int, int]]:
    """The `(height, width)` stride of each ResNet stage after the first (which keeps the stem's 1/4): 2 until
    the feature map is 1/`backbone_output_stride` high and 1/`backbone_width_stride` wide, then 1."""
    strides, height, width = [], 4, 4
    for _ in config.backbone_depths[1:]:
        stride = (2 if height < config.backbone_output_stride else 1, 2 if width < config.backbone_width_stride else 1)
        height, width = height * stride[0], width * stride[1]
        strides.append(stride)
    return strides


def downsampled_size(size: int, output_stride: int) -> int:
    """The feature-map size of an image side of `size` pixels: every stride-2 step (the 7x7 and 3x3
    convolutions and the 3x3 max-pool, padded by half their kernel, and the 1x1 shortcuts) rounds up."""
    while output_stride > 1:
        size, output_stride = (size + 1) // 2, output_stride // 2
    return size


class ResNetTransformerEncoder(ResNetTransformerPreTrainedModel):
    """ResNet, 1x1 convolution, column folding, fully connected layer, positions, transformer encoder.

    `pixel_values (batch, num_channels, image_height, width)` → `last_hidden_state (batch, w, hidden_size)`
    with `w` = width / `backbone_width_stride` (rounded up): one element per feature-map column, left to right.
    """

    def __init__(self, config: ResNetTransformerConfig):
        super().__init__(config)
        self.backbone = ResNetModel(backbone_config(config))
        self._set_stage_strides()
        self.projection = nn.Sequential(nn.Conv2d(config.backbone_hidden_sizes[-1], config.hidden_size, 1), nn.ReLU())
        feature_height = downsampled_size(config.image_height, config.backbone_output_stride)
        self.column_projection = nn.Sequential(
            nn.Linear(feature_height * config.hidden_size, config.hidden_size), nn.ReLU()
        )
        self.positions = SinusoidalPositionalEncoding1D(config.hidden_size, config.dropout)
        self.transformer = TransformerEncoder(
            dim=config.hidden_size,
            num_layers=config.encoder_layers,
            num_heads=config.num_attention_heads,
            ffn_dim=config.ffn_dim,
            dropout=config.dropout,
            attention_dropout=config.attention_dropout,
            activation_dropout=config.activation_dropout,
            norm_first=config.norm_first,
        )
        self.post_init()

    def _set_stage_strides(self) -> None:
        """Sets the stride-2 convolutions of each stage's first layer to `stage_strides(config)`.

        ResNetConfig has no per-stage stride; changing it on the modules keeps every parameter name and
        shape, so ImageNet weights in transformers' format still load.
        """
        for stage, stride in zip(self.backbone.encoder.stages[1:], stage_strides(self.config)):
            for module in stage.layers[0].modules():
                if isinstance(module, nn.Conv2d) and module.stride == (2, 2):
                    module.stride = stride

    def sequence_length(self, width: int) -> int:
        """Length of the feature sequence of images `width` pixels wide."""
        return downsampled_size(width, self.config.backbone_width_stride)

    def forward(
        self, pixel_values: torch.FloatTensor, pixel_mask: torch.LongTensor | None = None, **kwargs
    ) -> RecognizerEncoderOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, image_height, width)`.
            pixel_mask: `(batch, image_height, width)`, 1 on real pixels.

        Returns:
            `RecognizerEncoderOutput` with `last_hidden_state (batch, w, hidden_size)` and
            `attention_mask (batch, w)` (1 for columns that cover real pixels) when a pixel mask is given.
        """
        if (
            pixel_values.ndim != 4
            or pixel_values.shape[1] != self.config.num_channels
            or pixel_values.shape[2] != self.config.image_height
        ):
            raise ValueError(
                f"Expected pixel_values of shape (batch, {self.config.num_channels}, {self.config.image_height}, "
                f"width), got {tuple(pixel_values.shape)}."
            )
        features = self.projection(self.backbone(pixel_values).last_hidden_state)
        # (batch, hidden_size, h, w) → (batch, w, hidden_size * h): one element per column.
        columns = features.permute(0, 3, 1, 2).flatten(2)
        hidden_states = self.positions(self.column_projection(columns))
        attention_mask = None
        if pixel_mask is not None:
            attention_mask = downsample_pixel_mask(pixel_mask, features.shape[-2:]).amax(dim=1)
        hidden_states = self.transformer(hidden_states, attention_mask)
        return RecognizerEncoderOutput(last_hidden_state=hidden_states, attention_mask=attention_mask)


class ResNetTransformerForTextRecognition(
    EncoderDecoderRecognizerMixin, GNMTLengthPenaltyMixin, ResNetTransformerPreTrainedModel, GenerationMixin
):
    """ResNet-Transformer encoder + transformer decoder + linear classifier, with the interface of
    `VisionEncoderDecoderModel`: `pixel_values` and `labels` in, `Seq2SeqLMOutput` out (label-smoothed
    loss), `generate()` with GNMT-ranked beam search or greedy decoding and a key/value cache."""

    def __init__(self, config: ResNetTransformerConfig):
        super().__init__(config)
        self.encoder = ResNetTransformerEncoder(config)
        self.decoder = TransformerDecoder(
            vocab_size=config.vocab_size,
            dim=config.hidden_size,
            num_layers=config.decoder_layers,
            num_heads=config.num_attention_heads,
            ffn_dim=config.ffn_dim,
            dropout=config.dropout,
            attention_dropout=config.attention_dropout,
            activation_dropout=config.activation_dropout,
            pad_token_id=config.pad_token_id,
            scale_embedding=config.scale_embedding,
            norm_first=config.norm_first,
        )
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)
        self.ctc_head = CTCHead(config.hidden_size, config.vocab_size) if config.ctc_loss_weight > 0 else None
        self.post_init()
        for name, value in PAPER_DECODING.items():  # `update` would skip the custom extra_decode_length
            setattr(self.generation_config, name, value)
        # No longer a copy of the model config: saved as such, it would be reloaded without extra_decode_length.
        self.generation_config._from_model_config = False

    def load_pretrained_backbone(self, pretrained_model_name_or_path: str, **kwargs) -> None:
        """Initialises the backbone from ResNet weights in transformers' format (`ResNetModel` or
        `ResNetForImageClassification`, e.g. a copy of `microsoft/resnet-50`); the rest is untouched.

        The checkpoint must have the backbone's depths, widths and layer type. A 3-channel (RGB) stem
        loads into a 1-channel model summed over its input channels, which gives a grey image the
        response the RGB filters give to the same image in colour-less RGB.

        Args:
            pretrained_model_name_or_path: folder or Hub id.
            kwargs: passed to `ResNetModel.from_pretrained` (`revision`, `local_files_only`, ...).
        """
        source = ResNetModel.from_pretrained(pretrained_model_name_or_path, **kwargs)
        expected = backbone_config(self.config)
        for name in ("embedding_size", "hidden_sizes", "depths", "layer_type"):
            if getattr(source.config, name) != getattr(expected, name):
                raise ValueError(
                    f"{pretrained_model_name_or_path} has {name}={getattr(source.config, name)}, "
                    f"the backbone needs {getattr(expected, name)}."
                )
        state_dict = source.state_dict()
        stem = "embedder.embedder.convolution.weight"
        if state_dict[stem].shape[1] == 3 and self.config.num_channels == 1:
            state_dict[stem] = state_dict[stem].sum(dim=1, keepdim=True)
        self.encoder.backbone.load_state_dict(state_dict)

    @torch.no_grad()
    def generate(self, inputs: torch.Tensor | None = None, generation_config: GenerationConfig | None = None, **kwargs):
        """`GenerationMixin.generate`, whose length limit defaults to the description's: the encoder
        sequence length + `extra_decode_length` new tokens. `max_new_tokens` or `max_length`, in the call
        or in the generation config, replace it.
        """
        config = generation_config if generation_config is not None else self.generation_config
        limits = (kwargs.get("max_new_tokens"), kwargs.get("max_length"), config.max_new_tokens, config.max_length)
        if all(limit is None for limit in limits):
            pixel_values = inputs if inputs is not None else kwargs.get("pixel_values")
            if pixel_values is not None:
                source_length = self.encoder.sequence_length(pixel_values.shape[-1])
            else:
                source_length = kwargs["encoder_outputs"].last_hidden_state.shape[1]
            default = getattr(self.generation_config, "extra_decode_length", PAPER_DECODING["extra_decode_length"])
            extra = getattr(config, "extra_decode_length", default)
            kwargs["max_new_tokens"] = source_length + extra
        return super().generate(inputs, generation_config=generation_config, **kwargs)


ResNetTransformerForTextRecognition.register_for_auto_class("AutoModelForImageTextToText")
