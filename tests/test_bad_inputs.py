"""Bad input costs nothing else: model folders that name what is broken, one-line errors from the commands,
and a trained model that survives a failing final evaluation."""

import json
import shutil

import pytest
import torch

from textrec.scripts import recognize as recognize_cli
from textrec.scripts import train as train_cli
from textrec.scripts.architectures import get_spec
from textrec.scripts.hub_export import export_for_hub
from textrec.scripts.inference import load_recognizer
from textrec.scripts.train import ModelArguments, build_model, build_processor
from textrec.scripts.training import TextRecognitionTrainer

from .test_train_cli import tiny_run_arguments


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model") / "good"
    torch.manual_seed(0)
    model_args = ModelArguments(model="self-attention", preset="tiny")
    spec = get_spec("self-attention")
    processor = build_processor(model_args, spec)
    export_for_hub(build_model(model_args, spec, processor), processor, folder)
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
