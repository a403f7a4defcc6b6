"""Model cards rendered from `model_cards/` with the evaluation results as `model-index` metadata.

The metadata follows the Hub's model-card conventions (https://huggingface.co/docs/hub/model-cards): what the
model is (`library_name`, `pipeline_tag`, `base_model`), what it learned from (`datasets`, `language`), how it
was measured (`metrics`, `model-index`) and an example image for the widget, carried in the folder. A dataset is
named there by what it is, never by a textrec `--dataset` value or a local path: `describe_dataset`.
"""

import re
from collections import Counter
from importlib import resources
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from . import resolve_model_path

METRIC_NAMES = {"cer": "CER", "wer": "WER", "sequence_accuracy": "Sequence accuracy"}
HUB_METRICS = ("cer", "wer")
"""The metrics of `METRIC_NAMES` that are metric ids on the Hub, listed in a card's `metrics` when it reports them."""

SYNTHETIC_LABEL = "synthetic, rendered by textrec"
"""How a card names data that textrec renders (in `model-index` and its tables)."""
SYNTHETIC_DATASET_TYPE = "synthetic"
LOCAL_DATASET_TYPE = "imagefolder"
"""The `model-index` dataset type of textrec's renderings, and of a local folder of images (which the card names by
its folder name, never by its path)."""
RENDERED_SOURCES = {
    "synthetic-lines": "print lines",
    "synthetic-lines-handwriting": "handwriting-style lines",
    "synthetic-digits": "digit strings in fonts",
    "synthetic-math": "typeset formulas (matplotlib mathtext)",
}
"""textrec's rendered sources (`--dataset` names) and what their images show."""
FONT_STYLES = {"print": "print lines", "handwriting": "handwriting-style lines", "mixed": "print and handwriting-style lines"}
PUBLISHED_SOURCES = {"iam": ("IAM handwritten lines", "iam"), "washington": ("George Washington's letters", "washington")}
"""Public datasets textrec reads in their own layout (`--dataset iam:<folder>`): their name and `model-index` type."""
ENGLISH_TEXT_SOURCES = ("synthetic-lines", "synthetic-lines-handwriting", "iam", "washington")
"""Sources whose lines are English text (German too where `german_share` is set)."""
WIDGET_IMAGE = "example.png"
"""The example image a card's widget shows, in the model's folder beside the card."""
PLACEHOLDER_OWNER = "<user>"
"""Stands for the Hub account in an exported card's snippet when no `--hub_model_id` is given."""


def _split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """A `--dataset` value's source name and options (`"synthetic-lines:max_chars=80"` -> name, {max_chars: "80"});
    a folder source (`captured:<folder>:copies=4`) gives its folder as option `root`."""
    name, _, rest = spec.partition(":")
    if name in ("captured", *PUBLISHED_SOURCES):
        root, _, rest = rest.partition(":")
        options = {"root": root}
    else:
        options = {}
    for option in filter(None, rest.split(",")):
        key, _, value = option.partition("=")
        options[key.strip()] = value.strip()
    return name, options


def _is_local_path(name: str) -> bool:
    """Whether a `--dataset` or model value is a folder on disk rather than a Hub id (the rule of textrec's loaders:
    anything that exists, starts or ends like a path or has more than one `/`)."""
    return (Path(name).expanduser().exists() or name.startswith((".", "/", "~")) or name.endswith("/")
            or name.count("/") > 1)


