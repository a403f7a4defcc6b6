"""Synthetic printed and handwriting-style text lines rendered with the system fonts.

Each sample is a function of ``(seed, index)`` alone: its random generator is
``numpy.random.default_rng([seed, index])``, which draws the text (:mod:`.text_sampling`), the
font, its size, the ink and paper greys, the margins and the augmentations. So the same
arguments give byte-identical images whatever ``num_proc`` is, and different seeds give
independent sample streams. Splits are made with different seeds; see
:func:`textrec.processing.data.loading.split_seed` for the scheme the loader uses.

Rendering: dark text on a light page, drawn on a padded canvas; optional geometric
augmentation (rotation, perspective) on that canvas; then a crop tight around the ink
horizontally and around the font's ascender-to-descender band vertically (so ``"..."`` keeps a
line's height), plus a random margin on each side; then optional photometric augmentation.
Images are greyscale (mode ``L``) PNGs.

``look="captured"`` is the data engine for real scans and photos: crops from tight (cutting into the
ink) to loose, more capitals and short lines, and after the photometric augmentation either the
scanner effects of :func:`.capture_effects.scan_effects` (low resolution, bleed, binarisation, paper,
shading, rules, parts of neighbouring lines, light on dark) or, for `SCENE_SHARE` of lines, the text put
on a scene-like background (:func:`.capture_effects.scene_composite`); where asked (``dot_matrix_share``), modern
lines printed in dots first, as receipt printers print them (:func:`.capture_effects.dot_matrix`), some of them in
double width (``double_width_share``); where asked,
lines condensed or extended (``width_scale_share``) and crops cutting through descenders or ascenders
(``clipped_crop_share``).
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import re
from pathlib import Path

import datasets
import numpy as np
import PIL
from PIL import Image, ImageDraw, ImageFont

from .augmentation import augment as augment_image
from .book_marks import spaced_page_number, with_book_marks
from .capture_effects import dot_matrix, scan_effects, scene_composite
from .fonts import FONT_STYLES, PRINTABLE_ASCII, fonts_fingerprint, is_caps_only, list_fonts
from .fraktur import (
    FRAKTUR_LIGATURES,
    draw_joined,
    font_covers,
    fraktur_fonts,
    to_math_fraktur,
    without_engine_drawn_marks,
)
from .german_print import (
    COMBINING_DIAERESIS,
    DOUBLE_HYPHEN_DRAWN_DOUBLE_SHARE,
    GERMAN_LETTERS,
    GERMAN_PRINT_CHARACTERS,
    LINE_END_HYPHEN_SHARE,
    LONG_S,
    as_printed,
    break_last_word,
    decomposed_umlauts,
    german_corpus_fingerprint,
    historic_spelling,
    sample_german_text,
)
from .generation import CacheDir, cached_dataset, generate_indexed
from .text_sampling import corpus_fingerprint, sample_text

logger = logging.getLogger(__name__)


LINE_STYLES = (*FONT_STYLES, "mixed")
LOOKS = ("clean", "captured")
"""``clean``: rendered lines with mild augmentation; ``captured``: the data engine (see the module docstring)."""
CAPTURED_HORIZONTAL_MARGIN = (-0.05, 1.0)
CAPTURED_VERTICAL_MARGIN = (-0.08, 0.6)
"""The margin ranges of ``look="captured"`` (negative: the crop cuts into the ink)."""
LOOSE_VERTICAL_MARGIN = (0.8, 2.0)
"""The blank above and below a loosely cropped ``captured`` line (``loose_crop_share``), in font sizes: more than the
image processor keeps of a tight crop (half an ink height, `MAX_VERTICAL_MARGIN`), so that the line reaches the model
as a user's loose crop does (cut to `CUT_VERTICAL_MARGIN`)."""
SCENE_SHARE = 0.35
"""Share of ``captured`` lines made to look like scene text rather than a scan."""
SMALL_CAPS_SCALE = (0.68, 0.8)
"""The height of a small capital against a capital (``small_caps_share``), drawn uniformly per line: a face's own
small capitals stand about as high as its x-height, 0.68-0.75 of a capital in most faces; set from the capitals of a
smaller size (as a word processor fakes them), up to 0.8."""
CAPITALS_SHARE = 0.2
SHORT_LINE_SHARE = 0.3
SHORT_LINE_CHARS = 12
"""``captured`` lines: this share is upper-cased, and this share is at most `SHORT_LINE_CHARS` long
(headings, labels, prices, single words)."""
FRAKTUR_BOLD_SHARE = 0.3
"""Share of the Fraktur lines drawn in a mathematics font's bold Fraktur."""
WIDTH_SCALE = (0.75, 1.3)
"""The factor a line's width is scaled by where asked (``width_scale_share``), drawn log-uniformly: condensed and
extended type, and a printer or scanner whose pitch is not the font's (receipt lines read 0.15 points better when
the fourteenth ``crnn-lines`` read them stretched by 1.2, historic print 0.5 points worse)."""
CLIPPED_DESCENDER_KEPT = (0.0, 0.6)
"""A clipped crop (``clipped_crop_share``) cuts its bottom edge through the descenders, keeping this share of their
depth below the baseline (a receipt's box drawn to the baseline: ``enquiry, please`` with its q, y and p cut off) ..."""
CLIPPED_ASCENDER_KEPT = (0.85, 1.0)
"""... or its top edge through the ascenders and capitals, keeping this share of their height above the baseline."""
CLIPPED_BOTTOM_SHARE = 0.6
CLIPPED_TOP_SHARE = 0.2
"""Of the clipped crops, this share is cut at the bottom only, the next at the top only, the rest at both edges."""
DEFAULT_FONT_NAME = "pillow-default"
"""The ``font`` value of lines drawn with Pillow's bundled font (when no system font was found)."""

