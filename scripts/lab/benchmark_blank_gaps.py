"""Real receipt rows with wide blank gaps between their words, read by a line release with its gaps filled and not.

    python scripts/lab/benchmark_blank_gaps.py --output_markdown scripts/lab/results/blank_gaps.md

A receipt's row (`CASH` at the left, `RM 23.00` at the right) or a table's row crops to one image with a wide gap of
paper in it, whose texture, and the print of the paper's other side showing through, a line model may read as words.
This reads the rows of the real receipt pages (`pages/`, SROIE: each annotated row's segments joined, the row cut
along the union of their boxes with `LINE_CROP_MARGIN` pixels around it, its text the segments' texts joined by
spaces, scored as the receipt lines are: upper case) and the real line sets, with the image processor's
`max_blank_gap` as released (`luminance.MAX_BLANK_GAP`), at 1.5 ink heights, and off (None), and gives each CER under
its set's protocol (`real_sets.py`; historic print read with `old_umlauts`, as `benchmark_real_data.py` reads it).
"""

import argparse
import shlex
import sys
from pathlib import Path

import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_pages import load_pages, printed_lines  # noqa: E402
from benchmark_real_data import OLD_UMLAUT_SETS  # noqa: E402
from real_sets import LINE_CROP_MARGIN, REAL_DATA_DIR, REAL_SETS, load_real_set  # noqa: E402

from textrec.processing.inference import load_recognizer, recognize  # noqa: E402
from textrec.processing.luminance import MAX_BLANK_GAP  # noqa: E402
from textrec.processing.metrics import evaluate_texts, normalize_texts  # noqa: E402

RECEIPT_ROWS = "receipt rows"
"""The column of the SROIE pages' rows, scored with the `receipts` set's protocol."""


def receipt_rows(split: str) -> tuple[list[Image.Image], list[str]]:
    """The annotated rows of the SROIE pages of `split`, cut from their pages, and their texts."""
    images, texts = [], []
    for page in load_pages(split, ["sroie"]):
        with Image.open(REAL_DATA_DIR / "pages" / page["file_name"]) as opened:
            picture = opened.convert("RGB")
        for (left, top, right, bottom), text in printed_lines(page):
            images.append(picture.crop((max(0, round(left) - LINE_CROP_MARGIN), max(0, round(top) - LINE_CROP_MARGIN),
                                        min(picture.width, round(right) + LINE_CROP_MARGIN),
                                        min(picture.height, round(bottom) + LINE_CROP_MARGIN))))
            texts.append(text)
    return images, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="crnn-lines")
    parser.add_argument("--split", choices=("development", "held-out"), default="development")
    parser.add_argument("--sets", nargs="+", choices=list(REAL_SETS), default=list(REAL_SETS),
                        help="Real line sets read beside the receipt rows (default: the print and scene sets).")
    parser.add_argument("--output_markdown", type=Path)
    args = parser.parse_args()

    torch.set_num_threads(1)
    model, processor = load_recognizer(args.model)
    image_processor = processor.image_processor
    sets = {RECEIPT_ROWS: (*receipt_rows(args.split), REAL_SETS["receipts"])}
    for name in args.sets:
        sets[name] = (*load_real_set(name, args.split), REAL_SETS[name])
    settings = {f"as released (`max_blank_gap={image_processor.max_blank_gap}`)": image_processor.max_blank_gap,
                "`max_blank_gap=1.5`": 1.5, "off (`max_blank_gap=None`)": None}
    if image_processor.max_blank_gap != MAX_BLANK_GAP:
        print(f"note: {args.model} reads with max_blank_gap={image_processor.max_blank_gap}, not {MAX_BLANK_GAP}")
    rows = []
    for label, max_blank_gap in settings.items():
        image_processor.max_blank_gap = max_blank_gap
        scores = []
        for name, (images, references, real_set) in sets.items():
            predictions = recognize(model, processor, [str(image) if isinstance(image, Path) else image
                                                       for image in images], batch_size=32, progress=False,
                                    num_beams=model.generation_config.num_beams or 1,
                                    old_umlauts=name in OLD_UMLAUT_SETS).texts
            normalized = [normalize_texts(texts, real_set.normalization, real_set.charset)
                          for texts in (predictions, references)]
            scores.append(evaluate_texts(*normalized)["cer"])
            print(label, name, f"{scores[-1]:.2%}", flush=True)
        rows.append("| " + " | ".join([label, *(f"{score:.2%}" for score in scores)]) + " |")
    counts = ", ".join(f"{name} {len(images)}" for name, (images, _, _) in sets.items())
    table = "\n".join([
        f"| `{args.model}`: blank gaps | " + " | ".join(f"{name} CER" for name in sets) + " |",
        "|" + "---|" * (len(sets) + 1), *rows, "",
        f"Real {args.split} images: {counts} (receipt rows: the SROIE pages' annotated rows, cut along their boxes).",
        "", "Command: `" + shlex.join(["python", "scripts/lab/benchmark_blank_gaps.py", *sys.argv[1:]]) + "`"])
    print(table)
    if args.output_markdown:
        args.output_markdown.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
