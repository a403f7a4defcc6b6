"""Old umlauts (`textrec.processing.old_umlauts`): an umlaut printed with a small e above is told from one printed with
dots, at the line's own resolution, and written as the letter and U+0364 where a CTC reader wrote the dotted umlaut."""

import json
import re

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont, ImageOps

from textrec.processing.inference import LineReading, iter_recognize, load_recognizer, recognize
from textrec.processing.old_umlauts import (
    COMBINING_SMALL_E,
    LETTER_OFFSET_X_HEIGHTS,
    has_small_e,
    marks_above,
    write_old_umlauts,
    write_page_umlauts_alike,
    x_height_band,
)
from textrec.processing.pipeline_text_recognition import CTCAlignment

FONT_SIZE = 64
FRAME_WIDTH = 4
"""Pixels of the line image one frame of the made-up readings spans."""


def printed_word(mark: str) -> tuple[Image.Image, list[float]]:
    """`Muhle` in the default face with a mark above the u: `"e"` (a small e, as print of the early 1800s set it),
    `"dots"` (a diaeresis), `"large dots"` (a bold Fraktur's, each as large as a small e), `"merged"` (two dots run
    together into one flat blot, as in a bold face) or `"merged bold"` (one blot nearly as high as wide: a newspaper
    heading's bold dots, scanned small); and the middle column of each of its letters. (The default face has no ü: the
    marks are drawn.)"""
    font = ImageFont.load_default(size=FONT_SIZE)
    word = "Muhle"
    image = Image.new("L", (int(font.getlength(word)) + 40, FONT_SIZE + 40), 255)
    draw = ImageDraw.Draw(image)
    draw.text((20, 20), word, fill=0, font=font)
    middles = [20 + (font.getlength(word[:index]) + font.getlength(word[:index + 1])) / 2 for index in range(len(word))]
    ink = np.asarray(image) < 128
    top, bottom = x_height_band(ink)
    x_height = bottom - top + 1
    if mark == "e":
        small = ImageFont.load_default(size=round(0.9 * x_height))
        left, upper, right, lower = draw.textbbox((0, 0), "e", font=small)
        draw.text((middles[1] - (left + right) / 2, top - 0.15 * x_height - lower), "e", fill=0, font=small)
    elif mark in ("dots", "large dots"):
        radius = 0.1 if mark == "dots" else 0.17
        for side in (-1, 1):
            middle = middles[1] + side * (radius + 0.1) * x_height
            draw.ellipse((middle - radius * x_height, top - (0.2 + 2.5 * radius) * x_height, middle + radius * x_height,
                          top - 0.2 * x_height), fill=0)
    elif mark in ("merged", "merged bold"):
        height = 0.3 if mark == "merged" else 0.44
        draw.rectangle((middles[1] - 0.25 * x_height, top - (0.15 + height) * x_height, middles[1] + 0.25 * x_height,
                        top - 0.15 * x_height), fill=0)
    return image, middles


