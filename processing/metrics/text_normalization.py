"""Text normalization applied to predictions and references before scoring.

Two protocols, chosen with the ``normalization`` argument of every textrec metric:

- ``"none"``: strings are compared exactly as given (case, punctuation and spaces count).
- ``"scene-text"``: the standard scene-text recognition protocol, as in PARSeq's charset
  adapter (Bautista & Atienza, ECCV 2022). Each string is decomposed with Unicode NFKD (so
  "Café" keeps its "e" and "ﬁ" becomes "fi"), case-folded to the case of the charset, and every
  character outside the charset is removed. The default charset is the 36 characters
  ``[0-9a-z]``, so "Hello!" and "hello" are the same string. Case folding follows PARSeq: a
  charset without upper-case letters lower-cases the text, one without lower-case letters
  upper-cases it, and a mixed-case charset keeps the case (case-sensitive evaluation).

This file is shared by the metric scripts through relative imports, so it imports nothing from
textrec and only the standard library.
"""

import unicodedata
from collections.abc import Iterable

NORMALIZATIONS = ("none", "scene-text")

SCENE_TEXT_CHARSET = "0123456789abcdefghijklmnopqrstuvwxyz"

NORMALIZATION_ARGS_DOC = """    normalization (`str`, defaults to `"none"`):
        `"none"` compares the strings exactly. `"scene-text"` applies the standard scene-text
        protocol (as in PARSeq) to predictions and references: Unicode NFKD, case folding to the
        charset's case (lower-case for the default charset), then removal of every character
        outside the charset.
    charset (`str`, *optional*):
        Only with `normalization="scene-text"`: the characters kept. Defaults to
        `"0123456789abcdefghijklmnopqrstuvwxyz"`. A charset with both cases keeps the case.
"""


def scene_text_normalize(text: str, charset: str = SCENE_TEXT_CHARSET) -> str:
    """Normalize one string with the scene-text protocol.

    Args:
        text: The string to normalize.
        charset: The characters to keep. Its case decides the case folding: no upper-case
            letters lower-cases ``text``, no lower-case letters upper-cases it, both keep it.

    Returns:
        ``text`` decomposed with NFKD, case-folded, and restricted to ``charset``.

    Example:
        >>> scene_text_normalize("Café, 24h!")
        'cafe24h'
    """
    text = unicodedata.normalize("NFKD", text)
    if charset == charset.lower():
        text = text.lower()
    elif charset == charset.upper():
        text = text.upper()
    return "".join(character for character in text if character in charset)


def normalize_texts(texts: Iterable[str], normalization: str = "none", charset: str | None = None) -> list[str]:
    """Normalize strings with one of the protocols in ``NORMALIZATIONS``.

    Args:
        texts: The strings to normalize.
        normalization: ``"none"`` (returned unchanged) or ``"scene-text"``.
        charset: With ``"scene-text"`` only: the characters to keep (default ``SCENE_TEXT_CHARSET``).

    Returns:
        The normalized strings, in order.

    Raises:
        ValueError: For an unknown ``normalization``, a ``charset`` given with ``"none"``, or an
            empty ``charset``.
    """
    if normalization == "none":
        if charset is not None:
            raise ValueError('`charset` only applies to normalization="scene-text", got normalization="none".')
        return list(texts)
    if normalization == "scene-text":
        charset = SCENE_TEXT_CHARSET if charset is None else charset
        if not charset:
            raise ValueError("`charset` must hold at least one character, got an empty string.")
        return [scene_text_normalize(text, charset) for text in texts]
    raise ValueError(f"`normalization` must be one of {NORMALIZATIONS}, got {normalization!r}.")


def normalize_pairs(
    predictions: list[str], references: list[str], normalization: str = "none", charset: str | None = None
) -> tuple[list[str], list[str]]:
    """Check that there is something to score, then normalize predictions and references alike.

    Args:
        predictions: The recognized strings.
        references: The ground-truth strings, one per prediction.
        normalization: See ``normalize_texts``.
        charset: See ``normalize_texts``.

    Returns:
        The normalized ``(predictions, references)``.

    Raises:
        ValueError: When there are no predictions, or as ``normalize_texts`` does.
    """
    if not predictions:
        raise ValueError(
            "No predictions to score: pass non-empty `predictions` and `references` to `compute()`, "
            "or add them with `add()`/`add_batch()` first."
        )
    return normalize_texts(predictions, normalization, charset), normalize_texts(references, normalization, charset)
