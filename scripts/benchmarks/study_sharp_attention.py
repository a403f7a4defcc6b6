"""The multi-digit study of the sharp-attention paper: soft, hard and sharp attention on strings of MNIST
digits, normal and rotated, each model trained until its validation word accuracy stops improving.

    python -m textrec.scripts.benchmarks.study_sharp_attention --mnist_dir ../shared/data/mnist \
        --output_dir runs/study-sharp-converged --attention soft hard sharp --digits normal rotated

Every run (digits, attention) is a `sharp-attention` model trained with textrec's one training path (the
architecture's ADADELTA recipe, batch 32, one sampled column per image and step for hard and sharp, lambda_r
1.0) through a length curriculum applied to all alike: `--curriculum_steps` steps on strings of each
`--curriculum_lengths` length, each stage starting from the previous stage's model, then strings of
`--length` digits until the word accuracy on `--num_validation` validation strings (MNIST's held-out training
digits) has stopped improving: `--patience` evaluations without a lower validation CER (or `--max_steps`). Each stage saves checkpoints and
resumes from them, so a study spans sessions: `--session_minutes` bounds the training time of one invocation,
and running the same command again goes on where it stopped. Two one-thread studies side by side (different
`--attention`, the same `--output_dir`) share the cores.

When every run has finished, the best model of each reads `--num_test` strings drawn from MNIST's test digits
greedily; the table (word accuracy, mean attention entropy, steps, CPU minutes, steps per CPU-second at the
final length) goes to `<output_dir>/results.md`, the validation curves to `curves.png`, and each sharp run gets
the attention picture `figure.png` (see draw_sharp_attention). `--report` writes what is finished so far.
"""

import argparse
import json
import logging
import shlex
import sys
import time
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Stage:
    """One training stage of a run: strings of `length` digits, for `max_steps` steps or until the validation
    accuracy plateaus (`final`)."""

    length: int
    max_steps: int
    final: bool

    @property
    def folder(self) -> str:
        return f"length-{self.length}"


def stages(args) -> list[Stage]:
    curriculum = [Stage(length, args.curriculum_steps, final=False) for length in args.curriculum_lengths]
    return [*curriculum, Stage(args.length, args.max_steps, final=True)]


def train_arguments(args, run_dir: Path, stage: Stage, start: Path | None, rotated: bool, attention: str,
                    minutes: float) -> list[str]:
    overrides = {"attention_type": attention, "context_mode": args.context_mode, "reinforce_weight": args.reinforce_weight}
    arguments = dict(
        model="sharp-attention",
        preset=args.preset,
        config_overrides=json.dumps(overrides),
        dataset=dataset_name(stage.length, rotated, args.mnist_dir),
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
        output_dir=str(run_dir / stage.folder),
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


def log_history(stage_dir: Path) -> list[dict]:
    """The stage's log history: its final state, else its last checkpoint's (an interrupted stage)."""
    states = [stage_dir / "trainer_state.json"]
    states += sorted(stage_dir.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[1]))[::-1]
    for state in states:
        if state.is_file():
            return json.loads(state.read_text())["log_history"]
    return []


def evaluations(history: list[dict]) -> list[dict]:
    """The evaluations made while training: not the one after its end (of the best model, again)."""
    ends = [index for index, entry in enumerate(history) if "train_runtime" in entry]
    return [entry for entry in history[: ends[-1] if ends else None] if ACCURACY in entry]


def stage_finished(stage_dir: Path, stage: Stage, patience: int) -> bool:
    """Trained to its step count, or (the final stage) `patience` evaluations without a lower validation CER, as
    the early stopping of its training decides."""
    if not (stage_dir / "trainer_state.json").is_file():
        return False
    state = json.loads((stage_dir / "trainer_state.json").read_text())
    if state["global_step"] >= stage.max_steps:
        return True
    if not stage.final:
        return False
    scores = [entry[f"eval_{PLATEAU_METRIC}"] for entry in evaluations(state["log_history"])]
    best = min(range(len(scores)), key=scores.__getitem__, default=None)
    return best is not None and len(scores) - 1 - best >= patience


def train_run(args, run_dir: Path, rotated: bool, attention: str, deadline: float) -> bool:
    """Trains the run's stages in order as far as the session allows; True when all have finished."""
    start = None
    for stage in stages(args):
        stage_dir = run_dir / stage.folder
        if not stage_finished(stage_dir, stage, args.patience):
            minutes = (deadline - time.monotonic()) / 60
            if minutes <= 0:
                return False
            logger.info("%s: training %s for up to %.0f minutes", run_dir.name, stage.folder, minutes)
            train_from_arguments(
                *parse_arguments(train_arguments(args, run_dir, stage, start, rotated, attention, minutes))
            )
            if not stage_finished(stage_dir, stage, args.patience):
                return False
        start = stage_dir
    return True


