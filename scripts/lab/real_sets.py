"""The real (not synthetic) development sets that textrec is measured on, and the part of them kept aside.

The images live in the project's shared data folder (`../shared/data/real/` beside a checkout; see its README),
never in the repository: they are research-use benchmark sets. Each set is a subset of one imagefolder with
the scoring protocol its labels call for:

- `receipts`: SROIE scanned receipt lines (modern print). Their labels are upper case, so both sides are
  upper-cased; punctuation and spaces count.
- `historic-print`: 19th-century German book print (OCR-D `linegt`, mostly Fraktur, with `ſ` and old umlauts
  that no released model's character set holds): scored exactly, an out-of-domain print set.
- `scene`: scene-text word crops (IIIT5K, ICDAR 2013, SVT): the usual protocol, lower case, letters and
  digits only.
- `forms`: the lines of the FUNSD pages of `pages/` (scanned and faxed forms of the 1980s and 1990s, typed and
  typeset, some filled in by hand), cut from their pages by their annotated boxes into a cache folder (never into
  the repository). FUNSD joined its words with spaces around punctuation (`12 /10 /98`), so spaces are not
  scored; case and punctuation are. Split by page, as the pages benchmark splits them.

Every image is assigned once and for all to `development` (what results and tuning use) or `held-out` (one
image in five, by a hash of its file name, kept aside to check at the end that tuning did not overfit the
development part).
"""

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from textrec.processing.data.fonts import PRINTABLE_ASCII
from textrec.processing.data.generation import default_cache_dir

REAL_DATA_DIR = Path(os.environ.get("TEXTREC_REAL_DATA", Path(__file__).resolve().parents[2] / "../shared/data/real"))
"""The shared folder of real data, beside the checkout (`TEXTREC_REAL_DATA` overrides it)."""

LINE_CROPS_DIR = default_cache_dir() / "real-line-crops"
"""Where the lines of real pages are cut to (textrec's dataset cache; `TEXTREC_CACHE` moves it), never the repository."""
LINE_CROP_MARGIN = 3
"""Pixels added around an annotated line box when it is cut (as the SROIE receipt lines of `print/` were cut)."""
SPLITS = ("development", "held-out")
HELD_OUT_SHARE = 5
"""One image in this many is held out."""

UPPER_CASE_PRINTABLE = "".join(character for character in PRINTABLE_ASCII if not character.islower())
PRINTABLE_WITHOUT_SPACE = PRINTABLE_ASCII.replace(" ", "")


@dataclass(frozen=True)
class RealSet:
    """One real set: the folder under `REAL_DATA_DIR`, the `subset` values it takes, and its protocol
    (`normalization` and `charset`, as `textrec.processing.metrics.normalize_texts` takes them)."""

    name: str
    folder: str
    subsets: tuple[str, ...]
    normalization: str
    charset: str | None
    description: str
    level: str | None = None
    """Only rows of this `level` (`"line"`, `"word"`); None: every row of the subsets."""
    dataset_type: str = ""
    """The set's `model-index` dataset type on a model card: a short identifier of the published dataset."""
    page_lines: bool = False
    """The set is the annotated lines of pages (`pages/pages.jsonl`), cut into `LINE_CROPS_DIR`."""


REAL_SETS = {
    real_set.name: real_set
    for real_set in (
        RealSet("receipts", "print", ("sroie",), "scene-text", UPPER_CASE_PRINTABLE,
                "SROIE scanned receipt lines, case-insensitive", dataset_type="sroie"),
        RealSet("historic-print", "print", ("ocrd-linegt",), "none", None,
                "19th-century German book print (OCR-D), exact", dataset_type="ocr-d"),
        RealSet("scene", "scene", ("iiit5k", "icdar13", "svt"), "scene-text", None,
                "scene-text word crops (IIIT5K, IC13, SVT), lower-case alphanumerics", dataset_type="iiit5k-ic13-svt"),
        RealSet("forms", "pages", ("funsd",), "scene-text", PRINTABLE_WITHOUT_SPACE,
                "FUNSD scanned form lines cut by their boxes, spaces not scored", dataset_type="funsd",
                page_lines=True),
    )
}


