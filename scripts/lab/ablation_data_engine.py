"""Ablation of the data engine: each lever's effect on the real development sets at the same training budget.

    python scripts/lab/ablation_data_engine.py --start runs/crnn-lines-synthetic --train_minutes 6 \
        --output_dir runs/ablation-engine --output_markdown scripts/lab/results/ablation_data_engine.md

Every variant fine-tunes the same starting model (`--start`: a line model trained on clean renderings, such as
the first `crnn-lines`) with the data engine's stage of the `crnn-lines` release (`ENGINE_STAGE_ARGUMENTS`), one
lever changed, for the same budget of CPU minutes on one thread each (`--max_train_cpu_minutes`: fairer than
wall-clock time on a machine doing other work too, though not equal); each then reads the real
development sets (`real_sets.py`) beside the starting model. The levers: the scene composites, the scanner
effects, the number of fonts, and the whole engine against clean renderings.
"""

import argparse
import json
import shlex
import sys
from pathlib import Path

from ablation_recipe import train_variants
from releases import ENGINE_DATA, ENGINE_STAGE_ARGUMENTS, evaluate_on_real_sets
from textrec.processing.inference import load_recognizer

VARIANTS = {
    "engine": ("the data engine as released (~800 fonts, scanner effects, 35% scene composites)", ENGINE_DATA),
    "no-scene": ("no scene composites (every line a scan)", ENGINE_DATA + ",scene_share=0"),
    "no-scan-effects": ("no scanner effects (the scene composites kept)", ENGINE_DATA + ",scan_effects=false"),
    "24-fonts": ("24 of the print fonts (as on a machine with the basic font packages)", ENGINE_DATA + ",max_fonts=24"),
    "clean": ("no engine: clean renderings, mildly augmented (the first release's data, print only)",
              "synthetic-lines:font_style=print,max_chars=80,num_proc=2"),
}
"""Variant name -> (what it is, its `--dataset`)."""


def arguments_for(start: str, train_samples: int):
    def training_arguments(variant: str, output_dir: Path, train_minutes: float) -> list[str]:
        stage = [argument for argument in ENGINE_STAGE_ARGUMENTS
                 if not argument.startswith(("--dataset=", "--max_train_samples=", "--eval_", "--max_eval_samples="))]
        return ["--model=crnn", f"--model_name_or_path={start}", f"--dataset={VARIANTS[variant][1]}",
                f"--max_train_samples={train_samples}", *stage, "--learning_rate=3e-4", "--warmup_steps=50",
                "--max_steps=100000", f"--max_train_cpu_minutes={train_minutes}", "--eval_strategy=no",
                "--save_steps=100000", f"--output_dir={output_dir}", "--eval_dataset=" + VARIANTS[variant][1],
                "--max_eval_samples=50"]

    return training_arguments


def render_table(rows: dict, train_minutes: float, command: str) -> str:
    sets = list(next(iter(rows.values()))["results"])
    lines = [f"Real development sets, CER under each set's protocol, after {train_minutes:g} CPU minutes of fine-tuning "
             "on one thread per run.", "",
             "| variant | what changes | steps | " + " | ".join(name.split(" (")[0].removeprefix("real: ") for name in sets) + " |",
             "|---|---|---|" + "---|" * len(sets)]
    for variant, row in rows.items():
        cells = [f"{row['results'][name]['cer']:.2%}" for name in sets]
        lines.append(f"| {variant} | {row['description']} | {row['steps']} | " + " | ".join(cells) + " |")
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", required=True, help="The model every variant fine-tunes (a folder).")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--train_minutes", type=float, default=6.0, help="CPU minutes of training per variant.")
    parser.add_argument("--train_samples", type=int, default=20000, help="Lines rendered for each variant.")
    parser.add_argument("--jobs", type=int, default=1, help="Variants trained side by side.")
    parser.add_argument("--output_dir", type=Path, default=Path("runs/ablation-engine"))
    parser.add_argument("--output_markdown", type=Path)
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    train_variants(args.variants, args.output_dir, args.train_minutes, args.jobs, 1,
                   arguments_of=arguments_for(args.start, args.train_samples))
    rows = {"start": {"description": f"the starting model ({args.start}), not fine-tuned", "steps": 0,
                      "results": evaluate_on_real_sets(*load_recognizer(args.start))}}
    for variant in args.variants:
        state = json.loads((args.output_dir / variant / "trainer_state.json").read_text())
        rows[variant] = {"description": VARIANTS[variant][0], "steps": state["global_step"],
                         "results": evaluate_on_real_sets(*load_recognizer(str(args.output_dir / variant)))}
    command = shlex.join(["python", "scripts/lab/ablation_data_engine.py", *(sys.argv[1:] if argv is None else argv)])
    table = render_table(rows, args.train_minutes, command)
    (args.output_dir / "results.json").write_text(json.dumps(rows, indent=2))
    if args.output_markdown:
        args.output_markdown.write_text(table + "\n")
    print(table)
    return rows


if __name__ == "__main__":
    main()
