"""Reading a CTC head's output with a character language model: prefix beam search with shallow fusion.

CTC best path takes each frame's most probable token; it cannot prefer "the" to "tbe" when the image hesitates.
Prefix beam search (Hannun et al., "First-Pass Large Vocabulary Continuous Speech Recognition using
Bi-Directional Recurrent DNNs", 2014) keeps the `num_beams` most probable prefixes, each with the probability of
the frames read so far ending in a blank and in its last character, and scores a prefix by

    log P_ctc(prefix | frames) + language_model_weight * log P_lm(prefix) + length_bonus * len(prefix)

(the bonus offsets the language model's cost of each character, which would otherwise favour short readings). The
end of the line is scored by the language model too, but for an empty reading of frames whose best path reads
nothing: an empty line is never in the language model's texts, and whether an image holds text is then the frames' to
say.

A word broken at the line's end ends the line in a mark (Fraktur's double hyphen) that the language model's texts,
running text, never end a line in: it would take the mark for improbable. A `line_break_token_ids` mark read in the
line's last `LINE_BREAK_FRAMES` of frames is therefore scored by the frames alone where it ends the line: its
language model cost is kept aside, paid if the line goes on after it, and the line's end after it is not scored.

The language model is a character n-gram with Witten-Bell interpolation (Witten & Bell 1991; Chen & Goodman
1999): for a history h of up to `order - 1` tokens, h' that history without its first token,

    P(c | h) = C(h c) / (C(h) + T(h)) + T(h) / (C(h) + T(h)) * P(c | h'),

C counting the training text's n-grams and T(h) the kinds of tokens seen after h, from the uniform distribution
over the vocabulary up. It is kept as four arrays: the n-grams' first terms (`ngram_keys` -> `ngram_weights`) and the histories' second
factors (`history_keys` -> `history_weights`), keys being token sequences written as numbers in base
`vocab_size + 2` (a token id plus one a digit, so that sequences of different lengths never share a key). The line's
start pads every history with the id `vocab_size`. The tables are counted from texts by
`textrec.processing.language_model`; a model keeps them as buffers (`ctc_language_model.py`).

This file needs NumPy alone: the ONNX reader (`textrec_onnx.py`) reads with it too, where torch is not installed.
"""


from __future__ import annotations

import heapq
import math

import numpy as np


def key_base(vocab_size: int) -> int:
    """The base of the tables' keys: a digit for each token id plus one and for the line's start (`vocab_size`)."""
    return vocab_size + 2


def sequence_key(token_ids, base: int) -> int:
    """The key of a token sequence: its ids plus one as the digits of a number in base `base`."""
    key = 0
    for token_id in token_ids:
        key = key * base + token_id + 1
    return key


