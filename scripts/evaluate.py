"""textrec-evaluate: CER, WER, sequence accuracy and speed of a trained recognizer on a dataset.

    textrec-evaluate --model runs/self-attention --dataset synthetic-lines --split test --num_samples 500
"""

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

from .cli import (
    DEBUG_HELP,
    add_device_argument,
    add_old_umlauts_argument,
    check_old_umlauts,
    positive_int,
    resolve_device,
    run_command,
)

DEFAULT_SPLIT = "test"
WHOLE_FOLDER = "the whole folder"
"""What is read without `--split`: the test split, or a folder that has no splits whole."""


def score_line(system: str, scores: dict) -> str:
    return (f"  {system}: CER {scores['cer']:.2%}  WER {scores['wer']:.2%}  sequence accuracy "
            f"{scores['sequence_accuracy']:.2%}  {scores['lines_per_second']:.1f} lines/s")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrec-evaluate", description=__doc__.split("\n\n")[0], epilog=DEBUG_HELP)
    parser.add_argument("--model", required=True, help="Trained model folder or Hub id.")
    parser.add_argument("--dataset", default="synthetic-lines", help="Dataset name, folder or Hub id (as textrec-train).")
    parser.add_argument("--split", help=f"Split to evaluate (default: {DEFAULT_SPLIT}; a folder without split "
                        "sub-folders, its metadata.jsonl at the top, is then read whole).")
    parser.add_argument("--num_samples", type=positive_int, default=500, help="Rows to evaluate (default: 500).")
    parser.add_argument("--batch_size", type=positive_int, default=32)
    parser.add_argument("--num_beams", type=positive_int,
                        help="Beams of the decoder's search (1: greedy). Default: the model's generation config's, "
                        "as model.generate() reads.")
    parser.add_argument("--decoding",
                        help="attention: the attention decoder; ctc: the CTC head's best path (much "
                        "faster; models trained with a CTC head only); joint: the decoder's search scored with the CTC "
                        "head's prefix scores (both). Default: the one the model reads best "
                        "with (its generation config's `decoding`), else attention.")
    add_old_umlauts_argument(parser)
    parser.add_argument("--normalization", choices=["none", "scene-text"], default="none",
                        help="scene-text: compare lower-case alphanumerics only.")
    parser.add_argument("--exprate", action="store_true",
                        help="Also ExpRate and the rates within 1, 2 and 3 token errors (formulas in LaTeX tokens).")
    parser.add_argument("--compare_tesseract", action="store_true",
                        help="Also read the same images with Tesseract 5 (--psm 7, one thread, one process over a "
                        "list file) and print its scores beside the model's.")
    parser.add_argument("--output_json", help="Also write the results to this file.")
    parser.add_argument("--show_errors", type=int, default=5, help="Print this many misread lines (default 5).")
    parser.add_argument("--contact_sheet", help="Write a PNG of the first 24 lines with expected and recognized text.")
    add_device_argument(parser)
    return parser


def check_output_file(option: str, path: str | None) -> None:
    """Checks, before any work, that the file `path` (given with `option`) can be written: its folder exists or is
    created, and a file can be made in it."""
    if path is None:
        return
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{option} {path} is a folder; give a file name.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".write-test-"):
            pass
    except OSError as error:
        raise PermissionError(f"{option} {path}: cannot write into {path.parent} ({error.strerror or error})") from None


