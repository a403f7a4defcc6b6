"""Model cards rendered from `model_cards/` with the evaluation results as `model-index` metadata."""

from importlib import resources

from huggingface_hub import EvalResult, ModelCard, ModelCardData

METRIC_NAMES = {"cer": "CER", "wer": "WER", "sequence_accuracy": "Sequence accuracy"}


def render_model_card(
    *,
    model,
    architecture: str,
    architecture_description: str,
    reads: str,
    tokens: str,
    repo_id: str,
    dataset_name: str,
    dataset_split: str,
    eval_results: dict[str, float],
    eval_samples: int | None,
    training_summary: str,
    preset: str | None = None,
    more_evaluations: dict[str, dict[str, float]] | None = None,
    training_command: str | None = None,
    decoding: str = "attention",
    training_data: str | None = None,
    evaluation_note: str | None = None,
    dataset_splits: dict[str, str] | None = None,
    license: str = "apache-2.0",
    data_terms: str | None = None,
    template: str = "text_recognition.md",
) -> ModelCard:
    """A model card whose metadata holds `pipeline_tag`, tags and a `model-index` entry per metric and dataset.

    Args:
        eval_results: metric name (`cer`, `wer`, `sequence_accuracy`) to value, on `dataset_name`.
        more_evaluations: other datasets (same split and size) -> their metric values.
        training_command: the command that trained the model, for the card's "Training" section.
        decoding: how the model reads best, and was evaluated (its `generation_config.decoding`, which `generate()`
            follows): `"attention"`, `"ctc"` or `"joint"`.
        training_data: the data it was trained on, when not `dataset_name` (the evaluation data).
        evaluation_note: what the evaluations are, where they differ in split and size (each dataset's name then
            says its own); by default "the `dataset_split` split, `eval_samples` images each".
        dataset_splits: the split of each dataset whose split is not `dataset_split` (for `model-index`).
        reads, tokens: what one image holds and what the vocabulary's tokens are (`ArchitectureSpec`).
        license: the licence in the card's metadata (`"other"` where the training data's terms bind the model).
        data_terms: the terms of the training data, for a card section of their own.
    """
    evaluations = {dataset_name: eval_results, **(more_evaluations or {})}
    evaluations = {
        dataset: {name: value for name, value in results.items() if name in METRIC_NAMES}
        for dataset, results in evaluations.items()
    }
    card_data = ModelCardData(
        model_name=repo_id.split("/")[-1],
        library_name="transformers",
        pipeline_tag="image-to-text",
        license=license,
        tags=["textrec", "ocr", "text-recognition", architecture],
        eval_results=[
            EvalResult(
                task_type="image-to-text",
                task_name="Text recognition",
                dataset_type=dataset,
                dataset_name=dataset,
                dataset_split=(dataset_splits or {}).get(dataset, dataset_split),
                metric_type=name,
                metric_name=METRIC_NAMES[name],
                metric_value=round(float(value), 4),
            )
            for dataset, metrics in evaluations.items()
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
        reads=reads,
        tokens=tokens,
        dataset_name=dataset_name,
        dataset_split=dataset_split,
        eval_results={
            dataset: {METRIC_NAMES[name]: f"{value:.4f}" for name, value in metrics.items()}
            for dataset, metrics in evaluations.items()
            if metrics
        },
        metric_names=[METRIC_NAMES[name] for name in METRIC_NAMES if name in evaluations[dataset_name]],
        training_command=training_command,
        decoding=decoding,
        has_decoder=bool(getattr(model.config, "is_encoder_decoder", False)),
        training_data=training_data,
        data_terms=data_terms,
        evaluation_note=evaluation_note,
        eval_samples=eval_samples,
        training_summary=training_summary,
        preset=preset,
        num_parameters=f"{model.num_parameters():,}",
        vocab_size=model.config.get_text_config(decoder=True).vocab_size,
    )
