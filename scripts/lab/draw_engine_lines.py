"""Draw lines of the data engine with their labels and what a model reads in them: a picture of what a lever draws.

    python scripts/lab/draw_engine_lines.py --dataset "synthetic-lines:look=captured,scene_share=0,dot_matrix_share=1" \
        --model crnn-lines --num_lines 8 --output scripts/lab/reports/dot_matrix_lines.png

The lines are the dataset's test stream (never trained on); the picture is `textrec.processing.contact_sheet`'s:
each line, its label, and the model's reading, marked red where they differ.
"""

import argparse
from pathlib import Path

from textrec.processing.contact_sheet import draw_contact_sheet
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.inference import load_recognizer, recognize


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="A rendered dataset, as --dataset of textrec-train names it.")
    parser.add_argument("--model", default="crnn-lines")
    parser.add_argument("--num_lines", type=int, default=8)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    lines = load_text_recognition_dataset(args.dataset, split="test", num_samples=args.num_lines)
    model, processor = load_recognizer(args.model)
    readings = recognize(model, processor, list(lines["image"]), progress=False).texts
    draw_contact_sheet(list(lines["image"]), list(lines["text"]), readings).save(args.output)
    return readings


if __name__ == "__main__":
    main()
