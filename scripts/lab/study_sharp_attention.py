"""The multi-digit study of the sharp-attention paper: soft, hard and sharp attention on strings of MNIST
digits, normal and rotated, each model trained until its validation word accuracy stops improving.

    python scripts/lab/study_sharp_attention.py --mnist_dir ../shared/data/mnist \
        --output_dir runs/study-sharp-converged --attention soft hard sharp --digits normal rotated

Every run (digits, attention) is a `sharp-attention` model (`--preset`, `small` by default: `base` with half the
CNN channels, a quarter of the arithmetic of sharp's per-step patch CNN; see benchmark_sharp_step) trained with
textrec's one training path (the architecture's ADADELTA recipe, batch 32, one sampled column per image and step
for hard and sharp, lambda_r 1.0) through a length curriculum applied to all alike: `--curriculum_steps` steps on
strings of each `--curriculum_lengths` length, each stage starting from the previous stage's model, then strings of
`--length` digits until the word accuracy on `--num_validation` validation strings (MNIST's held-out training
digits) has stopped improving: `--patience` evaluations without a lower validation CER (or `--max_steps`). Each
stage saves checkpoints and resumes from them, so a study spans sessions: `--session_minutes` bounds the training
time of one invocation, and running the same command again goes on where it stopped. Two one-thread studies side by
side (different `--attention`, the same `--output_dir`) share the cores.

When every run has finished, the best model of each reads `--num_test` strings drawn from MNIST's test digits
greedily; the table (word accuracy, mean attention entropy, steps, CPU minutes, steps per CPU-second at the
final length) goes to `<output_dir>/results.md`, the validation curves to `curves.png`, and each sharp run gets
the attention picture `figure.png` (see draw_sharp_attention). `--report` writes what is finished so far.
"""

import argparse
import functools
import json
import logging
import shlex
import sys
import time
from pathlib import Path

import torch

from textrec.modeling import SharpAttentionConfig
from textrec.processing.attention_readout import read_with_attention
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.inference import load_recognizer
from textrec.processing.metrics import load_metric
from textrec.processing.training.trainer import cpu_has_native_bf16

from draw_sharp_attention import draw_readout, stack
from intervals import paired_accuracy_difference, percent_with_interval
from staged_training import (
    CARRY_DIR_HELP, Stage, carry_run, draw_curves, restore_run, run_finished, run_summary, session_deadline, train_stages,
)

logger = logging.getLogger("textrec.study")

FIGURE_IMAGES = 4
ACCURACY = "eval_sequence_accuracy"
PLATEAU_METRIC = "cer"
"""What ends a run: its validation CER, which keeps moving while the word accuracy may still read 0%."""
PAPER = {
    # The paper's Table (13 digits, normal): word accuracy and mean attention entropy (nats).
    ("normal", "soft"): (0.822, 1.07),
    ("normal", "sharp"): (0.937, 0.39),
}


def dataset_name(length: int, rotated: bool, mnist_dir: str) -> str:
    return f"mnist-digits:length={length},rotated={str(rotated).lower()},mnist_dir={mnist_dir}"


def stages(args, rotated: bool) -> list[Stage]:
    """`--curriculum_steps` steps at each curriculum length, then the final length until the CER plateaus."""
    lengths = [*args.curriculum_lengths, args.length]
    return [
        Stage(f"length-{length}", dataset_name(length, rotated, args.mnist_dir),
              args.max_steps if final else args.curriculum_steps, final)
        for length, final in zip(lengths, [False] * len(args.curriculum_lengths) + [True])
    ]


