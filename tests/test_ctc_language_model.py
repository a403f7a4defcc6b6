"""Prefix beam search with a character n-gram (`ctc_beam_search.py`, `textrec.processing.language_model`): the
Witten-Bell tables counted from texts, and the search (a CRNN reading with them: `test_one_reading.py`)."""

import math

import numpy as np
import pytest

from textrec.modeling.crnn.ctc_beam_search import CharacterNGramTables, ctc_prefix_beam_search
from textrec.processing.language_model import count_character_ngrams

BLANK, EOS, VOCAB_SIZE = 0, 2, 6
VOCABULARY = {"a": 3, "b": 4, "c": 5}


def language_model(texts, order, min_count=1) -> CharacterNGramTables:
    tables = count_character_ngrams(texts, VOCABULARY, VOCAB_SIZE, EOS, order=order, min_count=min_count)
    return CharacterNGramTables(order, VOCAB_SIZE, **tables)


def test_witten_bell_probabilities_are_the_interpolated_counts_and_sum_to_one():
    model = language_model(["abab", "abc"], order=2)
    # After a: b three times (one kind); the unigrams: a 3, b 3, c 1, the end 2 (four kinds, 9 tokens).
    unigram_b = 3 / 13 + 4 / 13 / VOCAB_SIZE
    assert math.exp(model.log_probability((VOCABULARY["a"],), VOCABULARY["b"])) == pytest.approx(3 / 4 + unigram_b / 4)
    trigram = language_model(["abab", "abc", "cab", "bb"], order=3)
    start = trigram.start_history()
    for history in (start, (start[0], 3), (3, 4), (5, 5), (4, 4)):
        total = sum(math.exp(trigram.log_probability(history, token)) for token in range(VOCAB_SIZE))
        assert total == pytest.approx(1.0, abs=1e-6), history
    # unseen histories (cc, ac) back off to the shorter one they end with (c): they predict alike
    assert trigram.log_probability((5, 5), 3) == trigram.log_probability((3, 5), 3) != trigram.log_probability((4, 5), 3)


def test_pruned_ngrams_back_off_and_bad_input_is_refused():
    full, pruned = language_model(["abc"] * 3 + ["abb"], order=3), language_model(["abc"] * 3 + ["abb"], 3, min_count=2)
    assert len(pruned.ngrams) < len(full.ngrams)
    assert pruned.log_probability((3, 4), 5) > pruned.log_probability((3, 4), 4)  # seen three times, and once
    with pytest.raises(ValueError, match="order must be at least 1"):
        count_character_ngrams(["ab"], VOCABULARY, VOCAB_SIZE, EOS, order=0)
    with pytest.raises(ValueError, match="no text"):
        count_character_ngrams([], VOCABULARY, VOCAB_SIZE, EOS)


def test_a_letter_with_its_combining_mark_is_counted_as_one_token():
    """An old umlaut (u and U+0364) is one token of the vocabulary, as the tokenizer splits it (`characters_of`): the
    n-gram counts it as one, and a mark without its letter in the vocabulary is left out with its letter."""
    vocabulary = {"a": 3, "b": 4, "u\u0364": 5}
    tables = count_character_ngrams(["bu\u0364b", "bu\u0364bb", "ab"], vocabulary, VOCAB_SIZE, EOS, order=2, min_count=1)
    model = CharacterNGramTables(2, VOCAB_SIZE, **tables)
    # b then uͤ: 2 of b's 6 continuations (3 kinds), uͤ 2 of 12 tokens (4 kinds); never after a
    assert math.exp(model.log_probability((4,), 5)) == pytest.approx(2 / 9 + 3 / 9 * (2 / 16 + 4 / 16 / VOCAB_SIZE))
    assert model.log_probability((3,), 5) < model.log_probability((4,), 5)
    plain = count_character_ngrams(["bu\u0364b", "bu\u0364bb", "ab"], VOCABULARY, VOCAB_SIZE, EOS, order=2, min_count=1)
    dropped = count_character_ngrams(["bb", "bbb", "ab"], VOCABULARY, VOCAB_SIZE, EOS, order=2, min_count=1)
    assert all(np.array_equal(plain[name], dropped[name]) for name in plain)


def frames(*rows) -> np.ndarray:
    """Log-probabilities of frames given as {token: probability}, the rest of each frame's mass on the blank."""
    log_probs = np.full((len(rows), VOCAB_SIZE), math.log(1e-9))
    for frame, row in enumerate(rows):
        for token, probability in {BLANK: 1 - sum(row.values()), **row}.items():
            log_probs[frame, token] = math.log(probability)
    return log_probs


def test_beam_search_finds_the_most_probable_reading_where_best_path_does_not():
    """Two frames of a 0.4 each: the best path is two blanks (0.36), but "a" has 0.4*0.4 + 2*0.4*0.6 = 0.64."""
    log_probs = frames({3: 0.4}, {3: 0.4})
    assert log_probs.argmax(axis=1).tolist() == [BLANK, BLANK]
    assert ctc_prefix_beam_search(log_probs, BLANK, num_beams=4) == [3]
    assert ctc_prefix_beam_search(frames({3: 0.9}, {}, {3: 0.9}), BLANK, num_beams=4) == [3, 3]  # a blank between


def test_the_language_model_reads_what_its_texts_make_likely():
    """After a, the texts always have b: a frame hesitating between a and b reads b with the model, a without."""
    model = language_model(["ab"] * 20, order=2)
    hesitant = frames({3: 0.9}, {}, {3: 0.5, 4: 0.45})
    assert ctc_prefix_beam_search(hesitant, BLANK, 4) == [3, 3]
    assert ctc_prefix_beam_search(hesitant, BLANK, 4, model, language_model_weight=1.0, eos_token_id=EOS) == [3, 4]
    assert ctc_prefix_beam_search(hesitant, BLANK, 4, model, language_model_weight=0.0) == [3, 3]


