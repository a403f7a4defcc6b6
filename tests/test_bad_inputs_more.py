"""More bad inputs that name their cause in one line: broken LMDB datasets, --config_overrides of the wrong type,
a dataset folder without the evaluation split, an export folder that cannot be written, a Hub id offline, a line
turned on its side, fine-tuning a run's own checkpoint into its folder, and a dangling symbolic link to read."""

import io
import json
import os
import shutil
import subprocess
import sys

import datasets
import lmdb
import pytest
from PIL import Image

from textrec.processing.inference import load_recognizer
from textrec.processing.training.output_folder import RUN_RECORD
from textrec.scripts import recognize as recognize_cli
from textrec.scripts import train as train_cli

from .test_bad_inputs import (  # noqa: F401 (fixtures)
    COMMANDS, folder_with_lines, inside_a_file, lines, model_folder, one_image, row, train_arguments,
)
from .test_train_cli import tiny_run_arguments


def write_lmdb(folder, lines, labels=None, count=None) -> str:
    """An LMDB folder in the benchmark layout holding the six `lines` (PNG images), their texts or the byte
    strings `labels`, and `count` as `num-samples` (by default the number of samples)."""
    labels = labels or [text.encode() for _, text in lines]
    with lmdb.open(str(folder), map_size=1 << 24) as environment, environment.begin(write=True) as transaction:
        for index, ((image, _), label) in enumerate(zip(lines, labels), start=1):
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            transaction.put(b"image-%09d" % index, buffer.getvalue())
            transaction.put(b"label-%09d" % index, label)
        transaction.put(b"num-samples", str(len(labels) if count is None else count).encode())
    return str(folder)


