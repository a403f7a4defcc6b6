"""What a book page sets besides its running text: footnote marks, footnotes, page numbers, the en dash and quotes
opening a line.

Real book pages carry marks that no fortune has. The OCR-D pages of 19th-century German books hold a footnote
reference after a word (``Gott!*)``, ``Schnitze††).“``), the footnote it refers to opening with its mark
(``††) Von einem Fremden.``), page numbers between dashes (``— 170 —``), the en dash between words (``Was? – da``) and
lines opening with a quotation mark. A reader that never saw them reads the dagger, which its vocabulary lacked, as
``1``, ``+`` or ``11``, and a line-opening ``„`` as ``n``. The engine sets them in a share of its lines when asked
(``synthetic-lines``' ``book_marks_share``), each only where the line's face has its glyphs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

BOOK_MARK_CHARACTERS = "†‡–"
"""The dagger, double dagger and en dash: what :func:`with_book_marks` adds to a vocabulary reading print."""
FOOTNOTE_MARKS = ("*)", "**)", "***)", "†)", "††)", "‡)", "*", "**", "†", "‡")
"""How books mark a footnote: the German books of the 1800s with a closing parenthesis, English print without."""
PAGE_NUMBER_FORMATS = ("— {} —", "– {} –", "- {} -", "{}", "[{}]", "({})", "{}.")
"""Page numbers as printed at a page's head or foot."""
PAGE_NUMBER_BETWEEN_DASHES = re.compile(r"([—–-]) (\d+) ([—–-])")
"""A page number between dashes as labelled (``— 170 —``)."""
BOOK_MARK_KINDS = ("reference", "footnote", "page_number", "en_dash", "quotation")
BOOK_MARK_KIND_WEIGHTS = (0.35, 0.2, 0.15, 0.15, 0.15)
"""What a line given book marks gets, and how often: a footnote reference after one of its words, a footnote's
opening mark, a page number instead of the line, an en dash between two of its words, a quotation opening it."""


def with_book_marks(text: str, rng: np.random.Generator, covers: Callable[[str], bool],
                    quotes: tuple[str, str] = ('"', '"')) -> str:
    """``text`` with one of :data:`BOOK_MARK_KINDS`, drawn with :data:`BOOK_MARK_KIND_WEIGHTS`; the line's label and
    what is drawn alike. ``covers(characters)`` says whether the line's face has glyphs for ``characters``: marks it
    lacks are not set (a line is returned as it is when no mark of its kind can be). ``quotes``: the line's opening and
    closing quotation marks (``„“`` in German Fraktur)."""
    kind = BOOK_MARK_KINDS[int(rng.choice(len(BOOK_MARK_KINDS), p=BOOK_MARK_KIND_WEIGHTS))]
    words = text.split(" ")
    if kind in ("reference", "footnote"):
        marks = [mark for mark in FOOTNOTE_MARKS if covers(mark)]
        if not marks:
            return text
        mark = marks[int(rng.integers(len(marks)))]
        if kind == "footnote":
            return f"{mark} {text}"
        position = int(rng.integers(len(words)))
        word = words[position]
        stem = word.rstrip(".,;:!?\"“«»")
        words[position] = stem + mark + word[len(stem):] if rng.random() < 0.5 else word + mark
        return " ".join(words)
    if kind == "page_number":
        formats = [form for form in PAGE_NUMBER_FORMATS if covers(form.replace("{}", ""))]
        number = int(rng.integers(1, 1000)) if rng.random() < 0.8 else int(rng.integers(1, 30))
        return formats[int(rng.integers(len(formats)))].format(number)
    if kind == "en_dash":
        if len(words) < 2 or not covers("–"):
            return text
        position = int(rng.integers(1, len(words)))
        return " ".join(words[:position]) + " – " + " ".join(words[position:])
    opening, closing = quotes
    if not covers(opening + closing) or text.startswith(opening):
        return text
    position = int(rng.integers(len(words)))
    words[position] = words[position] + closing if rng.random() < 0.6 else words[position]
    return opening + " ".join(words)


def spaced_page_number(text: str, rng: np.random.Generator, max_spaces: int) -> str:
    """What is drawn for the label ``text``: a page number between dashes (``— 170 —``) with 1 to ``max_spaces``
    spaces between each dash and the number (one count for both sides), as books set them up to two heights apart,
    where the label has one; any other label as it is."""
    match = PAGE_NUMBER_BETWEEN_DASHES.fullmatch(text)
    if match is None or max_spaces <= 1:
        return text
    gap = " " * int(rng.integers(1, max_spaces + 1))
    return f"{match[1]}{gap}{match[2]}{gap}{match[3]}"
