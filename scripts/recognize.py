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
SHOWN_NAMES = 5
"""How many of the entries a folder's skipped-files line names."""


def collect_images(inputs: list[str]) -> list[Path]:
    """Files as given, and the image files of folders in name order (by `IMAGE_SUFFIXES`). What else a folder
    holds is not read, and one line on stderr counts and names it: other files, and sub-folders. A symbolic link
    to nothing counts as a file: by its name an image to read (that then cannot be read), else another file."""
    paths = []
    for item in map(Path, inputs):
        if item.is_dir():
            entries = sorted(item.iterdir())
            files = [p for p in entries if p.is_file() or p.is_symlink() and not p.exists()]
            paths.extend(p for p in files if p.suffix.lower() in IMAGE_SUFFIXES)
            others = [p.name for p in files if p.suffix.lower() not in IMAGE_SUFFIXES]
            folders = [p.name for p in entries if p.is_dir()]
            report_skipped(item, others, folders)
        elif item.exists():
            paths.append(item)
        else:
            raise SystemExit(f"textrec-recognize: no such file or folder: {item}")
    return paths


def _counted(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    return shown + (f", ... ({len(names) - SHOWN_NAMES} more)" if len(names) > SHOWN_NAMES else "")


def report_skipped(folder: Path, others: list[str], folders: list[str]) -> None:
    """`textrec-recognize: scans: skipped 3 files that are not images: a.txt, b.csv, c.md` on stderr (and the
    sub-folders, which are not read), or nothing where the folder holds images only."""
    parts = []
    if others:
        parts.append(f"{_counted(len(others), 'file that is not an image', 'files that are not images')}: {_names(others)}")
    if folders:
        parts.append(f"{_counted(len(folders), 'sub-folder', 'sub-folders')} (not read): {_names(folders)}")
    if parts:
        print(f"textrec-recognize: {folder}: skipped {'; and '.join(parts)}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrec-recognize", description=__doc__.split("\n\n")[0])
    parser.add_argument("images", nargs="+", help="Image files or folders of images.")
    parser.add_argument("--model", required=True,
                        help="A released model's name (e.g. self-attention-lines), a trained model folder or a Hub id.")
    parser.add_argument("--batch_size", type=positive_int, default=16)
    parser.add_argument("--num_beams", type=positive_int,
                        help="Beams of the decoder's search (1: greedy). Default: the model's generation config's, "
                        "as model.generate() reads.")
    parser.add_argument("--decoding", choices=DECODINGS,
                        help="attention: the attention decoder; ctc: the CTC head's best path (much "
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
