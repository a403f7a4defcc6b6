"""What every textrec command shares: an expected error (bad input, a missing file) is one line on stderr,
`textrec-xxx: what went wrong`, and exit status 1; `--debug` (anywhere among the arguments) shows the
traceback instead."""

import argparse
import logging
import sys
from collections.abc import Callable

import datasets
import transformers

EXPECTED_ERRORS = (ValueError, OSError)
"""What bad input raises (`FileNotFoundError` and `PermissionError` are `OSError`s); anything else is a bug
and keeps its traceback."""
DEBUG_FLAG = "--debug"


def positive_int(text: str) -> int:
    """An argparse `type` for counts (batch size, beams, samples): an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def run_command(prog: str, run: Callable[[list[str]], object], argv: list[str] | None = None):
    """Calls `run(argv)` (the command's arguments, `--debug` taken out) and turns an expected error into one
    line on stderr and `SystemExit(1)`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in argv
    argv = [argument for argument in argv if argument != DEBUG_FLAG]
    try:
        return run(argv)
    except EXPECTED_ERRORS as error:
        if debug:
            raise
        print(f"{prog}: error: {error} ({DEBUG_FLAG} shows the traceback)", file=sys.stderr)
        raise SystemExit(1) from None


def set_up_training_logs(training_args) -> None:
    """Log lines with times, at the verbosity of this process (`--log_level`, `--log_level_replica`)."""
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        level=logging.INFO if training_args.should_log else logging.WARNING,
    )
    transformers.utils.logging.set_verbosity(training_args.get_process_log_level())
    datasets.utils.logging.set_verbosity(training_args.get_process_log_level())
