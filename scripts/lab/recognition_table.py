"""The table of `benchmark_recognition`: its systems and rows, merging with the rows of an earlier run, and the
markdown it prints."""

import json
import logging
import os
from pathlib import Path

logger = logging.getLogger("textrec.benchmark")

SELF_ATTENTION, VIT_TROCR, RESNET_TRANSFORMER, TESSERACT = (
    "self-attention", "ViT+TrOCR", "resnet-transformer", "Tesseract"
)
SYSTEMS = {
    "self-attention": SELF_ATTENTION,
    "vit-trocr": VIT_TROCR,
    "resnet-transformer": RESNET_TRANSFORMER,
    "tesseract": TESSERACT,
}
"""``--systems`` choice -> name of the system, in the order of the table. A system's rows are named after it:
its name, or its name and a decoding, as in "resnet-transformer (beam 4)"."""
MERGE_SETTINGS = (
    "seed", "train_samples", "eval_samples", "test_samples", "preset", "max_target_length", "train_minutes",
    "max_steps", "calibration_steps", "batch_size", "learning_rate", "warmup_steps", "recognition_batch_size",
    "torch_threads",
)
"""Settings that rows of an earlier run must share with this one to stand in the same table."""
SYSTEM_SETTINGS = {VIT_TROCR: ("vit_layers",), TESSERACT: ("tesseract_lang", "tesseract_version")}
"""Settings that concern one system only: after a merge, those of the run that made its rows."""
TEST_SETS = {"print": "synthetic-lines", "handwriting": "synthetic-lines-handwriting"}
"""Test set name -> synthetic dataset name (the handwriting one renders handwriting-style fonts only)."""


def row_system(row: str) -> str | None:
    """The system of the table row `row` ("resnet-transformer (beam 4)" -> "resnet-transformer"); None for a
    system this script does not know."""
    return next((system for system in SYSTEMS.values() if row == system or row.startswith(f"{system} (")), None)


def table_position(row: str) -> int:
    """Rows follow the order of `SYSTEMS`; unknown systems come last."""
    order = list(SYSTEMS.values())
    system = row_system(row)
    return order.index(system) if system in order else len(order)


def read_earlier_run(output_dir: Path, settings: dict, systems: list[str]) -> tuple[dict, dict] | None:
    """The results and predictions of the earlier run in `output_dir` if it has rows of systems other than
    `systems` (the systems run now), else None.

    Raises:
        SystemExit: its settings differ from `settings` in one of `MERGE_SETTINGS`.
    """
    path = output_dir / "results.json"
    if not path.exists():
        return None
    earlier = json.loads(path.read_text())
    kept = [row for row in earlier["systems"] if row_system(row) not in systems]
    if not kept:
        logger.info("Every row of the earlier run in %s is made again: replacing it", output_dir)
        return None
    differences = [
        f"{key} {earlier['settings'].get(key)!r} then, {settings[key]!r} now"
        for key in MERGE_SETTINGS
        if earlier["settings"].get(key) != settings[key]
    ]
    if differences:
        raise SystemExit(
            f"Not merging with the earlier run in {output_dir} (rows: {', '.join(kept)}): its settings differ "
            f"({'; '.join(differences)}). Use its settings, run every system, or choose another --output_dir."
        )
    logger.info("Keeping the rows of the earlier run in %s for %s", output_dir, ", ".join(kept))
    return earlier, json.loads((output_dir / "predictions.json").read_text())


