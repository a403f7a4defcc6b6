"""Draw what the page reader finds on a page: each output line's runs outlined, numbered in reading order.

    python scripts/lab/draw_page_detection.py --synthetic 7 --output scripts/lab/reports/page_detection.png
    python scripts/lab/draw_page_detection.py --page ../shared/data/real/pages/0087.png --output runs/page.png

`--synthetic SEED` draws on a page of the data engine's test stream (what the repository's picture shows: the real
pages are research-use data and stay out of it); `--page` on any image.
"""

import argparse
from pathlib import Path

from PIL import Image

from textrec.processing.inference import load_recognizer
from textrec.processing.page_reading import draw_page_reading, load_line_detector, read_page

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--page", type=Path)
    source.add_argument("--synthetic", type=int, help="The page of this index in the data engine's stream 2 (not trained on).")
    parser.add_argument("--recognizer", default="crnn-lines")
    parser.add_argument("--detector", default="line-detector")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    if args.page is not None:
        page = Image.open(args.page)
    else:
        from textrec.processing.data.synthetic_pages import render_page

        page, _ = render_page(2, args.synthetic)
    reading = read_page(page, load_recognizer(args.recognizer), load_line_detector(args.detector))
    draw_page_reading(page, reading).save(args.output)
    print(reading.text)


if __name__ == "__main__":
    main()
