"""The released line models side by side and beside Tesseract, on the same held-out lines: one table.

    python scripts/lab/benchmark_line_models.py --output_markdown line_models.md --curves line_models.png

Each model was made by its release command (`RELEASES` in `scripts/lab/releases.py`): the same data, recipe,
steps and size class, only `--model` differs (CRNN, the CTC-only model docTR and PaddleOCR users pick, is the
peer the attention models are measured against). Each is read with each decoding it has, on the release's
test sets (200 + 200 clean lines of 15-80 characters, print and handwriting-style, never seen in training);
Tesseract reads the same images. Lines/s: images from the dataset to text (preprocessing and model), batch
32, on `--threads` threads; Tesseract one process over a list file, one thread. The curves are the
validation CER logged during training (`runs/<name>/trainer_state.json`), where the run folders are present.
"""

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path

import torch

from textrec.model_cards import released_model_names, released_model_path
from releases import LINE_TEST_SETS, RELEASES, evaluate_release
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.inference import available_decodings, load_recognizer
from textrec.processing.tesseract import read_with_tesseract

logger = logging.getLogger("textrec.benchmark_line_models")

TESSERACT = "Tesseract"


def line_releases() -> list[str]:
    """The released models read on the line test sets, in `RELEASES` order."""
    installed = set(released_model_names())
    return [name for name, release in RELEASES.items() if release.test_sets == LINE_TEST_SETS and name in installed]


def training_line(name: str) -> str:
    """The "Training:" line of a released model's card (steps, batches, learning rate, time)."""
    for line in (released_model_path(name) / "README.md").read_text().splitlines():
        if line.startswith("- Training: "):
            return line.removeprefix("- Training: ")
    return ""


def benchmark_model(name: str) -> list[dict]:
    """One row per decoding of the released model `name`: its scores on each test set and its speed."""
    model, processor = load_recognizer(name)
    release = RELEASES[name]
    rows = []
    for decoding in available_decodings(model):
        rows.append(
            dict(
                system=name,
                decoding=decoding,
                parameters=model.num_parameters(),
                training=training_line(name),
                scores=evaluate_release(model, processor, release, decoding),
            )
        )
    return rows


def benchmark_tesseract(test_samples: int) -> dict:
    scores = {}
    for test_set, dataset_name in LINE_TEST_SETS.items():
        dataset = load_text_recognition_dataset(dataset_name, split="test", num_samples=test_samples)
        scores[test_set] = read_with_tesseract(list(dataset["image"]), list(dataset["text"]))
    version = scores[next(iter(scores))].pop("version")
    for test_set_scores in scores.values():
        test_set_scores.pop("version", None)
    return dict(system=version, decoding="--psm 7, 1 thread", parameters=None, training="", scores=scores)


def render_table(rows: list[dict], command: str) -> str:
    test_sets = list(LINE_TEST_SETS)
    header = ["system", "reads with", "parameters"]
    for test_set in test_sets:
        header += [f"{test_set} CER", f"{test_set} WER"]
    header.append(f"lines/s ({test_sets[0]})")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [f"`{row['system']}`" if row["parameters"] else row["system"], row["decoding"],
                 f"{row['parameters'] / 1e6:.2f} M" if row["parameters"] else ""]
        for test_set in test_sets:
            cells += [f"{row['scores'][test_set]['cer']:.2%}", f"{row['scores'][test_set]['wer']:.2%}"]
        cells.append(f"{row['scores'][test_sets[0]]['lines_per_second']:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines) + "\n"


def draw_curves(names: list[str], runs_dir: Path, path: Path) -> list[str]:
    """Validation CER against training step of each model whose run folder holds a `trainer_state.json`;
    returns the names drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    drawn = []
    for name in names:
        state = runs_dir / name / "trainer_state.json"
        if not state.is_file():
            continue
        history = [entry for entry in json.loads(state.read_text())["log_history"] if "eval_cer" in entry]
        axes.plot([e["step"] for e in history], [100 * e["eval_cer"] for e in history], marker="o", label=name)
        drawn.append(name)
    axes.set(xlabel="training step", ylabel="validation CER (%), generate()", yscale="log",
             title="Validation CER while training (200 mixed lines)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return drawn


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", help="Released model names (default: every released line model).")
    parser.add_argument("--threads", type=int, default=2, help="torch threads for reading (default 2).")
    parser.add_argument("--no_tesseract", action="store_true", help="Leave Tesseract out.")
    parser.add_argument("--output_markdown", type=Path, help="Write the table to this file.")
    parser.add_argument("--output_json", type=Path, help="Write every score to this file.")
    parser.add_argument("--curves", type=Path, help="Draw the training curves into this PNG.")
    parser.add_argument("--runs_dir", type=Path, default=Path("runs"), help="Where the release runs are (curves).")
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(args.threads)
    names = args.models or line_releases()
    unknown = [name for name in names if name not in line_releases()]
    if unknown:
        raise ValueError(f"Not released line models: {', '.join(unknown)}; released: {', '.join(line_releases())}.")
    rows = [row for name in names for row in benchmark_model(name)]
    if not args.no_tesseract:
        rows.append(benchmark_tesseract(RELEASES[names[0]].test_samples))
    command = shlex.join(["python", "scripts/lab/benchmark_line_models.py",
                          *(sys.argv[1:] if argv is None else argv)])
    table = render_table(rows, command)
    print(table)
    if args.output_markdown:
        args.output_markdown.write_text(table)
    if args.output_json:
        args.output_json.write_text(json.dumps(rows, indent=2))
    if args.curves:
        drawn = draw_curves(names, args.runs_dir, args.curves)
        print(f"curves of {', '.join(drawn) or 'no run'} in {args.curves}")
    return rows


if __name__ == "__main__":
    run()
