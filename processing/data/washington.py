"""The George Washington database (GW), read as the IAM/FKI release ``washingtondb-v1.0`` lays it out:

    <root>/data/line_images_normalized/<id>.png     the binarised, normalised image of each text line
    <root>/ground_truth/transcription.txt           one line per text line: "<id> <encoded transcription>"
    <root>/sets/cv1 ... cv4/{train,valid,test}.txt  the line ids of each split of the 4 cross-validation folds

A transcription spells each word character by character, the characters separated by ``-`` and the words by
``|``: ``270-01 s_2-s_7-s_0-s_pt|L-e-t-t-e-r-s-s_cm|O-r-d-e-r-s-s_cm|a-n-d|...`` is "270. Letters, Orders
and ...". Letters stand for themselves; digits, punctuation and a few signs are codes starting with ``s_``:
the digits ``s_0`` ... ``s_9``, ordinals such as ``s_1st`` or ``s_6th``, and :data:`SPECIAL_CODES`. A code
outside these is reported, never guessed.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Literal

import datasets

logger = logging.getLogger(__name__)

TRANSCRIPTION_FILE = Path("ground_truth", "transcription.txt")
IMAGE_FOLDER = Path("data", "line_images_normalized")
FOLDS = (1, 2, 3, 4)
SPLIT_FILES = {"train": "train.txt", "validation": "valid.txt", "test": "test.txt"}
"""The file of each split in a fold's folder ``sets/cv<fold>/``."""
SPECIAL_CODES = {
    "s_pt": ".",
    "s_cm": ",",
    "s_sq": ";",
    "s_qo": ":",
    "s_mi": "-",
    "s_qt": "'",
    "s_bl": "(",
    "s_br": ")",
    "s_lb": "£",
    "s_et": "&",
    "s_s": "s",
    "s_GW": "G.W.",
}
"""The punctuation and sign codes of the transcriptions. ``s_et`` is the "&" of "&c." (some toolkits write it
as "V", the letter its glyph resembles) and ``s_lb`` the pound sign."""
DIGIT_CODE = re.compile(r"s_[0-9](st|nd|rd|th)?")
"""A digit, ``s_7``, or an ordinal, ``s_1st``: the text is what follows ``s_``."""
FEATURES = datasets.Features(
    {"image": datasets.Image(), "text": datasets.Value("string"), "id": datasets.Value("string")}
)
MAX_EXAMPLES = 5
"""How many line ids or codes a message quotes."""


def _decode_character(code: str) -> str | None:
    """The text of one character of a transcription; ``None`` for an unknown code."""
    if code in SPECIAL_CODES:
        return SPECIAL_CODES[code]
    if DIGIT_CODE.fullmatch(code):
        return code[2:]
    if len(code) == 1:
        return code
    return None


def _decode(encoded: str) -> tuple[str, list[str]]:
    """The text of a transcription (words joined by single spaces) and the codes it holds that are unknown
    (left out of the text)."""
    words, unknown = [], []
    for word in encoded.split("|"):
        characters = []
        for code in word.split("-"):
            character = _decode_character(code)
            if character is None:
                unknown.append(code)
            else:
                characters.append(character)
        words.append("".join(characters))
    return " ".join(words), unknown


def decode_washington_transcription(encoded: str) -> str:
    """Decode one transcription of the George Washington database.

    Args:
        encoded: The transcription as ``ground_truth/transcription.txt`` gives it, without the line id, e.g.
            ``"s_2-s_7-s_0-s_pt|L-e-t-t-e-r-s-s_cm"``.

    Returns:
        The text, words joined by single spaces: ``"270. Letters,"``.

    Raises:
        ValueError: the transcription holds codes outside the known ones (named in the message).
    """
    text, unknown = _decode(encoded)
    if unknown:
        raise ValueError(
            f"unknown character codes {sorted(set(unknown))} in {encoded!r}; known: letters, s_0 ... s_9, "
            f"ordinals such as s_1st, and {', '.join(SPECIAL_CODES)}"
        )
    return text