def train_arguments(args, run_dir: Path, attention: str, stage: Stage, start: Path | None, minutes: float) -> list[str]:
    overrides = {"attention_type": attention, "context_mode": args.context_mode, "reinforce_weight": args.reinforce_weight}
    arguments = dict(
        model="sharp-attention",
        preset=args.preset,
        config_overrides=json.dumps(overrides),
        dataset=stage.dataset,
        eval_split="validation",
        max_eval_samples=args.num_validation,
        charset="0123456789",
        # The final length's labels from the first stage on, so that every stage's model is the same.
        max_target_length=args.length + 1,
        max_train_samples=args.num_train,
        max_steps=stage.max_steps,
        max_train_minutes=minutes,
        per_device_train_batch_size=args.batch_size,
        eval_steps=args.eval_steps,
        save_steps=args.eval_steps,
        save_total_limit=2,
        logging_steps=50,
        bf16=args.bf16,
        disable_tqdm=True,
        output_dir=str(run_dir / stage.name),
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=True,
    )
    if stage.final:
        arguments.update(early_stopping_patience=args.patience, metric_for_best_model=PLATEAU_METRIC)
    if start is not None:
        # The previous stage's model, its vocabulary and configuration as they are.
        for name in ("preset", "config_overrides", "charset"):
            del arguments[name]
        arguments["model_name_or_path"] = str(start)
    return [f"--{key}={value}" for key, value in arguments.items()]


def evaluate_run(args, run_dir: Path, rotated: bool, attention: str) -> dict:
    run_stages = stages(args, rotated)
    model_dir = run_dir / run_stages[-1].name
    model, processor = load_recognizer(str(model_dir))
    test = load_text_recognition_dataset(
        dataset_name(args.length, rotated, args.mnist_dir), split="test", num_samples=args.num_test, seed=args.seed
    )
    references, images = list(test["text"]), list(test["image"])
    start = time.perf_counter()
    readouts = read_with_attention(model, processor, images, batch_size=args.eval_batch_size)
    seconds = time.perf_counter() - start
    texts = [r.text for r in readouts]
    sequence_accuracy = load_metric("sequence_accuracy")
    correct = [
        bool(sequence_accuracy.compute(predictions=[text], references=[reference], normalization="scene-text")[
            "sequence_accuracy"
        ])
        for text, reference in zip(texts, references)
    ]
    entropy = load_metric("attention_entropy").compute(attentions=[r.attention.tolist() for r in readouts])
    panels = [draw_readout(r, processor.image_processor, t) for r, t in zip(readouts[:FIGURE_IMAGES], references)]
    stack(panels).save(run_dir / "figure.png")
    summary = run_summary(run_dir, run_stages, PLATEAU_METRIC)
    best = summary["best"]
    return {
        "length": args.length,
        "digits": "rotated" if rotated else "normal",
        "attention": attention,
        "accuracy": sum(correct) / len(correct),
        "mean_attention_entropy": entropy["mean_attention_entropy"],
        "best_validation_accuracy": best[ACCURACY],
        "best_step": best["step"],
        "training_steps": summary["training_steps"],
        "cpu_minutes": summary["cpu_minutes"],
        "steps_per_cpu_second": summary["steps_per_cpu_second"],
        "test_images": len(references),
        "test_images_per_second": len(references) / seconds,
        "texts": texts,
        "correct": correct,
    }


