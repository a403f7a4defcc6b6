"""Fraktur lines for the data engine: the letterforms of 19th-century German book print.

Debian packages no Fraktur text font, but its mathematics fonts carry Unicode's Mathematical Fraktur alphabets
(U+1D504-1D59F, with five capitals in the Letterlike Symbols block): genuine Fraktur letter shapes. A line is drawn
in Fraktur by writing its letters with those code points (:func:`to_math_fraktur`) in such a font, its digits and
punctuation as they are; its label stays the plain text. Blackletter text fonts (:data:`.fonts.BLACKLETTER_FAMILIES`,
Blankenburg from ``fonts-blankenburg``) draw the plain text directly.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
from fontTools.ttLib import TTFont, TTLibError
from PIL import Image, ImageDraw, ImageFont

from .fonts import FONT_SUFFIXES, PRINTABLE_ASCII, discover_fonts, font_search_dirs
from .german_print import COMBINING_SMALL_E, DOUBLE_OBLIQUE_HYPHEN, HAIRLINE_LOW_QUOTE, SHORT_DOUBLE_HYPHEN

FRAKTUR_CAPITALS = 0x1D504
FRAKTUR_SMALL = 0x1D51E
BOLD_FRAKTUR_CAPITALS = 0x1D56C
BOLD_FRAKTUR_SMALL = 0x1D586
LETTERLIKE_CAPITALS = {"C": 0x212D, "H": 0x210C, "I": 0x2111, "R": 0x211C, "Z": 0x2128}
"""The Fraktur capitals that Unicode placed in Letterlike Symbols (their Mathematical Fraktur slots are empty)."""


def to_math_fraktur(text: str, bold: bool = False) -> str:
    """``text`` with its ASCII letters as Mathematical (bold) Fraktur code points, the rest unchanged."""
    characters = []
    for character in text:
        if "A" <= character <= "Z":
            if not bold and character in LETTERLIKE_CAPITALS:
                characters.append(chr(LETTERLIKE_CAPITALS[character]))
            else:
                characters.append(chr((BOLD_FRAKTUR_CAPITALS if bold else FRAKTUR_CAPITALS) + ord(character) - 65))
        elif "a" <= character <= "z":
            characters.append(chr((BOLD_FRAKTUR_SMALL if bold else FRAKTUR_SMALL) + ord(character) - 97))
        else:
            characters.append(character)
    return "".join(characters)


MATH_FRAKTUR_CODEPOINTS = frozenset(ord(character) for bold in (False, True) for character in to_math_fraktur(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", bold))


def _draws_distinct_glyphs(path: Path) -> bool:
    """Whether Pillow draws two Fraktur letters of the font as two different, inked glyphs (not blank, not the
    same missing-glyph box)."""
    try:
        font = ImageFont.truetype(str(path), 32)
    except OSError:
        return False
    pictures = []
    for letter in ("a", "g"):
        image = Image.new("L", (64, 64), 255)
        ImageDraw.Draw(image).text((8, 8), to_math_fraktur(letter), font=font, fill=0)
        pictures.append(np.asarray(image) < 128)
    return all(picture.any() for picture in pictures) and not np.array_equal(*pictures)


@functools.cache
def fraktur_fonts() -> tuple[tuple[Path, bool], ...]:
    """The fonts that draw Fraktur, sorted: ``(path, True)`` for a mathematics font drawing the Mathematical
    Fraktur alphabets (and printable ASCII for the rest), ``(path, False)`` for a blackletter text font."""
    fonts = [(info.path, False) for info in discover_fonts() if info.style == "blackletter"]
    required = MATH_FRAKTUR_CODEPOINTS | {ord(character) for character in PRINTABLE_ASCII}
    for folder in font_search_dirs():
        for path in sorted(folder.rglob("*")):
            if path.suffix.lower() not in FONT_SUFFIXES or "math" not in path.name.lower() or not path.is_file():
                continue
            try:
                codepoints = set(TTFont(path, lazy=True, fontNumber=0).getBestCmap() or {})
            except (TTLibError, KeyError, OSError, AssertionError, ValueError):
                continue
            if required <= codepoints and _draws_distinct_glyphs(path):
                fonts.append((path, True))
    return tuple(sorted(set(fonts)))


@functools.cache
def _codepoints(path: str) -> frozenset[int]:
    try:
        return frozenset(TTFont(path, lazy=True, fontNumber=0).getBestCmap() or {})
    except (TTLibError, KeyError, OSError, AssertionError, ValueError):
        return frozenset()


def font_covers(path: str | Path, characters: str) -> bool:
    """Whether the font file at ``path`` has a glyph for each of ``characters``."""
    return {ord(character) for character in characters} <= _codepoints(str(path))


FRAKTUR_LIGATURES = ("ch", "ck", "tz")
"""Letter pairs that Fraktur print casts as one piece of type, the two letters joined (read apart they look like
``d``, ``c``/``e`` and ``k``: the errors of a reader that never saw them joined). The engine draws each with its
second letter moved left until it touches the first (:func:`draw_joined`)."""


def joining_shift(font: ImageFont.FreeTypeFont, pair: str) -> float:
    """How far to move the second letter of ``pair`` left for its ink to touch the first's (measured on the two
    letters drawn apart: a glyph's box can be wider than its ink), and a twentieth of the size more, so that they
    overlap."""
    return _joining_shift(font.path, font.size, pair)


@functools.lru_cache(maxsize=4096)
def _joining_shift(path: str, size: int, pair: str) -> float:
    font = ImageFont.truetype(path, size)
    first, second = pair
    width, height = 4 * size, 3 * size
    inked = []
    for letter, x in ((first, size), (second, size + font.getlength(first))):
        image = Image.new("L", (width, height), 255)
        ImageDraw.Draw(image).text((x, 2 * size), letter, font=font, fill=0, anchor="ls")
        inked.append(np.flatnonzero(np.asarray(image).min(axis=0) < 250))
    if not all(len(columns) for columns in inked):
        return 0.0
    return max(0.0, float(inked[1][0] - inked[0][-1] - 1)) + size / 20


def shapes_pair(font: ImageFont.FreeTypeFont, pair: str) -> bool:
    """Whether the font draws ``pair`` otherwise than its two letters side by side: a ligature of its own (as
    UnifrakturMaguntia's ch, ck and tz, where Pillow lays text out with libraqm) or kerning."""
    return _shapes_pair(font.path, font.size, pair)


@functools.lru_cache(maxsize=4096)
def _shapes_pair(path: str, size: int, pair: str) -> bool:
    font = ImageFont.truetype(path, size)
    together, apart = (Image.new("L", (4 * size, 3 * size), 255) for _ in range(2))
    ImageDraw.Draw(together).text((size, 2 * size), pair, font=font, fill=0, anchor="ls")
    ImageDraw.Draw(apart).text((size, 2 * size), pair[0], font=font, fill=0, anchor="ls")
    ImageDraw.Draw(apart).text((size + font.getlength(pair[0]), 2 * size), pair[1], font=font, fill=0, anchor="ls")
    return not np.array_equal(np.asarray(together), np.asarray(apart))


SMALL_E_SIZE = 0.5
"""The small e of an old umlaut (:data:`.german_print.COMBINING_SMALL_E`), drawn by the engine, as a share of the
face's size."""
ENGINE_DRAWN_MARK_ROOMS = {COMBINING_SMALL_E: "", DOUBLE_OBLIQUE_HYPHEN: "=", SHORT_DOUBLE_HYPHEN: "-",
                           HAIRLINE_LOW_QUOTE: "„"}
"""Marks of Fraktur print that no face in the engine draws (:func:`draw_joined` draws them), each with what the face
lays out in its room (the small e none: it stands over its letter)."""
ENGINE_DRAWN_MARKS = tuple(ENGINE_DRAWN_MARK_ROOMS)


def without_engine_drawn_marks(text: str) -> str:
    """``text`` as far as the face lays it out: the marks :func:`draw_joined` draws itself as what takes their room
    (:data:`ENGINE_DRAWN_MARK_ROOMS`)."""
    return text.translate(str.maketrans(ENGINE_DRAWN_MARK_ROOMS))


def _small_e_for(letter: str) -> str:
    """The e drawn small above ``letter``: from the same Mathematical Fraktur alphabet where ``letter`` is in one."""
    code = ord(letter)
    if BOLD_FRAKTUR_SMALL <= code < BOLD_FRAKTUR_SMALL + 26:
        return to_math_fraktur("e", bold=True)
    if code in MATH_FRAKTUR_CODEPOINTS:
        return to_math_fraktur("e")
    return "e"


def draw_small_e_above(draw: ImageDraw.ImageDraw, letter_end: tuple[float, float], letter: str,
                       font: ImageFont.FreeTypeFont, fill: int) -> None:
    """Draw an old umlaut's small e centred over ``letter``, which was drawn ending at ``letter_end`` (its advance's
    right end on the baseline), a little above its ink."""
    x, y = letter_end
    _, letter_top, _, _ = font.getbbox(letter, anchor="ls")
    small = _face(font.path, max(4, round(font.size * SMALL_E_SIZE)))
    draw.text((x - font.getlength(letter) / 2, y + letter_top - font.size * 0.04), _small_e_for(letter), font=small,
              fill=fill, anchor="ms")


def draw_double_oblique_hyphen(draw: ImageDraw.ImageDraw, origin: tuple[float, float], font: ImageFont.FreeTypeFont,
                               fill: int) -> float:
    """Draw print's double hyphen ``⸗`` from ``origin`` (on the baseline): two short parallel strokes as thick as the
    face's hyphen, at its height, rising to the right. Returns the x after it (the room of the face's ``=``)."""
    x, y = origin
    left, top, right, bottom = font.getbbox("-", anchor="ls")
    thickness = max(1.0, min(bottom - top, font.size * 0.06))  # faces whose hyphen is itself double: a stroke's width
    length, middle = font.size * 0.3, y + (top + bottom) / 2
    gap, rise = 2 * thickness + font.size * 0.05, font.size * 0.12
    for offset in (-gap / 2, gap / 2):
        start, end = (x + left, middle + offset + rise / 2), (x + left + length, middle + offset - rise / 2)
        draw.line([start, end], fill=fill, width=max(1, round(thickness)))
    return x + max(font.getlength("="), left + length + font.size * 0.05)


def draw_short_double_hyphen(draw: ImageDraw.ImageDraw, origin: tuple[float, float], font: ImageFont.FreeTypeFont,
                             fill: int) -> float:
    """Draw the double hyphen as the 1780s cast it from ``origin`` (on the baseline): two short heavy strokes, steep,
    one above and to the right of the other along their slope, around the middle of the face's x-height. Returns the x
    after it (the room of the face's hyphen)."""
    x, y = origin
    _, x_top, _, _ = font.getbbox("x", anchor="ls")
    thickness = max(1, round(font.size * 0.07))
    length, rise, gap = font.size * 0.08, font.size * 0.11, font.size * 0.07  # gap: between the strokes, upright
    start = (x + font.size * 0.06, y + x_top / 2 + rise + gap / 2)  # the lower stroke's foot
    for _ in range(2):
        end = (start[0] + length, start[1] - rise)
        draw.line([start, end], fill=fill, width=thickness)
        start = (end[0] + gap * length / rise, end[1] - gap)
    return x + max(font.getlength("-"), font.size * 0.3)


def draw_hairline_low_quote(draw: ImageDraw.ImageDraw, origin: tuple[float, float], font: ImageFont.FreeTypeFont,
                            fill: int) -> float:
    """Draw an opening „ as Fraktur print of about 1780-1840 sets it from ``origin`` (on the baseline): two thin
    straight strokes leaning right, from a little below the baseline to a third of the size above it. Returns the x
    after it (the room of the face's „)."""
    x, y = origin
    width = max(1, round(font.size * 0.055))
    height, lean, spacing = font.size * 0.36, font.size * 0.1, font.size * 0.14
    for start in (x + font.size * 0.04, x + font.size * 0.04 + spacing):
        draw.line([(start, y + font.size * 0.05), (start + lean, y + font.size * 0.05 - height)], fill=fill,
                  width=width)
    return x + max(font.getlength("„"), font.size * 0.04 + spacing + lean + width)


@functools.lru_cache(maxsize=256)
def _face(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


def _draw_run(draw: ImageDraw.ImageDraw, origin: tuple[float, float], text: str, font: ImageFont.FreeTypeFont,
              fill: int, pairs: tuple[str, ...]) -> float:
    """Draw ``text`` (no engine-drawn marks) with its ``pairs`` joined; returns the x after it."""
    x, y = origin
    start = 0
    for index in range(1, len(text)):
        pair = text[index - 1:index + 1]
        if pair in pairs and not shapes_pair(font, pair):
            segment = text[start:index]
            draw.text((x, y), segment, font=font, fill=fill, anchor="ls")
            x += font.getlength(segment) - joining_shift(font, pair)
            start = index
    draw.text((x, y), text[start:], font=font, fill=fill, anchor="ls")
    return x + font.getlength(text[start:])


def draw_joined(draw: ImageDraw.ImageDraw, origin: tuple[float, float], text: str, font: ImageFont.FreeTypeFont,
                fill: int, pairs: tuple[str, ...]) -> None:
    """Draw ``text`` from ``origin`` (its baseline's left end, anchor ``ls``) with each occurrence of ``pairs`` joined
    (:func:`joining_shift`), but for the pairs that the font shapes itself (:func:`shapes_pair`), and the marks no face
    draws (:data:`ENGINE_DRAWN_MARKS`) drawn by :func:`draw_small_e_above`, :func:`draw_double_oblique_hyphen`,
    :func:`draw_short_double_hyphen` and :func:`draw_hairline_low_quote`."""
    x, y = origin
    parts = re.split(f"([{''.join(ENGINE_DRAWN_MARKS)}])", text)  # runs of text, each mark between two of them
    for run, mark in zip(parts[::2], parts[1::2] + [""]):
        x = _draw_run(draw, (x, y), run, font, fill, pairs) if run else x
        if mark == COMBINING_SMALL_E and run:
            draw_small_e_above(draw, (x, y), run[-1], font, fill)
        elif mark == DOUBLE_OBLIQUE_HYPHEN:
            x = draw_double_oblique_hyphen(draw, (x, y), font, fill)
        elif mark == SHORT_DOUBLE_HYPHEN:
            x = draw_short_double_hyphen(draw, (x, y), font, fill)
        elif mark == HAIRLINE_LOW_QUOTE:
            x = draw_hairline_low_quote(draw, (x, y), font, fill)