class CharacterNGramTables:
    """A character n-gram's tables (see the module docstring), looked up token by token.

    Args:
        order: the n of the n-grams (a history holds up to `order - 1` tokens).
        vocab_size: the recognizer's vocabulary size; `vocab_size` itself stands for the line's start.
        ngram_keys, ngram_weights, history_keys, history_weights: the tables.
    """

    def __init__(self, order: int, vocab_size: int, ngram_keys, ngram_weights, history_keys, history_weights):
        self.order = order
        self.vocab_size = vocab_size
        self.base = key_base(vocab_size)
        self.ngrams = dict(zip(np.asarray(ngram_keys).tolist(), np.asarray(ngram_weights, dtype=np.float64).tolist()))
        self.histories = dict(zip(np.asarray(history_keys).tolist(),
                                  np.asarray(history_weights, dtype=np.float64).tolist()))
        self._cache: dict[tuple[int, ...], dict[int, float]] = {}  # history -> token -> log P

    def log_probability(self, history: tuple[int, ...], token_id: int) -> float:
        """log P(token | history); `history` holds the last `order - 1` tokens read, the start id `vocab_size`
        before the line's first (the end-of-sequence id as the token scores the line's end)."""
        row = self.cached_row(history)
        cached = row.get(token_id)
        if cached is not None:
            return cached
        probability = 1.0 / self.vocab_size
        # The context's key grows a digit at its front as the context grows by a token on its left.
        base, context_key, place = self.base, 0, 1
        for length in range(len(history) + 1):
            if length:
                context_key += (history[-length] + 1) * place
                place *= base
            backoff = self.histories.get(context_key)
            if backoff is None:
                break  # a longer history ending in an unseen one is unseen too
            probability = self.ngrams.get(context_key * base + token_id + 1, 0.0) + backoff * probability
        value = row[token_id] = math.log(max(probability, 1e-30))
        return value

    def cached_row(self, history: tuple[int, ...]) -> dict[int, float]:
        """The log-probabilities after `history` computed so far (token -> log P): the search looks them up here
        before it calls `log_probability` (a call costs more than the lookup)."""
        row = self._cache.get(history)
        if row is None:
            row = self._cache[history] = {}
        return row

    def start_history(self) -> tuple[int, ...]:
        return (self.vocab_size,) * (self.order - 1)

    def next_history(self, history: tuple[int, ...], token_id: int) -> tuple[int, ...]:
        return (*history, token_id)[1:] if self.order > 1 else ()


def _log_add(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))


CANDIDATE_LOG_PROBABILITY = math.log(1e-3)
"""A frame extends prefixes only with the tokens it gives at least this probability, and keeps a prefix unextended
through its blank only where it gives the blank that much (the others change no beam but cost time: on the development
sets 1e-4 read the same text at half the speed; the blank pruned so read 1 of 1,000 lines otherwise, 20% faster)."""


LINE_BREAK_FRAMES = 0.25
"""The share of a line's frames, at its end, in which a line-break mark's language model cost is kept aside (chosen
on the development historic print, which ends 37 of its 285 lines in the double hyphen: 0.15 and 0.25 read alike,
every frame of the line read receipts and forms 0.01 points worse)."""