def evaluate_run(args, run_dir: Path, rotated: bool, attention: str) -> dict:
    final = stages(args)[-1]
    model_dir = run_dir / final.folder
    model, processor = load_recognizer(str(model_dir))
    test = load_text_recognition_dataset(
        dataset_name(args.length, rotated, args.mnist_dir), split="test", num_samples=args.num_test, seed=args.seed
    )
    references, images = list(test["text"]), list(test["image"])
    start = time.perf_counter()
    readouts = read_with_attention(model, processor, images, batch_size=args.eval_batch_size)
    seconds = time.perf_counter() - start
    accuracy = load_metric("sequence_accuracy").compute(
        predictions=[r.text for r in readouts], references=references, normalization="scene-text"
    )["sequence_accuracy"]
    entropy = load_metric("attention_entropy").compute(attentions=[r.attention.tolist() for r in readouts])
    panels = [draw_readout(r, processor.image_processor, t) for r, t in zip(readouts[:FIGURE_IMAGES], references)]
    stack(panels).save(run_dir / "figure.png")
    histories = {stage.folder: log_history(run_dir / stage.folder) for stage in stages(args)}
    final_history = histories[final.folder]
    final_steps = max(entry["step"] for entry in final_history)
    final_cpu_minutes = max(entry.get("cpu_minutes", 0) for entry in final_history)
    best = min(evaluations(final_history), key=lambda entry: entry[f"eval_{PLATEAU_METRIC}"])
    return {
        "length": args.length,
        "digits": "rotated" if rotated else "normal",
        "attention": attention,
        "accuracy": accuracy,
        "mean_attention_entropy": entropy["mean_attention_entropy"],
        "best_validation_accuracy": best[ACCURACY],
        "best_step": best["step"],
        "training_steps": sum(max((e["step"] for e in h), default=0) for h in histories.values()),
        "cpu_minutes": sum(max((e.get("cpu_minutes", 0) for e in h), default=0) for h in histories.values()),
        "steps_per_cpu_second": final_steps / (60 * final_cpu_minutes) if final_cpu_minutes else None,
        "test_images": len(references),
        "test_images_per_second": len(references) / seconds,
    }


def results_table(results: list[dict]) -> str:
    lines = [
        "| digits | attention | test word accuracy | mean attention entropy (nats) | paper: accuracy, entropy "
        "| steps (best validation CER at) | CPU minutes | steps/s at the final length |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        paper = PAPER.get((r["digits"], r["attention"]))
        paper_cell = f"{paper[0]:.1%}, {paper[1]:.2f}" if paper else ""
        speed = f"{r['steps_per_cpu_second']:.2f}" if r["steps_per_cpu_second"] else ""
        lines.append(
            f"| {r['digits']} | {r['attention']} | {r['accuracy']:.1%} | {r['mean_attention_entropy']:.3f} | "
            f"{paper_cell} | {r['training_steps']:,} ({r['best_step']:,}) | {r['cpu_minutes']:.1f} | {speed} |"
        )
    return "\n".join(lines)


def draw_curves(args, run_dirs: list[Path], path: Path) -> None:
    """Validation word accuracy against the run's total step, one line per run, stage boundaries dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for run_dir in run_dirs:
        offset, steps, scores = 0, [], []
        for stage in stages(args):
            history = log_history(run_dir / stage.folder)
            steps += [offset + e["step"] for e in evaluations(history)]
            scores += [100 * e[ACCURACY] for e in evaluations(history)]
            offset += max((e["step"] for e in history), default=0)
        if steps:
            axes.plot(steps, scores, marker=".", label=run_dir.name)
    boundary = 0
    for stage in stages(args)[:-1]:
        boundary += stage.max_steps
        axes.axvline(boundary, color="grey", linestyle="--", linewidth=0.8)
    axes.set(xlabel="training step (curriculum stages dashed)", ylabel="validation word accuracy (%)",
             title=f"Validation word accuracy while training ({args.num_validation} strings of the stage's length)")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


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
    parser.add_argument("--preset", choices=["tiny", "base", "paper"], default="base")
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
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True,
                        help="bfloat16 autocast in training (1.5x faster steps on CPUs with AVX-512 BF16).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: two studies side by side).")
    parser.add_argument("--report", action="store_true", help="Only evaluate and tabulate the finished runs.")
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(args.threads)
    output_dir = Path(args.output_dir)
    deadline = time.monotonic() + 60 * args.session_minutes
    results, run_dirs, unfinished = [], [], []
    for digits in args.digits:
        for attention in args.attention:
            run_dir = output_dir / f"l{args.length}-{digits}-{attention}"
            run_dirs.append(run_dir)
            result_file = run_dir / "study_result.json"
            rotated = digits == "rotated"
            if not result_file.exists():
                finished = all(stage_finished(run_dir / s.folder, s, args.patience) for s in stages(args))
                if not finished and not args.report:
                    finished = train_run(args, run_dir, rotated, attention, deadline)
                if not finished:
                    unfinished.append(run_dir.name)
                    continue
                result_file.write_text(json.dumps(evaluate_run(args, run_dir, rotated, attention), indent=2))
            results.append(json.loads(result_file.read_text()))
            logger.info("%s: %s", run_dir.name, results[-1])
    draw_curves(args, run_dirs, output_dir / "curves.png")
    command = "python -m textrec.scripts.benchmarks.study_sharp_attention " + shlex.join(argv)
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