def describe_dataset(spec: str) -> tuple[str, str]:
    """The `model-index` name and type of the data a `--dataset` value names.

    textrec's renderings are "synthetic, rendered by textrec: <what they show>" of type `synthetic`; strings of
    MNIST digits are of type `mnist`; a local folder (or its captured copies) is named by its folder name (never its
    path) with type `imagefolder`; a Hub dataset id is its own name and type. Sources joined by " + " are named
    together."""
    spec = spec.strip()
    if " + " in spec:
        parts = [describe_dataset(part) for part in spec.split(" + ")]
        types = {dataset_type for _, dataset_type in parts}
        return " + ".join(name for name, _ in parts), types.pop() if len(types) == 1 else "mixed"
    name, options = _split_spec(spec)
    if name in RENDERED_SOURCES:
        shows = FONT_STYLES.get(options.get("font_style", ""), RENDERED_SOURCES[name])
        details = []
        if "min_chars" in options and "max_chars" in options:
            details.append(f"{options['min_chars']}-{options['max_chars']} characters")
        elif "max_chars" in options or "min_chars" in options:
            details.append(f"up to {options['max_chars']} characters" if "max_chars" in options
                           else f"at least {options['min_chars']} characters")
        if "max_tokens" in options:
            details.append(f"up to {options['max_tokens']} tokens")
        if options.get("look") == "captured":
            details.append("as scanned or photographed")
        if options.get("fraktur_share"):
            details.append(f"{float(options['fraktur_share']):.0%} in Fraktur")
        if options.get("german_share"):
            details.append(f"{float(options['german_share']):.0%} in German")
        if options.get("augment") == "false":
            details.append("clean")
        return f"{SYNTHETIC_LABEL}: {', '.join([shows, *details])}", SYNTHETIC_DATASET_TYPE
    if name == "mnist-digits":
        length = f" of {options['length']}" if "length" in options else ""
        if options.get("mnist_dir"):
            return f"MNIST digits in strings{length}, composed by textrec", "mnist"
        return f"scikit-learn's 8x8 digits in strings{length}, composed by textrec", "scikit-learn-digits"
    if name in PUBLISHED_SOURCES:
        return PUBLISHED_SOURCES[name]
    if name == "captured":  # the lines of a folder, drawn again: the folder's data, not textrec's
        return f"{Path(options['root']).resolve().name}, an image folder, drawn as captured by textrec", LOCAL_DATASET_TYPE
    if _is_local_path(spec):
        return f"{Path(spec).resolve().name}, an image folder", LOCAL_DATASET_TYPE
    return spec, spec


def training_datasets(spec: str) -> list[str]:
    """The `datasets` of a card: the published datasets among the training sources of a `--dataset` value (Hub ids,
    MNIST, IAM, Washington), not textrec's renderings or local folders."""
    types = [describe_dataset(part)[1] for part in spec.split(" + ")]
    return [dataset for dataset in dict.fromkeys(types) if dataset not in (SYNTHETIC_DATASET_TYPE, LOCAL_DATASET_TYPE)]


def training_languages(spec: str) -> list[str]:
    """The `language` of a card: English where the training sources are English text, German too where lines in
    German were rendered (`german_share`); none for digits, formulas and folders of unknown text."""
    languages = []
    for part in spec.split(" + "):
        name, options = _split_spec(part.strip())
        if name in ENGLISH_TEXT_SOURCES:
            languages.append("en")
            if options.get("german_share") not in (None, "0", "0.0"):
                languages.append("de")
    return list(dict.fromkeys(languages))


def model_name_in_card(card_text: str) -> str | None:
    """The model's name as its card states it: its `model-index` name, else its title."""
    card = ModelCard(card_text)
    if card.data.model_name:
        return card.data.model_name
    title = re.search(r"^# (.+)$", card.text, flags=re.M)
    return title.group(1).strip() if title else None


def base_model_name(model_name_or_path: str | None) -> str | None:
    """The `base_model` of a model fine-tuned from `model_name_or_path`: a released model or a local folder gives the
    model name its card states (none without a card: a local path is never a base model); a Hub id is itself."""
    if not model_name_or_path:
        return None
    folder = Path(resolve_model_path(model_name_or_path))
    if folder.is_dir():
        card = folder / "README.md"
        return model_name_in_card(card.read_text(encoding="utf-8")) if card.is_file() else None
    return None if _is_local_path(model_name_or_path) else model_name_or_path


