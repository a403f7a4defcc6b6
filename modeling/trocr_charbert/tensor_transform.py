"""Tensor transforms: map a sequence of embeddings to another length and width, causally.

A transform is 1-D convolutions (kernel 3, LeakyReLU, optional batch normalisation) that change the
sequence length, then feed-forward layers (LeakyReLU) that change the embedding size, with dropout
between layers. Two layouts of the convolutions:

- `sliding`: the convolutions slide along the sequence (channels = embedding features), left-padded
  so that output position t sees input positions t-2..t only. A length ratio r > 1 is produced by the
  last convolution emitting r vectors per position (one token -> its r character slots). Lengths
  follow the input: T positions in, r * T out.
- `fixed` (the thesis): the sequence axis is the channel axis, of a fixed length, and the kernel slides
  along the embedding features; every output position mixes every input position. To keep the
  composite causal, the channel-mixing weights are masked so that an output position only reads input
  positions at or before it (each position is mapped to the decoder token it stands for).
"""

import torch
from torch import nn
from torch.nn import functional as F

from .incremental_decoding import CorrectorStepCache


def source_token_positions(length: int, positions_per_token: int) -> torch.Tensor:
    """The decoder token each of `length` positions stands for: position p -> p // positions_per_token
    (a token's character slots all stand for that token)."""
    return torch.arange(length) // positions_per_token


