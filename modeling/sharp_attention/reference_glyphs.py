"""The reference-image loss of sharp attention: the sharpener's patch of each step is drawn towards a rendered
glyph of the target token (`reference_loss_weight > 0`)."""

import torch
import torch.nn.functional as F
from torch import nn


class ReferenceGlyphs(nn.Module):
    """What each token should look like in the sharpener's patch, for the reference-image loss.

    Buffers (saved with the model): `glyphs (vocab_size, channels, image_height, patch_width)`, in the
    normalised values of `pixel_values`, and `available (vocab_size,)`, true for tokens with a glyph.
    """

    def __init__(self, vocab_size: int, channels: int, height: int, width: int):
        super().__init__()
        self.register_buffer("glyphs", torch.zeros(vocab_size, channels, height, width))
        self.register_buffer("available", torch.zeros(vocab_size, dtype=torch.bool))

    def forward(self, patches: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Mean squared difference between `patches (batch, steps, channels, h, w)` and the glyphs of
        `labels (batch, steps)`, over the steps whose target token has a glyph (0 if none has)."""
        targets = labels.clamp(min=0)
        chosen = (labels != -100) & self.available[targets]
        if not chosen.any():
            return patches.sum() * 0.0
        return F.mse_loss(patches[chosen], self.glyphs[targets[chosen]])
