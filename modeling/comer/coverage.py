"""CoMER's coverage (Zhao and Gao, ECCV 2022, section 3.3): the Attention Refinement Module (ARM) that
subtracts a term computed from the attention of earlier steps from the cross-attention logits, the attention
that applies it, and the cache that keeps the running sums of attention for incremental decoding."""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

from .attention import MultiHeadAttention


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
        # The published code zeroes the padded cells between the ReLU and the 1x1 projection; the projection reads
        # each cell alone and only valid cells are kept below, so that pass (and its backward) is left out.
        features = self.proj(F.relu(self.conv(maps))).permute(0, 2, 3, 1)  # (batch * steps, h, w, num_heads)
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
