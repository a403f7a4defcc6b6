"""Ablation of the `fast` recipe: each lever's effect on held-out CER at the same training budget.

    python scripts/lab/ablation_recipe.py --train_minutes 5 --output_dir runs/ablation

Every variant is the `self-attention-lines` release's recipe from scratch, the first of its training commands (same
data, schedule, batches: `line_release_arguments`), with one thing changed, trained through `textrec-train` for the same wall-clock budget. Variants run `--jobs` at
a time, each on `--threads` threads, so that runs side by side share the same conditions. Each trained
model then reads the release's held-out test sets (clean lines of 15-80 characters, print and
handwriting-style) with the attention decoder and, where it has one, the CTC head. A markdown table goes
to stdout and to `table.md` in the output folder, with this command.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from releases import evaluate_release, get_release, line_release_arguments
from textrec.processing.inference import load_recognizer

RELEASE = "self-attention-lines"
VARIANTS = {
    "fast": ("the fast preset as released (joint CTC-attention, CTC weight 0.3)", []),
    "no-ctc": ("fast without the CTC loss (attention decoder alone)", ['--config_overrides={"ctc_loss_weight": 0.0}']),
    "ctc-0.5": ("fast with CTC weight 0.5", ['--config_overrides={"ctc_loss_weight": 0.5}']),
    "no-context": ("fast without the transformer encoder over the features", ['--config_overrides={"encoder_layers": 0}']),
    "no-stem": ("fast without the stride-2 stem (the first stage at full resolution)",
                ['--config_overrides={"cnn_stem_channels": 0}']),
    "base": ("the base preset (two full-resolution convolutions per stage, 4 decoder layers, no CTC)", ["--preset=base"]),
}
"""Variant name -> (what it is, textrec-train arguments added to the release's; later ones win)."""


def training_arguments(variant: str, output_dir: Path, train_minutes: float) -> list[str]:
    recipe = line_release_arguments(get_release(RELEASE).architecture, max_train_minutes=train_minutes)
    budget = [argument for argument in recipe if not argument.startswith("--max_train_minutes")]
    return [*budget, *VARIANTS[variant][1], f"--max_train_minutes={train_minutes}", f"--output_dir={output_dir}",
            "--eval_strategy=no", "--save_steps=100000"]


def train_variants(variants: list[str], output_dir: Path, train_minutes: float, jobs: int, threads: int,
                   arguments_of=training_arguments) -> None:
    """Trains the variants `jobs` at a time as `textrec-train` processes of `threads` threads each, with the
    arguments `arguments_of(variant, folder, train_minutes)`."""
    environment = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    pending = list(variants)
    while pending:
        batch, pending = pending[:jobs], pending[jobs:]
        processes = []
        for variant in batch:
            log = open(output_dir / f"{variant}.log", "w")
            command = [sys.executable, "-m", "textrec.scripts.train",
                       *arguments_of(variant, output_dir / variant, train_minutes)]
            processes.append((variant, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)))
        for variant, process in processes:
            if process.wait() != 0:
                raise RuntimeError(f"training {variant} failed; see {output_dir / f'{variant}.log'}")


def evaluate_variant(variant: str, output_dir: Path) -> dict:
    model, processor = load_recognizer(str(output_dir / variant))
    decodings = ["attention", "ctc"] if getattr(model, "ctc_head", None) is not None else ["attention"]
    state = json.loads((output_dir / variant / "trainer_state.json").read_text())
    release = get_release(RELEASE)
    return {
        "parameters": model.num_parameters(),
        "steps": state["global_step"],
        "results": {decoding: evaluate_release(model, processor, release, decoding) for decoding in decodings},
    }


def render_table(rows: dict, train_minutes: float, threads: int, command: str) -> str:
    lines = [
        f"Held-out clean lines of 15-80 characters (200 print, 200 handwriting-style), after {train_minutes:g} "
        f"minutes of training on {threads} thread(s) per run; CER with each decoding.",
        "",
        "| variant | what changes | parameters | steps | print CER (attention) | print CER (CTC) | "
        "handwriting CER (attention) | handwriting CER (CTC) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for variant, row in rows.items():
        cells = []
        for test_set in ("print", "handwriting-style"):
            for decoding in ("attention", "ctc"):
                scores = row["results"].get(decoding)
                cells.append(f"{scores[test_set]['cer']:.2%}" if scores else "n/a")
        lines.append(f"| {variant} | {VARIANTS[variant][0]} | {row['parameters'] / 1e6:.2f} M | {row['steps']} | "
                     f"{cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python scripts/lab/ablation_recipe.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--train_minutes", type=float, default=10.0, help="Wall-clock training budget per variant.")
    parser.add_argument("--jobs", type=int, default=2, help="Variants trained side by side.")
    parser.add_argument("--threads", type=int, default=1, help="Torch threads of each training process.")
    parser.add_argument("--output_dir", type=Path, default=Path("runs/ablation"))
    return parser


def run(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    train_variants(args.variants, args.output_dir, args.train_minutes, args.jobs, args.threads)
    rows = {variant: evaluate_variant(variant, args.output_dir) for variant in args.variants}
    command = shlex.join(["python", "scripts/lab/ablation_recipe.py", *(sys.argv[1:] if argv is None else argv)])
    table = render_table(rows, args.train_minutes, args.threads, command)
    (args.output_dir / "table.md").write_text(table + "\n")
    (args.output_dir / "results.json").write_text(json.dumps(rows, indent=2))
    print(table)
    return rows


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
