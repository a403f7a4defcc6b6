"""Training in stages that resume across sessions, for the paper studies: a curriculum of easier data first (each
stage starting from the previous stage's model), then a final stage trained until its validation metric has
stopped improving.

Every stage is one textrec-train run in its own folder (`<run_dir>/<stage.name>`), saving checkpoints as it goes,
so that the same command run again (in the next session) resumes it: `train_stages` skips finished stages, resumes
the unfinished one from its last checkpoint and stops when the session's time is spent. A stage has finished when
it reached its step count or, the final one, when `patience` evaluations have passed without a better validation
metric (the early stopping of its training decides; the check here reads the same log history).

A session's ignored folders (`runs/`) do not reach the next session's checkout, so a run can also be carried in
the repository: `carry_run` copies what resumes it into a folder that is committed (`--carry_dir` of the studies:
a finished stage's model and log, an unfinished stage's newest checkpoint whole and its best checkpoint's
weights), and `restore_run` puts it back in the next session before training goes on.
"""

import json
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textrec.processing.training import parse_arguments, train_from_arguments

logger = logging.getLogger("textrec.study")

TRAIN_END = "train_runtime"
"""The log entry that closes a training run; the evaluation after it is of the best model, again."""


@dataclass(frozen=True)
class Stage:
    """One training stage of a run: `dataset` (textrec-train's `--dataset`) for `max_steps` steps, or, the `final`
    stage, until its validation metric plateaus (at most `max_steps`). `name` is its folder in the run."""

    name: str
    dataset: str
    max_steps: int
    final: bool


def log_history(stage_dir: Path) -> list[dict]:
    """The stage's log history: its final state, else its last checkpoint's (an interrupted stage)."""
    states = [stage_dir / "trainer_state.json"]
    states += sorted(stage_dir.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[1]))[::-1]
    for state in states:
        if state.is_file():
            return json.loads(state.read_text())["log_history"]
    return []


def evaluations(history: list[dict], metric: str) -> list[dict]:
    """The evaluations (entries with `eval_<metric>`) made while training, not the one after its end."""
    ends = [index for index, entry in enumerate(history) if TRAIN_END in entry]
    return [entry for entry in history[: ends[-1] if ends else None] if f"eval_{metric}" in entry]


def best_evaluation(history: list[dict], metric: str, greater_is_better: bool = False) -> dict | None:
    scored = evaluations(history, metric)
    if not scored:
        return None
    pick = max if greater_is_better else min
    return pick(scored, key=lambda entry: entry[f"eval_{metric}"])


def stage_finished(stage_dir: Path, stage: Stage, patience: int, metric: str, greater_is_better: bool = False) -> bool:
    """Trained to its step count, or (the final stage) `patience` evaluations without a better `metric`."""
    if not (stage_dir / "trainer_state.json").is_file():
        return False
    state = json.loads((stage_dir / "trainer_state.json").read_text())
    if state["global_step"] >= stage.max_steps:
        return True
    if not stage.final:
        return False
    scores = [entry[f"eval_{metric}"] for entry in evaluations(state["log_history"], metric)]
    if not scores:
        return False
    pick = max if greater_is_better else min
    best = scores.index(pick(scores))
    return len(scores) - 1 - best >= patience


def run_finished(run_dir: Path, stages: list[Stage], patience: int, metric: str, greater_is_better: bool = False) -> bool:
    return all(stage_finished(run_dir / stage.name, stage, patience, metric, greater_is_better) for stage in stages)


