"""textrec-train-line-detector: train the text-line detector with `Trainer` on the data engine's pages.

    textrec-train-line-detector --num_train_pages 2400 --max_steps 1500 --output_dir runs/line-detector

Random crops of synthetic pages (books, newspapers, receipts, forms; skewed, scanned, photographed, inverted)
with their lines' cores as targets; `--model_name_or_path` continues from a saved detector. Every
`TrainingArguments` option works. The work is `textrec.processing.training.line_detection.train_line_detector`;
this command parses its arguments.
"""

import sys

from .cli import run_command, set_up_training_logs


def run(argv: list[str] | None = None) -> dict:
    """Trains as the arguments say; returns the final evaluation metrics."""
    from textrec.processing.training.line_detection import parse_arguments, train_line_detector

    model_args, data_args, training_args = parse_arguments(sys.argv[1:] if argv is None else argv)
    set_up_training_logs(training_args)
    return train_line_detector(model_args, data_args, training_args)


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run_command("textrec-train-line-detector", run, argv, cache_help=True)


if __name__ == "__main__":
    main()
