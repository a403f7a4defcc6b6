"""textrec-demo: the app reads as recognize() does, in a real browser (Debian's Chromium driven by Playwright) in
under `BROWSER_READ_SECONDS`, and `write_space` makes an exported folder a Space that reads alike.

The browser test saves a screenshot of the page after the read where `TEXTREC_DEMO_SCREENSHOT` names a file
(README's picture: `TEXTREC_DEMO_SCREENSHOT=scripts/lab/reports/demo.png pytest tests/test_demo.py -m slow`)."""

import importlib.util
import os
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest

from textrec.processing.inference import load_recognizer, recognize

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BROWSER_READ_SECONDS = 2.0
"""The goal: from the click on Read to the text on the page, for one line on a CPU."""


def needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install 'textrec[test,demo]')")


@pytest.fixture(scope="module")
def line_image(tmp_path_factory):
    """A print line rendered by textrec's own synthetic data, as a PNG file."""
    from textrec.processing.data import make_synthetic_lines

    path = tmp_path_factory.mktemp("demo") / "line.png"
    make_synthetic_lines(1, seed=7, augment=False)["image"][0].convert("L").save(path)
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_command_says_how_to_install_gradio(monkeypatch, capsys):
    from textrec.scripts import demo

    monkeypatch.setitem(sys.modules, "gradio", None)  # import gradio now fails
    with pytest.raises(SystemExit) as exit_info:
        demo.run([])
    assert 'pip install "textrec[demo]"' in str(exit_info.value)


def test_a_default_model_not_offered_is_refused():
    needs("gradio")
    from textrec.scripts.demo import build_demo

    with pytest.raises(ValueError, match="not among the models offered"):
        build_demo(["crnn-lines"], default_model="trocr-lines")


def test_the_ctc_alignment_picture_has_a_span_per_character(line_image):
    from PIL import Image

    from textrec.scripts.demo import PICTURE_HEIGHT, read_line

    image = Image.open(line_image)
    reading, picture, note = read_line(image, "crnn-lines")
    assert reading.text == recognize(*load_recognizer("crnn-lines"), [image], progress=False).texts[0]
    assert picture is not None and picture.height > PICTURE_HEIGHT and note == ""
    assert len(reading.alignment.character_frames) == len(reading.characters) == len(reading.text)


def test_write_space_makes_an_exported_folder_a_space_that_reads_alike(tmp_path, line_image):
    needs("gradio")
    from PIL import Image

    from textrec.scripts.demo import GRADIO_REQUIREMENT, write_space
    from textrec.scripts.export import export_model

    folder = export_model("crnn-lines", tmp_path / "space")
    written = write_space(folder, "crnn-lines")
    assert sorted(path.name for path in written) == ["app.py", "requirements.txt"]
    requirements = (folder / "requirements.txt").read_text().splitlines()
    assert GRADIO_REQUIREMENT in requirements and any(line.startswith("torch") and "2.13.0" in line for line in requirements)
    assert any(line.startswith("scipy>=") for line in requirements)  # comer-math's processor scales by glyph height with it
    assert "textrec" not in (folder / "app.py").read_text().split('"""')[2]  # the code imports no textrec

    spec = importlib.util.spec_from_file_location("space_app", folder / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)  # loads the folder's pipeline with trust_remote_code and builds the page
    image = Image.open(line_image)
    text, confidence, characters = app.read(image, "ctc")
    expected = recognize(*load_recognizer("crnn-lines"), [image], progress=False, output_confidences=True).readings[0]
    assert text == expected.text and float(confidence) == pytest.approx(expected.confidence, abs=1e-3)
    assert "".join(character for character, _ in characters) == text


def test_the_demo_reads_a_whole_page_as_read_page_does():
    """'whole page': the page reader's lines, the same as `read_page` gives, and the page with its lines drawn."""
    from textrec.processing.data.synthetic_pages import render_page
    from textrec.processing.page_reading import load_line_detector, read_page
    from textrec.scripts.demo import read_whole_page

    page, _ = render_page(2, 8)
    reading, picture = read_whole_page(page, "crnn-lines")
    expected = read_page(page, load_recognizer("crnn-lines"), load_line_detector("line-detector"))
    assert reading.text == expected.text and len(reading.lines) > 10
    assert picture.size == page.size and picture.mode == "RGB"


def test_write_space_refuses_a_folder_without_a_model(tmp_path):
    from textrec.scripts.demo import write_space

    with pytest.raises(FileNotFoundError, match="no config.json"):
        write_space(tmp_path, "nothing")


@pytest.mark.slow
def test_the_demo_reads_an_uploaded_line_in_a_real_browser(line_image):
    needs("gradio")
    needs("playwright")
    if not CHROMIUM.is_file():
        pytest.skip(f"no {CHROMIUM} (apt-get install chromium; scripts/setup.sh installs it)")
    from PIL import Image
    from playwright.sync_api import sync_playwright

    from textrec.scripts.demo import ELEMENT_IDS, build_demo

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    expected = recognize(*load_recognizer("crnn-lines"), [Image.open(line_image)], progress=False).texts[0]
    demo = build_demo(["crnn-lines", "trocr-lines"])
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
            page.locator(f"#{ELEMENT_IDS['image']} input[type=file]").set_input_files(str(line_image))
            page.locator(f"#{ELEMENT_IDS['image']} img").first.wait_for(state="visible", timeout=30_000)
            start = time.perf_counter()
            page.locator(f"#{ELEMENT_IDS['read']}").click()
            page.wait_for_function(
                f"document.querySelector('#{ELEMENT_IDS['text']} textarea').value.length > 0", timeout=30_000)
            seconds = time.perf_counter() - start
            text = page.locator(f"#{ELEMENT_IDS['text']} textarea").input_value()
            confidence = float(page.locator(f"#{ELEMENT_IDS['confidence']} textarea").input_value())
            page.locator(f"#{ELEMENT_IDS['picture']} img").first.wait_for(state="visible", timeout=30_000)
            if os.environ.get("TEXTREC_DEMO_SCREENSHOT"):
                page.screenshot(path=os.environ["TEXTREC_DEMO_SCREENSHOT"], full_page=True)
            browser.close()
    finally:
        demo.close()
    print(f"read in the browser in {seconds:.2f} s (click to text): {text!r}, confidence {confidence}")
    assert text == expected
    assert 0.0 <= confidence <= 1.0
    assert seconds < BROWSER_READ_SECONDS, f"the read took {seconds:.2f} s in the browser"
