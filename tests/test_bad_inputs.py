"""Bad input costs nothing else: datasets checked in full before training, model folders that name what is
broken, one-line errors from the commands, and a trained model that survives a failing final evaluation."""

import io
import json
import logging
import shutil

import datasets
import pytest
import torch
from PIL import Image
from transformers import pipeline

from textrec.processing.data import load_text_recognition_dataset, make_synthetic_lines
from textrec.scripts import evaluate as evaluate_cli
from textrec.scripts import recognize as recognize_cli
from textrec.scripts import train as train_cli
from textrec.processing.training.architectures import get_spec
from textrec.model_cards.hub import export_for_hub
from textrec.processing.inference import load_recognizer, recognize

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


def test_nothing_to_read_gives_nothing(model_folder):
    model, processor = load_recognizer(str(model_folder))
    assert pipeline("text-recognition", model=model, processor=processor)([]) == []
    result = recognize(model, processor, [], progress=False)
    assert result.texts == [] and result.errors == {}


@pytest.mark.parametrize(
    "size, message",
    [((1, 1), "tiny image (1x1 pixels"), ((20, 10000), "extreme aspect ratio (20x10000 pixels"),
     ((10000, 20), "extreme aspect ratio (10000x20 pixels")],
)
def test_images_far_outside_the_model_range_are_read_with_a_warning_naming_them(
    model_folder, tmp_path, caplog, size, message
):
    model, processor = load_recognizer(str(model_folder))
    odd, usual = tmp_path / "odd.png", tmp_path / "usual.png"
    Image.new("L", size, 255).save(odd)
    Image.new("L", (200, 32), 255).save(usual)
    with caplog.at_level(logging.WARNING):
        result = recognize(model, processor, [str(usual), str(odd)], progress=False)
        texts = pipeline("text-recognition", model=model, processor=processor)([str(usual), str(odd)])
    assert all(isinstance(text, str) for text in result.texts) and len(texts) == 2
    from_recognize, from_pipeline = warnings_of(caplog)  # none about the usual image
    assert from_recognize.startswith(f"image 2 of 2 ({odd}): {message}")
    assert from_pipeline.startswith(f"{odd}: {message}")
    assert all(warning.endswith("; read all the same") and "\n" not in warning for warning in warnings_of(caplog))


# ------------------------------------------------------------------------------------------------ the catalogue

COMMANDS = {
    "textrec-train": train_cli.main, "textrec-recognize": recognize_cli.main, "textrec-evaluate": evaluate_cli.main
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


def broken_model(model_folder, tmp_path):
    shutil.copytree(model_folder, tmp_path / "broken")
    (tmp_path / "broken" / "config.json").unlink()
    return str(tmp_path / "broken")


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
    "missing image file": (
        "textrec-recognize", lambda t, lines, model: ["--model", str(model), str(t / "line.png")],
        "no such file or folder"),
    "folder without images": (
        "textrec-recognize", lambda t, lines, model: ["--model", str(model), str(t)], "no images found"),
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