def load_washington_lines(
    root: str | os.PathLike,
    fold: int = 1,
    split: Literal["train", "validation", "test"] = "train",
    on_unknown: Literal["raise", "skip"] = "raise",
) -> datasets.Dataset:
    """Read one split of one cross-validation fold of the George Washington database.

    Args:
        root: The ``washingtondb-v1.0`` folder (see the module docstring for its layout).
        fold: The cross-validation fold, 1 to 4 (the folder ``sets/cv<fold>``).
        split: ``"train"``, ``"validation"`` (the fold's ``valid.txt``) or ``"test"``.
        on_unknown: What to do with lines holding unknown character codes: ``"raise"`` a ``ValueError`` naming
            the codes and a line of each, or ``"skip"`` the lines, with one warning giving the counts.

    Returns:
        A dataset with columns ``image`` (``datasets.Image``), ``text`` (decoded, see
        :func:`decode_washington_transcription`) and ``id``, in the order of the split file. Lines whose image
        is missing are left out, with one warning.

    Raises:
        FileNotFoundError: ``root`` lacks a file or folder of the layout (named in the message).
        ValueError: a bad ``fold``, ``split`` or ``on_unknown``; a split file listing ids without a
            transcription; unknown codes (with ``on_unknown="raise"``); no line left.
    """
    if isinstance(fold, bool) or fold not in FOLDS:
        raise ValueError(f"fold must be one of {FOLDS} (the folders sets/cv1 ... sets/cv4), got {fold!r}")
    if split not in SPLIT_FILES:
        raise ValueError(f"split must be one of {tuple(SPLIT_FILES)}, got {split!r}")
    if on_unknown not in ("raise", "skip"):
        raise ValueError(f"on_unknown must be 'raise' or 'skip', got {on_unknown!r}")
    root = Path(root).expanduser()
    split_file = Path("sets", f"cv{fold}", SPLIT_FILES[split])
    expected = (TRANSCRIPTION_FILE, split_file, IMAGE_FOLDER)
    absent = [str(path) for path in expected if not (root / path).exists()]
    if absent:
        raise FileNotFoundError(
            f"{root} is not the George Washington database (washingtondb-v1.0): it lacks {', '.join(absent)}. "
            f"Expected {TRANSCRIPTION_FILE}, {IMAGE_FOLDER}/<id>.png and sets/cv1 ... cv4/"
            f"{{{','.join(SPLIT_FILES.values())}}} under it."
        )
    transcriptions = _read_transcriptions(root / TRANSCRIPTION_FILE)
    ids = [line.strip() for line in (root / split_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    untranscribed = [line_id for line_id in ids if line_id not in transcriptions]
    if untranscribed:
        raise ValueError(
            f"{root / split_file} lists {len(untranscribed)} ids that {TRANSCRIPTION_FILE} does not transcribe "
            f"(e.g. {', '.join(untranscribed[:MAX_EXAMPLES])})"
        )
    rows, unknown, missing = [], {}, []
    for line_id in ids:
        text, codes = _decode(transcriptions[line_id])
        image = root / IMAGE_FOLDER / f"{line_id}.png"
        if codes:
            unknown[line_id] = codes
        elif not image.is_file():
            missing.append(line_id)
        else:
            rows.append({"image": str(image), "text": text, "id": line_id})
    if unknown:
        _report_unknown_codes(unknown, on_unknown, f"{root / split_file} (fold {fold}, {split})", len(ids))
    if missing:
        logger.warning(
            "Left out %d of %d lines of %s whose image %s/<id>.png is missing (e.g. %s)",
            len(missing),
            len(ids),
            root / split_file,
            IMAGE_FOLDER,
            ", ".join(missing[:MAX_EXAMPLES]),
        )
    if not rows:
        raise ValueError(f"{root / split_file} lists no line with a known transcription and an image")
    return datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in FEATURES}, features=FEATURES)


def _read_transcriptions(path: Path) -> dict[str, str]:
    """The encoded transcription of each line id of ``transcription.txt``."""
    transcriptions = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(f"{path}, line {number}: expected '<id> <encoded transcription>', got {line!r}")
        transcriptions[fields[0]] = fields[1]
    return transcriptions


def _report_unknown_codes(unknown: dict[str, list[str]], on_unknown: str, source: str, total: int) -> None:
    """Raise, or warn once, about the lines (by id) holding unknown codes."""
    counts = Counter(code for codes in unknown.values() for code in codes)
    example = {}
    for line_id, codes in unknown.items():
        for code in codes:
            example.setdefault(code, line_id)
    summary = ", ".join(f"{code!r} ({count}x, e.g. line {example[code]})" for code, count in counts.most_common())
    if on_unknown == "raise":
        raise ValueError(
            f"{len(unknown)} of {total} lines of {source} hold character codes this reader does not know: "
            f"{summary}. They are not guessed: pass on_unknown='skip' to leave those lines out (or extend "
            "SPECIAL_CODES once their meaning is confirmed)."
        )
    logger.warning(
        "Left out %d of %d lines of %s holding unknown character codes: %s", len(unknown), total, source, summary
    )
