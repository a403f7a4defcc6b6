"""Can it learn my handwriting? A released line model fine-tuned on a few of George Washington's lines.

    python scripts/lab/washington_finetuning.py --model crnn-handwriting --output_dir runs/washington-finetuning \
        --output_markdown scripts/lab/results/washington_finetuning.md --output_plot scripts/lab/reports/washington_finetuning.png

The Washington letters of the real handwriting test set (`../shared/data/real/handwriting/test`, subset `gw`,
line level) are split by page: the first 10 pages (270-279) are the training pages, the last 5 (300-304) the
test pages. For each number of training lines (0, 25, 50, 100, 200, all; a random subset, the same seed for
each size, smaller subsets inside larger ones) the model is fine-tuned with `textrec-train` on captured copies
of those lines (`captured:<folder>:copies=8`: slant, elastic strokes, blur, paper, ...) for the same number of
steps, and reads the test pages. The table and the curve give the test CER, the training time and the command.

The split folders are written under `--output_dir` as links to the real set's images and a `metadata.jsonl`
each (the research-use data is not copied).
"""

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from benchmark_real_data import read_with_textrec
from real_sets import REAL_DATA_DIR
from textrec.processing.metrics import evaluate_texts

TRAIN_PAGES = tuple(f"gw-page-{page}" for page in range(270, 280))
TEST_PAGES = tuple(f"gw-page-{page}" for page in range(300, 305))
LINE_COUNTS = (0, 25, 50, 100, 200, None)
"""Training lines of each fine-tuning run; None: all the training pages' lines."""
COPIES = 8
"""Captured copies of each training line."""


def washington_lines(pages: tuple[str, ...], data_dir: Path = REAL_DATA_DIR) -> list[dict]:
    """The line-level rows of the Washington letters on `pages`, in page and line order."""
    folder = data_dir / "handwriting" / "test"
    rows = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines() if line.strip()]
    rows = [row for row in rows if row["subset"] == "gw" and row["level"] == "line" and row["form"] in pages]
    for row in rows:
        row["path"] = folder / row["file_name"]
    return sorted(rows, key=lambda row: (pages.index(row["form"]), row["gw_id"]))


