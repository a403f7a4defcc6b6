# Copied from modeling/common/attention.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Multi-head attention that reads and writes transformers' `EncoderDecoderCache`.

Self-attention appends each step's keys and values to `cache.self_attention_cache`;
cross-attention projects the encoder states once and reuses them from
`cache.cross_attention_cache` on later steps (flagged by `cache.is_updated[layer_idx]`).
This is the contract `GenerationMixin.generate()` relies on for encoder-decoder models.
"""

import torch
import torch.nn.functional as F
from torch import nn
from transformers.cache_utils import EncoderDecoderCache


def causal_attention_mask(query_length: int, key_length: int, device: torch.device) -> torch.Tensor:
    """Boolean mask letting query i (the last `query_length` of `key_length` positions) see keys <= its position.

    Returns:
        `(query_length, key_length)` bool tensor, True where attention is allowed.
    """
    offset = key_length - query_length
    query_positions = torch.arange(query_length, device=device).unsqueeze(1) + offset
    key_positions = torch.arange(key_length, device=device).unsqueeze(0)
    return key_positions <= query_positions


class MultiHeadAttention(nn.Module):
    """Scaled dot-product attention over `num_heads` heads.

    Args:
        dim: model width, divisible by `num_heads`.
        num_heads: number of heads.
        dropout: dropout on the attention weights during training.
        layer_idx: index of the owning decoder layer in the cache; required when a cache is used.
        is_cross_attention: whether keys and values come from the encoder.
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        dropout: float = 0.0,
        layer_idx: int | None = None,
        is_cross_attention: bool = False,
    ):
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"The width {dim} is not divisible by the number of heads {num_heads}.")
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.dropout = dropout
        self.layer_idx = layer_idx
        self.is_cross_attention = is_cross_attention
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def _split_heads(self, states: torch.Tensor) -> torch.Tensor:
        batch, length, _ = states.shape
        return states.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

    def _keys_and_values(
        self, source: torch.Tensor, past_key_values: EncoderDecoderCache | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if past_key_values is None:
            return self._split_heads(self.k_proj(source)), self._split_heads(self.v_proj(source))
        if self.is_cross_attention:
            cache = past_key_values.cross_attention_cache
            if past_key_values.is_updated.get(self.layer_idx):
                layer = cache.layers[self.layer_idx]
                return layer.keys, layer.values
            keys, values = self._split_heads(self.k_proj(source)), self._split_heads(self.v_proj(source))
            keys, values = cache.update(keys, values, self.layer_idx)
            past_key_values.is_updated[self.layer_idx] = True
            return keys, values
        keys, values = self._split_heads(self.k_proj(source)), self._split_heads(self.v_proj(source))
        return past_key_values.self_attention_cache.update(keys, values, self.layer_idx)

    def forward(
        self,
        hidden_states: torch.Tensor,
        key_value_states: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """
        Args:
            hidden_states: `(batch, query_length, dim)` queries.
            key_value_states: `(batch, key_length, dim)` encoder states for cross-attention.
            attention_mask: bool, broadcastable to `(batch, num_heads, query_length, key_length)`,
                True where attention is allowed.
            past_key_values: the generation cache, or None when all steps run at once.
            output_attentions: also return the attention weights.

        Returns:
            `(batch, query_length, dim)` outputs and, if asked, `(batch, num_heads, query_length,
            key_length)` weights.
        """
        source = key_value_states if self.is_cross_attention else hidden_states
        queries = self._split_heads(self.q_proj(hidden_states))
        keys, values = self._keys_and_values(source, past_key_values)
        dropout = self.dropout if self.training else 0.0
        if output_attentions:
            scores = queries @ keys.transpose(-1, -2) * self.head_dim**-0.5
            if attention_mask is not None:
                scores = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
            weights = scores.softmax(dim=-1)
            context = F.dropout(weights, p=dropout, training=self.training) @ values
        else:
            weights = None
            context = F.scaled_dot_product_attention(queries, keys, values, attn_mask=attention_mask, dropout_p=dropout)
        batch, _, query_length, _ = context.shape
        context = context.transpose(1, 2).reshape(batch, query_length, -1)
        return self.out_proj(context), weights
