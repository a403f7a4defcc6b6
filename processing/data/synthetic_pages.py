"""Synthetic pages for the text-line detector: books, newspapers, receipts and forms, each with its lines' boxes.

Each page is a function of ``(seed, index)`` alone (``numpy.random.default_rng([seed, index])``): its layout (one
to four columns, headings, paragraphs, blank lines, rules and tables, receipts' items and prices, forms' labels and
values), its fonts (the print fonts; Fraktur for some pages: :mod:`.fraktur`), its text (:mod:`.text_sampling`, and
German for the Fraktur pages: :mod:`.german_print`), then what scanners and cameras do to a page: skew, blur,
noise, low resolution, binarisation, paper texture, uneven light (:mod:`.capture_effects`), JPEG, light text on
dark, a page photographed on a table. A line is one run of text; two runs on one printed row with a wide gap
between them (an item and its price) are two lines, as receipts' and forms' annotations box them.

Text is drawn at the sizes the detector meets on real pages scaled to its input (`BODY_TEXT_SIZES`); a page's
size in pixels (`PAGE_LONG_SIDE`) is drawn from a range that reaches below the detector's input size, as if a part
of a larger page, since the detector learns from crops of pages anyway and every line drawn costs time.
`make_synthetic_pages` renders and caches a dataset of them.
"""

from __future__ import annotations

import functools
import io
import json
import math
from pathlib import Path

import datasets
import numpy as np
import PIL
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from .capture_effects import binarize, ink_spread, low_resolution, paper_texture, show_through, specks, uneven_light
from .fonts import fonts_fingerprint, list_fonts
from .fraktur import font_covers, fraktur_fonts, to_math_fraktur
from .generation import CacheDir, cached_dataset, generate_indexed
from .german_print import (
    COMBINING_DIAERESIS,
    decomposed_umlauts,
    german_corpus_fingerprint,
    historic_spelling,
    load_german_corpus,
    sample_german_text,
)
from .text_sampling import corpus_fingerprint, sample_number, sample_text

FEATURES = datasets.Features({"image": datasets.Image(), "lines": datasets.Value("string")})
"""A page's image and its lines, as JSON: a list of ``{"text", "polygon"}``."""

PAGE_LONG_SIDE = (640, 1400)
"""The page's longer side in pixels (the detector scales pages to 1280)."""
LAYOUTS = {"book": 0.35, "newspaper": 0.2, "receipt": 0.25, "form": 0.2}
"""The kinds of page and their shares."""
BODY_TEXT_SIZES = {"book": (12, 34), "newspaper": (7, 18), "receipt": (12, 30), "form": (10, 24)}
"""Font sizes in pixels of each kind's body text."""
FRAKTUR_PAGE_SHARE = {"book": 0.3, "newspaper": 0.4, "receipt": 0.0, "form": 0.0}
PAGE_NUMBER_SHARE = 0.6
PAGE_NUMBER_DASHES = ("—", "–", "-")
"""Share of book pages with a page number at their head or foot, and the dashes it may stand between."""
SKEW_DEGREES = 3.0
SKEW_SHARE = 0.5
INVERTED_SHARE = 0.08
PHOTOGRAPHED_SHARE = 0.2
PAGE_EFFECTS = {"show_through": (show_through, 0.25), "specks": (specks, 0.3), "low_resolution": (low_resolution, 0.2),
                "ink_spread": (ink_spread, 0.2), "binarize": (binarize, 0.15), "paper_texture": (paper_texture, 0.4),
                "uneven_light": (uneven_light, 0.25)}
"""The scanner effects of :mod:`.capture_effects` applied to a whole page, with their probabilities."""


@functools.cache
def _page_fonts() -> tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]:
    """The print fonts, and the Fraktur fonts that draw German (with the long s and umlauts)."""
    fraktur = tuple((str(path), math) for path, math in fraktur_fonts()
                    if font_covers(path, COMBINING_DIAERESIS + "ſß" if math else "ſßäöü"))
    return tuple(str(path) for path in list_fonts("print")), fraktur


