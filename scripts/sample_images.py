"""Write images of a dataset as PNG files, with their true text in `labels.tsv` and in `metadata.jsonl` (the
`datasets` ImageFolder layout that `--dataset FOLDER` reads: `file_name` and `text` per line).

    python -m textrec.scripts.sample_images --dataset synthetic-lines --num_samples 5 --output_dir samples
    python -m textrec.scripts.sample_images --dataset synthetic-lines-handwriting --split train \
        --num_samples 2000 --output_dir my-lines/train
"""

import argparse
import json
from pathlib import Path

from textrec.processing.data import load_text_recognition_dataset


def run(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(prog="python -m textrec.scripts.sample_images", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="synthetic-lines")
    parser.add_argument("--split", default="test")
    parser.add_argument("--num_samples", type=int, default=5)
    parser.add_argument("--output_dir", required=True)
    args = parser.parse_args(argv)

    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    dataset = load_text_recognition_dataset(args.dataset, split=args.split, num_samples=args.num_samples)
    paths, labels, metadata = [], [], []
    for index, row in enumerate(dataset):
        path = output_dir / f"{args.split}-{index:04d}.png"
        row["image"].save(path)
        paths.append(path)
        labels.append(f"{path.name}\t{row['text']}")
        metadata.append(json.dumps({"file_name": path.name, "text": row["text"]}))
    (output_dir / "labels.tsv").write_text("\n".join(labels) + "\n")
    (output_dir / "metadata.jsonl").write_text("\n".join(metadata) + "\n")
    return paths


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
