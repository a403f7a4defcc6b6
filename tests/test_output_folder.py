"""A training run's output folder is trustworthy: a finished run is not trained again, a kill at any moment (the
final save included) resumes to the same weights, a damaged checkpoint is skipped for the one before, another run,
model or concurrent training is refused with the work beside it kept byte for byte, and a run that trained
nothing, diverged or filled the disk says so instead of saving a model."""

import errno
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from textrec.processing.training import output_folder
from textrec.processing.training.output_folder import LOCK_FILE, RUN_RECORD, STAGING_FOLDER, last_complete_checkpoint
from textrec.processing.training.trainer import FiniteTrainingCallback, TextRecognitionTrainer, TrainingFailed
from textrec.scripts import train as train_cli

from .test_train_cli import tiny_run_arguments

train_module = importlib.import_module("textrec.processing.training.train")

STEPS = 4


def with_changes(arguments: list[str], **changes) -> list[str]:
    """Command-line `arguments` with `--name=value` for each change, replacing the one given if any."""
    arguments = list(arguments)
    for name, value in changes.items():
        given = [index for index, argument in enumerate(arguments) if argument.startswith(f"--{name}=")]
        if given:
            arguments[given[0]] = f"--{name}={value}"
        else:
            arguments.append(f"--{name}={value}")
    return arguments


def run_arguments(folder, **changes):
    """The finished run's command (4 steps, checkpoints at 2 and 4), with `changes`."""
    return with_changes(tiny_run_arguments(folder, max_steps=STEPS), **changes)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("finished") / "run"
    train_cli.run(run_arguments(folder))
    return folder


def copy_of(run, tmp_path):
    shutil.copytree(run, tmp_path / "run")
    return tmp_path / "run"


