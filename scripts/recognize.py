"""textrec-recognize: print the text of each image, one line per image.

    textrec-recognize --model runs/self-attention line1.png line2.png
    textrec-recognize --model runs/self-attention scans/ --show_paths
"""

import argparse
import sys
from pathlib import Path

from .cli import positive_int, run_command
from textrec.processing.inference import DECODINGS, iter_recognize, load_recognizer

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp", ".pbm", ".pgm", ".ppm"}


def collect_images(inputs: list[str]) -> list[Path]:
    """Files as given, and the image files of folders in name order."""
    paths = []
    for item in map(Path, inputs):
        if item.is_dir():
            paths.extend(sorted(p for p in item.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES))
        elif item.exists():
            paths.append(item)
        else:
            raise SystemExit(f"textrec-recognize: no such file or folder: {item}")
    return paths


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrec-recognize", description=__doc__.split("\n\n")[0])
    parser.add_argument("images", nargs="+", help="Image files or folders of images.")
    parser.add_argument("--model", required=True,
                        help="A released model's name (e.g. self-attention-lines), a trained model folder or a Hub id.")
    parser.add_argument("--batch_size", type=positive_int, default=16)
    parser.add_argument("--num_beams", type=positive_int, default=1)
    parser.add_argument("--decoding", choices=DECODINGS,
                        help="attention: the decoder through generate(); ctc: the CTC head's best path (much "
                        "faster; models trained with a CTC head only); joint: the decoder's search scored with the CTC "
                        "head's prefix scores (both). Default: the one the model reads best "
                        "with (its generation config's `decoding`), else attention.")
    parser.add_argument("--show_paths", action="store_true", help="Print 'path<TAB>text' instead of the text alone.")
    return parser


def run(argv: list[str] | None = None) -> list[str | None]:
    """Prints each image's text (or `path<TAB>text`) as soon as its batch is read, in order. An image that
    cannot be read gets a line on stderr naming it and why, the others are read all the same, and a summary
    ends the run; `main` then exits with status 1."""
    args = build_parser().parse_args(argv)
    paths = collect_images(args.images)
    if not paths:
        raise SystemExit("textrec-recognize: no images found")
    model, processor = load_recognizer(args.model)
    texts, failures = [], 0
    for index, text, error in iter_recognize(
        model,
        processor,
        [str(p) for p in paths],
        batch_size=args.batch_size,
        num_beams=args.num_beams,
        decoding=args.decoding,
        progress=False,
        on_error="skip",
    ):
        texts.append(text)
        if error is not None:
            failures += 1
            print(f"textrec-recognize: {error}", file=sys.stderr, flush=True)
        else:
            print(f"{paths[index]}\t{text}" if args.show_paths else text, flush=True)
    if failures:
        print(f"textrec-recognize: {failures} of {len(paths)} images could not be read", file=sys.stderr)
    return texts


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    texts = run_command("textrec-recognize", run, argv)
    if any(text is None for text in texts):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
