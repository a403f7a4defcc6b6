"""Model cards rendered from `model_cards/` with the evaluation results as `model-index` metadata."""

from importlib import resources

from huggingface_hub import EvalResult, ModelCard, ModelCardData

METRIC_NAMES = {"cer": "CER", "wer": "WER", "sequence_accuracy": "Sequence accuracy"}


def render_model_card(
    *,
    model,
    architecture: str,
    architecture_description: str,
    repo_id: str,
    dataset_name: str,
    dataset_split: str,
    eval_results: dict[str, float],
    eval_samples: int | None,
    training_summary: str,
    preset: str | None = None,
    template: str = "text_recognition.md",
) -> ModelCard:
    """A model card whose metadata holds `pipeline_tag`, tags and a `model-index` entry per metric.

    Args:
        eval_results: metric name (`cer`, `wer`, `sequence_accuracy`) to value.
    """
    metrics = {name: value for name, value in eval_results.items() if name in METRIC_NAMES}
    card_data = ModelCardData(
        model_name=repo_id.split("/")[-1],
        library_name="transformers",
        pipeline_tag="image-to-text",
        license="apache-2.0",
        tags=["textrec", "ocr", "text-recognition", architecture],
        eval_results=[
            EvalResult(
                task_type="image-to-text",
                task_name="Text recognition",
                dataset_type=dataset_name,
                dataset_name=dataset_name,
                dataset_split=dataset_split,
                metric_type=name,
                metric_name=METRIC_NAMES[name],
                metric_value=round(float(value), 4),
            )
            for name, value in metrics.items()
        ]
        or None,
    )
    template_path = resources.files("textrec.model_cards") / template
    return ModelCard.from_template(
        card_data,
        template_path=str(template_path),
        model_name=repo_id.split("/")[-1],
        repo_id=repo_id,
        architecture=architecture,
        architecture_description=architecture_description,
        dataset_name=dataset_name,
        dataset_split=dataset_split,
        eval_results={METRIC_NAMES[name]: f"{value:.4f}" for name, value in metrics.items()},
        eval_samples=eval_samples,
        training_summary=training_summary,
        preset=preset,
        num_parameters=f"{model.num_parameters():,}",
        vocab_size=model.config.vocab_size,
    )
