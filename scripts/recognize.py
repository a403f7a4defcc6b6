"""textrec-recognize: print the text of each image, one line per image.

    textrec-recognize line1.png line2.png                                # read with crnn-lines
    textrec-recognize --model runs/self-attention line1.png line2.png
    textrec-recognize --model runs/self-attention scans/ --show_paths
    textrec-recognize --model crnn-lines scans/ --show_confidence        # text<TAB>0.973
    textrec-recognize --model crnn-lines scans/ --output_format json     # one JSON object per image and line
    textrec-recognize --model crnn-lines --page page.png                 # a whole page: its lines in reading order
    textrec-recognize --model crnn-lines --page pages/ --output_format hocr --output_dir read/
"""

import argparse
import json
import sys
from pathlib import Path

from textrec.model_cards import DEFAULT_DETECTOR, DEFAULT_RECOGNIZER

from .cli import (
    DEBUG_HELP,
    add_device_argument,
    add_old_umlauts_argument,
    check_old_umlauts,
    positive_int,
    resolve_device,
    run_command,
    unit_interval,
)

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp", ".pbm", ".pgm", ".ppm"}
SHOWN_NAMES = 5
"""How many of the entries a folder's skipped-files line names."""
OUTPUT_FORMATS = ("text", "json", "hocr")
"""`--output_format`: a line of text per image (per line of a page), a JSON object per image (or page), or hOCR
(pages only)."""


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
    parser = argparse.ArgumentParser(prog="textrec-recognize", description=__doc__.split("\n\n")[0], epilog=DEBUG_HELP)
    parser.add_argument("images", nargs="+", help="Image files or folders of images.")
    parser.add_argument("--model", default=DEFAULT_RECOGNIZER,
                        help="A released model's name (e.g. comer-math), a trained model folder or a Hub id. Default: "
                        f"{DEFAULT_RECOGNIZER}, which reads printed lines, scans and photographed words.")
    parser.add_argument("--batch_size", type=positive_int, default=16)
    parser.add_argument("--num_beams", type=positive_int,
                        help="Beams of the decoder's search (1: greedy). Default: the model's generation config's, "
                        "as model.generate() reads.")
    parser.add_argument("--decoding",
                        help="attention: the attention decoder; ctc: the CTC head (much faster; models trained "
                        "with a CTC head only; by prefix beam search with the model's character n-gram where it has "
                        "one, --num_beams 1 for the best path); joint: the decoder's search scored with the CTC "
                        "head's prefix scores (both). Default: the one the model reads best "
                        "with (its generation config's `decoding`), else attention.")
    add_old_umlauts_argument(parser)
    parser.add_argument("--show_paths", action="store_true", help="Print 'path<TAB>text' instead of the text alone.")
    parser.add_argument("--show_confidence", action="store_true",
                        help="Add the line's confidence (0-1; see textrec.processing.pipeline_text_recognition): "
                        "'text<TAB>0.973'. The text is the same as without.")
    parser.add_argument("--output_format", choices=OUTPUT_FORMATS, default="text",
                        help="text: one line of text per image (an empty one for an image that could not be read, "
                        "whose error goes to stderr); json: one JSON object per image and line, "
                        "{\"path\", \"text\", \"confidence\", \"characters\": [[character, confidence], ...]} "
                        "(and \"warning\" where the image lies outside what the model reads: blank, several lines, "
                        "a line on its side...; \"text\": null and \"error\" for an image that could not be read; with --page "
                        "\"lines\": null and \"error\").")
    parser.add_argument("--page", action="store_true",
                        help="Each image is a whole page: find its lines with the text-line detector (--detector), read "
                        "them with --model and print them in reading order (columns, then lines top to bottom).")
    parser.add_argument("--detector", default=DEFAULT_DETECTOR,
                        help=f"With --page: the text-line detector (a released name, a folder or a Hub id; default "
                        f"{DEFAULT_DETECTOR}).")
    parser.add_argument("--min_character_confidence", type=unit_interval, default=None,
                        help="With --page: leave out a detected run read with a mean character confidence under this "
                        "(signatures, stamps, rules read as unlikely characters; 0 keeps every run). Default: "
                        "textrec.processing.page_reading.MIN_CHARACTER_CONFIDENCE.")
    parser.add_argument("--no_auto_rotate", action="store_true",
                        help="With --page: read each page as it lies (by default a page on its side or upside down is "
                        "read turned upright; its boxes stay in the image's pixels and its JSON gives the rotation).")
    parser.add_argument("--output_dir", help="With --page: write each page's reading to OUTPUT_DIR/<image name>.txt, "
                        ".json or .hocr (by --output_format) instead of printing it (refused where two pages have "
                        "the same name).")
    add_device_argument(parser)
    return parser


