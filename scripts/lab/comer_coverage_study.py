"""Does coverage help, at convergence? CoMER without an Attention Refinement Module (`coverage=none`, the BTTR
baseline) against fusion coverage, each trained on synthetic formulas until its validation CER stops falling,
then scored on held-out formulas overall and by length.

    python scripts/lab/comer_coverage_study.py --output_dir runs/comer-study-converged --coverage none
    python scripts/lab/comer_coverage_study.py --output_dir runs/comer-study-converged --coverage fusion

Every run is a CoMER model (`fast` preset, 1.1M parameters) trained by textrec-train with the paper's recipe
(SGD at 0.08, momentum 0.9, batches of at most 8 formulas and 320,000 pixels; the learning rate divided by 4 after
`--lr_patience` + 1 evaluations without a lower validation CER) through a length curriculum applied to both alike:
`--curriculum_steps` steps on `synthetic-math` formulas of at most each of `--curriculum_tokens` tokens, each stage
starting from the previous stage's model, then formulas of up to 48 tokens, evaluated every `--eval_steps` steps
on `--num_validation` validation formulas of the stage's length, until `--patience` evaluations pass without a
lower CER (or `--max_steps`). The CER decides because it keeps moving while the ExpRate still reads 0%. Each
stage is a textrec-train run in `<output_dir>/<coverage>/<stage>` that saves checkpoints and resumes from them,
so a study spans sessions: `--session_minutes` bounds the training time of one invocation, and the same command
run again goes on where it stopped. Two one-thread invocations side by side (different `--coverage`, the same
`--output_dir`) share the cores; the formulas are rendered once, by whichever comes first (the other waits), and
cached (~/.cache/textrec).

When a run has finished, its best model reads `--num_test` held-out test formulas (up to 48 tokens) greedily:
ExpRate and the rates within 1, 2 and 3 token errors (95% Wilson intervals), the token error rate (token edits
per reference token; 95% bootstrap interval over formulas), each overall and by reference length, with the run's
steps, CPU minutes and steps per CPU-second at the final length. `<output_dir>/results.md` gets the table of all
finished runs beside the paper's numbers, the validation curves go to `curves.png` (ExpRate) and
`cer_curves.png`, and the fusion model's refinement picture of the longest test formula to `refinement.png`.
`--report` evaluates and tabulates what has finished without training.
"""

import argparse
import fcntl
import functools
import json
import logging
import shlex
import sys
from pathlib import Path

import numpy as np
import torch

from textrec.modeling import CoMERForFormulaRecognition
from textrec.processing import TextRecognitionProcessor
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.metrics.exprate import token_edit_distance

from draw_comer_refinement import refinement_figure
from intervals import percent_with_interval
from staged_training import (
    CARRY_DIR_HELP, Stage, carry_run, draw_curves, restore_run, run_finished, run_summary, session_deadline,
    train_stages,
)

COVERAGES = ("none", "fusion")
MAX_TOKENS = 48
"""The longest synthetic formula, in LaTeX tokens: the final stage's and the test's."""
LENGTH_BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 48))
"""Reference lengths in LaTeX tokens."""
PLATEAU_METRIC = "cer"
"""What ends a run: its validation CER, which keeps moving while the ExpRate may still read 0%."""
PAPER = {
    # ExpRate (%) on CROHME 2014 / 2016 / 2019 (Zhao and Gao, ECCV 2022, Table 1): CoMER with fusion coverage,
    # and BTTR, the same model without coverage.
    "fusion": "59.3 / 59.8 / 63.0",
    "none": "54.0 / 52.3 / 53.0",
}
BOOTSTRAP_SAMPLES = 1000


def dataset_name(max_tokens: int) -> str:
    return f"synthetic-math:max_tokens={max_tokens}"


