"""Measure a recognizer's character confusions on a labelled dataset and save them as JSON.

    python -m textrec.scripts.build_confusion_matrix --model runs/self-attention \
        --dataset synthetic-lines --split validation --num_samples 1000 --output confusion.json

Each prediction is aligned to its label character by character (edit-distance alignment) and the
pairs are counted into P(i recognised as j), deletions and insertions included (see
`textrec.processing.data.confusion`). CharBERT pre-training draws its character noise from the file
with `--confusion_matrix confusion.json`, so the model learns to undo this recognizer's mistakes.
"""

import argparse
import logging

from textrec.processing.data import ConfusionMatrix, load_text_recognition_dataset

from textrec.processing.inference import load_recognizer, recognize


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="build_confusion_matrix", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="Trained recognizer folder or Hub id.")
    parser.add_argument("--dataset", default="synthetic-lines", help="Dataset name, folder or Hub id (as textrec-train).")
    parser.add_argument("--split", default="validation", help="Split to read (default: validation).")
    parser.add_argument("--num_samples", type=int, default=1000, help="Rows to read (default: 1000).")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--num_beams", type=int, default=1, help="1 for greedy decoding.")
    parser.add_argument("--output", required=True, help="The JSON file to write.")
    parser.add_argument("--show", type=int, default=10, help="Print this many most frequent confusions (default 10).")
    return parser


def _show(char: str) -> str:
    return repr(char) if char else "nothing"


def run(argv: list[str] | None = None) -> ConfusionMatrix:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    model, processor = load_recognizer(args.model)
    dataset = load_text_recognition_dataset(args.dataset, split=args.split, num_samples=args.num_samples)
    references = list(dataset["text"])
    result = recognize(model, processor, list(dataset["image"]), batch_size=args.batch_size, num_beams=args.num_beams)
    confusions = ConfusionMatrix.from_texts(references, result.texts)
    confusions.save(args.output)

    print(f"{args.model} on {args.dataset} ({args.split}, {len(references)} lines) -> {args.output}")
    probabilities = confusions.probabilities()
    for label, predicted, count in confusions.errors()[: args.show]:
        print(f"  {_show(label):>9} read as {_show(predicted):<9} {count:6d} times, P = {probabilities[label][predicted]:.4f}")
    return confusions


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run(argv)


if __name__ == "__main__":
    main()
