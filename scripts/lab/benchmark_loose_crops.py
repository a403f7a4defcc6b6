"""Tight and loose crops of the same real lines, read by a line release with and without its margin cuts.

    python scripts/lab/benchmark_loose_crops.py --output_markdown scripts/lab/results/loose_crops.md

A user's crop of a line may hold blank of several line heights around it (a field's box, a word picked out of a
photo). This reads the first `--limit` development lines of the real print sets as they are ("tight"), with blank of
2 to 8 of their heights added left and right, and with blank of 1 to 3 of their heights added above and below, in
the colour of their background (drawn with a fixed seed), and the latter again as paper is scanned (the background's
grey with noise of its own spread, `PAPER_NOISE`), with the image processor's margin cuts as released
(`max_side_margin`, `max_vertical_margin`, `cut_vertical_margin`), with blank above and below cut to
`max_vertical_margin` alone (`cut_vertical_margin=None`, the processor before 2026-11-28) and turned off (all None),
and gives the CER of each under the set's protocol (`real_sets.py`).
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

from textrec.processing.image_processing_text_recognition import has_light_text, otsu_threshold  # noqa: E402
from textrec.processing.inference import load_recognizer, recognize  # noqa: E402
from textrec.processing.metrics import evaluate_texts, normalize_texts  # noqa: E402

PRINT_SETS = ("receipts", "historic-print", "forms")
LOOSE_MARGIN_HEIGHTS = {"left and right": (2.0, 8.0), "above and below": (1.0, 3.0)}
"""The blank added on each side of a loose crop, in the line image's heights (drawn uniformly per side)."""


PAPER_NOISE = "paper noise above and below"
"""The kind of loose crop whose blank above and below is drawn as scanned paper: each pixel the background's grey plus
Gaussian noise of the background's own spread (1.4826 times the median absolute deviation of its pixels), so that
the margin cuts are seen to tell noise from text."""


def loosely_cropped(image: Image.Image, generator: random.Random, sides: str, noisy: bool = False) -> Image.Image:
    """`image` with blank of `LOOSE_MARGIN_HEIGHTS[sides]` of its height added on those `sides`, in its background's
    grey: the median of the pixels lighter than `otsu_threshold`, or of the darker ones where its text is light
    (`has_light_text`); `noisy`: with Gaussian noise of the spread of those pixels (`PAPER_NOISE`)."""
    grey = image.convert("L")
    luminance = np.asarray(grey)
    lighter = luminance >= otsu_threshold(luminance)
    background = luminance[~lighter if has_light_text(luminance) else lighter]
    fill = int(np.median(background)) if background.size else 255
    spread = 1.4826 * float(np.median(np.abs(background.astype(np.float64) - fill))) if noisy and background.size else 0.0
    before, after = (round(generator.uniform(*LOOSE_MARGIN_HEIGHTS[sides]) * grey.height) for _ in range(2))
    if sides == "left and right":
        size, offset = (grey.width + before + after, grey.height), (before, 0)
    else:
        size, offset = (grey.width, grey.height + before + after), (0, before)
    if spread:
        noise = np.random.default_rng(generator.randrange(2**32)).normal(fill, spread, (size[1], size[0]))
        canvas = Image.fromarray(np.clip(np.round(noise), 0, 255).astype(np.uint8))
    else:
        canvas = Image.new("L", size, fill)
    canvas.paste(grey, offset)
    return canvas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="crnn-lines")
    parser.add_argument("--limit", type=int, default=300, help="Lines read of each set (its first ones).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", nargs="+", choices=(*PRINT_SETS, "scene"), default=PRINT_SETS,
                        help="Real sets read (default: the print sets).")
    parser.add_argument("--output_markdown", type=Path)
    args = parser.parse_args()

    model, processor = load_recognizer(args.model)
    image_processor = processor.image_processor
    margin_settings = ("max_side_margin", "max_vertical_margin", "cut_vertical_margin")
    released = tuple(getattr(image_processor, margin_setting) for margin_setting in margin_settings)
    settings = {f"released (`max_side_margin={released[0]}`, `max_vertical_margin={released[1]}`, "
                f"`cut_vertical_margin={released[2]}`)": released,
                "`cut_vertical_margin=None`": (*released[:2], None),
                "no cut (all None)": (None, None, None)}
    kinds = ("tight", *(f"blank {sides}" for sides in LOOSE_MARGIN_HEIGHTS), PAPER_NOISE)
    generator = random.Random(args.seed)
    rows = []
    for name in args.sets:
        paths, references = load_real_set(name, "development")
        paths, references = paths[: args.limit], references[: args.limit]
        tight = [Image.open(path) for path in paths]
        noise_generator = random.Random(f"{args.seed} {name}")  # its own draws: the other kinds' stay as they were
        images = {"tight": tight, **{f"blank {sides}": [loosely_cropped(image, generator, sides) for image in tight]
                                      for sides in LOOSE_MARGIN_HEIGHTS},
                  PAPER_NOISE: [loosely_cropped(image, noise_generator, "above and below", noisy=True) for image in tight]}
        real_set = REAL_SETS[name]
        expected = normalize_texts(references, real_set.normalization, real_set.charset)
        for setting, values in settings.items():
            for margin_setting, value in zip(margin_settings, values):
                setattr(image_processor, margin_setting, value)
            row = [f"{name} ({len(paths)})", setting]
            for kind in kinds:
                texts = recognize(model, processor, images[kind], progress=False).texts
                cer = evaluate_texts(normalize_texts(texts, real_set.normalization, real_set.charset), expected)["cer"]
                row.append(f"{100 * cer:.2f}%")
            rows.append(row)
            print(" | ".join(row), file=sys.stderr)
        for margin_setting, value in zip(margin_settings, released):
            setattr(image_processor, margin_setting, value)

    ranges = "; ".join(f"{sides}: {low:g}-{high:g}" for sides, (low, high) in LOOSE_MARGIN_HEIGHTS.items())
    lines = ["| set (lines) | margins | " + " | ".join(kinds) + " |", "|---" * (len(kinds) + 2) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    command = shlex.join(["python", "scripts/lab/benchmark_loose_crops.py", *sys.argv[1:]])
    text = (f"`{args.model}` on the first {args.limit} development lines of each real set, as cut (tight) and with "
            f"blank added (line heights, {ranges}; seed {args.seed}; {PAPER_NOISE}: the blank above and below drawn as the background's grey with noise of its own spread), CER under each set's protocol (the historic print "
            f"without `old_umlauts`). Command: `{command}`\n\n" + "\n".join(lines) + "\n")
    print(text)
    if args.output_markdown:
        args.output_markdown.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
