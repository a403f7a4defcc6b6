"""The output folder of a training run, kept trustworthy: the work in it is never lost or silently replaced, and
nothing in it claims what did not happen.

- One training at a time: `OutputFolder.locked()` holds `_textrec.lock` (the holder's pid and host). A second
  training into the folder is refused, naming that pid; a lock left by a process that is gone is taken over.
- What the folder holds: `_textrec_run.json` records the run (its command, architecture, preset, source model,
  vocabulary and training data) and, once everything is written, that it finished and what it returned.
  `OutputFolder.check` refuses a folder holding another run, or a model no run made there; `check_model` one whose
  saved configuration is not the model's (another architecture, preset, `--config_overrides` or vocabulary); a
  finished run is not trained again (`--overwrite_output_dir` starts afresh; a larger `--max_steps` trains on).
- Checkpoints: `last_complete_checkpoint` is the newest one whose every file reads; one with a file missing, empty,
  cut short or unreadable is skipped with a warning for the one before.
- The final model: `save_final_model` writes it into a staging folder, then renames each file into place, so a
  kill leaves the previous file or the new one, never half of one. `checkpoint_ended` tells a run killed after its
  last step (but before its final save) from one to train on.
- A full disk is said as such: `full_disk_error`.

Files whose names start with "_" are left out of the Trainer's uploads to the Hub.
"""

import contextlib
import errno
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
import zipfile
from pathlib import Path

from textrec.model_cards.card import WIDGET_IMAGE
from textrec.processing.inference import RUN_RECORD, safetensors_problem

logger = logging.getLogger("textrec.train")

LOCK_FILE = "_textrec.lock"
STAGING_FOLDER = "_final_save.tmp"

CHECKPOINT_FOLDER = re.compile(r"^checkpoint-(\d+)$")
CHECKPOINT_FILES = ("model.safetensors", "optimizer.pt", "scheduler.pt", "trainer_state.json")
"""What resuming reads from a checkpoint; the Trainer writes `trainer_state.json` last."""
TORCH_FILE_SUFFIXES = (".pt", ".pth", ".bin")
MODEL_FILES = ("config.json", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
"""Files that make a folder hold a model."""
RUN_FILES = ("trainer_state.json", "training_args.bin", "all_results.json")
"""Files that a training run (textrec's or any Trainer's) leaves at the top of its folder."""

RECORDED_AS = {
    "command": "command",
    "architecture": "--model",
    "preset": "--preset",
    "model_name_or_path": "--model_name_or_path",
    "charset": "--charset",
    "dataset": "--dataset",
    "train_split": "--train_split",
    "max_train_samples": "--max_train_samples",
    "corpus": "--corpus",
    "eval_samples": "--eval_samples",
    "config_overrides": "--config_overrides",
    "vocab_size": "--vocab_size",
    "word_vocab_size": "--word_vocab_size",
    "max_chars_per_token": "--max_chars_per_token",
    "learning_rate": "--learning_rate",
    "lr_scheduler_type": "--lr_scheduler_type",
    "warmup_steps": "--warmup_steps",
    "per_device_train_batch_size": "--per_device_train_batch_size",
    "seed": "--seed",
    "dataset_content": "training data's content (the metadata.jsonl of its folders)",
}
"""The run record's fields and the arguments that set them, for messages."""

TRAINING_SETTINGS = ("learning_rate", "lr_scheduler_type", "warmup_steps", "per_device_train_batch_size", "seed")
"""The training arguments a run record keeps beside what the command describes (`training_settings`): a rerun into a
finished run's folder with other values would otherwise be taken for that run, and train nothing."""


def training_settings(training_args) -> dict:
    """The values of `TRAINING_SETTINGS` in `training_args` (a scheduler type as its name)."""
    settings = {name: getattr(training_args, name, None) for name in TRAINING_SETTINGS}
    scheduler = settings["lr_scheduler_type"]
    settings["lr_scheduler_type"] = getattr(scheduler, "value", scheduler)
    return settings


def dataset_content(dataset: str | None) -> str | None:
    """A fingerprint of the labels of the local folders a `--dataset` value names (each `metadata.jsonl` at their
    top or one level down, in split folders), so that a folder whose labels were edited is not taken for the data a
    finished run learned from; None where it names no local folder (generated data: its arguments say it all)."""
    if not dataset:
        return None
    import hashlib

    files = []
    for token in re.split(r"[\s,:=+]+", dataset):
        folder = Path(token)
        if token and folder.is_dir():
            files += sorted([*folder.glob("metadata.jsonl"), *folder.glob("*/metadata.jsonl")])
    if not files:
        return None
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]

