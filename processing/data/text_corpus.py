"""Text corpora for language-model pre-training, as a `datasets.Dataset` with a `text` column.

`load_text_corpus` reads, for each source given:

- a plain text file: one document per line, or, in the `fortune` format (records separated by lines
  holding only "%"), one document per record; a record's lines are joined with spaces and
  typewriter overstriking ("_\\bA") is removed;
- a folder written by `Dataset.save_to_disk`/`DatasetDict.save_to_disk` (the split is taken from a
  `DatasetDict`);
- a folder of text files: its `.txt` files and files without an extension, in name order (so
  `/usr/share/games/fortunes`, Debian's `fortunes` package, reads the fortune files and skips their
  `.dat` indexes and `.u8` links);
- otherwise a Hub dataset id, loaded with `datasets.load_dataset(id, split=split)`.
"""

import os
import re
from pathlib import Path

import datasets

_OVERSTRIKE = re.compile(".\b")
_FORTUNE_SEPARATOR = re.compile(r"^%$", re.MULTILINE)


def read_text_file(path: str | os.PathLike) -> list[str]:
    """The documents of a plain text file (see the module docstring), whitespace collapsed, empty
    ones dropped. Bytes that are not UTF-8 are replaced."""
    text = _OVERSTRIKE.sub("", Path(path).read_text(encoding="utf-8", errors="replace"))
    records = _FORTUNE_SEPARATOR.split(text) if _FORTUNE_SEPARATOR.search(text) else text.splitlines()
    return [" ".join(record.split()) for record in records if record.strip()]


def _is_saved_dataset(folder: Path) -> bool:
    return any((folder / name).exists() for name in ("dataset_info.json", "dataset_dict.json", "state.json"))


def _text_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if path.is_file() and path.suffix in ("", ".txt"))


def load_text_corpus(
    sources: str | os.PathLike | list[str | os.PathLike], split: str = "train", text_column: str = "text"
) -> datasets.Dataset:
    """Load and concatenate `sources` into one dataset with a `text` column (see the module docstring).

    Args:
        sources: one source or a list of them.
        split: the split of a saved `DatasetDict` or a Hub dataset.
        text_column: the column holding the text in saved or Hub datasets.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    parts = []
    for source in sources:
        path = Path(source)
        if path.is_file():
            parts.append(datasets.Dataset.from_dict({"text": read_text_file(path)}))
        elif path.is_dir() and _is_saved_dataset(path):
            loaded = datasets.load_from_disk(str(path))
            parts.append(_text_only(loaded[split] if isinstance(loaded, datasets.DatasetDict) else loaded, text_column, source))
        elif path.is_dir():
            files = _text_files(path)
            if not files:
                raise ValueError(f"{os.fspath(path)!r} holds no .txt files or files without an extension.")
            parts.append(datasets.Dataset.from_dict({"text": [doc for file in files for doc in read_text_file(file)]}))
        else:
            parts.append(_text_only(datasets.load_dataset(str(source), split=split), text_column, source))
    return datasets.concatenate_datasets(parts) if len(parts) > 1 else parts[0]


def _text_only(dataset: datasets.Dataset, text_column: str, source) -> datasets.Dataset:
    if text_column not in dataset.column_names:
        raise ValueError(f"{source!r} has no column {text_column!r}; its columns are {dataset.column_names}.")
    dataset = dataset.select_columns([text_column])
    return dataset.rename_column(text_column, "text") if text_column != "text" else dataset