def stages(args) -> list[Stage]:
    """`--curriculum_steps` steps at each curriculum length, then the full length until the CER plateaus."""
    lengths = [*args.curriculum_tokens, MAX_TOKENS]
    finals = [False] * len(args.curriculum_tokens) + [True]
    return [
        Stage(f"tokens-{length}", dataset_name(length), args.max_steps if final else args.curriculum_steps, final)
        for length, final in zip(lengths, finals)
    ]


def render_stage(args, stage: Stage) -> None:
    """Renders (and caches) the stage's training and validation formulas, once: under a lock in the output folder,
    so that the other arm's invocation, arriving at the same stage, waits and then reads the cache instead of
    rendering the same formulas again. Each stage is rendered just before it trains, so that one arm trains while
    the other renders the next stage."""
    args.output_dir.mkdir(parents=True, exist_ok=True)
    with open(args.output_dir / ".rendering.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        load_text_recognition_dataset(stage.dataset, split="train", num_samples=args.num_train, seed=args.seed)
        load_text_recognition_dataset(stage.dataset, split="validation", num_samples=args.num_validation)


def held_out_formulas(args):
    """The test formulas, up to the full length."""
    return load_text_recognition_dataset(dataset_name(MAX_TOKENS), split="test", num_samples=args.num_test,
                                         seed=args.seed)


def train_arguments(args, coverage: str, stage: Stage, start: Path | None, minutes: float) -> list[str]:
    arguments = dict(
        model="comer",
        preset=args.preset,
        config_overrides=json.dumps({"coverage": coverage}),
        dataset=stage.dataset,
        eval_split="validation",
        max_eval_samples=args.num_validation,
        # The full length's labels from the first stage on, so that every stage's model is the same.
        max_target_length=MAX_TOKENS + 1,
        max_train_samples=args.num_train,
        max_steps=stage.max_steps,
        max_train_minutes=minutes,
        eval_steps=args.eval_steps,
        save_steps=args.eval_steps,
        save_total_limit=2,
        logging_steps=50,
        # The recipe's learning rate is reduced on a plateau of the same metric as ends the run.
        metric_for_best_model=PLATEAU_METRIC,
        greater_is_better=False,
        lr_scheduler_kwargs=json.dumps({"patience": args.lr_patience}),
        per_device_eval_batch_size=args.eval_batch_size,
        disable_tqdm=True,
        output_dir=str(args.output_dir / coverage / stage.name),
        seed=args.seed,
        data_seed=args.seed,
        use_cpu=True,
    )
    if stage.final:
        arguments["early_stopping_patience"] = args.patience
    if start is not None:
        # The previous stage's model, its vocabulary and configuration as they are.
        for name in ("preset", "config_overrides"):
            del arguments[name]
        arguments["model_name_or_path"] = str(start)
    return [f"--{key}={value}" for key, value in arguments.items()]


@torch.no_grad()
def token_errors(model, processor, dataset, batch_size: int) -> list[int]:
    """Token edit distance of the greedy prediction to the reference, per formula."""
    errors = []
    for start in range(0, len(dataset), batch_size):
        rows = dataset[start : start + batch_size]
        inputs = processor(images=rows["image"])
        predictions = processor.batch_decode(model.generate(**inputs, max_new_tokens=MAX_TOKENS + 1, num_beams=1))
        errors += [token_edit_distance(p.split(), r.split()) for p, r in zip(predictions, rows["text"])]
    return errors


def token_error_rate(errors: list[int], lengths: list[int], seed: int = 0) -> str:
    """Token edits per reference token, in percent, with a 95% bootstrap interval (formulas resampled)."""
    if not errors:
        return "-"
    errors, lengths = np.asarray(errors), np.asarray(lengths)
    samples = np.random.default_rng(seed).integers(len(errors), size=(BOOTSTRAP_SAMPLES, len(errors)))
    rates = errors[samples].sum(axis=1) / lengths[samples].sum(axis=1)
    low, high = np.percentile(rates, [2.5, 97.5])
    return f"{100 * errors.sum() / lengths.sum():.1f} ({100 * low:.1f}-{100 * high:.1f})"


def evaluate_run(args, coverage: str) -> dict:
    """The finished run's best model on the test formulas, its training summary, and (fusion) its refinement
    picture of the longest test formula."""
    run_dir = args.output_dir / coverage
    run_stages = stages(args)
    model_dir = run_dir / run_stages[-1].name
    model = CoMERForFormulaRecognition.from_pretrained(model_dir).eval()
    processor = TextRecognitionProcessor.from_pretrained(model_dir)
    test = held_out_formulas(args)
    references = list(test["text"])
    errors = token_errors(model, processor, test, args.eval_batch_size)
    if model.decoder.arm is not None:
        longest = max(range(len(references)), key=lambda index: len(references[index].split()))
        figure, _ = refinement_figure(model, processor, test[longest]["image"], max_new_tokens=MAX_TOKENS + 1,
                                      columns=7)
        figure.savefig(args.output_dir / "refinement.png", dpi=80)
    summary = run_summary(run_dir, run_stages, PLATEAU_METRIC)
    best = summary["best"] or {}  # none: the final stage reached its step limit before its first evaluation
    return {
        "coverage": coverage,
        "lengths": [len(text.split()) for text in references],
        "token_errors": errors,
        "best_validation_cer": best.get("eval_cer"),
        "best_validation_exprate": best.get("eval_exprate"),
        "best_step": best.get("step"),
        "training_steps": summary["training_steps"],
        "cpu_minutes": summary["cpu_minutes"],
        "steps_per_cpu_second": summary["steps_per_cpu_second"],
    }


def results_tables(results: list[dict]) -> str:
    """Two Markdown tables: the scores with the paper's and the training cost; the scores by formula length."""
    lines = [
        "| coverage | test ExpRate | within 1 error | within 2 | within 3 | token error rate | paper ExpRate, CROHME "
        "14 / 16 / 19 | best validation ExpRate / CER | steps (best at) | CPU minutes | steps/s at 48 tokens |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        errors, lengths = r["token_errors"], r["lengths"]
        best = r["best_step"] is not None
        cells = [
            r["coverage"],
            *(percent_with_interval(sum(e <= k for e in errors), len(errors)) for k in range(4)),
            token_error_rate(errors, lengths),
            PAPER[r["coverage"]],
            f"{100 * r['best_validation_exprate']:.1f} / {100 * r['best_validation_cer']:.1f}" if best else "",
            f"{r['training_steps']:,} ({r['best_step']:,})" if best else f"{r['training_steps']:,}",
            f"{r['cpu_minutes']:.1f}",
            f"{r['steps_per_cpu_second']:.2f}" if r["steps_per_cpu_second"] else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "| coverage | " + " | ".join(f"{low}-{high} tokens: ExpRate / token error rate" for low, high in LENGTH_BUCKETS) + " |",
        "|---|" + "---|" * len(LENGTH_BUCKETS),
    ]
    for r in results:
        cells = [r["coverage"]]
        for low, high in LENGTH_BUCKETS:
            bucket = [(e, n) for e, n in zip(r["token_errors"], r["lengths"]) if low <= n <= high]
            exact = percent_with_interval(sum(e == 0 for e, _ in bucket), len(bucket))
            cells.append(f"{exact} / {token_error_rate([e for e, _ in bucket], [n for _, n in bucket])} (n={len(bucket)})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output_dir", type=Path, default=Path("runs/comer-study-converged"))
    parser.add_argument("--coverage", nargs="+", choices=COVERAGES, default=list(COVERAGES))
    parser.add_argument("--preset", choices=["tiny", "base", "fast", "paper"], default="fast")
    parser.add_argument("--curriculum_tokens", type=int, nargs="*", default=[12, 24],
                        help="Longest formula (tokens) of each curriculum stage.")
    parser.add_argument("--curriculum_steps", type=int, default=6000, help="Steps of each curriculum stage.")
    parser.add_argument("--max_steps", type=int, default=60_000, help="Most steps at the full length.")
    parser.add_argument("--eval_steps", type=int, default=500, help="Steps between evaluations (and checkpoints).")
    parser.add_argument("--patience", type=int, default=12,
                        help="Evaluations without a lower validation CER that end a run.")
    parser.add_argument("--lr_patience", type=int, default=4,
                        help="Evaluations without a lower validation CER the learning rate waits before it is divided "
                        "by 4 (the recipe's plateau schedule; 10 in the paper, where nothing stops the run).")
    parser.add_argument("--session_minutes", type=float, default=150.0, help="Training time of this invocation.")
    parser.add_argument("--num_train", type=int, default=40_000, help="Training formulas per stage.")
    parser.add_argument("--num_validation", type=int, default=300, help="Validation formulas of each evaluation.")
    parser.add_argument("--num_test", type=int, default=1_000, help="Test formulas (up to 48 tokens).")
    parser.add_argument("--eval_batch_size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: two studies side by side).")
    parser.add_argument("--report", action="store_true", help="Only evaluate and tabulate the finished runs.")
    parser.add_argument("--carry_dir", type=Path, default=None,
                        help=CARRY_DIR_HELP)
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    """Trains (as far as the session allows) and evaluates the runs of `--coverage`, then writes the report of
    every finished run in `--output_dir` (the other invocation's too). Returns the finished runs' results."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.set_num_threads(args.threads)
    run_stages = stages(args)
    if args.carry_dir:
        for coverage in args.coverage:
            restore_run(args.carry_dir / coverage, args.output_dir / coverage)
    deadline = session_deadline(args.session_minutes)
    for coverage in args.coverage:
        run_dir = args.output_dir / coverage
        result_file = run_dir / "study_result.json"
        if result_file.exists():
            continue
        finished = run_finished(run_dir, run_stages, args.patience, PLATEAU_METRIC)
        if not finished and not args.report:
            finished = train_stages(run_dir, run_stages, functools.partial(train_arguments, args, coverage), deadline,
                                    args.patience, PLATEAU_METRIC, prepare_stage=functools.partial(render_stage, args))
        if finished:
            result_file.write_text(json.dumps(evaluate_run(args, coverage)))
        if args.carry_dir and not args.report:
            carry_run(run_dir, args.carry_dir / coverage)

    results, unfinished = [], []
    for coverage in COVERAGES:
        result_file = args.output_dir / coverage / "study_result.json"
        if result_file.exists():
            results.append(json.loads(result_file.read_text()))
        elif (args.output_dir / coverage).exists() or coverage in args.coverage:
            unfinished.append(coverage)
    run_dirs = {f"coverage={coverage}": args.output_dir / coverage for coverage in COVERAGES
                if (args.output_dir / coverage).exists()}
    for metric, name, path in (("exprate", "ExpRate", "curves.png"), (PLATEAU_METRIC, "CER", "cer_curves.png")):
        draw_curves(run_dirs, run_stages, metric, f"validation {name} (%)",
                    f"Validation {name} while training ({args.num_validation} formulas of the stage's length)",
                    args.output_dir / path)
    command = "python scripts/lab/comer_coverage_study.py " + shlex.join(argv)
    curriculum = " → ".join(f"{stage.name}" for stage in run_stages)
    report = (
        f"CoMER `{args.preset}` preset on synthetic-math (stages {curriculum}); greedy decoding of {args.num_test} test "
        "formulas; percentages with 95% intervals (Wilson; bootstrap for token error rates).\n\n"
        f"{results_tables(results)}\n\nCommand: `{command}`\n"
    )
    if unfinished:
        report += f"\nStill training (run the command again to go on): {', '.join(unfinished)}\n"
    (args.output_dir / "results.md").write_text(report)
    print(report)
    return results


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