def reading_of(image: Image.Image, text: str, middles: list[float]) -> LineReading:
    """A CTC reading of `image` as `text`, each character emitted on the frame left of its letter's middle by the
    offset a CTC reader has (`LETTER_OFFSET_X_HEIGHTS`)."""
    top, bottom = x_height_band(np.asarray(image) < 128)
    offset = LETTER_OFFSET_X_HEIGHTS * (bottom - top + 1)
    frames = [int((middle - offset) // FRAME_WIDTH) for middle in middles]
    frame_count = image.width // FRAME_WIDTH
    alignment = CTCAlignment([0] * frame_count, [1.0] * frame_count, [(frame, frame + 1) for frame in frames])
    return LineReading(text, 0.9, [(character, 0.9) for character in text], alignment)


@pytest.mark.parametrize("mark, expected", [("e", True), ("dots", False), ("large dots", False), ("merged", False),
                                           ("merged bold", False)])
def test_a_small_e_above_a_letter_is_told_from_dots(mark, expected):
    image, middles = printed_word(mark)
    ink = np.asarray(image) < 128
    band = x_height_band(ink)
    assert has_small_e(marks_above(ink, band), middles[1], band[1] - band[0] + 1) is expected
    # The h beside it carries no mark at all: its ascender is part of the letter.
    assert not has_small_e(marks_above(ink, band), middles[2], band[1] - band[0] + 1)


def test_the_umlaut_read_where_a_small_e_is_printed_is_written_as_the_old_umlaut():
    image, middles = printed_word("e")
    reading = write_old_umlauts(image, reading_of(image, "Mühle", middles))
    assert reading.text == f"Mu{COMBINING_SMALL_E}hle"
    assert [character for character, _ in reading.characters] == ["M", f"u{COMBINING_SMALL_E}", "h", "l", "e"]
    assert reading.confidence == 0.9


def test_an_umlaut_printed_with_dots_stays_as_read():
    image, middles = printed_word("dots")
    reading = reading_of(image, "Mühle", middles)
    assert write_old_umlauts(image, reading) is reading


def test_old_umlauts_need_a_ctc_reading():
    image, middles = printed_word("e")
    reading = reading_of(image, "Mühle", middles)
    with pytest.raises(ValueError, match="CTC"):
        write_old_umlauts(image, LineReading(reading.text, 0.9, reading.characters, None))
    model, processor = load_recognizer("self-attention-lines")
    with pytest.raises(ValueError, match="old_umlauts=True needs decoding='ctc'"):
        next(iter_recognize(model, processor, [image], decoding="attention", old_umlauts=True, progress=False))


def test_the_released_line_reader_writes_the_old_umlaut_a_line_prints():
    model, processor = load_recognizer("crnn-lines")
    old, _ = printed_word("e")
    dotted, _ = printed_word("dots")
    plain = recognize(model, processor, [old, dotted], progress=False).texts
    assert plain == ["Mühle", "Mühle"]
    assert recognize(model, processor, [old, dotted], progress=False, old_umlauts=True).texts == [
        f"Mu{COMBINING_SMALL_E}hle", "Mühle"]
    readings = recognize(model, processor, [old], progress=False, old_umlauts=True, output_confidences=True).readings
    assert readings[0].text == f"Mu{COMBINING_SMALL_E}hle"
    # The small e is looked for on the line as the model was given it: light on dark, it is found alike.
    assert recognize(model, processor, [ImageOps.invert(old), ImageOps.invert(dotted)], progress=False,
                     old_umlauts=True).texts == [f"Mu{COMBINING_SMALL_E}hle", "Mühle"]


def test_recognize_command_writes_old_umlauts_when_asked(tmp_path, capsys):
    from textrec.scripts import recognize as recognize_cli

    path = tmp_path / "muehle.png"
    printed_word("e")[0].save(path)
    assert recognize_cli.run(["--model", "crnn-lines", str(path)]) == ["Mühle"]
    assert recognize_cli.run(["--model", "crnn-lines", "--old_umlauts", str(path)]) == [f"Mu{COMBINING_SMALL_E}hle"]
    capsys.readouterr()
    with pytest.raises(ValueError, match="--old_umlauts needs a CTC reading"):
        recognize_cli.run(["--model", "crnn-lines", "--old_umlauts", "--decoding", "attention", str(path)])


def test_evaluate_command_scores_old_umlauts_when_asked(tmp_path):
    from textrec.scripts import evaluate as evaluate_cli

    folder = tmp_path / "lines"
    folder.mkdir()
    printed_word("e")[0].save(folder / "muehle.png")
    (folder / "metadata.jsonl").write_text(
        json.dumps({"file_name": "muehle.png", "text": f"Mu{COMBINING_SMALL_E}hle"}, ensure_ascii=False) + "\n",
        encoding="utf-8")
    assert evaluate_cli.run(["--model", "crnn-lines", "--dataset", str(folder)])["cer"] == pytest.approx(2 / 6)
    assert evaluate_cli.run(["--model", "crnn-lines", "--dataset", str(folder), "--old_umlauts"])["cer"] == 0.0
    with pytest.raises(ValueError, match="--old_umlauts needs a CTC reading"):
        evaluate_cli.run(["--model", "self-attention-lines", "--decoding", "attention", "--dataset", str(folder),
                          "--old_umlauts"])


def page_line(text: str) -> LineReading:
    """A reading of `text` with a character each, as a CTC reader gives it (an old umlaut one character)."""
    characters = [(match, 0.9) for match in re.findall(f".{COMBINING_SMALL_E}?", text)]
    return LineReading(text, 0.9, characters, None)


def test_a_page_whose_small_e_was_found_often_enough_writes_every_umlaut_with_it():
    """A page set in one type sets its umlauts one way: where the line-by-line look found the small e on at least
    `PAGE_SMALL_E_SHARE` of them, the rest follow; a page with one or none found, or with dots found mostly, is left
    as read (capitals keep their dots)."""
    old = f"u{COMBINING_SMALL_E}"
    found_often = [page_line(f"M{old}hle und Br{old}cke"), None, page_line("schön und spät, Über")]
    written = write_page_umlauts_alike(found_often)
    assert [reading.text if reading else None for reading in written] == [
        f"M{old}hle und Br{old}cke", None, f"scho{COMBINING_SMALL_E}n und spa{COMBINING_SMALL_E}t, Über"]
    assert "".join(character for character, _ in written[2].characters) == written[2].text
    assert written[0] is found_often[0]

    found_once = [page_line(f"M{old}hle"), page_line("schön")]
    assert write_page_umlauts_alike(found_once) == found_once
    found_rarely = [page_line(f"M{old}hle Br{old}cke"), page_line("ä ö ü ä ö ü ä")]
    assert write_page_umlauts_alike(found_rarely) == found_rarely
