"""CoMER: a transformer for handwritten mathematical expressions whose cross-attention is refined by the
coverage of earlier steps (Zhao and Gao, ECCV 2022); with `coverage="none"` it is its baseline, BTTR.

Encoder: DenseNet-B (stride 16) → 1x1 convolution → 2-D image position encoding → LayerNorm; the feature
map is read row by row as a sequence, and the pixel mask follows every stride.

Decoder: token embedding + LayerNorm, 1-D sinusoidal positions, post-norm layers of masked
self-attention, cross-attention and feed-forward, and a linear classifier. In the cross-attention of
every layer but the first, the Attention Refinement Module (ARM, one module shared by the layers) reads
the coverage: for each step, the sum of the attention of all earlier steps (zero at the first step), of
this layer (`coverage="self"`), of the previous layer after its refinement (`"cross"`), or both
(`"fusion"`). A 5x5 convolution and ReLU over the coverage on the feature grid, padded cells zeroed, a
1x1 projection to one map per head and a batch normalisation over valid cells give the refinement term,
subtracted from the attention logits before the softmax.

Training is bidirectional: with `labels`, each target is learnt left to right (`[start] y → y [end]`)
and right to left (`[end] reversed(y) → reversed(y) [start]`) over one encoder pass.

Files, one concept each: `densenet.py` (the encoder's DenseNet-B), `coverage.py` (the ARM, the attention it
refines and the coverage cache), `bidirectional.py` (bidirectional training targets and beam search); this
file composes them.

Decoding: `generate()` decodes incrementally, with cached keys and values and, per layer, running sums
of the attention in `CoverageCache`, equal to re-running the whole prefix at every step. Greedy by
default; with `num_beams > 1` and `generation_config.bidirectional_rescoring` (the default), beam search
runs in both directions and each finished hypothesis is rescored by the opposite direction
(`bidirectional_beam_search`).
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from transformers import GenerationMixin, PreTrainedModel
from transformers.cache_utils import EncoderDecoderCache
from transformers.modeling_outputs import Seq2SeqLMOutput
from transformers.utils import ModelOutput

from .attention import MultiHeadAttention
from .bidirectional import BidirectionalDecodingMixin, reverse_labels
from .configuration_comer import CoMERConfig
from .coverage import AttentionRefinementModule, CoverageAttention, CoverageCache, exclusive_cumsum
from .densenet import DenseNetB
from .initialization import init_recognizer_weights
from .positional_encoding import (
    SinusoidalPositionalEncoding1D,
    image_position_encoding_2d,
)
from .recognizer import (
    DecoderSteps,
    EncoderDecoderRecognizerMixin,
    RecognizerEncoderOutput,
    recognition_loss,
    shift_tokens_right,
)
from .transformer_decoder import (
    FeedForward,
    ResidualSublayer,
    decoder_self_attention_mask,
)

# The published decoding: beam 10 in both directions, at most 200 tokens, length normalisation alpha 1.
PAPER_DECODING = dict(num_beams=10, max_new_tokens=200, length_penalty=1.0)


class CoMERPreTrainedModel(PreTrainedModel):
    config_class = CoMERConfig
    base_model_prefix = "comer"
    main_input_name = "pixel_values"
    supports_gradient_checkpointing = False
    _no_split_modules = ["CoMERDecoderLayer"]

    def _init_weights(self, module: nn.Module) -> None:
        init_recognizer_weights(module, self.config.initializer_range)


# ---------------------------------------------------------------------------------------------------
# Encoder: DenseNet-B (`densenet.py`), 2-D positions


@dataclass
class CoMEREncoderOutput(RecognizerEncoderOutput):
    """
    Args:
        last_hidden_state: `(batch, h * w, hidden_size)` the feature map read row by row.
        attention_mask: `(batch, h * w)`, 1 for features of real pixels.
        feature_mask: `(batch, h, w)`, the same on the feature grid (the ARM needs the grid).
    """

    feature_mask: torch.LongTensor | None = None


class CoMEREncoder(CoMERPreTrainedModel):
    """DenseNet-B, 1x1 convolution to `hidden_size`, 2-D image position encoding, LayerNorm.

    `pixel_values (batch, num_channels, height, width)` → `last_hidden_state (batch, h * w, hidden_size)` with
    `(h, w)` = `(ceil(height / 16), ceil(width / 16))`, row by row.
    """

    def __init__(self, config: CoMERConfig):
        super().__init__(config)
        self.densenet = DenseNetB(config)
        self.projection = nn.Conv2d(self.densenet.out_channels, config.hidden_size, 1)
        self.norm = nn.LayerNorm(config.hidden_size)
        self.post_init()

    def forward(
        self, pixel_values: torch.FloatTensor, pixel_mask: torch.LongTensor | None = None, **kwargs
    ) -> CoMEREncoderOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, height, width)`, strokes bright on a dark background.
            pixel_mask: `(batch, height, width)`, 1 on real pixels, 0 on padding; all real when omitted.

        Returns:
            `CoMEREncoderOutput`.
        """
        if pixel_values.ndim != 4 or pixel_values.shape[1] != self.config.num_channels:
            raise ValueError(
                f"Expected pixel_values of shape (batch, {self.config.num_channels}, height, width), "
                f"got {tuple(pixel_values.shape)}."
            )
        if pixel_mask is None:
            pixel_mask = pixel_values.new_ones(pixel_values.shape[0], *pixel_values.shape[2:], dtype=torch.long)
        elif pixel_mask.shape != (pixel_values.shape[0], *pixel_values.shape[2:]):
            raise ValueError(
                f"Expected pixel_mask of shape {(pixel_values.shape[0], *pixel_values.shape[2:])}, "
                f"got {tuple(pixel_mask.shape)}."
            )
        features, feature_mask = self.densenet(pixel_values, pixel_mask.long())
        features = self.projection(features).permute(0, 2, 3, 1)  # (batch, h, w, hidden_size)
        features = features + image_position_encoding_2d(feature_mask, self.config.hidden_size).to(features.dtype)
        hidden_states = self.norm(features).flatten(1, 2)
        return CoMEREncoderOutput(
            last_hidden_state=hidden_states, attention_mask=feature_mask.flatten(1), feature_mask=feature_mask
        )


