"""The recognition benchmark end to end on its seconds-sized configuration."""

import json
import math
import shutil

from textrec.scripts import benchmark_recognition


def test_smoke_configuration_gives_a_complete_table(tmp_path):
    has_tesseract = shutil.which("tesseract") is not None
    argv = [
        "--train_minutes=0.2",
        "--train_samples=64",
        "--test_samples=4",
        "--eval_samples=8",
        "--preset=tiny",
        "--calibration_steps=2",
        "--num_proc=1",
        f"--output_dir={tmp_path}",
    ]
    benchmark_recognition.main(argv if has_tesseract else [*argv, "--skip_tesseract"])

    systems = ["self-attention", "ViT+TrOCR", "Tesseract"] if has_tesseract else ["self-attention", "ViT+TrOCR"]
    table_rows = [line for line in (tmp_path / "table.md").read_text().splitlines() if line.startswith("| ")]
    assert [row.split("|")[1].strip() for row in table_rows[1:]] == systems
    results = json.loads((tmp_path / "results.json").read_text())
    assert list(results["systems"]) == systems
    for name in systems:
        for test_set in ("print", "handwriting"):
            numbers = results["systems"][name][test_set]
            assert all(math.isfinite(numbers[key]) for key in ("cer", "wer", "lines_per_second")), (name, numbers)
    assert "benchmark_recognition" in results["command"]
