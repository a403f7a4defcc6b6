"""The multi-digit study of the sharp-attention paper: soft, hard and sharp attention on strings of
MNIST digits of two lengths, normal and rotated, each model trained under the same CPU budget.

    python -m textrec.scripts.benchmarks.study_sharp_attention --mnist_dir ../shared/data/mnist \
        --output_dir runs/study-sharp --cpu_minutes 60 --preset base

For every (length, digits, attention) it trains a `sharp-attention` model with textrec-train (the
architecture's ADADELTA recipe, batch 32, one sampled column per image and step, lambda_r 1.0) on
`--num_train` sequences drawn from MNIST's training digits, stops when the process has used
`--cpu_minutes` of CPU time, then reads `--num_test` sequences drawn from MNIST's test digits
greedily and reports word accuracy (the scene-text protocol) and the mean attention entropy per image.
Sharp models also get `figure.png` (see draw_sharp_attention). Finished runs are skipped when the
study is started again; the table is printed and written to `<output_dir>/results.md`.
"""

import argparse
import json
import logging
import shlex
import sys
import time
from pathlib import Path

import torch

from textrec.processing.attention_readout import read_with_attention
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.inference import load_recognizer
from textrec.processing.metrics import load_metric
from textrec.processing.training import parse_arguments, train_from_arguments

from .draw_sharp_attention import draw_readout, stack

logger = logging.getLogger("textrec.study")

FIGURE_IMAGES = 4


def dataset_name(length: int, rotated: bool, mnist_dir: str) -> str:
    return f"mnist-digits:length={length},rotated={str(rotated).lower()},mnist_dir={mnist_dir}"


def train_arguments(args, run_dir: Path, length: int, rotated: bool, attention: str) -> list[str]:
    overrides = {
        "attention_type": attention,
        "context_mode": args.context_mode,
        "reinforce_weight": args.reinforce_weight,
    }
    arguments = dict(
        model="sharp-attention",
        preset=args.preset,
        config_overrides=json.dumps(overrides),
        dataset=dataset_name(length, rotated, args.mnist_dir),
        eval_split="test",
        max_eval_samples=64,
        charset="0123456789",
        max_target_length=length + 1,
        max_train_samples=args.num_train,
        max_steps=10**7,
        max_train_cpu_minutes=args.cpu_minutes,
        per_device_train_batch_size=args.batch_size,
        eval_strategy="no",
        save_strategy="no",
        logging_steps=50,
        disable_tqdm=True,
        output_dir=str(run_dir),
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=True,
    )
    return [f"--{key}={value}" for key, value in arguments.items()]


def evaluate_run(args, run_dir: Path, length: int, rotated: bool, attention: str) -> dict:
    model, processor = load_recognizer(str(run_dir))
    test = load_text_recognition_dataset(
        dataset_name(length, rotated, args.mnist_dir), split="test", num_samples=args.num_test, seed=args.seed
    )
    references, images = list(test["text"]), list(test["image"])
    start = time.perf_counter()
    readouts = read_with_attention(model, processor, images, batch_size=args.eval_batch_size)
    seconds = time.perf_counter() - start
    accuracy = load_metric("sequence_accuracy").compute(
        predictions=[r.text for r in readouts], references=references, normalization="scene-text"
    )["sequence_accuracy"]
    entropy = load_metric("attention_entropy").compute(attentions=[r.attention.tolist() for r in readouts])
    state = json.loads((run_dir / "trainer_state.json").read_text())
    if attention == "sharp":
        panels = [draw_readout(r, processor.image_processor, t) for r, t in zip(readouts[:FIGURE_IMAGES], references)]
        stack(panels).save(run_dir / "figure.png")
    return {
        "length": length,
        "digits": "rotated" if rotated else "normal",
        "attention": attention,
        "accuracy": accuracy,
        "mean_attention_entropy": entropy["mean_attention_entropy"],
        "training_steps": state["global_step"],
        "test_images": len(references),
        "test_images_per_second": len(references) / seconds,
    }


def results_table(results: list[dict]) -> str:
    lines = [
        "| length | digits | attention | word accuracy | mean attention entropy (nats) | training steps |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['length']} | {r['digits']} | {r['attention']} | {r['accuracy']:.1%} | "
            f"{r['mean_attention_entropy']:.3f} | {r['training_steps']} |"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mnist_dir", required=True, help="Folder of the MNIST IDX files (gzip or not).")
    parser.add_argument("--output_dir", default="runs/study-sharp")
    parser.add_argument("--lengths", type=int, nargs="+", default=[5, 13])
    parser.add_argument("--digits", nargs="+", choices=["normal", "rotated"], default=["normal", "rotated"])
    parser.add_argument("--attention", nargs="+", choices=["soft", "hard", "sharp"], default=["soft", "hard", "sharp"])
    parser.add_argument("--context_mode", choices=["pooling", "chain", "weighting"], default="chain")
    parser.add_argument("--preset", choices=["tiny", "base", "paper"], default="base")
    parser.add_argument(
        "--cpu_minutes", type=float, default=60.0, help="Training budget of every run, in process CPU minutes."
    )
    parser.add_argument("--num_train", type=int, default=20_000, help="Training sequences per (length, digits).")
    parser.add_argument("--num_test", type=int, default=10_000, help="Test sequences per (length, digits).")
    parser.add_argument("--batch_size", type=int, default=32, help="Training batch (= Monte Carlo samples per step).")
    parser.add_argument("--eval_batch_size", type=int, default=128)
    parser.add_argument("--reinforce_weight", type=float, default=1.0, help="lambda_r (1.0 for digits in the paper).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: on a shared machine, threads waiting for cores inflate counted CPU time).",
    )
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(args.threads)
    output_dir = Path(args.output_dir)
    results = []
    for length in args.lengths:
        for digits in args.digits:
            for attention in args.attention:
                run_dir = output_dir / f"l{length}-{digits}-{attention}"
                result_file = run_dir / "study_result.json"
                if not result_file.exists():
                    rotated = digits == "rotated"
                    if not (run_dir / "model.safetensors").exists():
                        train_from_arguments(*parse_arguments(train_arguments(args, run_dir, length, rotated, attention)))
                    result_file.write_text(
                        json.dumps(evaluate_run(args, run_dir, length, rotated, attention), indent=2)
                    )
                results.append(json.loads(result_file.read_text()))
                logger.info("%s: %s", run_dir.name, results[-1])
    command = "python -m textrec.scripts.benchmarks.study_sharp_attention " + " ".join(shlex.quote(a) for a in argv)
    report = f"{results_table(results)}\n\n`{command}`\n"
    (output_dir / "results.md").write_text(report)
    print(report)
    return results


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