@functools.cache
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


class _Typesetter:
    """Draws runs of text on a page and records each run's text and box."""

    def __init__(self, rng: np.random.Generator, page: Image.Image, ink: int, fraktur: tuple[str, bool] | None):
        self.rng, self.draw, self.ink, self.fraktur = rng, ImageDraw.Draw(page), ink, fraktur
        self.lines: list[dict] = []

    @property
    def text_kind(self) -> str:
        """What `fit` samples on this page: German on Fraktur pages, else English."""
        return "german" if self.fraktur else "english"

    def fit(self, font: ImageFont.FreeTypeFont, width: float, kind: str, caps: bool = False) -> str:
        """A text that fills about `width` pixels in `font` (cut at a word to fit)."""
        average = max(font.getlength("abcdefghijklmnopqrstuvwxyz") / 26, 1.0)
        chars = max(1, int(width / average))
        if kind == "german":
            text = historic_spelling(sample_german_text(self.rng, max(1, chars - 4), chars + 2), self.rng)
        elif kind == "number":
            text = sample_number(self.rng)
        else:
            text = sample_text(self.rng, min_chars=max(1, chars - 4), max_chars=chars + 2)
        if caps:
            text = text.upper()
        while len(text) > 1 and self.length(font, text) > width:
            cut = text.rfind(" ")
            text = text[:cut] if cut > 0 else text[:-1]
        return text.strip()

    def drawn(self, text: str) -> str:
        if self.fraktur and self.fraktur[1]:
            return to_math_fraktur(decomposed_umlauts(text))
        return text

    def length(self, font: ImageFont.FreeTypeFont, text: str) -> float:
        return font.getlength(self.drawn(text))

    def put(self, x: float, y: float, text: str, font: ImageFont.FreeTypeFont) -> None:
        if not text.strip():
            return
        drawn = self.drawn(text)
        box = self.draw.textbbox((x, y), drawn, font=font)
        if box[2] - box[0] < 2 or box[3] - box[1] < 2:
            return
        self.draw.text((x, y), drawn, font=font, fill=self.ink)
        self.lines.append({"text": text, "polygon": [[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]]})

    def put_spaced(self, x: float, y: float, pieces: list[str], gap: float, font: ImageFont.FreeTypeFont) -> None:
        """`pieces` drawn `gap` pixels apart from `x` on, as one line (`— 170 —`): its text the pieces with one space
        between them, its box around all of them."""
        boxes = []
        for piece in pieces:
            drawn = self.drawn(piece)
            boxes.append(self.draw.textbbox((x, y), drawn, font=font))
            self.draw.text((x, y), drawn, font=font, fill=self.ink)
            x += font.getlength(drawn) + gap
        left, top = min(box[0] for box in boxes), min(box[1] for box in boxes)
        right, bottom = max(box[2] for box in boxes), max(box[3] for box in boxes)
        self.lines.append({"text": " ".join(pieces),
                           "polygon": [[left, top], [right, top], [right, bottom], [left, bottom]]})


def _choose(rng: np.random.Generator, shares: dict[str, float]) -> str:
    names = list(shares)
    return names[int(rng.choice(len(names), p=np.asarray(list(shares.values())) / sum(shares.values())))]


