"""Old umlauts: the small e that print of the early 1800s set above a, o and u where later print sets two dots.

The Deutsches Textarchiv and OCR-D's ground truth write such a letter as the letter and U+0364, COMBINING LATIN SMALL
LETTER E (`uͤber`), and ä, ö, ü only where the print shows dots. A line reader whose vocabulary has the dotted umlauts
alone (`crnn-lines` reads lines 32 pixels high, at which the small e and the dots are a few pixels alike) reads both
as `ä`; `write_old_umlauts` looks at the line at its own resolution, above each umlaut the reader wrote, and writes
the letter with its small e where one is printed there.

A page is set in one type, and the type sets every umlaut one way: `write_page_umlauts_alike` writes all of a page's
umlauts with their small e where the reader found one on enough of them (`PAGE_SMALL_E_SHARE`), so that the small e's
the line-by-line look misses (touching their letter, broken in the scan) follow the others.

What tells them apart, each size in x-heights (the height of the line's lower-case letters): above the letter and
clear of it, the small e is one blot at least `SMALL_E_MIN_WIDTH` wide and `SMALL_E_MIN_HEIGHT` high, and about as high
as it is wide (`SMALL_E_MIN_ASPECT`); dots are two blots, or, in bold faces whose dots run together, one blot wider than
it is high. Measured with `crnn-lines` on the historic print lines' development set (OCR-D `linegt`), of the
umlauts its reading places (in lines where it reads as many as the label holds): 20 of the 35 small e's found, none of
the 83 dots taken for one; the others (a small e touching its letter, or broken in the scan) stay dotted, as the reader
wrote them.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PIL import Image
from scipy import ndimage

from .image_processing_text_recognition import otsu_threshold

COMBINING_SMALL_E = "\u0364"
"""How the Deutsches Textarchiv's transcriptions write the small e above a, o and u (``uͤber``: the letter and U+0364)."""
DOTTED_UMLAUTS = {"ä": "a", "ö": "o", "ü": "u"}
"""The umlauts that old print sets with a small e, and their letters (capitals kept their dots or were written Ae)."""
X_HEIGHT_ROW_SHARE = 0.5
"""The line's x-height band: the rows holding at least this share of the inkiest row's ink."""
MARK_OVERLAP_X_HEIGHTS = 0.2
"""A mark above a letter ends at most this many x-heights below the band's top (a blot reaching lower is part of a
letter) ..."""
MARK_MAX_HEIGHT_X_HEIGHTS = 0.8
"""... is less than this many x-heights high ..."""
MARK_MAX_WIDTH_X_HEIGHTS = 1.0
"""... and less than this many wide (an ascender, a capital, a quotation mark over two letters are not marks)."""
MARK_MIN_AREA_X_HEIGHTS = 0.01
"""A blot of less than this many square x-heights is dust, not a mark."""
LETTER_OFFSET_X_HEIGHTS = 0.24
"""The letter's middle lies this many x-heights right of the middle of the frames a CTC reader emits it on (the median
over the development set's dotted umlauts named above; a quarter of them lie 0.1 nearer or further) ..."""
LETTER_REACH_X_HEIGHTS = 0.5
"""... and a mark is the letter's where its middle lies within this many x-heights of the letter's."""
SMALL_E_MIN_WIDTH = 0.28
"""The small e is at least this many x-heights wide (a dot is 0.1-0.2) ..."""
SMALL_E_MIN_HEIGHT = 0.3
"""... at least this many high ..."""
SMALL_E_MIN_ASPECT = 0.95
"""... and at least this share of its width high: the small e's of the development lines are 0.88-1.5 (all but one
above 0.95); two dots run together 0.6-0.75 there, 0.87-0.9 in the bold headings of the Neue Zürcher Zeitung of 1852
and 1868, which 0.85 took for 16 small e's on those two pages, 0.95 for one."""

PAGE_SMALL_E_SHARE = 0.25
"""A page whose umlauts were written with a small e at least this often (and `PAGE_SMALL_E_MIN_COUNT` times) has all
its umlauts written so. Measured on the development book pages (OCR-D; `crnn-lines`, line by line): of the seven
pages whose ground truth sets the small e, 33-86% of the umlauts read were found with it; of the four whose ground
truth sets dots (145 umlauts), none."""
PAGE_SMALL_E_MIN_COUNT = 2
"""... and at least this many small e's found: one alone may be two dots run together in a bold heading."""


def with_small_e(character: str) -> str:
    """A dotted umlaut (`DOTTED_UMLAUTS`) as its letter and `COMBINING_SMALL_E`; any other character as it is."""
    return DOTTED_UMLAUTS[character] + COMBINING_SMALL_E if character in DOTTED_UMLAUTS else character