def garbage_lmdb(folder, lines) -> str:
    write_lmdb(folder, lines)
    data = folder / "data.mdb"
    data.write_bytes(bytes(range(256)) * (data.stat().st_size // 256))
    return str(folder)


def latin_1_label(folder, lines) -> str:
    labels = [text.encode() for _, text in lines]
    labels[2] = "café".encode("latin-1")
    return write_lmdb(folder, lines, labels)


BROKEN_LMDB = {
    "data.mdb overwritten with garbage": (garbage_lmdb, "data.mdb cannot be read as an LMDB file (", "File is not an LMDB file"),
    "num-samples larger than the samples": (
        lambda folder, lines: write_lmdb(folder, lines, count=9), "lmdb: num-samples is 9, but sample 7 has no "
        "image-000000007 key", None),
    "a label that is not UTF-8": (latin_1_label, "lmdb: label-000000003 is not UTF-8 text (", "b'\\xe9'"),
}


@pytest.mark.parametrize("case", list(BROKEN_LMDB))
def test_a_broken_lmdb_dataset_is_one_line_naming_the_folder_and_the_key(
    case, tmp_path, lines, model_folder, capsys, monkeypatch
):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    make, message, detail = BROKEN_LMDB[case]
    folder = make(tmp_path / "lmdb", lines)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        COMMANDS["textrec-evaluate"](["--model", str(model_folder), "--dataset", folder, "--split", "train"])
    stderr = capsys.readouterr().err
    errors = [line for line in stderr.splitlines() if line.startswith("textrec-evaluate: ")]
    assert exit_info.value.code == 1 and "Traceback" not in stderr
    assert len(errors) == 1 and message in errors[0] and (detail is None or detail in errors[0]), stderr


def test_an_lmdb_dataset_cut_short_is_named_not_a_crash(tmp_path, lines):
    """Reading a page past the end of a cut-short data.mdb would kill the process (SIGBUS): the loader runs in a
    process of its own."""
    folder = tmp_path / "lmdb"
    write_lmdb(folder, lines)
    data = (folder / "data.mdb").read_bytes()
    (folder / "data.mdb").write_bytes(data[: len(data) // 3 // 4096 * 4096])
    code = ("import sys; from textrec.processing.data import load_text_recognition_dataset; "
            "load_text_recognition_dataset(sys.argv[1], split='train')")
    loading = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")})
    assert loading.returncode == 1, loading.stderr[-2000:]
    assert f"ValueError: {folder / 'data.mdb'} is cut short: " in loading.stderr


BAD_INPUTS = {
    "--config_overrides of a string for a size": (
        "textrec-train", lambda t, lines, model: train_arguments(t, '--config_overrides={"hidden_size": "64"}'),
        '--config_overrides: hidden_size = "64" is of type str; SelfAttentionRecognizerConfig expects int (its default: '),
    "--config_overrides of a bool for a size": (
        "textrec-train", lambda t, lines, model: train_arguments(t, '--config_overrides={"hidden_size": true}'),
        "--config_overrides: hidden_size = true is of type bool; SelfAttentionRecognizerConfig expects int"),
    "--config_overrides of a string in a part of a composite": (
        "textrec-train",
        lambda t, lines, model: [*train_arguments(t, '--config_overrides={"decoder": {"d_model": "8"}}'), "--model=trocr"],
        '--config_overrides: decoder.d_model = "8" is of type str; TrOCRRecognizerConfig expects int'),
    "a dataset folder without the evaluation split": (
        "textrec-train",
        lambda t, lines, model: train_arguments(t, f"--dataset={folder_with_lines(t, lines, row('good0.png', 'a'))}"),
        "data has no split 'validation' to evaluate on; available: ['train']. Pass --eval_split one of them "
        "(--eval_split train), or --eval_dataset with data to evaluate on."),
    "evaluating a dataset folder without the split asked for": (
        "textrec-evaluate",
        lambda t, lines, model: ["--model", str(model), "--split", "test",
                                 f"--dataset={folder_with_lines(t, lines, row('good0.png', 'a'))}"],
        "data has no split 'test'; available: ['train']. Pass --split one of them (--split train)."),
    "exporting into a folder inside a file": (
        "textrec-export", lambda t, lines, model: ["--model", str(model), "--output_dir", str(inside_a_file(t))],
        "a-file/run: cannot write into {t}/a-file (Not a directory)"),
    "exporting under /proc": (
        "textrec-export", lambda t, lines, model: ["--model", str(model), "--output_dir", "/proc/textrec-export"],
        "--output_dir /proc/textrec-export: cannot write into /proc ("),
    "a Hub id offline and not cached": (
        "textrec-recognize", lambda t, lines, model: ["--model", "someuser/no-such-ocr", one_image(t, lines)],
        "no such model folder or released name: someuser/no-such-ocr, and no Hub model of that name in the local "
        "cache (offline mode, HF_HUB_OFFLINE=1"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_gives_one_line_naming_the_cause(case, tmp_path, lines, model_folder, capsys, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    command, arguments, message = BAD_INPUTS[case]
    argv = arguments(tmp_path, lines, model_folder)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        COMMANDS[command](argv)
    stderr = capsys.readouterr().err
    errors = [line for line in stderr.splitlines() if line.startswith(f"{command}: ")]
    assert exit_info.value.code == 1 and "Traceback" not in stderr
    assert len(errors) == 1 and message.replace("{t}", str(tmp_path)) in errors[0], stderr
    assert not (tmp_path / "run" / "model.safetensors").exists()


def test_the_suggested_eval_split_trains(tmp_path, lines):
    folder = folder_with_lines(tmp_path, lines, row("good0.png", "a"), row("good1.png", "b"))
    train_cli.run([*tiny_run_arguments(tmp_path / "run", max_steps=1), f"--dataset={folder}", "--eval_split=train",
                   "--per_device_train_batch_size=2", "--per_device_eval_batch_size=2"])
    assert (tmp_path / "run" / "model.safetensors").is_file()


def test_a_line_turned_on_its_side_is_said_to_be_so_and_a_page_to_hold_lines(model_folder, lines):
    _, processor = load_recognizer(str(model_folder))
    line = lines[5][0].convert("L")  # "which the SAG was written, is not"
    turned = line.rotate(90, expand=True)
    page = Image.new("L", (line.width, line.height * 8), 255)
    for index in range(4):
        page.paste(line, (0, line.height * 2 * index))
    warning = processor.image_processor.size_warning(turned.width, turned.height, turned)
    assert warning.startswith(f"it looks like a line of text turned on its side ({turned.width}x{turned.height} pixels")
    assert "this model reads horizontal lines (rotate the image upright)" in warning
    assert processor.image_processor.size_warning(page.width, page.height, page).startswith("it looks like 4 lines")


def test_fine_tuning_a_runs_own_checkpoint_into_its_folder_names_that(tmp_path, capsys):
    run = tmp_path / "run"
    train_cli.run(tiny_run_arguments(run, max_steps=2, eval_strategy="no"))
    assert json.loads((run / RUN_RECORD).read_text())["preset"] == "tiny" and (run / "checkpoint-2").is_dir()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        train_cli.main([*tiny_run_arguments(run, max_steps=4), f"--model_name_or_path={run / 'checkpoint-2'}"])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("textrec-train: error: ")]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"textrec-train: error: --model_name_or_path {run / 'checkpoint-2'} lies inside "
                                f"--output_dir {run} (a checkpoint of the run that folder holds?)")
    assert "--preset" not in errors[0]


def test_a_dangling_symbolic_link_in_a_folder_is_counted_among_the_images_not_read(model_folder, tmp_path, lines, capsys):
    folder = tmp_path / "scans"
    folder.mkdir()
    lines[0][0].save(folder / "line.png")
    (folder / "gone.png").symlink_to(tmp_path / "nowhere.png")
    with pytest.raises(SystemExit) as exit_info:
        recognize_cli.main(["--model", str(model_folder), str(folder)])
    captured = capsys.readouterr()
    # Still one output line per image: the link's is empty (its error is on stderr).
    assert exit_info.value.code == 1 and len(captured.out.splitlines()) == 2 and captured.out.splitlines()[0] == ""
    errors = captured.err.splitlines()
    assert any(line.startswith(f"textrec-recognize: image 1 of 2 ({folder / 'gone.png'}): ") for line in errors), errors
    assert "textrec-recognize: 1 of 2 images could not be read" in errors


def test_a_cut_short_tokenizer_is_named_where_the_processor_loads_it_without_textrec_checks(model_folder, tmp_path):
    """README's snippet loads the processor with `AutoProcessor.from_pretrained`, which textrec's folder checks do
    not guard: a `tokenizer.json` cut short is named there too."""
    from textrec.processing import TextRecognitionProcessor

    folder = tmp_path / "model"
    shutil.copytree(model_folder, folder)
    text = (folder / "tokenizer.json").read_text()
    (folder / "tokenizer.json").write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"tokenizer\.json\) cannot be read, cut short or damaged"):
        TextRecognitionProcessor.from_pretrained(str(folder))
