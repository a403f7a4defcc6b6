"""Documents of several pages read as pages: PDFs (a scan at its own resolution, vector pages at `PDF_DPI`) and
multi-page TIFFs, by `read_document`, `read_page` and `textrec-recognize --page`."""

import json
import sys

import numpy as np
import pytest
from PIL import Image, ImageDraw

from textrec.processing.document_pages import (
    MAX_PDF_DPI,
    PDF_DPI,
    document_page_count,
    iter_document_pages,
    open_pdf,
)

FIRST_PAGE = ["The quick brown fox jumps over", "the lazy dog near the river bank.", "Invoice 2024-117 total 58.40 EUR"]
SECOND_PAGE = ["Second page of the letter", "Yours sincerely, Anna Berg"]


def printed_page(lines: list[str], size=(1000, 600)) -> Image.Image:
    page = Image.new("L", size, 255)
    draw = ImageDraw.Draw(page)
    for row, text in enumerate(lines):
        draw.text((60, 80 + 110 * row), text, fill=0, font_size=40)
    return page


@pytest.fixture(scope="module")
def scanned_pdf(tmp_path_factory):
    """Two pages stored as bilevel scans at 150 dpi (losslessly: PIL writes mode "1" without JPEG)."""
    path = tmp_path_factory.mktemp("documents") / "letter.pdf"
    first, second = printed_page(FIRST_PAGE).convert("1"), printed_page(SECOND_PAGE, (900, 500)).convert("1")
    first.save(path, resolution=150, save_all=True, append_images=[second])
    return path


def test_a_scanned_pdf_gives_its_pages_at_the_scans_own_pixels(scanned_pdf):
    pages = list(iter_document_pages(scanned_pdf))
    assert document_page_count(scanned_pdf) == 2 and [number for number, _ in pages] == [1, 2]
    for (_, rendered), lines, size in zip(pages, (FIRST_PAGE, SECOND_PAGE), ((1000, 600), (900, 500))):
        expected = np.asarray(printed_page(lines, size).convert("1").convert("L"))
        assert rendered.size == size and rendered.mode == "RGB"
        assert np.array_equal(np.asarray(rendered.convert("L")), expected)


def test_a_pdf_page_without_a_scan_is_rendered_at_the_default_resolution_or_as_asked(tmp_path):
    import pypdfium2

    document = pypdfium2.PdfDocument.new()
    document.new_page(612, 792)  # US Letter in points, nothing on it
    document.save(tmp_path / "vector.pdf")
    document.close()
    (_, page), = iter_document_pages(tmp_path / "vector.pdf")
    assert page.size == (round(8.5 * PDF_DPI), round(11 * PDF_DPI))
    (_, page), = iter_document_pages(tmp_path / "vector.pdf", dpi=100)
    assert page.size == (850, 1100)


def test_a_scan_of_very_high_resolution_is_rendered_at_most_at_the_limit(tmp_path):
    path = tmp_path / "fine.pdf"
    Image.new("1", (2400, 1200), 1).save(path, resolution=1200)  # 2 x 1 inches at 1200 dpi
    (_, page), = iter_document_pages(path)
    assert page.size == (2 * MAX_PDF_DPI, MAX_PDF_DPI)


def test_a_multi_page_tiff_gives_each_frame_and_other_images_one_page(tmp_path):
    frames = [printed_page(FIRST_PAGE), printed_page(SECOND_PAGE)]
    frames[0].save(tmp_path / "fax.tiff", save_all=True, append_images=frames[1:])
    pages = list(iter_document_pages(tmp_path / "fax.tiff"))
    assert document_page_count(tmp_path / "fax.tiff") == 2 and len(pages) == 2
    assert all(np.array_equal(np.asarray(page), np.asarray(frame)) for (_, page), frame in zip(pages, frames))
    frames[0].save(tmp_path / "page.png")
    assert document_page_count(tmp_path / "page.png") == 1 and len(list(iter_document_pages(tmp_path / "page.png"))) == 1


def test_what_is_not_a_readable_pdf_is_named(tmp_path):
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 cut off here")
    with pytest.raises(ValueError, match=r"broken\.pdf: not a readable PDF"):
        document_page_count(tmp_path / "broken.pdf")
    with pytest.raises(ValueError, match=r"broken\.pdf: not a readable PDF"):
        list(iter_document_pages(tmp_path / "broken.pdf"))


def test_without_pypdfium2_the_error_says_what_to_install(monkeypatch, scanned_pdf):
    monkeypatch.setitem(sys.modules, "pypdfium2", None)
    with pytest.raises(ImportError, match=r'pip install "textrec\[pdf\]"'):
        open_pdf(scanned_pdf)


@pytest.fixture(scope="module")
def page_reader():
    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import load_line_detector

    return load_recognizer("crnn-lines"), load_line_detector("line-detector")


