"""textrec-recognize: print the text of each image, one line per image.

    textrec-recognize line1.png line2.png                                # read with crnn-lines
    textrec-recognize --model runs/self-attention line1.png line2.png
    textrec-recognize --model runs/self-attention scans/ --show_paths
    textrec-recognize --model crnn-lines scans/ --show_confidence        # text<TAB>0.973
    textrec-recognize --model crnn-lines scans/ --output_format json     # one JSON object per image and line
    textrec-recognize --model crnn-lines --page page.png                 # a whole page: its lines in reading order
    textrec-recognize --model crnn-lines --page pages/ --output_format hocr --output_dir read/
    textrec-recognize --page scan.pdf fax.tiff                          # every page of a PDF or multi-page TIFF
    textrec-recognize --page scan.pdf --output_format pdf --output_dir read/   # read/scan.pdf: searchable
"""

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from textrec.model_cards import DEFAULT_DETECTOR, DEFAULT_RECOGNIZER

from .cli import (
    DEBUG_HELP,
    add_device_argument,
    add_old_umlauts_argument,
    check_old_umlauts,
    positive_float,
    positive_int,
    resolve_device,
    run_command,
    unit_interval,
)

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp", ".pbm", ".pgm", ".ppm"}
SHOWN_NAMES = 5
"""How many of the entries a folder's skipped-files line names."""
OUTPUT_FORMATS = ("text", "json", "hocr", "pdf")
"""`--output_format`: a line of text per image (per line of a page), a JSON object per image (or page), hOCR (pages
only), or a searchable PDF (pages only, to `--output_dir`: one per image or document)."""


def collect_images(inputs: list[str], documents: bool = False) -> list[Path]:
    """Files as given, and the image files of folders in name order (by `IMAGE_SUFFIXES`; PDFs too where
    `documents`, as `--page` reads them). What else a folder holds is not read, and one line on stderr counts and
    names it: other files, and sub-folders. A symbolic link to nothing counts as a file: by its name an image to read
    (that then cannot be read), else another file. A name given that is neither a file nor a folder is kept as a
    file, which then cannot be read: named on stderr and skipped in its turn, as an unreadable image is, the others
    read all the same."""
    if documents:
        from textrec.processing.document_pages import PDF_SUFFIX

        suffixes = IMAGE_SUFFIXES | {PDF_SUFFIX}
    else:
        suffixes = IMAGE_SUFFIXES
    paths = []
    for item in map(Path, inputs):
        if item.is_dir():
            entries = sorted(item.iterdir())
            files = [p for p in entries if p.is_file() or p.is_symlink() and not p.exists()]
            paths.extend(p for p in files if p.suffix.lower() in suffixes)
            others = [p.name for p in files if p.suffix.lower() not in suffixes]
            folders = [p.name for p in entries if p.is_dir()]
            report_skipped(item, others, folders)
        else:  # a file, or a name that is no file: read in its turn, where one that cannot be read is named and skipped
            paths.append(item)
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
    parser.add_argument("images", nargs="+", help="Image files or folders of images (with --page also PDFs and "
                        "multi-page TIFFs, each of whose pages is read).")
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
                        "whose error goes to stderr; with --page, each page's lines, pages parted by a form feed); json: one JSON object per image and line, "
                        "{\"path\", \"text\", \"confidence\", \"characters\": [[character, confidence], ...]} "
                        "(and \"warning\" where the image lies outside what the model reads: blank, several lines, "
                        "a line on its side...; \"text\": null and \"error\" for an image that could not be read; with --page "
                        "\"lines\": null and \"error\", a page read as no line \"lines\": [] and its \"warning\", and a document's "
                        "page its \"page_number\"); hocr (with --page): "
                        "an hOCR document per page; pdf (with --page and --output_dir): a searchable PDF per image or "
                        "document, its pages as they are with the lines read laid over them as invisible text, as "
                        "ocrmypdf writes them.")
    parser.add_argument("--page", action="store_true",
                        help="Each image is a whole page: find its lines with the text-line detector (--detector), read "
                        "them with --model and print them in reading order (columns, then lines top to bottom).")
    parser.add_argument("--detector", default=None,
                        help=f"With --page: the text-line detector (a released name, a folder or a Hub id; default "
                        f"{DEFAULT_DETECTOR}).")
    parser.add_argument("--min_character_confidence", type=unit_interval, default=None,
                        help="With --page: leave out a detected run read with a mean character confidence under this "
                        "(signatures, stamps, rules read as unlikely characters), a line read as no letter or "
                        "digit (a speck read as '-'), a line far less high than the page's (a torn edge) and a run "
                        "no deeper than the paper's grain (a blank sheet's grain read as figures); 0 keeps "
                        "every run and line. Default: "
                        "textrec.processing.page_reading.MIN_CHARACTER_CONFIDENCE.")
    parser.add_argument("--no_auto_rotate", action="store_true",
                        help="With --page: read each page as it lies (by default a page on its side or upside down is "
                        "read turned upright; its boxes stay in the image's pixels and its JSON gives the rotation).")
    parser.add_argument("--output_dir", help="With --page: write each page's reading to OUTPUT_DIR/<image name>.txt, "
                        ".json or .hocr (by --output_format) instead of printing it, a document's pages to <document "
                        "name>-page-<number> (refused where two pages have the same name); with --output_format pdf, "
                        "each image or document to OUTPUT_DIR/<its name>.pdf.")
    parser.add_argument("--pdf_dpi", type=positive_float,
                        help="With --page: render PDF pages at this resolution (dots per inch). Default: a scanned "
                        "page at its scan's own resolution, a page of vector text at "
                        "textrec.processing.document_pages.PDF_DPI.")
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