def test_a_line_break_mark_ending_the_line_is_left_to_the_frames():
    """The texts never hold c (a line-break mark, as running text never ends a line in Fraktur's double hyphen): read
    at the line's end it is what the frames say (0.7) where it is a `line_break_token_ids` mark, and dropped for the
    n-gram's sake where it is not; in the middle of the line the n-gram scores it as any other character."""
    model = language_model(["ab"] * 20, order=2)
    search = dict(language_model=model, language_model_weight=1.0, eos_token_id=EOS)
    ending = frames({3: 0.9}, {}, {4: 0.9}, {5: 0.7})
    assert ctc_prefix_beam_search(ending, BLANK, 4, **search) == [3, 4]
    assert ctc_prefix_beam_search(ending, BLANK, 4, **search, line_break_token_ids=frozenset({5})) == [3, 4, 5]
    inside = frames({3: 0.9}, {5: 0.7}, {4: 0.9}, {}, {}, {}, {}, {})
    assert ctc_prefix_beam_search(inside, BLANK, 4) == [3, 5, 4]
    assert ctc_prefix_beam_search(inside, BLANK, 4, **search, line_break_token_ids=frozenset({5})) == [3, 4]


def test_frames_of_blank_read_nothing_whatever_the_language_model_makes_of_an_empty_line():
    """The texts never hold an empty line, so the n-gram scores one's end as improbable: a blank image read "I" or "1"
    by the released `crnn-lines` before its end was left unscored. Frames that hesitate over a character, though,
    still read it where the n-gram and the bonus make it likely."""
    model = language_model(["ab", "a", "ba"] * 10, order=2)
    search = dict(language_model=model, language_model_weight=1.0, eos_token_id=EOS, length_bonus=2.0)
    blank = frames({}, {3: 0.01}, {}, {}, {4: 0.01})
    assert model.log_probability(model.start_history(), EOS) < math.log(0.05)
    assert ctc_prefix_beam_search(blank, BLANK, 4, **search) == []
    assert ctc_prefix_beam_search(frames({}, {3: 0.3}, {}), BLANK, 4, **search) == [3]
    # where the frames' best path reads a character, the n-gram's view of an empty line stands (left unscored there
    # too, faint real scene words and receipt lines read nothing: scene words 14.32% -> 14.56% CER)
    assert ctc_prefix_beam_search(frames({}, {4: 0.6}, {}), BLANK, 4, **{**search, "length_bonus": 1.0}) == [4]


def test_a_frame_all_but_certain_of_a_character_keeps_it_however_unlikely_the_language_model_finds_it():
    """A frame giving its blank less than `CANDIDATE_LOG_PROBABILITY` keeps no prefix through the blank: the character
    it is sure of is read even where the n-gram, heavily weighted, would rather drop it; with a blank of 1% it is
    dropped."""
    model = language_model(["b"] * 20, order=2)
    search = dict(language_model=model, language_model_weight=8.0, eos_token_id=EOS)
    assert ctc_prefix_beam_search(frames({4: 0.9}, {}, {3: 0.9999}, {}), BLANK, 4, **search) == [4, 3]
    assert ctc_prefix_beam_search(frames({4: 0.9}, {}, {3: 0.99}, {}), BLANK, 4, **search) == [4]


def test_a_line_read_unsurely_by_its_best_path_is_not_searched_where_asked():
    """`ctc_beam_decode(best_path_under=...)`: the hesitant line's best path reads "aa" at a character confidence of
    sqrt(0.9 * 0.5) = 0.67; searched with the n-gram it reads "ab". Under a floor above 0.67 it reads "aa" (its best
    path), under one below it "ab"; a line whose best path reads nothing is searched whatever the floor."""
    import torch

    from textrec.modeling.crnn.ctc_language_model import (CharacterNGramModel, best_path_character_confidence,
                                                           ctc_beam_decode)

    tables = count_character_ngrams(["ab"] * 20, VOCABULARY, VOCAB_SIZE, EOS, order=2, min_count=1)
    model = CharacterNGramModel(2, VOCAB_SIZE, len(tables["ngram_keys"]), len(tables["history_keys"]))
    for name, values in tables.items():
        getattr(model, name).copy_(torch.as_tensor(values))
    hesitant = frames({3: 0.9}, {}, {3: 0.5, 4: 0.45})
    path, confidence = best_path_character_confidence(hesitant, BLANK)
    assert path == [3, 3] and confidence == pytest.approx(math.sqrt(0.9 * 0.5))
    assert best_path_character_confidence(frames({}, {3: 0.4}), BLANK) == ([], 0.0)

    def read(log_probs, floor, fused=True):
        logits = torch.as_tensor(log_probs, dtype=torch.float32)[None]
        tokens = ctc_beam_decode(logits, BLANK, EOS, num_beams=4, language_model=model if fused else None,
                                 language_model_weight=1.0, best_path_under=floor)[0].tolist()
        return tokens[:tokens.index(EOS)]

    assert read(hesitant, 0.0) == read(hesitant, 0.6) == [3, 4]
    assert read(hesitant, 0.7) == [3, 3]
    faint = frames({3: 0.4}, {3: 0.4})  # best path: nothing; searched: "a"
    assert read(faint, 0.99, fused=False) == [3]
