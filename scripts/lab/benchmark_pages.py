"""Whole real pages read by textrec's page reader and by Tesseract's page mode: line detection and page CER.

    python scripts/lab/benchmark_pages.py --recognizer crnn-lines --detector runs/line-detector \
        --split development --output_markdown scripts/lab/results/pages.md

The pages are `../shared/data/real/pages/` (receipts, forms, German book print, a newspaper; see its README), split
as the other real sets (`real_sets.split_of`: one page in five held out). For each page:
- detection: the reader's output lines (its detected runs joined into printed lines) against the page's printed
  lines (its annotated segments joined by `row`), matched one to one at an intersection over union of at least
  `MATCH_IOU`: precision and recall. (Tesseract's lines are not boxed here: its page mode is scored by CER only.)
- page CER: the page's text in reading order (its printed lines joined by newlines, runs of a line by spaces)
  against what each engine prints for the page, whitespace runs made one space; SROIE's labels are in capitals,
  so receipts are compared upper-cased; the NZZ's ground truth writes the long s as s and a word broken at a line's
  end with `¬` (its transcription guidelines), so its pages are compared so (`normalise`; both engines write `ſ`); the
  OCR-D book pages write that break `-` (Fraktur's double hyphen, which the OCR-D line set writes `—`), so a mark
  ending a line after a letter is compared as one mark there too; both write Fraktur's one capital for I and J by its
  sound (`Ich`, the OCR-D line set `Jch`), so `J` before a consonant is compared as `I` (`FRAKTUR_CAPITAL_I_SUBSETS`).
- seconds per page on one thread (torch and Tesseract alike). Tesseract reads the Fraktur pages with its Fraktur
  model (`TESSERACT_LANGUAGES`), the others with `eng`.

`--scale 0.5` reads every page as if scanned at half its resolution (resized bilinearly, both engines; the boxes
scaled alike): what a reader does with a user's smaller scan of the same page. `--rotate 90` (180, 270) reads every
page turned so many degrees counter-clockwise, as a page put on the scanner sideways or upside down (both engines; the
boxes turned alike; Tesseract's page mode, `--psm 3`, reads a page as it lies). `--shadow 0.5` reads every page in the
shadow of a hand or a phone, as a page photographed often is: the light falling to half right of a slanting edge
(`shadowed_page`, both engines).

`--two_columns 1.5` reads two-column pages made of the real ones: each page's text block (its lines' boxes and a line's
height of paper around them) set beside the next page's of the same document (`page_runs`), the second scaled to the
first's line height, tops aligned, the text blocks `--two_columns` line heights apart (`two_column_page`). Its reference is the
first page's text, then the second's: columns read in turn, as a two-column journal or a book's spread is read. The
real pages hold no two-column page of single articles; this is the nearest real measure of one. `--columns 3` sets
three pages' blocks side by side so (`page_runs`), a newspaper's narrower columns; `--across_documents` sets pages of
other books side by side instead, their type and scale unlike. The right block's paper is brought to the left's colour:
one paper, as a printed page has (pages of other scans differ in tone, and a step of tone down the gutter is no page's). With `--column_rule`
a printed rule runs down the middle of the gutter, from the columns' top to their foot, as journals and newspapers
print one (`COLUMN_RULE_WIDTH_HEIGHTS` thick, in the left page's ink).
"""

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_sets import REAL_DATA_DIR, split_of  # noqa: E402

PAGES_DIR = REAL_DATA_DIR / "pages"
MATCH_IOU = 0.5
UPPER_CASE_SUBSETS = {"sroie"}
TESSERACT_LANGUAGES = {"ocrd": "Fraktur", "nzz": "Fraktur"}
"""Tesseract reads the German Fraktur pages with its German Fraktur script model (Debian's
`tesseract-ocr-script-frak`), the others with `eng`: the models a user of those pages would pick."""
OLD_UMLAUT_SUBSETS = {"ocrd"}
"""Pages whose ground truth writes an umlaut printed with a small e above as the Deutsches Textarchiv does (`uͤ`):
textrec reads them with `old_umlauts=True`, as a user of such pages would (`textrec-recognize --page --old_umlauts`)."""


