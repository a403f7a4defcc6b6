"""Searchable PDFs (`textrec.processing.searchable_pdf`, `textrec-recognize --page --output_format pdf`): each page as
it was given, its lines laid over it as invisible text that a PDF reader finds where the lines lie."""

import numpy as np
import pytest
from PIL import Image, ImageDraw

from textrec.processing.page_reading import PageLine, PageReading

pypdfium2 = pytest.importorskip("pypdfium2", reason="searchable PDFs are written with pypdfium2 (textrec[pdf])")

GERMAN_LINE = "„Wer iſt die Jungfer?“ uͤber die Brücke —"
FIRST_PAGE = ["Dear Ms Berg, thank you for", "your letter of 12 March 2024."]
SECOND_PAGE = ["The invoice 2024-117 is paid."]


def printed_page(lines: list[str], size: tuple[int, int]) -> Image.Image:
    page = Image.new("L", size, 255)
    draw = ImageDraw.Draw(page)
    for row, text in enumerate(lines):
        draw.text((60, 80 + 110 * row), text, fill=0, font_size=40)
    return page


def drawn_page(size=(1200, 800), dpi=150) -> Image.Image:
    page = Image.new("L", size, 255)
    draw = ImageDraw.Draw(page)
    draw.text((100, 100), "Grüße aus Köln", fill=0, font_size=60)
    draw.text((100, 300), "Wer ist die Jungfer", fill=0, font_size=60)
    page.info["dpi"] = (dpi, dpi)
    return page


def page_texts_and_boxes(path):
    """Each page's size in points, extracted text, and its characters' boxes (left, bottom, right, top)."""
    document = pypdfium2.PdfDocument(str(path))
    pages = []
    try:
        for index in range(len(document)):
            page = document[index]
            text_page = page.get_textpage()
            boxes = [text_page.get_charbox(i) for i in range(text_page.count_chars())]
            pages.append((page.get_size(), text_page.get_text_range(), boxes))
            text_page.close()
            page.close()
    finally:
        document.close()
    return pages


def inside(box, line_box, scale, page_height, tolerance=0.5):
    """Whether a character's PDF box lies within a line's image box (pixels, y down) at `scale` points a pixel."""
    left, bottom, right, top = box
    x0, y0, x1, y1 = line_box
    return (x0 * scale - tolerance <= left <= right <= x1 * scale + tolerance
            and page_height - y1 * scale - tolerance <= bottom <= top <= page_height - y0 * scale + tolerance)


def test_each_line_is_found_as_written_where_it_lies_on_the_page(tmp_path):
    """Any character the reader writes (the long s, an umlaut's small e, German quotes) comes back as itself; each
    character lies within its line's box; a page read turned has its lines running across the image as read."""
    from textrec.processing.searchable_pdf import write_searchable_pdf

    upright = PageReading(1200, 800, [PageLine("Grüße aus Köln", 0.9, 0.9, [100, 100, 520, 170]),
                                      PageLine(GERMAN_LINE, 0.9, 0.9, [100, 300, 1000, 370])])
    turned_page = drawn_page().rotate(90, expand=True)
    turned_page.info["dpi"] = (150, 150)
    turned = PageReading(800, 1200, [PageLine("read turned", 0.9, 0.9, [100, 100, 170, 700])], rotation=90)
    other_way = PageReading(800, 1200, [PageLine("the other way", 0.9, 0.9, [100, 100, 170, 700])], rotation=270)
    write_searchable_pdf([(drawn_page(), upright), (turned_page, turned), (turned_page, other_way)], tmp_path / "out.pdf")
    (first_size, first_text, first_boxes), (turned_size, turned_text, turned_boxes), (_, other_text, other_boxes) = \
        page_texts_and_boxes(tmp_path / "out.pdf")

    scale = 72 / 150
    assert first_size == pytest.approx((1200 * scale, 800 * scale))
    assert first_text.split("\r\n") == ["Grüße aus Köln", GERMAN_LINE]
    line_of_character = [0] * len("Grüße aus Köln") + [None, None] + [1] * len(GERMAN_LINE)  # \r\n between the lines
    for box, line in zip(first_boxes, line_of_character):
        if line is not None:
            assert inside(box, upright.lines[line].box, scale, first_size[1])
    assert first_boxes[0][0] == pytest.approx(100 * scale, abs=0.5)  # the line starts where its box starts
    assert first_boxes[len("Grüße aus Köln") - 1][2] == pytest.approx(520 * scale, abs=0.5)  # and ends where it ends

    assert turned_size == pytest.approx((800 * scale, 1200 * scale))
    assert turned_text == "read turned" and other_text == "the other way"
    assert all(inside(box, turned.lines[0].box, scale, turned_size[1]) for box in turned_boxes + other_boxes)
    # turned 90 degrees counter-clockwise to be read: its text runs down the image, read from the top; 270: up
    assert turned_boxes[0][3] > turned_boxes[-1][3] and other_boxes[0][3] < other_boxes[-1][3]