IGNORED_CONFIG_KEYS = {
    "transformers_version", "architectures", "auto_map", "custom_pipelines", "dtype", "torch_dtype", "use_cache",
    "name_or_path",
}
"""Configuration entries that saving or training change without changing the model."""

FULL_DISK_BYTES = 64 * 2**20
"""Free space below which a failed write is put down to a full disk (torch's writer does not say why it failed)."""

CHANGE_FOLDER = "Choose another --output_dir, or pass --overwrite_output_dir to replace it."


DATASET_FILES = ("metadata.jsonl", "metadata.csv", "data.mdb", "dataset_info.json", "dataset_dict.json", "state.json")
"""Files that make a folder a dataset (imagefolder metadata, LMDB, `save_to_disk`): never a run's output folder."""


class OutputFolderError(ValueError):
    """The output folder holds other work, or another training is writing into it."""


# ------------------------------------------------------------------------------------------------ checkpoints


def file_problem(path: Path) -> str | None:
    """Why the file at `path` of a checkpoint cannot be read back, as "<file> is ..." ends ("empty", "cut short or
    corrupt (...)"), or None. JSON files
    are parsed, safetensors files read to their end, torch files (zip archives) checked entry by entry."""
    try:
        if path.stat().st_size == 0:
            return "empty"
        if path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".safetensors":
            problem = safetensors_problem(path)
            return None if problem is None else f"cut short or corrupt ({problem})"
        elif path.suffix in TORCH_FILE_SUFFIXES:
            with zipfile.ZipFile(path) as archive:
                broken = archive.testzip()
            if broken is not None:
                return f"corrupt (its entry {broken})"
        else:
            with path.open("rb") as file:
                while file.read(2**20):
                    pass
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        return f"not valid JSON ({error})"
    except zipfile.BadZipFile as error:
        return f"cut short or corrupt ({error})"
    except OSError as error:
        return f"unreadable ({error.strerror or error})"
    return None


def checkpoint_problem(folder: str | os.PathLike) -> str | None:
    """Why the checkpoint in `folder` cannot be resumed from (a file missing, empty, cut short or unreadable, as
    when a run is killed while saving or a disk fails), or None when every file of it reads."""
    folder = Path(folder)
    for name in CHECKPOINT_FILES:
        if not (folder / name).is_file():
            return f"{name} is missing"
    for path in sorted(folder.iterdir()):
        if path.is_file() and (problem := file_problem(path)) is not None:
            return f"{path.name} is {problem}"
    return None


def checkpoints(output_dir: str | os.PathLike) -> dict[int, Path]:
    """The `checkpoint-N` folders of `output_dir` by step."""
    output_dir = Path(output_dir)
    if not output_dir.is_dir():
        return {}
    return {
        int(match.group(1)): path
        for path in output_dir.iterdir()
        if path.is_dir() and (match := CHECKPOINT_FOLDER.match(path.name))
    }


def last_complete_checkpoint(output_dir: str | os.PathLike, warn: bool = True) -> str | None:
    """The newest `checkpoint-N` folder of `output_dir` that is complete (`checkpoint_problem`); newer
    incomplete ones are skipped, each with a warning naming what is wrong. None when there is none."""
    found = checkpoints(output_dir)
    for step in sorted(found, reverse=True):
        problem = checkpoint_problem(found[step])
        if problem is None:
            return str(found[step])
        if warn:
            logger.warning("Skipping the incomplete checkpoint %s: %s (a run stopped while saving it?); trying the "
                           "one before", found[step], problem)
    return None


