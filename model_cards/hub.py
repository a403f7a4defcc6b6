"""Hub folders: a trained model's folder made complete for the Hub, and exported from a released name."""

import shutil
from pathlib import Path

import torch

from textrec.processing.inference import load_recognizer
from textrec.processing.pipeline_text_recognition import TextRecognitionPipeline

from . import resolve_model_path


def stored_state_dict(model, dtype: torch.dtype | None = None) -> dict[str, torch.Tensor]:
    """The model's weights as a folder stores them: floating-point tensors in `dtype` (the model's own when None;
    fp16 halves the files), the others (batch norm's step counters) as they are.

    Saved with `model.save_pretrained(folder, state_dict=...)` from the model in fp32, the folder's `config.json`
    says `"dtype": "float32"`: `from_pretrained(folder)` then loads it in fp32 with no argument, what a CPU
    computes fastest (and some CPU ops refuse fp16 inputs), whatever the weights are stored in."""
    return {
        name: tensor.to(dtype) if dtype is not None and tensor.is_floating_point() else tensor
        for name, tensor in model.state_dict().items()
    }


def export_for_hub(model, processor, folder: str | Path, weights_dtype: torch.dtype | None = None) -> None:
    """Writes into `folder` what `AutoModelForImageTextToText`, `AutoProcessor` and
    `pipeline("text-recognition")` need with `trust_remote_code=True` and no textrec installed:
    config with `auto_map` and `custom_pipelines`, safetensors weights (in `weights_dtype`, by default the
    model's; `config.json` keeps the model's dtype, see `stored_state_dict`), generation config, the
    processor files and every code file they import."""
    TextRecognitionPipeline(model=model, processor=processor).save_pretrained(
        folder, state_dict=stored_state_dict(model, weights_dtype)
    )
    processor.save_pretrained(folder)


DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

TRAINING_RUN_FILES = ("_textrec_run.json", "trainer_state.json", "training_args.bin", "all_results.json")
"""What a training run leaves at the top of its output folder (textrec's run record, the Trainer's files)."""


def check_not_a_training_run(folder: Path) -> None:
    """Refuses to export into a training run's output folder: the export would replace its trained model beside
    its checkpoints and records (a folder that holds an earlier export is rewritten)."""
    if not folder.is_dir():
        return
    found = [name for name in TRAINING_RUN_FILES if (folder / name).exists()]
    found += sorted(path.name for path in folder.glob("checkpoint-*") if path.is_dir())[:1]
    if found:
        raise ValueError(f"--output_dir {folder} is a training run's folder ({', '.join(found)}): exporting into it "
                         "would replace its trained model. Choose another --output_dir.")


EXPORTED_SUFFIXES = (".py", ".json", ".safetensors", ".md")
"""What an export writes at the top of its folder (code, settings, weights, card): `overwrite` removes these."""


def check_output_folder(folder: Path, overwrite: bool) -> None:
    """Refuses a folder that holds files, unless `overwrite` (an earlier export is then replaced: its code, settings,
    weights and card are removed, so that no file of another model stays beside the new one); a training run's
    folder is refused either way (`check_not_a_training_run`)."""
    check_not_a_training_run(folder)
    if not folder.is_dir():
        return
    present = sorted(path.name for path in folder.iterdir())
    if present and not overwrite:
        shown = ", ".join(present[:5]) + (f" and {len(present) - 5} more" if len(present) > 5 else "")
        raise ValueError(f"--output_dir {folder} is not empty ({shown}): exporting would replace or mix with its "
                         "files. Choose a new or empty folder, or pass --overwrite_output_dir to replace an earlier "
                         "export there.")
    if overwrite:
        for path in folder.iterdir():
            if path.is_file() and path.suffix in EXPORTED_SUFFIXES:
                path.unlink()


def export_model(model_name_or_path: str, output_dir: str | Path, dtype: str = "float32", overwrite: bool = False) -> Path:
    """Writes the Hub folder of `model_name_or_path` (a released model's short name or a folder) into
    `output_dir`, with weights stored in `dtype`; returns the folder. Its `config.json` says `"dtype": "float32"`
    whatever `dtype` is: it loads and computes in fp32 (`stored_state_dict`). A folder holding files is refused
    unless `overwrite` (`check_output_folder`)."""
    source = Path(resolve_model_path(model_name_or_path))
    if not source.is_dir():
        raise FileNotFoundError(f"No such model folder or released name: {model_name_or_path}")
    output_dir = Path(output_dir)
    if output_dir.resolve() == source.resolve():
        raise ValueError("--output_dir must differ from the model's own folder.")
    check_output_folder(output_dir, overwrite)
    model, processor = load_recognizer(str(source), dtype=torch.float32)
    export_for_hub(model, processor, output_dir, weights_dtype=DTYPES[dtype])
    card = source / "README.md"
    if card.is_file():
        shutil.copyfile(card, output_dir / "README.md")
    return output_dir