def train_stages(
    run_dir: Path,
    stages: list[Stage],
    stage_arguments: Callable[[Stage, Path | None, float], list[str]],
    deadline: float,
    patience: int,
    metric: str,
    greater_is_better: bool = False,
    prepare_stage: Callable[[Stage], None] | None = None,
) -> bool:
    """Trains the run's stages in order as far as the session allows (`deadline`, a `time.monotonic()` value); True
    when all have finished, and then the curriculum stages' weights are deleted (only the final stage's model is
    read, and their logs stay for the curves). `stage_arguments(stage, start, minutes)` gives the stage's
    textrec-train arguments:
    `start` is the previous stage's model folder (None for the first stage), `minutes` the time left.
    `prepare_stage(stage)`, if given, runs (within the session's time) before a stage still to train, such as
    rendering its data."""
    start = None
    for stage in stages:
        stage_dir = run_dir / stage.name
        if not stage_finished(stage_dir, stage, patience, metric, greater_is_better):
            if deadline <= time.monotonic():
                return False
            if prepare_stage is not None:
                prepare_stage(stage)
            minutes = (deadline - time.monotonic()) / 60
            if minutes <= 0:
                return False
            logger.info("%s: training %s for up to %.0f minutes", run_dir.name, stage.name, minutes)
            train_from_arguments(*parse_arguments(stage_arguments(stage, start, minutes)))
            if not stage_finished(stage_dir, stage, patience, metric, greater_is_better):
                return False
        remove_checkpoints(stage_dir)
        start = stage_dir
    for stage in stages[:-1]:
        for path in (run_dir / stage.name).iterdir():
            if is_weights_file(path):
                path.unlink()
    return True


def run_summary(run_dir: Path, stages: list[Stage], metric: str, greater_is_better: bool = False) -> dict:
    """Steps and CPU minutes of the whole run, the final stage's steps per CPU-second, and its best evaluation."""
    histories = [log_history(run_dir / stage.name) for stage in stages]
    final = histories[-1]
    final_steps = max((entry["step"] for entry in final), default=0)
    final_cpu_minutes = max((entry.get("cpu_minutes", 0) for entry in final), default=0)
    return {
        "training_steps": sum(max((entry["step"] for entry in history), default=0) for history in histories),
        "cpu_minutes": sum(max((entry.get("cpu_minutes", 0) for entry in history), default=0) for history in histories),
        "steps_per_cpu_second": final_steps / (60 * final_cpu_minutes) if final_cpu_minutes else None,
        "best": best_evaluation(final, metric, greater_is_better),
    }


def draw_curves(runs: dict[str, Path], stages: list[Stage], metric: str, ylabel: str, title: str, path: Path,
                scale: float = 100.0) -> None:
    """`eval_<metric>` (times `scale`) against the run's total step, one line per run; the curriculum's stage
    boundaries dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for label, run_dir in runs.items():
        offset, steps, scores = 0, [], []
        for stage in stages:
            history = log_history(run_dir / stage.name)
            steps += [offset + entry["step"] for entry in evaluations(history, metric)]
            scores += [scale * entry[f"eval_{metric}"] for entry in evaluations(history, metric)]
            offset += max((entry["step"] for entry in history), default=0)
        if steps:
            axes.plot(steps, scores, marker=".", label=label)
    boundary = 0
    for stage in stages[:-1]:
        boundary += stage.max_steps
        axes.axvline(boundary, color="grey", linestyle="--", linewidth=0.8)
    axes.set(xlabel="training step (curriculum stages dashed)", ylabel=ylabel, title=title)
    axes.grid(True, alpha=0.3)
    if runs:
        axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


CARRY_DIR_HELP = ("A folder in the repository that each run is carried to when this invocation ends and restored "
                  "from when it starts (carry_run, restore_run): what lets a study go on in the next session's checkout.")
CHECKPOINT_PREFIX = "checkpoint-"
RESUME_ONLY_FILES = {"optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"}
"""A checkpoint's files that only resuming from it needs; the best checkpoint is carried without them."""


def checkpoint_step(checkpoint: Path) -> int:
    return int(checkpoint.name.removeprefix(CHECKPOINT_PREFIX))


def is_weights_file(path: Path) -> bool:
    """A saved model's weights: `model.safetensors`, its shards and their index."""
    return path.name.startswith("model") and (path.name.endswith(".safetensors") or path.name.endswith(".safetensors.index.json"))


