"""Making a trained model's folder complete for the Hub."""

from pathlib import Path

from textrec.processing.pipeline_text_recognition import TextRecognitionPipeline


def export_for_hub(model, processor, folder: str | Path) -> None:
    """Writes into `folder` what `AutoModelForImageTextToText`, `AutoProcessor` and
    `pipeline("text-recognition")` need with `trust_remote_code=True` and no textrec installed:
    config with `auto_map` and `custom_pipelines`, safetensors weights, generation config, the
    processor files and every code file they import."""
    TextRecognitionPipeline(model=model, processor=processor).save_pretrained(folder)
    processor.save_pretrained(folder)
