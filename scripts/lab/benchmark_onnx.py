"""A CTC line model read with torch and with its ONNX export, fp32 and int8, beside Tesseract, on real print.

    python scripts/lab/benchmark_onnx.py --model crnn-lines --limit 400 --output_markdown scripts/lab/results/onnx_speed.md

Reads the real print development sets of `real_sets.py` (SROIE receipt lines, 19th-century book print) with:
torch fp32 (`recognize()`, as `generate()` reads: the CTC head, with its character n-gram where the model has one),
torch with int8 dynamic quantisation of its Linear and LSTM layers (`torch.ao.quantization.quantize_dynamic`), the
ONNX export (`textrec-export --format onnx`, the n-gram and the search beside it) in onnxruntime, fp32 and int8, and
Tesseract 5 (`--psm 7`). Everything runs on one thread (torch.set_num_threads(1), onnxruntime
intra_op_num_threads=1, OMP_THREAD_LIMIT=1 for Tesseract), from the image files to text, in batches sorted by
width; loading the model is not timed. CER per set under its protocol; lines/s per core per set. The ONNX int8
reading is also split into image preparation (loading, polarity, resizing, padding) and the model (onnxruntime's
run), to show where its time goes.
"""

import argparse
import logging
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

from textrec.processing import textrec_onnx
from textrec.processing.inference import load_recognizer, recognize
from textrec.processing.onnx_export import export_onnx

from benchmark_real_data import read_with_tesseract, score_system
from real_sets import REAL_DATA_DIR, load_real_set

logger = logging.getLogger("textrec.benchmark_onnx")

PRINT_SETS = ("receipts", "historic-print")
BATCH_SIZE = 32
GOAL_SPEEDUP = 3.0
"""The ONNX int8 reading's lines/s per core against Tesseract's on the receipts that the goal asks for."""
GOAL_CER_POINTS = 0.1
"""The most, in CER percentage points, by which ONNX int8 may read worse than torch fp32 on each set."""


def torch_reader(model, processor):
    def read(paths: list[Path], set_name: str) -> list[str]:
        return recognize(model, processor, [str(path) for path in paths], batch_size=BATCH_SIZE, decoding="ctc",
                         progress=False).texts

    return read


def onnx_reader(folder: Path, int8: bool):
    reader = textrec_onnx.OnnxLineReader(folder, int8=int8, num_threads=1)
    return lambda paths, set_name: reader.read([str(path) for path in paths], batch_size=BATCH_SIZE)


def time_split(folder: Path, paths: list[Path], int8: bool) -> dict[str, float]:
    """Seconds per line of the ONNX reading's image preparation (loading, `LinePreprocessor`) and of its model
    (onnxruntime's run with best path), in batches sorted by width as `OnnxLineReader.read` forms them."""
    reader = textrec_onnx.OnnxLineReader(folder, int8=int8, num_threads=1)
    start = time.perf_counter()
    images = [textrec_onnx.load_image(str(path)) for path in paths]
    order = sorted(range(len(images)), key=lambda index: images[index].width / max(images[index].height, 1))
    batches = [reader.preprocess([images[index] for index in order[begin : begin + BATCH_SIZE]])
               for begin in range(0, len(order), BATCH_SIZE)]
    preparing = time.perf_counter() - start
    start = time.perf_counter()
    for batch in batches:
        reader.session.run(reader.config["outputs"], batch)
    return {"preparing": preparing / len(paths), "model": (time.perf_counter() - start) / len(paths)}


