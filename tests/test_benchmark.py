"""The recognition benchmark end to end on its seconds-sized configuration, and adding systems to an
earlier run."""

import json
import math
import shutil

import pytest

import benchmark_recognition, recognition_table

HAS_TESSERACT = shutil.which("tesseract") is not None
TINY = [
    "--train_minutes=0.1",
    "--train_samples=64",
    "--test_samples=4",
    "--eval_samples=8",
    "--preset=tiny",
    "--calibration_steps=2",
    "--num_proc=1",
]
FIRST_SYSTEMS = ["self-attention", "vit-trocr", *(["tesseract"] if HAS_TESSERACT else [])]
FIRST_ROWS = ["self-attention", "ViT+TrOCR", *(["Tesseract"] if HAS_TESSERACT else [])]
RESNET_TRANSFORMER_ROWS = ["resnet-transformer (greedy)", "resnet-transformer (beam 4)"]


def table_rows(output_dir) -> list[str]:
    lines = (output_dir / "table.md").read_text().splitlines()
    return [line.split("|")[1].strip() for line in lines if line.startswith("| ")][1:]


def results(output_dir) -> dict:
    return json.loads((output_dir / "results.json").read_text())


def scores_are_finite(row: dict) -> bool:
    return all(
        math.isfinite(row[test_set][key])
        for test_set in ("print", "handwriting")
        for key in ("cer", "wer", "lines_per_second")
    )


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """The folder of a run of every system but resnet-transformer (Tesseract only where installed)."""
    output_dir = tmp_path_factory.mktemp("first-run")
    benchmark_recognition.main([*TINY, f"--output_dir={output_dir}", "--systems", *FIRST_SYSTEMS])
    return output_dir


@pytest.fixture(scope="module")
def merged_run(first_run, tmp_path_factory):
    """A copy of `first_run`'s folder, to which a second run added resnet-transformer."""
    output_dir = tmp_path_factory.mktemp("merged-run") / "benchmark"
    shutil.copytree(first_run, output_dir)
    benchmark_recognition.main([*TINY, f"--output_dir={output_dir}", "--systems", "resnet-transformer"])
    return output_dir


@pytest.mark.slow
def test_smoke_configuration_gives_a_complete_table(first_run):
    assert table_rows(first_run) == FIRST_ROWS
    first = results(first_run)
    assert list(first["systems"]) == FIRST_ROWS
    assert all(scores_are_finite(row) for row in first["systems"].values()), first["systems"]
    assert "benchmark_recognition" in first["command"]


@pytest.mark.slow
def test_resnet_transformer_is_read_greedily_and_with_beam_4(merged_run):
    rows = results(merged_run)["systems"]
    greedy, beam = (rows[name] for name in RESNET_TRANSFORMER_ROWS)
    assert (greedy["num_beams"], beam["num_beams"]) == (1, 4)
    assert scores_are_finite(greedy) and scores_are_finite(beam), (greedy, beam)
    assert greedy["steps"] == beam["steps"] >= 1  # one model, trained once


@pytest.mark.slow
def test_a_second_run_keeps_the_rows_of_the_first(first_run, merged_run):
    first, merged = results(first_run), results(merged_run)
    assert table_rows(merged_run) == [*FIRST_ROWS[:2], *RESNET_TRANSFORMER_ROWS, *FIRST_ROWS[2:]]
    assert {row: merged["systems"][row] for row in FIRST_ROWS} == first["systems"]
    assert [run["rows"] for run in merged["earlier_runs"]] == [FIRST_ROWS]
    commands = (merged_run / "table.md").read_text().split("Commands:")[1]
    assert "--systems resnet-transformer" in commands and "--systems self-attention" in commands
    predictions = json.loads((merged_run / "predictions.json").read_text())["predictions"]
    assert list(predictions) == list(merged["systems"])


@pytest.mark.slow
def test_a_run_with_other_settings_is_not_merged(first_run, tmp_path):
    output_dir = tmp_path / "benchmark"
    shutil.copytree(first_run, output_dir)
    before = (output_dir / "results.json").read_text()
    with pytest.raises(SystemExit, match="seed 0 then, 1 now"):
        benchmark_recognition.main(
            [*TINY, "--seed=1", f"--output_dir={output_dir}", "--systems", "resnet-transformer"]
        )
    assert (output_dir / "results.json").read_text() == before
    assert not (output_dir / "resnet-transformer").exists()