def write_split_folder(rows: list[dict], folder: Path) -> Path:
    """An image folder of `rows`: a link to each image and a `metadata.jsonl`."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "metadata.jsonl", "w") as metadata:
        for row in rows:
            link = folder / row["file_name"]
            if not link.exists():
                link.symlink_to(row["path"].resolve())
            metadata.write(json.dumps({"file_name": row["file_name"], "text": row["text"]}) + "\n")
    return folder


def training_arguments(model: str, dataset: str, test_folder: Path, output_dir: Path, max_steps: int) -> list[str]:
    """`textrec-train` arguments of one fine-tuning run: a low constant learning rate after a short warm-up,
    batches of 16 (lines as wide as the model reads them), no evaluation during training; the final evaluation (the
    card's) reads the test pages."""
    return [
        f"--model_name_or_path={model}", f"--dataset={dataset}", f"--max_steps={max_steps}",
        f"--eval_dataset={test_folder}", "--eval_split=train", "--max_eval_samples=1000",
        "--learning_rate=1e-4", "--warmup_steps=20", "--lr_scheduler_type=constant_with_warmup",
        "--per_device_train_batch_size=16", "--max_target_length=96",
        "--eval_strategy=no", f"--save_steps={max_steps}", "--logging_steps=25", "--seed=0",
        f"--output_dir={output_dir}",
    ]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="crnn-handwriting", help="Released model name or folder to fine-tune.")
    parser.add_argument("--output_dir", type=Path, default=Path("runs/washington-finetuning"))
    parser.add_argument("--max_steps", type=int, default=300, help="Fine-tuning steps of every run.")
    parser.add_argument("--line_counts", type=lambda value: None if value == "all" else int(value), nargs="+",
                        default=list(LINE_COUNTS), help="Training lines of each run ('all' for every line).")
    parser.add_argument("--output_markdown", type=Path)
    parser.add_argument("--output_plot", type=Path)
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    from textrec.scripts import train as train_command

    train_rows, test_rows = washington_lines(TRAIN_PAGES), washington_lines(TEST_PAGES)
    if not train_rows or not test_rows:
        raise SystemExit(f"No Washington lines under {REAL_DATA_DIR}; this study needs the real handwriting set.")
    order = np.random.default_rng(0).permutation(len(train_rows))
    test_paths, references = [row["path"] for row in test_rows], [row["text"] for row in test_rows]
    test_folder = write_split_folder(test_rows, args.output_dir / "test-pages")
    results = []
    for count in args.line_counts:
        count = len(train_rows) if count is None else min(count, len(train_rows))
        model, seconds, command = args.model, 0.0, ""
        if count:
            chosen = [train_rows[index] for index in sorted(order[:count])]
            folder = write_split_folder(chosen, args.output_dir / f"train-{count}-lines")
            run_dir = args.output_dir / f"model-{count}-lines"
            arguments = training_arguments(
                args.model, f"captured:{folder}:copies={COPIES}", test_folder, run_dir, args.max_steps)
            start = time.perf_counter()
            train_command.run(arguments + ["--overwrite_output_dir"])
            seconds, model = time.perf_counter() - start, str(run_dir)
            command = shlex.join(["textrec-train", *arguments])
        _, read = read_with_textrec(model)
        predictions = read(test_paths, "washington")
        scores = evaluate_texts(predictions, references)
        results.append({"lines": count, "cer": scores["cer"], "wer": scores["wer"], "seconds": seconds,
                        "command": command, "examples": list(zip(references[:3], predictions[:3]))})
        print(f"{count} lines: CER {scores['cer']:.2%}, WER {scores['wer']:.2%}, {seconds / 60:.1f} min", flush=True)
    (args.output_dir / "results.json").write_text(json.dumps(results, indent=2))
    command = shlex.join(["python", "scripts/lab/washington_finetuning.py", *(argv if argv is not None else sys.argv[1:])])
    if args.output_markdown:
        args.output_markdown.write_text(render_table(results, args, len(train_rows), len(test_rows), command))
    if args.output_plot:
        draw_curve(results, args.model, args.output_plot)
    return results


def render_table(results: list[dict], args, train_lines: int, test_lines: int, command: str) -> str:
    lines = [
        f"`{args.model}` fine-tuned on George Washington's lines of pages 270-279 ({train_lines} lines), read on "
        f"pages 300-304 ({test_lines} lines, exact CER and WER); {args.max_steps} steps of 16 captured copies "
        f"({COPIES} per line), one run each, on a 2-core CPU.",
        "",
        "| training lines | test CER | test WER | fine-tuning time |",
        "|---|---|---|---|",
    ]
    for row in results:
        time_cell = f"{row['seconds'] / 60:.1f} min" if row["lines"] else "(zero-shot)"
        lines.append(f"| {row['lines']} | {row['cer']:.2%} | {row['wer']:.2%} | {time_cell} |")
    last = results[-1]
    lines += ["", f"Command: `{command}`", ""]
    if last["command"]:
        lines += [f"Fine-tuning command of the last run: `{last['command']}`"]
    return "\n".join(lines) + "\n"


def draw_curve(results: list[dict], model: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(5.5, 3.5), dpi=120)
    counts = [row["lines"] for row in results]
    axis.plot(range(len(counts)), [100 * row["cer"] for row in results], marker="o", label="CER")
    axis.plot(range(len(counts)), [100 * row["wer"] for row in results], marker="s", label="WER")
    axis.set_xticks(range(len(counts)), [str(count) for count in counts])
    axis.set_xlabel("Washington training lines (pages 270-279)")
    axis.set_ylabel("error on pages 300-304 (%)")
    axis.set_title(f"Fine-tuning {model} on a few lines")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    run()
