"""The pages of a document file as images, for the page reader: a PDF's pages, a multi-page TIFF's frames.

    from textrec.processing.document_pages import iter_document_pages

    for number, page in iter_document_pages("scan.pdf"):     # 1, PIL image; 2, ...
        ...

A PDF page that holds a scan (an image covering most of the page, as scanners and ocrmypdf write them) is rendered at
that image's own resolution, so that its lines reach the page reader with the pixels the scanner gave them, neither
blurred by a lower resolution nor enlarged; a page of vector text (a document printed to PDF) at `PDF_DPI`. PDFs are
read with pypdfium2 (PDFium's Python binding), an optional dependency: `pip install "textrec[pdf]"`. A TIFF file
holding several frames (a fax, a scanner's multi-page file) gives each frame as a page.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageOps

PDF_SUFFIX = ".pdf"
MULTI_PAGE_IMAGE_SUFFIXES = (".tif", ".tiff")
"""Image files whose frames are a document's pages (a GIF's or WebP's frames are an animation)."""
PDF_DPI = 300
"""Dots per inch a PDF page without a scan on it is rendered at (a scanner's usual resolution for text)."""
MAX_PDF_DPI = 600
"""A scan on a PDF page is rendered at its own resolution, at most this (and at least 72)."""
SCAN_MIN_AREA_SHARE = 0.5
"""An image covering at least this share of its PDF page is taken for the page's scan."""
POINTS_PER_INCH = 72


def is_pdf(path) -> bool:
    """Whether `path` names a PDF file (by its suffix)."""
    return isinstance(path, (str, Path)) and Path(path).suffix.lower() == PDF_SUFFIX


def import_pypdfium2(purpose: str = "reading PDFs"):
    """The pypdfium2 module; an `ImportError` saying what to install (for `purpose`) where it is missing."""
    try:
        import pypdfium2
    except ImportError as error:
        raise ImportError(f'{purpose} needs pypdfium2: pip install "textrec[pdf]"') from error
    return pypdfium2


def open_pdf(path):
    """The PDF at `path` as a `pypdfium2.PdfDocument`; a `ValueError` naming the file for what is not a readable PDF
    (missing, damaged, not a PDF, or encrypted with a password)."""
    if not Path(path).is_file():
        raise ValueError(f"PDF file '{path}' not found")
    pdfium = import_pypdfium2()
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        raise ValueError(f"{path}: not a readable PDF ({error})") from error


def document_page_count(path) -> int:
    """How many pages the file at `path` holds: a PDF's pages, a TIFF's frames, 1 for any other image file. A
    `ValueError` naming the file where it cannot be read."""
    if is_pdf(path):
        document = open_pdf(path)
        try:
            return len(document)
        finally:
            document.close()
    if Path(path).suffix.lower() not in MULTI_PAGE_IMAGE_SUFFIXES:
        return 1
    with _open_image(path) as opened:
        return getattr(opened, "n_frames", 1)


def _open_image(path) -> Image.Image:
    """The image file at `path`, opened (not yet read); a `ValueError` naming it where it cannot be."""
    try:
        return Image.open(path)
    except (OSError, SyntaxError, ValueError) as error:
        raise ValueError(f"cannot read image file {str(path)!r}: {error}") from error


def scan_dpi(page) -> float | None:
    """The resolution (dots per inch, the larger of its two directions) of the image covering most of a
    `pypdfium2.PdfPage`, or None where no image covers `SCAN_MIN_AREA_SHARE` of it."""
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    best = None
    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]):
        left, bottom, right, top = image.get_bounds()
        area = (right - left) * (top - bottom)
        if right <= left or top <= bottom or area < SCAN_MIN_AREA_SHARE * width * height:
            continue
        pixels_wide, pixels_high = image.get_px_size()
        dpi = max(pixels_wide / (right - left), pixels_high / (top - bottom)) * POINTS_PER_INCH
        if best is None or area > best[0]:
            best = (area, dpi)
    return None if best is None else best[1]


def render_pdf_page(page, dpi: float | None = None) -> Image.Image:
    """One `pypdfium2.PdfPage` as an RGB image: at `dpi` if given, else at its scan's resolution (`scan_dpi`, within
    72 and `MAX_PDF_DPI`), else at `PDF_DPI`; the resolution is kept in its `info["dpi"]`."""
    if dpi is None:
        found = scan_dpi(page)
        dpi = PDF_DPI if found is None else min(max(found, POINTS_PER_INCH), MAX_PDF_DPI)
    if dpi <= 0:
        raise ValueError(f"dpi must be positive, got {dpi}")
    # PDFium rounds the bitmap's size up: a scan's own resolution, a hair over by floating point, would add a column.
    image = page.render(scale=dpi / POINTS_PER_INCH * (1 - 1e-9)).to_pil().convert("RGB")
    image.info["dpi"] = (dpi, dpi)  # as an image file says its resolution (a searchable PDF keeps the page's size)
    return image


def iter_document_pages(path, dpi: float | None = None) -> Iterator[tuple[int, Image.Image]]:
    """`(page number from 1, image)` for each page of the file at `path`, one at a time as it is asked for: a PDF's
    pages rendered (`render_pdf_page`; `dpi` None: each at its scan's resolution), a TIFF's frames (turned by their
    EXIF orientation), any other image file as its one page. A `ValueError` naming the file where it cannot be read."""
    if is_pdf(path):
        document = open_pdf(path)
        try:
            for index in range(len(document)):
                page = document[index]
                try:
                    yield index + 1, render_pdf_page(page, dpi)
                finally:
                    page.close()
        finally:
            document.close()
        return
    opened = _open_image(path)
    frames = getattr(opened, "n_frames", 1) if Path(path).suffix.lower() in MULTI_PAGE_IMAGE_SUFFIXES else 1
    with opened:
        for index in range(frames):
            try:
                opened.seek(index)
                frame = ImageOps.exif_transpose(opened.copy())
            except (OSError, SyntaxError, ValueError) as error:
                raise ValueError(f"cannot read page {index + 1} of {str(path)!r}: {error}") from error
            yield index + 1, frame