def keep_every_line_printable() -> None:
    """Where the output's encoding cannot write every character textrec reads (a Windows console's cp1252 has no `ſ`),
    those it cannot write are printed as `\\u017f` escapes, and a note says how to get them as they are: a line that
    would stop the run, and every line after it, stays."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    if encoding.lower().replace("-", "") in ("utf8", "utf16", "utf32") or not hasattr(sys.stdout, "reconfigure"):
        return
    sys.stdout.reconfigure(errors="backslashreplace")
    print(f"textrec-recognize: the output is written in {encoding}: characters it lacks are printed as \\u escapes "
          "(PYTHONIOENCODING=utf-8 prints them as they are)", file=sys.stderr)


def run(argv: list[str] | None = None) -> list[str | None]:
    """Prints each image's text (or `path<TAB>text`) as soon as its batch is read, in order. An image that
    cannot be read gets a line on stderr naming it and why, the others are read all the same, and a summary
    ends the run; `main` then exits with status 1."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from transformers.utils import logging as transformers_logging

    from textrec.processing.document_pages import is_pdf
    from textrec.processing.inference import DECODINGS, iter_recognize, load_recognizer

    transformers_logging.disable_progress_bar()  # a bar for loading a few MB of weights on every run is noise
    keep_every_line_printable()

    if args.decoding is not None and args.decoding not in DECODINGS:
        parser.error(f"argument --decoding: invalid choice: {args.decoding!r} (choose from {', '.join(DECODINGS)})")
    if args.output_format in ("hocr", "pdf") and not args.page:
        parser.error(f"--output_format {args.output_format} describes pages: use it with --page")
    if args.output_format == "pdf" and not args.output_dir:
        parser.error("--output_format pdf writes files: give --output_dir")
    if args.output_format == "hocr" and not args.output_dir and len(args.images) > 1:
        parser.error("--output_format hocr writes one document per page: give --output_dir for several pages")
    if args.output_dir and not args.page:
        parser.error("--output_dir writes pages' readings: use it with --page")
    if args.no_auto_rotate and not args.page:
        parser.error("--no_auto_rotate is how pages are read: use it with --page")
    if args.pdf_dpi is not None and not args.page:
        parser.error("--pdf_dpi is how PDF pages are rendered: use it with --page")
    if args.detector is not None and not args.page:
        parser.error("--detector finds a page's lines: use it with --page")
    if args.min_character_confidence is not None and not args.page:
        parser.error("--min_character_confidence leaves out a page's unsure runs: use it with --page")
    pdfs = [name for name in args.images if is_pdf(name)]
    if pdfs and not args.page:
        parser.error(f"{pdfs[0]} is a PDF, a document of pages: read it with --page")
    device = resolve_device(args.device)
    paths = collect_images(args.images, documents=args.page)
    if not paths:
        raise SystemExit(f"textrec-recognize: no images found in {', '.join(args.images)}")
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


NO_LINE_FOUND = "no line of text was found on this page"
"""What `--page` says of a page read as no line: on stderr, and as the page's JSON record's `warning`."""


