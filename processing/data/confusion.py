"""A recognizer's character confusions, P(label character i recognised as j), from its predictions.

Each prediction is aligned to its label character by character (a Levenshtein alignment, see
`align_characters`), and the aligned pairs are counted:

- a label character i is recognised as j (itself when right) or deleted (j = "", the empty string);
- between two label characters, and before the first and after the last (n + 1 places in a label of
  n characters), nothing or some characters j are inserted. These places form the row i = "".

Each row, normalised, is a distribution: `P(j | i)` with j = "" for deletion, and `P(j | "")` the
chance of an inserted j at a place, `P("" | "")` the chance of none. A place with several
insertions counts once for each inserted character and not as "nothing".

The matrix is saved as JSON (`ConfusionMatrix.save`), counts and probabilities both, and drives the
OCR-like character noise of CharBERT pre-training (`text_noise.confusion_edit`).
"""

import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

EPSILON = ""
"""The empty string: the deleted character's prediction, and the row of insertions."""

FORMAT = "textrec-confusion-matrix"


def align_characters(reference: str, hypothesis: str) -> list[tuple[str, str]]:
    """A minimum-edit alignment of `hypothesis` to `reference` as `(reference char, hypothesis char)`
    pairs in reading order: `(a, a)` a match, `(a, b)` a substitution, `(a, "")` a deletion,
    `("", b)` an insertion. Among equally cheap alignments, the backtrace from the end prefers a
    match or substitution, then a deletion, then an insertion."""
    rows, cols = len(reference) + 1, len(hypothesis) + 1
    cost = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        cost[i][0] = i
    for j in range(cols):
        cost[0][j] = j
    for i in range(1, rows):
        for j in range(1, cols):
            substitution = cost[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1])
            cost[i][j] = min(substitution, cost[i - 1][j] + 1, cost[i][j - 1] + 1)
    pairs = []
    i, j = len(reference), len(hypothesis)
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]):
            pairs.append((reference[i - 1], hypothesis[j - 1]))
            i, j = i - 1, j - 1
        elif i and cost[i][j] == cost[i - 1][j] + 1:
            pairs.append((reference[i - 1], EPSILON))
            i -= 1
        else:
            pairs.append((EPSILON, hypothesis[j - 1]))
            j -= 1
    return pairs[::-1]


@dataclass
class ConfusionMatrix:
    """Counts `counts[i][j]` of label character i recognised as j (see the module docstring).

    Args:
        counts: the counts, row "" for the places between label characters.
        num_pairs: how many (label, prediction) pairs were counted.
    """

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    num_pairs: int = 0

    @classmethod
    def from_texts(cls, references: Iterable[str], hypotheses: Iterable[str]) -> "ConfusionMatrix":
        """Count the confusions of predictions `hypotheses` against labels `references` (same order)."""
        counts: dict[str, Counter] = defaultdict(Counter)
        num_pairs = 0
        for reference, hypothesis in zip(references, hypotheses, strict=True):
            num_pairs += 1
            inserted_here = 0
            for label_char, predicted_char in align_characters(reference, hypothesis):
                if label_char == EPSILON:
                    counts[EPSILON][predicted_char] += 1
                    inserted_here += 1
                    continue
                if not inserted_here:
                    counts[EPSILON][EPSILON] += 1  # nothing was inserted before this character
                inserted_here = 0
                counts[label_char][predicted_char] += 1
            if not inserted_here:
                counts[EPSILON][EPSILON] += 1  # nor after the last one
        return cls({row: dict(sorted(column.items())) for row, column in sorted(counts.items())}, num_pairs)

    def probabilities(self) -> dict[str, dict[str, float]]:
        """Each row of `counts` divided by its sum."""
        return {
            row: {column: count / sum(columns.values()) for column, count in columns.items()}
            for row, columns in self.counts.items()
        }

    def errors(self) -> list[tuple[str, str, int]]:
        """The `(label char, predicted char, count)` of every error (not a match, not a place without
        insertion), most frequent first."""
        found = [(row, column, count) for row, columns in self.counts.items() for column, count in columns.items() if row != column]
        return sorted(found, key=lambda error: (-error[2], error[0], error[1]))

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "epsilon": EPSILON,
            "num_pairs": self.num_pairs,
            "counts": self.counts,
            "probabilities": self.probabilities(),
        }

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "w", encoding="utf-8") as file:
            json.dump(self.to_dict(), file, ensure_ascii=False, indent=1)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ConfusionMatrix":
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
        if data.get("format") != FORMAT:
            raise ValueError(f"{os.fspath(path)!r} is not a {FORMAT} file (written by ConfusionMatrix.save).")
        return cls(data["counts"], data["num_pairs"])
