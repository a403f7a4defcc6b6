"""Bad input costs nothing else: datasets checked in full before training, model folders that name what is
broken, one-line errors from the commands, and a trained model that survives a failing final evaluation."""

import io
import json
import logging
import re
import shutil

import datasets
import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw
from safetensors.torch import load_file, save_file
from transformers import pipeline

from textrec.processing.data import load_text_recognition_dataset, make_synthetic_lines
from textrec.scripts import evaluate as evaluate_cli
from textrec.scripts import export as export_cli
from textrec.scripts import pretrain_charbert as pretrain_charbert_cli
from textrec.scripts import recognize as recognize_cli
from textrec.scripts import train as train_cli
from textrec.processing.training.architectures import get_spec
from textrec.model_cards.hub import export_for_hub
from textrec.processing import load_image
from textrec.processing.inference import iter_recognize, load_recognizer, recognize

from textrec.processing.training.trainer import TextRecognitionTrainer
from textrec.processing.training import ModelArguments, build_recognizer

from .test_train_cli import tiny_run_arguments


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model") / "good"
    torch.manual_seed(0)
    model_args = ModelArguments(model="self-attention", preset="tiny")
    spec = get_spec("self-attention")
    model, processor = build_recognizer(model_args, spec)
    export_for_hub(model, processor, folder)
    return folder


def remove(name):
    return lambda folder: (folder / name).unlink()


def truncate(name):
    def cut(folder):
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: len(data) // 2])

    return cut


def shrink_vocabulary(folder):
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = 10
    (folder / "config.json").write_text(json.dumps(config))


def grow_vocabulary(folder):
    """Weights of a model with 20 more tokens than config.json and tokenizer.json say."""
    weights = load_file(folder / "model.safetensors")
    for name in ("decoder.embed_tokens.weight", "lm_head.weight", "lm_head.bias"):
        weights[name] = torch.cat([weights[name], weights[name][:20]])
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})


def unknown_model_type(folder):
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "no-such-architecture"
    (folder / "config.json").write_text(json.dumps(config))


BROKEN_FOLDERS = {
    "no config.json": (remove("config.json"), FileNotFoundError, "has no config.json"),
    "no weights": (remove("model.safetensors"), FileNotFoundError, "has no model.safetensors"),
    "no tokenizer.json": (remove("tokenizer.json"), FileNotFoundError, "has no tokenizer.json"),
    "weights cut short": (truncate("model.safetensors"), ValueError, "model.safetensors cannot be read"),
    "config cut short": (truncate("config.json"), ValueError, "config.json is not valid JSON"),
    "tokenizer cut short": (truncate("tokenizer.json"), ValueError, "tokenizer.json is not valid JSON"),
    "weights of a larger vocabulary": (
        grow_vocabulary, ValueError, r"model.safetensors does not fit the textrec-self-attention model that its "
        r"config.json describes: 3 weights have another shape \(decoder.embed_tokens.weight: \(119, 32\) in the file"),
    "vocabulary smaller than the tokenizer": (shrink_vocabulary, ValueError, "do not belong together"),
    "unknown model_type": (unknown_model_type, ValueError, "no-such-architecture"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_FOLDERS))
def test_a_broken_model_folder_is_named(model_folder, tmp_path, case):
    breaks, error, message = BROKEN_FOLDERS[case]
    folder = tmp_path / "broken"
    shutil.copytree(model_folder, folder)
    breaks(folder)
    with pytest.raises(error, match=message):
        load_recognizer(str(folder))


@pytest.mark.parametrize("name", ["runs/no-such-run", "./missing", "no-such-release"])
def test_a_missing_model_is_no_such_folder_or_released_name(name):
    with pytest.raises(FileNotFoundError, match="no such model folder or released name"):
        load_recognizer(name)


def test_command_errors_are_one_line_and_debug_shows_the_traceback(model_folder, tmp_path, capsys):
    (tmp_path / "line.png").write_bytes(b"")
    with pytest.raises(SystemExit) as exit_info:
        recognize_cli.main(["--model", str(tmp_path / "missing"), str(tmp_path)])
    assert exit_info.value.code == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("textrec-recognize: error: no such model folder or released name")
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    with pytest.raises(FileNotFoundError):
        recognize_cli.main(["--model", str(tmp_path / "missing"), str(tmp_path), "--debug"])


def test_a_failing_final_evaluation_keeps_the_trained_model(tmp_path, monkeypatch):
    def failing_evaluation(self, *args, **kwargs):
        raise ValueError("evaluation data broken")

    monkeypatch.setattr(TextRecognitionTrainer, "evaluate", failing_evaluation)
    with pytest.raises(ValueError, match="evaluation data broken"):
        train_cli.run(tiny_run_arguments(tmp_path / "run", max_steps=2, eval_strategy="no"))
    model, _ = load_recognizer(str(tmp_path / "run"))
    assert model.num_parameters() > 0


# ------------------------------------------------------------------------------------------------ datasets