def _lay_out_columns(setter: _Typesetter, fonts: tuple[str, ...], box: tuple[float, float, float, float], columns: int,
                     size_range: tuple[int, int], kind: str) -> None:
    """Books and newspapers: headings and paragraphs flowing down `columns` columns of `box`, with rules."""
    rng = setter.rng
    left, top, right, bottom = box
    size = int(rng.integers(*size_range))
    gutter = size * float(rng.uniform(1.0, 3.0))
    column_width = (right - left - gutter * (columns - 1)) / columns
    body = setter.fraktur[0] if setter.fraktur else fonts[int(rng.integers(len(fonts)))]
    leading = float(rng.uniform(1.05, 1.5) if kind == "newspaper" else rng.uniform(1.15, 1.7))  # newspapers set dense
    text_kind = setter.text_kind
    draw = setter.draw
    if columns > 1 and rng.random() < 0.5:
        for column in range(1, columns):
            x = left + column * (column_width + gutter) - gutter / 2
            draw.line([(x, top), (x, bottom)], fill=setter.ink, width=1)
    for column in range(columns):
        x0 = left + column * (column_width + gutter)
        y = top
        while y < bottom:
            choice = rng.random()
            if choice < 0.15:  # a heading: larger, perhaps centred, in capitals or another font
                heading_size = int(size * rng.uniform(1.2, 2.2))
                path = body if setter.fraktur or rng.random() < 0.5 else fonts[int(rng.integers(len(fonts)))]
                font = _font(path, heading_size)
                text = setter.fit(font, column_width * rng.uniform(0.3, 1.0), text_kind, caps=rng.random() < 0.4 and not setter.fraktur)
                if y + heading_size * 1.3 > bottom:
                    break
                width = setter.length(font, text)
                offset = (column_width - width) / 2 if rng.random() < 0.5 else 0
                setter.put(x0 + max(offset, 0), y, text, font)
                y += heading_size * rng.uniform(1.4, 2.2)
            elif choice < 0.2:  # a rule
                draw.line([(x0, y + size / 2), (x0 + column_width * rng.uniform(0.3, 1.0), y + size / 2)], fill=setter.ink,
                          width=int(rng.integers(1, 3)))
                y += size * 1.5
            else:  # a paragraph
                font = _font(body, size)
                lines = int(rng.integers(2, 14))
                indent = size * rng.uniform(0, 2.5)
                for line in range(lines):
                    if y + size * 1.2 > bottom:
                        break
                    start = indent if line == 0 else 0
                    width = (column_width - start) * (rng.uniform(0.2, 0.95) if line == lines - 1 else rng.uniform(0.9, 1.0))
                    setter.put(x0 + start, y, setter.fit(font, width, text_kind), font)
                    y += size * leading
                y += size * rng.uniform(0.2, 1.2)


def _lay_out_rows(setter: _Typesetter, fonts: tuple[str, ...], box: tuple[float, float, float, float],
                  size_range: tuple[int, int], kind: str) -> None:
    """Receipts and forms: rows of one, two or three runs (a label or item, a value or price, a quantity) with wide
    gaps between them, centred headers, rules and blank rows."""
    rng = setter.rng
    left, top, right, bottom = box
    size = int(rng.integers(*size_range))
    path = fonts[int(rng.integers(len(fonts)))]
    font = _font(path, size)
    caps = kind == "receipt" and rng.random() < 0.6
    width = right - left
    y = top
    draw = setter.draw
    while y + size * 1.3 < bottom:
        choice = rng.random()
        if choice < 0.12:  # a centred header row
            text = setter.fit(font, width * rng.uniform(0.3, 0.9), "english", caps=caps)
            setter.put(left + (width - setter.length(font, text)) / 2, y, text, font)
        elif choice < 0.18:  # a rule: dashes or a line
            if rng.random() < 0.5:
                draw.line([(left, y + size / 2), (right, y + size / 2)], fill=setter.ink, width=1)
            else:
                dashes = "-" * max(1, int(width / max(font.getlength("-"), 1)) - 1)
                draw.text((left, y), dashes, font=font, fill=setter.ink)
        elif choice < 0.25:  # a blank row
            pass
        else:  # label and value, item and price (and a quantity)
            label = setter.fit(font, width * rng.uniform(0.2, 0.55), "english", caps=caps)
            value = sample_number(rng)
            value = value.upper() if caps else value
            setter.put(left, y, label, font)
            value_x = right - setter.length(font, value) if kind == "receipt" or rng.random() < 0.5 else left + width * 0.6
            if value_x - (left + setter.length(font, label)) > size * 1.5:
                setter.put(value_x, y, value, font)
            if kind == "receipt" and rng.random() < 0.3:
                quantity = str(int(rng.integers(1, 20)))
                setter.put(left + width * 0.55, y, quantity, font)
        y += size * rng.uniform(1.2, 1.8)


