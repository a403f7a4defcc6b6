"""One entry point for every text-recognition dataset: synthetic, handwriting releases, local folders, the Hub.

:func:`load_text_recognition_dataset` returns a ``datasets.Dataset`` with an ``image`` column
(``datasets.Image``) and a ``text`` column (string), plus whatever other columns the source has.

Splits of synthetic data
------------------------
Synthetic splits differ by seed (:func:`split_seed`): ``train`` uses ``seed`` itself,
``validation`` and ``test`` use 63-bit hashes of ``(seed, split)``, so their sample streams are
independent of every training stream a person would pick. Digit sequences also draw their digits
from disjoint pools of digit images (:func:`.synthetic_digits.digit_pool`), one per split. Short
synthetic texts can still recur across splits by chance (the text corpus is shared); images
never do.

Checked rows
------------
Every source but the synthetic ones (rendered in-process, known good) is checked once, in full, when it is
loaded: each image is decoded (Pillow's ``verify()`` alone passes a JPEG cut short) and each text must be a
non-empty string. Rows that fail are left out, with one warning that counts them by cause and names the
first few (file and line for a ``metadata.jsonl`` folder, else the image file or the row number); a source
with no usable row is an error. A ``metadata.jsonl`` line that is not a JSON object, or not UTF-8 text, is an
error naming the file and line, as is a ``file_name`` outside the dataset folder (an absolute path, or one
climbing out with ``..``) unless ``allow_outside_paths=True``.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import json
import logging
import os
from collections import Counter
from pathlib import Path, PurePath

import datasets
import numpy as np
from PIL import Image

from ..image_processing_text_recognition import load_image
from .captured_copies import make_captured_copies
from .crohme import CAPTION_FILE, crohme_splits, load_crohme
from .iam import load_iam_lines
from .lmdb_dataset import LMDB_DATA_FILE, is_lmdb_folder, read_lmdb_dataset
from .mnist import make_mnist_digit_sequences
from .synthetic_digits import make_digit_sequences
from .synthetic_lines import make_synthetic_lines
from .synthetic_math import make_synthetic_formulas
from .washington import load_washington_lines

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
SYNTHETIC_DATASETS = (
    "synthetic-lines",
    "synthetic-lines-handwriting",
    "synthetic-digits",
    "synthetic-math",
    "mnist-digits",
)
LINE_DATASETS = ("washington", "iam", "captured")
"""Sources read from a folder, named ``"<name>:<folder>"`` with options after a further colon
(``"washington:data/washingtondb-v1.0:fold=2"``): the handwritten-line releases, and ``captured``, captured copies
of any dataset folder's lines (``"captured:my-lines:copies=4"``, :mod:`.captured_copies`)."""
MIXTURE_SEPARATOR = " + "
"""Joins the sources of a mixture, read one after the other and shuffled together
(``"synthetic-lines:look=captured + captured:my-lines:copies=4"``)."""
DEFAULT_SYNTHETIC_SAMPLES = {"train": 20_000, "validation": 1_000, "test": 1_000}
"""Rows generated when ``num_samples`` is not given."""

METADATA_FILE = "metadata.jsonl"
FOLDER_SPLIT_NAMES = {
    "train": ("train", "training"),
    "validation": ("validation", "valid", "val", "dev"),
    "test": ("test", "testing", "eval"),
}
"""Sub-folder names of an image folder recognised as each split (as in ``datasets``' ImageFolder)."""
_LOCAL_FORMS = (
    f"a folder with {METADATA_FILE} or an LMDB folder with {LMDB_DATA_FILE} (at the top or in train/ "
    f"validation/ test/ sub-folders), a CROHME folder ({CAPTION_FILE} in split folders), or a folder written "
    "by Dataset.save_to_disk / DatasetDict.save_to_disk"
)
DATASET_FORMS = "; ".join(
    (
        f"a synthetic dataset ({', '.join(SYNTHETIC_DATASETS)}; options after a colon, e.g. "
        "mnist-digits:length=13)",
        "handwritten lines as washington:<folder> or iam:<folder>",
        "captured copies of a folder's lines as captured:<folder>[:copies=4]",
        f"several of these joined by {MIXTURE_SEPARATOR!r} (a mixture)",
        _LOCAL_FORMS,
        "a Hub dataset id (owner/name)",
    )
)
"""What ``load_text_recognition_dataset`` accepts, as its errors list it."""
MAX_SKIPPED_EXAMPLES = 10
"""How many skipped rows the warning about the rows left out names."""
CHECK_BATCH_SIZE = 512
"""Rows read at a time by :func:`check_rows`."""