def format_page(path: Path, page, args: argparse.Namespace, page_number: int | None = None) -> str:
    """A page's reading as `--output_format` asks: its lines (each `path<TAB>`-prefixed with `--show_paths`, with
    `<TAB>confidence` after with `--show_confidence`), one JSON object, or an hOCR document. `page_number`: the page's
    number in its document (a PDF, a multi-page TIFF), None for an image; shown as `scan.pdf#page=2`."""
    shown = str(path) if page_number is None else f"{path}#page={page_number}"
    if args.output_format == "json":
        where = {"path": str(path)} if page_number is None else {"path": str(path), "page_number": page_number}
        # a page read as no line says so in its record too, as a line image read as nothing carries its warning
        said = {} if page.lines else {"warning": NO_LINE_FOUND}
        return json.dumps({**where, **page.to_dict(), **said}, ensure_ascii=False)
    if args.output_format == "hocr":
        return page.to_hocr(title=Path(shown).name)
    lines = []
    for line in page.lines:
        text = f"{line.text}\t{line.confidence:.3f}" if args.show_confidence else line.text
        lines.append(f"{shown}\t{text}" if args.show_paths else text)
    return "\n".join(lines)


@dataclass
class PageSource:
    """One input of `--page`: an image file (`pages` None), or a document file (a PDF, a multi-page TIFF) with its
    number of pages, or the error that keeps it from being read."""

    path: Path
    pages: int | None = None
    error: str | None = None

    def output_stems(self, per_document: bool = False) -> list[str]:
        """The names (without suffix) its pages' readings are written to in `--output_dir`: a document's pages each to
        its own, or with `per_document` (a searchable PDF) all to the document's."""
        if self.pages is None or self.error is not None or per_document:
            return [self.path.stem]
        return [self.page_stem(number) for number in range(1, max(self.pages, 1) + 1)]

    def page_stem(self, number: int) -> str:
        """The name (without suffix) page `number` (from 1) of a document is written to in `--output_dir`."""
        return f"{self.path.stem}-page-{number}"


def page_sources(paths: list[Path]) -> list[PageSource]:
    """Each input path as a `PageSource`: PDFs and TIFFs are counted (a TIFF of one frame is an image)."""
    from textrec.processing.document_pages import MULTI_PAGE_IMAGE_SUFFIXES, document_page_count, is_pdf

    sources = []
    for path in paths:
        if not (is_pdf(path) or path.suffix.lower() in MULTI_PAGE_IMAGE_SUFFIXES):
            sources.append(PageSource(path))
            continue
        try:
            pages = document_page_count(path)
        except (ValueError, ImportError) as error:
            sources.append(PageSource(path, pages=0, error=str(error)))
            continue
        if pages == 0:
            sources.append(PageSource(path, pages=0, error=f"{path}: the document holds no page"))
        else:
            sources.append(PageSource(path, pages=pages) if is_pdf(path) or pages > 1 else PageSource(path))
    return sources


def check_distinct_outputs(sources: list[PageSource], suffix: str, output_dir: Path, per_document: bool = False) -> None:
    """A `ValueError` where two pages (with `per_document`, two documents) would be written to the same file of
    `output_dir` (`<image name><suffix>`, `<document name>-page-<number><suffix>`): the later would overwrite the
    earlier; or where a file written would be one of the inputs (a PDF read and written to its own folder)."""
    inputs = {source.path.resolve() for source in sources}
    by_output = {}
    for source in sources:
        for stem in source.output_stems(per_document):
            if (output_dir / f"{stem}{suffix}").resolve() in inputs:
                raise ValueError(f"{output_dir / f'{stem}{suffix}'} would be written over an input: give another "
                                 "--output_dir")
            by_output.setdefault(f"{stem}{suffix}", []).append(str(source.path))
    clashes = {name: inputs for name, inputs in by_output.items() if len(inputs) > 1}
    if clashes:
        name, inputs = next(iter(clashes.items()))
        raise ValueError(f"{len(clashes)} file name(s) of --output_dir would hold several pages, e.g. {output_dir / name}: "
                         f"{', '.join(inputs)}; give the pages distinct names, or read them in separate runs")