def test_the_page_looks_as_given_and_keeps_its_size(tmp_path):
    """The text drawn nothing: the page rendered at its resolution is the image (grey stored losslessly); a colour
    page is stored as a JPEG; an image that says no resolution is taken at 300 dpi."""
    from textrec.processing.searchable_pdf import DEFAULT_DPI, write_searchable_pdf

    page = drawn_page()
    reading = PageReading(1200, 800, [PageLine("Grüße aus Köln", 0.9, 0.9, [100, 100, 520, 170])])
    colour = Image.new("RGB", (600, 400), (250, 240, 200))
    ImageDraw.Draw(colour).text((40, 40), "Menu 12.50", fill=(120, 0, 0), font_size=50)
    write_searchable_pdf([(page, reading), (colour, PageReading(600, 400, []))], tmp_path / "out.pdf")

    document = pypdfium2.PdfDocument(str(tmp_path / "out.pdf"))
    try:
        rendered = document[0].render(scale=150 / 72).to_pil().convert("L")
        assert rendered.size == page.size
        assert np.abs(np.asarray(rendered, dtype=float) - np.asarray(page, dtype=float)).mean() < 1
        assert document[1].get_size() == pytest.approx((600 * 72 / DEFAULT_DPI, 400 * 72 / DEFAULT_DPI))
        filters = [obj.get_filters() for index in (0, 1) for obj in document[index].get_objects()
                   if obj.type == pypdfium2.raw.FPDF_PAGEOBJ_IMAGE]
        assert filters == [["FlateDecode"], ["DCTDecode"]]
    finally:
        document.close()


def test_the_text_layer_font_holds_a_glyph_for_each_character():
    import io

    from fontTools.ttLib import TTFont

    from textrec.processing.searchable_pdf import glyphless_font

    font = TTFont(io.BytesIO(glyphless_font(GERMAN_LINE + "\n")))
    mapped = font.getBestCmap()
    assert set(mapped) == {ord(character) for character in GERMAN_LINE}
    assert len(set(mapped.values())) == len(mapped)  # a glyph each: a reader maps each back to its own character


def test_recognize_writes_a_searchable_pdf_of_each_document(tmp_path, capsys):
    """`textrec-recognize --page letter.pdf --output_format pdf --output_dir read/`: read/letter.pdf holds the
    document's pages at their size with their lines as read; the format needs --page and --output_dir, and an
    output that would be written over an input is refused."""
    from textrec.scripts import recognize as recognize_cli

    letter = tmp_path / "letter.pdf"
    first, second = printed_page(FIRST_PAGE, (1000, 600)).convert("1"), printed_page(SECOND_PAGE, (900, 500)).convert("1")
    first.save(letter, resolution=150, save_all=True, append_images=[second])
    texts = recognize_cli.run(["--page", "--output_format", "pdf", "--output_dir", str(tmp_path / "read"), str(letter)])
    assert [text.splitlines() for text in texts] == [FIRST_PAGE, SECOND_PAGE]
    assert capsys.readouterr().out == ""
    (first_size, first_text, _), (second_size, second_text, _) = page_texts_and_boxes(tmp_path / "read" / "letter.pdf")
    assert first_size == pytest.approx((1000 * 72 / 150, 600 * 72 / 150))
    assert second_size == pytest.approx((900 * 72 / 150, 500 * 72 / 150))
    assert first_text.split("\r\n") == FIRST_PAGE and second_text.split("\r\n") == SECOND_PAGE

    for arguments, message in ((["--page", "--output_format", "pdf"], "give --output_dir"),
                               (["--output_format", "pdf", "--output_dir", str(tmp_path)], "use it with --page")):
        with pytest.raises(SystemExit):
            recognize_cli.run([*arguments, str(letter)])
        assert message in capsys.readouterr().err
    with pytest.raises(ValueError, match="would be written over an input"):
        recognize_cli.run(["--page", "--output_format", "pdf", "--output_dir", str(tmp_path), str(letter)])


def test_without_pypdfium2_the_command_says_what_to_install_before_reading(monkeypatch, tmp_path):
    import sys

    from textrec.scripts import recognize as recognize_cli

    drawn_page().save(tmp_path / "page.png")
    monkeypatch.setitem(sys.modules, "pypdfium2", None)
    with pytest.raises(ValueError, match=r'writing searchable PDFs needs pypdfium2: pip install "textrec\[pdf\]"'):
        recognize_cli.run(["--page", "--output_format", "pdf", "--output_dir", str(tmp_path / "read"),
                           str(tmp_path / "page.png")])
    assert not (tmp_path / "read").exists()