def snapshot(folder) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def one_line_error(argv, capsys) -> str:
    """Runs textrec-train's entry point, which must fail with one line on stderr; returns that line."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        train_cli.main(argv)
    assert exit_info.value.code == 1
    # (after a progress bar, the error goes on the bar's line)
    errors = [line[line.index("textrec-train: error: "):] for line in capsys.readouterr().err.splitlines()
              if "textrec-train: error: " in line]
    assert len(errors) == 1, errors
    return errors[0]


def assert_same_weights(expected_folder, actual_folder):
    expected = load_file(expected_folder / "model.safetensors")
    actual = load_file(actual_folder / "model.safetensors")
    assert expected.keys() == actual.keys()
    for name in expected:
        assert torch.equal(expected[name], actual[name]), name


def mark_unfinished(folder):
    record = json.loads((folder / RUN_RECORD).read_text())
    record["finished"] = None
    (folder / RUN_RECORD).write_text(json.dumps(record))


# ------------------------------------------------------------------------------------------------ reruns


def test_rerunning_a_finished_run_changes_nothing_and_says_so(finished_run, tmp_path, caplog):
    folder = copy_of(finished_run, tmp_path)
    before = snapshot(folder)
    with caplog.at_level("WARNING", logger="textrec.train"):
        metrics = train_cli.run(run_arguments(folder))
    assert f"{folder}: already finished at step {STEPS}; nothing to do (use --overwrite_output_dir to train again)" in caplog.text
    assert snapshot(folder) == before  # no step 5, no checkpoint rotated, no lock left behind
    results = json.loads((folder / "all_results.json").read_text())
    assert metrics["eval_cer"] == results["eval_cer"]


def test_overwrite_output_dir_trains_afresh_without_the_old_checkpoints(finished_run, tmp_path):
    folder = copy_of(finished_run, tmp_path)
    train_cli.run(with_changes(tiny_run_arguments(folder, max_steps=2), dataset="synthetic-digits", overwrite_output_dir=True))
    assert sorted(path.name for path in folder.glob("checkpoint-*")) == ["checkpoint-2"]
    record = json.loads((folder / RUN_RECORD).read_text())
    assert record["dataset"] == "synthetic-digits" and record["finished"] == {"step": 2, "max_steps": 2}
    assert json.loads((folder / "trainer_state.json").read_text())["global_step"] == 2


def test_a_larger_max_steps_trains_on_from_the_finished_run(finished_run, tmp_path):
    folder = copy_of(finished_run, tmp_path)
    train_cli.run(run_arguments(folder, max_steps=STEPS + 2, eval_steps=STEPS + 2))
    state = json.loads((folder / "trainer_state.json").read_text())
    assert state["global_step"] == STEPS + 2
    losses = [entry for entry in state["log_history"] if "loss" in entry]
    assert [entry["step"] for entry in losses] == [2, 4, 6]  # steps 1-4 from the finished run, 5 and 6 trained on
    assert json.loads((folder / RUN_RECORD).read_text())["finished"] == {"step": STEPS + 2, "max_steps": STEPS + 2}


def without_record(folder):
    (folder / RUN_RECORD).unlink()  # a run of a textrec from before run records
    return folder


def only_the_model(folder):
    for name in (RUN_RECORD, "trainer_state.json", "training_args.bin", "all_results.json"):
        (folder / name).unlink()
    for checkpoint in folder.glob("checkpoint-*"):
        shutil.rmtree(checkpoint)
    return folder


def fine_tune_in_place(folder):
    return [a for a in run_arguments(folder) if not a.startswith("--model=")] + [f"--model_name_or_path={folder}"]


REFUSED = {
    "another dataset": (None, lambda f: run_arguments(f, dataset="synthetic-digits"),
                        "holds another run: its --dataset is 'synthetic-lines', this run's 'synthetic-digits'"),
    "another architecture": (None, lambda f: run_arguments(f, model="crnn"),
                             "holds another run: its --model is 'self-attention', this run's 'crnn'"),
    "another preset": (None, lambda f: run_arguments(f, preset="base"),
                       "holds another run: its --preset is 'tiny', this run's 'base'"),
    "another training size": (None, lambda f: run_arguments(f, max_train_samples=24),
                              "its --max_train_samples is 48, this run's 24"),
    "another configuration, unrecorded run": (without_record,
                                              lambda f: run_arguments(f, config_overrides='{"hidden_size": 64}'),
                                              "of another configuration (hidden_size: 32 there, 64 now"),
    "another architecture, unrecorded run": (without_record, lambda f: run_arguments(f, model="crnn"),
                                             "holds a 'textrec-self-attention' model"),
    "another learning rate": (None, lambda f: run_arguments(f, learning_rate=0.123),
                              "holds another run: its --learning_rate is "),
    "another seed": (None, lambda f: run_arguments(f, seed=8), "holds another run: its --seed is 7, this run's 8"),
    "more steps, no checkpoint to go on from": (
        lambda f: [shutil.rmtree(checkpoint) for checkpoint in f.glob("checkpoint-*")],
        lambda f: run_arguments(f, max_steps=STEPS + 2),
        f"finished at step {STEPS} of {STEPS} and kept no checkpoint (--save_strategy no?) to train on from"),
    "fp16 on a CPU": (None, lambda f: run_arguments(f, fp16=True), "--fp16 trains in half precision on a GPU only"),
    "a model no run left there": (only_the_model, run_arguments,
                                  "holds a model (config.json, model.safetensors) that no training run left there"),
    "fine-tuning in place": (None, fine_tune_in_place, "is the model being fine-tuned"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_folder_holding_other_work_is_refused_and_kept_byte_for_byte(finished_run, tmp_path, capsys, case):
    prepare, arguments, message = REFUSED[case]
    folder = copy_of(finished_run, tmp_path)
    if prepare is not None:
        prepare(folder)
    before = snapshot(folder)
    error = one_line_error(arguments(folder), capsys)
    assert message in error, error
    assert snapshot(folder) == before


def test_a_finished_run_on_a_folder_whose_labels_were_edited_is_not_taken_for_this_run(tmp_path, capsys):
    """The run record keeps a fingerprint of the labels of the dataset folders it learned from: a rerun after they
    were edited would otherwise find the run finished and train nothing on the new labels."""
    from textrec.processing.data import make_synthetic_lines

    data = tmp_path / "my-lines"
    data.mkdir()
    lines = make_synthetic_lines(8, seed=3, augment=False, max_chars=12)
    rows = []
    for index, (image, text) in enumerate(zip(lines["image"], lines["text"])):
        image.save(data / f"{index}.png")
        rows.append(json.dumps({"file_name": f"{index}.png", "text": text}))
    (data / "metadata.jsonl").write_text("\n".join(rows) + "\n")
    arguments = with_changes(tiny_run_arguments(tmp_path / "run", max_steps=2), dataset=str(data), eval_steps=2,
                             eval_split="train",
                             max_train_samples=8, max_eval_samples=4)
    train_cli.run(arguments)
    train_cli.run(arguments)  # the same data: finished, nothing to do
    (data / "metadata.jsonl").write_text("\n".join(rows[:-1] + [json.dumps({"file_name": "7.png", "text": "edited"})]) + "\n")
    before = snapshot(tmp_path / "run")
    assert "holds another run: its training data's content (the metadata.jsonl of its folders) is" in one_line_error(
        arguments, capsys)
    assert snapshot(tmp_path / "run") == before


def test_reading_a_folder_whose_newer_run_has_not_finished_says_the_model_is_the_earlier_one(finished_run, tmp_path,
                                                                                                caplog):
    from textrec.processing.inference import load_recognizer

    folder = copy_of(finished_run, tmp_path)
    with caplog.at_level("WARNING", logger="textrec"):
        load_recognizer(str(folder))
    assert "has not finished" not in caplog.text
    mark_unfinished(folder)
    with caplog.at_level("WARNING", logger="textrec"):
        load_recognizer(str(folder))
    assert f"{folder}: a training run into this folder has not finished (interrupted, or still training)" in caplog.text


# ------------------------------------------------------------------------------------------------ kills


def half_written_weights(monkeypatch):
    """The final save is killed while writing the weights (into the staging folder)."""
    save_model = TextRecognitionTrainer.save_model

    def killed(self, output_dir=None, *args, **kwargs):
        save_model(self, output_dir, *args, **kwargs)
        if output_dir is not None and output_dir.endswith(STAGING_FOLDER):
            weights = os.path.join(output_dir, "model.safetensors")
            with open(weights, "r+b") as file:
                file.truncate(os.path.getsize(weights) // 2)
            raise KeyboardInterrupt("killed while writing the weights")

    monkeypatch.setattr(TextRecognitionTrainer, "save_model", killed)


def killed_while_moving_into_place(monkeypatch):
    """The final save is killed after some of its files are renamed into place, before the weights."""
    replace, moved = os.replace, []

    def killed(source, target, *args, **kwargs):
        if STAGING_FOLDER in str(source):
            moved.append(target)
            if len(moved) == 3:
                raise KeyboardInterrupt("killed while moving the saved files into place")
        return replace(source, target, *args, **kwargs)

    monkeypatch.setattr(output_folder.os, "replace", killed)


def killed_while_writing_the_card(monkeypatch):
    def killed(self, *args, **kwargs):
        with open(os.path.join(self.args.output_dir, "README.md"), "w") as card:
            card.write("---\nmodel-in")
        raise KeyboardInterrupt("killed while writing the model card")

    monkeypatch.setattr(TextRecognitionTrainer, "create_model_card", killed)


KILLS = {
    "weights half-written": half_written_weights,
    "files half moved into place": killed_while_moving_into_place,
    "card half-written": pytest.param(killed_while_writing_the_card, marks=pytest.mark.slow),
}


@pytest.mark.parametrize("kill", list(KILLS.values()), ids=list(KILLS))
def test_a_kill_during_the_final_save_resumes_to_the_identical_model(finished_run, tmp_path, monkeypatch, kill):
    """The run had trained its last step and saved its last checkpoint: the rerun trains no step more (none of
    step 5), restores that checkpoint and saves the same weights as the run never killed."""
    folder = tmp_path / "run"
    with monkeypatch.context() as patch:
        kill(patch)
        with pytest.raises(KeyboardInterrupt):
            train_cli.run(run_arguments(folder))
    if (folder / "model.safetensors").exists():  # whatever is in place is whole
        assert output_folder.safetensors_problem(folder / "model.safetensors") is None
    assert json.loads((folder / RUN_RECORD).read_text())["finished"] is None
    train_cli.run(run_arguments(folder))
    assert_same_weights(finished_run, folder)
    assert sorted(path.name for path in folder.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]
    assert json.loads((folder / "trainer_state.json").read_text())["global_step"] == STEPS
    assert json.loads((folder / RUN_RECORD).read_text())["finished"] == {"step": STEPS, "max_steps": STEPS}
    assert (folder / "README.md").read_text() == (finished_run / "README.md").read_text()
    assert not (folder / STAGING_FOLDER).exists()


@pytest.mark.slow
def test_a_run_sigkilled_at_its_final_save_resumes_to_the_identical_model(tmp_path):
    """A real kill (SIGKILL, no clean-up: the lock stays, naming a dead pid) as soon as the final save begins.
    The uninterrupted run it is compared with runs in a process of its own too: the test process's torch threads
    may have been changed by other tests, and a different thread count sums in another order."""
    reference = tmp_path / "reference"
    subprocess.run([sys.executable, "-m", "textrec.scripts.train", *run_arguments(reference)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    folder = tmp_path / "run"
    command = [sys.executable, "-m", "textrec.scripts.train", *run_arguments(folder)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while process.poll() is None and not (folder / STAGING_FOLDER).exists():
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended before its final save began"
    assert (folder / LOCK_FILE).exists()
    train_cli.run(run_arguments(folder))
    assert_same_weights(reference, folder)
    assert not (folder / LOCK_FILE).exists()


# ------------------------------------------------------------------------------------------------ checkpoints


def truncated(name):
    def cut(checkpoint):
        data = (checkpoint / name).read_bytes()
        (checkpoint / name).write_bytes(data[: len(data) // 2])

    return cut


def emptied(name):
    return lambda checkpoint: (checkpoint / name).write_bytes(b"")


DAMAGES = {
    "optimizer.pt cut short": (truncated("optimizer.pt"), "optimizer.pt is cut short or corrupt"),
    "rng_state.pth cut short": (truncated("rng_state.pth"), "rng_state.pth is cut short or corrupt"),
    "scheduler.pt empty": (emptied("scheduler.pt"), "scheduler.pt is empty"),
    "model.safetensors cut short": (truncated("model.safetensors"), "model.safetensors is cut short or corrupt"),
    "trainer_state.json cut short": (truncated("trainer_state.json"), "trainer_state.json is not valid JSON"),
    "config.json cut short": (truncated("config.json"), "config.json is not valid JSON"),
    "no optimizer.pt": (lambda checkpoint: (checkpoint / "optimizer.pt").unlink(), "optimizer.pt is missing"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_newest_checkpoint_is_skipped_for_the_one_before(finished_run, tmp_path, caplog, damage):
    breaks, message = DAMAGES[damage]
    folder = copy_of(finished_run, tmp_path)
    breaks(folder / "checkpoint-4")
    with caplog.at_level("WARNING", logger="textrec.train"):
        assert last_complete_checkpoint(folder) == str(folder / "checkpoint-2")
    assert f"Skipping the incomplete checkpoint {folder / 'checkpoint-4'}: {message}" in caplog.text


def test_a_run_whose_newest_checkpoint_is_damaged_resumes_from_the_one_before_to_the_same_model(
    finished_run, tmp_path, caplog
):
    """Killed after step 4, its checkpoint-4 written with a truncated optimizer.pt: the rerun resumes from
    checkpoint-2, trains steps 3 and 4 again, and ends with the weights of the run never killed."""
    folder = copy_of(finished_run, tmp_path)
    mark_unfinished(folder)
    for name in ("model.safetensors", "README.md", "trainer_state.json"):
        (folder / name).unlink()
    truncated("optimizer.pt")(folder / "checkpoint-4")
    with caplog.at_level("INFO", logger="textrec.train"):
        train_cli.run(run_arguments(folder))
    assert "optimizer.pt is cut short or corrupt" in caplog.text
    assert f"Resuming from the last complete checkpoint in the output folder: {folder / 'checkpoint-2'}" in caplog.text
    assert_same_weights(finished_run, folder)


# ------------------------------------------------------------------------------------------------ the lock


def test_a_second_training_is_refused_naming_the_holder_and_a_dead_holders_lock_is_taken_over(
    finished_run, tmp_path, capsys, caplog
):
    folder = copy_of(finished_run, tmp_path)
    holder = subprocess.Popen(["sleep", "60"])
    try:
        (folder / LOCK_FILE).write_text(f"{holder.pid} {output_folder.socket.gethostname()}\n")
        before = snapshot(folder)
        error = one_line_error(run_arguments(folder), capsys)
        assert f"another training (pid {holder.pid}) is writing into {folder}" in error
        assert snapshot(folder) == before
    finally:
        holder.kill()
        holder.wait()
    with caplog.at_level("WARNING", logger="textrec.train"):
        train_cli.run(run_arguments(folder))
    assert f"Taking over the lock {folder / LOCK_FILE} left by pid {holder.pid}, which is no longer running" in caplog.text
    assert "already finished" in caplog.text
    assert not (folder / LOCK_FILE).exists()


@pytest.mark.slow
def test_two_concurrent_trainings_into_one_folder(tmp_path, capsys, caplog):
    """While one training runs, a second into the same folder is refused naming the first's pid; once the first
    is killed, its lock is taken over and the run resumes."""
    folder = tmp_path / "run"
    arguments = with_changes(tiny_run_arguments(folder, max_steps=20), eval_steps=20)
    first = subprocess.Popen([sys.executable, "-m", "textrec.scripts.train", *arguments],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not (folder / "checkpoint-2" / "trainer_state.json").exists() and time.monotonic() < deadline:
            assert first.poll() is None, "the first training ended early"
            time.sleep(0.1)
        error = one_line_error(arguments, capsys)
        assert f"another training (pid {first.pid}) is writing into {folder}" in error
    finally:
        first.kill()
        first.wait()
    with caplog.at_level("WARNING", logger="textrec.train"):
        train_cli.run(arguments)
    assert f"left by pid {first.pid}, which is no longer running" in caplog.text
    assert json.loads((folder / RUN_RECORD).read_text())["finished"] == {"step": 20, "max_steps": 20}


# ------------------------------------------------------------------------------------------------ no false success


def test_a_diverging_run_stops_at_the_first_non_finite_loss_and_saves_nothing(tmp_path, capsys):
    folder = tmp_path / "run"
    error = one_line_error(tiny_run_arguments(folder, max_steps=6, learning_rate=1e9), capsys)
    assert "training diverged at step" in error and ("the loss became nan" in error or "the loss became inf" in error)
    assert not (folder / "model.safetensors").exists() and not (folder / "README.md").exists()


def test_weights_that_become_non_finite_stop_training_naming_them():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    callback = FiniteTrainingCallback()
    callback.on_train_begin(None, None, None, model=model)
    state = type("State", (), {"global_step": 7})()
    callback.on_step_end(None, state, None, model=model)  # all finite
    with torch.no_grad():
        model[1].bias.fill_(float("inf"))
    with pytest.raises(TrainingFailed, match=r"step 7: 1 of 4 weight tensors became NaN or infinite \(1.bias"):
        callback.on_step_end(None, state, None, model=model)


def test_a_run_that_trains_no_step_fails_and_saves_nothing(tmp_path, capsys, monkeypatch):
    """The check before training (every batch dropped) taken away, the one after it still refuses to save."""
    monkeypatch.setattr(train_module, "check_a_batch_trains", lambda trainer: None)
    folder = tmp_path / "run"
    error = one_line_error(
        with_changes(tiny_run_arguments(folder, max_steps=2), dataloader_drop_last=True, per_device_train_batch_size=64),
        capsys,
    )
    assert "training ran no step (from step 0, to step 2)" in error
    assert not (folder / "model.safetensors").exists() and not (folder / "README.md").exists()


@pytest.mark.parametrize(
    "error, free, message",
    [
        (OSError(errno.ENOSPC, "No space left on device", "out/model.safetensors"), 10**12,
         "no space left on device while writing out/model.safetensors"),
        (RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598"), 0,
         "no space left on device while writing out/checkpoint-2"),
        (RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598"), 10**12,
         "could not write out/checkpoint-2 (torch: [enforce fail"),
        (RuntimeError("safetensors: I/O error: No space left on device (os error 28)"), 10**12,
         "no space left on device while writing out/checkpoint-2"),
    ],
)
def test_a_failed_write_is_said_as_a_full_disk(monkeypatch, error, free, message):
    monkeypatch.setattr(output_folder, "free_bytes", lambda path: free)
    replacement = output_folder.full_disk_error(error, "out/checkpoint-2")
    assert str(replacement).startswith(message)
    assert output_folder.full_disk_error(RuntimeError("something else"), "out") is None


def test_a_full_disk_while_saving_a_checkpoint_is_named(tmp_path, capsys, monkeypatch):
    def disk_full(self, output_dir):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")

    monkeypatch.setattr(TextRecognitionTrainer, "_save_optimizer_and_scheduler", disk_full)
    monkeypatch.setattr(output_folder, "free_bytes", lambda path: 0)
    folder = tmp_path / "run"
    error = one_line_error(tiny_run_arguments(folder, max_steps=2), capsys)
    assert f"no space left on device while writing {folder / 'checkpoint-2'}" in error
    assert "inline_container" not in error


@pytest.mark.parametrize("dataset_file", ["metadata.jsonl", "line-0001.png"])
def test_training_into_a_dataset_folder_is_refused_even_with_overwrite(tmp_path, capsys, dataset_file):
    data = tmp_path / "my-lines"
    data.mkdir()
    (data / dataset_file).write_bytes(b"{}\n")
    (data / "README.md").write_text("my dataset\n")
    before = snapshot(data)
    for extra in ([], ["--overwrite_output_dir"]):
        error = one_line_error([*run_arguments(data), *extra], capsys)
        assert "holds a dataset" in error
        assert snapshot(data) == before
