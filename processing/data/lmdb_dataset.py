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

LMDB_DATA_FILE = "data.mdb"
FEATURES = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})


def is_lmdb_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an LMDB environment folder (holds ``data.mdb``)."""
    return (Path(path) / LMDB_DATA_FILE).is_file()


def _read_rows(path: str, stamp: tuple[int, int]):
    """The rows of the LMDB at ``path``; ``stamp`` (size and modification time of ``data.mdb``) only keys
    ``datasets``' cache, so that a changed file is read again."""
    with lmdb.open(path, readonly=True, lock=False, readahead=False, meminit=False) as environment:
        with environment.begin(write=False) as transaction:
            count = transaction.get(b"num-samples")
            if count is None:
                raise ValueError(f"{path} has no 'num-samples' key: not a scene-text LMDB dataset")
            for index in range(1, int(count.decode()) + 1):
                image = transaction.get(b"image-%09d" % index)
                label = transaction.get(b"label-%09d" % index)
                if image is None or label is None:
                    raise ValueError(f"{path}: sample {index} lacks its image or label key")
                yield {"image": {"bytes": bytes(image), "path": None}, "text": label.decode("utf-8")}


def read_lmdb_dataset(path: str | os.PathLike[str]) -> datasets.Dataset:
    """Read a scene-text LMDB folder into a dataset, in key order (written to ``datasets``' cache as
    Arrow, so large training sets are not held in memory).

    Args:
        path: The LMDB environment folder (with ``data.mdb``).

    Returns:
        A dataset with columns ``image`` (``datasets.Image``, the stored encoded bytes) and ``text``.
    """
    path = Path(path).expanduser()
    if not is_lmdb_folder(path):
        raise ValueError(f"{path} holds no {LMDB_DATA_FILE}: not an LMDB folder")
    status = (path / LMDB_DATA_FILE).stat()
    return datasets.Dataset.from_generator(
        _read_rows,
        features=FEATURES,
        gen_kwargs=dict(path=str(path.resolve()), stamp=(status.st_size, status.st_mtime_ns)),
    )
