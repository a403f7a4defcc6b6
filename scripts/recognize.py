"""textrec-recognize: print the text of each image, one line per image.

    textrec-recognize --model runs/self-attention line1.png line2.png
    textrec-recognize --model runs/self-attention scans/ --show_paths
"""

import argparse
import sys
from pathlib import Path

from .inference import DECODINGS, load_recognizer, recognize

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
    parser.add_argument("--model", required=True, help="Trained model folder or Hub id.")
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--num_beams", type=int, default=1)
    parser.add_argument("--decoding", choices=DECODINGS, default="attention",
                        help="attention: the decoder through generate(); ctc: the CTC head's best path (much "
                        "faster; models trained with a CTC head only).")
    parser.add_argument("--show_paths", action="store_true", help="Print 'path<TAB>text' instead of the text alone.")
    return parser


def run(argv: list[str] | None = None) -> list[str]:
    args = build_parser().parse_args(argv)
    paths = collect_images(args.images)
    if not paths:
        raise SystemExit("textrec-recognize: no images found")
    model, processor = load_recognizer(args.model)
    result = recognize(
        model,
        processor,
        [str(p) for p in paths],
        batch_size=args.batch_size,
        num_beams=args.num_beams,
        decoding=args.decoding,
        progress=False,
    )
    for path, text in zip(paths, result.texts):
        print(f"{path}\t{text}" if args.show_paths else text)
    sys.stdout.flush()
    return result.texts


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run(argv)


if __name__ == "__main__":
    main()
