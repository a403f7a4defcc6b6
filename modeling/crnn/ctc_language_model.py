"""A character n-gram kept in a CTC recognizer's weights, and its batch reading by prefix beam search.

The search and the tables' format are in `ctc_beam_search.py`; here the tables are buffers of the model (saved in its
safetensors, their sizes in its config), and `ctc_beam_decode` reads a batch of CTC logits in `ctc_greedy_decode`'s
output format.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .ctc_beam_search import CharacterNGramTables, ctc_prefix_beam_search


class CharacterNGramModel(nn.Module):
    """A character n-gram language model over a recognizer's vocabulary, kept as buffers.

    Args:
        order: the n of the n-grams (a history holds up to `order - 1` tokens).
        vocab_size: the recognizer's vocabulary size; `vocab_size` itself stands for the line's start.
        num_ngrams, num_histories: the sizes of the tables (from the model's config, so that a saved model's
            buffers load into tensors of their shape).
    """

    def __init__(self, order: int, vocab_size: int, num_ngrams: int, num_histories: int):
        super().__init__()
        self.order = order
        self.vocab_size = vocab_size
        self.register_buffer("ngram_keys", torch.zeros(num_ngrams, dtype=torch.int64))
        self.register_buffer("ngram_weights", torch.zeros(num_ngrams))
        self.register_buffer("history_keys", torch.zeros(num_histories, dtype=torch.int64))
        self.register_buffer("history_weights", torch.zeros(num_histories))
        self._tables = None

    def tables(self) -> CharacterNGramTables:
        """The buffers as tables to look up (made once, again after the buffers change)."""
        if self._tables is None:
            self._tables = CharacterNGramTables(
                self.order, self.vocab_size, self.ngram_keys.cpu().numpy(), self.ngram_weights.float().cpu().numpy(),
                self.history_keys.cpu().numpy(), self.history_weights.float().cpu().numpy())
        return self._tables

    def _load_from_state_dict(self, *args, **kwargs):
        self._tables = None
        return super()._load_from_state_dict(*args, **kwargs)

    def _apply(self, fn, *args, **kwargs):
        self._tables = None
        return super()._apply(fn, *args, **kwargs)


def ctc_beam_decode(
    logits: torch.Tensor,
    blank_token_id: int,
    eos_token_id: int,
    num_beams: int,
    source_mask: torch.Tensor | None = None,
    language_model: CharacterNGramModel | None = None,
    language_model_weight: float = 0.0,
    length_bonus: float = 0.0,
    skip_token_ids: frozenset[int] = frozenset(),
    line_break_token_ids: frozenset[int] = frozenset(),
    best_path_under: float = 0.0,
) -> torch.LongTensor:
    """`ctc_prefix_beam_search` over a batch, in `ctc_greedy_decode`'s output format.

    Args:
        logits: `(batch, source_length, vocab_size)` from `CTCHead`.
        source_mask: `(batch, source_length)`, 1 on outputs of real pixels (which come first).
        best_path_under: a line whose best path reads at least a character, at a character confidence
            (`best_path_character_confidence`) under this, is read by its best path: frames so unsure are noise,
            a stamp or a smudge, which the search reads no better and where it costs most (each frame gives many
            tokens their chance). 0.0 (the default) searches every line.

    Returns:
        `(batch, longest + 1)` token ids: each line's tokens, eos, then blank (= pad) ids.
    """
    log_probs = logits.float().log_softmax(dim=-1).cpu().numpy()
    tables = language_model.tables() if language_model is not None else None
    lengths = source_mask.long().sum(dim=1).tolist() if source_mask is not None else [logits.shape[1]] * len(logits)
    readings = []
    for row, length in zip(log_probs, lengths):
        best_path, confidence = (best_path_character_confidence(row[:length], blank_token_id) if best_path_under
                                 else ([], 0.0))
        if best_path and confidence < best_path_under:
            readings.append(best_path)
        else:
            readings.append(ctc_prefix_beam_search(row[:length], blank_token_id, num_beams, tables,
                                                   language_model_weight, length_bonus, eos_token_id, skip_token_ids,
                                                   line_break_token_ids))
    output = torch.full((len(readings), max(map(len, readings), default=0) + 1), blank_token_id, dtype=torch.long,
                        device=logits.device)
    for row, tokens in enumerate(readings):
        output[row, :len(tokens)] = torch.tensor(tokens, dtype=torch.long)
        output[row, len(tokens)] = eos_token_id
    return output


def best_path_character_confidence(log_probs: np.ndarray, blank_token_id: int) -> tuple[list[int], float]:
    """A line's CTC best path (`(frames, vocab_size)` log-probabilities: each frame's most probable token, repeats
    merged, blanks dropped) and its character confidence: the geometric mean over its characters of each one's
    highest probability in its frames (0.0 for a path of no character), as a page reader weighs a reading."""
    best, best_log_probs = log_probs.argmax(axis=1), log_probs.max(axis=1)
    starts = np.flatnonzero(np.r_[True, best[1:] != best[:-1]]) if len(best) else np.zeros(0, dtype=np.int64)
    characters = starts[best[starts] != blank_token_id]
    if not len(characters):
        return [], 0.0
    run_highest = np.maximum.reduceat(best_log_probs, starts)[best[starts] != blank_token_id]
    return best[characters].tolist(), float(np.exp(run_highest.mean()))
