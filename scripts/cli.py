"""What every textrec command shares: an expected error (bad input, a missing file) is one line on stderr,
`textrec-xxx: what went wrong`, and exit status 1; `--debug` (anywhere among the arguments) shows the
traceback instead.

A command's module imports only the standard library and this one at its top, so that `--help` answers at once:
torch, transformers, datasets and textrec's library are imported inside its `run()` (tests/test_commands.py)."""

import argparse
import contextlib
import hashlib
import io
import logging
import os
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

EXPECTED_ERRORS = (ValueError, OSError)
"""What bad input raises (`FileNotFoundError` and `PermissionError` are `OSError`s); anything else is a bug
and keeps its traceback."""
DEBUG_FLAG = "--debug"
DEBUG_HELP = f"An error is one line on stderr; add {DEBUG_FLAG} to see its traceback."
"""The epilog of a command's `--help`: `run_command` takes `--debug` out before the command's parser sees it."""


def positive_int(text: str) -> int:
    """An argparse `type` for counts (batch size, beams, samples): an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse `type` for a resolution or a scale: a finite number > 0."""
    value = float(text)
    if not 0.0 < value < float("inf"):  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text}")
    return value


def unit_interval(text: str) -> float:
    """An argparse `type` for a probability or confidence: a number from 0 to 1."""
    value = float(text)
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


DEVICES = ("cpu", "cuda", "mps", "auto")
"""What `--device` takes: `auto` is cuda where torch sees a GPU, else mps where there is one, else cpu."""


def add_device_argument(parser: argparse.ArgumentParser) -> None:
    """`--device`, cpu by default: the released models are small enough to read fast on a CPU core, and a CPU
    gives the same text on every machine (a GPU's kernels may round differently and, rarely, flip a character)."""
    parser.add_argument("--device", choices=DEVICES, default="cpu",
                        help="Where the model runs: cpu (default), cuda, mps, or auto (cuda, else mps, else cpu).")


def add_old_umlauts_argument(parser: argparse.ArgumentParser) -> None:
    """`--old_umlauts`: an umlaut printed with a small e above written as the Deutsches Textarchiv does
    (`textrec.processing.old_umlauts`)."""
    parser.add_argument("--old_umlauts", action="store_true",
                        help="German print of the early 1800s: write an umlaut printed with a small e above as the "
                        "letter and U+0364 (uͤ), as the Deutsches Textarchiv and OCR-D transcribe it, where the model "
                        "reads it as ü (CTC decoding only; textrec.processing.old_umlauts).")


def check_old_umlauts(args: argparse.Namespace, model) -> None:
    """A `ValueError` where `--old_umlauts` is asked of a reading that is not a CTC head's: it looks where the CTC head
    emitted each umlaut."""
    from textrec.processing.inference import preferred_decoding

    decoding = args.decoding or preferred_decoding(model)
    if args.old_umlauts and decoding != "ctc":
        asked = f"--decoding {decoding} was asked" if args.decoding else f"{args.model} reads with {decoding}"
        raise ValueError(f"--old_umlauts needs a CTC reading (--decoding ctc); {asked}")


def resolve_device(name: str) -> str:
    """The torch device `--device name` asks for; a `ValueError` where torch sees no such device here."""
    import torch

    has_mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "mps" if has_mps else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch sees no CUDA GPU (torch.cuda.is_available() is False; a CPU-only "
                         "torch build, or no driver). Use --device cpu or auto.")
    if name == "mps" and not has_mps:
        raise ValueError("--device mps: torch sees no Apple GPU (torch.backends.mps.is_available() is False). "
                         "Use --device cpu or auto.")
    return name


HELP_FLAGS = ("-h", "--help")
LIBRARY_ROOT = Path(__file__).resolve().parents[1]
"""The installed textrec package (or the repository, installed editable)."""


def help_cache_file(prog: str, argv: list[str]) -> Path:
    """Where the help that `prog argv` printed is kept: keyed by the arguments (a recipe's defaults show in the
    training commands' help), the versions of textrec, transformers and torch, and the size and time of every
    file of textrec's training code (an editable install changes without a new version)."""
    versions = []
    for package in ("textrec", "transformers", "torch"):
        try:
            versions.append(metadata.version(package))
        except metadata.PackageNotFoundError:
            versions.append("")
    sources = sorted((LIBRARY_ROOT / "processing" / "training").glob("*.py")) + [Path(__file__)]
    stamps = [f"{path.name}:{path.stat().st_size}:{path.stat().st_mtime_ns}" for path in sources]
    key = hashlib.sha256("\n".join([prog, *argv, *versions, *stamps]).encode()).hexdigest()[:20]
    root = Path(os.environ.get("TEXTREC_HELP_CACHE", "~/.cache/textrec/help")).expanduser()
    return root / f"{prog}-{key}.txt"


def answer_help_from_cache(prog: str, run: Callable[[list[str]], object], argv: list[str]) -> None:
    """Prints a training command's `--help` and exits. Its parser is built from transformers'
    `Seq2SeqTrainingArguments`, which imports torch (seconds), so the first answer is kept on disk
    (`help_cache_file`) and later ones are printed from it at once."""
    cache = help_cache_file(prog, argv)
    with contextlib.suppress(OSError):
        sys.stdout.write(cache.read_text())
        raise SystemExit(0)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            run(argv)
    except SystemExit as exit_:
        sys.stdout.write(printed.getvalue())
        if exit_.code in (0, None) and printed.getvalue():
            with contextlib.suppress(OSError):
                cache.parent.mkdir(parents=True, exist_ok=True)
                partial = cache.with_suffix(f".{os.getpid()}.partial")
                partial.write_text(printed.getvalue())
                partial.replace(cache)
        raise
    sys.stdout.write(printed.getvalue())  # `run` did not stop at the help flag: nothing is kept


def run_command(
    prog: str, run: Callable[[list[str]], object], argv: list[str] | None = None, *, cache_help: bool = False,
    on_interrupt: str = ""
):
    """Calls `run(argv)` (the command's arguments, `--debug` taken out) and turns an expected error into one
    line on stderr and `SystemExit(1)`, and Ctrl-C into `prog: interrupted` and what `on_interrupt` says (what was
    kept), with status 130. With `cache_help`, `--help` is answered by `answer_help_from_cache`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in argv
    argv = [argument for argument in argv if argument != DEBUG_FLAG]
    try:
        if cache_help and any(argument in HELP_FLAGS for argument in argv):
            return answer_help_from_cache(prog, run, argv)
        return run(argv)
    except BrokenPipeError:  # the reader of the output went away (`| head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit would fail again
        raise SystemExit(141) from None
    except EXPECTED_ERRORS as error:
        if debug:
            raise
        print(f"{prog}: error: {error} ({DEBUG_FLAG} shows the traceback)", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"\n{prog}: interrupted{'; ' + on_interrupt if on_interrupt else ''}", file=sys.stderr)
        raise SystemExit(130) from None


def set_up_training_logs(training_args) -> None:
    """Log lines with times, at the verbosity of this process (`--log_level`, `--log_level_replica`)."""
    import datasets
    import transformers

    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        level=logging.INFO if training_args.should_log else logging.WARNING,
    )
    transformers.utils.logging.set_verbosity(training_args.get_process_log_level())
    datasets.utils.logging.set_verbosity(training_args.get_process_log_level())