def merge_earlier_run(
    results: dict, predictions: dict, earlier: dict, earlier_predictions: dict
) -> tuple[dict, dict]:
    """This run's `results` and `predictions` (per row) with the rows of the `earlier` run for the systems not
    run now, the settings that concern those systems only and the commands that made the rows."""
    systems_now = {row_system(row) for row in results["systems"]}
    kept = [row for row in earlier["systems"] if row_system(row) not in systems_now]
    runs = earlier.get("earlier_runs", [])
    rows_of_earlier_runs = {row for run in runs for row in run["rows"]}
    runs = [
        *runs,
        {
            "command": earlier["command"],
            "rows": [row for row in earlier["systems"] if row not in rows_of_earlier_runs],
            "machine_load_at_phase_start": earlier["machine_load_at_phase_start"],
        },
    ]
    settings = dict(results["settings"])
    for system in {row_system(row) for row in kept}:
        for key in SYSTEM_SETTINGS.get(system, ()):
            settings[key] = earlier["settings"].get(key)
    order = sorted([*results["systems"], *kept], key=table_position)
    rows = {**results["systems"], **{row: earlier["systems"][row] for row in kept}}
    predictions = {**predictions, **{row: earlier_predictions["predictions"][row] for row in kept}}
    merged = {
        **results,
        "settings": settings,
        "systems": {row: rows[row] for row in order},
        "earlier_runs": [
            {**run, "rows": [row for row in run["rows"] if row in kept]} for run in runs if set(run["rows"]) & set(kept)
        ],
    }
    return merged, {row: predictions[row] for row in order}


def render_table(results: dict) -> str:
    settings = results["settings"]
    title = f"### Text recognition on CPU: {settings['train_minutes']:g}-minute training budget per model"
    schedule = (
        f"over {settings['max_steps']:,} steps" if settings["max_steps"]
        else "over the steps that the model's measured step time fits in the budget"
    )
    tesseract = (
        f"; {settings.get('tesseract_version') or 'Tesseract'}: --psm 7 -l {settings['tesseract_lang']}, "
        "OMP_THREAD_LIMIT=1, one process over a list file" if TESSERACT in results["systems"] else ""
    )
    header = (
        f"Held-out synthetic lines ({settings['test_samples']} print, {settings['test_samples']} handwriting-style; "
        f"clean), after a {settings['train_minutes']:g}-minute CPU training budget per model on "
        f"{settings['train_samples']:,} augmented mixed-font lines, with the same training arguments for every "
        f"model (AdamW, batch {settings['batch_size']}, peak learning rate {settings['learning_rate']:g}, "
        f"{settings['warmup_steps']} warm-up steps, cosine schedule {schedule}). Models: batched decoding "
        f"(batch {settings['recognition_batch_size']}, {settings['torch_threads']} torch threads), greedy unless the "
        f"row says beam (the model's own beam search settings){tesseract}. Lines/s on the print set, reading PNG "
        f"files. Training: steps done within the budget, and how many of the {os.cpu_count()} cores training kept "
        "busy on average (fewer when other processes competed for them)."
    )
    columns = ["System", "Parameters", "Training", "Print CER", "Print WER", "Handwriting CER",
               "Handwriting WER", "Lines/s (print)"]
    lines = [title, "", header, "", "| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for name, system in results["systems"].items():
        if system.get("parameters"):
            parameters = f"{system['parameters'] / 1e6:.2f} M"
            training = (
                f"{system['steps']:,} steps in {system['train_minutes_used']:.1f} min "
                f"({system['cores_used_in_training']:.1f} cores)"
            )
        else:
            parameters, training = "n/a", f"pretrained ({settings['tesseract_lang']})"
        cells = [
            name,
            parameters,
            training,
            f"{system['print']['cer']:.2%}",
            f"{system['print']['wer']:.2%}",
            f"{system['handwriting']['cer']:.2%}",
            f"{system['handwriting']['wer']:.2%}",
            f"{system['print']['lines_per_second']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_commands(results: dict) -> str:
    """The command that made the table, or after a merge the commands and the rows each made."""
    runs = results.get("earlier_runs", [])
    if not runs:
        return f"Command: `{results['command']}`"
    rows_of_earlier_runs = {row for run in runs for row in run["rows"]}
    rows_now = [row for row in results["systems"] if row not in rows_of_earlier_runs]
    runs = [*runs, {"command": results["command"], "rows": rows_now}]
    return "\n".join(["Commands:", *(f"- `{run['command']}`: {', '.join(run['rows'])}" for run in runs)])
