"""How often a line model warns that an image is not one line, on real images: whole pages, and single lines.

    python scripts/lab/benchmark_line_count_warning.py --output_markdown scripts/lab/results/line_count_warning.md

A line model reads one line per image; given a page or a block of lines, or a line turned on its side, it warns
(`TextRecognitionImageProcessor.size_warning`, which `recognize()`, `textrec-recognize` and the processor itself
call). This counts its answers on the real pages of `../shared/data/real/pages/` given whole (every one should be
warned of as several lines), on blocks of 2-4 consecutive printed lines cut from those pages by their annotated
boxes (several lines, too), on single printed lines cut from them alike, and on the real line sets of
`real_sets.py` (one line each: a warning there is a false alarm, except where the crop is turned on its side or
holds a neighbour's line). Development split (`--split`); the blocks and single lines are drawn with a fixed seed.
"""

import argparse
import random
import shlex
import sys
from collections import Counter
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_pages import PAGES_DIR, load_pages, printed_lines  # noqa: E402
from real_sets import SPLITS, load_real_set  # noqa: E402

from textrec.processing.inference import load_recognizer  # noqa: E402

LINE_SETS = ("receipts", "historic-print", "forms", "scene", "iam-ondb", "washington")
CROP_MARGIN = 3
"""Pixels around a block's or a line's annotated box when it is cut from its page."""
CROPS_PER_PAGE = 6


def verdict(warning: str | None) -> str:
    if warning is None:
        return "none"
    if "lines of text" in warning:
        return "several lines"
    if "on its side" in warning:
        return "on its side"
    return "other"


def page_crops(pages: list[dict], seed: int) -> dict[str, list[Image.Image]]:
    """Blocks of 2-4 consecutive printed lines stacked one under another, and single printed lines, cut from the
    pages."""
    generator = random.Random(seed)
    crops = {"blocks of 2-4 lines cut from the pages": [], "single lines cut from the pages": []}
    for page in pages:
        image = Image.open(PAGES_DIR / page["file_name"]).convert("L")
        lines = printed_lines(page)
        for _ in range(CROPS_PER_PAGE):
            count = generator.choice([1, 2, 3, 4])
            if len(lines) < count:
                continue
            first = generator.randrange(len(lines) - count + 1)
            boxes = [box for box, _ in lines[first : first + count]]
            stacked = all(lower[1] >= upper[3] - 0.3 * (upper[3] - upper[1]) for upper, lower in zip(boxes, boxes[1:]))
            overlapping = min(box[2] for box in boxes) > max(box[0] for box in boxes)
            if count > 1 and not (stacked and overlapping):
                continue
            crop = image.crop((max(0, min(box[0] for box in boxes) - CROP_MARGIN),
                               max(0, min(box[1] for box in boxes) - CROP_MARGIN),
                               max(box[2] for box in boxes) + CROP_MARGIN, max(box[3] for box in boxes) + CROP_MARGIN))
            crops["single lines cut from the pages" if count == 1 else "blocks of 2-4 lines cut from the pages"].append(crop)
    return crops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="crnn-lines", help="A released line model (its image processor warns).")
    parser.add_argument("--split", choices=SPLITS, default="development")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output_markdown", type=Path)
    args = parser.parse_args()
    _, processor = load_recognizer(args.model)
    warn = processor.image_processor.size_warning
    pages = load_pages(args.split)
    groups = {"whole pages": [Image.open(PAGES_DIR / page["file_name"]) for page in pages]}
    groups.update(page_crops(pages, args.seed))
    for name in LINE_SETS:
        paths, _ = load_real_set(name, args.split)
        groups[f"`{name}` lines"] = [Image.open(path) for path in paths]
    rows = ["| images | count | warned: several lines | on its side | not warned |", "|---|---|---|---|---|"]
    for name, images in groups.items():
        counts = Counter(verdict(warn(image.width, image.height, image)) for image in images)
        rows.append(f"| {name} | {len(images)} | {counts['several lines']} | {counts['on its side']} | {counts['none']} |")
    command = shlex.join(["python", "scripts/lab/benchmark_line_count_warning.py", *sys.argv[1:]])
    table = "\n".join([*rows, "", f"`{args.model}`'s image processor, {args.split} split. Command: `{command}`", ""])
    print(table)
    if args.output_markdown:
        args.output_markdown.write_text(table)


if __name__ == "__main__":
    main()
