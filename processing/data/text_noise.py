"""Character noise for CharBERT's noisy-LM pre-training: which words to corrupt, and how.

A corrupted word differs from the original by one character edit:

- at random (`random_edit`, the CharBERT recipe): a word shorter than `short_word_length` gets a
  random character inserted; a longer one loses a character or has two adjacent (different)
  characters swapped, with equal chance;
- or like a recognizer's mistakes (`confusion_edit`, "glyph incorporation"): one substitution,
  deletion or insertion drawn in proportion to its probability in a `ConfusionMatrix` measured on
  that recognizer, so '.' becomes ',' or 'O' becomes 'o' as often as the recognizer does it.
"""

import random
import string
from dataclasses import dataclass

from .confusion import EPSILON, ConfusionMatrix


def choose_words(num_words: int, probability: float, rng: random.Random, exclude: set[int] = frozenset()) -> list[int]:
    """`probability * num_words` word indices (rounded up or down at random, so that the expected
    count is exact), drawn without replacement from those not in `exclude`, in increasing order."""
    expected = probability * num_words
    count = int(expected) + (rng.random() < expected - int(expected))
    candidates = [index for index in range(num_words) if index not in exclude]
    return sorted(rng.sample(candidates, min(count, len(candidates))))


def random_edit(word: str, rng: random.Random, alphabet: str = string.ascii_lowercase, short_word_length: int = 4) -> str:
    """One random edit of `word` (never the word itself): see the module docstring."""
    if len(word) < short_word_length:
        position = rng.randint(0, len(word))
        return word[:position] + rng.choice(alphabet) + word[position:]
    swappable = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
    if swappable and rng.random() < 0.5:
        i = rng.choice(swappable)
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    position = rng.randrange(len(word))
    return word[:position] + word[position + 1 :]


def confusion_edit(word: str, probabilities: dict[str, dict[str, float]], rng: random.Random) -> str | None:
    """One edit of `word` drawn from a recognizer's errors, `probabilities` being
    `ConfusionMatrix.probabilities()`: every substitution or deletion of each character i and
    insertion of j at each of the `len(word) + 1` places, weighted by `P(j | i)` and `P(j | "")`.
    None when the matrix has no error for any of them."""
    edits, weights = [], []
    for position, char in enumerate(word):
        for replacement, probability in probabilities.get(char, {}).items():
            if replacement != char and probability > 0:
                edits.append(word[:position] + replacement + word[position + 1 :])
                weights.append(probability)
    for inserted, probability in probabilities.get(EPSILON, {}).items():
        if inserted != EPSILON and probability > 0:
            for position in range(len(word) + 1):
                edits.append(word[:position] + inserted + word[position:])
                weights.append(probability)
    if not edits:
        return None
    return rng.choices(edits, weights=weights)[0]


@dataclass
class CharacterNoise:
    """Corrupts a word with one character edit: drawn from `confusions` when given (falling back to a
    random edit for a word none of whose characters the recognizer ever got wrong), else random.

    Args:
        confusions: a recognizer's `ConfusionMatrix` (see `scripts/build_confusion_matrix.py`).
        alphabet: the characters random insertions draw from.
        short_word_length: words shorter than this get an insertion, longer ones a deletion or swap.
    """

    confusions: ConfusionMatrix | None = None
    alphabet: str = string.ascii_lowercase
    short_word_length: int = 4

    def __post_init__(self):
        self._probabilities = self.confusions.probabilities() if self.confusions is not None else None

    def __call__(self, word: str, rng: random.Random) -> str:
        if self._probabilities is not None:
            corrupted = confusion_edit(word, self._probabilities, rng)
            if corrupted is not None:
                return corrupted
        return random_edit(word, rng, self.alphabet, self.short_word_length)