def files_to_carry(run_dir: Path) -> list[Path]:
    """The files that resume `run_dir` elsewhere: every file outside the checkpoints (each finished stage's model
    and log, the run's results); of each unfinished stage (one with checkpoints) its newest checkpoint whole, and
    the weights and log of its best one, which `load_best_model_at_end` loads. Never the copies of the model's
    code that a saved model folder holds (textrec loads its own classes, and writes the code again when it
    exports).

    A stage with checkpoints is unfinished: a stage stopped by the session's time has its model and
    `trainer_state.json` at the top too, and resumes from its newest checkpoint; the top's weights are a copy of
    its newest or (`load_best_model_at_end`) its best checkpoint's, both carried, so they are left out (its `trainer_state.json` stays: `stage_finished` reads it); `train_stages`
    removes a finished stage's checkpoints (`remove_checkpoints`)."""
    stage_dirs = {checkpoint.parent for checkpoint in run_dir.rglob(f"{CHECKPOINT_PREFIX}*") if checkpoint.is_dir()}
    files = [path for path in run_dir.rglob("*") if path.is_file()
             and not any(part.startswith(CHECKPOINT_PREFIX) for part in path.relative_to(run_dir).parts)
             and not (path.parent in stage_dirs and is_weights_file(path))]
    for stage_dir in stage_dirs:
        checkpoints = sorted((path for path in stage_dir.glob(f"{CHECKPOINT_PREFIX}*") if path.is_dir()), key=checkpoint_step)
        newest = checkpoints[-1]
        files += [path for path in newest.rglob("*") if path.is_file()]
        best = json.loads((newest / "trainer_state.json").read_text()).get("best_model_checkpoint")
        if best and Path(best).name != newest.name and (stage_dir / Path(best).name).is_dir():
            files += [path for path in (stage_dir / Path(best).name).iterdir()
                      if path.is_file() and path.name not in RESUME_ONLY_FILES]
    return sorted(path for path in files if path.suffix != ".py")


def remove_checkpoints(stage_dir: Path) -> None:
    """Deletes a finished stage's checkpoints: its model is at the top of its folder, and nothing resumes it. A
    stage carried before its checkpoints were removed (a session that ended between the two) lacks the weights at
    its top (`files_to_carry`): its best checkpoint's, which training loaded at its end, are moved there first."""
    state = stage_dir / "trainer_state.json"
    best = json.loads(state.read_text()).get("best_model_checkpoint") if state.is_file() else None
    if best and not any(is_weights_file(path) for path in stage_dir.iterdir()):
        for path in (stage_dir / Path(best).name).glob("*"):
            if is_weights_file(path):
                shutil.move(path, stage_dir / path.name)
    for checkpoint in stage_dir.glob(f"{CHECKPOINT_PREFIX}*"):
        if checkpoint.is_dir():
            shutil.rmtree(checkpoint)


def carry_run(run_dir: Path, carried_dir: Path) -> int:
    """Replaces `carried_dir` with what resumes `run_dir` (`files_to_carry`); returns its size in bytes."""
    if carried_dir.exists():
        shutil.rmtree(carried_dir)
    size = 0
    for path in files_to_carry(run_dir):
        target = carried_dir / path.relative_to(run_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        size += path.stat().st_size
    logger.info("%s carried to %s (%.1f MB)", run_dir.name, carried_dir, size / 1e6)
    return size


def restore_run(carried_dir: Path, run_dir: Path) -> None:
    """Copies a carried run back: the files `run_dir` lacks. A run that trained further here keeps its state
    (training resumes from a stage's newest checkpoint, and a finished stage is not trained again)."""
    if not carried_dir.is_dir():
        return
    for path in sorted(carried_dir.rglob("*")):
        target = run_dir / path.relative_to(carried_dir)
        if path.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    logger.info("%s restored from %s", run_dir.name, carried_dir)


def session_deadline(minutes: float) -> float:
    return time.monotonic() + 60 * minutes
