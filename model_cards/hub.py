"""Hub folders: a trained model's folder made complete for the Hub, and exported from a released name."""

import shutil
from pathlib import Path

import torch

from textrec.processing.inference import load_recognizer
from textrec.processing.pipeline_text_recognition import TextRecognitionPipeline

from . import resolve_model_path


def export_for_hub(model, processor, folder: str | Path) -> None:
    """Writes into `folder` what `AutoModelForImageTextToText`, `AutoProcessor` and
    `pipeline("text-recognition")` need with `trust_remote_code=True` and no textrec installed:
    config with `auto_map` and `custom_pipelines`, safetensors weights, generation config, the
    processor files and every code file they import."""
    TextRecognitionPipeline(model=model, processor=processor).save_pretrained(folder)
    processor.save_pretrained(folder)


DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def export_model(model_name_or_path: str, output_dir: str | Path, dtype: str = "float32") -> Path:
    """Writes the Hub folder of `model_name_or_path` (a released model's short name or a folder) into
    `output_dir`, with weights in `dtype`; returns the folder."""
    source = Path(resolve_model_path(model_name_or_path))
    if not source.is_dir():
        raise FileNotFoundError(f"No such model folder or released name: {model_name_or_path}")
    output_dir = Path(output_dir)
    if output_dir.resolve() == source.resolve():
        raise ValueError("--output_dir must differ from the model's own folder.")
    model, processor = load_recognizer(str(source), dtype=DTYPES[dtype])
    export_for_hub(model, processor, output_dir)
    card = source / "README.md"
    if card.is_file():
        shutil.copyfile(card, output_dir / "README.md")
    return output_dir
