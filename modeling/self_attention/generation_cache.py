# Copied from modeling/common/generation_cache.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""The generation cache under the name the installed transformers gives it.

transformers 5.24 renamed the cache that `generate()` threads through a model from `past_key_values` to
`cache`: `generate()` passes `cache=` to `forward` and reads `output.cache`, transformers' own modules take
`cache=` (the old name still works there, with a deprecation warning, until 5.40), and TrOCR's positional
embeddings take `cache_length` for `past_key_values_length`. Before 5.24 only `past_key_values` exists. A
model that takes its cache under one name only is, under the other, handed none at every step: it decodes
each new token as if it were the first, and its output goes wrong without an error.

textrec's models take the cache under either name (`resolve_cache`), return it in the output field the
installed transformers reads (`CACHE_NAME`), and pass it to transformers' modules under that name, so that
they and the code exported with them run on both sides of the rename.
"""

from transformers.cache_utils import Cache
from transformers.modeling_outputs import Seq2SeqLMOutput

CACHE_NAME = "cache" if "cache" in Seq2SeqLMOutput.__dataclass_fields__ else "past_key_values"
"""The keyword of the generation cache in transformers' `forward` arguments and output fields."""


def resolve_cache(past_key_values: Cache | None, cache: Cache | None) -> Cache | None:
    """The cache a caller passed, as `past_key_values` (transformers before 5.24) or as `cache` (5.24 on)."""
    if past_key_values is not None and cache is not None and past_key_values is not cache:
        raise ValueError("Pass the generation cache once, as `cache` or as `past_key_values`, not both.")
    return cache if cache is not None else past_key_values