def load_pages(split: str, subsets: list[str] | None = None, limit: int | None = None) -> list[dict]:
    metadata = PAGES_DIR / "pages.jsonl"
    if not metadata.is_file():
        raise SystemExit(f"no real pages at {PAGES_DIR} (the benchmark reads ../shared/data/real/pages)")
    pages = [json.loads(line) for line in metadata.read_text(encoding="utf-8").splitlines() if line.strip()]
    pages = [page for page in pages if (split == "all" or split_of(page["file_name"]) == split)
             and (not subsets or page["subset"] in subsets)]
    return pages[:limit] if limit else pages


def printed_lines(page: dict) -> list[tuple[list[float], str]]:
    """The page's printed lines in reading order: each row's box (the union of its segments) and text."""
    rows: dict[int, list[dict]] = {}
    for line in page["lines"]:
        rows.setdefault(line["row"], []).append(line)
    result = []
    for row in sorted(rows, key=lambda r: min(page["lines"].index(line) for line in rows[r])):
        segments = sorted(rows[row], key=lambda line: page["lines"].index(line))
        boxes = np.asarray([line["box"] for line in segments], dtype=np.float64)
        result.append(([*boxes[:, :2].min(0), *boxes[:, 2:].max(0)], " ".join(line["text"] for line in segments)))
    return result


ROUND_S_SUBSETS = {"nzz"}
"""Pages whose ground truth writes the long s as s."""
LINE_END_BREAK_SUBSETS = {"nzz", "ocrd"}
"""Pages whose ground truth writes the mark ending a line whose last word breaks otherwise than the print or the
other real sets do: the NZZ `¬` whatever the print shows (Transkribus's mark), the OCR-D book pages `-` for Fraktur's
double hyphen, which the OCR-D line set (`print/`) writes `—`. There a mark ending a line after a letter (`-`, `—`,
`⸗`, `=`, `¬`) is compared as `¬`, for both engines."""
LINE_END_BREAK = re.compile(r"(?<=[^\W\d_])[-—⸗=¬]\s*$", re.MULTILINE)
FRAKTUR_CAPITAL_I_SUBSETS = {"nzz", "ocrd"}
"""Fraktur pages whose ground truth writes Fraktur's one capital for I and J by its sound (`Ich`, `Ihr`: the Deutsches
Textarchiv's rule), where the OCR-D line set (`print/`) writes it `J` as printed (`Jch`) and textrec's recognizers read
it so: there a word's first `J` before a consonant, which no German word has, is compared as `I`, for both engines."""
FRAKTUR_CAPITAL_I = re.compile(r"\bJ(?=[bcdfghklmnpqrstvwxzſ])")


def normalise(text: str, subset: str) -> str:
    """A page's text (lines separated by newlines) as compared: one space between words and lines, upper case for
    receipts, the long s as the NZZ transcribes it (`ROUND_S_SUBSETS`), line-end breaks as one mark
    (`LINE_END_BREAK_SUBSETS`), Fraktur's capital I as the ground truth writes it (`FRAKTUR_CAPITAL_I_SUBSETS`)."""
    if subset in FRAKTUR_CAPITAL_I_SUBSETS:
        text = FRAKTUR_CAPITAL_I.sub("I", text)
    if subset in LINE_END_BREAK_SUBSETS:
        text = LINE_END_BREAK.sub("¬", text)
    if subset in ROUND_S_SUBSETS:
        text = text.replace("ſ", "s")
    text = re.sub(r"\s+", " ", text.replace("\n", " ")).strip()
    return text.upper() if subset in UPPER_CASE_SUBSETS else text


def iou(a, b) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def match(predicted: list, expected: list) -> int:
    """Greedy one-to-one matches at IoU >= MATCH_IOU, best pairs first."""
    pairs = sorted(((iou(p, e), i, j) for i, p in enumerate(predicted) for j, e in enumerate(expected)), reverse=True)
    used_p, used_e, matched = set(), set(), 0
    for score, i, j in pairs:
        if score < MATCH_IOU:
            break
        if i not in used_p and j not in used_e:
            used_p.add(i)
            used_e.add(j)
            matched += 1
    return matched


def edit_distance(prediction: str, reference: str) -> int:
    """Character edits from `prediction` to `reference` (jiwer's, in C: pages hold up to ~70,000 characters)."""
    import jiwer

    if not reference:
        return len(prediction)
    output = jiwer.process_characters(reference, prediction)
    return output.substitutions + output.deletions + output.insertions