FONT_SIZES = (18, 48)
"""Range of font sizes in pixels (inclusive)."""
INK_GREYS = (0, 80)
PAPER_GREYS = (185, 255)
HORIZONTAL_MARGIN = (0.05, 0.6)
VERTICAL_MARGIN = (0.02, 0.3)
"""Margin ranges around the text, as fractions of the font size."""
BAND_REFERENCE = "Hbdfhklgjpqy"
"""Characters whose ink spans a font's ascenders and descenders: the crop keeps at least
that band, so every line of one font and size has the same minimum height."""

FEATURES = datasets.Features(
    {"image": datasets.Image(), "text": datasets.Value("string"), "font": datasets.Value("string")}
)


@functools.lru_cache(maxsize=256)
def _load_font(path: str | None, size: int) -> ImageFont.FreeTypeFont:
    """The font at ``path`` (Pillow's bundled font when ``None``) at ``size`` pixels."""
    return ImageFont.load_default(size=size) if path is None else ImageFont.truetype(path, size)


def render_line(
    text: str,
    font: ImageFont.FreeTypeFont,
    rng: np.random.Generator,
    *,
    augment: bool = True,
    look: str = "clean",
    scene_share: float = SCENE_SHARE,
    scan_effects_on: bool = True,
    joined_pairs: tuple[str, ...] = (),
    small_caps_scale: float | None = None,
    loose_vertically: bool = False,
    dot_matrix_print: bool = False,
    double_width: bool = False,
    width_scale: float = 1.0,
    clipped: bool = False,
) -> Image.Image:
    """Render one text line as a greyscale image.

    Args:
        text: The line.
        font: The font, already at its size.
        rng: Draws ink and paper greys, margins and augmentations.
        augment: Whether to apply :func:`~.augmentation.augment` (geometric before the crop,
            photometric after).
        look: ``"clean"`` or ``"captured"`` (see the module docstring).
        scene_share, scan_effects_on: with ``look="captured"``, the share of lines made scene text, and
            whether the others get the scanner effects (the data engine's levers, for its ablation).
        joined_pairs: letter pairs drawn joined, as Fraktur's ligatures (:func:`~.fraktur.draw_joined`).
        small_caps_scale: draw the line in small capitals (:func:`draw_small_caps`): its lower-case letters as
            capitals of this height against a capital; None: as it is written.
        loose_vertically: with ``look="captured"``, crop a line made to look scanned (not a scene composite, whose
            texture fills the blank) with `LOOSE_VERTICAL_MARGIN` above and below instead of `CAPTURED_VERTICAL_MARGIN`.
        dot_matrix_print: print the line as a dot-matrix or thermal-dot receipt printer does
            (:func:`~.capture_effects.dot_matrix`), before it is turned, cropped and captured.
        double_width: with ``dot_matrix_print``, print it in the printer's double-width mode: drawn twice as wide, its
            dot columns twice as far apart.
        width_scale: scale the drawn line's width by this factor (condensed or extended type), before it is turned.
        clipped: with ``look="captured"``, crop the line through its descenders or its ascenders
            (`CLIPPED_DESCENDER_KEPT`, `CLIPPED_ASCENDER_KEPT`), not turned first (a tight box drawn along the line).

    Returns:
        A mode ``L`` image: dark text on a light background, or, with ``look="captured"``, as a scan or
        a photo shows it.
    """
    ink = int(rng.integers(INK_GREYS[0], INK_GREYS[1] + 1))
    paper = int(rng.integers(PAPER_GREYS[0], PAPER_GREYS[1] + 1))
    measured = without_engine_drawn_marks(text) if small_caps_scale is None else small_caps_label(text)
    left, top, right, bottom = font.getbbox(measured, anchor="ls")
    _, band_top, _, band_bottom = font.getbbox(BAND_REFERENCE, anchor="ls")
    top, bottom = min(top, band_top), max(bottom, band_bottom)
    padding = 2 * font.size + (right - left) // 20  # room for margins and for rotation
    canvas = Image.new("L", (right - left + 2 * padding, bottom - top + 2 * padding), paper)
    origin_x, baseline = padding - left, padding - top
    if small_caps_scale is None:
        draw_joined(ImageDraw.Draw(canvas), (origin_x, baseline), text, font, ink, joined_pairs)
    else:
        draw_small_caps(ImageDraw.Draw(canvas), (origin_x, baseline), text, font, ink, small_caps_scale)
    if dot_matrix_print:
        canvas = dot_matrix(canvas, rng, font.size, double_width=double_width)
    if width_scale != 1.0:
        canvas = canvas.resize((max(1, round(canvas.width * width_scale)), canvas.height), Image.Resampling.BICUBIC)
    captured = look == "captured"
    if (augment or captured) and not clipped:
        canvas = augment_image(canvas, rng, photometric=False)

    is_ink = np.asarray(canvas) < paper - (paper - ink) // 4
    columns, rows = np.flatnonzero(is_ink.any(axis=0)), np.flatnonzero(is_ink.any(axis=1))
    x0, x1 = (int(columns[0]), int(columns[-1]) + 1) if columns.size else (padding, canvas.width - padding)
    y0, y1 = baseline + band_top, baseline + band_bottom
    if rows.size:
        y0, y1 = min(y0, int(rows[0])), max(y1, int(rows[-1]) + 1)
    horizontal, vertical = (CAPTURED_HORIZONTAL_MARGIN, CAPTURED_VERTICAL_MARGIN) if captured else (
        HORIZONTAL_MARGIN, VERTICAL_MARGIN)
    scene = None  # drawn after the crop, but before it for a loose crop: a scene composite is never cropped loosely
    if captured and loose_vertically:
        scene = rng.random() < scene_share
        vertical = vertical if scene else LOOSE_VERTICAL_MARGIN
    (left_margin, right_margin) = rng.uniform(*horizontal, size=2) * font.size
    (top_margin, bottom_margin) = rng.uniform(*vertical, size=2) * font.size
    left, top = max(0, round(x0 - left_margin)), max(0, round(y0 - top_margin))
    right = max(left + 2, min(canvas.width, round(x1 + right_margin)))
    bottom = max(top + 2, min(canvas.height, round(y1 + bottom_margin)))
    if captured and clipped:
        edge = rng.random()
        if edge < 1 - CLIPPED_TOP_SHARE:
            bottom = baseline + round(band_bottom * rng.uniform(*CLIPPED_DESCENDER_KEPT))
        if edge >= CLIPPED_BOTTOM_SHARE:
            top = baseline + round(band_top * rng.uniform(*CLIPPED_ASCENDER_KEPT))
        bottom = max(top + 2, bottom)
    image = canvas.crop((left, top, right, bottom))
    if captured:
        scene = rng.random() < scene_share if scene is None else scene
        if scene:
            image = scene_composite(image, rng)
        image = augment_image(image, rng, geometric=False)
        return image if scene or not scan_effects_on else scan_effects(image, rng)
    if augment:
        image = augment_image(image, rng, geometric=False)
    return image