def run(argv: list[str] | None = None) -> dict:
    parser = build_parser()
    args = parser.parse_args(argv)
    import torch

    from textrec.processing.contact_sheet import draw_contact_sheet
    from textrec.processing.data import load_text_recognition_dataset
    from textrec.processing.data.loading import METADATA_FILE, MissingSplitError
    from textrec.processing.inference import DECODINGS, load_recognizer, preferred_decoding, recognize
    from textrec.processing.metrics import evaluate_texts, load_metric
    from textrec.processing.tesseract import read_with_tesseract

    if args.decoding is not None and args.decoding not in DECODINGS:
        parser.error(f"argument --decoding: invalid choice: {args.decoding!r} (choose from {', '.join(DECODINGS)})")
    device = resolve_device(args.device)
    check_output_file("--output_json", args.output_json)
    check_output_file("--contact_sheet", args.contact_sheet)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    model, processor = load_recognizer(args.model, device=device)
    check_old_umlauts(args, model)
    split = args.split or DEFAULT_SPLIT
    skipped = RowsLeftOut()
    logging.getLogger("textrec.processing.data.loading").addHandler(skipped)
    try:
        try:
            dataset = load_text_recognition_dataset(args.dataset, split=split, num_samples=args.num_samples)
        except MissingSplitError as error:
            if args.split is None and (Path(error.source) / METADATA_FILE).is_file():
                print(f"textrec-evaluate: {error.source} has no split folders (its {METADATA_FILE} is at the top): reading "
                      "it whole", file=sys.stderr)
                split = WHOLE_FOLDER
                dataset = load_text_recognition_dataset(args.dataset, split=None, num_samples=args.num_samples)
            else:
                raise ValueError(f"{error.source} has no split {error.split!r}; available: {error.available}. Pass --split "
                                 f"one of them (--split {error.available[0]}).") from None
    finally:
        logging.getLogger("textrec.processing.data.loading").removeHandler(skipped)
    references = list(dataset["text"])
    images = list(dataset["image"])
    result = recognize(
        model, processor, images, batch_size=args.batch_size, num_beams=args.num_beams, decoding=args.decoding,
        old_umlauts=args.old_umlauts,
    )
    scores = evaluate_texts(result.texts, references, args.normalization)
    if args.exprate:
        scores.update(load_metric("exprate").compute(predictions=result.texts, references=references))
    scores["lines_per_second"] = result.lines_per_second
    scores["num_samples"] = len(references)

    print(f"{args.model} on {args.dataset} ({split}, {len(references)} lines, {args.decoding or preferred_decoding(model)} decoding, "
          f"beams={args.num_beams or model.generation_config.num_beams or 1}, "
          f"{device if device != 'cpu' else f'{torch.get_num_threads()} CPU threads'})")
    print(score_line(args.model, scores))
    if args.compare_tesseract:
        scores["tesseract"] = read_with_tesseract(images, references, args.normalization)
        print(score_line(f"{scores['tesseract'].pop('version')} (--psm 7, 1 thread)", scores["tesseract"]))
    if args.exprate:
        print("  ExpRate {exprate:.2%}  within 1 {exprate_within_1:.2%}  within 2 {exprate_within_2:.2%}"
              "  within 3 {exprate_within_3:.2%}".format(**scores))
    errors = [(r, p) for r, p in zip(references, result.texts) if r != p][: args.show_errors]
    for reference, prediction in errors:
        print(f"  expected {reference!r}\n       got {prediction!r}")
    if args.contact_sheet:
        count = min(24, len(references))
        draw_contact_sheet(images[:count], references[:count], result.texts[:count]).save(args.contact_sheet)
    if skipped.messages:
        scores["rows_left_out"] = skipped.messages
        print(f"textrec-evaluate: these scores leave out rows that could not be read: {'; '.join(skipped.messages)}",
              file=sys.stderr)
    if args.output_json:
        with open(args.output_json, "w") as file:
            json.dump(scores, file, indent=2)
    return scores


class RowsLeftOut(logging.Handler):
    """Keeps the dataset loader's warnings about rows it left out (unreadable images, empty texts), so that the
    scores of the rest do not pass for the whole dataset's."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Skipped "):
            self.messages.append(record.getMessage().removeprefix("Skipped "))


def main(argv: list[str] | None = None) -> None:
    """Console entry point: exit status 1 where rows of the dataset could not be read (and are not scored)."""
    scores = run_command("textrec-evaluate", run, argv)
    if isinstance(scores, dict) and scores.get("rows_left_out"):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