def results_table(results: list[dict]) -> str:
    """One row per run; beside each hard or sharp run, its word accuracy minus soft attention's on the same test
    strings (a paired bootstrap interval), where soft's run on those digits has finished."""
    lines = [
        "| digits | attention | test word accuracy (95% interval) | vs soft: points (95% paired interval) "
        "| mean attention entropy (nats) | paper: accuracy, entropy "
        "| steps (best validation CER at) | CPU minutes | steps/s at the final length |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    soft = {r["digits"]: r for r in results if r["attention"] == "soft"}
    for r in results:
        baseline = soft.get(r["digits"])
        versus_soft = (
            paired_accuracy_difference(r["correct"], baseline["correct"]) if baseline and r is not baseline else ""
        )
        paper = PAPER.get((r["digits"], r["attention"]))
        paper_cell = f"{paper[0]:.1%}, {paper[1]:.2f}" if paper else ""
        speed = f"{r['steps_per_cpu_second']:.2f}" if r["steps_per_cpu_second"] else ""
        lines.append(
            f"| {r['digits']} | {r['attention']} | {percent_with_interval(round(r['accuracy'] * r['test_images']), r['test_images'])} | "
            f"{versus_soft} | {r['mean_attention_entropy']:.3f} | "
            f"{paper_cell} | {r['training_steps']:,} ({r['best_step']:,}) | {r['cpu_minutes']:.1f} | {speed} |"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mnist_dir", required=True, help="Folder of the MNIST IDX files (gzip or not).")
    parser.add_argument("--output_dir", default="runs/study-sharp-converged")
    parser.add_argument("--length", type=int, default=13, help="Digits per string of the final stage and the test.")
    parser.add_argument("--curriculum_lengths", type=int, nargs="*", default=[5, 9], help="Lengths trained first.")
    parser.add_argument("--curriculum_steps", type=int, default=1000, help="Steps of each curriculum stage.")
    parser.add_argument("--digits", nargs="+", choices=["normal", "rotated"], default=["normal", "rotated"])
    parser.add_argument("--attention", nargs="+", choices=["soft", "hard", "sharp"], default=["soft", "hard", "sharp"])
    parser.add_argument("--context_mode", choices=["pooling", "chain", "weighting"], default="chain")
    parser.add_argument("--preset", choices=sorted(SharpAttentionConfig.PRESETS), default="small")
    parser.add_argument("--max_steps", type=int, default=30_000, help="Most steps of the final stage.")
    parser.add_argument("--eval_steps", type=int, default=250, help="Steps between evaluations (and checkpoints).")
    parser.add_argument("--patience", type=int, default=8, help="Evaluations without a lower validation CER that end a run.")
    parser.add_argument("--session_minutes", type=float, default=150.0, help="Training time of this invocation.")
    parser.add_argument("--num_train", type=int, default=20_000, help="Training strings per (length, digits).")
    parser.add_argument("--num_validation", type=int, default=256, help="Validation strings of each evaluation.")
    parser.add_argument("--num_test", type=int, default=1_000, help="Test strings per digits style.")
    parser.add_argument("--batch_size", type=int, default=32, help="Training batch (= Monte Carlo samples per step).")
    parser.add_argument("--eval_batch_size", type=int, default=128)
    parser.add_argument("--reinforce_weight", type=float, default=1.0, help="lambda_r (1.0 for digits in the paper).")
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=cpu_has_native_bf16(),
                        help="bfloat16 autocast in training (default: where the CPU has native bfloat16, which makes a "
                        "step 1.5x faster; elsewhere it is emulated and 15x slower).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: two studies side by side).")
    parser.add_argument("--report", action="store_true", help="Only evaluate and tabulate the finished runs.")
    parser.add_argument("--carry_dir", type=Path, default=None,
                        help=CARRY_DIR_HELP)
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(args.threads)
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)  # the curves and report are written even when no run has begun
    deadline = session_deadline(args.session_minutes)
    results, run_dirs, unfinished = [], {}, []
    for digits in args.digits:
        for attention in args.attention:
            run_dir = output_dir / f"l{args.length}-{digits}-{attention}"
            run_dirs[run_dir.name] = run_dir
            if args.carry_dir:
                restore_run(args.carry_dir / run_dir.name, run_dir)
            result_file = run_dir / "study_result.json"
            rotated = digits == "rotated"
            run_stages = stages(args, rotated)
            if not result_file.exists():
                finished = run_finished(run_dir, run_stages, args.patience, PLATEAU_METRIC)
                if not finished and not args.report:
                    finished = train_stages(
                        run_dir, run_stages, functools.partial(train_arguments, args, run_dir, attention), deadline,
                        args.patience, PLATEAU_METRIC,
                    )
                if finished:
                    result_file.write_text(json.dumps(evaluate_run(args, run_dir, rotated, attention), indent=2))
                if args.carry_dir and not args.report:
                    carry_run(run_dir, args.carry_dir / run_dir.name)
                if not finished:
                    unfinished.append(run_dir.name)
                    continue
            results.append(json.loads(result_file.read_text()))
            logger.info("%s: %s", run_dir.name, results[-1])
    draw_curves(
        run_dirs, stages(args, rotated=False), ACCURACY.removeprefix("eval_"), "validation word accuracy (%)",
        f"Validation word accuracy while training ({args.num_validation} strings of the stage's length)",
        output_dir / "curves.png",
    )
    command = "python scripts/lab/study_sharp_attention.py " + shlex.join(argv)
    report = f"{results_table(results)}\n\nCommand: `{command}`\n"
    if unfinished:
        report += f"\nStill training (run the command again to go on): {', '.join(unfinished)}\n"
    (output_dir / "results.md").write_text(report)
    print(report)
    return results


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