def test_read_document_reads_every_page_and_read_page_takes_a_pdf_of_one(scanned_pdf, page_reader, tmp_path):
    from textrec.processing.page_reading import read_document, read_page

    readings = read_document(scanned_pdf, *page_reader, progress=False)
    assert [reading.text.splitlines() for reading in readings] == [FIRST_PAGE, SECOND_PAGE]
    with pytest.raises(ValueError, match=r"a PDF of 2 pages: read_document\(\) reads each"):
        read_page(scanned_pdf, *page_reader)
    printed_page(SECOND_PAGE, (900, 500)).convert("1").save(tmp_path / "one.pdf", resolution=150)
    assert read_page(tmp_path / "one.pdf", *page_reader).text == readings[1].text


def test_recognize_page_reads_each_page_of_a_pdf_and_names_it(scanned_pdf, tmp_path, capsys):
    """`textrec-recognize --page letter.pdf`: the pages in order, shown as `letter.pdf#page=2`; JSON records carry the
    page number; `--output_dir` writes `letter-page-2.json`; a broken PDF among the inputs is one error, the others
    are read; a PDF without `--page` is refused."""
    from textrec.scripts import recognize as recognize_cli

    texts = recognize_cli.run(["--page", "--show_paths", str(scanned_pdf)])
    assert [text.splitlines() for text in texts] == [FIRST_PAGE, SECOND_PAGE]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"{scanned_pdf}#page=1\t{FIRST_PAGE[0]}" and printed[-1] == f"{scanned_pdf}#page=2\t{SECOND_PAGE[-1]}"

    (tmp_path / "broken.pdf").write_bytes(b"not a pdf")
    texts = recognize_cli.run(["--page", "--output_format", "json", "--output_dir", str(tmp_path / "read"),
                               str(tmp_path / "broken.pdf"), str(scanned_pdf)])
    assert texts[0] is None and len(texts) == 3
    second = json.loads((tmp_path / "read" / "letter-page-2.json").read_text())
    assert second["path"] == str(scanned_pdf) and second["page_number"] == 2 and second["text"].splitlines() == SECOND_PAGE
    assert json.loads((tmp_path / "read" / "broken.json").read_text())["lines"] is None
    assert "broken.pdf: not a readable PDF" in capsys.readouterr().err

    with pytest.raises(SystemExit):
        recognize_cli.run([str(scanned_pdf)])
    assert "read it with --page" in capsys.readouterr().err


def test_a_multi_page_tiff_is_refused_by_read_page_and_read_by_read_document(page_reader, tmp_path, capsys):
    """A multi-page TIFF is a document, as a PDF is: `read_page` refuses it (it read its first page alone), and
    `read_document` reads each page; an image in memory is a document of one page to `read_document`; pages printed
    as text one after another are parted by a form feed, as Tesseract parts them."""
    from textrec.processing.page_reading import read_document, read_page
    from textrec.scripts import recognize as recognize_cli

    frames = [printed_page(FIRST_PAGE), printed_page(SECOND_PAGE)]
    frames[0].save(tmp_path / "fax.tiff", save_all=True, append_images=frames[1:])
    with pytest.raises(ValueError, match=r"fax\.tiff: a TIFF of 2 pages: read_document\(\) reads each"):
        read_page(tmp_path / "fax.tiff", *page_reader)
    readings = read_document(tmp_path / "fax.tiff", *page_reader, progress=False)
    assert [reading.text.splitlines() for reading in readings] == [FIRST_PAGE, SECOND_PAGE]
    assert [reading.text for reading in read_document(frames[1], *page_reader)] == [readings[1].text]

    recognize_cli.run(["--page", str(tmp_path / "fax.tiff")])
    printed = capsys.readouterr().out
    assert printed == "\n".join(FIRST_PAGE) + "\n\f" + "\n".join(SECOND_PAGE) + "\n"


def test_recognize_names_a_pdf_among_line_images_as_a_document_of_pages(scanned_pdf, page_reader):
    """A PDF among line images given to `recognize()` is an error naming it as pages to read (`read_document`), as the
    command line's line mode says (it was `cannot identify image file`); skipped, the other images are read."""
    from textrec.processing.inference import recognize

    (model, processor), _ = page_reader
    line = printed_page(FIRST_PAGE[:1], (900, 200))
    result = recognize(model, processor, [line, str(scanned_pdf)], progress=False, on_error="skip")
    assert result.texts[0] == FIRST_PAGE[0] and not result.texts[1]
    assert "is a PDF, a document of pages: read it as pages" in result.errors[1] and "read_document" in result.errors[1]
    with pytest.raises(ValueError, match="image 2 of 2 .*is a PDF, a document of pages"):
        recognize(model, processor, [line, str(scanned_pdf)], progress=False)
