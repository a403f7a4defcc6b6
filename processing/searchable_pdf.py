"""Searchable PDFs: each page's image with the lines read from it laid over it as invisible text.

    from textrec.processing.searchable_pdf import write_searchable_pdf

    write_searchable_pdf([(image, read_page(image, recognizer, detector))], "scan-read.pdf")

What ocrmypdf and Tesseract's `pdf` output make of a scan: the page looks as scanned, and a PDF viewer finds, selects
and copies its text where it lies on the page. Each line's text is set in a font drawn for the document whose glyphs are
all blank (`glyphless_font`, as Tesseract's GlyphLessFont), one glyph per character, so that any character the reader
writes (the long s, an umlaut's small e) is kept and copied as itself; the text is drawn invisibly (PDF text render
mode 3) and stretched over its line's box, along the direction the line runs in the image. Written with pypdfium2, an
optional dependency (`pip install "textrec[pdf]"`), and fontTools.
"""

from __future__ import annotations

import ctypes
import io
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image

from .document_pages import POINTS_PER_INCH, import_pypdfium2
from .page_reading import PageReading

DEFAULT_DPI = 300
"""Dots per inch of a page image that does not say its own (a photo): its PDF page is its size at this resolution."""
UNITS_PER_EM = 1000
GLYPH_ADVANCE = 500
"""Every blank glyph's width, in font units; a line's text is stretched to its box whatever its characters."""
DESCENT = 200
"""The glyphs' depth below the baseline, in font units: a line's baseline lies this share of its text's height above
its foot."""
TEXT_HEIGHT_SHARE = 0.6
"""The share of its box's height a line's text is set in, centred: detected boxes hold some blank above and below and
overlap their neighbours', and a PDF reader takes text whose glyphs overlap in height for one line."""
WRITING = "writing searchable PDFs"
JPEG_QUALITY = 90
"""A colour page image is stored as a JPEG of this quality; grey and black-and-white ones losslessly (Flate)."""


