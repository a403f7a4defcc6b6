"""Tight and loose crops of the same real lines, read by a line release with and without its side-margin cut.

    python scripts/lab/benchmark_loose_crops.py --output_markdown scripts/lab/results/loose_crops.md

A user's crop of a line may hold blank of several line heights left and right of it (a field's box, a word picked
out of a photo). This reads the first `--limit` development lines of the real print sets as they are ("tight") and
with blank of 2 to 8 of their heights added on each side in the colour of their background ("loose", drawn with a
fixed seed), with the image processor's `max_side_margin` as released and turned off (None), and gives the CER of
each under the set's protocol (`real_sets.py`).
"""

import argparse
import random
import shlex
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_sets import REAL_SETS, load_real_set  # noqa: E402

from textrec.processing.image_processing_text_recognition import otsu_threshold  # noqa: E402
from textrec.processing.inference import load_recognizer, recognize  # noqa: E402
from textrec.processing.metrics import evaluate_texts, normalize_texts  # noqa: E402

PRINT_SETS = ("receipts", "historic-print", "forms")
LOOSE_MARGIN_HEIGHTS = (2.0, 8.0)
"""The blank added on each side of a loose crop, in the line image's heights (drawn uniformly per side)."""


def loosely_cropped(image: Image.Image, generator: random.Random) -> Image.Image:
    """`image` with blank of `LOOSE_MARGIN_HEIGHTS` of its height added left and right, in its background's grey."""
    grey = image.convert("L")
    luminance = np.asarray(grey)
    background = luminance[luminance >= otsu_threshold(luminance)]
    fill = int(np.median(background)) if background.size else 255
    left, right = (round(generator.uniform(*LOOSE_MARGIN_HEIGHTS) * grey.height) for _ in range(2))
    canvas = Image.new("L", (grey.width + left + right, grey.height), fill)
    canvas.paste(grey, (left, 0))
    return canvas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="crnn-lines")
    parser.add_argument("--limit", type=int, default=300, help="Lines read of each set (its first ones).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output_markdown", type=Path)
    args = parser.parse_args()

    model, processor = load_recognizer(args.model)
    released_margin = processor.image_processor.max_side_margin
    generator = random.Random(args.seed)
    rows = []
    for name in PRINT_SETS:
        paths, references = load_real_set(name, "development")
        paths, references = paths[: args.limit], references[: args.limit]
        tight = [Image.open(path) for path in paths]
        loose = [loosely_cropped(image, generator) for image in tight]
        real_set = REAL_SETS[name]
        expected = normalize_texts(references, real_set.normalization, real_set.charset)
        row = {"set": f"{name} ({len(paths)})"}
        for margin in (released_margin, None):
            processor.image_processor.max_side_margin = margin
            for kind, images in (("tight", tight), ("loose", loose)):
                texts = recognize(model, processor, images, progress=False).texts
                cer = evaluate_texts(normalize_texts(texts, real_set.normalization, real_set.charset), expected)["cer"]
                row[(margin, kind)] = cer
        processor.image_processor.max_side_margin = released_margin
        rows.append(row)
        print(name, {f"{margin} {kind}": round(100 * value, 2) for (margin, kind), value in
                     ((key, value) for key, value in row.items() if key != "set")}, file=sys.stderr)

    header = (f"| set (lines) | tight, `max_side_margin={released_margin}` (released) | loose, `max_side_margin="
              f"{released_margin}` | tight, `max_side_margin=None` | loose, `max_side_margin=None` |")
    lines = [header, "|---|---|---|---|---|"]
    for row in rows:
        cells = [f"{100 * row[(margin, kind)]:.2f}%" for margin in (released_margin, None) for kind in ("tight", "loose")]
        lines.append(f"| {row['set']} | " + " | ".join(cells) + " |")
    command = shlex.join(["python", "scripts/lab/benchmark_loose_crops.py", *sys.argv[1:]])
    text = (f"`{args.model}` on the first {args.limit} development lines of each real print set, as cut (tight) and with "
            f"blank of {LOOSE_MARGIN_HEIGHTS[0]:g}-{LOOSE_MARGIN_HEIGHTS[1]:g} line heights added left and right "
            f"(loose; seed {args.seed}), CER under each set's protocol. Command: `{command}`\n\n" + "\n".join(lines) + "\n")
    print(text)
    if args.output_markdown:
        args.output_markdown.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