# ---------------------------------------------------------------------------------------------------
# Decoder, its cross-attention refined by the coverage (`coverage.py`)


class CoMERDecoderLayer(nn.Module):
    """Post-norm masked self-attention, coverage-refined cross-attention, feed-forward."""

    def __init__(self, config: CoMERConfig, layer_idx: int):
        super().__init__()
        dim, heads, dropout = config.hidden_size, config.num_attention_heads, config.dropout
        self.layer_idx = layer_idx
        self.self_attn = MultiHeadAttention(dim, heads, dropout, layer_idx)
        self.cross_attn = CoverageAttention(dim, heads, dropout, layer_idx)
        self.feed_forward = FeedForward(dim, config.ffn_dim, dropout)
        self.self_attn_block = ResidualSublayer(dim, dropout, norm_first=False)
        self.cross_attn_block = ResidualSublayer(dim, dropout, norm_first=False)
        self.feed_forward_block = ResidualSublayer(dim, dropout, norm_first=False)

    def forward(
        self,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor,
        self_attention_mask: torch.Tensor,
        cross_attention_mask: torch.Tensor,
        past_key_values: EncoderDecoderCache | None,
        refine: Callable[[torch.Tensor], torch.Tensor] | None,
        output_attentions: bool,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """
        Returns:
            `(batch, steps, dim)`, the self-attention weights if asked, and the cross-attention weights.
        """
        hidden_states, self_weights = self.self_attn_block(
            hidden_states,
            lambda x: self.self_attn(
                x, attention_mask=self_attention_mask, past_key_values=past_key_values, output_attentions=output_attentions
            ),
        )
        hidden_states, cross_weights = self.cross_attn_block(
            hidden_states,
            lambda x: self.cross_attn(x, encoder_hidden_states, cross_attention_mask, past_key_values, refine),
        )
        hidden_states, _ = self.feed_forward_block(hidden_states, lambda x: (self.feed_forward(x), None))
        return hidden_states, self_weights, cross_weights


@dataclass
class CoMERDecoderOutput(ModelOutput):
    """
    Args:
        last_hidden_state: `(batch, steps, hidden_size)`.
        self_attentions: per layer `(batch, num_heads, steps, cached + steps)`, when asked.
        cross_attentions: per layer `(batch, num_heads, steps, h * w)` (refined), when asked.
    """

    last_hidden_state: torch.FloatTensor | None = None
    self_attentions: tuple[torch.FloatTensor, ...] | None = None
    cross_attentions: tuple[torch.FloatTensor, ...] | None = None


class CoMERDecoder(nn.Module):
    """Token embedding + LayerNorm, sinusoidal positions, `CoMERDecoderLayer`s, and the shared ARM (absent
    with `coverage="none"`)."""

    def __init__(self, config: CoMERConfig):
        super().__init__()
        self.coverage = config.coverage
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.embed_norm = nn.LayerNorm(config.hidden_size)
        self.positions = SinusoidalPositionalEncoding1D(config.hidden_size)
        self.layers = nn.ModuleList(CoMERDecoderLayer(config, layer_idx) for layer_idx in range(config.decoder_layers))
        self.arm = None
        if config.coverage != "none":
            in_maps = config.num_attention_heads * (2 if config.coverage == "fusion" else 1)
            self.arm = AttentionRefinementModule(
                config.num_attention_heads, in_maps, config.arm_channels, config.arm_kernel_size
            )

    def _refinement(
        self,
        layer_idx: int,
        previous_weights: torch.Tensor,
        feature_mask: torch.Tensor,
        past_key_values: CoverageCache | None,
    ) -> Callable[[torch.Tensor], torch.Tensor]:
        """The refinement of layer `layer_idx` (> 0), given the previous layer's refined weights."""

        def coverage(name: str, weights: torch.Tensor) -> torch.Tensor:
            if past_key_values is None:
                return exclusive_cumsum(weights)
            return past_key_values.coverage(name, weights)

        def refine(weights: torch.Tensor) -> torch.Tensor:
            maps = []
            if self.coverage in ("cross", "fusion"):
                maps.append(coverage(f"refined.{layer_idx - 1}", previous_weights))
            if self.coverage in ("self", "fusion"):
                maps.append(coverage(f"unrefined.{layer_idx}", weights))
            return self.arm(torch.cat(maps, dim=1), feature_mask)

        return refine

    def forward(
        self,
        input_ids: torch.LongTensor,
        encoder_hidden_states: torch.Tensor,
        feature_mask: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        past_key_values: CoverageCache | None = None,
        output_attentions: bool = False,
    ) -> CoMERDecoderOutput:
        """
        Args:
            input_ids: `(batch, steps)` decoder input ids (only the new ones when cached).
            encoder_hidden_states: `(batch, h * w, hidden_size)`.
            feature_mask: `(batch, h, w)`, 1 on features of real pixels.
            attention_mask: `(batch, cached + steps)` decoder padding mask, 1 for real tokens.
            past_key_values: the generation cache with its attention sums.

        Returns:
            `CoMERDecoderOutput`.
        """
        cached_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        steps = input_ids.shape[1]
        hidden_states = self.positions(self.embed_norm(self.embed_tokens(input_ids)), offset=cached_length)
        self_attention_mask = decoder_self_attention_mask(steps, cached_length, attention_mask, input_ids.device)
        cross_attention_mask = feature_mask.flatten(1).bool()[:, None, None, :]

        self_attentions, cross_attentions = [], []
        cross_weights = None
        for layer in self.layers:
            refine = None
            if self.arm is not None and layer.layer_idx > 0:
                refine = self._refinement(layer.layer_idx, cross_weights, feature_mask, past_key_values)
            hidden_states, self_weights, cross_weights = layer(
                hidden_states,
                encoder_hidden_states,
                self_attention_mask,
                cross_attention_mask,
                past_key_values,
                refine,
                output_attentions,
            )
            self_attentions.append(self_weights)
            cross_attentions.append(cross_weights)
        return CoMERDecoderOutput(
            last_hidden_state=hidden_states,
            self_attentions=tuple(self_attentions) if output_attentions else None,
            cross_attentions=tuple(cross_attentions) if output_attentions else None,
        )


# ---------------------------------------------------------------------------------------------------
# The model


@dataclass
class CoMEROutput(Seq2SeqLMOutput):
    """`Seq2SeqLMOutput` with, when trained with `labels`, the right-to-left logits.

    Args:
        logits: `(batch, target_length, vocab_size)` left to right (or of the given decoder inputs).
        reverse_logits: `(batch, target_length, vocab_size)` for the reversed labels.
        loss: token-mean cross-entropy over both directions.
    """

    reverse_logits: torch.FloatTensor | None = None


class CoMERForFormulaRecognition(
    BidirectionalDecodingMixin, EncoderDecoderRecognizerMixin, CoMERPreTrainedModel, GenerationMixin
):
    """CoMER encoder + coverage-refined decoder + linear classifier, with the interface of
    `VisionEncoderDecoderModel`: `pixel_values` and `labels` in, `CoMEROutput` out (bidirectional loss),
    `generate()` with a key/value and coverage cache."""

    def __init__(self, config: CoMERConfig):
        super().__init__(config)
        self.encoder = CoMEREncoder(config)
        self.decoder = CoMERDecoder(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size)
        self.post_init()
        self.generation_config.max_new_tokens = config.max_target_length
        self.generation_config.length_penalty = PAPER_DECODING["length_penalty"]
        self.generation_config.bidirectional_rescoring = True

    output_class = CoMEROutput

    def _decode(
        self,
        encoder_outputs: CoMEREncoderOutput,
        decoder_input_ids: torch.LongTensor,
        decoder_attention_mask: torch.LongTensor | None = None,
        past_key_values: CoverageCache | None = None,
        use_cache: bool = False,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> tuple[torch.Tensor, DecoderSteps]:
        decoder_outputs = self.decoder(
            input_ids=decoder_input_ids,
            encoder_hidden_states=encoder_outputs.last_hidden_state,
            feature_mask=encoder_outputs.feature_mask,
            attention_mask=decoder_attention_mask,
            past_key_values=past_key_values,
            output_attentions=output_attentions,
        )
        steps = DecoderSteps(past_key_values, None, decoder_outputs.self_attentions, decoder_outputs.cross_attentions)
        return self.lm_head(decoder_outputs.last_hidden_state), steps

    def _encoder_outputs(self, pixel_values, pixel_mask, encoder_outputs) -> CoMEREncoderOutput:
        """The encoder's output; `encoder_outputs` given must be a `CoMEREncoderOutput` (its `feature_mask` too)."""
        if encoder_outputs is None or isinstance(encoder_outputs, CoMEREncoderOutput):
            return super()._encoder_outputs(pixel_values, pixel_mask, encoder_outputs)
        if not isinstance(encoder_outputs, dict) or encoder_outputs.get("feature_mask") is None:
            raise ValueError("`encoder_outputs` must be the CoMEREncoderOutput of `model.encoder`.")
        return CoMEREncoderOutput(**encoder_outputs)

    def _decoding_cache(self, past_key_values, use_cache: bool) -> CoverageCache | None:
        """A `CoverageCache` (keys, values and the coverage so far); `generate()`'s `EncoderDecoderCache` is turned
        into one at the first step."""
        if use_cache and past_key_values is None:
            return CoverageCache()
        if past_key_values is not None and not isinstance(past_key_values, CoverageCache):
            return CoverageCache.from_cache(past_key_values)
        return past_key_values

    def _teacher_forcing(self, encoder_outputs, labels: torch.LongTensor, *, output_attentions: bool, **options):
        """`labels` alone (training) are learnt in both directions (`_bidirectional_forward`); given decoder inputs
        are decoded as they are (their first token sets the direction: start token left to right, end token right
        to left)."""
        return self._bidirectional_forward(encoder_outputs, labels, output_attentions)

    def _bidirectional_forward(
        self, encoder_outputs: CoMEREncoderOutput, labels: torch.LongTensor, output_attentions: bool
    ) -> CoMEROutput:
        """Both directions in one batch over the shared encoder output; the loss is the token mean over both."""
        config = self.config
        reversed_labels = reverse_labels(labels, config.bos_token_id, config.eos_token_id)
        decoder_input_ids = torch.cat(
            (
                shift_tokens_right(labels, config.pad_token_id, config.bos_token_id),
                shift_tokens_right(reversed_labels, config.pad_token_id, config.eos_token_id),
            )
        )
        doubled = CoMEREncoderOutput(
            last_hidden_state=encoder_outputs.last_hidden_state.repeat(2, 1, 1),
            feature_mask=encoder_outputs.feature_mask.repeat(2, 1, 1),
        )
        logits, decoder_outputs = self._decode(doubled, decoder_input_ids, output_attentions=output_attentions)
        loss = recognition_loss(logits, torch.cat((labels, reversed_labels)))
        forward_logits, reverse_logits = logits.chunk(2)
        return CoMEROutput(
            loss=loss,
            logits=forward_logits,
            reverse_logits=reverse_logits,
            decoder_attentions=decoder_outputs.self_attentions,
            cross_attentions=decoder_outputs.cross_attentions,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
        )



CoMERForFormulaRecognition.register_for_auto_class("AutoModelForImageTextToText")