def ctc_prefix_beam_search(
    log_probs: np.ndarray,
    blank_token_id: int,
    num_beams: int,
    language_model: CharacterNGramTables | None = None,
    language_model_weight: float = 0.0,
    length_bonus: float = 0.0,
    eos_token_id: int | None = None,
    skip_token_ids: frozenset[int] = frozenset(),
    line_break_token_ids: frozenset[int] = frozenset(),
) -> list[int]:
    """The token ids that prefix beam search reads from one line's CTC log-probabilities.

    Args:
        log_probs: `(frames, vocab_size)` the line's real frames (float; log-softmax of the CTC head's logits).
        blank_token_id: the id standing for the blank.
        num_beams: prefixes kept after each frame.
        language_model, language_model_weight, length_bonus: the fusion (see the module docstring); without a
            language model only the length bonus is added.
        eos_token_id: the token the language model scores the line's end with.
        skip_token_ids: tokens never read (special tokens other than the blank).
        line_break_token_ids: marks ending a line whose last word breaks (see the module docstring).
    """
    fused = language_model is not None and language_model_weight != 0.0
    # Prefixes are nodes of a tree of the tokens read (a node: its parent and last token), so that a prefix is looked up
    # by its node's number rather than hashed whole at every frame. beams: node -> [log P(frames, ending in blank),
    # log P(frames, ending in its last token), fusion score, history, the language model cost of its last token kept
    # aside (a line-break mark's) or None]
    parents, last_tokens, children = [-1], [-1], {}
    start = language_model.start_history() if fused else ()
    beams: dict[int, list] = {0: [0.0, -math.inf, 0.0, start, None]}
    is_candidate = log_probs >= CANDIDATE_LOG_PROBABILITY
    is_candidate[:, [blank_token_id, *skip_token_ids]] = False
    frames, tokens = np.nonzero(is_candidate)
    candidates_of = {}  # frame -> [(token, log P)], for the frames where a token other than the blank is a candidate
    for frame, token, probability in zip(frames.tolist(), tokens.tolist(), log_probs[frames, tokens].tolist()):
        candidates_of.setdefault(frame, []).append((token, probability))
    blanks = log_probs[:, blank_token_id].astype(np.float64)
    line_break_from = len(log_probs) - LINE_BREAK_FRAMES * len(log_probs)
    blank_run_start = 0  # frames of a blank only (most frames) are taken together: every prefix ends in a blank
    for index in [*sorted(candidates_of), len(log_probs)]:
        if index > blank_run_start:  # the blank-only frames before this one: the ranking unchanged
            through_blanks = float(blanks[blank_run_start:index].sum())
            beams = {node: [_log_add(ends_blank, ends_token) + through_blanks, -math.inf, fusion, history, aside]
                     for node, (ends_blank, ends_token, fusion, history, aside) in beams.items()}
        blank_run_start = index + 1
        if index == len(log_probs):
            break
        candidates = candidates_of[index]
        blank = float(blanks[index])
        blank_is_candidate = blank >= CANDIDATE_LOG_PROBABILITY
        line_break_ids = line_break_token_ids if fused and index >= line_break_from else frozenset()
        extended: dict[int, list] = {}
        for node, (ends_blank, ends_token, fusion, history, aside) in beams.items():
            total = _log_add(ends_blank, ends_token)
            if blank_is_candidate:
                entry = extended.setdefault(node, [-math.inf, -math.inf, fusion, history, aside])
                entry[0] = _log_add(entry[0], total + blank)
            last = last_tokens[node]
            known_costs = language_model.cached_row(history) if fused else None
            for token, probability in candidates:
                if token == last:  # the same token again without a blank between: the same character
                    entry = extended.setdefault(node, [-math.inf, -math.inf, fusion, history, aside])
                    entry[1] = _log_add(entry[1], ends_token + probability)
                    reaching = ends_blank + probability  # after a blank: the character twice
                else:
                    reaching = total + probability
                longer = children.get((node, token))
                if longer is None:
                    longer = children[node, token] = len(parents)
                    parents.append(node)
                    last_tokens.append(token)
                target = extended.get(longer)
                if target is None:
                    score = fusion + length_bonus + (aside or 0.0)  # a line-break mark the line goes on after pays
                    next_history, next_aside = history, None
                    if fused:
                        cost = known_costs.get(token)
                        if cost is None:
                            cost = language_model.log_probability(history, token)
                        cost *= language_model_weight
                        if token in line_break_ids:
                            next_aside = cost
                        else:
                            score += cost
                        next_history = language_model.next_history(history, token)
                    target = extended[longer] = [-math.inf, -math.inf, score, next_history, next_aside]
                target[1] = _log_add(target[1], reaching)
        beams = dict(heapq.nlargest(num_beams, extended.items(),
                                    key=lambda item: _log_add(item[1][0], item[1][1]) + item[1][2]))

    frames_read_text = bool(np.isin(log_probs.argmax(axis=1), [blank_token_id, *skip_token_ids], invert=True).any())

    def final_score(item) -> float:
        (ends_blank, ends_token, fusion, history, aside) = item[1]
        score = _log_add(ends_blank, ends_token) + fusion
        # A line ending in a break mark: its end unscored. Nor is an empty reading's where no frame's most probable
        # token is a character: the language model's texts never hold an empty line, and whether an image holds text
        # at all is then the frames' to say (a blank image read "I").
        if fused and eos_token_id is not None and aside is None and (item[0] or frames_read_text):
            score += language_model_weight * language_model.log_probability(history, eos_token_id)
        return score

    node, read = max(beams.items(), key=final_score)[0], []
    while node:
        read.append(last_tokens[node])
        node = parents[node]
    return read[::-1]
