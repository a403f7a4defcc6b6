"""Does coverage help? CoMER without an Attention Refinement Module (`coverage=none`, the BTTR baseline)
against fusion coverage, trained on the synthetic formulas under the same CPU-time budget, scored by
ExpRate on the test split overall and by formula length.

    python -m textrec.scripts.benchmarks.comer_coverage_study --output_dir runs/comer-study --cpu_minutes 2.5

Both models are trained by textrec-train with the paper recipe (SGD, learning rate reduced on a plateau
of the validation ExpRate), the same data, seed and preset, as two processes of one CPU thread each
running side by side; each stops when its own process has used `--cpu_minutes` of CPU time, so the
model whose steps are dearer (fusion: the ARM runs at every step) makes fewer of them. The final models
then decode the test split greedily (never used for selection), and the script prints a Markdown table
of ExpRate (and the rate within one token error) and of the token error rate (token edits per reference
token, which still moves when few formulas are exactly right), overall and by reference length, with the
command.
"""

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import torch
from textrec.modeling import CoMERForFormulaRecognition
from textrec.processing import TextRecognitionProcessor
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.metrics.exprate import token_edit_distance

MODES = ("none", "fusion")
LENGTH_BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 48))
"""Reference lengths in LaTeX tokens; the synthetic formulas have at most 48."""


def train_command(mode: str, args: argparse.Namespace) -> list[str]:
    return [
        sys.executable, "-m", "textrec.scripts.train",
        "--model", "comer",
        "--preset", args.preset,
        "--config_overrides", json.dumps({"coverage": mode}),
        "--dataset", "synthetic-math",
        "--max_train_samples", str(args.train_samples),
        "--max_eval_samples", str(args.validation_samples),
        "--max_target_length", "50",
        "--per_device_train_batch_size", str(args.batch_size),
        "--per_device_eval_batch_size", "32",
        "--max_train_cpu_minutes", str(args.cpu_minutes),
        "--max_steps", "1000000",
        "--eval_steps", "1000000",
        "--save_steps", "1000000",
        "--logging_steps", "50",
        "--seed", str(args.seed),
        "--output_dir", str(Path(args.output_dir) / mode),
    ]


def train_both(args: argparse.Namespace) -> None:
    """The two textrec-train runs, side by side, one thread each."""
    # Render (and cache) the data once, before the two processes would both do it.
    for split, count in (("train", args.train_samples), ("validation", args.validation_samples)):
        load_text_recognition_dataset("synthetic-math", split=split, num_samples=count, seed=args.seed)
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    with contextlib.ExitStack() as stack:
        processes = {}
        for mode in MODES:
            log = stack.enter_context(open(Path(args.output_dir) / f"train-{mode}.log", "w"))
            command = train_command(mode, args)
            processes[mode] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
        for mode, process in processes.items():
            if process.wait():
                raise RuntimeError(f"Training coverage={mode} failed; see {Path(args.output_dir) / f'train-{mode}.log'}")


@torch.no_grad()
def token_errors(folder: Path, dataset, batch_size: int = 32) -> list[int]:
    """Token edit distance of the greedy prediction to the reference, per test formula."""
    model = CoMERForFormulaRecognition.from_pretrained(folder).eval()
    processor = TextRecognitionProcessor.from_pretrained(folder)
    errors = []
    for start in range(0, len(dataset), batch_size):
        rows = dataset[start : start + batch_size]
        inputs = processor(images=rows["image"])
        predictions = processor.batch_decode(model.generate(**inputs, max_new_tokens=50, num_beams=1))
        errors += [token_edit_distance(p.split(), r.split()) for p, r in zip(predictions, rows["text"])]
    return errors


def rate(hits: int, total: int) -> str:
    """A percentage with its 95% Wilson interval."""
    if total == 0:
        return "-"
    p, z = hits / total, 1.96
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return f"{100 * p:.1f} ({100 * max(0.0, centre - half):.1f}-{100 * min(1.0, centre + half):.1f})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output_dir", default="runs/comer-study")
    parser.add_argument("--cpu_minutes", type=float, default=2.5, help="Training CPU time of each model.")
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--train_samples", type=int, default=4000)
    parser.add_argument("--validation_samples", type=int, default=200)
    parser.add_argument("--test_samples", type=int, default=400)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip_training", action="store_true", help="Score the models already in --output_dir.")
    args = parser.parse_args(argv)
    Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    if not args.skip_training:
        train_both(args)
    torch.set_num_threads(1)

    test = load_text_recognition_dataset("synthetic-math", split="test", num_samples=args.test_samples, seed=args.seed)
    lengths = [len(text.split()) for text in test["text"]]
    results = {}
    for mode in MODES:
        folder = Path(args.output_dir) / mode
        state = json.loads((folder / "trainer_state.json").read_text())
        validation = json.loads((folder / "all_results.json").read_text())
        results[mode] = dict(
            steps=state["global_step"], validation_exprate=validation["eval_exprate"], errors=token_errors(folder, test)
        )
    (Path(args.output_dir) / "study.json").write_text(json.dumps({"lengths": lengths, **results}, indent=1))

    print(f"CoMER {args.preset} preset on synthetic-math, {args.cpu_minutes} CPU-minutes of training each (1 thread), "
          f"{args.train_samples} training formulas, greedy decoding of {len(test)} test formulas; "
          "ExpRate % (95% interval), token error rate %")
    print()
    header = ["coverage", "steps", "validation ExpRate", "test ExpRate", "within 1 error", "token error rate"]
    header += [
        f"{low}-{high} tokens (n={sum(low <= n <= high for n in lengths)}): ExpRate / token error rate"
        for low, high in LENGTH_BUCKETS
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for mode in MODES:
        errors = results[mode]["errors"]
        cells = [mode, str(results[mode]["steps"]), f"{100 * results[mode]['validation_exprate']:.1f}"]
        cells += [rate(sum(e == 0 for e in errors), len(errors)), rate(sum(e <= 1 for e in errors), len(errors))]
        cells.append(f"{100 * sum(errors) / sum(lengths):.1f}")
        for low, high in LENGTH_BUCKETS:
            bucket = [(e, n) for e, n in zip(errors, lengths) if low <= n <= high]
            exact = rate(sum(e == 0 for e, _ in bucket), len(bucket))
            cells.append(f"{exact} / {100 * sum(e for e, _ in bucket) / max(1, sum(n for _, n in bucket)):.1f}")
        print("| " + " | ".join(cells) + " |")
    print()
    print("Command: python -m textrec.scripts.benchmarks.comer_coverage_study " + " ".join(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