@pytest.fixture(scope="module")
def lines():
    """Six rendered print lines: (image, text) pairs."""
    rendered = make_synthetic_lines(6, seed=11, augment=False)
    return list(zip(rendered["image"], rendered["text"]))


def truncated_jpeg(image: Image.Image) -> bytes:
    """`image` as a JPEG cut in half: Pillow's `verify()` passes it, decoding fails."""
    buffer = io.BytesIO()
    image.convert("L").save(buffer, format="JPEG")
    return buffer.getvalue()[: len(buffer.getvalue()) // 2]


def write_folder(folder, lines, entries):
    """An image folder: `entries` are (file name, text) metadata rows; a file name of `lines` index i ("good3.png")
    gets line i's image, "cut.jpg" a truncated JPEG, "empty.png" zero bytes, anything else no file."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "metadata.jsonl").open("w") as metadata:
        for name, text in entries:
            if name.startswith("good"):
                lines[int(name[4])][0].save(folder / name)
            elif name == "cut.jpg":
                (folder / name).write_bytes(truncated_jpeg(lines[0][0]))
            elif name == "empty.png":
                (folder / name).write_bytes(b"")
            metadata.write(json.dumps({"file_name": name, "text": text}) + "\n")
    return folder


def mixed_folder(folder, lines):
    """Three good rows among one of each bad kind."""
    return write_folder(
        folder,
        lines,
        [
            ("good0.png", lines[0][1]),
            ("cut.jpg", "a JPEG cut short"),
            ("good1.png", None),
            ("good2.png", "   "),
            ("good3.png", 12),
            ("missing.png", "no such file"),
            ("good4.png", lines[4][1]),
            ("empty.png", "zero bytes"),
            ("good5.png", lines[5][1]),
        ],
    )


def warnings_of(caplog):
    return [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]


def test_an_image_folder_is_checked_in_full_and_one_warning_names_each_bad_row(tmp_path, lines, caplog):
    folder = mixed_folder(tmp_path / "data", lines)
    with caplog.at_level(logging.WARNING, logger="textrec"):
        dataset = load_text_recognition_dataset(folder)
    assert dataset["text"] == [lines[0][1], lines[4][1], lines[5][1]]
    assert all(isinstance(image, Image.Image) for image in dataset["image"])
    (warning,) = warnings_of(caplog)
    assert warning.startswith(f"Skipped 6 of 9 rows of {folder / 'metadata.jsonl'} (")
    for expected in (
        "line 2 (cut.jpg): image cannot be decoded (image file is truncated",
        "line 3 (good1.png): null text",
        "line 4 (good2.png): empty text ('   ')",
        "line 5 (good3.png): non-string text (12, a int)",
        "line 6 (missing.png): image file not found",
        "line 8 (empty.png): image cannot be decoded",
    ):
        assert expected in warning
    assert "image cannot be decoded: 2" in warning and "\n" not in warning


def test_a_malformed_metadata_line_is_named_by_file_and_line(tmp_path, lines):
    folder = write_folder(tmp_path / "data", lines, [("good0.png", "fine"), ("good1.png", "fine too")])
    with (folder / "metadata.jsonl").open("a") as metadata:
        metadata.write('{"file_name": "good2.png", "text": "no closing brace"\n')
    with pytest.raises(ValueError, match=r"metadata.jsonl, line 3: not valid JSON"):
        load_text_recognition_dataset(folder)


def test_a_folder_without_a_usable_row_is_an_error(tmp_path, lines):
    folder = write_folder(tmp_path / "data", lines, [("cut.jpg", "cut"), ("good0.png", "")])
    with pytest.raises(ValueError, match=r"no usable row: 2 of 2 rows .*line 1 \(cut.jpg\)"):
        load_text_recognition_dataset(folder)


def test_a_saved_dataset_is_checked_in_the_rows_kept(tmp_path, lines, caplog):
    good = io.BytesIO()
    lines[0][0].save(good, format="PNG")
    images = [{"bytes": good.getvalue(), "path": None}] * 6
    images[2] = {"bytes": truncated_jpeg(lines[1][0]), "path": None}
    texts = ["zero", "one", "two", None, "four", ""]
    features = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})
    saved = datasets.Dataset.from_dict({"image": images, "text": texts}, features=features)
    saved.save_to_disk(str(tmp_path / "saved"))
    with caplog.at_level(logging.WARNING, logger="textrec"):
        dataset = load_text_recognition_dataset(tmp_path / "saved")
    assert dataset["text"] == ["zero", "one", "four"]
    (warning,) = warnings_of(caplog)
    assert "Skipped 3 of 6 rows" in warning
    assert "row 2: image cannot be decoded (image file is truncated" in warning
    assert "row 3: null text" in warning and "row 5: empty text ('')" in warning


def test_training_and_evaluation_data_are_checked_before_training_and_the_good_rows_train(tmp_path, lines, caplog):
    folder = mixed_folder(tmp_path / "data", lines)
    arguments = [*tiny_run_arguments(tmp_path / "run", max_steps=1), f"--dataset={folder}", f"--eval_dataset={folder}",
                 "--eval_split=train", "--per_device_train_batch_size=2", "--per_device_eval_batch_size=2"]
    with caplog.at_level(logging.WARNING, logger="textrec"):
        metrics = train_cli.run(arguments)
    skipped = [warning for warning in warnings_of(caplog) if warning.startswith("Skipped")]
    assert len(skipped) == 2 and all("line 2 (cut.jpg)" in warning for warning in skipped)  # training, evaluation
    assert metrics["epoch"] == 0.5  # one step of two rows: half an epoch of the three good rows
    assert (tmp_path / "run" / "model.safetensors").is_file()


# ------------------------------------------------------------------------------------------------ recognition


def test_the_pipeline_honours_generate_kwargs_and_refuses_options_it_cannot_read_by(sample_line_images):
    """`generate_kwargs` (transformers' pipelines' way) reads as the same option given alone, and as `recognize()`
    reads with it; beams under 1, a decoding the model lacks or an unknown one, an option given twice otherwise and
    an unknown argument are refused, not read with the defaults; so is `generate(num_beams=0)`."""
    model, processor = load_recognizer("crnn-lines")
    reader = pipeline("text-recognition", model=model, processor=processor)
    best_path = recognize(model, processor, sample_line_images, num_beams=1, progress=False).texts
    searched = recognize(model, processor, sample_line_images, progress=False).texts
    assert best_path != searched  # the lines tell the two readings apart
    assert [row["generated_text"] for row in reader(sample_line_images)] == searched
    for options in (dict(generate_kwargs={"num_beams": 1}), dict(num_beams=1), dict(generate_kwargs={"decoding": "ctc", "num_beams": 1})):
        assert [row["generated_text"] for row in reader(sample_line_images, **options)] == best_path, options
    refused = [
        (dict(num_beams=0), ValueError, "num_beams must be a whole number >= 1"),
        (dict(generate_kwargs={"num_beams": -2}), ValueError, "num_beams must be a whole number >= 1"),
        (dict(decoding="foo"), ValueError, "decoding must be one of"),
        (dict(decoding="attention"), ValueError, "has no attention decoder"),
        (dict(num_beams=2, generate_kwargs={"num_beams": 3}), ValueError, "num_beams given twice"),
        (dict(foo=1), TypeError, r"unknown arguments \['foo'\]"),
    ]
    for options, error, message in refused:
        with pytest.raises(error, match=message):
            reader(sample_line_images[:1], **options)
    inputs = processor(images=sample_line_images[:1], return_tensors="pt")
    with pytest.raises(ValueError, match="num_beams must be >= 1"):
        model.generate(**inputs, num_beams=0)


def test_nothing_to_read_gives_nothing(model_folder):
    model, processor = load_recognizer(str(model_folder))
    assert pipeline("text-recognition", model=model, processor=processor)([]) == []
    result = recognize(model, processor, [], progress=False)
    assert result.texts == [] and result.errors == {}


@pytest.mark.parametrize(
    "size, message",
    [((1, 1), "tiny image (1x1 pixels"), ((20, 10000), "extreme aspect ratio (20x10000 pixels"),
     ((10000, 20), "a line too long for this model's max_width (10000x20 pixels")],
)
def test_images_far_outside_the_model_range_are_read_with_a_warning_naming_them(
    model_folder, tmp_path, caplog, size, message
):
    model, processor = load_recognizer(str(model_folder))
    odd, usual = tmp_path / "odd.png", tmp_path / "usual.png"
    for path, image_size in ((odd, size), (usual, (200, 32))):
        image = Image.new("L", image_size, 255)
        ImageDraw.Draw(image).rectangle((0, 0, image_size[0] // 2, image_size[1] // 2), fill=0)  # ink: not blank
        image.save(path)
    with caplog.at_level(logging.WARNING):
        result = recognize(model, processor, [str(usual), str(odd)], progress=False)
        texts = pipeline("text-recognition", model=model, processor=processor)([str(usual), str(odd)])
    assert all(isinstance(text, str) for text in result.texts) and len(texts) == 2
    from_recognize, from_pipeline = warnings_of(caplog)  # none about the usual image
    assert from_recognize.startswith(f"image 2 of 2 ({odd}): {message}")
    assert from_pipeline.startswith(f"{odd}: {message}")
    assert all(warning.endswith("; read all the same") and "\n" not in warning for warning in warnings_of(caplog))


# ------------------------------------------------------------------------------------------------ inputs said, not guessed

ONE_IMAGE = {
    "a path as a string": lambda path: str(path),
    "a path": lambda path: path,
    "a PIL image": lambda path: Image.open(path),
    "an array": lambda path: np.asarray(Image.open(path)),
}


@pytest.mark.parametrize("reader", ["recognize", "iter_recognize"])
@pytest.mark.parametrize("case", list(ONE_IMAGE))
def test_the_python_api_refuses_one_image_where_it_takes_a_list(model_folder, tmp_path, lines, case, reader):
    model, processor = load_recognizer(str(model_folder))
    image = ONE_IMAGE[case](one_image(tmp_path, lines))
    with pytest.raises(TypeError, match=r"images must be a list of images .*got a single \w+.*; pass a list: \[image\]"):
        if reader == "recognize":
            recognize(model, processor, image, progress=False)
        else:
            next(iter_recognize(model, processor, image, progress=False))


def eight_bit() -> np.ndarray:
    """A 16 x 40 grey ramp over 0..255: the values every form below holds."""
    return np.tile(np.linspace(0, 255, 40).round().astype(np.uint8), (16, 1))


READ_BY_RANGE = {
    "float32 array of 0..255": lambda: eight_bit().astype(np.float32),
    "float64 array of 0..1": lambda: eight_bit() / 255.0,
    "float16 array of 0..255, RGB": lambda: np.dstack([eight_bit()] * 3).astype(np.float16),
    'mode "I" image of 0..255 (an 8-bit image converted)': lambda: Image.fromarray(eight_bit()).convert("I"),
    'mode "I" image of 0..65535': lambda: Image.fromarray(eight_bit().astype(np.int32) * 257),
    'mode "F" image of 0..255 (an 8-bit image converted)': lambda: Image.fromarray(eight_bit()).convert("F"),
    'mode "F" image of 0..1': lambda: Image.fromarray(eight_bit().astype(np.float32) / 255),
}


@pytest.mark.parametrize("case", list(READ_BY_RANGE))
def test_float_arrays_and_wide_images_are_read_by_the_range_of_their_values(case):
    assert np.array_equal(np.asarray(load_image(READ_BY_RANGE[case]()).convert("L")), eight_bit())


def with_values(value: float) -> np.ndarray:
    """`eight_bit()` as 0..1 floats with two pixels set to `value`."""
    values = eight_bit() / 255.0
    values[3, 7] = values[9, 30] = value
    return values


REFUSED_VALUES = {
    "NaN": (lambda: with_values(np.nan), "a float64 array holding 2 NaN or infinite values (of 640)"),
    "infinity": (lambda: with_values(np.inf), "a float64 array holding 2 NaN or infinite values (of 640)"),
    "normalised values": (lambda: eight_bit() / 127.5 - 1.0, "values from -1 to 1; expected 0..1 or 0..255"),
    "values past 255": (lambda: eight_bit() * 2.0, "values from 0 to 510; expected 0..1 or 0..255"),
    "0..1 values pushed past 1": (
        lambda: eight_bit() / 255.0 * 1.05, "values from 0 to 1.05: above 1, so not 0..1, yet too dark for 0..255"),
    'mode "F" image holding NaN': (
        lambda: Image.fromarray(np.full((16, 40), np.nan, dtype=np.float32)), 'a mode "F" image holding 640 NaN'),
    'mode "I" image of negative values': (
        lambda: Image.fromarray(eight_bit().astype(np.int32) - 128), 'a mode "I" image with values from -128 to 127'),
}


@pytest.mark.parametrize("case", list(REFUSED_VALUES))
def test_values_of_no_image_range_are_refused_naming_them(case):
    make, message = REFUSED_VALUES[case]
    with pytest.raises(ValueError, match=re.escape(message)):
        load_image(make())


@pytest.mark.parametrize("suffix", [".gif", ".tiff"])
def test_an_image_of_several_frames_is_read_at_its_first_with_a_warning_naming_the_file(tmp_path, caplog, suffix):
    path = tmp_path / f"frames{suffix}"
    frames = [Image.new("L", (40, 16), value) for value in (30, 200, 90)]
    frames[0].save(path, save_all=True, append_images=frames[1:])
    with caplog.at_level(logging.WARNING, logger="textrec"):
        first = load_image(path)
        load_image(path)  # once per file
    assert np.asarray(first.convert("L")).max() == 30
    assert warnings_of(caplog) == [f"{path}: an image of 3 frames (animated, or pages); only the first is read"]


def test_the_files_of_a_folder_that_are_not_images_are_counted_and_named(model_folder, tmp_path, lines, capsys):
    folder = tmp_path / "scans"
    folder.mkdir()
    lines[0][0].save(folder / "line.png")
    for name in ("a.txt", "b.csv", "notes.md"):
        (folder / name).write_text("not an image")
    (folder / "older").mkdir()
    recognize_cli.main(["--model", str(model_folder), str(folder)])
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1
    assert (f"textrec-recognize: {folder}: skipped 3 files that are not images: a.txt, b.csv, notes.md; "
            "and 1 sub-folder (not read): older") in captured.err.splitlines()


def test_metadata_paths_outside_the_dataset_folder_are_read_only_when_allowed(tmp_path, lines):
    root = tmp_path / "data"
    (root / "images").mkdir(parents=True)
    lines[0][0].save(root / "images" / "a.png")
    lines[1][0].save(tmp_path / "outside.png")
    write_folder(root / "train", lines, [("../images/a.png", "inside the dataset folder"), ("../../outside.png", "out")])
    with pytest.raises(ValueError, match=r"train/metadata.jsonl, line 2: file_name '../../outside.png' lies outside"):
        load_text_recognition_dataset(root)
    dataset = load_text_recognition_dataset(root, allow_outside_paths=True)
    assert dataset["text"] == ["inside the dataset folder", "out"]


def test_a_utf8_metadata_file_with_a_byte_order_mark_is_read(tmp_path, lines):
    folder = folder_with_metadata(tmp_path, lines, b"\xef\xbb\xbf" + (ROWS + LATIN_1_ROW + "\n").encode("utf-8"))
    assert load_text_recognition_dataset(folder)["text"] == ["café", "zwei", "café"]


# ------------------------------------------------------------------------------------------------ the catalogue

COMMANDS = {
    "textrec-train": train_cli.main, "textrec-recognize": recognize_cli.main, "textrec-evaluate": evaluate_cli.main,
    "textrec-export": export_cli.main, "textrec-pretrain-charbert": pretrain_charbert_cli.main,
}


def train_arguments(tmp_path, *extra):
    return [*tiny_run_arguments(tmp_path / "run", max_steps=1), *extra]


def folder_with_lines(tmp_path, lines, *metadata_lines):
    """An image folder whose metadata.jsonl holds `metadata_lines` as written; good0.png ... good2.png exist."""
    folder = tmp_path / "data"
    folder.mkdir()
    for index in range(3):
        lines[index][0].save(folder / f"good{index}.png")
    (folder / "metadata.jsonl").write_text("".join(line + "\n" for line in metadata_lines))
    return str(folder)


def row(name, text):
    return json.dumps({"file_name": name, "text": text})


CUT_SHORT_LINE = '{"file_name": "good1.png",'
"""A metadata.jsonl line that is not valid JSON."""


def inside_a_file(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    return tmp_path / "a-file" / "run"


def one_image(tmp_path, lines):
    lines[0][0].save(tmp_path / "line.png")
    return str(tmp_path / "line.png")


def training_run_folder(model_folder, tmp_path):
    """A training run's output folder: a model beside the Trainer's state and a checkpoint."""
    folder = tmp_path / "trained"
    shutil.copytree(model_folder, folder)
    (folder / "trainer_state.json").write_text('{"global_step": 2}')
    (folder / "checkpoint-2").mkdir()
    return folder


def corpus_file(tmp_path, name: str, data: bytes) -> str:
    (tmp_path / name).write_bytes(data)
    return str(tmp_path / name)


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (8, 8), 255).save(buffer, format="PNG")
    return buffer.getvalue()


def charbert_arguments(tmp_path, corpus: str, *extra) -> list[str]:
    return ["--corpus", corpus, f"--output_dir={tmp_path / 'run'}", "--use_cpu=True", *extra]


def broken_model(model_folder, tmp_path, breaks=remove("config.json")):
    shutil.copytree(model_folder, tmp_path / "broken")
    breaks(tmp_path / "broken")
    return str(tmp_path / "broken")


def folder_with_metadata(tmp_path, lines, data: bytes):
    """An image folder whose metadata.jsonl holds `data` as given; good0.png ... good2.png exist."""
    folder = folder_with_lines(tmp_path, lines)
    (tmp_path / "data" / "metadata.jsonl").write_bytes(data)
    return folder


ROWS = row("good0.png", "café") + "\n" + row("good1.png", "zwei") + "\n"
"""Two metadata lines; json.dumps writes the é as an escape, so they are ASCII."""
LATIN_1_ROW = '{"file_name": "good2.png", "text": "café"}'
"""A third line with the é written out: in Latin-1, the byte 0xe9, which is no UTF-8."""


BAD_INPUTS = {
    # textrec-train: refused before any step is spent
    "negative --max_steps": (
        "textrec-train", lambda t, lines, model: train_arguments(t, "--max_steps=-5"), "--max_steps must be >= 1"),
    "zero batch size": (
        "textrec-train", lambda t, lines, model: train_arguments(t, "--per_device_train_batch_size=0"),
        "--per_device_train_batch_size must be >= 1"),
    "unknown dataset offline": (
        "textrec-train", lambda t, lines, model: train_arguments(t, "--dataset=no-such-data"),
        "unknown dataset 'no-such-data': no such folder, and no Hub dataset of that name in the local cache "
        "(offline mode, HF_HUB_OFFLINE=1). Expected one of: a synthetic dataset (synthetic-lines"),
    "misspelt synthetic dataset": (
        "textrec-train", lambda t, lines, model: train_arguments(t, "--dataset=synthetic-line"),
        "unknown dataset 'synthetic-line' (did you mean 'synthetic-lines'?)"),
    "missing dataset folder": (
        "textrec-train", lambda t, lines, model: train_arguments(t, f"--dataset={t / 'nowhere' / 'data'}"),
        "No such dataset folder"),
    "malformed metadata.jsonl line": (
        "textrec-train",
        lambda t, lines, model: train_arguments(
            t, f"--dataset={folder_with_lines(t, lines, row('good0.png', 'a'), CUT_SHORT_LINE)}"),
        "metadata.jsonl, line 2: not valid JSON"),
    "metadata.jsonl line that is no object": (
        "textrec-train",
        lambda t, lines, model: train_arguments(t, f"--dataset={folder_with_lines(t, lines, '[1, 2]')}"),
        "metadata.jsonl, line 1: expected a JSON object, got list"),
    "training data without a usable row": (
        "textrec-train",
        lambda t, lines, model: train_arguments(
            t, f"--dataset={folder_with_lines(t, lines, row('good0.png', None), row('gone.png', 'x'))}"),
        "no usable row: 2 of 2 rows"),
    "evaluation data without a usable row": (
        "textrec-train",
        lambda t, lines, model: train_arguments(
            t, f"--eval_dataset={folder_with_lines(t, lines, row('good0.png', ''))}", "--eval_split=train"),
        "no usable row: 1 of 1 rows"),
    "output folder inside a file": (
        "textrec-train",
        lambda t, lines, model: [*train_arguments(t), f"--output_dir={inside_a_file(t)}"],
        "Cannot write to the output folder"),
    "fine-tuning a missing model folder": (
        "textrec-train", lambda t, lines, model: train_arguments(t, f"--model_name_or_path={t / 'missing'}"),
        "no such model folder or released name"),
    "zero epochs": (
        "textrec-train", lambda t, lines, model: train_arguments(t, "--max_steps=-1", "--num_train_epochs=0"),
        "--num_train_epochs must be > 0; got 0.0"),
    "negative epochs": (
        "textrec-train", lambda t, lines, model: train_arguments(t, "--max_steps=-1", "--num_train_epochs=-2"),
        "--num_train_epochs must be > 0; got -2.0"),
    "every batch dropped": (
        "textrec-train",
        lambda t, lines, model: train_arguments(t, "--dataloader_drop_last=True", "--per_device_train_batch_size=64"),
        "--dataloader_drop_last drops every batch: the 48 training rows are fewer than one batch of 64"),
    "misspelt --config_overrides key": (
        "textrec-train", lambda t, lines, model: train_arguments(t, '--config_overrides={"hiden_size": 8}'),
        "--config_overrides: SelfAttentionRecognizerConfig has no 'hiden_size' (did you mean 'hidden_size'?); its "
        "keys: vocab_size, num_channels, cnn_channels"),
    "misplaced --config_overrides key of a composite": (
        "textrec-train",
        lambda t, lines, model: [*train_arguments(t, '--config_overrides={"d_model": 8}'), "--model=trocr"],
        "TrOCRRecognizerConfig has no 'd_model' (did you mean 'decoder.d_model'?)"),
    "--config_overrides when fine-tuning": (
        "textrec-train",
        lambda t, lines, model: train_arguments(t, f"--model_name_or_path={model}", '--config_overrides={"dropout": 0.2}'),
        "--config_overrides sets a new model's configuration; a fine-tuned model (--model_name_or_path) keeps its own"),
    "missing --charset file": (
        "textrec-train", lambda t, lines, model: train_arguments(t, f"--charset={t / 'charsets' / 'latin.chars'}"),
        "latin.chars: no such file"),
    "fine-tuning from weights that do not fit": (
        "textrec-train",
        lambda t, lines, model: train_arguments(t, f"--model_name_or_path={broken_model(model, t, grow_vocabulary)}"),
        "model.safetensors does not fit the textrec-self-attention model that its config.json describes: 3 weights "
        "have another shape (decoder.embed_tokens.weight: (119, 32) in the file, (99, 32) in the model"),
    "metadata.jsonl naming a file outside the folder": (
        "textrec-train",
        lambda t, lines, model: train_arguments(
            t, f"--dataset={folder_with_lines(t, lines, row('good0.png', 'a'), row('../../etc/passwd', 'b'))}"),
        "metadata.jsonl, line 2: file_name '../../etc/passwd' lies outside the dataset folder"),
    "metadata.jsonl naming an absolute path": (
        "textrec-train",
        lambda t, lines, model: train_arguments(t, f"--dataset={folder_with_lines(t, lines, row('/etc/line.png', 'b'))}"),
        "metadata.jsonl, line 1: file_name '/etc/line.png' lies outside the dataset folder"),
    "UTF-16 metadata.jsonl": (
        "textrec-train",
        lambda t, lines, model: train_arguments(t, f"--dataset={folder_with_metadata(t, lines, ROWS.encode('utf-16'))}"),
        "metadata.jsonl, line 1: UTF-16 or UTF-32 text (a byte order mark); save it as UTF-8"),
    "UTF-16 metadata.jsonl without a byte order mark": (
        "textrec-train",
        lambda t, lines, model: train_arguments(
            t, f"--dataset={folder_with_metadata(t, lines, ROWS.encode('utf-16-le'))}"),
        "metadata.jsonl, line 1: NUL bytes (UTF-16 or UTF-32 text?); save it as UTF-8"),
    "Latin-1 metadata.jsonl": (
        "textrec-train",
        lambda t, lines, model: train_arguments(
            t, f"--dataset={folder_with_metadata(t, lines, (ROWS + LATIN_1_ROW).encode('latin-1'))}"),
        "metadata.jsonl, line 3: not UTF-8 text (invalid continuation byte at byte 39: b'\\xe9\"}'); save it as UTF-8"),
    # textrec-recognize
    "zero --batch_size": (
        "textrec-recognize", lambda t, lines, model: ["--model", str(model), str(t), "--batch_size", "0"],
        "argument --batch_size: must be >= 1, got 0"),
    "negative --num_beams": (
        "textrec-recognize", lambda t, lines, model: ["--model", str(model), str(t), "--num_beams", "-1"],
        "argument --num_beams: must be >= 1, got -1"),
    "missing model folder": (
        "textrec-recognize", lambda t, lines, model: ["--model", str(t / "missing"), one_image(t, lines)],
        "no such model folder or released name"),
    "model folder without config.json": (
        "textrec-recognize", lambda t, lines, model: ["--model", broken_model(model, t), one_image(t, lines)],
        "has no config.json"),
    "model folder whose weights do not fit": (
        "textrec-recognize",
        lambda t, lines, model: ["--model", broken_model(model, t, grow_vocabulary), one_image(t, lines)],
        "does not fit the textrec-self-attention model that its config.json describes: 3 weights have another shape"),
    "model folder with a cut-short tokenizer.json": (
        "textrec-recognize",
        lambda t, lines, model: ["--model", broken_model(model, t, truncate("tokenizer.json")), one_image(t, lines)],
        "tokenizer.json is not valid JSON"),
    "folder without images": (
        "textrec-recognize", lambda t, lines, model: ["--model", str(model), str(t)], "no images found in "),
    "several pages as hOCR without an output folder": (
        "textrec-recognize", lambda t, lines, model: ["--model", str(model), "--page", "--output_format", "hocr",
                                                      one_image(t, lines), one_image(t, lines)],
        "hocr writes one document per page: give --output_dir"),
    # textrec-evaluate
    "evaluating on an unknown dataset": (
        "textrec-evaluate", lambda t, lines, model: ["--model", str(model), "--dataset", "no-such-data"],
        "unknown dataset 'no-such-data'"),
    "evaluating on data without a usable row": (
        "textrec-evaluate",
        lambda t, lines, model: ["--model", str(model), "--split", "train",
                                 "--dataset", folder_with_lines(t, lines, row("good0.png", None))],
        "no usable row"),
    "zero evaluation batch size": (
        "textrec-evaluate", lambda t, lines, model: ["--model", str(model), "--batch_size", "0"],
        "argument --batch_size: must be >= 1, got 0"),
    "zero evaluation samples": (
        "textrec-evaluate", lambda t, lines, model: ["--model", str(model), "--num_samples", "0"],
        "argument --num_samples: must be >= 1, got 0"),
    "--output_json where no folder can be made": (
        "textrec-evaluate", lambda t, lines, model: ["--model", str(model), "--output_json", str(inside_a_file(t) / "s.json")],
        "s.json: cannot write into"),
    # textrec-export
    "exporting into a training run's folder": (
        "textrec-export",
        lambda t, lines, model: ["--model", str(model), "--output_dir", str(training_run_folder(model, t))],
        "is a training run's folder (trainer_state.json, checkpoint-2): exporting into it would replace its trained model"),
    # textrec-pretrain-charbert: the corpus is checked before anything is trained on it
    "a PNG as the corpus": (
        "textrec-pretrain-charbert",
        lambda t, lines, model: charbert_arguments(t, corpus_file(t, "corpus.png", png_bytes())),
        "corpus.png is a PNG image, not text"),
    "a Latin-1 corpus": (
        "textrec-pretrain-charbert",
        lambda t, lines, model: charbert_arguments(t, corpus_file(t, "corpus.txt", "one\ntwo\ncaf\u00e9\n".encode("latin-1"))),
        "corpus.txt is not UTF-8: line 3 has the byte 0xe9"),
    "a corpus smaller than --eval_samples": (
        "textrec-pretrain-charbert",
        lambda t, lines, model: charbert_arguments(t, corpus_file(t, "corpus.txt", b"one\ntwo\nthree\n"), "--eval_samples=3"),
        "the corpus has 3 documents (lines or records): --eval_samples 3 holds out that many"),
    "misspelt CharBERT --config_overrides key": (
        "textrec-pretrain-charbert",
        lambda t, lines, model: charbert_arguments(
            t, corpus_file(t, "corpus.txt", "".join(f"line {i} of some words\n" for i in range(20)).encode()),
            "--eval_samples=5", "--vocab_size=300", "--word_vocab_size=20", '--config_overrides={"char_rnn_scop": "token"}'),
        "--config_overrides: CharBertConfig has no 'char_rnn_scop' (did you mean 'char_rnn_scope'?)"),
    "zero --eval_samples": (
        "textrec-pretrain-charbert",
        lambda t, lines, model: charbert_arguments(t, corpus_file(t, "corpus.txt", b"one\n"), "--eval_samples=0"),
        "--eval_samples must be >= 1"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_catalogue_gives_one_line_naming_the_cause(case, tmp_path, lines, model_folder, capsys, monkeypatch):
    """Each bad input through the command's entry function, in-process: it fails with one line on stderr,
    `textrec-xxx: ...`, that names the cause, and no traceback; training spends no step."""
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    command, arguments, message = BAD_INPUTS[case]
    argv = arguments(tmp_path, lines, model_folder)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        COMMANDS[command](argv)
    stderr = capsys.readouterr().err
    assert exit_info.value.code not in (0, None) and "Traceback" not in stderr
    if isinstance(exit_info.value.code, str):  # SystemExit("textrec-xxx: ...") prints just that
        errors = [exit_info.value.code]
    else:
        errors = [line for line in stderr.splitlines() if line.startswith(f"{command}: ")]
    assert len(errors) == 1 and message in errors[0], stderr
    assert not (tmp_path / "run" / "model.safetensors").exists()


def folder_bytes(folder) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_exporting_into_a_training_run_is_refused_and_the_run_kept_byte_for_byte(model_folder, tmp_path, capsys):
    run = training_run_folder(model_folder, tmp_path)
    before = folder_bytes(run)
    with pytest.raises(SystemExit):
        export_cli.main(["--model", str(model_folder), "--output_dir", str(run)])
    assert "is a training run's folder" in capsys.readouterr().err
    assert folder_bytes(run) == before
    export_cli.run(["--model", str(model_folder), "--output_dir", str(tmp_path / "hub")])


def test_exporting_into_a_folder_holding_files_is_refused_unless_told_to_replace_an_earlier_export(
    model_folder, tmp_path, capsys
):
    hub, own = tmp_path / "hub", tmp_path / "my-folder"
    export_cli.run(["--model", str(model_folder), "--output_dir", str(hub)])
    (hub / "modeling_comer.py").write_text("# an earlier export's code, of another architecture\n")
    (hub / "model.onnx").write_bytes(b"an earlier ONNX export's model")
    own.mkdir()
    (own / "README.md").write_text("my notes\n")
    for folder in (hub, own):
        before = folder_bytes(folder)
        with pytest.raises(SystemExit):
            export_cli.main(["--model", str(model_folder), "--output_dir", str(folder)])
        error = capsys.readouterr().err
        assert "is not empty" in error and "--overwrite_output_dir" in error
        assert folder_bytes(folder) == before
    (hub / ".gitattributes").write_text("*.safetensors filter=lfs\n")  # a Hub clone's
    export_cli.run(["--model", str(model_folder), "--output_dir", str(hub), "--overwrite_output_dir"])
    assert not (hub / "modeling_comer.py").exists() and not (hub / "model.onnx").exists()
    assert (hub / "config.json").is_file() and (hub / ".gitattributes").is_file()
    # A folder holding anything no export writes (a user's lines and their metadata, a sub-folder) is refused even
    # with --overwrite_output_dir: replacing an export must not delete them.
    lines = tmp_path / "my-lines"
    (lines / "more").mkdir(parents=True)
    for name in ("0001.png", "metadata.jsonl", "model.safetensors"):
        (lines / name).write_bytes(b"kept")
    before = folder_bytes(lines)
    with pytest.raises(SystemExit):
        export_cli.main(["--model", str(model_folder), "--output_dir", str(lines), "--overwrite_output_dir"])
    error = capsys.readouterr().err
    assert "holds what no textrec export writes (0001.png, metadata.jsonl, more/)" in error
    assert folder_bytes(lines) == before


def test_evaluate_checks_output_json_before_any_work_and_creates_its_folder(model_folder, tmp_path, monkeypatch, capsys):
    import textrec.processing.inference as inference  # the command imports it when it runs

    load_recognizer = inference.load_recognizer

    def evaluated(*args, **kwargs):
        raise AssertionError("the evaluation ran before --output_json was checked")

    monkeypatch.setattr(inference, "load_recognizer", evaluated)
    with pytest.raises(SystemExit):
        evaluate_cli.main(["--model", str(model_folder), "--output_json", str(inside_a_file(tmp_path) / "s.json")])
    assert "cannot write into" in capsys.readouterr().err
    monkeypatch.setattr(inference, "load_recognizer", load_recognizer)
    output = tmp_path / "new" / "deeper" / "scores.json"
    scores = evaluate_cli.run(["--model", str(model_folder), "--num_samples", "2", "--output_json", str(output)])
    assert json.loads(output.read_text())["num_samples"] == scores["num_samples"] == 2


def test_exporting_a_model_without_a_card_says_the_hub_folder_has_none(model_folder, tmp_path, caplog):
    """A run's checkpoint has no card: its export must not pass for a published model with one."""
    source = tmp_path / "checkpoint-2"
    shutil.copytree(model_folder, source)
    (source / "README.md").unlink(missing_ok=True)
    with caplog.at_level("WARNING", logger="textrec"):
        export_cli.run(["--model", str(source), "--output_dir", str(tmp_path / "hub")])
    assert not (tmp_path / "hub" / "README.md").exists()
    assert f"{source} has no model card (README.md), so the Hub folder {tmp_path / 'hub'} has none" in caplog.text
