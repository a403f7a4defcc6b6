"""What the reading commands say about the inputs they cannot read well: nothing lost, nothing silently wrong.

A cropped line given as a page, pages that would overwrite each other's output, an image that fails among good ones,
a page that fails or holds no line, an image outside what the model reads, a detector given as the recognizer (and
back), a 12-bit scan stored in 16 bits, a camera's EXIF orientation on a PIL image, a dataset with unreadable rows.
"""

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from textrec.processing.image_processing_text_recognition import load_image
from textrec.processing.inference import load_recognizer, recognize
from textrec.processing.page_reading import is_line_image, load_line_detector, read_page
from textrec.scripts import evaluate as evaluate_cli
from textrec.scripts import recognize as recognize_cli

TEXT = "Hello World 2024"


def line_image(size=(240, 48), ink=0, paper=255) -> Image.Image:
    """A line of text cropped close, as a user cuts one from a scan."""
    image = Image.new("L", size, paper)
    ImageDraw.Draw(image).text((6, 8), TEXT, fill=ink, font=ImageFont.load_default(size=28))
    return image


@pytest.fixture(scope="module")
def crnn_lines():
    return load_recognizer("crnn-lines")


@pytest.fixture
def line_file(tmp_path):
    path = tmp_path / "line.png"
    line_image().save(path)
    return path


def test_a_cropped_line_given_as_a_page_is_read_as_that_line(crnn_lines, line_file, capsys):
    """The detector learned lines on pages; a page this small would be brought to its size, one line taller than any it
    learned (it read `O ) 7 F 7 ()`, turned 90 degrees). Read as a page, the line reads as the line command reads it."""
    line = line_image()
    assert is_line_image(line) and is_line_image(line_image(ink=255, paper=0))
    page = Image.new("L", (600, 800), 255)
    page.paste(line, (40, 60))
    page.paste(line, (40, 200))
    assert not is_line_image(page) and not is_line_image(line.rotate(90, expand=True))
    expected = recognize(*crnn_lines, [line], progress=False).texts[0]
    reading = read_page(line, crnn_lines, load_line_detector("line-detector"))
    assert reading.rotation == 0 and [page_line.text for page_line in reading.lines] == [expected]
    assert reading.lines[0].box == [0.0, 0.0, 240.0, 48.0]
    recognize_cli.run(["--model", "crnn-lines", "--page", str(line_file)])
    assert capsys.readouterr().out.splitlines() == [expected]


def test_pages_that_would_overwrite_each_others_output_are_refused_before_reading(tmp_path, line_file):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        line_image().save(tmp_path / folder / "page.png")
    with pytest.raises(ValueError, match=r"would hold several pages, e.g. .*page\.txt: .*a/page\.png, .*b/page\.png"):
        recognize_cli.run(["--model", "crnn-lines", "--page", "--output_dir", str(tmp_path / "out"),
                           str(tmp_path / "a"), str(tmp_path / "b")])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["95", "1.5", "-0.1", "nan"])
def test_a_confidence_outside_0_to_1_is_refused(value, line_file, capsys):
    with pytest.raises(SystemExit):
        recognize_cli.run(["--model", "crnn-lines", "--page", "--min_character_confidence", value, str(line_file)])
    assert "must be from 0 to 1" in capsys.readouterr().err


@pytest.mark.parametrize("missing", [False, True], ids=["empty file", "no such file"])
def test_an_image_that_cannot_be_read_keeps_one_output_line_per_image(tmp_path, line_file, capsys, missing):
    """`textrec-recognize a b c > out`: the lines of `out` stay in step with the images, whether the one that cannot
    be read is an empty file or a name that is no file (a typo among many paths)."""
    broken = tmp_path / "broken.png"
    if not missing:
        broken.write_bytes(b"")
    texts = recognize_cli.run(["--model", "crnn-lines", str(line_file), str(broken), str(line_file)])
    captured = capsys.readouterr()
    assert texts[1] is None and captured.out.splitlines() == [texts[0], "", texts[2]]
    assert "broken.png" in captured.err and "1 of 3 images could not be read" in captured.err
    assert ("not found" if missing else "empty") in captured.err
    recognize_cli.run(["--model", "crnn-lines", "--show_paths", str(line_file), str(broken)])
    assert capsys.readouterr().out.splitlines() == [f"{line_file}\t{texts[0]}", f"{broken}\t"]