def checkpoint_ended(checkpoint: str | os.PathLike, args) -> bool:
    """Whether the run that saved `checkpoint` had ended there: its step reached `args.max_steps` (the step count
    it recorded when training epochs), or early stopping's patience had run out. Resuming such a checkpoint would
    train one step more; the run only lacks its final save."""
    state = json.loads((Path(checkpoint) / "trainer_state.json").read_text())
    target = args.max_steps if args.max_steps > 0 else state.get("max_steps", 0)
    if target and state["global_step"] >= target:
        return True
    patience = getattr(args, "early_stopping_patience", None)
    saved = state.get("stateful_callbacks", {}).get("EarlyStoppingCallback")
    if patience and saved:
        saved = saved[-1] if isinstance(saved, list) else saved
        return saved.get("attributes", {}).get("early_stopping_patience_counter", 0) >= patience
    return False


def training_ended(trainer) -> bool:
    """Whether `trainer`'s run has ended (`checkpoint_ended`'s test, on the live state): a run stopped by a time
    budget has not, and goes on when run again."""
    if trainer.state.max_steps and trainer.state.global_step >= trainer.state.max_steps:
        return True
    return any(
        getattr(callback, "early_stopping_patience_counter", 0) >= getattr(callback, "early_stopping_patience", 1)
        for callback in trainer.callback_handler.callbacks
        if type(callback).__name__ == "EarlyStoppingCallback"
    )


# ------------------------------------------------------------------------------------------------ writing


def check_writable_folder(folder: str | os.PathLike) -> None:
    """Creates `folder` if needed and checks that files can be written in it, so that a training run learns
    before its first step, not at its first save, that it could not keep its work."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"):
            pass
    except OSError as error:
        raise PermissionError(f"Cannot write to the output folder {folder}: {error.strerror or error}") from error


def write_json_atomically(path: Path, data) -> None:
    """Writes `data` as JSON to `path` through a file beside it renamed into place."""
    def plain(value):  # numpy and torch numbers
        return value.item() if hasattr(value, "item") else str(value)

    temporary = path.with_name(f"{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=1, sort_keys=True, default=plain) + "\n")
    os.replace(temporary, path)


def free_bytes(path: Path) -> int:
    """Free space for this user on the file system holding `path` (its nearest existing folder)."""
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


def full_disk_error(error: BaseException, path: str | os.PathLike) -> OSError | None:
    """The error to raise for `error`, met while writing `path`, if it comes of a failed write: a full disk
    (`OSError` ENOSPC, a safetensors "No space left on device", or torch's writer failing, "[enforce fail at
    inline_container.cc...]", with the disk out of space) said as "no space left on device while writing
    <path>"; torch's writer failing with space left as "could not write <path>". None for any other error."""
    text = str(error)
    if (isinstance(error, OSError) and error.errno == errno.ENOSPC) or "No space left on device" in text:
        where = getattr(error, "filename", None) or path
        full = OSError(f"no space left on device while writing {where}")
    elif isinstance(error, RuntimeError) and "inline_container" in text:
        if free_bytes(Path(path)) < FULL_DISK_BYTES:
            full = OSError(f"no space left on device while writing {path}")
        else:
            return OSError(f"could not write {path} (torch: {text.strip()}); is the disk full or over its quota?")
    else:
        return None
    full.errno = errno.ENOSPC
    return full


@contextlib.contextmanager
def naming_full_disk(path):
    """Turns a failed write inside the block into `full_disk_error`'s one-line error; `path` is what the block
    writes, or a function returning it at the time of the failure."""
    try:
        yield
    except Exception as error:  # safetensors' own error type too
        replacement = full_disk_error(error, path() if callable(path) else path)
        if replacement is None:
            raise
        raise replacement from error


def save_final_model(trainer, on_saved=None) -> None:
    """Saves `trainer`'s model (and what `on_saved(folder)` adds, on the main process) into `args.output_dir`
    without ever leaving a file half-written: everything is written into a staging folder first, then each file
    is renamed into place (a rename is atomic), the weights last, so a kill leaves the previous file or the new
    one."""
    output_dir = Path(trainer.args.output_dir)
    staging = output_dir / STAGING_FOLDER
    main = trainer.is_world_process_zero()
    if main and staging.exists():
        shutil.rmtree(staging)
    with naming_full_disk(output_dir):
        trainer.save_model(str(staging))
        if main and on_saved is not None:
            on_saved(staging)
    if not main:
        return
    weights = [path for path in staging.iterdir() if path.suffix == ".safetensors" or path.name.endswith(".index.json")]
    for path in sorted(staging.iterdir(), key=lambda path: path in weights):
        target = output_dir / path.name
        if path.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        os.replace(path, target)
    staging.rmdir()


