"""Sinusoidal position encodings, computed on the fly.

The tables are never stored as buffers: transformers 5 restores non-persistent buffers of custom
models as uninitialised memory, so recomputing them is both simpler and safe.
"""

import math

import torch
from torch import nn


def sinusoidal_position_encoding(positions: torch.Tensor, dim: int, base: float = 10000.0) -> torch.Tensor:
    """Sinusoidal encodings of (possibly fractional) positions.

    E(i, 2x) = sin(i / base^(2x/dim)) and E(i, 2x+1) = cos(i / base^(2x/dim)).

    Args:
        positions: `(...)` positions, any float or integer tensor.
        dim: even encoding size.

    Returns:
        `(..., dim)` float tensor on the device of `positions`.
    """
    if dim % 2:
        raise ValueError(f"The sinusoidal encoding size must be even, got {dim}.")
    exponents = torch.arange(0, dim, 2, device=positions.device, dtype=torch.float32) / dim
    inverse_frequencies = torch.exp(-math.log(base) * exponents)
    angles = positions.to(torch.float32).unsqueeze(-1) * inverse_frequencies
    encoding = torch.stack((angles.sin(), angles.cos()), dim=-1)
    return encoding.flatten(-2)


class SinusoidalPositionalEncoding1D(nn.Module):
    """Adds 1-D sinusoidal position encodings to a sequence.

    Args:
        dim: feature size of the sequence.
        dropout: dropout applied after the addition.
    """

    def __init__(self, dim: int, dropout: float = 0.0):
        super().__init__()
        self.dim = dim
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """
        Args:
            hidden_states: `(batch, length, dim)`.
            offset: position of the first element (the number of cached decoder steps).

        Returns:
            `(batch, length, dim)`.
        """
        positions = torch.arange(offset, offset + hidden_states.shape[1], device=hidden_states.device)
        encoding = sinusoidal_position_encoding(positions, self.dim).to(hidden_states.dtype)
        return self.dropout(hidden_states + encoding)
