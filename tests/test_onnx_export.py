"""The ONNX export of the CTC line models (`textrec.processing.onnx_export`) and its standalone reader
(`textrec.processing.textrec_onnx`): the reader prepares images as the image processor does and reads the text
that textrec's torch reading gives, in this environment and in one without torch."""

import importlib.util
import os
import subprocess
import venv

import numpy as np
import pytest
import torch
from PIL import Image, ImageOps

from textrec.modeling.common.recognizer import downsample_pixel_mask
from textrec.processing import TextRecognitionImageProcessor, textrec_onnx
from textrec.processing.inference import load_recognizer, recognize
from textrec.scripts import export as export_cli

HAS_ONNX = importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None
needs_onnx = pytest.mark.skipif(not HAS_ONNX, reason="onnxruntime and onnx are not installed (pip install 'textrec[onnx]')")


@pytest.fixture(scope="module")
def line_images():
    """Rendered print lines, and copies as users bring them: light on dark, coloured with transparency, a palette
    image, half and twice the size, and a line wider than the processor's `max_width`."""
    from textrec.processing.data import make_synthetic_lines

    lines = [image.convert("L") for image in make_synthetic_lines(8, seed=7, min_chars=5, max_chars=40)["image"]]
    rgba = lines[1].convert("RGBA")
    rgba.putalpha(Image.eval(lines[1], lambda value: 255 - value // 2))
    wide = Image.new("L", (sum(image.width for image in lines[:6]), max(image.height for image in lines[:6])), 255)
    left = 0
    for image in lines[:6]:
        wide.paste(image, (left, 0))
        left += image.width
    return [
        *lines,
        ImageOps.invert(lines[2]),
        ImageOps.colorize(lines[3], black=(20, 40, 160), white=(250, 230, 200)),
        rgba,
        lines[4].convert("P"),
        lines[5].resize((lines[5].width // 2, lines[5].height // 2)),
        lines[6].resize((lines[6].width * 2, lines[6].height * 2)),
        wide,
    ]


@pytest.fixture(scope="module")
def line_files(line_images, tmp_path_factory):
    folder = tmp_path_factory.mktemp("lines")
    paths = [folder / f"{index:02d}.png" for index in range(len(line_images))]
    for image, path in zip(line_images, paths):
        image.save(path)
    return [str(path) for path in paths]


@pytest.fixture(scope="module")
def crnn_lines_onnx(tmp_path_factory, line_images):
    """crnn-lines exported, its int8 convolutions calibrated on the test's lines (the data engine's renderings,
    the default, take longer: the slow tests export with them)."""
    from textrec.processing.onnx_export import export_onnx

    return export_onnx("crnn-lines", tmp_path_factory.mktemp("onnx") / "crnn-lines", calibration_images=line_images)


@pytest.mark.parametrize("settings", [{}, {"crop_margin": 0.5}, {"text_polarity": "dark-on-light"},
                                      {"num_channels": 3, "image_mean": 0.4, "image_std": 0.3, "invert": True},
                                      {"padding_value": 0.0, "max_width": 256, "width_multiple": 8},
                                      {"deslant": True, "crop_margin": 0.25}])
def test_the_reader_prepares_images_as_the_image_processor_does(line_images, settings):
    image_processor = TextRecognitionImageProcessor(**{"max_width": 1024, **settings})
    preprocess = textrec_onnx.LinePreprocessor(image_processor.to_dict())
    expected = image_processor(line_images, return_tensors="np", warn_images_out_of_range=False)
    prepared = preprocess([textrec_onnx.load_image(image) for image in line_images])
    np.testing.assert_array_equal(prepared["pixel_mask"], expected["pixel_mask"])
    np.testing.assert_allclose(prepared["pixel_values"], expected["pixel_values"], atol=1e-6)


def test_the_reader_loads_integer_scans_and_camera_images_as_textrec_does(line_images, tmp_path):
    """16-bit images at their own depth (a 12-bit scan is not read as blank), a PIL image turned by its EXIF
    orientation, text told from its ground by colour alone: the ONNX reader's copy of `load_image` gives textrec's
    pixels."""
    from textrec.processing.image_processing_text_recognition import load_image

    grey = np.asarray(line_images[0].convert("L"), dtype=np.float64)
    exif = Image.Exif()
    exif[0x0112] = 6
    line_images[0].convert("RGB").save(tmp_path / "camera.jpg", exif=exif)
    with Image.open(tmp_path / "camera.jpg") as camera:
        camera.load()
    sources = [Image.fromarray(np.round(grey / 255 * (2**bits - 1)).astype(np.uint16)) for bits in (12, 16)]
    red_on_blue = Image.new("RGB", line_images[0].size, (40, 60, 200))
    red_on_blue.paste((200, 40, 40), mask=Image.fromarray((grey < 128).astype(np.uint8) * 255))
    sources += [Image.fromarray(grey.astype(np.int32)), camera, red_on_blue]
    for source in sources:
        assert np.array_equal(np.asarray(textrec_onnx.load_image(source)), np.asarray(load_image(source)))
    assert textrec_onnx.load_image(camera).size == line_images[0].size[::-1]


@pytest.mark.parametrize("feature_height, width_divisor", [(1, 4), (1, 8), (2, 16), (4, 3)])
def test_the_exportable_feature_mask_equals_the_encoders_pooled_pixel_mask(line_images, feature_height, width_divisor):
    from textrec.processing.onnx_export import right_padded_feature_mask

    image_processor = TextRecognitionImageProcessor(max_width=1024)
    pixel_mask = image_processor(line_images, return_tensors="pt", warn_images_out_of_range=False)["pixel_mask"]
    feature_size = (feature_height, pixel_mask.shape[-1] // width_divisor)
    assert torch.equal(right_padded_feature_mask(pixel_mask, feature_size), downsample_pixel_mask(pixel_mask, feature_size))


@needs_onnx
def test_the_onnx_reader_reads_what_recognize_reads(crnn_lines_onnx, line_files):
    model, processor = load_recognizer("crnn-lines")
    expected = recognize(model, processor, line_files, batch_size=4, progress=False).texts
    reader = textrec_onnx.OnnxLineReader(crnn_lines_onnx, num_threads=1)
    assert reader.read(line_files, batch_size=4) == expected
    assert sum(map(len, expected)) > 100  # the lines are read, not all empty


@needs_onnx
def test_the_export_writes_the_int8_model_the_settings_and_the_card(crnn_lines_onnx, line_files):
    import json

    names = {path.name for path in crnn_lines_onnx.iterdir()}
    # crnn-lines reads with a character n-gram: its tables and the search come beside the network.
    assert names == {"model.onnx", "model_int8.onnx", "onnx_config.json", "tokenizer.json", "textrec_onnx.py", "README.md",
                     textrec_onnx.LUMINANCE_FILE, textrec_onnx.LANGUAGE_MODEL_FILE, textrec_onnx.BEAM_SEARCH_FILE}
    assert (crnn_lines_onnx / "model_int8.onnx").stat().st_size < (crnn_lines_onnx / "model.onnx").stat().st_size / 2
    config = json.loads((crnn_lines_onnx / "onnx_config.json").read_text())
    _, processor = load_recognizer("crnn-lines")
    assert config["image_processor"] == json.loads(json.dumps(processor.image_processor.to_dict()))
    texts = textrec_onnx.OnnxLineReader(crnn_lines_onnx, int8=True, num_threads=1).read(line_files)
    assert len(texts) == len(line_files) and sum(map(len, texts)) > 100
    card = (crnn_lines_onnx / "README.md").read_text()
    assert "library_name: onnx" in card and "textrec_onnx.py" in card


@needs_onnx
@pytest.mark.slow
@pytest.mark.parametrize("name", ["crnn-handwriting", "self-attention-lines", "resnet-transformer-lines", "trocr-lines"])
def test_every_line_release_with_a_ctc_head_exports_and_reads_as_its_ctc_head(name, line_files, tmp_path):
    from textrec.processing.onnx_export import export_onnx

    folder = export_onnx(name, tmp_path / name)
    model, processor = load_recognizer(name)
    expected = recognize(model, processor, line_files, batch_size=4, decoding="ctc", progress=False).texts
    assert textrec_onnx.OnnxLineReader(folder, num_threads=1).read(line_files, batch_size=4) == expected


def test_a_model_without_a_ctc_head_is_refused_naming_what_it_lacks(tmp_path, capsys):
    with pytest.raises(SystemExit):
        export_cli.main(["--model", "sharp-attention-digits", "--format", "onnx", "--output_dir", str(tmp_path / "out")])
    error = capsys.readouterr().err
    assert "sharp-attention-digits has no CTC head" in error and "reads with 'attention'" in error
    assert not (tmp_path / "out").exists()


def test_an_onnx_export_into_a_folder_holding_files_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(SystemExit):
        export_cli.main(["--model", "crnn-lines", "--format", "onnx", "--output_dir", str(tmp_path)])
    assert "is not empty (notes.txt)" in capsys.readouterr().err
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]


@needs_onnx
@pytest.mark.slow
def test_the_reader_reads_the_same_text_in_a_virtual_environment_without_torch(crnn_lines_onnx, line_files, tmp_path):
    """A fresh virtual environment with onnxruntime, numpy and pillow from the package index (not this one's site
    packages): `import torch` fails there, and `textrec_onnx.py` prints the lines `recognize()` reads here."""
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = str(environment / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "-q", "onnxruntime", "numpy", "pillow"],
                             capture_output=True, text=True)
    if install.returncode:
        pytest.skip(f"cannot install onnxruntime, numpy and pillow from the package index: {install.stderr[-500:]}")
    clean = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    no_torch = subprocess.run([python, "-c", "import torch"], capture_output=True, text=True, env=clean)
    assert no_torch.returncode != 0 and "No module named 'torch'" in no_torch.stderr
    read = subprocess.run([python, str(crnn_lines_onnx / "textrec_onnx.py"), str(crnn_lines_onnx), *line_files,
                           "--batch_size", "4"], capture_output=True, text=True, env=clean, cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    model, processor = load_recognizer("crnn-lines")
    expected = recognize(model, processor, line_files, batch_size=4, progress=False).texts
    assert read.stdout.split("\n")[:-1] == expected


@needs_onnx
def test_the_reader_names_and_skips_an_image_it_cannot_read(crnn_lines_onnx, line_files, tmp_path, capsys):
    """`textrec_onnx.py FOLDER a missing.png empty.png b`: the readable lines are printed, each unreadable image
    named on stderr (not found, empty) with an empty output line in its place, and the run exits with status 1, as
    `textrec-recognize` does; `read()` without `errors` still raises on the first."""
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    images = [str(line_files[0]), str(tmp_path / "missing.png"), str(empty), str(line_files[1])]
    with pytest.raises(SystemExit) as exit_info:
        textrec_onnx.main([str(crnn_lines_onnx), *images, "--num_threads", "1"])
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    reader = textrec_onnx.OnnxLineReader(crnn_lines_onnx, num_threads=1)
    expected = reader.read([line_files[0], line_files[1]])
    assert captured.out.split("\n")[:-1] == [expected[0], "", "", expected[1]]
    assert "image 2 of 4: image file" in captured.err and "missing.png' not found" in captured.err
    assert "empty.png' is empty (0 bytes)" in captured.err and "2 of 4 images could not be read" in captured.err
    with pytest.raises(ValueError, match="not found"):
        reader.read(images)


@needs_onnx
def test_the_reader_warns_of_an_image_that_holds_no_text_as_textrec_does(crnn_lines_onnx, line_files, tmp_path, capsys):
    """A 1x1 image and a blank one: read (empty lines, exit status 0), each with textrec's warning on stderr (tiny
    image; looks blank), not a silent empty line; a line of text draws no warning."""
    from textrec.processing.image_processing_text_recognition import TextRecognitionImageProcessor as Processor

    tiny, blank = tmp_path / "tiny.png", tmp_path / "blank.png"
    Image.new("L", (1, 1), 0).save(tiny)
    Image.new("L", (800, 100), 255).save(blank)
    textrec_onnx.main([str(crnn_lines_onnx), str(line_files[0]), str(tiny), str(blank), "--num_threads", "1"])
    errors = capsys.readouterr().err.splitlines()
    processor = Processor()
    expected = [processor.size_warning(1, 1), processor.size_warning(800, 100, Image.open(blank))]
    assert [line.split(": ", 1)[1] for line in errors] == [  # after the program's name
        f"image 2 of 3: {expected[0]}; read all the same", f"image 3 of 3: {expected[1]}; read all the same"], errors


@needs_onnx
def test_a_model_reading_with_a_language_model_exports_its_search_and_reads_alike(line_files, tmp_path):
    """The n-gram's tables, the search settings (its line-break marks too) and the beam search's file go with the
    export; the reader reads what textrec reads, which is not best path."""
    from textrec.model_cards.hub import export_for_hub
    from textrec.processing.onnx_export import export_onnx

    from .test_one_reading import crnn_with_language_model

    model, processor = crnn_with_language_model()
    export_for_hub(model, processor, tmp_path / "model")
    folder = export_onnx(str(tmp_path / "model"), tmp_path / "onnx", int8=False)
    assert {"ctc_beam_search.py", "language_model.npz"} <= {path.name for path in folder.iterdir()}
    expected = recognize(model, processor, line_files, batch_size=4, progress=False).texts
    assert expected != recognize(model, processor, line_files, batch_size=4, num_beams=1, progress=False).texts
    reader = textrec_onnx.OnnxLineReader(folder, num_threads=1)
    assert reader.search["line_break_token_ids"] == model.generation_config.line_break_token_ids
    assert reader.read(line_files, batch_size=4) == expected
