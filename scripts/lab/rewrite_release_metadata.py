"""Rewrite the metadata of the released cards with the card writer of today, from the results already in them.

    python scripts/lab/rewrite_release_metadata.py                 # every release in RELEASES
    python scripts/lab/rewrite_release_metadata.py crnn-lines      # one

`python scripts/lab/release.py NAME --package_only` writes a release's whole card, but it evaluates the model again
(the real sets, hundreds of rendered lines). This script measures nothing: it reads each released card's
`model-index`, names its datasets as `card_metadata` does (real sets by what they are, with their type; textrec's
renderings as "synthetic, rendered by textrec: ..."; never a `--dataset` value or a local path), adds what the card
writer now says of the model's origin (`base_model`, `datasets`, `language`, `metrics`, the widget's example image,
rendered by textrec) and replaces the card's metadata block only; its text stays as packaged. It also drops the
load-time keys (`LOAD_TIME_KEYS`) that earlier packaging left in `tokenizer_config.json`. Weights and settings are
not touched.
"""

import argparse
import json
import re
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard

from textrec.model_cards.card import SYNTHETIC_DATASET_TYPE, SYNTHETIC_LABEL, card_metadata, describe_dataset
from textrec.processing.processing_text_recognition import LOAD_TIME_KEYS
from textrec.processing.training import get_spec

from releases import RELEASED_MODELS_DIR, RELEASES, Release, real_set_of, write_widget_image

RENDERED_LABEL = re.compile(rf"^{re.escape(SYNTHETIC_LABEL)}: `(?P<spec>[^`]+)`(?P<size> \(.+\))$")
"""A synthetic results label of a card packaged before 2026-12: the `--dataset` value in backticks, then its size."""


def dataset_identity(result: EvalResult, release: Release) -> tuple[str, str]:
    """The `model-index` name and type of a result of an earlier card: a rendered set named by its `--dataset` value
    (with or without the earlier "synthetic, rendered by textrec" label), a test set of the release named by its
    `--dataset` value, a real set labelled "real: ..." (`real_set_of`); a dataset already named as the card writer
    names it keeps its name and type."""
    label = result.dataset_name
    rendered = RENDERED_LABEL.match(label)
    if rendered:
        return describe_dataset(rendered["spec"])[0] + rendered["size"], SYNTHETIC_DATASET_TYPE
    if label in release.test_sets.values():
        return describe_dataset(label)
    if label.startswith("real: "):
        return label.removeprefix("real: "), real_set_of(label).dataset_type
    return label, result.dataset_type


def rewrite_card(release: Release, folder: Path) -> None:
    """Replaces the metadata block of `folder`'s card (see the module docstring) and writes its example image."""
    path = folder / "README.md"
    text = path.read_text(encoding="utf-8")
    card = ModelCard(text)
    evaluations, dataset_types, dataset_splits = {}, {}, {}
    for result in card.data.eval_results or []:
        name, dataset_type = dataset_identity(result, release)
        evaluations.setdefault(name, {})[result.metric_type] = result.metric_value
        dataset_types[name], dataset_splits[name] = dataset_type, result.dataset_split
    metadata = card_metadata(
        model_name=card.data.model_name or release.name,
        architecture=get_spec(release.architecture).name,
        evaluations=evaluations,
        dataset_types=dataset_types,
        dataset_splits=dataset_splits,
        license=card.data.license or release.license,
        **release.card_metadata_arguments(),
    )
    body = re.match(r"^---\n.*?\n---\n(?P<body>.*)$", text, flags=re.S)["body"]
    path.write_text(f"---\n{metadata.to_yaml()}\n---\n{body}", encoding="utf-8")
    write_widget_image(release, folder)


def drop_load_time_keys(folder: Path) -> None:
    """Rewrites `tokenizer_config.json` without the keys that say how the tokenizer was once loaded, in the format
    transformers writes it (sorted keys, two-space indent)."""
    path = folder / "tokenizer_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    kept = {key: value for key, value in config.items() if key not in LOAD_TIME_KEYS}
    path.write_text(json.dumps(kept, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def run(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(prog="python scripts/lab/rewrite_release_metadata.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"Releases (default: all): {', '.join(sorted(RELEASES))}.")
    parser.add_argument("--destination", type=Path, default=RELEASED_MODELS_DIR,
                        help="Folder of the release folders (default: model_cards/released of this checkout).")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(RELEASES))
    if unknown:
        parser.error(f"unknown releases {unknown}; releases: {', '.join(sorted(RELEASES))}")
    folders = []
    for name in args.names or sorted(RELEASES):
        folder = args.destination / name
        rewrite_card(RELEASES[name], folder)
        drop_load_time_keys(folder)
        folders.append(folder)
        print(f"{name}: metadata rewritten in {folder / 'README.md'}")
    return folders


if __name__ == "__main__":
    run()
