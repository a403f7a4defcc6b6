"""textrec-pretrain-charbert: pre-train CharBERT (masked LM + noisy LM) with `Trainer` on a text corpus.

    textrec-pretrain-charbert --preset small --corpus /usr/share/games/fortunes \
        --max_steps 2000 --output_dir runs/charbert

A new model trains its byte-level BPE tokenizer and its noisy-LM word vocabulary on the training part of the
corpus first; `--model_name_or_path` continues from a saved CharBERT and its processor. `--confusion_matrix`
(a JSON from `python -m textrec.scripts.build_confusion_matrix`) draws the character noise from a
recognizer's mistakes instead of at random. Every `TrainingArguments` option works. It prints the
evaluation before and after as a table.

The work is `textrec.processing.training.charbert.pretrain`; this command parses its arguments.
"""

import sys

from .cli import run_command, set_up_training_logs


def run(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    """Pre-trains as the arguments say; returns the evaluation metrics `{"before": ..., "after": ...}`."""
    from textrec.processing.training.charbert import format_results, parse_arguments, pretrain

    model_args, data_args, training_args = parse_arguments(sys.argv[1:] if argv is None else argv)
    set_up_training_logs(training_args)
    results = pretrain(model_args, data_args, training_args)
    if training_args.should_log:
        print(format_results(results))
    return results


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run_command("textrec-pretrain-charbert", run, argv, cache_help=True)


if __name__ == "__main__":
    main()
