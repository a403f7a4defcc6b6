"""Scene-text datasets in the LMDB layout of the public benchmarks.

The layout of deep-text-recognition-benchmark, PARSeq and most scene-text releases (IIIT5k, SVT,
IC13, IC15, SVTP, CUTE80, MJSynth, SynthText): an LMDB environment (a folder holding ``data.mdb``)
whose key ``num-samples`` gives the count n as text, and, for i = 1 ... n, ``image-%09d`` holds an
encoded image (PNG, JPEG, ...) and ``label-%09d`` its UTF-8 transcription.
"""

from __future__ import annotations

import os
from pathlib import Path

import datasets
import lmdb
from datasets.exceptions import DatasetGenerationError

LMDB_DATA_FILE = "data.mdb"
FEATURES = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})


def is_lmdb_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an LMDB environment folder (holds ``data.mdb``)."""
    return (Path(path) / LMDB_DATA_FILE).is_file()


def _open(path: str) -> lmdb.Environment:
    """The LMDB environment in the folder ``path``, read-only."""
    return lmdb.open(path, readonly=True, lock=False, readahead=False, meminit=False)


def check_lmdb(path: Path) -> None:
    """Checks, before any row is read, that ``data.mdb`` in ``path`` is a whole LMDB file (it holds every page its
    last transaction refers to: reading a page past the end of a file cut short kills the process with SIGBUS)
    with a ``num-samples`` count.

    Raises:
        ValueError: naming the file and what is wrong with it.
    """
    data = path / LMDB_DATA_FILE
    size = data.stat().st_size
    if size == 0:
        raise ValueError(f"{data} is empty: not an LMDB file")
    try:
        with _open(str(path)) as environment:
            needed = (environment.info()["last_pgno"] + 1) * environment.stat()["psize"]
            if size < needed:
                raise ValueError(f"{data} is cut short: {size} bytes of the {needed} its LMDB environment fills")
            with environment.begin(write=False) as transaction:
                count = transaction.get(b"num-samples")
    except lmdb.Error as error:
        raise ValueError(f"{data} cannot be read as an LMDB file ({error})") from None
    if count is None:
        raise ValueError(f"{path} has no 'num-samples' key: not a scene-text LMDB dataset")
    if not count.strip().isdigit():
        raise ValueError(f"{path}: the 'num-samples' key holds {bytes(count)[:20]!r}, not a count of samples")


def _read_rows(path: str, stamp: tuple[int, int]):
    """The rows of the LMDB at ``path`` (checked by `check_lmdb`); ``stamp`` (size and modification time of
    ``data.mdb``) only keys ``datasets``' cache, so that a changed file is read again. A missing key, a label
    that is not UTF-8 or a corrupt page is a ValueError naming the folder and the key."""
    with _open(path) as environment, environment.begin(write=False) as transaction:
        count = int(transaction.get(b"num-samples").decode())
        for index in range(1, count + 1):
            keys = b"image-%09d" % index, b"label-%09d" % index
            try:
                image, label = transaction.get(keys[0]), transaction.get(keys[1])
            except lmdb.Error as error:
                raise ValueError(f"{path}: sample {index} cannot be read ({error})") from None
            for key, value in zip(keys, (image, label)):
                if value is None:
                    raise ValueError(f"{path}: num-samples is {count}, but sample {index} has no {key.decode()} key")
            try:
                text = label.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(f"{path}: {keys[1].decode()} is not UTF-8 text ({error.reason} at byte "
                                 f"{error.start}: {label[error.start:error.start + 8]!r})") from None
            yield {"image": {"bytes": bytes(image), "path": None}, "text": text}


def read_lmdb_dataset(path: str | os.PathLike[str]) -> datasets.Dataset:
    """Read a scene-text LMDB folder into a dataset, in key order (written to ``datasets``' cache as
    Arrow, so large training sets are not held in memory).

    Args:
        path: The LMDB environment folder (with ``data.mdb``).

    Returns:
        A dataset with columns ``image`` (``datasets.Image``, the stored encoded bytes) and ``text``.

    Raises:
        ValueError: ``data.mdb`` is not a whole LMDB file with a ``num-samples`` count (`check_lmdb`), or a
            sample's key is missing, its label not UTF-8 or its page corrupt (naming the folder and the key).
    """
    path = Path(path).expanduser()
    if not is_lmdb_folder(path):
        raise ValueError(f"{path} holds no {LMDB_DATA_FILE}: not an LMDB folder")
    check_lmdb(path)
    status = (path / LMDB_DATA_FILE).stat()
    try:
        return datasets.Dataset.from_generator(
            _read_rows,
            features=FEATURES,
            gen_kwargs=dict(path=str(path.resolve()), stamp=(status.st_size, status.st_mtime_ns)),
        )
    except DatasetGenerationError as error:  # it wraps what `_read_rows` raised
        if isinstance(error.__cause__, ValueError):
            raise error.__cause__ from None
        raise