SMALL_LETTERS = re.compile("([a-z]+)")
"""The letters small capitals draw as capitals of a smaller size (ASCII: their capitals are one letter each)."""


def small_caps_label(text: str) -> str:
    """What a line set in small capitals reads: its lower-case letters as capitals (``Center for`` -> ``CENTER FOR``),
    as forms, title pages and headings set in small capitals are transcribed."""
    return SMALL_LETTERS.sub(lambda match: match.group().upper(), text)


def draw_small_caps(draw: ImageDraw.ImageDraw, origin: tuple[float, float], text: str, font: ImageFont.FreeTypeFont,
                    fill: int, scale: float) -> None:
    """Draw ``text`` from ``origin`` (its baseline's left end) in small capitals: its capitals and other characters
    at ``font``'s size, its lower-case letters as capitals ``scale`` times as high, on the same baseline."""
    small = font.font_variant(size=max(1, round(font.size * scale)))
    x, y = origin
    for index, run in enumerate(SMALL_LETTERS.split(text)):
        if not run:
            continue
        face, run = (small, run.upper()) if index % 2 else (font, run)
        draw.text((x, y), run, font=face, fill=fill, anchor="ls")
        x += face.getlength(run)


def _font_subset(paths: list[str | None], count: int) -> list[str | None]:
    """`count` of the font files `paths`, the same whatever order they came in: the first by a hash of the file
    name."""
    return sorted(paths, key=lambda path: hashlib.sha1(Path(path or "").name.encode()).hexdigest())[:count]