def split_seed(seed: int, split: str) -> int:
    """The generation seed of a synthetic split: ``seed`` for ``"train"``, a 63-bit hash otherwise."""
    if split not in SPLITS:
        raise ValueError(f"synthetic data has splits {SPLITS}, got {split!r}")
    if split == "train":
        return seed
    digest = hashlib.sha256(f"textrec/{split}/{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def parse_dataset_options(name: str) -> tuple[str, dict]:
    """Split ``"name:key=value,key=value"`` into the name and its options, for synthetic datasets given on
    a command line (``"mnist-digits:length=13,rotated=true,mnist_dir=data/mnist"``). Values read as
    ``true``/``false``, integers and floats become such; the rest stay strings. A handwritten-line dataset
    (:data:`LINE_DATASETS`) names its folder first, returned as the option ``root``:
    ``"washington:data/gw:fold=2"`` gives ``("washington", {"root": "data/gw", "fold": 2})``. Other names
    come back unchanged with no options.
    """
    base, separator, options = name.partition(":")
    if not separator or base not in SYNTHETIC_DATASETS + LINE_DATASETS:
        return name, {}
    if base in LINE_DATASETS:
        root, colon, options = options.rpartition(":")
        if not colon or "=" not in options:  # no options: the colons belong to the folder
            root, options = f"{root}{colon}{options}", ""
        return base, {"root": root, **_parse_options(name, options)}
    return base, _parse_options(name, options)


def _parse_options(name: str, options: str) -> dict:
    """``"key=value,key=value"`` as a dict of typed values (see :func:`parse_dataset_options`)."""
    parsed = {}
    for option in filter(None, options.split(",")):
        key, equals, value = option.partition("=")
        if not equals or not key:
            raise ValueError(f"{name!r}: options are key=value pairs separated by commas, got {option!r}")
        if value.lower() in ("true", "false"):
            parsed[key] = value.lower() == "true"
        else:
            for kind in (int, float):
                try:
                    parsed[key] = kind(value)
                    break
                except ValueError:
                    continue
            else:
                parsed[key] = value
    return parsed


def load_text_recognition_dataset(
    name_or_path: str | os.PathLike[str],
    *,
    split: str | None = "train",
    num_samples: int | None = None,
    seed: int = 0,
    image_column: str = "image",
    text_column: str = "text",
    allow_outside_paths: bool = False,
    **synthetic_kwargs,
) -> datasets.Dataset:
    """Load a dataset of (image, text) pairs.

    Sources, tried in this order:

    - ``"synthetic-lines"`` (print fonts), ``"synthetic-lines-handwriting"``, ``"synthetic-digits"``,
      ``"mnist-digits"``: generated (and cached) by :func:`.synthetic_lines.make_synthetic_lines` /
      :func:`.synthetic_digits.make_digit_sequences` / :func:`.mnist.make_mnist_digit_sequences`
      (MNIST from the IDX files in the ``mnist_dir`` option, else scikit-learn's digits); ``split``
      picks the seed (and the digit pool), see :func:`split_seed`. Options may follow the name, as in
      ``"mnist-digits:length=13,rotated=true,mnist_dir=data/mnist"`` (see :func:`parse_dataset_options`).
      ``"synthetic-math"``: rendered random formulas, labels in LaTeX tokens
      (:func:`.synthetic_math.make_synthetic_formulas`).
    - ``"washington:<folder>"``: the George Washington database as released (``washingtondb-v1.0``, see
      :func:`.washington.load_washington_lines`); options ``fold`` (1-4, default 1) and ``on_unknown``
      (``raise``/``skip``), e.g. ``"washington:data/washingtondb-v1.0:fold=2"``; ``split`` picks the fold's
      split.
    - ``"iam:<folder>"``: the IAM lines as released (XML or ``ascii/lines.txt`` ground truth, see
      :func:`.iam.load_iam_lines`); options ``train``, ``validation``, ``test`` (split lists, one line id a
      line, e.g. the Aachen partition; ``split`` picks one; without them all the lines form the single
      ``"train"`` split), ``skip_segmentation_errors`` and ``ground_truth`` (``xml``/``ascii``), e.g.
      ``"iam:data/iam:train=aachen/tr.lst,validation=aachen/va.lst"``.
    - ``"captured:<folder>"``: captured copies of the lines of a dataset folder (any local form below), each
      line drawn ``copies`` times (option, default 4) as a scanner or camera might have caught it
      (:mod:`.captured_copies`), e.g. ``"captured:my-lines:copies=8"``.
    - Several sources joined by ``" + "`` (:data:`MIXTURE_SEPARATOR`): a mixture, each source read as if alone
      (the same ``split``, ``num_samples`` and ``seed``) and the rows concatenated, with columns ``image`` and
      ``text`` only, e.g. ``"synthetic-lines:look=captured + captured:../handwriting:copies=4"``.
    - A CROHME folder: ``caption.txt`` files of ``name tok tok ...`` lines with their images, in split
      folders (``train``, ``2014``, ...; see :mod:`.crohme`, whose ``split`` names are the folder names).
    - A folder with ``metadata.jsonl`` files (``datasets`` ImageFolder convention): one JSON
      object per line with ``file_name`` (relative to the file) and the text; either at the
      top (a single split) or in split sub-folders ``train/``, ``validation/``, ``test/``.
      Every row is checked (see "Checked rows" in the module docstring), before ``num_samples`` picks.
    - An LMDB folder in the scene-text benchmarks' layout (``data.mdb`` with ``num-samples``,
      ``image-%09d``, ``label-%09d``; see :mod:`.lmdb_dataset`), at the top or in split sub-folders.
    - A folder written by ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk``.
    - Otherwise a Hub dataset id, through ``datasets.load_dataset`` (needs the network unless
      cached).

    Every source but the synthetic ones is checked (see "Checked rows" in the module docstring): the rows
    ``num_samples`` keeps, or all the rows of a ``metadata.jsonl`` folder.

    Args:
        name_or_path: Synthetic dataset name, local folder or Hub id.
        split: Split to return. ``None`` accepts a source holding a single split, whatever its
            name; a single-split local folder must otherwise be asked for as ``"train"``.
        num_samples: Synthetic data: rows to generate (default :data:`DEFAULT_SYNTHETIC_SAMPLES`).
            Other data: keep a random subset of this many rows, in their original order.
        seed: Synthetic data: generation seed of the train split. Other data: seed of the subset.
        image_column: Source column holding the images, renamed ``image``. For an image folder,
            the metadata key with the file names (default ``file_name``).
        text_column: Source column (or metadata key) holding the texts, renamed ``text``.
        allow_outside_paths: Read the ``file_name`` of a ``metadata.jsonl`` row that lies outside the folder
            given (an absolute path, or ``../..`` climbing out of it); by default such a row is an error, so that
            a dataset folder reads only what it holds (a symbolic link inside it is followed).
        **synthetic_kwargs: Passed to the synthetic generator (e.g. ``font_style``, ``augment``,
            ``charset``, ``max_chars``, ``length``, ``rotated``, ``cache_dir``, ``num_proc``).

    Returns:
        The dataset, with columns ``image`` and ``text`` first.

    Raises:
        ValueError: a malformed ``metadata.jsonl`` line (not UTF-8, not a JSON object, a ``file_name`` outside the
            folder; the message names file and line), a source with no usable row, or an unknown dataset name when offline (listing the accepted forms).
    """
    if MIXTURE_SEPARATOR in os.fspath(name_or_path):
        if synthetic_kwargs:
            raise TypeError(f"{sorted(synthetic_kwargs)}: give the options of a mixture's sources after their names")
        parts = [
            load_text_recognition_dataset(
                part.strip(), split=split, num_samples=num_samples, seed=seed, image_column=image_column,
                text_column=text_column, allow_outside_paths=allow_outside_paths,
            ).select_columns(["image", "text"])
            for part in os.fspath(name_or_path).split(MIXTURE_SEPARATOR)
        ]
        return datasets.concatenate_datasets([part.cast_column("image", datasets.Image()) for part in parts])
    name, options = parse_dataset_options(os.fspath(name_or_path))
    if name in SYNTHETIC_DATASETS:
        return _load_synthetic(name, split, num_samples, seed, {**options, **synthetic_kwargs})
    if synthetic_kwargs:
        raise TypeError(f"{sorted(synthetic_kwargs)} only apply to synthetic datasets {SYNTHETIC_DATASETS}")
    path = Path(name).expanduser()
    checked = False  # whether the rows were checked while read (a metadata.jsonl folder)
    if name in LINE_DATASETS:
        dataset = _load_line_dataset(name, split, options)
        checked = name == "captured"  # copies of rows checked as they were read
    elif path.exists():
        dataset, checked = _load_local(path, split, image_column, text_column, allow_outside_paths)
    elif name.startswith((".", "/", "~")) or name.count("/") > 1:  # a path, not an "owner/name" Hub id
        raise FileNotFoundError(f"No such dataset folder: {path}")
    else:
        dataset = _standardize_columns(_load_hub(name, split), image_column, text_column, name)
    rows = None
    if num_samples is not None and num_samples < len(dataset):
        rows = np.sort(np.random.default_rng(seed).choice(len(dataset), size=num_samples, replace=False)).tolist()
        dataset = dataset.select(rows)
    return dataset if checked else check_rows(dataset, name, rows)


def _load_synthetic(
    name: str, split: str | None, num_samples: int | None, seed: int, kwargs: dict
) -> datasets.Dataset:
    """Generate one split of a synthetic dataset (see the module docstring for the split scheme)."""
    split = split or "train"
    seed = split_seed(seed, split)
    num_samples = DEFAULT_SYNTHETIC_SAMPLES[split] if num_samples is None else num_samples
    if name == "synthetic-math":
        return make_synthetic_formulas(num_samples, seed=seed, **kwargs)
    if name == "synthetic-digits":
        return make_digit_sequences(num_samples, seed=seed, source_split=split, **kwargs)
    if name == "mnist-digits":
        return make_mnist_digit_sequences(
            num_samples, mnist_dir=kwargs.pop("mnist_dir", None), seed=seed, source_split=split, **kwargs
        )
    if name == "synthetic-lines-handwriting":
        kwargs = {"font_style": "handwriting", **kwargs}
    return make_synthetic_lines(num_samples, seed=seed, **kwargs)


def _load_line_dataset(name: str, split: str | None, options: dict) -> datasets.Dataset:
    """Read a handwritten-line release; ``options`` hold its folder as ``root`` (:func:`parse_dataset_options`)."""
    root = options.pop("root", "")
    if not root:
        raise ValueError(f"{name!r} needs its folder: '{name}:/path/to/{name}', options after a further colon")
    if name == "washington":
        return load_washington_lines(root, split=split, **options)
    if name == "captured":
        copies, num_proc = options.pop("copies", 4), options.pop("num_proc", None)
        small_letters_share = options.pop("small_letters_share", 0.0)
        if options:
            raise ValueError(f"captured:{root} takes the options copies, small_letters_share and num_proc, "
                             f"not {sorted(options)}")
        return make_captured_copies(load_text_recognition_dataset(root, split=split), copies,
                                    small_letters_share=small_letters_share, num_proc=num_proc)
    split_files = {key: options.pop(key) for key in SPLITS if key in options}
    if not split_files:  # no split lists: all the lines, as the single split "train"
        _pick_split(["train"], split, f"iam:{root}")
        return load_iam_lines(root, **options)
    split = _pick_split(list(split_files), split, f"iam:{root}")
    return load_iam_lines(root, split_file=split_files[split], **options)


def _load_local(
    path: Path, split: str | None, image_column: str, text_column: str, allow_outside_paths: bool = False
) -> tuple[datasets.Dataset, bool]:
    """Load an image folder, an LMDB folder or a ``save_to_disk`` folder; and whether its rows were checked
    while read (a ``metadata.jsonl`` folder, whose files must lie within ``path`` unless
    ``allow_outside_paths``)."""
    within = None if allow_outside_paths else path
    if not path.is_dir():
        raise ValueError(f"{path} is a file; expected {_LOCAL_FORMS}")
    file_key = "file_name" if image_column == "image" else image_column
    if crohme_splits(path):
        return load_crohme(path, split), False
    split_folders = _split_folders(path)
    if split_folders:
        folder = split_folders[_pick_split(list(split_folders), split, path)]
        return _read_image_folder(folder, file_key, text_column, within), True
    if (path / METADATA_FILE).is_file():
        _pick_split(["train"], split, path)
        return _read_image_folder(path, file_key, text_column, within), True
    lmdb_folders = _split_folders(path, LMDB_DATA_FILE)
    if lmdb_folders:
        return read_lmdb_dataset(lmdb_folders[_pick_split(list(lmdb_folders), split, path)]), False
    if is_lmdb_folder(path):
        _pick_split(["train"], split, path)
        return read_lmdb_dataset(path), False
    if (path / "dataset_dict.json").is_file() or (path / "state.json").is_file():
        saved = datasets.load_from_disk(str(path))
        if isinstance(saved, datasets.DatasetDict):
            saved = saved[_pick_split(list(saved), split, path)]
        else:
            _pick_split(["train"], split, path)
        return _standardize_columns(saved, image_column, text_column, str(path)), False
    raise ValueError(f"{path} is not a dataset folder; expected {_LOCAL_FORMS}")


def _split_folders(path: Path, marker: str = METADATA_FILE) -> dict[str, Path]:
    """The split sub-folders of a dataset folder that hold ``marker`` (a metadata file, or an LMDB's
    ``data.mdb``), by canonical split name."""
    folders = {}
    for split, names in FOLDER_SPLIT_NAMES.items():
        for name in names:
            if (path / name / marker).is_file():
                folders[split] = path / name
                break
    return folders


class MissingSplitError(ValueError):
    """A split that a dataset source does not have; ``source``, ``split`` and ``available`` (the splits it has)
    let a command say which of its options to change."""

    def __init__(self, source: Path | str, split: str, available: list[str]):
        hint = " (split=None reads a source holding a single split)" if len(available) == 1 else ""
        super().__init__(f"{source} has no split {split!r}; available: {available}{hint}")
        self.source, self.split, self.available = source, split, available


def _pick_split(available: list[str], split: str | None, source: Path | str) -> str:
    """The split to read among ``available``; ``None`` is allowed when there is just one."""
    if split is None:
        if len(available) == 1:
            return available[0]
        raise ValueError(f"{source} has splits {available}; pass split= one of them")
    if split not in available:
        raise MissingSplitError(source, split, available)
    return split


def image_problem(image) -> str | None:
    """Why ``image`` cannot be read, or None. ``image`` is a file path, encoded bytes, or ``datasets.Image``'s
    undecoded value (a dict of ``bytes`` and ``path``). The image is decoded in full, as training reads it:
    Pillow's ``verify()`` alone passes a JPEG cut short."""
    if isinstance(image, dict):
        image = image["bytes"] if image.get("bytes") is not None else image.get("path")
    if image is None:
        return "no image"
    if isinstance(image, (str, os.PathLike)) and not os.path.isfile(image):
        return "image file not found"
    try:
        with Image.open(io.BytesIO(image) if isinstance(image, bytes) else image) as opened:
            opened.load()
            load_image(opened)  # zero size, odd modes
    except (OSError, SyntaxError, ValueError, TypeError, Image.DecompressionBombError) as error:
        return f"image cannot be decoded ({error})"
    return None


def text_problem(text) -> str | None:
    """Why ``text`` cannot be a label (null, empty or blank, not a string), or None."""
    if text is None:
        return "null text"
    if not isinstance(text, str):
        return f"non-string text ({text!r}, a {type(text).__name__})"
    if not text.strip():
        return f"empty text ({text!r})"
    return None


def check_rows(dataset: datasets.Dataset, source: str, rows: list[int] | None = None) -> datasets.Dataset:
    """``dataset`` without the rows whose image cannot be decoded or whose text is null or empty; one warning
    counts them and names the first few by their row number in ``source`` (from 0, as ``dataset[i]``) and
    image file, where it has one.

    Args:
        dataset: columns ``image`` (``datasets.Image``) and ``text``.
        source: the dataset's name, for the messages.
        rows: the row numbers of ``dataset``'s rows in ``source`` (when a subset was taken); default 0, 1, ...

    Raises:
        ValueError: no row is usable.
    """
    problems, keep = [], []
    raw = dataset.select_columns(["image", "text"]).with_format("arrow")
    for begin in range(0, len(dataset), CHECK_BATCH_SIZE):
        batch = raw[begin : begin + CHECK_BATCH_SIZE]
        for offset, (image, text) in enumerate(zip(batch["image"].to_pylist(), batch["text"].to_pylist())):
            index = begin + offset
            problem = text_problem(text) or image_problem(image)
            if problem is None:
                keep.append(index)
                continue
            number = rows[index] if rows is not None else index
            path = image.get("path") if isinstance(image, dict) else None
            problems.append((f"row {number}" + (f" ({path})" if path else ""), problem))
    _report_skipped(problems, len(dataset), source)
    return dataset if not problems else dataset.select(keep)


def _report_skipped(problems: list[tuple[str, str]], total: int, source) -> None:
    """One warning about the rows left out, given as ``(where, why)``; an error when all of them are."""
    if not problems:
        return
    causes = Counter(why.split(" (")[0] for _, why in problems)  # "empty text ('  ')" counts as "empty text"
    summary = (
        f"{len(problems)} of {total} rows of {source} ("
        + ", ".join(f"{cause}: {count}" for cause, count in causes.items())
        + "): "
        + "; ".join(f"{where}: {why}" for where, why in problems[:MAX_SKIPPED_EXAMPLES])
        + ("; ..." if len(problems) > MAX_SKIPPED_EXAMPLES else "")
    )
    if len(problems) == total:
        raise ValueError(f"no usable row: {summary}")
    logger.warning("Skipped %s", summary)


def metadata_lines(metadata: Path):
    """``(number, text)`` of each line of a ``metadata.jsonl`` file, from 1, read as UTF-8 (a UTF-8 byte order
    mark is allowed). A file in another encoding is an error naming the file and line: UTF-16 or UTF-32 (told
    by a byte order mark or by NUL bytes), or bytes that are not UTF-8 (Latin-1, say)."""
    with metadata.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            if number == 1:
                if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                    raise ValueError(
                        f"{metadata}, line 1: UTF-16 or UTF-32 text (a byte order mark); save it as UTF-8, as JSON Lines are"
                    )
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if b"\x00" in raw:
                raise ValueError(
                    f"{metadata}, line {number}: NUL bytes (UTF-16 or UTF-32 text?); save it as UTF-8, as JSON Lines are"
                )
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{metadata}, line {number}: not UTF-8 text ({error.reason} at byte {error.start}: "
                    f"{raw[error.start:error.start + 4]!r}); save it as UTF-8, as JSON Lines are"
                ) from None


def outside(root: Path, folder: Path, name: str) -> bool:
    """Whether the file ``name``, written in a metadata file of ``folder`` (``root`` or a split folder inside
    it), lies outside ``root``: an absolute path, or one whose ``..`` climb out of ``root``. Decided on the names
    as written: a symbolic link inside ``root`` is followed wherever it leads."""
    if PurePath(name).is_absolute():
        return True
    inside = os.path.normpath(os.path.join(os.path.relpath(folder, root), name))
    return inside == os.pardir or inside.startswith(os.pardir + os.sep)


def _read_image_folder(folder: Path, file_key: str, text_column: str, within: Path | None = None) -> datasets.Dataset:
    """Read ``folder/metadata.jsonl`` into a dataset, checking every row as :func:`check_rows` does; the
    rows left out are named by line and file. With ``within``, a ``file_name`` outside that folder is an error."""
    metadata = folder / METADATA_FILE
    rows, problems = [], []
    for number, line in metadata_lines(metadata):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as error:
            raise ValueError(f"{metadata}, line {number}: not valid JSON ({error})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{metadata}, line {number}: expected a JSON object, got {type(row).__name__}")
        missing = [key for key in (file_key, text_column) if key not in row]
        if missing:
            raise ValueError(f"{metadata}, line {number}: no {missing} (keys: {sorted(row)})")
        name = str(row.pop(file_key))
        if within is not None and outside(within, folder, name):
            raise ValueError(
                f"{metadata}, line {number}: {file_key} {name!r} lies outside the dataset folder {within}; a dataset "
                "reads only files inside its folder (a symbolic link inside it is followed), unless "
                "allow_outside_paths=True"
            )
        image_path = folder / name
        text = row.pop(text_column)
        problem = text_problem(text) or image_problem(image_path)
        if problem is not None:
            problems.append((f"line {number} ({image_path.name})", problem))
            continue
        rows.append({"image": str(image_path), "text": text, **row})
    _report_skipped(problems, len(problems) + len(rows), metadata)
    if not rows:
        raise ValueError(f"{metadata} lists no image")
    columns = {key: None for row in rows for key in row}
    dataset = datasets.Dataset.from_dict({key: [row.get(key) for row in rows] for key in columns})
    return dataset.cast_column("image", datasets.Image())


def _load_hub(name: str, split: str | None) -> datasets.Dataset:
    """``datasets.load_dataset(name, split=split)``, with a clear error when offline and not cached."""
    try:
        loaded = datasets.load_dataset(name, split=split)
    except Exception as error:
        if datasets.config.HF_HUB_OFFLINE:
            close = difflib.get_close_matches(name.partition(":")[0], SYNTHETIC_DATASETS + LINE_DATASETS, n=1)
            raise ConnectionError(
                f"unknown dataset {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                + ": no such folder, and no Hub dataset of that name in the local cache (offline mode, "
                f"HF_HUB_OFFLINE=1). Expected one of: {DATASET_FORMS}."
            ) from error
        raise
    if isinstance(loaded, datasets.DatasetDict):
        loaded = loaded[_pick_split(list(loaded), None, name)]
    return loaded


def _standardize_columns(
    dataset: datasets.Dataset, image_column: str, text_column: str, source: str
) -> datasets.Dataset:
    """Rename the image/text columns to ``image``/``text`` (decoded by ``datasets.Image``), put first."""
    for column in (image_column, text_column):
        if column not in dataset.column_names:
            raise ValueError(f"{source} has no column {column!r}; columns: {dataset.column_names}")
    for column, target in ((image_column, "image"), (text_column, "text")):
        if column != target:
            if target in dataset.column_names:
                raise ValueError(f"{source} already has a column {target!r} besides {column!r}; pick one")
            dataset = dataset.rename_column(column, target)
    if not isinstance(dataset.features["image"], datasets.Image):
        dataset = dataset.cast_column("image", datasets.Image())
    if dataset.features["text"] != datasets.Value("string"):
        dataset = dataset.cast_column("text", datasets.Value("string"))
    others = [column for column in dataset.column_names if column not in ("image", "text")]
    return dataset.select_columns(["image", "text", *others])
