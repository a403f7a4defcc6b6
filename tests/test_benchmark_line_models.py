"""The line-model benchmark's table and curves (its numbers come from a real run: README)."""

import json

import benchmark_line_models as benchmark


def scores(cer: float) -> dict:
    return {"cer": cer, "wer": 2 * cer, "sequence_accuracy": 0.5, "lines_per_second": 40.0}


def test_table_has_a_row_per_system_and_decoding():
    rows = [
        dict(system="a-lines", decoding="ctc", parameters=2_500_000, training="", scores={"print": scores(0.01), "handwriting-style": scores(0.05)}),
        dict(system="Tesseract 5", decoding="--psm 7", parameters=None, training="", scores={"print": scores(0.02), "handwriting-style": scores(0.2)}),
    ]
    table = benchmark.render_table(rows, "python scripts/lab/benchmark_line_models.py").splitlines()
    assert table[0].startswith("| system | reads with | parameters | print CER | print WER | handwriting-style CER")
    assert table[2] == "| `a-lines` | ctc | 2.50 M | 1.00% | 2.00% | 5.00% | 10.00% | 40 |"
    assert table[3] == "| Tesseract 5 | --psm 7 |  | 2.00% | 4.00% | 20.00% | 40.00% | 40 |"
    assert table[-1] == "Command: `python scripts/lab/benchmark_line_models.py`"


def test_curves_are_drawn_for_the_runs_that_exist(tmp_path):
    run = tmp_path / "a-lines"
    run.mkdir()
    history = [{"step": 500, "eval_cer": 0.5}, {"step": 1000, "loss": 1.0}, {"step": 1000, "eval_cer": 0.1}]
    (run / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    drawn = benchmark.draw_curves(["a-lines", "b-lines"], tmp_path, tmp_path / "curves.png")
    assert drawn == ["a-lines"] and (tmp_path / "curves.png").stat().st_size > 1000


def test_the_released_line_models_are_benchmarked():
    assert "self-attention-lines" in benchmark.line_releases()