PROJECTION_PROFILES = "projection-profiles"
"""`--detector` name of the classical baseline: `projection_profile_lines`."""


def projection_profile_lines(page) -> dict:
    """The classical segmenter, as a baseline for the detector: Otsu's threshold, the row profile of the ink cut into
    bands at empty rows, each band cut into runs at column gaps wider than its height. No deskew, no columns."""
    from textrec.processing.image_processing_line_detection import box_to_polygon, page_has_light_text
    from textrec.processing.image_processing_text_recognition import otsu_threshold
    from textrec.processing.page_reading import runs_of

    grey = np.asarray(page.convert("L"), dtype=np.uint8)
    if page_has_light_text(grey):
        grey = 255 - grey
    ink = grey < otsu_threshold(grey)
    boxes = []
    for top, bottom in runs_of(ink.sum(axis=1) > max(2, 0.002 * ink.shape[1])):
        height = bottom - top
        if height < 4:
            continue
        columns = ink[top:bottom].any(axis=0)
        for left, right in runs_of(columns, gap=height):
            if right - left >= height / 2:
                boxes.append([float(left), float(top), float(right), float(bottom)])
    return {"scores": [1.0] * len(boxes), "boxes": boxes, "polygons": [box_to_polygon(box) for box in boxes]}


def tesseract_page(path: Path, lang: str) -> tuple[str, float]:
    start = time.perf_counter()
    result = subprocess.run(["tesseract", str(path), "stdout", "-l", lang, "--psm", "3"], capture_output=True,
                            text=True, env={**os.environ, "OMP_THREAD_LIMIT": "1"}, check=True)
    return result.stdout, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recognizer", default="crnn-lines")
    parser.add_argument("--detector", default="line-detector",
                        help=f"A detector's name or folder, or {PROJECTION_PROFILES} (the classical baseline).")
    parser.add_argument("--split", choices=("development", "held-out", "all"), default="development")
    parser.add_argument("--subsets", nargs="*", help="sroie, funsd, ocrd, nzz (default: all)")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--no_tesseract", action="store_true")
    parser.add_argument("--output_markdown")
    parser.add_argument("--output_json")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="Read every page resized by this factor (0.5: as if scanned at half the resolution).")
    parser.add_argument("--rotate", type=int, default=0, choices=(0, 90, 180, 270),
                        help="Read every page turned so many degrees counter-clockwise.")
    parser.add_argument("--two_columns", type=float, metavar="GUTTER",
                        help="Read each page's text block beside the next page's, GUTTER line heights apart.")
    parser.add_argument("--columns", type=int, default=2,
                        help="With --two_columns: set so many pages' text blocks side by side (2 or more).")
    parser.add_argument("--column_rule", action="store_true",
                        help="With --two_columns: a printed rule down the middle of the gutter.")
    parser.add_argument("--shadow", type=float, metavar="LIGHT",
                        help="Read every page in a shadow: the light falls to LIGHT (0-1) over its right part.")
    parser.add_argument("--across_documents", action="store_true",
                        help="With --two_columns: set each page beside pages of other documents (`page_runs`).")
    args = parser.parse_args()
    if args.scale <= 0:
        parser.error(f"--scale must be positive, got {args.scale}")
    if args.shadow is not None and not 0 < args.shadow <= 1:
        parser.error(f"--shadow is the light left in the shadow, in (0, 1]; got {args.shadow}")
    if args.two_columns is not None and args.two_columns < 0:
        parser.error(f"--two_columns must be at least 0, got {args.two_columns}")
    if args.column_rule and args.two_columns is None:
        parser.error("--column_rule draws a rule between two columns: give --two_columns too")
    if args.across_documents and args.two_columns is None:
        parser.error("--across_documents sets pages of other documents beside a page: give --two_columns too")
    if args.columns < 2 or args.columns != 2 and args.two_columns is None:
        parser.error(f"--columns sets pages side by side: at least 2, with --two_columns; got {args.columns}")

    import torch

    from textrec.processing.inference import load_recognizer
    from textrec.processing.page_reading import load_line_detector, read_page

    torch.set_num_threads(1)
    recognizer = load_recognizer(args.recognizer)
    detector = projection_profile_lines if args.detector == PROJECTION_PROFILES else load_line_detector(args.detector)
    pages = load_pages(args.split, args.subsets, args.limit)
    scratch = tempfile.TemporaryDirectory()
    if args.two_columns is not None:
        pages = [functools.reduce(lambda left, right: two_column_page(left, right, args.two_columns, Path(scratch.name),
                                                                      args.column_rule), run)
                 for run in page_runs(pages, args.columns, args.across_documents)]
    rows = []
    for page in pages:
        path = Path(page.get("path", PAGES_DIR / page["file_name"]))
        expected = printed_lines(page)
        if args.scale != 1.0:
            path = scaled_page(path, args.scale, Path(scratch.name))
            expected = [([coordinate * args.scale for coordinate in box], text) for box, text in expected]
        if args.shadow is not None:
            path = shadowed_page(path, args.shadow, Path(scratch.name))
        if args.rotate:
            path, size = turned_page(path, args.rotate, Path(scratch.name))
            expected = [(turned_box(box, args.rotate, *size), text) for box, text in expected]
        reference = normalise("\n".join(text for _, text in expected), page["subset"])
        start = time.perf_counter()
        reading = read_page(path, recognizer, detector, old_umlauts=page["subset"] in OLD_UMLAUT_SUBSETS)
        seconds = time.perf_counter() - start
        found = match([line.box for line in reading.lines], [box for box, _ in expected])
        row = {"file_name": page["file_name"], "subset": page["subset"], "lines": len(expected),
               "detected": len(reading.lines), "matched": found, "chars": len(reference),
               "errors": edit_distance(normalise(reading.text, page["subset"]), reference), "seconds": seconds}
        if not args.no_tesseract:
            text, tesseract_seconds = tesseract_page(path, TESSERACT_LANGUAGES.get(page["subset"], "eng"))
            row.update(tesseract_errors=edit_distance(normalise(text, page["subset"]), reference),
                       tesseract_seconds=tesseract_seconds)
        rows.append(row)
        print(json.dumps(row), flush=True)
    table = summarise(rows, args)
    print(table)
    if args.output_markdown:
        Path(args.output_markdown).write_text(table + "\n", encoding="utf-8")
    if args.output_json:
        Path(args.output_json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def page_runs(pages: list[dict], length: int = 2, across_documents: bool = False) -> list[tuple[dict, ...]]:
    """Each page with the `length - 1` pages after it in its document (in file order), and the pages alone in their
    document with the next such pages of their subset: with 2, a page of a document of several is read as a left
    column and as a right one. With `across_documents`, each page of a subset with the pages 1/`length`, 2/`length`,
    ... of the subset's pages after it (in file order, round the end), the runs in which no two pages are of one
    document: columns of other books, their type, paper and scale unlike (a page scanned darker beside a lighter)."""
    runs = []
    for subset in dict.fromkeys(page["subset"] for page in pages):
        group = [page for page in pages if page["subset"] == subset]
        if across_documents:
            step = max(1, len(group) // length)
            for start in range(len(group)):
                run = tuple(group[(start + k * step) % len(group)] for k in range(length))
                if len({page["document"] for page in run}) == length:
                    runs.append(run)
            continue
        documents: dict[str, list[dict]] = {}
        for page in group:
            documents.setdefault(page["document"], []).append(page)
        alone = [pages_of[0] for pages_of in documents.values() if len(pages_of) == 1]
        for pages_of in [pages_of for pages_of in documents.values() if len(pages_of) > 1] + [alone]:
            runs += list(zip(*(pages_of[start:] for start in range(length))))
    return runs


def text_block(page: dict, image, margins: tuple[float, float, float, float]):
    """The part of `image` holding `page`'s lines, `margins` (left, top, right, bottom, in pixels) of the page around
    them where the page has it, and the block's left and top on the page."""
    boxes = np.asarray([line["box"] for line in page["lines"]], dtype=np.float64)
    left, top = np.maximum(boxes[:, :2].min(0) - margins[:2], 0).round().astype(int)
    right = int(round(min(boxes[:, 2].max() + margins[2], image.width)))
    bottom = int(round(min(boxes[:, 3].max() + margins[3], image.height)))
    return image.crop((left, top, right, bottom)), int(left), int(top)


def line_height(page: dict) -> float:
    return float(np.median([line["box"][3] - line["box"][1] for line in page["lines"]]))


def paper_of(block) -> tuple[int, int, int]:
    """The paper's colour of an RGB image of a text block: the median of its outermost pixels."""
    pixels = np.asarray(block)
    return tuple(int(value) for value in np.median(np.concatenate([pixels[[0, -1]].reshape(-1, 3),
                                                                   pixels[:, [0, -1]].reshape(-1, 3)]), axis=0))


COLUMN_RULE_WIDTH_HEIGHTS = 1 / 20
"""`--column_rule`: the rule's thickness in line heights (a 0.5-point rule beside 10-point type)."""


def two_column_page(left: dict, right: dict, gutter: float, folder: Path, column_rule: bool = False) -> dict:
    """A page of two columns, `left`'s text block and `right`'s, `gutter` of `left`'s line heights between them (with
    `column_rule`, a rule down its middle), written to `folder` as PNG: a page record as `load_pages` gives (its "path"
    the image), lines and rows of both in turn. `left` may be such a page itself: a third column beside two."""
    from PIL import Image, ImageDraw

    height = line_height(left)
    scale = height / line_height(right)
    with Image.open(left.get("path", PAGES_DIR / left["file_name"])) as image:
        left_block, left_x, left_y = text_block(left, image.convert("RGB"), (height, height, gutter * height / 2, height))
    with Image.open(PAGES_DIR / right["file_name"]) as image:
        image = image.convert("RGB")
        image = image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.BILINEAR)
        scaled = {**right, "lines": [{**line, "box": [coordinate * scale for coordinate in line["box"]]}
                                     for line in right["lines"]]}
        right_block, right_x, right_y = text_block(scaled, image, (gutter * height / 2, height, height, height))
    # One paper, as a page printed in two columns has: the right block's paper (the median of its outermost pixels)
    # brought to the left block's colour channel by channel, so that no step of colour runs down the gutter.
    paper = paper_of(left_block)
    gain = np.asarray(paper, dtype=np.float64) / np.maximum(paper_of(right_block), 1)
    right_block = Image.fromarray(np.clip(np.asarray(right_block) * gain, 0, 255).round().astype(np.uint8))
    canvas = Image.new("RGB", (left_block.width + right_block.width, max(left_block.height, right_block.height)), paper)
    canvas.paste(left_block, (0, 0))
    canvas.paste(right_block, (left_block.width, 0))
    first_row = 1 + max(line["row"] for line in left["lines"])

    def moved(line: dict, dx: float, dy: float, rows: int) -> dict:
        """`line` on the new page: its box moved by (dx, dy), its row after `rows` rows; its polygon is not carried
        (the benchmark scores boxes)."""
        x0, y0, x1, y1 = line["box"]
        return {**{key: value for key, value in line.items() if key != "polygon"},
                "box": [x0 + dx, y0 + dy, x1 + dx, y1 + dy], "row": rows + line["row"]}

    lines = ([moved(line, -left_x, -left_y, 0) for line in left["lines"]]
             + [moved(line, left_block.width - right_x, -right_y, first_row) for line in scaled["lines"]])
    if column_rule:  # in the ink of the left block (its darkest pixels' median), from the columns' top to their foot
        pixels = np.asarray(left_block).reshape(-1, 3)
        darkest = pixels[pixels.sum(1) <= np.percentile(pixels.sum(1), 1)]
        ImageDraw.Draw(canvas).line([(left_block.width, min(line["box"][1] for line in lines)),
                                     (left_block.width, max(line["box"][3] for line in lines))],
                                    fill=tuple(int(value) for value in np.median(darkest, axis=0)),
                                    width=max(1, round(COLUMN_RULE_WIDTH_HEIGHTS * height)))
    name = f"{Path(left['file_name']).stem}+{Path(right['file_name']).stem}"
    canvas.save(folder / f"{name}.png")
    return {**left, "file_name": name, "path": str(folder / f"{name}.png"), "width": canvas.width,
            "height": canvas.height, "lines": lines}


def scaled_page(path: Path, scale: float, folder: Path) -> Path:
    """The page at `path` resized by `scale` (bilinear), written to `folder` as PNG: the file both engines read."""
    from PIL import Image

    with Image.open(path) as image:
        resized = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                               Image.Resampling.BILINEAR)
    target = folder / f"{path.stem}.png"
    resized.save(target)
    return target


