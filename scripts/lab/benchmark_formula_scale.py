"""A formula reader on formulas typeset at other sizes than it learned, with and without glyph normalisation.

    python scripts/lab/benchmark_formula_scale.py --model comer-math --formulas 60 --scales 0.5 0.7 1 1.4 2

Draws held-out random formulas (a seed no training set uses), typesets each with mathtext at `scale` times the
resolution it would have been drawn with for training (80-140 dpi), black on white, and reads them with the
model's processor as released (`glyph_height_range` from its `processor_config.json`) and with glyph
normalisation off. Prints exact-match rates (ExpRate) per scale as a markdown table.
"""

import argparse
import shlex
import sys

import numpy as np
import torch
from PIL import ImageOps

from textrec.processing.data.synthetic_math import DPI_RANGE, MATH_FONTSETS, render_formula, sample_formula
from textrec.processing.inference import load_recognizer, recognize

HELD_OUT_SEED = 987654
"""The formulas' seed: the synthetic-math splits use small seeds."""


def typeset(count: int, scale: float, seed: int = HELD_OUT_SEED) -> tuple[list, list[str]]:
    images, texts = [], []
    for index in range(count):
        rng = np.random.default_rng([seed, index])
        tokens = sample_formula(rng, 3, 48)
        fontset = MATH_FONTSETS[rng.integers(len(MATH_FONTSETS))]
        dpi = int(rng.integers(DPI_RANGE[0], DPI_RANGE[1] + 1))
        images.append(ImageOps.invert(render_formula(tokens, fontset, max(10, round(dpi * scale)), 6)))
        texts.append(" ".join(tokens))
    return images, texts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="comer-math")
    parser.add_argument("--formulas", type=int, default=60)
    parser.add_argument("--scales", type=float, nargs="+", default=[0.5, 0.7, 1.0, 1.4, 2.0])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    model, processor = load_recognizer(args.model)
    released_range = processor.image_processor.glyph_height_range
    settings = {f"glyph_height_range {released_range}": released_range, "no glyph normalisation": None}
    rows = []
    for scale in args.scales:
        images, texts = typeset(args.formulas, scale)
        cells = []
        for glyph_range in settings.values():
            processor.image_processor.glyph_height_range = glyph_range
            readings = recognize(model, processor, images, batch_size=8, progress=False).texts
            cells.append(f"{np.mean([reading == text for reading, text in zip(readings, texts)]):.1%}")
        rows.append(f"| {scale:g}x | " + " | ".join(cells) + " |")
    command = shlex.join(["python", "scripts/lab/benchmark_formula_scale.py", *(sys.argv[1:] if argv is None else argv)])
    print("\n".join([f"| typeset at | {' | '.join(settings)} |", "|---|---|---|", *rows, "",
                     f"`{args.model}`, {args.formulas} held-out formulas per scale, exact match. Command: `{command}`"]))


if __name__ == "__main__":
    main()
