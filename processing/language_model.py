"""Character n-gram language models for CTC recognizers: counted from texts, attached to a model.

A recognizer with a CTC head reads by prefix beam search fused with a character n-gram
(`modeling/crnn/ctc_beam_search.py`, where the search and the tables' format are defined). This module counts the
n-grams of a text corpus in the recognizer's vocabulary and gives the model the tables; the decoding settings
(`num_beams`, `language_model_weight`, `length_bonus`, `line_break_token_ids`) go into its generation config, so that every path that reads
with the model (`generate()`, the pipeline, `textrec-recognize`, a saved folder loaded without textrec) reads alike.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import numpy as np
import torch

from ..modeling.crnn.ctc_beam_search import key_base
from ..modeling.crnn.ctc_language_model import CharacterNGramModel
from .tokenization_char import SPECIAL_TOKENS, characters_of

logger = logging.getLogger(__name__)

# Chosen with the third `crnn-handwriting` on IAM-OnDB's development lines, against best path's 19.02% CER: a 6-gram
# 12.80% (a 7-gram no better, min_count 3 13.18%), the weight 0.5 with the bonus 2 (0.5 and 1.5: 13.06%; 0.6 and 2:
# 13.30%), 10 beams.
LANGUAGE_MODEL_ORDER = 6
"""The n of the character n-grams attached by default."""
MIN_COUNT = 2
"""N-grams of three tokens or more seen fewer times are left out by default (a third of the tables, 0.4 points)."""
NUM_BEAMS = 10
LANGUAGE_MODEL_WEIGHT = 0.5
LENGTH_BONUS = 2.0


def _line_token_ids(texts: Iterable[str], vocabulary: dict[str, int]) -> list[list[int]]:
    """Each text as token ids (its characters as the tokenizer splits them: `characters_of`), characters outside the
    vocabulary left out."""
    return [[vocabulary[character] for character in characters_of(text) if character in vocabulary] for text in texts]


def count_character_ngrams(
    texts: Iterable[str],
    vocabulary: dict[str, int],
    vocab_size: int,
    eos_token_id: int,
    order: int = LANGUAGE_MODEL_ORDER,
    min_count: int = MIN_COUNT,
) -> dict[str, np.ndarray]:
    """The Witten-Bell tables of a character n-gram counted from `texts` (see `ctc_language_model`'s docstring).

    Each text is one line: its histories start with the start id (`vocab_size`) and it ends with `eos_token_id`.

    Args:
        vocabulary: the tokenizer's `{character: id}`; other characters are left out of the texts.
        order: the n (a history holds up to `order - 1` tokens).
        min_count: n-grams of three tokens or more seen fewer times, and histories of two or more, are left out
            (the model backs off to shorter ones): the tables' size against a little accuracy.

    Returns:
        `ngram_keys`, `ngram_weights`, `history_keys`, `history_weights`, sorted by key.
    """
    if order < 1:
        raise ValueError(f"order must be at least 1, got {order}")
    base = key_base(vocab_size)
    if base ** order >= 2**63:
        raise ValueError(f"order {order} is too long for int64 keys with {vocab_size} tokens")
    lines = [ids + [eos_token_id] for ids in _line_token_ids(texts, vocabulary)]
    if not lines:
        raise ValueError("no text to count n-grams from")
    start = order - 1
    padded = np.concatenate([np.array([vocab_size] * start + ids, dtype=np.int64) for ids in lines])
    line_starts = np.cumsum([0] + [start + len(ids) for ids in lines[:-1]])
    positions = np.concatenate([np.arange(first + start, first + start + len(ids)) for first, ids in zip(line_starts, lines)])
    tables: dict[str, list[np.ndarray]] = {name: [] for name in ("ngram_keys", "ngram_weights", "history_keys",
                                                                  "history_weights")}
    for history_length in range(order):
        history = np.zeros(len(positions), dtype=np.int64)
        for offset in range(history_length, 0, -1):
            history = history * base + padded[positions - offset] + 1
        ngram = history * base + padded[positions] + 1
        ngram_keys, ngram_counts = np.unique(ngram, return_counts=True)
        history_of_ngram = ngram_keys // base
        history_keys, history_index, history_types = np.unique(history_of_ngram, return_inverse=True, return_counts=True)
        history_counts = np.bincount(history_index, weights=ngram_counts)
        denominators = history_counts + history_types
        ngram_weights = ngram_counts / denominators[history_index]
        history_weights = history_types / denominators
        if history_length >= 2:
            kept_ngrams = ngram_counts >= min_count
            ngram_keys, ngram_weights = ngram_keys[kept_ngrams], ngram_weights[kept_ngrams]
        if history_length >= 2:
            kept_histories = history_counts >= min_count
            history_keys, history_weights = history_keys[kept_histories], history_weights[kept_histories]
        tables["ngram_keys"].append(ngram_keys)
        tables["ngram_weights"].append(ngram_weights)
        tables["history_keys"].append(history_keys)
        tables["history_weights"].append(history_weights)
    result = {}
    for keys_name, weights_name in (("ngram_keys", "ngram_weights"), ("history_keys", "history_weights")):
        keys, weights = np.concatenate(tables[keys_name]), np.concatenate(tables[weights_name])
        order_of_keys = np.argsort(keys)
        result[keys_name], result[weights_name] = keys[order_of_keys], weights[order_of_keys].astype(np.float32)
    return result


def attach_language_model(
    model,
    tokenizer,
    texts: Iterable[str],
    order: int = LANGUAGE_MODEL_ORDER,
    min_count: int = MIN_COUNT,
    num_beams: int = NUM_BEAMS,
    language_model_weight: float = LANGUAGE_MODEL_WEIGHT,
    length_bonus: float = LENGTH_BONUS,
    line_break_marks: Iterable[str] = (),
) -> None:
    """Give a CTC recognizer (one whose config has `language_model_order`) a character n-gram counted from `texts`
    and read by prefix beam search with it: the tables become the model's `language_model` buffers (saved in its
    safetensors), their sizes its config's, the search settings its generation config's. `line_break_marks`: the
    characters a line whose last word breaks ends in (Fraktur's double hyphen), which the n-gram does not score
    there (`ctc_beam_search`; their ids the generation config's `line_break_token_ids`)."""
    if not hasattr(model.config, "language_model_order"):
        raise ValueError(f"{type(model).__name__} reads no language model (its config has no language_model_order)")
    config = model.config
    vocabulary = {token: index for token, index in tokenizer.get_vocab().items() if token not in SPECIAL_TOKENS}
    missing = [mark for mark in line_break_marks if mark not in vocabulary]
    if missing:
        raise ValueError(f"line_break_marks {missing} are not in the model's vocabulary")
    tables = count_character_ngrams(texts, vocabulary, config.vocab_size, config.eos_token_id, order, min_count)
    config.language_model_order = order
    config.language_model_ngrams = len(tables["ngram_keys"])
    config.language_model_histories = len(tables["history_keys"])
    language_model = CharacterNGramModel(order, config.vocab_size, config.language_model_ngrams,
                                         config.language_model_histories)
    language_model.load_state_dict({name: torch.from_numpy(array) for name, array in tables.items()})
    model.language_model = language_model.to(next(model.parameters()).device)
    model.generation_config.num_beams = num_beams
    model.generation_config.language_model_weight = language_model_weight
    model.generation_config.length_bonus = length_bonus
    model.generation_config.line_break_token_ids = [vocabulary[mark] for mark in line_break_marks]
    logger.info("attached a %d-gram character model: %d n-grams, %d histories", order, config.language_model_ngrams,
                config.language_model_histories)