SHADOW_EDGE = (0.4, 0.6)
"""`--shadow`: the shadow's edge runs from this share of the page's width at its top to this share at its foot."""
SHADOW_SOFTNESS = 0.05
"""`--shadow`: the light falls over this share of the page's width at the shadow's edge."""


def shadowed_page(path: Path, light: float, folder: Path) -> Path:
    """The page at `path` in a shadow, as a hand or a phone casts one on a page photographed: the light falls to
    `light` right of a slanting edge (`SHADOW_EDGE`, soft over `SHADOW_SOFTNESS` of the width), written to `folder`
    as PNG."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.float64)
    height, width = pixels.shape[:2]
    edge = width * np.linspace(*SHADOW_EDGE, height)[:, None]
    shade = np.clip((np.arange(width)[None, :] - edge) / (SHADOW_SOFTNESS * width) + 0.5, 0, 1)
    target = folder / f"{path.stem}-shadowed.png"
    Image.fromarray((pixels * (1 - (1 - light) * shade)[..., None]).round().astype(np.uint8)).save(target)
    return target


def turned_page(path: Path, rotation: int, folder: Path) -> tuple[Path, tuple[int, int]]:
    """The page at `path` turned `rotation` degrees counter-clockwise, written to `folder` as PNG, and the size of
    the page before it was turned."""
    from PIL import Image

    from textrec.processing.page_reading import turned

    with Image.open(path) as image:
        size = image.size
        target = folder / f"{path.stem}-turned.png"
        turned(image, rotation).save(target)
    return target, size


def turned_box(box: list[float], rotation: int, width: int, height: int) -> list[float]:
    """A box of a page of `width` x `height` pixels on the page turned `rotation` degrees counter-clockwise."""
    from textrec.processing.page_reading import point_after_turn

    (a, b), (c, d) = (point_after_turn(x, y, rotation, width, height) for x, y in (box[:2], box[2:]))
    return [min(a, c), min(b, d), max(a, c), max(b, d)]


def summarise(rows: list[dict], args) -> str:
    command = "python scripts/lab/" + " ".join(Path(sys.argv[0]).name.split()) + " " + " ".join(sys.argv[1:])
    scanned = "" if args.scale == 1.0 else f", resized by {args.scale:g} (as if scanned at {args.scale:g}x the resolution)"
    scanned += f", in a shadow: the light falling to {args.shadow:g} over its right part" if args.shadow is not None else ""
    scanned += f", turned {args.rotate} degrees counter-clockwise" if args.rotate else ""
    if args.two_columns is not None:
        beside = "the next's as two" if args.columns == 2 else f"the next {args.columns - 1} pages' as {args.columns}"
        if args.across_documents:
            others = "a page" if args.columns == 2 else f"{args.columns - 1} pages"
            beside = f"that of {others} of other documents as {args.columns}"
        scanned += (f", each page's text block beside {beside} columns, {args.two_columns:g} line heights apart"
                    + (", a rule between them" if args.column_rule else ""))
    lines = [f"Real pages ({args.split}{scanned}), `{command}`", "",
             "| pages | printed lines | detected | precision | recall | textrec page CER | s/page | Tesseract page CER | s/page |",
             "|---|---|---|---|---|---|---|---|---|"]
    groups = {subset: [row for row in rows if row["subset"] == subset] for subset in dict.fromkeys(r["subset"] for r in rows)}
    groups["all"] = rows
    for name, group in groups.items():
        if not group:
            continue
        total = {key: sum(row.get(key, 0) for row in group) for key in
                 ("lines", "detected", "matched", "chars", "errors", "seconds", "tesseract_errors", "tesseract_seconds")}
        tesseract = (f"{100 * total['tesseract_errors'] / total['chars']:.2f}% | {total['tesseract_seconds'] / len(group):.2f}"
                     if "tesseract_errors" in group[0] else "- | -")
        lines.append(f"| {name} ({len(group)}) | {total['lines']} | {total['detected']} | "
                     f"{100 * total['matched'] / max(total['detected'], 1):.1f}% | {100 * total['matched'] / max(total['lines'], 1):.1f}% | "
                     f"{100 * total['errors'] / total['chars']:.2f}% | {total['seconds'] / len(group):.2f} | {tesseract} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
