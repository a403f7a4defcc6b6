"""Corpus-level edit-distance error rates over characters or words, computed with jiwer.

Shared by the ``cer`` and ``wer`` metric scripts through relative imports.

The rate is the total Levenshtein distance (substitutions + deletions + insertions) summed over
all pairs, divided by the total reference length: a corpus-level rate, so long strings weigh more
than short ones, and it can exceed 1 when predictions are longer than references.

Empty references are defined rather than rejected (jiwer 3 raises on them): a prediction scored
against an empty reference counts one insertion per unit (character or word) and adds nothing to
the denominator, and the denominator is ``max(1, total reference length)``. So ``"" / ""`` scores
0, and when every reference is empty the rate is the number of inserted units (``"abc"`` against
``""`` has a CER of 3.0).
"""

import jiwer

# Characters are compared as given: no stripping of leading or trailing spaces.
CHARACTERS_AS_GIVEN = jiwer.ReduceToListOfListOfChars()
# Words are separated by any run of whitespace, as with `str.split()`.
_WORDS = jiwer.Compose(
    [
        jiwer.RemoveWhiteSpace(replace_by_space=True),
        jiwer.RemoveMultipleSpaces(),
        jiwer.Strip(),
        jiwer.ReduceToListOfListOfWords(),
    ]
)


def _count_words(text: str) -> int:
    return len(text.split())


_UNITS = {
    "character": (jiwer.process_characters, CHARACTERS_AS_GIVEN, len),
    "word": (jiwer.process_words, _WORDS, _count_words),
}


def error_rate(predictions: list[str], references: list[str], unit: str) -> float:
    """Edit operations per reference unit, summed over all pairs.

    Args:
        predictions: The recognized strings.
        references: The ground-truth strings, as many as ``predictions``.
        unit: ``"character"`` (CER) or ``"word"`` (WER).

    Returns:
        ``(substitutions + deletions + insertions) / max(1, reference units)``, summed over pairs.
    """
    process, transform, count_units = _UNITS[unit]
    errors = 0
    scored_predictions, scored_references = [], []
    for prediction, reference in zip(predictions, references):
        if count_units(reference):
            scored_predictions.append(prediction)
            scored_references.append(reference)
        else:
            errors += count_units(prediction)
    reference_units = 0
    if scored_references:
        output = process(
            scored_references, scored_predictions, reference_transform=transform, hypothesis_transform=transform
        )
        errors += output.substitutions + output.deletions + output.insertions
        reference_units = output.hits + output.substitutions + output.deletions
    return errors / max(1, reference_units)
