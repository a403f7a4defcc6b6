"""The commands answer `--help` at once: their modules import torch, transformers, datasets and textrec's library
inside `run()`, not at their top; and `--device` is checked before any model is loaded."""

import os
import subprocess
import sys
import time

import pytest
import torch

from textrec.scripts import cli
from textrec.scripts import recognize as recognize_cli

LIGHT_COMMANDS = ("recognize", "evaluate", "export")
"""The commands whose parser is plain argparse (textrec-train and textrec-pretrain-charbert build theirs from
transformers' `TrainingArguments` with `HfArgumentParser`, which needs torch)."""
HEAVY_MODULES = ("torch", "transformers", "datasets", "textrec.processing", "textrec.modeling")


@pytest.mark.parametrize("command", LIGHT_COMMANDS)
def test_building_a_commands_parser_imports_no_torch(command):
    """In a fresh interpreter: after importing the command's module and building its parser (what `--help`
    does), none of the heavy modules is loaded."""
    code = (f"import sys; from textrec.scripts import {command}; {command}.build_parser(); "
            f"print(sorted(name for name in {HEAVY_MODULES!r} if name in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_recognize_help_answers_within_two_seconds():
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "textrec.scripts.recognize", "--help"], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    assert result.returncode == 0 and "--device" in result.stdout
    assert seconds < 2.0, f"textrec-recognize --help took {seconds:.2f} s"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error where torch sees no CUDA GPU")
def test_a_device_that_torch_does_not_see_is_refused_before_loading(tmp_path, capsys):
    image = tmp_path / "line.png"
    image.write_bytes(b"")
    with pytest.raises(SystemExit):
        recognize_cli.main(["--model", "no-such-model", "--device", "cuda", str(image)])
    assert "--device cuda: torch sees no CUDA GPU" in capsys.readouterr().err


def test_device_auto_is_a_device_torch_sees():
    assert cli.resolve_device("auto") in ("cuda", "mps", "cpu")
    assert cli.resolve_device("cpu") == "cpu"


def test_an_unknown_decoding_is_refused_as_argparse_refuses_a_choice(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        recognize_cli.main(["--model", "crnn-lines", "--decoding", "beam", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "argument --decoding: invalid choice: 'beam' (choose from attention, ctc, joint)" in capsys.readouterr().err


TRAINING_COMMANDS = ("train", "pretrain_charbert", "train_line_detector")


@pytest.mark.parametrize("command", TRAINING_COMMANDS)
def test_importing_a_training_command_loads_no_torch(command):
    code = (f"import sys; from textrec.scripts import {command}; "
            f"print(sorted(name for name in {HEAVY_MODULES!r} if name in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_training_commands_help_is_answered_from_its_cache_after_the_first_time(tmp_path):
    """The first `--help` builds transformers' parser (torch is imported) and keeps what it printed; the second
    prints the same text without importing torch, well within two seconds."""
    environment = {**os.environ, "TEXTREC_HELP_CACHE": str(tmp_path)}
    command = [sys.executable, "-c", "import sys; from textrec.scripts import train_line_detector as c; "
               "c.main(sys.argv[1:])", "--help"]
    first = subprocess.run(command, capture_output=True, text=True, env=environment)
    assert first.returncode == 0 and "--output_dir" in first.stdout, first.stderr[-2000:]
    assert len(list(tmp_path.glob("textrec-train-line-detector-*.txt"))) == 1
    start = time.perf_counter()
    second = subprocess.run(command, capture_output=True, text=True, env=environment)
    seconds = time.perf_counter() - start
    assert second.returncode == 0 and second.stdout == first.stdout
    assert seconds < 2.0, f"the cached help took {seconds:.2f} s"


def test_a_cached_help_belongs_to_its_arguments(tmp_path, monkeypatch):
    """`textrec-train --model comer --help` shows CoMER's recipe defaults: another cache entry than the plain help."""
    monkeypatch.setenv("TEXTREC_HELP_CACHE", str(tmp_path))
    assert cli.help_cache_file("textrec-train", ["--help"]) != cli.help_cache_file("textrec-train", ["--model", "comer", "--help"])
    assert cli.help_cache_file("textrec-train", ["--help"]) == cli.help_cache_file("textrec-train", ["--help"])
    assert cli.help_cache_file("textrec-train", ["--help"]).parent == tmp_path


def test_help_that_fails_is_not_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TEXTREC_HELP_CACHE", str(tmp_path))

    def refuse(argv):
        print("partial output")
        raise SystemExit(2)

    with pytest.raises(SystemExit) as exit_info:
        cli.run_command("textrec-probe", refuse, ["--help"], cache_help=True)
    assert exit_info.value.code == 2 and "partial output" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_is_one_line_saying_what_was_kept_and_exits_130(capsys):
    def interrupted(argv):
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as exit_info:
        cli.run_command("textrec-train", interrupted, [], on_interrupt="its checkpoints are kept")
    assert exit_info.value.code == 130
    assert capsys.readouterr().err.strip() == "textrec-train: interrupted; its checkpoints are kept"
    with pytest.raises(KeyboardInterrupt):  # --debug keeps the traceback
        cli.run_command("textrec-train", interrupted, ["--debug"])


def test_an_output_that_cannot_write_a_character_keeps_every_line(monkeypatch, capsys):
    """Printed to a cp1252 console, a reading with a long s (which cp1252 lacks) is written with it escaped, and the
    lines after it still print, instead of the run stopping at it."""
    import io

    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="cp1252"))
    recognize_cli.keep_every_line_printable()
    print("Waſſer")
    print("next line")
    sys.stdout.flush()
    assert raw.getvalue().decode("cp1252").splitlines() == ["Wa\\u017f\\u017fer", "next line"]
    assert "PYTHONIOENCODING=utf-8" in capsys.readouterr().err