def _render_example(
    example: dict,
    *,
    seed: int,
    fonts: dict[str, list[str | None]],
    caps_only_fonts: frozenset[str],
    font_style: str,
    augment: bool,
    charset: str,
    min_chars: int,
    max_chars: int,
    look: str = "clean",
    scene_share: float = SCENE_SHARE,
    scan_effects_on: bool = True,
    fraktur_share: float = 0.0,
    fraktur: tuple[tuple[str, bool], ...] = (),
    german_share: float = 0.0,
    german_fonts: dict[str, list[str | None]] | None = None,
    german_fraktur: tuple[tuple[str, bool], ...] = (),
    old_umlaut_share: float = 0.0,
    small_caps_share: float = 0.0,
    book_marks_share: float = 0.0,
    page_number_spaces: int = 1,
    loose_crop_share: float = 0.0,
    early_fraktur_marks_share: float = 0.0,
    dot_matrix_share: float = 0.0,
    double_width_share: float = 0.0,
    width_scale_share: float = 0.0,
    clipped_crop_share: float = 0.0,
) -> dict:
    """Render the sample numbered ``example["index"]``; a ``datasets.map`` function."""
    rng = np.random.default_rng([seed, example["index"]])
    if look == "captured" and rng.random() < SHORT_LINE_SHARE:
        max_chars = max(min_chars, min(max_chars, SHORT_LINE_CHARS))
    german = bool(german_share) and rng.random() < german_share  # drawn only when asked, as Fraktur below
    if german:
        text, fonts, fraktur = sample_german_text(rng, min_chars, max_chars), german_fonts, german_fraktur
    else:
        text = sample_text(rng, charset=charset, min_chars=min_chars, max_chars=max_chars)
    if look == "captured" and rng.random() < CAPITALS_SHARE and set(text.upper()) <= set(charset):
        text = text.upper()
    style = font_style if font_style != "mixed" else FONT_STYLES[int(rng.random() < 0.5)]
    candidates = fonts[style]
    path = candidates[int(rng.integers(len(candidates)))]
    if path in caps_only_fonts:
        text = text.upper()
    joined_pairs, small_caps_scale = (), None
    in_fraktur = bool(fraktur_share) and rng.random() < fraktur_share  # drawn only when asked: others stay as they were
    if in_fraktur:
        path, math_alphabet = fraktur[int(rng.integers(len(fraktur)))]
        if german:
            text = historic_spelling(text, rng, old_umlaut_share)
            if rng.random() < LINE_END_HYPHEN_SHARE:
                text = break_last_word(text, rng)
        if not font_covers(path, LONG_S):  # a face without the long s sets every s round
            text = text.replace(LONG_S, "s")
    if book_marks_share and rng.random() < book_marks_share:  # drawn only when asked
        text = with_book_marks(text, rng, lambda characters: path is not None and font_covers(path, characters),
                               quotes=("„", "“") if in_fraktur and german else ('"', '"'))
    drawn = spaced_page_number(text, rng, page_number_spaces)  # draws from rng only for a page number, when asked
    if in_fraktur:
        double = rng.random() < DOUBLE_HYPHEN_DRAWN_DOUBLE_SHARE
        early = german and bool(early_fraktur_marks_share) and rng.random() < early_fraktur_marks_share  # when asked
        drawn = as_printed(drawn, double=double, early_marks=early)
        joined_pairs = FRAKTUR_LIGATURES
        if math_alphabet:
            bold = rng.random() < FRAKTUR_BOLD_SHARE
            drawn = to_math_fraktur(decomposed_umlauts(drawn), bold=bold)
            joined_pairs = tuple(to_math_fraktur(pair, bold=bold) for pair in FRAKTUR_LIGATURES)
    if small_caps_share and not (in_fraktur or german) and rng.random() < small_caps_share:  # drawn only when asked
        small_caps_scale = float(rng.uniform(*SMALL_CAPS_SCALE))
        text = small_caps_label(text)
    loose = look == "captured" and bool(loose_crop_share) and rng.random() < loose_crop_share  # drawn only when asked
    dotted = (look == "captured" and bool(dot_matrix_share) and not (in_fraktur or german)
              and rng.random() < dot_matrix_share)  # drawn only when asked
    double_width = dotted and bool(double_width_share) and rng.random() < double_width_share  # drawn only when asked
    size = int(rng.integers(FONT_SIZES[0], FONT_SIZES[1] + 1))
    width_scale = (float(np.exp(rng.uniform(*np.log(WIDTH_SCALE))))
                   if look == "captured" and width_scale_share and rng.random() < width_scale_share else 1.0)  # when asked
    clipped = (look == "captured" and bool(clipped_crop_share) and not loose
               and rng.random() < clipped_crop_share)  # drawn only when asked
    image = render_line(drawn, _load_font(path, size), rng, augment=augment, look=look, scene_share=scene_share,
                        scan_effects_on=scan_effects_on, joined_pairs=joined_pairs, small_caps_scale=small_caps_scale,
                        loose_vertically=loose, dot_matrix_print=dotted, double_width=double_width,
                        width_scale=width_scale, clipped=clipped)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    font_name = DEFAULT_FONT_NAME if path is None else Path(path).name
    return {"image": {"bytes": buffer.getvalue(), "path": None}, "text": text, "font": font_name}