def glyphless_font(characters: str) -> bytes:
    """A TrueType font with one glyph, `GLYPH_ADVANCE` wide, for each of `characters` (a line break left out), so that
    a PDF reader maps every glyph back to its own character; each glyph is a box filling its cell, which text drawn
    invisibly never shows (a glyph with no outline would have no place on the page to be found or selected at)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    kept = sorted(set(characters) - {"\n", "\r"})
    names = [".notdef", *(f"uni{ord(character):04X}" for character in kept)]
    builder = FontBuilder(UNITS_PER_EM, isTTF=True)
    builder.setupGlyphOrder(names)
    builder.setupCharacterMap({ord(character): name for character, name in zip(kept, names[1:])})
    pen = TTGlyphPen(None)  # a box filling the glyph's cell: never drawn (render mode 3); it places the character
    pen.moveTo((0, -DESCENT))
    pen.lineTo((0, UNITS_PER_EM - DESCENT))
    pen.lineTo((GLYPH_ADVANCE, UNITS_PER_EM - DESCENT))
    pen.lineTo((GLYPH_ADVANCE, -DESCENT))
    pen.closePath()
    cell = pen.glyph()
    builder.setupGlyf({name: cell for name in names})
    builder.setupHorizontalMetrics({name: (GLYPH_ADVANCE, 0) for name in names})
    builder.setupHorizontalHeader(ascent=UNITS_PER_EM - DESCENT, descent=-DESCENT)
    builder.setupNameTable({"familyName": "TextrecGlyphless", "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=UNITS_PER_EM - DESCENT, sTypoDescender=-DESCENT, usWinAscent=UNITS_PER_EM - DESCENT,
                     usWinDescent=DESCENT)
    builder.setupPost()
    buffer = io.BytesIO()
    builder.save(buffer)
    return buffer.getvalue()


def page_dpi(image: Image.Image) -> float:
    """The resolution an image says it was scanned or rendered at (its `dpi` information), else `DEFAULT_DPI`."""
    dpi = image.info.get("dpi")
    try:
        horizontal = float(dpi[0])
    except (TypeError, IndexError, ValueError):
        return DEFAULT_DPI
    return horizontal if horizontal > 1 else DEFAULT_DPI


def require_pdf_writer() -> None:
    """An `ImportError` saying what to install where pypdfium2, which writes the PDFs, is missing."""
    import_pypdfium2(WRITING)


def _page_image_object(pdfium, document, image: Image.Image):
    """The page image as a PDF image object of `document` (`pdfium`: the pypdfium2 module): black and white or grey as
    grey, losslessly; colour as a JPEG."""
    image = image.convert("RGB") if image.mode not in ("L", "RGB") else image
    if image.mode == "RGB":
        values = np.asarray(image)
        if (values[..., 0] == values[..., 1]).all() and (values[..., 1] == values[..., 2]).all():
            image = image.convert("L")
    placed = pdfium.PdfImage.new(document)
    if image.mode == "L":
        placed.set_bitmap(pdfium.PdfBitmap.from_pil(image))
    else:
        encoded = io.BytesIO()
        image.save(encoded, format="JPEG", quality=JPEG_QUALITY)
        encoded.seek(0)
        placed.load_jpeg(encoded, inline=True)
    return placed


def _line_matrix(box: list[float], angle: int, text_length: int, scale: float, page_height: float):
    """The text matrix (a, b, c, d, e, f) and font size that lay `text_length` glyphs along `box` (image pixels,
    `[x0, y0, x1, y1]`), `TEXT_HEIGHT_SHARE` of it high and centred across it, running at `angle` degrees
    counter-clockwise (0, 90, 180 or 270), in PDF points (`scale` points a pixel, y up from the page's foot)."""
    x0, y0, x1, y1 = (value * scale for value in box)
    left, right, bottom, top = x0, x1, page_height - y1, page_height - y0
    along, across = (right - left, top - bottom) if angle in (0, 180) else (top - bottom, right - left)
    size = max(TEXT_HEIGHT_SHARE * across, 1e-3)
    stretch = along / max(text_length * GLYPH_ADVANCE / UNITS_PER_EM * size, 1e-6)
    cos, sin = round(math.cos(math.radians(angle))), round(math.sin(math.radians(angle)))
    # The baseline's start: from the box's centre half the line back along it, and down across it to the baseline.
    below_centre = size / 2 - DESCENT / UNITS_PER_EM * size
    origin_x = (left + right) / 2 - along / 2 * cos + below_centre * sin
    origin_y = (bottom + top) / 2 - along / 2 * sin - below_centre * cos
    return (stretch * cos, stretch * sin, -sin, cos, origin_x, origin_y), size


def write_searchable_pdf(pages: Iterable[tuple[Image.Image, PageReading]], path) -> Path:
    """Writes a PDF of `pages` to `path`: each `(image, reading)` one page of the image's size at its resolution
    (`page_dpi`), the image filling it, and each line of the reading (`read_page`'s, boxes in the image's pixels) as
    invisible text over its box, running as the page was read (a page read turned: its lines across the image).
    Returns the path."""
    pdfium = import_pypdfium2(WRITING)
    import pypdfium2.raw as pdfium_c

    pages = list(pages)
    document = pdfium.PdfDocument.new()
    characters = "".join(line.text for _, reading in pages for line in reading.lines)
    font_data = glyphless_font(characters)
    font_buffer = (ctypes.c_uint8 * len(font_data)).from_buffer_copy(font_data)
    font = pdfium_c.FPDFText_LoadFont(document, font_buffer, len(font_data), pdfium_c.FPDF_FONT_TRUETYPE, 1)
    if not font:
        raise RuntimeError("PDFium could not load the text layer's font")
    try:
        for image, reading in pages:
            scale = POINTS_PER_INCH / page_dpi(image)
            width, height = image.width * scale, image.height * scale
            page = document.new_page(width, height)
            placed = _page_image_object(pdfium, document, image)
            placed.set_matrix(pdfium.PdfMatrix().scale(width, height))
            page.insert_obj(placed)
            for line in reading.lines:
                if not line.text.strip():
                    continue
                matrix, size = _line_matrix(line.box, reading.text_angle(line), len(line.text), scale, height)
                text = pdfium_c.FPDFPageObj_CreateTextObj(document, font, size)
                encoded = ctypes.create_string_buffer((line.text + "\0").encode("utf-16-le"))
                pdfium_c.FPDFText_SetText(text, ctypes.cast(encoded, ctypes.POINTER(pdfium_c.FPDF_WCHAR)))
                pdfium_c.FPDFTextObj_SetTextRenderMode(text, pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE)
                pdfium_c.FPDFPageObj_Transform(text, *matrix)
                pdfium_c.FPDFPage_InsertObject(page.raw, text)
            page.gen_content()
            page.close()
        path = Path(path)
        document.save(str(path))
    finally:
        pdfium_c.FPDFFont_Close(font)
        document.close()
    return path
