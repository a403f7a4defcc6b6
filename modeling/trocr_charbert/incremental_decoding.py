# Copied from modeling/charbert/incremental_decoding.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Incremental decoding of the corrector: what a decoding step keeps so that it reads only its new tokens.

Every part of the corrector is causal, and each sees a bounded or a cacheable past:

- the transforms' convolutions, CharBERT's fusion convolutions and the `conv` combine read the last
  `kernel_size - 1` positions of their input before the new ones (their "tails");
- CharBERT's causal self-attention reads the keys and values of every earlier position;
- CharBERT's per-token character GRUs, the feed-forward layers and the other combines read one position.

So a step that keeps the convolutions' inputs and CharBERT's keys and values costs its new tokens only,
instead of re-reading the whole prefix. They are kept as extra layers of the generation cache's
self-attention `DynamicCache`, after TrOCR's own layers, so that beam search reorders them with the rest:

    [TrOCR layers] [CharBERT token-stream attention] [CharBERT character-stream attention] [convolution inputs]

The convolution inputs are taken in a fixed order within a step (the order the modules run), each call to
`causal_context` using the next layer.
"""

import torch
from torch.nn import functional as F
from transformers.cache_utils import DynamicCache


class LayerOffsetCache:
    """A view of `cache` whose layer `i` is the cache's layer `offset + i`: CharBERT's attention layers index
    their cache from 0, and this places them after the layers before them."""

    def __init__(self, cache: DynamicCache, offset: int):
        self.cache = cache
        self.offset = offset

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *args, **kwargs):
        return self.cache.update(key_states, value_states, layer_idx + self.offset, *args, **kwargs)


class CorrectorStepCache:
    """The corrector's state inside a decoding step (see the module docstring).

    Args:
        cache: the generation cache's self-attention `DynamicCache`.
        first_layer: the first cache layer after TrOCR's.
        charbert_layers: CharBERT's transformer layers.
        past_length: positions read in earlier steps.
    """

    def __init__(self, cache: DynamicCache, first_layer: int, charbert_layers: int, past_length: int):
        self.cache = cache
        self.past_length = past_length
        self.token_attention = LayerOffsetCache(cache, first_layer)
        self.char_attention = LayerOffsetCache(cache, first_layer + charbert_layers)
        self.next_layer = first_layer + 2 * charbert_layers

    def causal_context(self, new_states: torch.Tensor, kernel_size: int) -> torch.Tensor:
        """What a causal convolution of `kernel_size` reads to give the new positions' outputs.

        Args:
            new_states: `(batch, new, width)` the convolution's input at the new positions.

        Returns:
            `(batch, width, kernel_size - 1 + new)`: its input at the last `kernel_size - 1` earlier positions
            (zeros before the first, as the left padding of a full pass) and at the new ones.
        """
        layer, self.next_layer = self.next_layer, self.next_layer + 1
        history, _ = self.cache.update(new_states[:, None], new_states[:, None], layer)
        context = history[:, 0, -(new_states.shape[1] + kernel_size - 1):].transpose(1, 2)
        return F.pad(context, (new_states.shape[1] + kernel_size - 1 - context.shape[-1], 0))

    def attention_mask(self, new_length: int, batch_size: int, dtype: torch.dtype, device: torch.device,
                       additive: bool) -> torch.Tensor:
        """`(batch, 1, new, past + new)`: new position i reads every earlier position and the new ones up to
        itself. Additive (0 or the dtype's minimum, for eager attention) or boolean (True reads, for sdpa)."""
        keys = torch.arange(self.past_length + new_length, device=device)
        queries = self.past_length + torch.arange(new_length, device=device)
        allowed = (keys[None, :] <= queries[:, None]).expand(batch_size, 1, new_length, -1)
        if not additive:
            return allowed
        return torch.zeros(allowed.shape, dtype=dtype, device=device).masked_fill(~allowed, torch.finfo(dtype).min)
