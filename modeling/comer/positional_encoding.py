# Copied from modeling/common/positional_encoding.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
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


def image_position_encoding_2d(feature_mask: torch.Tensor, dim: int, scale: float = 2 * math.pi) -> torch.Tensor:
    """2-D sinusoidal encodings of a feature map, normalised to each image's unpadded extent (as in BTTR
    and CoMER).

    Along each axis, a cell's position is the count of valid cells up to and including it, divided by
    the count over the whole row (for x) or column (for y) and multiplied by `scale`, so that every image
    spans [0, scale] whatever its size and padding. The x and y positions are encoded with
    `sinusoidal_position_encoding` of `dim / 2` features each and concatenated, x first.

    Args:
        feature_mask: `(batch, height, width)`, 1 (or True) on cells of real pixels, 0 on padding.
        dim: encoding size, a multiple of 4.
        scale: the normalised extent of each axis.

    Returns:
        `(batch, height, width, dim)` float tensor; padded cells get positions too (ignore them).
    """
    if dim % 4:
        raise ValueError(f"The 2-D position encoding size must be a multiple of 4, got {dim}.")
    valid = feature_mask.to(torch.float32)
    y = valid.cumsum(dim=1)
    x = valid.cumsum(dim=2)
    y = y / (y[:, -1:, :] + 1e-6) * scale
    x = x / (x[:, :, -1:] + 1e-6) * scale
    return torch.cat((sinusoidal_position_encoding(x, dim // 2), sinusoidal_position_encoding(y, dim // 2)), dim=-1)


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
