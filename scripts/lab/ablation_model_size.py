"""The model-size lever: the line release's CRNN (`fast`, 2.5 M parameters) against the paper's (8.75 M) at the
same training budget, on the real development sets, and how fast each reads.

    python scripts/lab/ablation_model_size.py --train_minutes 15 --output_dir runs/ablation-size \
        --output_markdown scripts/lab/results/ablation_model_size.md

Both train from scratch on the data engine (`ENGINE_DATA`, the release's second stage) with the same schedule,
for the same CPU minutes on one thread each (`--max_train_cpu_minutes`), then read the real development sets
(`real_sets.py`); lines/s are one thread's on the development receipts, image files to text, batches of 32
(weights do not change the speed: `--train_minutes 0` measures the speed alone, of untrained models).
"""

import argparse
import json
import shlex
import sys
from pathlib import Path

import torch
from ablation_recipe import train_variants
from releases import ENGINE_DATA, ENGINE_STAGE_ARGUMENTS, evaluate_on_real_sets
from real_sets import load_real_set
from textrec.modeling import CRNNConfig, CRNNForTextRecognition
from textrec.processing.inference import load_recognizer, recognize

VARIANTS = {
    "fast": "the release's size: VGG of 32-224 channels, BiLSTM of 224",
    "paper": "the CRNN paper's size: VGG of 64-512 channels, BiLSTM of 256",
}
"""`--preset` of each variant -> what it is."""


def arguments_for(train_samples: int):
    def training_arguments(variant: str, output_dir: Path, train_minutes: float) -> list[str]:
        stage = [argument for argument in ENGINE_STAGE_ARGUMENTS
                 if not argument.startswith(("--max_train_samples=", "--eval_", "--max_eval_samples="))]
        return ["--model=crnn", f"--preset={variant}", *stage, f"--max_train_samples={train_samples}",
                "--learning_rate=7e-4", "--warmup_steps=300", "--max_steps=100000",
                f"--max_train_cpu_minutes={train_minutes}", "--eval_strategy=no", "--save_steps=100000",
                f"--output_dir={output_dir}", f"--eval_dataset={ENGINE_DATA}", "--max_eval_samples=50"]

    return training_arguments


def render_table(rows: dict, train_minutes: float, command: str) -> str:
    trained = all("results" in row for row in rows.values())
    sets = list(next(iter(rows.values()))["results"]) if trained else []
    names = [name.split(" (")[0].removeprefix("real: ") for name in sets]
    what = (f"real development sets, CER under each set's protocol, after {train_minutes:g} CPU minutes of training "
            "from scratch on one thread per run; " if trained else "")
    lines = [f"CRNN sizes: {what}lines/s: one thread on the development receipts (image files to text).", "",
             "| preset | size | parameters | " + ("steps | " + " | ".join(names) + " | " if trained else "")
             + "lines/s per core |",
             "|---|---|---|" + ("---|" * (len(sets) + 1) if trained else "") + "---|"]
    for variant, row in rows.items():
        cells = [str(row["steps"]), *(f"{row['results'][name]['cer']:.2%}" for name in sets)] if trained else []
        lines.append(f"| `{variant}` | {VARIANTS[variant]} | {row['parameters'] / 1e6:.2f} M | "
                     + "".join(f"{cell} | " for cell in cells) + f"{row['lines_per_second']:.0f} |")
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--train_minutes", type=float, default=15.0, help="CPU minutes of training per variant.")
    parser.add_argument("--train_samples", type=int, default=50000, help="Engine lines (the release's stage).")
    parser.add_argument("--output_dir", type=Path, default=Path("runs/ablation-size"))
    parser.add_argument("--output_markdown", type=Path)
    args = parser.parse_args(argv)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    if args.train_minutes:
        train_variants(args.variants, args.output_dir, args.train_minutes, 1, 1,
                       arguments_of=arguments_for(args.train_samples))
    torch.set_num_threads(1)  # lines/s per core
    _, processor = load_recognizer("crnn-lines")
    paths = [str(path) for path in load_real_set("receipts")[0]]
    rows = {}
    for variant in args.variants:
        if args.train_minutes:
            model, processor = load_recognizer(str(args.output_dir / variant))
            state = json.loads((args.output_dir / variant / "trainer_state.json").read_text())
            rows[variant] = {"steps": state["global_step"], "results": evaluate_on_real_sets(model, processor)}
        else:
            config = CRNNConfig.from_preset(variant, vocab_size=len(processor.tokenizer))
            model, rows[variant] = CRNNForTextRecognition(config).eval(), {}
        recognize(model, processor, paths[:64], progress=False)  # warm-up
        reading = recognize(model, processor, paths, batch_size=32, progress=False)
        rows[variant].update(parameters=model.num_parameters(), lines_per_second=len(paths) / reading.seconds)
    command = shlex.join(["python", "scripts/lab/ablation_model_size.py", *(sys.argv[1:] if argv is None else argv)])
    table = render_table(rows, args.train_minutes, command)
    (args.output_dir / "results.json").write_text(json.dumps(rows, indent=2))
    if args.output_markdown:
        args.output_markdown.write_text(table + "\n")
    print(table)
    return rows


if __name__ == "__main__":
    main()
