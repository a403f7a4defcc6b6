"""Generation of synthetic datasets sample by sample, and their on-disk cache.

Generators render sample ``i`` from ``numpy.random.default_rng([seed, i])`` only, so
:func:`generate_indexed` can hand any index range to any worker.

A generated dataset is saved with ``Dataset.save_to_disk`` under ``<cache root>/<kind>-<key>``,
where the key hashes every argument that changes its content (the fonts and corpus it was made from among
them) and the source of this package (:func:`code_fingerprint`: a cached dataset is never reused after the code
that drew it changed, as an upgraded textrec's would be). The folder is written under a temporary name and
renamed when complete, so an interrupted run never leaves a half-written entry, and two
processes racing on the same entry both end up reading one copy.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

import datasets

logger = logging.getLogger(__name__)

CacheDir: TypeAlias = str | os.PathLike | Literal[False] | None
"""Where generated datasets are cached: a folder, ``None`` for :func:`default_cache_dir`, or
``False`` to generate in memory without caching."""

ARGUMENTS_FILE = "textrec_arguments.json"
"""Written into each cache entry: the arguments it was generated from, for people to read."""


def default_cache_dir() -> Path:
    """``$TEXTREC_CACHE`` when set, else ``~/.cache/textrec/datasets``."""
    return Path(os.environ.get("TEXTREC_CACHE", "~/.cache/textrec/datasets")).expanduser()


@functools.cache
def code_fingerprint() -> str:
    """Hash of the source files of the package that draws and loads datasets (`textrec.processing.data`)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def cache_key(kind: str, arguments: Mapping[str, Any]) -> str:
    """Hash identifying a generated dataset: ``kind``, its JSON-serialisable arguments and the code that draws it."""
    payload = json.dumps({"kind": kind, **arguments, "code": code_fingerprint()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def generate_indexed(
    num_samples: int,
    function: Callable[..., dict],
    fn_kwargs: Mapping[str, Any],
    features: datasets.Features,
    scratch: Path | None,
    *,
    num_proc: int | None = None,
    desc: str,
) -> datasets.Dataset:
    """Build a dataset whose row ``i`` is ``function({"index": i}, **fn_kwargs)``.

    Args:
        num_samples: Number of rows.
        function: Makes one row (a dict matching ``features``) from its index.
        fn_kwargs: Further keyword arguments of ``function`` (picklable, for the workers).
        features: The dataset's features.
        scratch: Folder for the Arrow file being written, or ``None`` to keep it in memory.
        num_proc: Worker processes.
        desc: Progress-bar label.
    """
    indices = datasets.Dataset.from_dict({"index": list(range(num_samples))})
    return indices.map(
        function,
        fn_kwargs=dict(fn_kwargs),
        remove_columns=["index"],
        features=features,
        num_proc=num_proc,
        keep_in_memory=scratch is None,
        cache_file_name=None if scratch is None else str(scratch / "data.arrow"),
        desc=desc,
    )


def cached_dataset(
    kind: str,
    arguments: Mapping[str, Any],
    build: Callable[[Path | None], datasets.Dataset],
    cache_dir: CacheDir,
) -> datasets.Dataset:
    """Load the dataset for (``kind``, ``arguments``) from the cache, building and saving it if absent.

    Args:
        kind: Generator name, the prefix of the cache entry's folder name.
        arguments: Everything the content depends on (JSON-serialisable).
        build: Makes the dataset. It receives a scratch folder for intermediate Arrow files, or
            ``None`` when the dataset is not cached and should be kept in memory.
        cache_dir: See :data:`CacheDir`.

    Returns:
        The dataset; when cached, the copy loaded (memory-mapped) from the cache entry.
    """
    if cache_dir is False:
        return build(None)
    root = default_cache_dir() if cache_dir is None else Path(cache_dir).expanduser()
    entry = root / f"{kind}-{cache_key(kind, arguments)}"
    if entry.is_dir():
        logger.info("Loading cached %s from %s", kind, entry)
        return datasets.load_from_disk(str(entry))
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=f".{entry.name}.") as scratch:
        staging, arrow = Path(scratch) / "dataset", Path(scratch) / "arrow"
        arrow.mkdir()
        build(arrow).save_to_disk(str(staging))
        (staging / ARGUMENTS_FILE).write_text(
            json.dumps({"kind": kind, **arguments, "code": code_fingerprint()}, indent=2, sort_keys=True)
        )
        try:
            staging.rename(entry)
        except OSError:  # another process saved the same entry first
            if not entry.is_dir():
                raise
        else:
            logger.info("Saved %s to %s", kind, entry)
    return datasets.load_from_disk(str(entry))