HANDWRITING_SETS = {
    real_set.name: real_set
    for real_set in (
        RealSet("iam-ondb", "handwriting/test", ("iamondb",), "none", None,
                "IAM-OnDB lines by writers not in handwriting/train, rendered from pen strokes, exact", "line",
                "iam-ondb"),
        RealSet("washington", "handwriting/test", ("gw",), "none", None,
                "George Washington's letters (1755), scanned cursive lines, exact", "line",
                "washington"),
    )
}
"""The real handwriting test sets (`handwriting/test`; `handwriting/train` is the one real set trained on). Kept
apart from `REAL_SETS`, which the line releases' cards and the first results table read."""
ALL_SETS = {**REAL_SETS, **HANDWRITING_SETS}


def split_of(file_name: str) -> str:
    """`"held-out"` for one file name in `HELD_OUT_SHARE` (by its SHA-1), `"development"` for the others."""
    digest = int(hashlib.sha1(file_name.encode()).hexdigest(), 16)
    return "held-out" if digest % HELD_OUT_SHARE == 0 else "development"


def load_real_set(name: str, split: str = "development", data_dir: Path = REAL_DATA_DIR) -> tuple[list[Path], list[str]]:
    """The image paths and label texts of real set `name`, part `split`, in file order.

    Raises:
        FileNotFoundError: the shared data folder is absent (a clone without the project's shared data).
        ValueError: an unknown set or split.
    """
    if name not in ALL_SETS:
        raise ValueError(f"unknown real set {name!r}; known: {', '.join(ALL_SETS)}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    real_set = ALL_SETS[name]
    if real_set.page_lines:
        return page_line_crops(real_set, split, Path(data_dir))
    metadata = Path(data_dir) / real_set.folder / "metadata.jsonl"
    if not metadata.is_file():
        raise FileNotFoundError(f"no real data at {metadata} (the project's shared data folder; see real_sets.py)")
    paths, texts = [], []
    with metadata.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if (row["subset"] in real_set.subsets and real_set.level in (None, row.get("level"))
                    and split_of(row["file_name"]) == split):
                paths.append(metadata.parent / row["file_name"])
                texts.append(row["text"])
    return paths, texts


def page_line_crops(real_set: RealSet, split: str, data_dir: Path = REAL_DATA_DIR,
                    crops_dir: Path = LINE_CROPS_DIR) -> tuple[list[Path], list[str]]:
    """The annotated lines of the pages of `real_set.subsets` in part `split` (the page's file name decides, as for
    the pages benchmark), each cut from its page with `LINE_CROP_MARGIN` pixels around its box into `crops_dir`
    (once; later calls read the cut files), with their texts. Lines without a letter or digit are left out."""
    from PIL import Image

    metadata = data_dir / real_set.folder / "pages.jsonl"
    if not metadata.is_file():
        raise FileNotFoundError(f"no real pages at {metadata} (the project's shared data folder; see real_sets.py)")
    paths, texts = [], []
    for row in map(json.loads, filter(str.strip, metadata.read_text(encoding="utf-8").splitlines())):
        if row["subset"] not in real_set.subsets or split_of(row["file_name"]) != split:
            continue
        folder = crops_dir / f"{real_set.name}-margin-{LINE_CROP_MARGIN}"  # another margin cuts its own crops
        page = None
        for index, line in enumerate(row["lines"]):
            if not any(character.isalnum() for character in line["text"]):
                continue
            path = folder / f"{Path(row['file_name']).stem}-{index:03d}.png"
            if not path.is_file():
                if page is None:
                    page = Image.open(data_dir / real_set.folder / row["file_name"]).convert("RGB")
                    folder.mkdir(parents=True, exist_ok=True)
                left, top, right, bottom = line["box"]
                page.crop((max(0, left - LINE_CROP_MARGIN), max(0, top - LINE_CROP_MARGIN),
                           min(page.width, right + LINE_CROP_MARGIN), min(page.height, bottom + LINE_CROP_MARGIN))
                          ).save(path)
            paths.append(path)
            texts.append(line["text"])
    return paths, texts