# ------------------------------------------------------------------------------------------------ the folder

_HELD_LOCKS: dict[str, int] = {}
"""Locks this process holds, by path, with how many `locked()` blocks hold each (they nest)."""


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def normalized_path(value: str | None) -> str | None:
    """A path as the record keeps it: normalised ("./runs/a/" is "runs/a"), not made absolute, so that a run
    carried to another machine or folder still matches its record."""
    return os.path.normpath(value) if value else value


def describe(value) -> str:
    return "none" if value is None else repr(value)


class OutputFolder:
    """The output folder `path` of one training run described by `description` (the run record's fields, see
    `RECORDED_AS`; a field given as None is recorded as unset).

    Args:
        overwrite: `--overwrite_output_dir`: whatever the folder holds is replaced (its checkpoints are deleted
            when training starts; its model when the new one is saved).
        main_process: whether this process writes (the lock and record); the others only check.
        max_steps: the step count this run trains to (`--max_steps`; None when it trains epochs). A run finished
            at fewer steps than a larger `--max_steps` asks for goes on from its last checkpoint.
    """

    def __init__(self, path: str | os.PathLike, description: dict | None = None, overwrite: bool = False,
                 main_process: bool = True, max_steps: int | None = None):
        self.path = Path(path)
        self.description = dict(description or {})
        self.overwrite = overwrite
        self.main_process = main_process
        self.max_steps = max_steps if max_steps is not None and max_steps > 0 else None

    # -------------------------------------------------------------------------------------- the lock

    @contextlib.contextmanager
    def locked(self):
        """Holds the folder's lock for the block (on the main process; nested blocks share it)."""
        if not self.main_process:
            yield
            return
        self.path.mkdir(parents=True, exist_ok=True)
        lock = self.path / LOCK_FILE
        key = str(lock.resolve())
        if key in _HELD_LOCKS:
            _HELD_LOCKS[key] += 1
            try:
                yield
            finally:
                _HELD_LOCKS[key] -= 1
            return
        self.acquire(lock)
        _HELD_LOCKS[key] = 1
        try:
            yield
        finally:
            del _HELD_LOCKS[key]
            with contextlib.suppress(OSError):
                if lock.read_text().split()[0] == str(os.getpid()):
                    lock.unlink()

    def acquire(self, lock: Path) -> None:
        host = socket.gethostname()
        for _ in range(10):
            try:
                descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                pass
            else:
                with os.fdopen(descriptor, "w") as file:
                    file.write(f"{os.getpid()} {host}\n")
                return
            try:
                holder = lock.read_text().split()
            except FileNotFoundError:
                continue  # released meanwhile
            if len(holder) < 2:  # being written this instant, or left empty by a kill
                if time.time() - lock.stat().st_mtime < 2:
                    time.sleep(0.2)
                    continue
                holder = ["0", host]
            pid, holder_host = int(holder[0]) if holder[0].isdigit() else 0, holder[1]
            if holder_host != host:
                raise OutputFolderError(
                    f"another training (pid {pid} on {holder_host}) holds {self.path} (its lock {lock}); wait for it "
                    "to end, or choose another --output_dir (delete the lock if that process is gone)."
                )
            if pid != os.getpid() and pid > 0 and process_alive(pid):
                raise OutputFolderError(
                    f"another training (pid {pid}) is writing into {self.path} (its lock {lock}); wait for it to "
                    "end, or choose another --output_dir."
                )
            logger.warning("Taking over the lock %s left by pid %s, which is no longer running", lock, pid or "?")
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
        raise OutputFolderError(f"could not take the lock {lock}: other processes keep taking it.")

    # -------------------------------------------------------------------------------------- what it holds

    def record(self) -> dict | None:
        """The run record, or None (no record, or one cut short by a kill: the run is read as unrecorded)."""
        try:
            return json.loads((self.path / RUN_RECORD).read_text())
        except (OSError, ValueError):
            return None

    def holds(self) -> list[str]:
        """The model and run files at the top of the folder, and its checkpoint folders."""
        if not self.path.is_dir():
            return []
        names = [name for name in (*MODEL_FILES, *RUN_FILES) if (self.path / name).exists()]
        return names + sorted(path.name for path in checkpoints(self.path).values())

    def check(self) -> dict | None:
        """Raises `OutputFolderError` when the folder holds other work than this run's: a run recorded with another
        command, architecture, preset, source model, vocabulary or training data, or a model that no training run
        left there. Returns the record of this run when it has finished (nothing to do), else None. With
        `overwrite`, nothing is refused and nothing is finished."""
        if not self.path.is_dir():
            return None
        self.check_not_a_dataset()
        if self.overwrite:
            return None
        record = self.record()
        holds = self.holds()
        if record is not None and holds:  # a record alone: its run failed before it saved anything
            differ = [key for key, value in self.description.items() if key in record and record[key] != value]
            if "model_name_or_path" in differ:  # the source model decides the rest (a fine-tuned model has no preset)
                self.check_source_outside()
                differ = ["model_name_or_path"]
            if differ:
                key = differ[0]
                raise OutputFolderError(
                    f"{self.path} holds another run: its {RECORDED_AS.get(key, key)} is {describe(record[key])}, "
                    f"this run's {describe(self.description[key])}. {CHANGE_FOLDER}"
                )
            return record if record.get("finished") and not self.goes_on(record["finished"]) else None
        if any(name in holds for name in RUN_FILES) or checkpoints(self.path):
            return self.unrecorded_finished_run()
        if holds:
            raise OutputFolderError(
                f"{self.path} holds a model ({', '.join(holds)}) that no training run left there (a released or "
                f"exported model?); training into it would replace it. {CHANGE_FOLDER}"
            )
        return None

    def check_not_a_dataset(self) -> None:
        """Refuses a folder that holds a dataset (`DATASET_FILES`, or images at its top other than the card's example,
        `WIDGET_IMAGE`), even with `overwrite`: a run writes its model, card (`README.md`) and checkpoints into its
        output folder, beside or over the data."""
        from PIL import Image

        found = [name for name in DATASET_FILES if (self.path / name).exists()]
        images = [path for path in self.path.iterdir()
                  if path.suffix.lower() in Image.registered_extensions() and path.name != WIDGET_IMAGE]
        if images:
            found.append(f"{len(images)} image{'s' if len(images) > 1 else ''}")
        if found:
            raise OutputFolderError(
                f"{self.path} holds a dataset ({', '.join(found)}): a run writes its model, card and checkpoints into "
                "--output_dir. Choose another --output_dir."
            )

    def check_source_outside(self) -> None:
        """Refuses a model to fine-tune (`model_name_or_path`) that lies inside the folder, such as a checkpoint of
        the run the folder holds: training into the folder would replace that run."""
        source = self.description.get("model_name_or_path")
        if source and Path(source).is_dir() and self.path.resolve() in Path(source).resolve().parents:
            raise OutputFolderError(
                f"--model_name_or_path {source} lies inside --output_dir {self.path} (a checkpoint of the run that "
                "folder holds?): fine-tuning it into that folder would replace the run. Choose another --output_dir."
            )

    def unrecorded_finished_run(self) -> dict | None:
        """A run of a textrec from before run records, read as finished when its final state reached its step
        count beside its saved model."""
        state_file = self.path / "trainer_state.json"
        if not (state_file.is_file() and (self.path / "model.safetensors").is_file()):
            return None
        try:
            state = json.loads(state_file.read_text())
            results = json.loads((self.path / "all_results.json").read_text())
        except (OSError, ValueError):
            return None
        if not state.get("max_steps") or state.get("global_step", 0) < state["max_steps"]:
            return None
        finished = {"step": state["global_step"], "max_steps": state["max_steps"]}
        if self.goes_on(finished):
            return None
        metrics = {key: value for key, value in results.items() if not key.startswith("train")}
        return {"finished": finished, "result": metrics}

    def goes_on(self, finished: dict) -> bool:
        """Whether this run, asking for more steps than the finished run's `--max_steps`, trains on from it (from its
        last checkpoint: a run that kept none is refused, as it would train again from the start over its model)."""
        reached = finished.get("max_steps") or finished["step"]
        if self.max_steps is None or self.max_steps <= reached:
            return False
        if not checkpoints(self.path):
            raise OutputFolderError(
                f"{self.path} finished at step {finished['step']} of {reached} and kept no checkpoint (--save_strategy "
                f"no?) to train on from: --max_steps {self.max_steps} would train again from the start and replace "
                f"its model. Pass --overwrite_output_dir to do so, or choose another --output_dir."
            )
        logger.info("%s finished at step %d of %d; --max_steps %d trains on from its last checkpoint", self.path,
                    finished["step"], reached, self.max_steps)
        return True

    def check_model(self, config) -> None:
        """Raises `OutputFolderError` when the configuration saved with the folder's run (its newest complete
        checkpoint's, else its final model's) is not `config`: another architecture, preset, `--config_overrides`
        or vocabulary, whose weights would load with size mismatches, or not at all."""
        if self.overwrite or not self.path.is_dir():
            return
        checkpoint = last_complete_checkpoint(self.path, warn=False)
        saved = Path(checkpoint or self.path) / "config.json"
        if not saved.is_file():
            return
        try:
            saved_dict = json.loads(saved.read_text())
        except ValueError:
            return  # a cut-short final config: the run re-saves it
        if saved_dict.get("model_type") != config.model_type:
            raise OutputFolderError(
                f"{self.path} holds a {saved_dict.get('model_type')!r} model ({saved}); this run trains a "
                f"{config.model_type!r} model. {CHANGE_FOLDER}"
            )
        differences = config_differences(config.to_dict(), type(config).from_dict(saved_dict).to_dict())
        if differences:
            shown = "; ".join(f"{key}: {describe(there)} there, {describe(here)} now" for key, there, here in differences[:3])
            more = f" and {len(differences) - 3} more" if len(differences) > 3 else ""
            raise OutputFolderError(
                f"{self.path} holds a {config.model_type} model of another configuration ({shown}{more}; another "
                f"--preset, --config_overrides or --charset than its run's?). {CHANGE_FOLDER}"
            )

    # -------------------------------------------------------------------------------------- the record

    def start(self) -> None:
        """Records the run as started (unfinished). With `overwrite`, first deletes what would mix with it: the
        previous run's checkpoints and record (its final model stays until this run saves its own)."""
        if not self.main_process:
            return
        if self.overwrite:
            replaced = self.holds()
            for folder in checkpoints(self.path).values():
                shutil.rmtree(folder)
            for name in (RUN_RECORD, STAGING_FOLDER):
                if (self.path / name).is_dir():
                    shutil.rmtree(self.path / name)
                elif (self.path / name).exists():
                    (self.path / name).unlink()
            if replaced:
                logger.warning("--overwrite_output_dir: replacing what %s held (%s)", self.path, ", ".join(replaced))
        write_json_atomically(self.path / RUN_RECORD, {**self.description, "finished": None})

    def finish(self, step: int, max_steps: int, result) -> None:
        """Records the run as finished at `step` of `max_steps`, with `result` (what a rerun returns): the last
        thing written."""
        if not self.main_process:
            return
        finished = {"step": step, "max_steps": max_steps}
        write_json_atomically(self.path / RUN_RECORD, {**self.description, "finished": finished, "result": result})


def config_differences(here: dict, there: dict) -> list[tuple[str, object, object]]:
    """(key, value there, value here) for each configuration entry that differs, nested entries dotted; entries
    that saving or training change (`IGNORED_CONFIG_KEYS`, names starting with "_") are left out."""
    differences = []
    for key in sorted(set(here) | set(there), key=str):
        if key in IGNORED_CONFIG_KEYS or str(key).startswith("_"):
            continue
        mine, theirs = here.get(key), there.get(key)
        if isinstance(mine, dict) and isinstance(theirs, dict):
            differences += [(f"{key}.{name}", a, b) for name, a, b in config_differences(mine, theirs)]
        elif json.dumps(mine, default=str) != json.dumps(theirs, default=str):  # tuples and lists alike
            differences.append((key, theirs, mine))
    return differences