def read_pages(paths: list[Path], recognizer, args: argparse.Namespace, device: str) -> list[str | None]:
    """`--page`: reads each page (`textrec.processing.page_reading.read_page`; each page of a PDF or multi-page TIFF,
    `textrec.processing.document_pages`) and prints or writes its reading; a page or document that cannot be read
    gets a line on stderr and the others are read all the same. Returns the pages' texts (None for a page, or a
    whole document, that could not be read)."""
    from tqdm.auto import tqdm

    from textrec.processing.document_pages import iter_document_pages
    from textrec.processing.image_processing_text_recognition import load_image
    from textrec.processing.page_reading import PageReading, load_line_detector, read_page
    from textrec.processing.searchable_pdf import require_pdf_writer, write_searchable_pdf

    detector = load_line_detector(args.detector or DEFAULT_DETECTOR, device=device)
    sources = page_sources(paths)
    total = sum(1 if source.pages is None else max(source.pages, 1) for source in sources)
    if args.output_format == "hocr" and total > 1 and not args.output_dir:
        raise ValueError("--output_format hocr writes one document per page: give --output_dir for several pages")
    output_dir = Path(args.output_dir) if args.output_dir else None
    suffix = {"text": ".txt", "json": ".json", "hocr": ".hocr", "pdf": ".pdf"}[args.output_format]
    searchable = args.output_format == "pdf"  # one file per image or document, written once its pages are read
    if searchable:  # said before any page is read
        try:
            require_pdf_writer()
        except ImportError as error:
            raise ValueError(f"--output_format pdf: {error}") from None
    if output_dir is not None:
        check_distinct_outputs(sources, suffix, output_dir, per_document=searchable)
        output_dir.mkdir(parents=True, exist_ok=True)
    options = dict(batch_size=args.batch_size, decoding=args.decoding, num_beams=args.num_beams,
                   old_umlauts=args.old_umlauts, auto_rotate=not args.no_auto_rotate,
                   **({} if args.min_character_confidence is None else
                      {"min_character_confidence": args.min_character_confidence}))
    # Pages written to files print nothing: a bar counts them (where several are read).
    bar = tqdm(total=total, unit="page", disable=output_dir is None or total < 2)
    texts = []

    printed = []

    def emit(formatted: str, stem: str) -> None:
        if output_dir is None:
            # Pages printed as text one after another are parted by a form feed, as Tesseract and pdftotext part them.
            parted = "\f" if printed and args.output_format == "text" else ""
            print(parted + formatted, flush=True)
            printed.append(stem)
        else:
            (output_dir / f"{stem}{suffix}").write_text(formatted + "\n", encoding="utf-8")

    def failed(path: Path, error: str, stem: str, page_number: int | None = None) -> None:
        print(f"textrec-recognize: {error}", file=sys.stderr, flush=True)
        texts.append(None)
        if args.output_format == "json":  # a JSON Lines reader still finds every page
            where = {"path": str(path)} if page_number is None else {"path": str(path), "page_number": page_number}
            emit(json.dumps({**where, "lines": None, "error": error}, ensure_ascii=False), stem)

    for source in sources:
        if source.error is not None:
            failed(source.path, source.error, source.output_stems()[0])
            bar.update()
            continue
        if source.pages is None:
            pages = [(None, str(source.path), source.path.stem)]
        else:
            pages = ((number, image, source.page_stem(number))
                     for number, image in iter_document_pages(source.path, args.pdf_dpi))
        read, searchable_pages = 0, []
        try:
            for page_number, image, stem in pages:
                read += 1
                shown = source.path if page_number is None else f"{source.path}#page={page_number}"
                loaded = None
                try:
                    if searchable:  # the page as read, for the PDF: its boxes are in this image's pixels
                        image = loaded = load_image(image)
                    page = read_page(image, recognizer, detector, **options)
                except ValueError as error:
                    failed(source.path, str(error) if page_number is None else f"{shown}: {error}", stem, page_number)
                    if loaded is not None:  # a page that could not be read stays in its document, without text
                        searchable_pages.append((loaded, PageReading(loaded.width, loaded.height, [])))
                    continue
                finally:
                    bar.update()
                if not page.lines:
                    print(f"textrec-recognize: {shown}: {NO_LINE_FOUND}", file=sys.stderr, flush=True)
                texts.append(page.text)
                if searchable:
                    searchable_pages.append((loaded, page))
                else:
                    emit(format_page(source.path, page, args, page_number), stem)
        except ValueError as error:  # a document's page that cannot be rendered ends the document
            failed(source.path, str(error), source.page_stem(read + 1), read + 1)
            bar.update(source.pages - read)
        if searchable_pages:
            write_searchable_pdf(searchable_pages, output_dir / f"{source.path.stem}{suffix}")
    bar.close()
    failures = sum(text is None for text in texts)
    if failures:
        print(f"textrec-recognize: {failures} of {len(texts)} pages could not be read", file=sys.stderr)
    return texts


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    texts = run_command("textrec-recognize", run, argv)
    if any(text is None for text in texts):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
