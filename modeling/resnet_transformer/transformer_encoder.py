# Copied from modeling/common/transformer_encoder.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Transformer encoder: self-attention over a sequence and a ReLU feed-forward.

Each sub-layer is wrapped in a residual connection and LayerNorm, after the sub-layer (post-norm) or
before it (`norm_first=True`, with a final LayerNorm), as in `transformer_decoder`, whose blocks it
reuses. Positions are the caller's business: add them to the inputs.
"""

import torch
from torch import nn

from .attention import MultiHeadAttention
from .transformer_decoder import FeedForward, ResidualSublayer


class TransformerEncoderLayer(nn.Module):
    """Self-attention, then feed-forward.

    Args:
        dim: model width.
        num_heads: attention heads.
        ffn_dim: inner size of the feed-forward.
        dropout: dropout on each sub-layer's output before the residual addition.
        attention_dropout: dropout on attention weights.
        activation_dropout: dropout after the ReLU.
        norm_first: pre-norm instead of post-norm.
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        ffn_dim: int,
        dropout: float,
        attention_dropout: float,
        activation_dropout: float,
        norm_first: bool = False,
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(dim, num_heads, attention_dropout)
        self.feed_forward = FeedForward(dim, ffn_dim, activation_dropout)
        self.self_attn_block = ResidualSublayer(dim, dropout, norm_first)
        self.feed_forward_block = ResidualSublayer(dim, dropout, norm_first)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """
        Args:
            hidden_states: `(batch, length, dim)`.
            attention_mask: bool `(batch, 1, 1, length)`, True on keys that may be attended to.

        Returns:
            `(batch, length, dim)`.
        """
        hidden_states, _ = self.self_attn_block(
            hidden_states, lambda x: self.self_attn(x, attention_mask=attention_mask)
        )
        hidden_states, _ = self.feed_forward_block(hidden_states, lambda x: (self.feed_forward(x), None))
        return hidden_states


class TransformerEncoder(nn.Module):
    """A stack of `TransformerEncoderLayer`s.

    Args:
        dim: model width.
        num_layers, num_heads, ffn_dim: stack size.
        dropout, attention_dropout, activation_dropout: see `TransformerEncoderLayer`.
        norm_first: pre-norm layers with a final LayerNorm.
    """

    def __init__(
        self,
        dim: int,
        num_layers: int,
        num_heads: int,
        ffn_dim: int,
        dropout: float = 0.1,
        attention_dropout: float = 0.0,
        activation_dropout: float = 0.0,
        norm_first: bool = False,
    ):
        super().__init__()
        self.layers = nn.ModuleList(
            TransformerEncoderLayer(dim, num_heads, ffn_dim, dropout, attention_dropout, activation_dropout, norm_first)
            for _ in range(num_layers)
        )
        self.final_norm = nn.LayerNorm(dim) if norm_first else nn.Identity()

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """
        Args:
            hidden_states: `(batch, length, dim)`, positions already added.
            attention_mask: `(batch, length)`, 1 for real elements, 0 for padding. Padding is never
                attended to; its own outputs are computed but meaningless.

        Returns:
            `(batch, length, dim)`.
        """
        key_mask = attention_mask.bool()[:, None, None, :] if attention_mask is not None else None
        for layer in self.layers:
            hidden_states = layer(hidden_states, key_mask)
        return self.final_norm(hidden_states)