def _number_page(setter: _Typesetter, fonts: tuple[str, ...], box: tuple[float, float, float, float],
                 size_range: tuple[int, int]) -> tuple[float, float, float, float]:
    """A book page's number, centred at its head or foot, alone or between dashes set well apart from it (`— 170 —`,
    as the 19th-century books of the real pages print it); returns what is left of `box` for the text."""
    rng = setter.rng
    left, top, right, bottom = box
    size = int(rng.integers(*size_range))
    path = setter.fraktur[0] if setter.fraktur else fonts[int(rng.integers(len(fonts)))]
    font = _font(path, size)
    number = str(int(rng.integers(1, 1000)))
    dashes = [dash for dash in PAGE_NUMBER_DASHES if dash and font_covers(path, dash)]
    dash = dashes[int(rng.integers(len(dashes)))] if dashes and rng.random() < 0.7 else ""
    pieces = [dash, number, dash] if dash else [number]
    gap = size * float(rng.uniform(0.3, 2.0))
    width = sum(setter.length(font, piece) for piece in pieces) + gap * (len(pieces) - 1)
    at_head = rng.random() < 0.6
    y = top if at_head else bottom - size * 1.3
    setter.put_spaced(left + (right - left - width) / 2, y, pieces, gap, font)
    room = size * float(rng.uniform(1.8, 3.5))
    return (left, top + room, right, bottom) if at_head else (left, top, right, bottom - room)


def _rotate(image: Image.Image, lines: list[dict], degrees: float, fill: int) -> Image.Image:
    """The page turned by `degrees` (counter-clockwise) about its centre, its lines' polygons with it."""
    rotated = image.rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=fill)
    centre_x, centre_y = image.width / 2, image.height / 2
    angle = math.radians(degrees)
    cosine, sine = math.cos(angle), math.sin(angle)
    for line in lines:
        line["polygon"] = [[centre_x + (x - centre_x) * cosine + (y - centre_y) * sine,
                            centre_y - (x - centre_x) * sine + (y - centre_y) * cosine] for x, y in line["polygon"]]
    return rotated


def render_page(seed: int, index: int) -> tuple[Image.Image, list[dict]]:
    """The page numbered `index` of the stream `seed`: a greyscale image and its lines, each ``{"text", "polygon"}``
    (4 corners in the image's pixels: top left, top right, bottom right, bottom left)."""
    rng = np.random.default_rng([seed, index])
    fonts, fraktur_choices = _page_fonts()
    layout = _choose(rng, LAYOUTS)
    long_side = int(rng.integers(*PAGE_LONG_SIDE))
    if layout == "receipt":
        width, height = int(long_side * rng.uniform(0.3, 0.6)), long_side
    else:
        width, height = int(long_side / rng.uniform(1.3, 1.5)), long_side
    paper = int(rng.integers(200, 256))
    ink = int(rng.integers(0, 70))
    page = Image.new("L", (width, height), paper)
    fraktur = None
    if fraktur_choices and load_german_corpus() and rng.random() < FRAKTUR_PAGE_SHARE[layout]:
        fraktur = fraktur_choices[int(rng.integers(len(fraktur_choices)))]
    setter = _Typesetter(rng, page, ink, fraktur)
    margins = [width * rng.uniform(0.03, 0.12), height * rng.uniform(0.02, 0.08)]
    box = (margins[0], margins[1], width - margins[0], height - margins[1] * rng.uniform(0.5, 1.5))
    sizes = BODY_TEXT_SIZES[layout]
    if layout == "book":
        if rng.random() < PAGE_NUMBER_SHARE:
            box = _number_page(setter, fonts, box, sizes)
        _lay_out_columns(setter, fonts, box, 1 if rng.random() < 0.8 else 2, sizes, layout)
    elif layout == "newspaper":
        _lay_out_columns(setter, fonts, box, int(rng.integers(2, 6)), sizes, layout)
    else:
        _lay_out_rows(setter, fonts, box, sizes, layout)
    lines = setter.lines
    if rng.random() < SKEW_SHARE:
        page = _rotate(page, lines, float(rng.uniform(-SKEW_DEGREES, SKEW_DEGREES)), paper)
    for effect, probability in PAGE_EFFECTS.values():
        if rng.random() < probability:
            page = effect(page, rng)
    if rng.random() < 0.3:
        page = page.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.2))))
    if rng.random() < PHOTOGRAPHED_SHARE:
        page, lines = _photographed(page, lines, rng)
    if rng.random() < INVERTED_SHARE:
        page = Image.eval(page, lambda value: 255 - value)
    if rng.random() < 0.3:
        buffer = io.BytesIO()
        page.save(buffer, format="JPEG", quality=int(rng.integers(30, 90)))
        page = Image.open(buffer).convert("L")
    return page, lines