def test_results_of_the_first_format_merge(tmp_path):
    """results.json as written before --systems existed: no earlier_runs, skip_tesseract in the settings."""
    settings = {key: 1 for key in recognition_table.MERGE_SETTINGS} | {
        "max_steps": None, "vit_layers": 2, "tesseract_lang": "eng", "tesseract_version": "tesseract 5.3.0",
        "skip_tesseract": False,
    }
    scores = {test_set: {"cer": 0.1, "wer": 0.2, "lines_per_second": 3.0} for test_set in ("print", "handwriting")}
    trained = {"parameters": 10, "steps": 5, "train_minutes_used": 1.0, "cores_used_in_training": 2.0, **scores}
    earlier = {
        "command": "python scripts/lab/benchmark_recognition.py --train_minutes 1",
        "settings": settings,
        "machine_load_at_phase_start": {"1. Data": 2.0},
        "systems": {"self-attention": trained, "ViT+TrOCR": trained, "Tesseract": scores},
    }
    (tmp_path / "results.json").write_text(json.dumps(earlier))
    predictions = {"references": {}, "predictions": dict.fromkeys(earlier["systems"], {})}
    (tmp_path / "predictions.json").write_text(json.dumps(predictions))
    now = {**settings, "vit_layers": None, "tesseract_version": None}
    del now["skip_tesseract"]
    read = recognition_table.read_earlier_run(tmp_path, now, ["resnet-transformer"])
    this_run = {
        "command": "python scripts/lab/benchmark_recognition.py --systems resnet-transformer",
        "settings": now,
        "machine_load_at_phase_start": {"1. Data": 2.0},
        "systems": dict.fromkeys(RESNET_TRANSFORMER_ROWS, trained),
        "earlier_runs": [],
    }
    merged, _ = recognition_table.merge_earlier_run(this_run, dict.fromkeys(RESNET_TRANSFORMER_ROWS, {}), *read)

    assert list(merged["systems"]) == ["self-attention", "ViT+TrOCR", *RESNET_TRANSFORMER_ROWS, "Tesseract"]
    assert (merged["settings"]["vit_layers"], merged["settings"]["tesseract_version"]) == (2, "tesseract 5.3.0")
    assert recognition_table.render_commands(merged).splitlines() == [
        "Commands:",
        f"- `{earlier['command']}`: self-attention, ViT+TrOCR, Tesseract",
        f"- `{this_run['command']}`: {', '.join(RESNET_TRANSFORMER_ROWS)}",
    ]
    assert "tesseract 5.3.0" in recognition_table.render_table(merged)


def test_ablation_variants_change_one_thing_of_the_release_command(tmp_path):
    import ablation_recipe
    from textrec.processing.training import parse_arguments

    release_arguments = ablation_recipe.training_arguments("fast", tmp_path / "fast", train_minutes=3)
    assert [a for a in release_arguments if a.startswith("--max_train_minutes")] == ["--max_train_minutes=3"]
    model_args, _, training_args = parse_arguments(ablation_recipe.training_arguments("no-ctc", tmp_path / "x", 3))
    assert model_args.preset == "fast" and '"ctc_loss_weight": 0.0' in model_args.config_overrides
    model_args, _, training_args = parse_arguments(ablation_recipe.training_arguments("base", tmp_path / "x", 3))
    assert model_args.preset == "base" and training_args.max_train_minutes == 3


def test_ablation_table_shows_each_decoding_or_na():
    import ablation_recipe

    scores = {"print": {"cer": 0.1}, "handwriting-style": {"cer": 0.2}}
    rows = {
        "fast": {"parameters": 2_500_000, "steps": 10, "results": {"attention": scores, "ctc": scores}},
        "no-ctc": {"parameters": 2_400_000, "steps": 12, "results": {"attention": scores}},
    }
    table = ablation_recipe.render_table(rows, 5, 1, "python scripts/lab/ablation_recipe.py")
    assert "| fast |" in table and "| 10.00% | 10.00% | 20.00% | 20.00% |" in table
    assert "| 10.00% | n/a | 20.00% | n/a |" in table


def test_percent_with_interval_is_wilson():
    from intervals import percent_with_interval

    # CoMER's table: 705 of 1,000 formulas exactly right.
    assert percent_with_interval(705, 1000) == "70.5 (67.6-73.2)"
    # The interval stays inside [0, 100] at the ends, where the normal approximation would leave it.
    assert percent_with_interval(0, 20) == "0.0 (0.0-16.1)" and percent_with_interval(20, 20) == "100.0 (83.9-100.0)"
    assert percent_with_interval(0, 0) == "-"


def test_paired_accuracy_difference_resamples_the_same_items_for_both_systems():
    from intervals import paired_accuracy_difference

    # The same answers: no difference, and no resample can make one.
    same = [True, False] * 50
    assert paired_accuracy_difference(same, same) == "+0.0 (+0.0 to +0.0)"
    # Right on 10 more of 100 items, wrong on none of the other's: every resample shows a gain, never a loss.
    better, baseline = [True] * 90 + [False] * 10, [True] * 80 + [False] * 20
    point, interval = paired_accuracy_difference(better, baseline).split(" ", 1)
    low, high = (float(bound) for bound in interval.strip("()").split(" to "))
    assert point == "+10.0" and 0 < low < 10 < high <= 20
    with pytest.raises(ValueError, match="same items"):
        paired_accuracy_difference(better, baseline[:50])