@pytest.mark.parametrize("name, page", [("line.png", False), ("scan.pdf", True)])
def test_a_name_that_is_no_file_is_said_not_found_and_fails_the_run(tmp_path, capsys, name, page):
    """A mistyped image or PDF: named on stderr as not found (not a traceback, not a pypdfium2 path alone), and the
    run exits with status 1."""
    with pytest.raises(SystemExit) as exit_info:
        recognize_cli.main(["--model", "crnn-lines", *(["--page"] if page else []), str(tmp_path / name)])
    assert exit_info.value.code == 1
    errors = capsys.readouterr().err
    assert f"{name}' not found" in errors and "Traceback" not in errors


def test_a_page_that_cannot_be_read_has_its_json_record_and_an_empty_page_is_said_to_be(tmp_path, capsys):
    broken, blank = tmp_path / "broken.png", tmp_path / "blank.png"
    broken.write_bytes(b"not an image")
    Image.new("L", (600, 800), 255).save(blank)
    texts = recognize_cli.run(["--model", "crnn-lines", "--page", "--output_format", "json", str(broken), str(blank)])
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert texts == [None, ""]
    assert records[0]["path"] == str(broken) and records[0]["lines"] is None and "cannot" in records[0]["error"]
    assert records[1]["lines"] == [] and records[1]["warning"] == "no line of text was found on this page"
    assert f"{blank}: no line of text was found on this page" in captured.err


def test_json_says_when_an_image_lies_outside_what_the_model_reads(tmp_path, line_file, capsys):
    """An empty reading of a blank image is a confident one: the JSON carries the warning that says what it is."""
    blank = tmp_path / "blank.png"
    Image.new("L", (240, 48), 255).save(blank)
    recognize_cli.run(["--model", "crnn-lines", "--output_format", "json", str(line_file), str(blank)])
    line, empty = (json.loads(record) for record in capsys.readouterr().out.splitlines())
    assert "warning" not in line
    assert empty["warning"].startswith("it looks blank")


def test_a_detector_given_as_the_recognizer_and_back_is_named_as_such():
    with pytest.raises(ValueError, match="line-detector is a text-line detector, not a text recognizer: give it as --detector"):
        load_recognizer("line-detector")
    with pytest.raises(ValueError, match=r"crnn-lines is a text recognizer \(textrec-crnn\), not a text-line detector"):
        load_line_detector("crnn-lines")


@pytest.mark.parametrize("bits", [10, 12, 14, 16])
def test_a_scan_of_fewer_bits_stored_in_16_reads_at_its_own_depth(bits):
    """A 12-bit scan in a 16-bit PNG read at 65535 lies within 16 grey levels: blank to the reader."""
    eight_bit = np.asarray(line_image(), dtype=np.float64)
    full = 2**bits - 1
    stored = np.round(eight_bit / 255 * full).astype(np.uint16)
    for source in (Image.fromarray(stored), stored):
        loaded = np.asarray(load_image(source), dtype=np.int64)
        assert np.abs(loaded - eight_bit).max() <= 1, bits


def test_a_pil_image_is_turned_by_its_exif_orientation_as_its_file_is(tmp_path, crnn_lines):
    upright = line_image().convert("RGB")
    path = tmp_path / "camera.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored turned: to be rotated 90 degrees clockwise to stand upright
    upright.rotate(90, expand=True).save(path, exif=exif, quality=95)
    with Image.open(path) as opened:
        from_pil = load_image(opened)
    from_file = load_image(str(path))
    assert from_pil.size == from_file.size == upright.size
    assert np.array_equal(np.asarray(from_pil), np.asarray(from_file))
    with Image.open(path) as opened:
        assert recognize(*crnn_lines, [opened, str(path)], progress=False).texts == [TEXT, TEXT]


def test_evaluate_says_which_rows_it_left_out_and_exits_1(tmp_path, capsys):
    folder = tmp_path / "lines"
    folder.mkdir()
    line_image().save(folder / "good.png")
    rows = [{"file_name": "good.png", "text": TEXT}, {"file_name": "missing.png", "text": "gone"}]
    (folder / "metadata.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(SystemExit) as exit_:
        evaluate_cli.main(["--model", "crnn-lines", "--dataset", str(folder), "--show_errors", "0"])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert "these scores leave out rows that could not be read: 1 of 2 rows" in err and "missing.png" in err
