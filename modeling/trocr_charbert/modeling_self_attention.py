# Copied from modeling/self_attention/modeling_self_attention.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Self-attention decoder recognizer.

A CNN turns the line image into a feature map; the map is flattened column by column into a
sequence and sinusoidal positions are added; a transformer decoder of masked self-attention,
cross-attention over that sequence and a ReLU feed-forward predicts the characters.
"""

import torch
from torch import nn
from transformers import GenerationMixin, PreTrainedModel

from .configuration_self_attention import SelfAttentionRecognizerConfig
from .ctc import CTCHead
from .initialization import init_recognizer_weights
from .positional_encoding import SinusoidalPositionalEncoding1D
from .recognizer import EncoderDecoderRecognizerMixin, RecognizerEncoderOutput, downsample_pixel_mask
from .transformer_decoder import TransformerDecoder
from .transformer_encoder import TransformerEncoder


class SelfAttentionRecognizerPreTrainedModel(PreTrainedModel):
    config_class = SelfAttentionRecognizerConfig
    base_model_prefix = "recognizer"
    main_input_name = "pixel_values"
    supports_gradient_checkpointing = False
    _no_split_modules = ["TransformerDecoderLayer"]

    def _init_weights(self, module: nn.Module) -> None:
        init_recognizer_weights(module, self.config.initializer_range)


class ConvBlock(nn.Sequential):
    """A 3x3 convolution (of `stride`) with batch normalisation and ReLU."""

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )


class ConvStage(nn.Sequential):
    """`num_convs` 3x3 convolutions with batch normalisation and ReLU, then a max-pool of `pooling`."""

    def __init__(self, in_channels: int, out_channels: int, pooling: tuple[int, int], num_convs: int = 2):
        super().__init__(
            *(ConvBlock(in_channels if index == 0 else out_channels, out_channels) for index in range(num_convs)),
            nn.MaxPool2d(tuple(pooling), tuple(pooling)),
        )


class SelfAttentionRecognizerEncoder(SelfAttentionRecognizerPreTrainedModel):
    """The CNN encoder, usable alone as a vision model.

    `pixel_values (batch, num_channels, height, width)` → `last_hidden_state (batch, w * h, hidden_size)`
    where `(h, w)` is the feature map size (`height / prod(pool heights)`, `width / prod(pool
    widths)`, both halved once more by the stem if there is one), flattened column by column so the
    sequence runs left to right; then, with `config.encoder_layers`, a transformer encoder over it.
    """

    def __init__(self, config: SelfAttentionRecognizerConfig):
        super().__init__(config)
        channels = [config.num_channels, *config.cnn_channels]
        self.stem = None
        if config.cnn_stem_channels:
            self.stem = ConvBlock(config.num_channels, config.cnn_stem_channels, stride=2)
            channels[0] = config.cnn_stem_channels
        self.stages = nn.Sequential(
            *(
                ConvStage(channels[i], channels[i + 1], config.cnn_pooling[i], config.cnn_convs_per_stage)
                for i in range(len(config.cnn_pooling))
            )
        )
        self.projection = nn.Linear(channels[-1], config.hidden_size)
        self.positions = SinusoidalPositionalEncoding1D(config.hidden_size, config.dropout)
        self.context = None
        if config.encoder_layers:
            self.context = TransformerEncoder(
                config.hidden_size,
                config.encoder_layers,
                config.num_attention_heads,
                config.ffn_dim,
                config.dropout,
                config.attention_dropout,
                config.activation_dropout,
            )
        self.post_init()

    def forward(
        self, pixel_values: torch.FloatTensor, pixel_mask: torch.LongTensor | None = None, **kwargs
    ) -> RecognizerEncoderOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, height, width)`.
            pixel_mask: `(batch, height, width)`, 1 on real pixels.

        Returns:
            `RecognizerEncoderOutput` with `last_hidden_state (batch, w * h, hidden_size)` and
            `attention_mask (batch, w * h)` when a pixel mask is given.
        """
        if pixel_values.ndim != 4 or pixel_values.shape[1] != self.config.num_channels:
            raise ValueError(
                f"Expected pixel_values of shape (batch, {self.config.num_channels}, height, width), "
                f"got {tuple(pixel_values.shape)}."
            )
        features = pixel_values if self.stem is None else self.stem(pixel_values)
        features = self.stages(features)
        if features.shape[-1] == 0 or features.shape[-2] == 0:
            raise ValueError(f"The image {tuple(pixel_values.shape[-2:])} is too small for the CNN's pooling.")
        sequence = features.permute(0, 3, 2, 1).flatten(1, 2)
        hidden_states = self.positions(self.projection(sequence))
        attention_mask = None
        if pixel_mask is not None:
            feature_mask = downsample_pixel_mask(pixel_mask, features.shape[-2:])
            attention_mask = feature_mask.transpose(1, 2).flatten(1)
        if self.context is not None:
            hidden_states = self.context(hidden_states, attention_mask)
        return RecognizerEncoderOutput(last_hidden_state=hidden_states, attention_mask=attention_mask)


class SelfAttentionRecognizerForTextRecognition(
    EncoderDecoderRecognizerMixin, SelfAttentionRecognizerPreTrainedModel, GenerationMixin
):
    """CNN encoder + transformer decoder + linear classifier, with the interface of
    `VisionEncoderDecoderModel`: `pixel_values` and `labels` in, `Seq2SeqLMOutput` out, `generate()`
    for greedy or beam decoding with a key/value cache."""

    def __init__(self, config: SelfAttentionRecognizerConfig):
        super().__init__(config)
        self.encoder = SelfAttentionRecognizerEncoder(config)
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
        )
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)
        self.ctc_head = CTCHead(config.hidden_size, config.vocab_size) if config.ctc_loss_weight > 0 else None
        self.post_init()
        self.generation_config.max_new_tokens = config.max_target_length


SelfAttentionRecognizerForTextRecognition.register_for_auto_class("AutoModelForImageTextToText")
