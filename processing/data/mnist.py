"""MNIST from its IDX files, and strings of MNIST digits as in the sharp-attention paper's study.

The IDX format (LeCun's distribution of MNIST): a big-endian header of two zero bytes, a type code
(0x08 unsigned byte, 0x09 signed byte, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64) and the
number of dimensions, one big-endian int32 per dimension, then the values. :func:`read_idx` reads
such a file, gzip-compressed or not (told apart by its first bytes).

:func:`make_mnist_digit_sequences` concatenates ``length`` random digits, each turned into a
``digit_size`` square by :func:`.synthetic_digits.render_digit` (dark ink on a light page, optionally
turned about the vertical axis within [-30, 30] degrees), from one of three disjoint pools:
``"train"`` (the first 55,000 images of MNIST's training split), ``"validation"`` (its last 5,000) and
``"test"`` (MNIST's test split). Without an MNIST folder, scikit-learn's bundled digits (8x8) serve
instead, with their own pools (:func:`.synthetic_digits.digit_pool`).
"""

from __future__ import annotations

import functools
import gzip
import logging
import os
from pathlib import Path

import datasets
import numpy as np

from .generation import CacheDir, cached_dataset, generate_indexed
from .synthetic_digits import DIGIT_POOLS, digit_pool, render_digit_string

logger = logging.getLogger(__name__)


IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
"""IDX type codes and the NumPy dtypes they stand for."""

MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
"""File names of MNIST's splits; each may end in ``.gz``, and ``.idx`` may replace ``-idx``."""

VALIDATION_SIZE = 5_000
"""The last images of MNIST's training split that form the ``"validation"`` pool."""