def x_height_band(ink: np.ndarray) -> tuple[int, int] | None:
    """The first and last row of the line's x-height band (`X_HEIGHT_ROW_SHARE`) in a boolean ink mask; None where the
    mask has no ink."""
    rows = ink.sum(axis=1)
    if rows.max() == 0:
        return None
    inky = np.flatnonzero(rows >= X_HEIGHT_ROW_SHARE * rows.max())
    return int(inky[0]), int(inky[-1])


def marks_above(ink: np.ndarray, band: tuple[int, int]) -> list[tuple[float, float, float]]:
    """The blots of ink above the x-height band, clear of the letters (see the `MARK_*` limits): `(middle column,
    width, height)` of each, in x-heights but the middle, which is in pixels."""
    top, bottom = band
    x_height = bottom - top + 1
    labels, _ = ndimage.label(ink)
    marks = []
    for label, (rows, columns) in enumerate(ndimage.find_objects(labels), start=1):
        height, width = rows.stop - rows.start, columns.stop - columns.start
        if (rows.stop > top + MARK_OVERLAP_X_HEIGHTS * x_height or height >= MARK_MAX_HEIGHT_X_HEIGHTS * x_height
                or width >= MARK_MAX_WIDTH_X_HEIGHTS * x_height):
            continue
        if (labels[rows, columns] == label).sum() < MARK_MIN_AREA_X_HEIGHTS * x_height**2:
            continue
        marks.append(((columns.start + columns.stop) / 2, width / x_height, height / x_height))
    return marks


def has_small_e(marks: list[tuple[float, float, float]], letter_middle: float, x_height: float) -> bool:
    """Whether the one mark of `marks_above` over the letter whose middle is at column `letter_middle` is a small e
    (`SMALL_E_*`); two marks over it are dots (a bold face's dots may be as large as a small e)."""
    near = [mark for mark in marks if abs(mark[0] - letter_middle) <= LETTER_REACH_X_HEIGHTS * x_height]
    if len(near) != 1:
        return False
    _, width, height = near[0]
    return width >= SMALL_E_MIN_WIDTH and height >= SMALL_E_MIN_HEIGHT and height >= SMALL_E_MIN_ASPECT * width


def write_old_umlauts(line: Image.Image, reading):
    """`reading` (a `LineReading` of `line` with its CTC alignment, as `iter_recognize(..., output_confidences=True)`
    gives it) with each `ä`, `ö`, `ü` whose letter carries a small e above written as the letter and
    `COMBINING_SMALL_E`. `line` is the image as the model was given it before resizing (its polarity, crop and slant:
    the image processor's `normalize_capture_of`), at the capture's own resolution; the reader's frames span its width.

    Raises:
        ValueError: the reading has no CTC alignment (a reading by an attention decoder).
    """
    if reading.alignment is None:
        raise ValueError("Old umlauts are found from a CTC reading's alignment; this reading has none "
                         "(read with decoding='ctc').")
    if (not any(character in DOTTED_UMLAUTS for character, _ in reading.characters)
            or "".join(character for character, _ in reading.characters) != reading.text):
        return reading
    luminance = np.asarray(line.convert("L"))
    ink = luminance < otsu_threshold(luminance)
    band = x_height_band(ink)
    if band is None:
        return reading
    x_height = band[1] - band[0] + 1
    marks = marks_above(ink, band)
    scale = line.width / reading.alignment.frame_count
    characters = []
    for (character, confidence), (start, stop) in zip(reading.characters, reading.alignment.character_frames):
        if character in DOTTED_UMLAUTS and has_small_e(
                marks, (start + stop) / 2 * scale + LETTER_OFFSET_X_HEIGHTS * x_height, x_height):
            character = with_small_e(character)
        characters.append((character, confidence))
    if characters == reading.characters:
        return reading
    return replace(reading, text="".join(character for character, _ in characters), characters=characters)


def write_page_umlauts_alike(readings: list):
    """The `LineReading`s of one page's lines with every dotted umlaut written with its small e, where at least
    `PAGE_SMALL_E_SHARE` of the page's umlauts (and `PAGE_SMALL_E_MIN_COUNT`) were found with one
    (`write_old_umlauts`); otherwise the readings as they are. A reading may be None (a line not read)."""
    characters = [character for reading in readings if reading is not None for character, _ in reading.characters]
    old = sum(len(character) == 2 and character[1] == COMBINING_SMALL_E for character in characters)
    dotted = sum(character in DOTTED_UMLAUTS for character in characters)
    if old < PAGE_SMALL_E_MIN_COUNT or old < PAGE_SMALL_E_SHARE * (old + dotted) or not dotted:
        return readings
    written = []
    for reading in readings:
        if reading is None or not any(character in DOTTED_UMLAUTS for character, _ in reading.characters):
            written.append(reading)
            continue
        characters = [(with_small_e(character), confidence) for character, confidence in reading.characters]
        written.append(replace(reading, text="".join(map(with_small_e, reading.text)), characters=characters))
    return written