def _fonts_for(style: str, charset: str) -> list[str | None]:
    """Font files of ``style`` that can render ``charset``; ``[None]`` (Pillow's font) with a warning if none.

    Caps-only fonts are included when upper-casing keeps every text inside the charset.
    """
    caps_only = set(charset.upper()) <= set(charset)
    paths = [str(path) for path in list_fonts(style, charset, caps_only=caps_only)]
    if not paths:
        logger.warning(
            "No %s font covering the charset was found; rendering with Pillow's bundled font instead", style
        )
        return [None]
    return paths


def make_synthetic_lines(
    num_samples: int,
    *,
    font_style: str = "print",
    seed: int = 0,
    augment: bool = True,
    charset: str | None = None,
    min_chars: int = 1,
    max_chars: int = 40,
    look: str = "clean",
    scene_share: float = SCENE_SHARE,
    scan_effects: bool = True,
    max_fonts: int | None = None,
    fraktur_share: float = 0.0,
    german_share: float = 0.0,
    old_umlaut_share: float = 0.0,
    small_caps_share: float = 0.0,
    book_marks_share: float = 0.0,
    page_number_spaces: int = 1,
    loose_crop_share: float = 0.0,
    early_fraktur_marks_share: float = 0.0,
    dot_matrix_share: float = 0.0,
    double_width_share: float = 0.0,
    width_scale_share: float = 0.0,
    clipped_crop_share: float = 0.0,
    cache_dir: CacheDir = None,
    num_proc: int | None = None,
) -> datasets.Dataset:
    """Generate (or load from the cache) a dataset of synthetic text-line images.

    Args:
        num_samples: Number of lines.
        font_style: ``"print"``, ``"handwriting"`` or ``"mixed"`` (each line picks one of the two
            styles with equal probability).
        seed: Sample ``i`` is drawn from ``numpy.random.default_rng([seed, i])``.
        augment: Whether to apply the augmentations of :mod:`.augmentation`.
        charset: Characters the texts may use; ``None`` means printable ASCII. Only fonts with a
            glyph for every one of them are used. Lines drawn with a caps-only font (see
            :func:`~.fonts.is_caps_only`) are upper-cased, label included.
        min_chars: Minimum text length in characters.
        max_chars: Maximum text length in characters.
        look: ``"clean"`` (rendered lines, mildly augmented) or ``"captured"`` (the data engine: as
            scanners, receipt printers and cameras show text; see the module docstring).
        scene_share: with ``look="captured"``, the share of lines made to look like scene text.
        scan_effects: with ``look="captured"``, whether the other lines get the scanner effects.
        fraktur_share: the share of lines drawn in Fraktur (:mod:`.fraktur`: the Mathematical Fraktur alphabets of
            the mathematics fonts, blackletter text fonts), as 19th-century German books print; the label is the
            plain text. Needs such a font (``fonts-dejavu-extra``, ``fonts-noto-core``, ``fonts-blankenburg``).
        german_share: the share of lines in German (:mod:`.german_print`: Debian's German fortunes, drawn with the
            fonts that have its letters; those drawn in Fraktur spelled as 19th-century print sets them, long s
            included where the face has one). Their labels hold characters beyond printable ASCII
            (``GERMAN_PRINT_CHARACTERS``): train a vocabulary that has them (``--charset``).
        old_umlaut_share: the share of German lines drawn in Fraktur whose lower-case umlauts are printed with a small
            e above (:func:`~.german_print.old_umlauts`), labelled with ``COMBINING_SMALL_E`` (U+0364) after the
            letter, which the vocabulary then needs (as :data:`~.german_print.OLD_UMLAUTS`: one token each).
        small_caps_share: with ``look="captured"``, the share of the lines neither German nor in Fraktur set in small
            capitals (:func:`draw_small_caps`: lower-case letters drawn as smaller capitals, `SMALL_CAPS_SCALE`),
            labelled in capitals (:func:`small_caps_label`), as forms, title pages and headings set them.
        book_marks_share: the share of lines given one of a book page's marks (:mod:`.book_marks`: a footnote
            reference or a footnote's mark, a page number, an en dash, an opening quotation), labelled with them: the
            dagger, double dagger and en dash are beyond printable ASCII (``BOOK_MARK_CHARACTERS``).
        page_number_spaces: page numbers between dashes (``book_marks_share``) drawn with 1 to this many spaces between
            each dash and the number (:func:`~.book_marks.spaced_page_number`), labelled with one, as books set them
            up to two heights apart; 1: as labelled.
        loose_crop_share: with ``look="captured"``, the share of lines that, where made to look scanned, are cropped
            with `LOOSE_VERTICAL_MARGIN` of blank above and below (a field's box, a word picked out of a page), which
            the image processor cuts to half an ink height: the text reaches the model smaller than a tight crop's.
        early_fraktur_marks_share: the share of German lines drawn in Fraktur whose marks are drawn as print of about
            1780-1840 draws them (:func:`~.german_print.as_printed`): the line-end double hyphen as two short heavy
            strokes, the opening „ as two oblique hairlines (the faces draw it as two commas); labelled as the others.
        dot_matrix_share: with ``look="captured"``, the share of lines neither German nor in Fraktur printed as a
            dot-matrix or thermal-dot receipt printer prints them (:func:`~.capture_effects.dot_matrix`): glyphs made
            of dots that stand apart or run together.
        double_width_share: the share of those dotted lines printed in the printer's double-width mode, as receipts
            print their totals (`TOTAL 16.00`): drawn twice as wide, their dot columns twice as far apart.
        width_scale_share: with ``look="captured"``, the share of lines whose width is scaled by a factor within
            `WIDTH_SCALE` (condensed or extended type, a printer's pitch).
        clipped_crop_share: with ``look="captured"``, the share of lines not cropped loosely whose crop cuts through
            their descenders or ascenders (`CLIPPED_DESCENDER_KEPT`, `CLIPPED_ASCENDER_KEPT`), as tight boxes do.
        max_fonts: draw from this many of the fonts of each style only (a fixed subset, the same on every
            machine with the same fonts), as on a machine with few fonts installed; None: all of them.
        cache_dir: Cache root (``None``: ``$TEXTREC_CACHE`` or ``~/.cache/textrec/datasets``;
            ``False``: no caching). The entry's key hashes all the arguments above, the code that
            draws them, the font files, the text corpus and the Pillow version.
        num_proc: Worker processes for rendering (does not change the result).

    Returns:
        A dataset with columns ``image`` (``datasets.Image``), ``text`` and ``font`` (the font
        file name, for analysis).
    """
    if font_style not in LINE_STYLES:
        raise ValueError(f"font_style must be one of {LINE_STYLES}, got {font_style!r}")
    if look not in LOOKS:
        raise ValueError(f"look must be one of {LOOKS}, got {look!r}")
    charset = PRINTABLE_ASCII if charset is None else charset
    styles = FONT_STYLES if font_style == "mixed" else (font_style,)
    fonts = {style: _fonts_for(style, charset) for style in styles}
    if max_fonts is not None:
        if max_fonts < 1:
            raise ValueError(f"max_fonts must be None or at least 1, got {max_fonts}")
        fonts = {style: _font_subset(paths, max_fonts) for style, paths in fonts.items()}
    if not 0 <= scene_share <= 1:
        raise ValueError(f"scene_share must be within 0 and 1, got {scene_share}")
    if not 0 <= fraktur_share <= 1:
        raise ValueError(f"fraktur_share must be within 0 and 1, got {fraktur_share}")
    fraktur = tuple((str(path), math_alphabet) for path, math_alphabet in fraktur_fonts()) if fraktur_share else ()
    if fraktur_share and not fraktur:
        raise ValueError("fraktur_share needs a font drawing Fraktur: install fonts-dejavu-extra or fonts-blankenburg "
                         "(bash scripts/setup.sh --release_fonts)")
    if not 0 <= german_share <= 1:
        raise ValueError(f"german_share must be within 0 and 1, got {german_share}")
    if not 0 <= old_umlaut_share <= 1:
        raise ValueError(f"old_umlaut_share must be within 0 and 1, got {old_umlaut_share}")
    if not 0 <= small_caps_share <= 1:
        raise ValueError(f"small_caps_share must be within 0 and 1, got {small_caps_share}")
    if not 0 <= book_marks_share <= 1:
        raise ValueError(f"book_marks_share must be within 0 and 1, got {book_marks_share}")
    if page_number_spaces < 1:
        raise ValueError(f"page_number_spaces must be at least 1, got {page_number_spaces}")
    if not 0 <= loose_crop_share <= 1:
        raise ValueError(f"loose_crop_share must be within 0 and 1, got {loose_crop_share}")
    if not 0 <= early_fraktur_marks_share <= 1:
        raise ValueError(f"early_fraktur_marks_share must be within 0 and 1, got {early_fraktur_marks_share}")
    if not 0 <= dot_matrix_share <= 1:
        raise ValueError(f"dot_matrix_share must be within 0 and 1, got {dot_matrix_share}")
    if not 0 <= double_width_share <= 1:
        raise ValueError(f"double_width_share must be within 0 and 1, got {double_width_share}")
    if not 0 <= width_scale_share <= 1:
        raise ValueError(f"width_scale_share must be within 0 and 1, got {width_scale_share}")
    if not 0 <= clipped_crop_share <= 1:
        raise ValueError(f"clipped_crop_share must be within 0 and 1, got {clipped_crop_share}")
    german_fonts = {style: _fonts_for(style, charset + GERMAN_LETTERS) for style in styles} if german_share else None
    german_fraktur = tuple((path, math_alphabet) for path, math_alphabet in fraktur if font_covers(path, (
        COMBINING_DIAERESIS + GERMAN_PRINT_CHARACTERS.replace("ÄÖÜäöü", "") if math_alphabet else GERMAN_PRINT_CHARACTERS
    ).replace(LONG_S, "")))  # the long s where the face has one (most 19th-century faces on npm lack it)
    if german_share and fraktur_share and not german_fraktur:
        raise ValueError("german_share with fraktur_share needs a Fraktur font with German letters: "
                         "install fonts-stix or fonts-blankenburg (bash scripts/setup.sh --release_fonts)")
    caps_only_fonts = frozenset(
        path for paths in fonts.values() for path in paths if path and is_caps_only(path)
    )
    arguments = {
        "num_samples": num_samples,
        "font_style": font_style,
        "seed": seed,
        "augment": augment,
        "charset": charset,
        "min_chars": min_chars,
        "max_chars": max_chars,
        **({"look": look} if look != "clean" else {}),
        **({"scene_share": scene_share} if scene_share != SCENE_SHARE else {}),
        **({"scan_effects": scan_effects} if not scan_effects else {}),
        "fonts": fonts_fingerprint([Path(path) for paths in fonts.values() for path in paths if path]),
        **({"fraktur_share": fraktur_share, "fraktur_fonts": fonts_fingerprint([Path(path) for path, _ in fraktur]),
            "fraktur_ligatures": FRAKTUR_LIGATURES}
           if fraktur_share else {}),
        **({"german_share": german_share, "german_corpus": german_corpus_fingerprint(),
            "german_fonts": fonts_fingerprint([Path(path) for paths in german_fonts.values() for path in paths if path]
                                              + [Path(path) for path, _ in german_fraktur])} if german_share else {}),
        **({"old_umlaut_share": old_umlaut_share} if old_umlaut_share else {}),
        **({"small_caps_share": small_caps_share} if small_caps_share else {}),
        **({"book_marks_share": book_marks_share} if book_marks_share else {}),
        **({"page_number_spaces": page_number_spaces} if page_number_spaces > 1 else {}),
        **({"loose_crop_share": loose_crop_share} if loose_crop_share else {}),
        **({"early_fraktur_marks_share": early_fraktur_marks_share} if early_fraktur_marks_share else {}),
        **({"dot_matrix_share": dot_matrix_share} if dot_matrix_share else {}),
        **({"double_width_share": double_width_share} if double_width_share else {}),
        **({"width_scale_share": width_scale_share} if width_scale_share else {}),
        **({"clipped_crop_share": clipped_crop_share} if clipped_crop_share else {}),
        "corpus": corpus_fingerprint(),
        "pillow": PIL.__version__,
    }

    def build(scratch: Path | None) -> datasets.Dataset:
        fn_kwargs = {
            "seed": seed,
            "fonts": fonts,
            "caps_only_fonts": caps_only_fonts,
            "font_style": font_style,
            "augment": augment,
            "charset": charset,
            "min_chars": min_chars,
            "max_chars": max_chars,
            "look": look,
            "scene_share": scene_share,
            "scan_effects_on": scan_effects,
            "fraktur_share": fraktur_share,
            "fraktur": fraktur,
            "german_share": german_share,
            "german_fonts": german_fonts,
            "german_fraktur": german_fraktur,
            "old_umlaut_share": old_umlaut_share,
            "small_caps_share": small_caps_share,
            "book_marks_share": book_marks_share,
            "page_number_spaces": page_number_spaces,
            "loose_crop_share": loose_crop_share,
            "early_fraktur_marks_share": early_fraktur_marks_share,
            "dot_matrix_share": dot_matrix_share,
            "double_width_share": double_width_share,
            "width_scale_share": width_scale_share,
            "clipped_crop_share": clipped_crop_share,
        }
        desc = f"Rendering {num_samples} synthetic {font_style} lines"
        return generate_indexed(
            num_samples, _render_example, fn_kwargs, FEATURES, scratch, num_proc=num_proc, desc=desc
        )

    return cached_dataset("synthetic-lines", arguments, build, cache_dir)
