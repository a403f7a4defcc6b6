"""CROHME handwritten formulas, read as the public releases (those of BTTR and CoMER) lay them out:

    <root>/<split>/caption.txt         one formula per line: "<name> <tok> <tok> ...", the LaTeX tokens
                                       separated by spaces (a tab may follow the name)
    <root>/<split>/img/<name>.bmp      the grey image of each line (white strokes on black); also
    <root>/<split>/<name>.bmp          accepted without the img/ folder, and as .png

The splits are the sub-folders holding a ``caption.txt`` (``train``, and the test years ``2014``,
``2016``, ``2019`` in the releases), or the root itself when it holds one. CoMER selected its model on
2014; pick a year for validation and report the others as tests.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path

import datasets

from ..tokenization_latex import CROHME_DICTIONARY, load_latex_dictionary, split_latex

logger = logging.getLogger(__name__)

CAPTION_FILE = "caption.txt"
IMAGE_FOLDERS = ("img", "")
IMAGE_SUFFIXES = (".bmp", ".png")
SPLIT_ALIASES = {"validation": ("validation", "valid", "val", "dev"), "test": ("test",)}
MAX_EXAMPLES = 5
"""How many names or tokens a warning quotes."""


def crohme_splits(root: str | os.PathLike) -> dict[str, Path]:
    """The split folders of a CROHME root, by name (``{"train": <root>/train, "2014": ...}``); the root
    itself under ``"train"`` when it holds the caption file. Empty when it is no CROHME folder."""
    root = Path(root)
    if (root / CAPTION_FILE).is_file():
        return {"train": root}
    if not root.is_dir():
        return {}
    return {folder.name: folder for folder in sorted(root.iterdir()) if (folder / CAPTION_FILE).is_file()}


def _split_folder(root: Path, split: str | None) -> Path:
    splits = crohme_splits(root)
    if not splits:
        raise ValueError(f"{root} holds no {CAPTION_FILE}, at the top or in split folders")
    if split is None:
        if len(splits) == 1:
            return next(iter(splits.values()))
        raise ValueError(f"{root} has splits {sorted(splits)}; pass split= one of them")
    for name in (split, *SPLIT_ALIASES.get(split, ())):
        if name in splits:
            return splits[name]
    hint = " (CoMER validated on 2014: pass that year as the validation split)" if split == "validation" else ""
    raise ValueError(f"{root} has no split {split!r}; available: {sorted(splits)}{hint}")


def _find_image(folder: Path, name: str) -> Path | None:
    for subfolder in IMAGE_FOLDERS:
        for suffix in IMAGE_SUFFIXES:
            path = folder / subfolder / f"{name}{suffix}"
            if path.is_file():
                return path
    return None


def load_crohme(
    root: str | os.PathLike, split: str | None = "train", dictionary: str | os.PathLike | None = CROHME_DICTIONARY
) -> datasets.Dataset:
    """Read one split of a CROHME folder.

    Args:
        root: The folder holding the split folders (or one split's caption file).
        split: A split folder name (``"train"``, ``"2014"``, ...); ``"validation"`` and ``"test"`` also
            find folders named ``validation``/``valid``/``val``/``dev`` and ``test``. ``None`` reads the
            only split.
        dictionary: LaTeX dictionary file; tokens outside it are reported in one warning (they stay in
            the texts and become ``<unk>`` for a tokenizer of that dictionary). ``None``: no check.

    Returns:
        A dataset with columns ``image`` (``datasets.Image``), ``text`` (the tokens joined by single
        spaces) and ``name``. Lines whose image is missing are left out, with one warning.

    Raises:
        ValueError: no such split, a caption line without tokens, or no image found at all.
    """
    folder = _split_folder(Path(root), split)
    captions = folder / CAPTION_FILE
    rows, missing = [], []
    for number, line in enumerate(captions.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        name, *tokens = line.split()
        if not tokens:
            raise ValueError(f"{captions}, line {number}: {name!r} has no tokens")
        image = _find_image(folder, name)
        if image is None:
            missing.append(name)
            continue
        rows.append({"image": str(image), "text": " ".join(tokens), "name": name})
    if missing:
        logger.warning(
            "Left out %d of %d formulas of %s whose image was not found as %s (e.g. %s)",
            len(missing),
            len(missing) + len(rows),
            captions,
            " or ".join(f"{subfolder or '.'}/<name>{suffix}" for subfolder in IMAGE_FOLDERS for suffix in IMAGE_SUFFIXES),
            ", ".join(missing[:MAX_EXAMPLES]),
        )
    if not rows:
        raise ValueError(f"{captions} lists no formula with an image")
    if dictionary is not None:
        _report_unknown_tokens(rows, set(load_latex_dictionary(dictionary)), captions)
    dataset = datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in ("image", "text", "name")})
    return dataset.cast_column("image", datasets.Image())


def _report_unknown_tokens(rows: list[dict], vocabulary: set[str], source: Path) -> None:
    unknown = Counter()
    formulas = 0
    for row in rows:
        outside = [token for token in split_latex(row["text"]) if token not in vocabulary]
        unknown.update(outside)
        formulas += bool(outside)
    if unknown:
        logger.warning(
            "%d of %d formulas of %s hold tokens outside the dictionary (they become <unk>): %s",
            formulas,
            len(rows),
            source,
            ", ".join(f"{token} ({count})" for token, count in unknown.most_common(MAX_EXAMPLES)),
        )
