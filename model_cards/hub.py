"""Hub folders: what a saved model needs beside its weights to load and read where textrec is not installed.

`textrec-export` (`textrec.scripts.export`) writes one from a released name or a training run."""

import logging
import shutil
from pathlib import Path

import torch

from textrec.processing import textrec_onnx
from textrec.processing.pipeline_text_recognition import TextRecognitionPipeline

from .card import WIDGET_IMAGE, card_for_repository

logger = logging.getLogger(__name__)


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


def copy_model_card(source: str | Path, folder: str | Path, repo_id: str | None = None) -> None:
    """Copies the card of the model folder `source` (if it has one) into the Hub folder `folder`, with the widget's
    example image; its snippets then load the Hub repository `repo_id` (a placeholder with a note when None,
    `card_for_repository`)."""
    source, folder = Path(source), Path(folder)
    card = source / "README.md"
    if not card.is_file():
        logger.warning("%s has no model card (README.md), so the Hub folder %s has none: write one before publishing "
                       "(a run's checkpoint has none; its run folder holds the card of the run's final model)",
                       source, folder)
        return
    (folder / "README.md").write_text(card_for_repository(card.read_text(encoding="utf-8"), repo_id), encoding="utf-8")
    if (source / WIDGET_IMAGE).is_file():
        shutil.copyfile(source / WIDGET_IMAGE, folder / WIDGET_IMAGE)


HUB_EXPORT_FILES = frozenset({"config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                              "tokenizer_config.json", "special_tokens_map.json", "processor_config.json",
                              "preprocessor_config.json", "README.md", WIDGET_IMAGE})
"""The files of a Hub export beside its code (transformers' settings, weights, tokenizer, processor, card and its
example image)."""


def textrec_code_files() -> frozenset[str]:
    """The names of textrec's own modules: the code files an export copies beside a model (for `trust_remote_code`)."""
    root = Path(__file__).resolve().parent.parent
    return frozenset(path.name for path in root.rglob("*.py") if path.name != "__init__.py")


def clear_folder_for_export(folder: Path, overwrite: bool) -> None:
    """Makes `folder` ready for an export: refuses it if it holds files, unless `overwrite` and they are all an
    earlier export's (a Hub export's `HUB_EXPORT_FILES` and code files, or an ONNX export's `EXPORTED_FILES`), which
    are then removed, so that no file of another model stays beside the new one. Entries whose names begin with a dot
    (a Hub clone's `.git`, `.gitattributes`) stay. A file no export writes (a user's images, a dataset's
    `metadata.jsonl`) or a sub-folder refuses the folder even with `overwrite`: replacing an export must not delete
    what the user keeps there."""
    if not folder.is_dir():
        return
    present = sorted(path for path in folder.iterdir() if not path.name.startswith("."))
    if present and not overwrite:
        names = [path.name for path in present]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise ValueError(f"--output_dir {folder} is not empty ({shown}): exporting would replace or mix with its "
                         "files. Choose a new or empty folder, or pass --overwrite_output_dir to replace an earlier "
                         "export there.")
    known = HUB_EXPORT_FILES | set(textrec_onnx.EXPORTED_FILES) | textrec_code_files()
    foreign = [path.name + ("/" if path.is_dir() else "") for path in present if path.is_dir() or path.name not in known]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise ValueError(f"--output_dir {folder} holds what no textrec export writes ({shown}): --overwrite_output_dir "
                         "replaces an earlier export only, and would delete them. Choose a new or empty folder.")
    for path in present:
        path.unlink()