def format_reading(path: Path, reading, error: str | None, args: argparse.Namespace) -> str:
    """The output line of one image: its text (`path<TAB>` before it with `--show_paths`, `<TAB>confidence` after
    it with `--show_confidence`), or its JSON object with `--output_format json`. `reading` is the text, or the
    `LineReading` where confidences were asked for; None for an image that could not be read (an empty text, or
    a JSON object with its `error`)."""
    if reading is None:
        if args.output_format == "json":
            return json.dumps({"path": str(path), "text": None, "error": error}, ensure_ascii=False)
        return f"{path}\t" if args.show_paths else ""
    if args.output_format == "json":
        record = {"path": str(path), "text": reading.text, "confidence": round(reading.confidence, 4),
                  "characters": [[character, round(confidence, 4)] for character, confidence in reading.characters]}
        if reading.warning:  # the image lies outside what the model reads: its confidence says nothing
            record["warning"] = reading.warning
        return json.dumps(record, ensure_ascii=False)
    line = reading.text if args.show_confidence else reading
    if args.show_paths:
        line = f"{path}\t{line}"
    return f"{line}\t{reading.confidence:.3f}" if args.show_confidence else line


def run(argv: list[str] | None = None) -> list[str | None]:
    """Prints each image's text (or `path<TAB>text`) as soon as its batch is read, in order. An image that
    cannot be read gets a line on stderr naming it and why, the others are read all the same, and a summary
    ends the run; `main` then exits with status 1."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from transformers.utils import logging as transformers_logging

    from textrec.processing.inference import DECODINGS, iter_recognize, load_recognizer

    transformers_logging.disable_progress_bar()  # a bar for loading a few MB of weights on every run is noise

    if args.decoding is not None and args.decoding not in DECODINGS:
        parser.error(f"argument --decoding: invalid choice: {args.decoding!r} (choose from {', '.join(DECODINGS)})")
    if args.output_format == "hocr" and not args.page:
        parser.error("--output_format hocr describes pages: use it with --page")
    if args.output_dir and not args.page:
        parser.error("--output_dir writes pages' readings: use it with --page")
    if args.no_auto_rotate and not args.page:
        parser.error("--no_auto_rotate is how pages are read: use it with --page")
    device = resolve_device(args.device)
    paths = collect_images(args.images)
    if not paths:
        raise SystemExit("textrec-recognize: no images found")
    model, processor = load_recognizer(args.model, device=device)
    check_old_umlauts(args, model)
    if args.page:
        return read_pages(paths, (model, processor), args, device)
    output_confidences = args.show_confidence or args.output_format == "json"
    texts, failures = [], 0
    for index, reading, error in iter_recognize(
        model,
        processor,
        [str(p) for p in paths],
        batch_size=args.batch_size,
        num_beams=args.num_beams,
        decoding=args.decoding,
        progress=False,
        on_error="skip",
        output_confidences=output_confidences,
        old_umlauts=args.old_umlauts,
    ):
        texts.append(reading.text if output_confidences and reading is not None else reading)
        if error is not None:
            failures += 1
            print(f"textrec-recognize: {error}", file=sys.stderr, flush=True)
            # Still one output line per image: an empty text (or `path<TAB>`) keeps the lines in step with the images.
            print(format_reading(paths[index], None, error, args), flush=True)
        else:
            print(format_reading(paths[index], reading, None, args), flush=True)
    if failures:
        print(f"textrec-recognize: {failures} of {len(paths)} images could not be read", file=sys.stderr)
    return texts


def format_page(path: Path, page, args: argparse.Namespace) -> str:
    """A page's reading as `--output_format` asks: its lines (each `path<TAB>`-prefixed with `--show_paths`, with
    `<TAB>confidence` after with `--show_confidence`), one JSON object, or an hOCR document."""
    if args.output_format == "json":
        return json.dumps({"path": str(path), **page.to_dict()}, ensure_ascii=False)
    if args.output_format == "hocr":
        return page.to_hocr(title=path.name)
    lines = []
    for line in page.lines:
        text = f"{line.text}\t{line.confidence:.3f}" if args.show_confidence else line.text
        lines.append(f"{path}\t{text}" if args.show_paths else text)
    return "\n".join(lines)


def check_distinct_outputs(paths: list[Path], suffix: str, output_dir: Path) -> None:
    """A `ValueError` where two pages would be written to the same file of `output_dir` (`<image name><suffix>`):
    the later would overwrite the earlier."""
    by_output = {}
    for path in paths:
        by_output.setdefault(f"{path.stem}{suffix}", []).append(str(path))
    clashes = {name: sources for name, sources in by_output.items() if len(sources) > 1}
    if clashes:
        name, sources = next(iter(clashes.items()))
        raise ValueError(f"{len(clashes)} file name(s) of --output_dir would hold several pages, e.g. {output_dir / name}: "
                         f"{', '.join(sources)}; give the pages distinct names, or read them in separate runs")


def read_pages(paths: list[Path], recognizer, args: argparse.Namespace, device: str) -> list[str | None]:
    """`--page`: reads each page (`textrec.processing.page_reading.read_page`) and prints or writes its reading; a
    page that cannot be read gets a line on stderr and the others are read all the same. Returns the pages' texts
    (None for a page that could not be read)."""
    from textrec.processing.page_reading import load_line_detector, read_page

    detector = load_line_detector(args.detector, device=device)
    if args.output_format == "hocr" and len(paths) > 1 and not args.output_dir:
        raise ValueError("--output_format hocr writes one document per page: give --output_dir for several pages")
    output_dir = Path(args.output_dir) if args.output_dir else None
    suffix = {"text": ".txt", "json": ".json", "hocr": ".hocr"}[args.output_format]
    if output_dir is not None:
        check_distinct_outputs(paths, suffix, output_dir)
        output_dir.mkdir(parents=True, exist_ok=True)
    texts = []
    for path in paths:
        try:
            page = read_page(str(path), recognizer, detector, batch_size=args.batch_size, decoding=args.decoding,
                             num_beams=args.num_beams, old_umlauts=args.old_umlauts, auto_rotate=not args.no_auto_rotate,
                             **({} if args.min_character_confidence is None else
                                                          {"min_character_confidence": args.min_character_confidence}))
        except ValueError as error:
            print(f"textrec-recognize: {error}", file=sys.stderr, flush=True)
            texts.append(None)
            if args.output_format == "json":  # a JSON Lines reader still finds every page
                formatted = json.dumps({"path": str(path), "lines": None, "error": str(error)}, ensure_ascii=False)
                if output_dir is None:
                    print(formatted, flush=True)
                else:
                    (output_dir / f"{path.stem}{suffix}").write_text(formatted + "\n", encoding="utf-8")
            continue
        if not page.lines:
            print(f"textrec-recognize: {path}: no line of text was found on this page", file=sys.stderr, flush=True)
        texts.append(page.text)
        formatted = format_page(path, page, args)
        if output_dir is not None:
            (output_dir / f"{path.stem}{suffix}").write_text(formatted + "\n", encoding="utf-8")
        else:
            print(formatted, flush=True)
    failures = sum(text is None for text in texts)
    if failures:
        print(f"textrec-recognize: {failures} of {len(paths)} pages could not be read", file=sys.stderr)
    return texts


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    texts = run_command("textrec-recognize", run, argv)
    if any(text is None for text in texts):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