class SlidingCausalConvolutions(nn.Module):
    """Causal convolutions along the sequence; the last one emits `length_ratio` vectors per position.

    `(batch, length, width)` -> `(batch, length * length_ratio, width)`.
    """

    def __init__(self, width: int, num_layers: int, length_ratio: int, batch_norm: bool, dropout: float, slope: float):
        super().__init__()
        self.length_ratio = length_ratio
        self.convolutions = nn.ModuleList(
            nn.Conv1d(width, width * (length_ratio if index == num_layers - 1 else 1), kernel_size=3)
            for index in range(num_layers)
        )
        self.norms = nn.ModuleList(
            nn.BatchNorm1d(conv.out_channels) if batch_norm else nn.Identity() for conv in self.convolutions
        )
        self.dropout = nn.Dropout(dropout)
        self.slope = slope

    def forward(self, states: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        """`step_cache`: in incremental decoding, `states` are the new positions only and each convolution reads
        its input's tail from the cache (see `incremental_decoding.py`)."""
        batch_size, length, width = states.shape
        states = states.transpose(1, 2)
        for conv, norm in zip(self.convolutions, self.norms):
            if step_cache is None:
                context = F.pad(states, (2, 0))
            else:
                context = step_cache.causal_context(states.transpose(1, 2), conv.kernel_size[0])
            states = self.dropout(F.leaky_relu(norm(conv(context)), self.slope))
        # (batch, width * ratio, length) -> (batch, length * ratio, width): slot k of position t is t * ratio + k
        states = states.reshape(batch_size, self.length_ratio, width, length).permute(0, 3, 1, 2)
        return states.reshape(batch_size, length * self.length_ratio, width)


class MaskedChannelConvolutions(nn.Module):
    """Convolutions whose channels are the positions of a fixed-length sequence (the thesis layout),
    with the position-mixing weights masked to keep causality.

    `(batch, in_length, width)` -> `(batch, out_length, width)`; input positions stand for decoder
    tokens `p // in_positions_per_token`, output positions for `p // out_positions_per_token`, and an
    output position reads only input positions standing for the same or an earlier token.
    """

    def __init__(
        self,
        in_length: int,
        out_length: int,
        in_positions_per_token: int,
        out_positions_per_token: int,
        num_layers: int,
        batch_norm: bool,
        dropout: float,
        slope: float,
    ):
        super().__init__()
        lengths = [in_length] + [out_length] * num_layers
        self.convolutions = nn.ModuleList(
            nn.Conv1d(lengths[index], lengths[index + 1], kernel_size=3, padding=1) for index in range(num_layers)
        )
        self.norms = nn.ModuleList(nn.BatchNorm1d(out_length) if batch_norm else nn.Identity() for _ in range(num_layers))
        self.dropout = nn.Dropout(dropout)
        self.slope = slope
        self.in_positions_per_token = in_positions_per_token
        self.out_positions_per_token = out_positions_per_token

    def causal_mask(self, layer_index: int, device: torch.device) -> torch.Tensor:
        """`(out_channels, in_channels, 1)`: 1 where the output position may read the input position.
        Computed on the fly (a non-persistent buffer would not survive loading)."""
        conv = self.convolutions[layer_index]
        in_per_token = self.in_positions_per_token if layer_index == 0 else self.out_positions_per_token
        sources = source_token_positions(conv.in_channels, in_per_token)
        targets = source_token_positions(conv.out_channels, self.out_positions_per_token)
        return (sources[None, :] <= targets[:, None]).to(device=device, dtype=conv.weight.dtype).unsqueeze(-1)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        expected = self.convolutions[0].in_channels
        if states.shape[1] != expected:
            raise ValueError(f"The fixed layout expects sequences of exactly {expected} positions, got {states.shape[1]}.")
        for index, (conv, norm) in enumerate(zip(self.convolutions, self.norms)):
            weight = conv.weight * self.causal_mask(index, states.device)
            states = F.conv1d(states, weight, conv.bias, padding=1)
            states = self.dropout(F.leaky_relu(norm(states), self.slope))
        return states


class FeedForwardStack(nn.Module):
    """Linear layers from `in_size` to `out_size` through `hidden_size`, LeakyReLU and dropout between
    them (the last layer is linear: its output is an embedding)."""

    def __init__(self, in_size: int, hidden_size: int, out_size: int, num_layers: int, dropout: float, slope: float):
        super().__init__()
        sizes = [in_size] + [hidden_size] * (num_layers - 1) + [out_size]
        self.layers = nn.ModuleList(nn.Linear(sizes[index], sizes[index + 1]) for index in range(num_layers))
        self.dropout = nn.Dropout(dropout)
        self.slope = slope

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            states = self.dropout(F.leaky_relu(layer(states), self.slope))
        return self.layers[-1](states)


class TensorTransform(nn.Module):
    """Convolutions that change the sequence length, then feed-forward layers that change the width.

    `(batch, in_length, in_size)` -> `(batch, out_length, out_size)`.

    Args:
        in_size, out_size: embedding widths.
        layout: `"sliding"` (lengths follow the input; `out_length = in_length * length_ratio`) or
            `"fixed"` (`in_length` and `out_length` fixed, see the module docstring).
        length_ratio: sliding layout only: output positions per input position.
        in_length, out_length, in_positions_per_token, out_positions_per_token: fixed layout only.
        num_conv_layers, num_ffn_layers, ffn_hidden_size, batch_norm, dropout, slope: the layers.
    """

    def __init__(
        self,
        in_size: int,
        out_size: int,
        layout: str,
        num_conv_layers: int,
        num_ffn_layers: int,
        ffn_hidden_size: int,
        batch_norm: bool,
        dropout: float,
        slope: float,
        length_ratio: int = 1,
        in_length: int | None = None,
        out_length: int | None = None,
        in_positions_per_token: int = 1,
        out_positions_per_token: int = 1,
    ):
        super().__init__()
        if layout == "sliding":
            self.resample = SlidingCausalConvolutions(in_size, num_conv_layers, length_ratio, batch_norm, dropout, slope)
        else:
            self.resample = MaskedChannelConvolutions(
                in_length, out_length, in_positions_per_token, out_positions_per_token,
                num_conv_layers, batch_norm, dropout, slope,
            )
        self.feed_forward = FeedForwardStack(in_size, ffn_hidden_size, out_size, num_ffn_layers, dropout, slope)

    def forward(self, states: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        """`step_cache`: incremental decoding (sliding layout only), see `SlidingCausalConvolutions`."""
        if step_cache is None:
            return self.feed_forward(self.resample(states))
        if not isinstance(self.resample, SlidingCausalConvolutions):
            raise ValueError("Only the sliding layout decodes incrementally: the fixed layout mixes every position.")
        return self.feed_forward(self.resample(states, step_cache))

    def output_layer(self) -> nn.Linear:
        """The last linear layer (zeroing it makes the transform output zero)."""
        return self.feed_forward.layers[-1]