def render_table(rows: list[dict], sets: dict, command: str, notes: list[str]) -> str:
    header = ["system", *(f"{name} CER" for name in sets), *(f"lines/s per core ({name})" for name in sets)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [row["system"], *(f"{row['scores'][name]['cer']:.2%}" for name in sets),
                 *(f"{row['scores'][name]['lines_per_second']:.0f}" for name in sets)]
        lines.append("| " + " | ".join(cells) + " |")
    counts = ", ".join(f"{name} {len(paths)}" for name, (paths, _) in sets.items())
    lines += ["", f"Real print development images: {counts}.", *notes, "", f"Command: `{command}`"]
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="crnn-lines", help="A released line model with a CTC head, or a folder.")
    parser.add_argument("--limit", type=int, help="Read only the first N images of each set (a quick look).")
    parser.add_argument("--data_dir", type=Path, default=REAL_DATA_DIR, help="The shared real-data folder.")
    parser.add_argument("--output_markdown", type=Path, help="Write the table to this file.")
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.output_markdown is not None and not args.output_markdown.parent.is_dir():
        raise SystemExit(f"the folder of {args.output_markdown} does not exist")
    began, load_before = time.perf_counter(), os.getloadavg()[0]
    torch.set_num_threads(1)
    os.environ["OMP_THREAD_LIMIT"] = "1"
    sets = {name: load_real_set(name, "development", args.data_dir) for name in PRINT_SETS}
    if args.limit:
        sets = {name: (paths[: args.limit], texts[: args.limit]) for name, (paths, texts) in sets.items()}
    scratch = tempfile.TemporaryDirectory(prefix="textrec-onnx-benchmark-")
    start = time.perf_counter()
    folder = export_onnx(args.model, Path(scratch.name) / "onnx")
    export_seconds = time.perf_counter() - start
    model, processor = load_recognizer(args.model)
    quantized = torch.ao.quantization.quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=torch.qint8)
    readers = [
        (f"`{args.model}` torch fp32", torch_reader(model, processor)),
        (f"`{args.model}` torch int8 (dynamic: Linear, LSTM)", torch_reader(quantized, processor)),
        (f"`{args.model}` ONNX fp32", onnx_reader(folder, int8=False)),
        (f"`{args.model}` ONNX int8 (static: Conv; dynamic: LSTM, MatMul)", onnx_reader(folder, int8=True)),
        read_with_tesseract(),
    ]
    rows = []
    for system, read in readers:
        logger.info("reading with %s", system)
        rows.append({"system": system, "scores": score_system(read, sets, timed_sets=tuple(sets))})
    receipts = sets["receipts"][0]
    split = {int8: time_split(folder, receipts, int8) for int8 in (False, True)}
    scratch.cleanup()
    torch_fp32, onnx_int8, tesseract = rows[0]["scores"], rows[3]["scores"], rows[4]["scores"]
    speedup = onnx_int8["receipts"]["lines_per_second"] / tesseract["receipts"]["lines_per_second"]
    cer_points = {name: 100 * (onnx_int8[name]["cer"] - torch_fp32[name]["cer"]) for name in sets}
    met = speedup >= GOAL_SPEEDUP and all(points <= GOAL_CER_POINTS for points in cer_points.values())
    notes = [
        "One thread each, from the image files to text, batches of 32 sorted by width; loading the model is not timed. "
        f"Other processes shared the machine's {os.cpu_count()} cores (load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after): the lines/s of one run move by up to 2x, their ratios less.",
        "Where the ONNX reading's time goes on the receipts (ms per line): "
        + "; ".join(f"{'int8' if int8 else 'fp32'}: preparing the image {1000 * times['preparing']:.2f}, "
                    f"model {1000 * times['model']:.2f}" for int8, times in split.items()) + ".",
        f"Goal (ONNX int8 >= {GOAL_SPEEDUP:g}x Tesseract's lines/s on receipts, CER within {GOAL_CER_POINTS:g} points "
        f"of torch fp32): {'met' if met else 'not met'}; {speedup:.1f}x, CER "
        + ", ".join(f"{points:+.2f} points ({name})" for name, points in cer_points.items()) + ".",
        f"Export (`textrec-export --model {args.model} --format onnx`, fp32 and int8): {export_seconds:.0f} s; "
        f"the whole benchmark: {(time.perf_counter() - began) / 60:.1f} min.",
    ]
    command = shlex.join(["python", "scripts/lab/benchmark_onnx.py", *(sys.argv[1:] if argv is None else argv)])
    table = render_table(rows, sets, command, notes)
    print(table)
    if args.output_markdown:
        args.output_markdown.write_text(table)
    return rows


if __name__ == "__main__":
    run()