def _photographed(page: Image.Image, lines: list[dict], rng: np.random.Generator) -> tuple[Image.Image, list[dict]]:
    """The page lying on a darker, textured surface, with room around it (a photo of a receipt or a book page)."""
    border_x, border_y = (int(side * rng.uniform(0.05, 0.3)) for side in page.size)
    tone = int(rng.integers(20, 150))
    surface = rng.normal(tone, 12, (page.height + 2 * border_y, page.width + 2 * border_x)).clip(0, 255).astype(np.uint8)
    canvas = Image.fromarray(surface).filter(ImageFilter.GaussianBlur(2))
    canvas.paste(page, (border_x, border_y))
    for line in lines:
        line["polygon"] = [[x + border_x, y + border_y] for x, y in line["polygon"]]
    scale = page.height / canvas.height if rng.random() < 0.5 else 1.0  # the photo framed to the page's size
    if scale != 1.0:
        canvas = canvas.resize((round(canvas.width * scale), round(canvas.height * scale)), Image.Resampling.BILINEAR)
        for line in lines:
            line["polygon"] = [[x * scale, y * scale] for x, y in line["polygon"]]
    return canvas, lines


def _render_example(example: dict, *, seed: int) -> dict:
    """Render the page numbered ``example["index"]``; a ``datasets.map`` function."""
    page, lines = render_page(seed, example["index"])
    buffer = io.BytesIO()
    page.save(buffer, format="PNG", optimize=False, compress_level=1)
    for line in lines:
        line["polygon"] = [[round(x, 1), round(y, 1)] for x, y in line["polygon"]]
    return {"image": {"bytes": buffer.getvalue(), "path": None}, "lines": json.dumps(lines, ensure_ascii=False)}


def make_synthetic_pages(num_pages: int, *, seed: int = 0, cache_dir: CacheDir = None,
                         num_proc: int | None = None) -> datasets.Dataset:
    """Render (or load from the cache) `num_pages` pages of the stream `seed`: columns ``image`` and ``lines``
    (JSON: a list of ``{"text", "polygon"}``). The cache key hashes the arguments, the code that draws them, the
    fonts, the text corpora and the Pillow version."""
    fonts, fraktur = _page_fonts()
    arguments = {
        "num_pages": num_pages,
        "seed": seed,
        "fonts": fonts_fingerprint([Path(path) for path in fonts] + [Path(path) for path, _ in fraktur]),
        "corpus": corpus_fingerprint(),
        "german_corpus": german_corpus_fingerprint(),
        "pillow": PIL.__version__,
    }

    def build(scratch: Path | None) -> datasets.Dataset:
        return generate_indexed(num_pages, _render_example, {"seed": seed}, FEATURES, scratch, num_proc=num_proc,
                                desc=f"Rendering {num_pages} synthetic pages")

    return cached_dataset("synthetic-pages", arguments, build, cache_dir)
