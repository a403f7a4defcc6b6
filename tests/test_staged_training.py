"""The paper studies' staged training: a run carried in the repository (`carry_run`) and restored in a new
checkout (`restore_run`) resumes where it stopped, from its newest checkpoint, with its best checkpoint's weights."""

import json
import shutil

import pytest

from textrec.processing.training import parse_arguments, train_from_arguments
from staged_training import (
    RESUME_ONLY_FILES,
    Stage,
    carry_run,
    files_to_carry,
    remove_checkpoints,
    log_history,
    restore_run,
    session_deadline,
    train_stages,
)

DATA = "synthetic-lines:max_chars=6,augment=false"


def tiny_arguments(run_dir, stage, start, minutes):
    return [
        "--model=self-attention", "--preset=tiny", f"--dataset={DATA}", "--max_train_samples=16",
        f"--eval_dataset={DATA}", "--eval_split=validation", "--max_eval_samples=4", "--per_device_train_batch_size=4",
        "--per_device_eval_batch_size=4", f"--max_steps={stage.max_steps}", f"--max_train_minutes={minutes}",
        "--eval_steps=2", "--save_steps=2", "--save_total_limit=2", "--logging_steps=1", "--metric_for_best_model=cer",
        "--disable_tqdm=true", f"--output_dir={run_dir / stage.name}", "--seed=0", "--use_cpu=true",
    ]


def write(path, text="x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_carry_keeps_finished_models_and_the_unfinished_stage_newest_and_best_checkpoints(tmp_path):
    run = tmp_path / "run"
    for name in ("model.safetensors", "trainer_state.json", "config.json"):
        write(run / "short" / name)  # a finished stage: its model at the top (train_stages removed its checkpoints)
        write(run / "stopped" / name)  # a stage the session's time stopped: its model at the top, and checkpoints
    write(run / "short" / "modeling_comer.py")  # the model's code, which textrec does not need
    write(run / "long" / "checkpoint-6" / "modeling_comer.py")
    write(run / "stopped" / "checkpoint-8" / "optimizer.pt")
    write(run / "stopped" / "checkpoint-8" / "model.safetensors")
    write(run / "stopped" / "checkpoint-8" / "trainer_state.json", json.dumps({"best_model_checkpoint": "x/stopped/checkpoint-8"}))
    write(run / "study_result.json")
    for step in (2, 6):
        for name in ("model.safetensors", "config.json", *RESUME_ONLY_FILES):
            write(run / "long" / f"checkpoint-{step}" / name)
    write(run / "long" / "checkpoint-6" / "trainer_state.json", json.dumps({"best_model_checkpoint": "x/long/checkpoint-2"}))
    write(run / "long" / "checkpoint-2" / "trainer_state.json", "{}")

    carried = {str(path.relative_to(run)) for path in files_to_carry(run)}
    assert carried == {
        "study_result.json", "short/model.safetensors", "short/trainer_state.json", "short/config.json",
        "stopped/trainer_state.json", "stopped/config.json",  # its top's weights are the newest checkpoint's
        "stopped/checkpoint-8/optimizer.pt", "stopped/checkpoint-8/model.safetensors",
        "stopped/checkpoint-8/trainer_state.json",
        *(f"long/checkpoint-6/{name}" for name in ("model.safetensors", "config.json", "trainer_state.json", *RESUME_ONLY_FILES)),
        "long/checkpoint-2/model.safetensors", "long/checkpoint-2/config.json", "long/checkpoint-2/trainer_state.json",
    }
    size = carry_run(run, tmp_path / "carried")
    assert size == sum((run / name).stat().st_size for name in carried)

    # In the next checkout the run folder is gone; what was carried comes back, and a newer local file stays.
    restored = tmp_path / "restored"
    write(restored / "study_result.json", "newer")
    restore_run(tmp_path / "carried", restored)
    assert {str(path.relative_to(restored)) for path in restored.rglob("*") if path.is_file()} == carried
    assert (restored / "study_result.json").read_text() == "newer"
    restore_run(tmp_path / "missing", tmp_path / "nothing")  # nothing carried: nothing to do
    assert not (tmp_path / "nothing").exists()


@pytest.mark.slow
def test_carried_run_resumes_from_its_newest_checkpoint_in_a_new_checkout(tmp_path):
    run = tmp_path / "runs" / "study"
    # A session whose time ran out at step 4 of a 6-step stage: textrec-train saved the model and its state at the
    # top of the stage's folder, beside its checkpoints.
    train_from_arguments(*parse_arguments(tiny_arguments(run, Stage("lines", DATA, 4, final=False), None, 10)))
    assert (run / "lines" / "trainer_state.json").is_file() and (run / "lines" / "checkpoint-4").is_dir()
    first_history = log_history(run / "lines")
    carry_run(run, tmp_path / "carried")
    assert (tmp_path / "carried" / "lines" / "checkpoint-4" / "optimizer.pt").is_file()
    shutil.rmtree(tmp_path / "runs")

    restore_run(tmp_path / "carried", run)
    assert train_stages(run, [Stage("lines", DATA, 6, final=False)], lambda *a: tiny_arguments(run, *a),
                        session_deadline(10), patience=2, metric="cer")
    state = json.loads((run / "lines" / "trainer_state.json").read_text())
    assert state["global_step"] == 6
    losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
    # Resumed, not restarted: the first four steps' log is the carried one, and only steps 5 and 6 were trained.
    assert losses[:4] == [entry["loss"] for entry in first_history if "loss" in entry][:4] and len(losses) == 6
    # Finished: its checkpoints are gone (its model is at the top), so the next carry is the model alone.
    assert not list((run / "lines").glob("checkpoint-*"))


def test_a_finished_stage_carried_before_its_checkpoints_were_removed_keeps_its_best_weights(tmp_path):
    # The session ended after training had finished (the best model loaded and saved at the top) and before
    # train_stages removed the checkpoints: the carry leaves the top's weights out, and removing the checkpoints
    # in the next checkout moves the best checkpoint's weights to the top instead of deleting them.
    stage = tmp_path / "run" / "final"
    write(stage / "trainer_state.json", json.dumps({"best_model_checkpoint": "elsewhere/final/checkpoint-2"}))
    write(stage / "model.safetensors", "best")
    write(stage / "checkpoint-2" / "model.safetensors", "best")
    write(stage / "checkpoint-4" / "model.safetensors", "newest")
    write(stage / "checkpoint-4" / "trainer_state.json", json.dumps({"best_model_checkpoint": "elsewhere/final/checkpoint-2"}))
    carry_run(tmp_path / "run", tmp_path / "carried")
    assert not (tmp_path / "carried" / "final" / "model.safetensors").exists()

    restore_run(tmp_path / "carried", tmp_path / "restored")
    remove_checkpoints(tmp_path / "restored" / "final")
    assert (tmp_path / "restored" / "final" / "model.safetensors").read_text() == "best"
    assert not list((tmp_path / "restored" / "final").glob("checkpoint-*"))