def card_for_repository(card_text: str, repo_id: str | None) -> str:
    """The card of a folder exported to the Hub repository `repo_id`: its snippets load `from_pretrained(repo_id)`
    instead of the name the card was written with; without `repo_id`, a placeholder `<user>/<name>` and a note
    saying so."""
    name = model_name_in_card(card_text)
    if name is None:
        return card_text
    target = repo_id or f"{PLACEHOLDER_OWNER}/{name}"
    text = card_text.replace(f'from_pretrained("{name}"', f'from_pretrained("{target}"')
    text = text.replace(f'model="{name}"', f'model="{target}"')
    if repo_id is None:
        note = (f"`{target}` stands for the Hub repository this folder is uploaded to (`textrec-export "
                "--hub_model_id user/name` writes it here); a local folder's path works as well.")
        text = re.sub(r"^## Use\n", lambda match: f"{match.group(0)}\n{note}\n", text, count=1, flags=re.M)
    return text


def dataset_config(name: str) -> str:
    """The `model-index` config that tells apart datasets of one type and split (the Hub keeps one result per type,
    config and split): their name, without textrec's label and size, as a slug ("print-lines-15-80-characters")."""
    name = re.sub(r" \([^()]*\)$", "", name.removeprefix(f"{SYNTHETIC_LABEL}: "))
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def card_metadata(
    *,
    model_name: str,
    architecture: str,
    evaluations: dict[str, dict[str, float]],
    dataset_types: dict[str, str],
    dataset_splits: dict[str, str],
    license: str = "apache-2.0",
    base_model: str | None = None,
    datasets: list[str] | None = None,
    languages: list[str] | None = None,
    widget_title: str | None = None,
) -> ModelCardData:
    """A card's metadata: `library_name`, `pipeline_tag`, licence, tags, the model it was fine-tuned from, its
    training datasets and languages, the metrics it reports, the widget's example image (`WIDGET_IMAGE`, titled
    `widget_title`) and a `model-index` result per dataset and metric, in the order of `evaluations` (datasets of one
    type and split told apart by `dataset_config`).

    Args:
        evaluations: dataset name (as the card names it) -> metric name (`cer`, `wer`, `sequence_accuracy`) -> value.
        dataset_types, dataset_splits: each dataset's `model-index` type and split, by its name.
    """
    evaluations = {
        dataset: {name: value for name, value in results.items() if name in METRIC_NAMES}
        for dataset, results in evaluations.items()
    }
    reported = {name for results in evaluations.values() for name in results}
    shared = Counter((dataset_types[dataset], dataset_splits[dataset]) for dataset in evaluations)
    return ModelCardData(
        model_name=model_name,
        base_model=base_model or None,
        datasets=datasets or None,
        language=languages or None,
        library_name="transformers",
        pipeline_tag="image-to-text",
        license=license,
        metrics=[name for name in HUB_METRICS if name in reported] or None,
        tags=["textrec", "ocr", "text-recognition", architecture],
        widget=[{"src": WIDGET_IMAGE, "example_title": widget_title}] if widget_title else None,
        eval_results=[
            EvalResult(
                task_type="image-to-text",
                task_name="Text recognition",
                dataset_type=dataset_types[dataset],
                dataset_name=dataset,
                dataset_config=(dataset_config(dataset)
                                if shared[dataset_types[dataset], dataset_splits[dataset]] > 1 else None),
                dataset_split=dataset_splits[dataset],
                metric_type=name,
                metric_name=METRIC_NAMES[name],
                metric_value=round(float(value), 4),
            )
            for dataset, metrics in evaluations.items()
            for name, value in metrics.items()
        ]
        or None,
    )


