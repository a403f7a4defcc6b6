"""Tensor combines: merge the decoder's embeddings E with CharBERT's corrections T' and C'.

All inputs are `(batch, length, width)`; the output has the same shape and feeds the TrOCR decoder
stack in place of E.

- `add`: `E + T' + C'`.
- `mean`, `linear`, `conv`: a softmax weight per input and position, `sum_i w_i x_i` over
  `(E, T', C')`. E is one of the weighted inputs, so the residual from E is there by construction: with
  its weight at 1 the combine returns E unchanged, and the composite is exactly TrOCR. The weights are
  computed from the feature-normalised inputs (each vector divided by its L2 norm, so that the scale of
  an input does not decide its weight), the sum is over the inputs as they are:
  - `mean`: the weight logits are the mean over the embedding axis of each normalised input;
  - `linear`: an attention net of linear layers with LeakyReLU maps each normalised input to a logit;
  - `conv`: the same with causal 1-D convolutions along the sequence (kernel `kernel_size`, left
    padded: position t reads t-k+1..t), so the weights see a little context but never the future.
"""

import torch
from torch import nn
from torch.nn import functional as F

from .incremental_decoding import CorrectorStepCache


def normalize_features(stack: torch.Tensor) -> torch.Tensor:
    """Each embedding vector divided by its L2 norm (the last axis)."""
    return F.normalize(stack, dim=-1)


class AddCombine(nn.Module):
    def forward(self, stack: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        """`stack (batch, inputs, length, width)` -> `(batch, length, width)`."""
        return stack.sum(dim=1)


class WeightedCombine(nn.Module):
    """Base of the weighted variants: `weight_logits` gives `(batch, inputs, length)`.

    `step_cache`: in incremental decoding, the stack holds the new positions only (see
    `incremental_decoding.py`); only the `conv` combine reads earlier positions."""

    def weight_logits(self, normalized: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        raise NotImplementedError

    def weights(self, stack: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        """`stack (batch, inputs, length, width)` -> softmax weights `(batch, inputs, length)`."""
        return self.weight_logits(normalize_features(stack), step_cache).softmax(dim=1)

    def forward(self, stack: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        return (self.weights(stack, step_cache).unsqueeze(-1) * stack).sum(dim=1)


class MeanCombine(WeightedCombine):
    def weight_logits(self, normalized: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        return normalized.mean(dim=-1)


class LinearAttentionCombine(WeightedCombine):
    def __init__(self, width: int, hidden_size: int, slope: float):
        super().__init__()
        self.hidden = nn.Linear(width, hidden_size)
        self.score = nn.Linear(hidden_size, 1)
        self.slope = slope

    def weight_logits(self, normalized: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        return self.score(F.leaky_relu(self.hidden(normalized), self.slope)).squeeze(-1)


class ConvAttentionCombine(WeightedCombine):
    def __init__(self, width: int, hidden_size: int, kernel_size: int, slope: float):
        super().__init__()
        self.hidden = nn.Conv1d(width, hidden_size, kernel_size)
        self.score = nn.Conv1d(hidden_size, 1, kernel_size)
        self.padding = (kernel_size - 1, 0)
        self.slope = slope

    def weight_logits(self, normalized: torch.Tensor, step_cache: CorrectorStepCache | None = None) -> torch.Tensor:
        batch_size, num_inputs, length, width = normalized.shape
        if step_cache is None:
            states = normalized.reshape(batch_size * num_inputs, length, width).transpose(1, 2)
            states = F.leaky_relu(self.hidden(F.pad(states, self.padding)), self.slope)
            return self.score(F.pad(states, self.padding)).reshape(batch_size, num_inputs, length)
        # Incremental: the cache keeps a row per image, so the inputs travel in the width axis.
        kernel = self.hidden.kernel_size[0]
        by_image = normalized.permute(0, 2, 1, 3).reshape(batch_size, length, num_inputs * width)
        context = step_cache.causal_context(by_image, kernel)  # (batch, inputs * width, kernel - 1 + length)
        context = context.reshape(batch_size, num_inputs, width, -1).reshape(batch_size * num_inputs, width, -1)
        hidden = F.leaky_relu(self.hidden(context), self.slope)  # (batch * inputs, hidden, length)
        hidden = hidden.reshape(batch_size, num_inputs * hidden.shape[1], length).transpose(1, 2)
        context = step_cache.causal_context(hidden, kernel).reshape(batch_size * num_inputs, -1, kernel - 1 + length)
        return self.score(context).reshape(batch_size, num_inputs, length)


COMBINES = ("add", "mean", "linear", "conv")


def build_combine(kind: str, width: int, hidden_size: int, kernel_size: int, slope: float) -> nn.Module:
    if kind == "add":
        return AddCombine()
    if kind == "mean":
        return MeanCombine()
    if kind == "linear":
        return LinearAttentionCombine(width, hidden_size, slope)
    if kind == "conv":
        return ConvAttentionCombine(width, hidden_size, kernel_size, slope)
    raise ValueError(f"Unknown combine {kind!r}; choose from {', '.join(COMBINES)}.")