FEATURES = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read one IDX file, gzip-compressed or not.

    Returns:
        The array, with the file's shape and (native-endian) dtype.

    Raises:
        ValueError: The file is not IDX, or its size disagrees with its header.
    """
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[:2] != b"\x00\x00" or raw[2] not in IDX_TYPES:
        raise ValueError(f"{path} is not an IDX file (header {raw[:4].hex()})")
    dtype, ndim = np.dtype(IDX_TYPES[raw[2]]), raw[3]
    shape = tuple(int(n) for n in np.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    offset = 4 + 4 * ndim
    expected = offset + int(np.prod(shape)) * dtype.itemsize
    if len(raw) != expected:
        raise ValueError(
            f"{path}: the header promises {shape} values of {dtype} ({expected} bytes), the file has {len(raw)}"
        )
    return np.frombuffer(raw, dtype=dtype, offset=offset).reshape(shape).astype(dtype.newbyteorder("="))


def _find_file(folder: Path, name: str) -> Path:
    candidates = [name, name.replace("-idx", ".idx")]
    for candidate in candidates:
        for suffix in ("", ".gz"):
            if (folder / f"{candidate}{suffix}").is_file():
                return folder / f"{candidate}{suffix}"
    raise FileNotFoundError(f"No {name}[.gz] in {folder} (the MNIST IDX files)")


@functools.cache
def load_mnist(folder: str, split: str) -> tuple[np.ndarray, np.ndarray]:
    """One of MNIST's splits from the IDX files in ``folder``.

    Args:
        folder: Holds ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``
            and ``t10k-labels-idx1-ubyte``, each optionally ``.gz``.
        split: ``"train"`` or ``"test"`` (MNIST's own splits).

    Returns:
        Images ``(n, 28, 28)`` uint8 (ink bright) and labels ``(n,)``.
    """
    if split not in MNIST_FILES:
        raise ValueError(f"MNIST has splits {tuple(MNIST_FILES)}, got {split!r}")
    image_name, label_name = MNIST_FILES[split]
    images = read_idx(_find_file(Path(folder), image_name))
    labels = read_idx(_find_file(Path(folder), label_name))
    if images.ndim != 3 or labels.shape != images.shape[:1]:
        raise ValueError(f"MNIST {split} in {folder}: images {images.shape} and labels {labels.shape} do not match")
    return images, labels


def mnist_pool(folder: str, split: str) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of one digit pool (see the module docstring)."""
    if split not in DIGIT_POOLS:
        raise ValueError(f"source_split must be one of {DIGIT_POOLS}, got {split!r}")
    if split == "test":
        return load_mnist(folder, "test")
    images, labels = load_mnist(folder, "train")
    cut = len(images) - VALIDATION_SIZE
    return (images[:cut], labels[:cut]) if split == "train" else (images[cut:], labels[cut:])


def _render_sequence(
    example: dict,
    *,
    seed: int,
    length: tuple[int, int],
    rotated: bool,
    digit_size: int,
    mnist_dir: str | None,
    source_split: str,
) -> dict:
    """Render the sequence numbered ``example["index"]``; a ``datasets.map`` function."""
    rng = np.random.default_rng([seed, example["index"]])
    images, labels = mnist_pool(mnist_dir, source_split) if mnist_dir else digit_pool(source_split)
    max_value = 255 if mnist_dir else 16
    return render_digit_string(rng, images, labels, length, rotated, digit_size, max_value)


def make_mnist_digit_sequences(
    num_samples: int,
    *,
    mnist_dir: str | os.PathLike[str] | None,
    length: int | tuple[int, int] = 5,
    rotated: bool = False,
    seed: int = 0,
    digit_size: int = 32,
    source_split: str = "train",
    cache_dir: CacheDir = None,
    num_proc: int | None = None,
) -> datasets.Dataset:
    """Generate (or load from the cache) images of strings of MNIST digits.

    Args:
        num_samples: Number of sequences (the paper: 20,000 for training, 10,000 for testing, per length).
        mnist_dir: Folder of the MNIST IDX files; ``None`` uses scikit-learn's bundled digits (with a
            warning).
        length: Digits per sequence, or an inclusive ``(min, max)`` range drawn per sequence.
        rotated: Turn each digit about the vertical axis by an angle uniform in [-30, 30] degrees.
        seed: Sequence ``i`` is drawn from ``numpy.random.default_rng([seed, i])``.
        digit_size: Side of each digit cell in pixels (the image height).
        source_split: Digit pool, ``"train"``, ``"validation"`` or ``"test"``.
        cache_dir: Cache root (``None``: ``$TEXTREC_CACHE`` or ``~/.cache/textrec/datasets``; ``False``: none).
        num_proc: Worker processes (does not change the result).

    Returns:
        A dataset with columns ``image`` (height ``digit_size``, ``digit_size`` per digit) and ``text``.
    """
    bounds = (length, length) if isinstance(length, int) else tuple(length)
    if len(bounds) != 2 or not 1 <= bounds[0] <= bounds[1]:
        raise ValueError(f"length must be a positive int or a (min, max) pair with 1 <= min <= max, got {length!r}")
    if source_split not in DIGIT_POOLS:
        raise ValueError(f"source_split must be one of {DIGIT_POOLS}, got {source_split!r}")
    folder = None
    if mnist_dir is None:
        logger.warning("No MNIST folder given: the digits come from scikit-learn's bundled 8x8 digits instead.")
    else:
        folder = str(Path(mnist_dir).expanduser().resolve())
        mnist_pool(folder, source_split)  # fails early on a folder without the files
    fn_kwargs = dict(
        seed=seed, length=bounds, rotated=rotated, digit_size=digit_size, mnist_dir=folder, source_split=source_split
    )
    arguments = {"num_samples": num_samples, **fn_kwargs, "length": list(bounds)}

    def build(scratch: Path | None) -> datasets.Dataset:
        desc = f"Rendering {num_samples} MNIST digit sequences"
        return generate_indexed(
            num_samples, _render_sequence, fn_kwargs, FEATURES, scratch, num_proc=num_proc, desc=desc
        )

    return cached_dataset("mnist-digits", arguments, build, cache_dir)
