# Copied from modeling/common/transformer_decoder.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Transformer decoder with masked self-attention, cross-attention and a ReLU feed-forward.

Each sub-layer is wrapped in a residual connection and LayerNorm, after the sub-layer (post-norm,
as in "Attention is all you need") or before it (`norm_first=True`). The decoder reads and writes
transformers' `EncoderDecoderCache`, so `generate()` decodes incrementally.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn
from transformers.cache_utils import EncoderDecoderCache
from transformers.utils import ModelOutput

from .attention import MultiHeadAttention, causal_attention_mask
from .positional_encoding import SinusoidalPositionalEncoding1D


def decoder_self_attention_mask(
    target_length: int, cached_length: int, attention_mask: torch.Tensor | None, device: torch.device
) -> torch.Tensor:
    """The decoder's self-attention mask: causal, and hiding padded decoder inputs.

    Args:
        target_length: new decoder steps.
        cached_length: steps already in the cache.
        attention_mask: `(batch, cached_length + target_length)`, 1 for real tokens, or None.

    Returns:
        bool `(batch or 1, 1, target_length, cached_length + target_length)`, True where attention is allowed.
    """
    causal_mask = causal_attention_mask(target_length, cached_length + target_length, device)
    if attention_mask is None:
        return causal_mask[None, None]
    # Padding keys are hidden; each query still sees itself so no softmax row is empty.
    own_position = torch.eye(target_length, dtype=torch.bool, device=device)
    own_position = nn.functional.pad(own_position, (cached_length, 0))
    return (causal_mask & attention_mask.bool()[:, None, None, :]) | own_position


class FeedForward(nn.Module):
    """Two linear layers with a ReLU between them: `dim -> ffn_dim -> dim`."""

    def __init__(self, dim: int, ffn_dim: int, activation_dropout: float = 0.0):
        super().__init__()
        self.fc1 = nn.Linear(dim, ffn_dim)
        self.activation = nn.ReLU()
        self.activation_dropout = nn.Dropout(activation_dropout)
        self.fc2 = nn.Linear(ffn_dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.activation_dropout(self.activation(self.fc1(hidden_states))))


class ResidualSublayer(nn.Module):
    """Residual connection and LayerNorm around a sub-layer, post-norm or pre-norm."""

    def __init__(self, dim: int, dropout: float, norm_first: bool):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, hidden_states: torch.Tensor, sublayer) -> tuple[torch.Tensor, torch.Tensor | None]:
        inputs = self.norm(hidden_states) if self.norm_first else hidden_states
        outputs, weights = sublayer(inputs)
        hidden_states = hidden_states + self.dropout(outputs)
        return (hidden_states if self.norm_first else self.norm(hidden_states)), weights


class TransformerDecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder states, feed-forward.

    Args:
        dim: model width.
        num_heads: attention heads of both attentions.
        ffn_dim: inner size of the feed-forward.
        dropout: dropout on each sub-layer's output before the residual addition.
        attention_dropout: dropout on attention weights.
        activation_dropout: dropout after the ReLU.
        layer_idx: this layer's index in the generation cache.
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
        layer_idx: int,
        norm_first: bool = False,
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(dim, num_heads, attention_dropout, layer_idx)
        self.cross_attn = MultiHeadAttention(dim, num_heads, attention_dropout, layer_idx, is_cross_attention=True)
        self.feed_forward = FeedForward(dim, ffn_dim, activation_dropout)
        self.self_attn_block = ResidualSublayer(dim, dropout, norm_first)
        self.cross_attn_block = ResidualSublayer(dim, dropout, norm_first)
        self.feed_forward_block = ResidualSublayer(dim, dropout, norm_first)

    def forward(
        self,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor,
        self_attention_mask: torch.Tensor | None,
        cross_attention_mask: torch.Tensor | None,
        past_key_values: EncoderDecoderCache | None = None,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """
        Args:
            hidden_states: `(batch, target_length, dim)`.
            encoder_hidden_states: `(batch, source_length, dim)`.
            self_attention_mask: bool `(batch or 1, 1, target_length, cached + target_length)`.
            cross_attention_mask: bool `(batch, 1, 1, source_length)` or None.

        Returns:
            `(batch, target_length, dim)` and, if asked, the self- and cross-attention weights.
        """
        hidden_states, self_weights = self.self_attn_block(
            hidden_states,
            lambda x: self.self_attn(
                x, attention_mask=self_attention_mask, past_key_values=past_key_values, output_attentions=output_attentions
            ),
        )
        hidden_states, cross_weights = self.cross_attn_block(
            hidden_states,
            lambda x: self.cross_attn(
                x,
                key_value_states=encoder_hidden_states,
                attention_mask=cross_attention_mask,
                past_key_values=past_key_values,
                output_attentions=output_attentions,
            ),
        )
        hidden_states, _ = self.feed_forward_block(hidden_states, lambda x: (self.feed_forward(x), None))
        return hidden_states, self_weights, cross_weights


@dataclass
class TransformerDecoderOutput(ModelOutput):
    """
    Args:
        last_hidden_state: `(batch, target_length, dim)` states after the last layer.
        self_attentions: per layer `(batch, num_heads, target_length, cached + target_length)`.
        cross_attentions: per layer `(batch, num_heads, target_length, source_length)`.
    """

    last_hidden_state: torch.FloatTensor | None = None
    self_attentions: tuple[torch.FloatTensor, ...] | None = None
    cross_attentions: tuple[torch.FloatTensor, ...] | None = None


class TransformerDecoder(nn.Module):
    """Token embedding, sinusoidal positions and a stack of `TransformerDecoderLayer`s.

    Args:
        vocab_size: number of token ids.
        dim: model width.
        num_layers, num_heads, ffn_dim: stack size.
        dropout, attention_dropout, activation_dropout: see `TransformerDecoderLayer`.
        pad_token_id: id whose embedding stays zero.
        scale_embedding: multiply token embeddings by sqrt(dim) before adding positions.
        norm_first: pre-norm layers with a final LayerNorm.
    """

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        num_layers: int,
        num_heads: int,
        ffn_dim: int,
        dropout: float = 0.1,
        attention_dropout: float = 0.0,
        activation_dropout: float = 0.0,
        pad_token_id: int = 0,
        scale_embedding: bool = True,
        norm_first: bool = False,
    ):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, dim, padding_idx=pad_token_id)
        self.embed_scale = math.sqrt(dim) if scale_embedding else 1.0
        self.positions = SinusoidalPositionalEncoding1D(dim, dropout)
        self.layers = nn.ModuleList(
            TransformerDecoderLayer(
                dim, num_heads, ffn_dim, dropout, attention_dropout, activation_dropout, layer_idx, norm_first
            )
            for layer_idx in range(num_layers)
        )
        self.final_norm = nn.LayerNorm(dim) if norm_first else nn.Identity()

    def forward(
        self,
        input_ids: torch.LongTensor,
        encoder_hidden_states: torch.Tensor,
        encoder_attention_mask: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        output_attentions: bool = False,
    ) -> TransformerDecoderOutput:
        """
        Args:
            input_ids: `(batch, target_length)` decoder input ids (only the new ones when cached).
            encoder_hidden_states: `(batch, source_length, dim)`.
            encoder_attention_mask: `(batch, source_length)`, 1 for real features, 0 for padding.
            attention_mask: `(batch, cached + target_length)` decoder padding mask, 1 for real tokens.
            past_key_values: the generation cache.

        Returns:
            `TransformerDecoderOutput` with `last_hidden_state (batch, target_length, dim)`.
        """
        cached_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        target_length = input_ids.shape[1]
        hidden_states = self.positions(self.embed_tokens(input_ids) * self.embed_scale, offset=cached_length)

        self_attention_mask = decoder_self_attention_mask(target_length, cached_length, attention_mask, input_ids.device)
        cross_attention_mask = None
        if encoder_attention_mask is not None:
            cross_attention_mask = encoder_attention_mask.bool()[:, None, None, :]

        self_attentions, cross_attentions = [], []
        for layer in self.layers:
            hidden_states, self_weights, cross_weights = layer(
                hidden_states,
                encoder_hidden_states,
                self_attention_mask,
                cross_attention_mask,
                past_key_values,
                output_attentions,
            )
            self_attentions.append(self_weights)
            cross_attentions.append(cross_weights)
        return TransformerDecoderOutput(
            last_hidden_state=self.final_norm(hidden_states),
            self_attentions=tuple(self_attentions) if output_attentions else None,
            cross_attentions=tuple(cross_attentions) if output_attentions else None,
        )
