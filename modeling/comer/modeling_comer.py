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

Decoding: `generate()` decodes incrementally, with cached keys and values and, per layer, running sums
of the attention in `CoverageCache`, equal to re-running the whole prefix at every step. Greedy by
default; with `num_beams > 1` and `generation_config.bidirectional_rescoring` (the default), beam search
runs in both directions and each finished hypothesis is rescored by the opposite direction
(`bidirectional_beam_search`).
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from transformers import GenerationMixin, PreTrainedModel
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import Seq2SeqLMOutput
from transformers.utils import ModelOutput

from .attention import MultiHeadAttention
from .configuration_comer import CoMERConfig
from .initialization import init_recognizer_weights
from .positional_encoding import (
    SinusoidalPositionalEncoding1D,
    image_position_encoding_2d,
)
from .recognizer import (
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
# Encoder: DenseNet-B


class DenseBottleneckLayer(nn.Module):
    """1x1 convolution to 4 x growth, BN, ReLU, dropout, 3x3 convolution to growth, BN, ReLU, dropout; the
    output is concatenated to the input."""

    def __init__(self, in_channels: int, growth_rate: int, dropout: float):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 4 * growth_rate, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(4 * growth_rate)
        self.conv2 = nn.Conv2d(4 * growth_rate, growth_rate, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(growth_rate)
        self.dropout = nn.Dropout(dropout)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        new = self.dropout(F.relu(self.norm1(self.conv1(features))))
        new = self.dropout(F.relu(self.norm2(self.conv2(new))))
        return torch.cat((features, new), dim=1)


class DenseTransition(nn.Module):
    """1x1 convolution, BN, ReLU, dropout, then 2x2 average pooling (rounding up)."""

    def __init__(self, in_channels: int, out_channels: int, dropout: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.norm = nn.BatchNorm2d(out_channels)
        self.dropout = nn.Dropout(dropout)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        features = self.dropout(F.relu(self.norm(self.conv(features))))
        return F.avg_pool2d(features, 2, ceil_mode=True)


class DenseNetB(nn.Module):
    """DenseNet-B of three dense blocks: a 7x7 stride-2 stem of 2 x growth channels, BN, ReLU, 2x2 max
    pool; blocks of bottleneck layers with transitions after the first two; a final BN. Stride 16.

    Every stride-2 step rounds up (`ceil(size / 2)`), so the pixel mask follows by keeping every other
    row and column.
    """

    def __init__(self, config: CoMERConfig):
        super().__init__()
        growth, layers, dropout = config.densenet_growth_rate, config.densenet_block_layers, config.densenet_dropout
        channels = 2 * growth
        self.stem = nn.Conv2d(config.num_channels, channels, 7, stride=2, padding=3, bias=False)
        self.stem_norm = nn.BatchNorm2d(channels)
        blocks, transitions = [], []
        for block in range(3):
            blocks.append(
                nn.Sequential(*(DenseBottleneckLayer(channels + i * growth, growth, dropout) for i in range(layers)))
            )
            channels += layers * growth
            if block < 2:
                reduced = int(channels * config.densenet_reduction)
                transitions.append(DenseTransition(channels, reduced, dropout))
                channels = reduced
        self.blocks = nn.ModuleList(blocks)
        self.transitions = nn.ModuleList(transitions)
        self.final_norm = nn.BatchNorm2d(channels)
        self.out_channels = channels

    def forward(self, pixel_values: torch.Tensor, pixel_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """
        Args:
            pixel_values: `(batch, num_channels, height, width)`.
            pixel_mask: `(batch, height, width)`, 1 on real pixels.

        Returns:
            `(batch, out_channels, h, w)` features and their `(batch, h, w)` mask, h = ceil(height / 16).
        """
        features = F.max_pool2d(F.relu(self.stem_norm(self.stem(pixel_values))), 2, ceil_mode=True)
        mask = pixel_mask[:, ::2, ::2][:, ::2, ::2]
        for index, block in enumerate(self.blocks):
            features = block(features)
            if index < len(self.transitions):
                features = self.transitions[index](features)
                mask = mask[:, ::2, ::2]
        return self.final_norm(features), mask


@dataclass
class CoMEREncoderOutput(RecognizerEncoderOutput):
    """
    Args:
        last_hidden_state: `(batch, h * w, d_model)` the feature map read row by row.
        attention_mask: `(batch, h * w)`, 1 for features of real pixels.
        feature_mask: `(batch, h, w)`, the same on the feature grid (the ARM needs the grid).
    """

    feature_mask: torch.LongTensor | None = None


class CoMEREncoder(CoMERPreTrainedModel):
    """DenseNet-B, 1x1 convolution to `d_model`, 2-D image position encoding, LayerNorm.

    `pixel_values (batch, num_channels, height, width)` → `last_hidden_state (batch, h * w, d_model)` with
    `(h, w)` = `(ceil(height / 16), ceil(width / 16))`, row by row.
    """

    def __init__(self, config: CoMERConfig):
        super().__init__(config)
        self.densenet = DenseNetB(config)
        self.projection = nn.Conv2d(self.densenet.out_channels, config.d_model, 1)
        self.norm = nn.LayerNorm(config.d_model)
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
        features = self.projection(features).permute(0, 2, 3, 1)  # (batch, h, w, d_model)
        features = features + image_position_encoding_2d(feature_mask, self.config.d_model).to(features.dtype)
        hidden_states = self.norm(features).flatten(1, 2)
        return CoMEREncoderOutput(
            last_hidden_state=hidden_states, attention_mask=feature_mask.flatten(1), feature_mask=feature_mask
        )


# ---------------------------------------------------------------------------------------------------
# Coverage: the cache and the Attention Refinement Module


class CoverageCache(EncoderDecoderCache):
    """`EncoderDecoderCache` that also keeps, per name (one per layer and kind of coverage), the running sum
    of cross-attention weights over the decoded steps, `(batch, num_heads, source_length)`.

    Beam search reorders (and contrastive search repeats or selects) the sums with the keys and values.
    Sums cannot be cropped back to an earlier step: assisted decoding is not supported.
    """

    def __init__(self, self_attention_cache: DynamicCache | None = None, cross_attention_cache: DynamicCache | None = None):
        super().__init__(
            self_attention_cache if self_attention_cache is not None else DynamicCache(),
            cross_attention_cache if cross_attention_cache is not None else DynamicCache(),
        )
        self.attention_sums: dict[str, torch.Tensor] = {}

    @classmethod
    def from_cache(cls, cache: EncoderDecoderCache) -> "CoverageCache":
        """Wraps the (still empty) cache that `generate()` builds."""
        if cache.get_seq_length() > 0:
            raise ValueError("A cache that already holds decoded steps but no attention sums cannot be continued.")
        return cls(cache.self_attention_cache, cache.cross_attention_cache)

    def coverage(self, name: str, weights: torch.Tensor) -> torch.Tensor:
        """The coverage of new steps, then adds them to the running sum.

        Args:
            name: which running sum.
            weights: `(batch, num_heads, new_steps, source_length)` attention of the new steps.

        Returns:
            `(batch, num_heads, new_steps, source_length)`: for each new step, the sum of the weights of
            all earlier steps, cached ones included.
        """
        coverage = exclusive_cumsum(weights)
        if name in self.attention_sums:
            coverage = coverage + self.attention_sums[name][:, :, None]
        self.attention_sums[name] = coverage[:, :, -1] + weights[:, :, -1]
        return coverage

    def reset(self):
        super().reset()
        self.attention_sums.clear()

    def reorder_cache(self, beam_idx: torch.LongTensor):
        super().reorder_cache(beam_idx)
        for name, sums in self.attention_sums.items():
            self.attention_sums[name] = sums.index_select(0, beam_idx.to(sums.device))

    def batch_repeat_interleave(self, repeats: int):
        super().batch_repeat_interleave(repeats)
        for name, sums in self.attention_sums.items():
            self.attention_sums[name] = sums.repeat_interleave(repeats, dim=0)

    def batch_select_indices(self, indices: torch.Tensor):
        super().batch_select_indices(indices)
        for name, sums in self.attention_sums.items():
            self.attention_sums[name] = sums[indices]

    def crop(self, tokens_to_remove: int) -> None:
        raise NotImplementedError("Running attention sums cannot be cropped: assisted decoding is not supported.")


def exclusive_cumsum(weights: torch.Tensor) -> torch.Tensor:
    """For each step (dim 2), the sum of the weights of the earlier steps; zero at the first."""
    return F.pad(weights.cumsum(dim=2)[:, :, :-1], (0, 0, 1, 0))


class AttentionRefinementModule(nn.Module):
    """Turns coverage maps into a refinement term for the attention logits.

    Args:
        num_heads: attention heads; one output map per head.
        in_maps: coverage maps per step (num_heads, or 2 x num_heads with fusion coverage).
        channels: channels of the convolution.
        kernel_size: kernel of the convolution (odd; padded to keep the grid size).
    """

    def __init__(self, num_heads: int, in_maps: int, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_maps, channels, kernel_size, padding=kernel_size // 2)
        self.proj = nn.Conv2d(channels, num_heads, 1, bias=False)
        self.norm = nn.BatchNorm1d(num_heads)

    def forward(self, coverage: torch.Tensor, feature_mask: torch.Tensor) -> torch.Tensor:
        """
        Args:
            coverage: `(batch, in_maps, steps, h * w)`.
            feature_mask: `(batch, h, w)`, 1 on valid cells.

        Returns:
            `(batch, num_heads, steps, h * w)`, zero on padded cells. The batch normalisation's statistics
            (in training) are taken over the valid cells of every step of every image.
        """
        batch, in_maps, steps, _ = coverage.shape
        height, width = feature_mask.shape[1:]
        maps = coverage.transpose(1, 2).reshape(batch * steps, in_maps, height, width)
        valid = feature_mask.bool()[:, None].expand(batch, steps, height, width).reshape(batch * steps, height, width)
        features = F.relu(self.conv(maps)).masked_fill(~valid[:, None], 0.0)
        features = self.proj(features).permute(0, 2, 3, 1)  # (batch * steps, h, w, num_heads)
        refinement = torch.zeros_like(features)
        refinement[valid] = self.norm(features[valid])
        return refinement.reshape(batch, steps, height * width, -1).permute(0, 3, 1, 2)


class CoverageAttention(MultiHeadAttention):
    """Cross-attention whose logits can be refined: `softmax(QK^T / sqrt(d) - refine(A))` where A is the
    unrefined attention, `softmax(QK^T / sqrt(d))` (after dropout in training, as in the published code)."""

    def __init__(self, dim: int, num_heads: int, dropout: float, layer_idx: int):
        super().__init__(dim, num_heads, dropout, layer_idx, is_cross_attention=True)

    def _softmax(self, scores: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        weights = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min).softmax(dim=-1)
        return F.dropout(weights, p=self.dropout, training=self.training)

    def forward(
        self,
        hidden_states: torch.Tensor,
        key_value_states: torch.Tensor,
        attention_mask: torch.Tensor,
        past_key_values: EncoderDecoderCache | None = None,
        refine: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """
        Args:
            hidden_states: `(batch, steps, dim)` queries.
            key_value_states: `(batch, source_length, dim)` encoder states.
            attention_mask: bool `(batch, 1, 1, source_length)`, True on real features.
            refine: maps the unrefined weights `(batch, num_heads, steps, source_length)` to the refinement
                term of the same shape; None for no refinement.

        Returns:
            `(batch, steps, dim)` outputs and the (refined) weights `(batch, num_heads, steps, source_length)`.
        """
        queries = self._split_heads(self.q_proj(hidden_states))
        keys, values = self._keys_and_values(key_value_states, past_key_values)
        scores = queries @ keys.transpose(-1, -2) * self.head_dim**-0.5
        weights = self._softmax(scores, attention_mask)
        if refine is not None:
            weights = self._softmax(scores - refine(weights), attention_mask)
        context = weights @ values
        batch, _, steps, _ = context.shape
        return self.out_proj(context.transpose(1, 2).reshape(batch, steps, -1)), weights


# ---------------------------------------------------------------------------------------------------
# Decoder


class CoMERDecoderLayer(nn.Module):
    """Post-norm masked self-attention, coverage-refined cross-attention, feed-forward."""

    def __init__(self, config: CoMERConfig, layer_idx: int):
        super().__init__()
        dim, heads, dropout = config.d_model, config.decoder_attention_heads, config.dropout
        self.layer_idx = layer_idx
        self.self_attn = MultiHeadAttention(dim, heads, dropout, layer_idx)
        self.cross_attn = CoverageAttention(dim, heads, dropout, layer_idx)
        self.feed_forward = FeedForward(dim, config.decoder_ffn_dim, dropout)
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
        last_hidden_state: `(batch, steps, d_model)`.
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
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_token_id)
        self.embed_norm = nn.LayerNorm(config.d_model)
        self.positions = SinusoidalPositionalEncoding1D(config.d_model)
        self.layers = nn.ModuleList(CoMERDecoderLayer(config, layer_idx) for layer_idx in range(config.decoder_layers))
        self.arm = None
        if config.coverage != "none":
            in_maps = config.decoder_attention_heads * (2 if config.coverage == "fusion" else 1)
            self.arm = AttentionRefinementModule(
                config.decoder_attention_heads, in_maps, config.arm_channels, config.arm_kernel_size
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
            encoder_hidden_states: `(batch, h * w, d_model)`.
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


def reverse_labels(labels: torch.Tensor, bos_token_id: int, eos_token_id: int) -> torch.LongTensor:
    """Right-to-left labels: `[y_1, ..., y_n, end, -100, ...]` → `[y_n, ..., y_1, start, -100, ...]`.

    Args:
        labels: `(batch, target_length)`; each row ends with the end token, then -100 padding.
    """
    lengths = (labels != -100).sum(dim=1, keepdim=True)
    last = labels.gather(1, (lengths - 1).clamp(min=0))
    if (lengths == 0).any() or (last != eos_token_id).any():
        raise ValueError(
            f"Every row of labels must end with the end token {eos_token_id} before its -100 padding "
            "(bidirectional training reverses the tokens before it)."
        )
    positions = torch.arange(labels.shape[1], device=labels.device)[None]
    reversed_tokens = labels.gather(1, (lengths - 2 - positions).clamp(min=0))
    reversed_labels = torch.where(positions < lengths - 1, reversed_tokens, bos_token_id)
    return reversed_labels.masked_fill(positions >= lengths, -100)


@dataclass
class CoMEROutput(Seq2SeqLMOutput):
    """`Seq2SeqLMOutput` with, when trained with `labels`, the right-to-left logits.

    Args:
        logits: `(batch, target_length, vocab_size)` left to right (or of the given decoder inputs).
        reverse_logits: `(batch, target_length, vocab_size)` for the reversed labels.
        loss: token-mean cross-entropy over both directions.
    """

    reverse_logits: torch.FloatTensor | None = None


@dataclass
class BidirectionalBeamSearchOutput(ModelOutput):
    """
    Args:
        sequences: `(batch, length)` the best hypothesis left to right: `[start] y [end]`, pad after.
        sequences_scores: `(batch,)` its score: its own length-normalised log-likelihood plus the opposite
            direction's.
        directions: `(batch,)` 0 where the left-to-right search found it, 1 where the right-to-left did.
    """

    sequences: torch.LongTensor | None = None
    sequences_scores: torch.FloatTensor | None = None
    directions: torch.LongTensor | None = None


class CoMERForFormulaRecognition(EncoderDecoderRecognizerMixin, CoMERPreTrainedModel, GenerationMixin):
    """CoMER encoder + coverage-refined decoder + linear classifier, with the interface of
    `VisionEncoderDecoderModel`: `pixel_values` and `labels` in, `CoMEROutput` out (bidirectional loss),
    `generate()` with a key/value and coverage cache."""

    def __init__(self, config: CoMERConfig):
        super().__init__(config)
        self.encoder = CoMEREncoder(config)
        self.decoder = CoMERDecoder(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size)
        self.post_init()
        self.generation_config.max_new_tokens = config.max_target_length
        self.generation_config.length_penalty = PAPER_DECODING["length_penalty"]
        self.generation_config.bidirectional_rescoring = True

    def _decode(
        self,
        encoder_outputs: CoMEREncoderOutput,
        decoder_input_ids: torch.LongTensor,
        decoder_attention_mask: torch.LongTensor | None = None,
        past_key_values: CoverageCache | None = None,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, CoMERDecoderOutput]:
        decoder_outputs = self.decoder(
            input_ids=decoder_input_ids,
            encoder_hidden_states=encoder_outputs.last_hidden_state,
            feature_mask=encoder_outputs.feature_mask,
            attention_mask=decoder_attention_mask,
            past_key_values=past_key_values,
            output_attentions=output_attentions,
        )
        return self.lm_head(decoder_outputs.last_hidden_state), decoder_outputs

    def forward(
        self,
        pixel_values: torch.FloatTensor | None = None,
        pixel_mask: torch.LongTensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.LongTensor | None = None,
        labels: torch.LongTensor | None = None,
        encoder_outputs: CoMEREncoderOutput | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> CoMEROutput:
        """
        Args:
            pixel_values: `(batch, num_channels, height, width)` images from the processor.
            pixel_mask: `(batch, height, width)`, 1 on real pixels, 0 on padding.
            decoder_input_ids: `(batch, target_length)`. When omitted, `labels` are learnt in both
                directions; when given, they are decoded as they are (their first token sets the
                direction: start token left to right, end token right to left).
            decoder_attention_mask: `(batch, target_length)` padding mask of the decoder inputs.
            labels: `(batch, target_length)` target ids ending in the end token, padded with -100.
            encoder_outputs: the `CoMEREncoderOutput` of `self.encoder` (used by `generate()`).
            past_key_values: the cache for incremental decoding; `generate()`'s `EncoderDecoderCache` is
                turned into a `CoverageCache` at the first step.
            use_cache: return the cache for the next step.
            output_attentions: also return self- and cross-attention weights.

        Returns:
            `CoMEROutput` with `logits (batch, target_length, vocab_size)` and `loss` when `labels` are given.
        """
        if encoder_outputs is None:
            if pixel_values is None:
                raise ValueError("Pass `pixel_values` (batch, channels, height, width) or `encoder_outputs`.")
            encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        elif not isinstance(encoder_outputs, CoMEREncoderOutput):
            if not isinstance(encoder_outputs, dict) or encoder_outputs.get("feature_mask") is None:
                raise ValueError("`encoder_outputs` must be the CoMEREncoderOutput of `model.encoder`.")
            encoder_outputs = CoMEREncoderOutput(**encoder_outputs)
        if use_cache and past_key_values is None:
            past_key_values = CoverageCache()
        elif past_key_values is not None and not isinstance(past_key_values, CoverageCache):
            past_key_values = CoverageCache.from_cache(past_key_values)
        output_attentions = bool(output_attentions)

        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("Pass `labels` or `decoder_input_ids`.")
            return self._bidirectional_forward(encoder_outputs, labels, output_attentions)

        logits, decoder_outputs = self._decode(
            encoder_outputs, decoder_input_ids, decoder_attention_mask, past_key_values, output_attentions
        )
        return CoMEROutput(
            loss=recognition_loss(logits, labels) if labels is not None else None,
            logits=logits,
            past_key_values=past_key_values if use_cache else None,
            decoder_attentions=decoder_outputs.self_attentions,
            cross_attentions=decoder_outputs.cross_attentions,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
        )

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

    @torch.no_grad()
    def generate(self, inputs: torch.Tensor | None = None, generation_config=None, **kwargs):
        """`GenerationMixin.generate`, except that beam search (`num_beams > 1`) with
        `bidirectional_rescoring` (a generation-config attribute or argument, True by default) goes to
        `bidirectional_beam_search`. Pass `bidirectional_rescoring=False` for transformers' left-to-right
        beam search."""
        config = generation_config if generation_config is not None else self.generation_config
        num_beams = kwargs.get("num_beams") or config.num_beams or 1
        rescoring = kwargs.pop("bidirectional_rescoring", getattr(config, "bidirectional_rescoring", False))
        if num_beams > 1 and rescoring:
            if inputs is not None:
                kwargs["pixel_values"] = inputs
            return self.bidirectional_beam_search(generation_config=generation_config, **kwargs)
        return super().generate(inputs, generation_config=generation_config, **kwargs)

    @torch.no_grad()
    def bidirectional_beam_search(
        self,
        pixel_values: torch.FloatTensor | None = None,
        pixel_mask: torch.LongTensor | None = None,
        encoder_outputs: CoMEREncoderOutput | None = None,
        generation_config=None,
        return_dict_in_generate: bool = False,
        **kwargs,
    ) -> torch.LongTensor | BidirectionalBeamSearchOutput:
        """CoMER's decoding: beam search left to right (start token → end token) and right to left (end
        token → start token) over one encoder pass; every finished hypothesis of either direction is
        rescored by the opposite direction, and the best sum is kept.

        A hypothesis y scores `log P(y, stop | direction) / (|y| + 1) ** length_penalty` in its own
        search (transformers' beam search normalisation) plus the same for reversed y under the other
        direction, read by teacher forcing. Hypotheses cut by the length limit have no stop token in
        either score, and none in the returned sequence.

        Args:
            pixel_values, pixel_mask: images and their mask (or `encoder_outputs`).
            generation_config: defaults to the model's; `num_beams`, `max_new_tokens`,
                `length_penalty`, `use_cache`, ... may also be given as keyword arguments, which go to
                both beam searches.
            return_dict_in_generate: return a `BidirectionalBeamSearchOutput` instead of the sequences.

        Returns:
            `(batch, length)` sequences left to right, `[start] y [end]` padded with the pad token, at
            most `1 + max_new_tokens` long.
        """
        config = generation_config if generation_config is not None else self.generation_config
        num_beams = kwargs.pop("num_beams", None) or config.num_beams
        length_penalty = kwargs.get("length_penalty", config.length_penalty)
        if kwargs.pop("num_return_sequences", None) not in (None, 1):
            raise ValueError("The bidirectional beam search returns one sequence per image.")
        for name in ("output_scores", "do_sample", "decoder_input_ids"):
            kwargs.pop(name, None)
        if encoder_outputs is None:
            if pixel_values is None:
                raise ValueError("Pass `pixel_values` (batch, channels, height, width) or `encoder_outputs`.")
            encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        bos, eos, pad = self.config.bos_token_id, self.config.eos_token_id, self.config.pad_token_id

        candidates, own_scores = [], []
        for start, stop in ((bos, eos), (eos, bos)):
            searched = super().generate(
                encoder_outputs=CoMEREncoderOutput(**encoder_outputs),  # generate expands it in place
                generation_config=generation_config,
                num_beams=num_beams,
                num_return_sequences=num_beams,
                decoder_start_token_id=start,
                eos_token_id=stop,
                pad_token_id=pad,
                do_sample=False,
                output_scores=True,
                return_dict_in_generate=True,
                **kwargs,
            )
            for sequence in searched.sequences[:, 1:].tolist():
                finished = stop in sequence
                tokens = sequence[: sequence.index(stop)] if finished else sequence
                candidates.append((tokens if start == bos else tokens[::-1], finished))
            own_scores.append(searched.sequences_scores)

        # Rate left-to-right hypotheses right to left and the other way round, in one teacher-forced batch.
        batch = encoder_outputs.last_hidden_state.shape[0]
        half = batch * num_beams
        directions = [(eos, bos)] * half + [(bos, eos)] * half
        expanded = CoMEREncoderOutput(
            last_hidden_state=encoder_outputs.last_hidden_state.repeat_interleave(num_beams, dim=0).repeat(2, 1, 1),
            feature_mask=encoder_outputs.feature_mask.repeat_interleave(num_beams, dim=0).repeat(2, 1, 1),
        )
        opposite_scores = self._sequence_log_likelihood(expanded, candidates, directions, length_penalty)
        scores = torch.cat(own_scores) + opposite_scores
        scores = torch.cat((scores[:half].view(batch, num_beams), scores[half:].view(batch, num_beams)), dim=1)
        best_scores, best = scores.max(dim=1)
        best_direction = best // num_beams
        chosen = [
            candidates[direction * half + image * num_beams + beam]
            for image, (direction, beam) in enumerate(zip(best_direction.tolist(), (best % num_beams).tolist()))
        ]
        chosen = [[bos, *tokens, eos] if finished else [bos, *tokens] for tokens, finished in chosen]
        sequences = torch.full((batch, max(map(len, chosen))), pad, dtype=torch.long, device=best.device)
        for row, ids in enumerate(chosen):
            sequences[row, : len(ids)] = torch.tensor(ids, device=best.device)
        if return_dict_in_generate:
            return BidirectionalBeamSearchOutput(
                sequences=sequences, sequences_scores=best_scores, directions=best_direction
            )
        return sequences

    def _sequence_log_likelihood(
        self,
        encoder_outputs: CoMEREncoderOutput,
        candidates: list[tuple[list[int], bool]],
        directions: list[tuple[int, int]],
        length_penalty: float,
    ) -> torch.Tensor:
        """`log P(tokens, stop) / (len(tokens) + 1) ** length_penalty` of each `(tokens, finished)` (tokens in
        left-to-right order) read by teacher forcing in its direction `(start, stop)`, over the encoder
        output of the same row; unfinished ones (cut by the length limit) are rated without the stop
        token, `log P(tokens) / len(tokens) ** length_penalty`, as their own search scored them."""
        device = encoder_outputs.last_hidden_state.device
        length = max(len(tokens) for tokens, _ in candidates) + 1
        decoder_input_ids = torch.full((len(candidates), length), self.config.pad_token_id, dtype=torch.long)
        labels = torch.full((len(candidates), length), -100, dtype=torch.long)
        for row, ((tokens, finished), (start, stop)) in enumerate(zip(candidates, directions)):
            ordered = tokens if start == self.config.bos_token_id else tokens[::-1]
            targets = [*ordered, stop] if finished else ordered
            decoder_input_ids[row, : len(targets)] = torch.tensor([start, *ordered][: len(targets)])
            labels[row, : len(targets)] = torch.tensor(targets)
        logits, _ = self._decode(encoder_outputs, decoder_input_ids.to(device))
        labels = labels.to(device)
        log_probs = logits.float().log_softmax(dim=-1).gather(2, labels.clamp(min=0)[..., None])[..., 0]
        valid = labels != -100
        return (log_probs * valid).sum(dim=1) / valid.sum(dim=1).float() ** length_penalty


CoMERForFormulaRecognition.register_for_auto_class("AutoModelForImageTextToText")