def ctc_reading(model) -> str:
    """How the model's CTC decoding reads, for its card: best path, or prefix beam search with its character n-gram
    (`generation_config.num_beams` above 1, CRNN)."""
    language_model = getattr(model, "language_model", None)
    num_beams = model.generation_config.num_beams or 1
    if language_model is None or num_beams <= 1:
        return "the CTC head's best path"
    search = model.generation_config
    unscored = ("; the mark a line ends in where its last word breaks, `line_break_token_ids`, is not scored there by "
                "the n-gram" if getattr(search, "line_break_token_ids", None) else "")
    return (f"the CTC head read by prefix beam search ({num_beams} beams) with its character {language_model.order}-gram "
            f"(weight {search.language_model_weight}, length bonus {search.length_bonus}{unscored}; `num_beams=1`: best "
            "path)")


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
    decoding_choice: str | None = None,
    training_data: str | None = None,
    evaluation_note: str | None = None,
    dataset_splits: dict[str, str] | None = None,
    dataset_types: dict[str, str] | None = None,
    license: str = "apache-2.0",
    data_terms: str | None = None,
    base_model: str | None = None,
    datasets: list[str] | None = None,
    languages: list[str] | None = None,
    widget_title: str | None = None,
    template: str = "text_recognition.md",
) -> ModelCard:
    """A model card whose metadata (`card_metadata`) holds a `model-index` entry per metric and dataset.

    Args:
        dataset_name: the dataset of `eval_results`: a `--dataset` value (named by `describe_dataset`), or a name
            the caller gives with its type in `dataset_types`.
        eval_results: metric name (`cer`, `wer`, `sequence_accuracy`) to value, on `dataset_name`.
        more_evaluations: other datasets (same split and size, named as `dataset_name`) -> their metric values.
        training_command: the command that trained the model, for the card's "Training" section.
        decoding: how the model reads best, and was evaluated (its `generation_config.decoding`, which `generate()`
            follows): `"attention"`, `"ctc"` or `"joint"`.
        decoding_choice: a sentence on what chose `decoding` among the model's decodings, with their numbers.
        training_data: the data it was trained on, when not `dataset_name` (the evaluation data).
        evaluation_note: what the evaluations are, where they differ in split and size (each dataset's name then
            says its own); by default "the `dataset_split` split, `eval_samples` images each".
        dataset_splits: the split of each dataset whose split is not `dataset_split` (for `model-index`).
        dataset_types: the `model-index` type of each dataset named by the caller (real sets); the others are
            `--dataset` values, named and typed by `describe_dataset`.
        reads, tokens: what one image holds and what the vocabulary's tokens are (`ArchitectureSpec`).
        license: the licence in the card's metadata (`"other"` where the training data's terms bind the model).
        data_terms: the terms of the training data, for a card section of their own.
        base_model, datasets, languages: the model it was fine-tuned from (`base_model_name`), its training
            datasets (`training_datasets`) and languages (`training_languages`).
        widget_title: the title of the example image the widget shows (`WIDGET_IMAGE`, which the caller writes
            beside the card); no widget without it.
    """
    dataset_types = dataset_types or {}
    named = {}  # the caller's dataset name -> (name on the card, model-index type)
    for dataset in {dataset_name: None, **(more_evaluations or {})}:
        named[dataset] = (dataset, dataset_types[dataset]) if dataset in dataset_types else describe_dataset(dataset)
    evaluations = {
        named[dataset][0]: {name: value for name, value in results.items() if name in METRIC_NAMES}
        for dataset, results in {dataset_name: eval_results, **(more_evaluations or {})}.items()
    }
    card_data = card_metadata(
        model_name=repo_id.split("/")[-1],
        architecture=architecture,
        evaluations=evaluations,
        dataset_types={name: dataset_type for name, dataset_type in named.values()},
        dataset_splits={named[dataset][0]: (dataset_splits or {}).get(dataset, dataset_split) for dataset in named},
        license=license,
        base_model=base_model,
        datasets=datasets,
        languages=languages,
        widget_title=widget_title,
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
        dataset_name=named[dataset_name][0],
        dataset_split=dataset_split,
        eval_results={
            dataset: {METRIC_NAMES[name]: f"{value:.4f}" for name, value in metrics.items()}
            for dataset, metrics in evaluations.items()
            if metrics
        },
        metric_names=[METRIC_NAMES[name] for name in METRIC_NAMES if name in evaluations[named[dataset_name][0]]],
        training_command=training_command,
        decoding=decoding,
        decoding_choice=decoding_choice,
        ctc_reading=ctc_reading(model),
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
