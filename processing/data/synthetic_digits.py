"""Sequences of real handwritten digits, from scikit-learn's bundled ``load_digits()`` images.

The 1797 digits (8x8 pixels, 17 grey levels 0-16, ink bright) are split once, by a fixed
per-class permutation, into disjoint pools: ``"test"`` (20% of each class), ``"validation"``
(10%) and ``"train"`` (the other 70%). A held-out sequence is therefore made of digit images
never seen in training. (The bundled set carries no writer ids, so writers themselves may
recur across pools.)

Each digit goes through :func:`render_digit`, which works on any single-digit array (an
MNIST loader can reuse it with 28x28 images and ``max_value=255``): smooth upscaling to
``size x size``, inversion to dark ink on a light page like the text lines, and optionally a
turn about the vertical axis (a horizontal squeeze by ``cos(angle)`` with a perspective
keystone), as in the rotated-digit experiments of the attention-sharpness papers. The digits
of a sequence are concatenated side by side; sample ``i`` is drawn from
``numpy.random.default_rng([seed, i])``.
"""

from __future__ import annotations

import functools
import io
import math
from pathlib import Path

import datasets
import numpy as np
from PIL import Image

from .augmentation import perspective_coefficients
from .generation import CacheDir, cached_dataset, generate_indexed


DIGIT_POOLS = ("train", "validation", "test")
POOL_FRACTIONS = {"test": 0.2, "validation": 0.1}
"""Share of each digit class in the held-out pools; ``"train"`` gets the rest."""
POOL_PERMUTATION_SEED = 1797
MAX_ROTATION_DEGREES = 30.0
CAMERA_DISTANCE = 3.0
"""Distance from the camera to a turned digit, in digit widths: smaller means a stronger keystone."""

FEATURES = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})


@functools.cache
def _load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits: images ``(1797, 8, 8)`` (ink 0-16) and labels ``(1797,)``."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.images, digits.target


@functools.cache
def digit_pool_indices(split: str | None) -> np.ndarray:
    """Sorted indices into scikit-learn's digits of one pool (all of them for ``None``).

    Each class is permuted with a fixed seed; its first 20% go to ``"test"``, the next 10% to
    ``"validation"``, the rest to ``"train"``.
    """
    _, labels = _load_digits()
    if split is None:
        return np.arange(len(labels))
    if split not in DIGIT_POOLS:
        raise ValueError(f"source_split must be one of {DIGIT_POOLS} or None, got {split!r}")
    rng = np.random.default_rng(POOL_PERMUTATION_SEED)
    chosen = []
    for label in range(10):
        members = rng.permutation(np.flatnonzero(labels == label))
        num_test = round(POOL_FRACTIONS["test"] * len(members))
        num_validation = round(POOL_FRACTIONS["validation"] * len(members))
        bounds = {
            "test": (0, num_test),
            "validation": (num_test, num_test + num_validation),
            "train": (num_test + num_validation, len(members)),
        }
        start, stop = bounds[split]
        chosen.append(members[start:stop])
    return np.sort(np.concatenate(chosen))


def digit_pool(split: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The images ``(n, 8, 8)`` and labels ``(n,)`` of one pool (see :func:`digit_pool_indices`)."""
    images, labels = _load_digits()
    indices = digit_pool_indices(split)
    return images[indices], labels[indices]


def _turn_corners(size: int, angle: float) -> np.ndarray:
    """Where the corners of a ``size`` square land when it turns by ``angle`` degrees about its vertical axis.

    Pinhole view from :data:`CAMERA_DISTANCE` widths away, scaled so that the near edge keeps
    its full height; corners in the order top-left, top-right, bottom-right, bottom-left.
    """
    half, distance = size / 2, CAMERA_DISTANCE * size
    sine, cosine = math.sin(math.radians(angle)), math.cos(math.radians(angle))
    keep_height = (distance - half * abs(sine)) / distance
    corners = []
    for x, y in ((-half, -half), (half, -half), (half, half), (-half, half)):
        scale = keep_height * distance / (distance + x * sine)
        corners.append((half + x * cosine * scale, half + y * scale))
    return np.array(corners)


def render_digit(
    digit: np.ndarray,
    *,
    size: int = 32,
    angle: float = 0.0,
    max_value: float | None = None,
) -> np.ndarray:
    """Turn one digit image (bright ink on dark) into a ``size x size`` dark-on-light image.

    Args:
        digit: ``(height, width)`` array, ink values high (as in scikit-learn digits and MNIST).
        size: Output side in pixels; the digit is upscaled smoothly (bicubic).
        angle: Turn about the vertical axis in degrees (0: none): the digit's width shrinks by
            ``cos(angle)`` and its far side shrinks in height (keystone).
        max_value: Ink value drawn black (16 for scikit-learn digits, 255 for MNIST); ``None``
            takes the array's maximum.

    Returns:
        ``(size, size)`` uint8 array, 255 = paper.
    """
    if digit.ndim != 2:
        raise ValueError(f"expected a (height, width) digit array, got shape {digit.shape}")
    peak = float(digit.max()) if max_value is None else float(max_value)
    ink = np.clip(digit.astype(np.float32) / (peak or 1.0), 0.0, 1.0)
    upscaled = Image.fromarray(ink).resize((size, size), Image.Resampling.BICUBIC)
    grey = np.clip(255.0 * (1.0 - np.asarray(upscaled)), 0, 255).round().astype(np.uint8)
    if angle == 0:
        return grey
    square = np.array([[0, 0], [size, 0], [size, size], [0, size]], float)
    coefficients = perspective_coefficients(_turn_corners(size, angle), square)
    turned = Image.fromarray(grey).transform(
        (size, size),
        Image.Transform.PERSPECTIVE,
        coefficients,
        resample=Image.Resampling.BICUBIC,
        fillcolor=255,
    )
    return np.asarray(turned)


def _render_sequence(
    example: dict,
    *,
    seed: int,
    length: tuple[int, int],
    rotated: bool,
    digit_size: int,
    source_split: str | None,
) -> dict:
    """Render the sequence numbered ``example["index"]``; a ``datasets.map`` function."""
    rng = np.random.default_rng([seed, example["index"]])
    images, labels = digit_pool(source_split)
    return render_digit_string(rng, images, labels, length, rotated, digit_size, max_value=16)


def render_digit_string(
    rng: np.random.Generator,
    images: np.ndarray,
    labels: np.ndarray,
    length: tuple[int, int],
    rotated: bool,
    digit_size: int,
    max_value: int,
) -> dict:
    """A row of `length` (drawn in the range) random digits of the pool `images`/`labels`, each turned
    when `rotated`, as a PNG example `{"image": ..., "text": ...}`."""
    count = int(rng.integers(length[0], length[1] + 1))
    chosen = rng.integers(len(images), size=count)
    angles = (
        rng.uniform(-MAX_ROTATION_DEGREES, MAX_ROTATION_DEGREES, size=count) if rotated else np.zeros(count)
    )
    cells = [
        render_digit(images[i], size=digit_size, angle=a, max_value=max_value)
        for i, a in zip(chosen, angles, strict=True)
    ]
    buffer = io.BytesIO()
    Image.fromarray(np.concatenate(cells, axis=1)).save(buffer, format="PNG")
    text = "".join(str(int(labels[i])) for i in chosen)
    return {"image": {"bytes": buffer.getvalue(), "path": None}, "text": text}


def make_digit_sequences(
    num_samples: int,
    *,
    length: int | tuple[int, int] = 5,
    rotated: bool = False,
    seed: int = 0,
    digit_size: int = 32,
    source_split: str | None = "train",
    cache_dir: CacheDir = None,
    num_proc: int | None = None,
) -> datasets.Dataset:
    """Generate (or load from the cache) images of handwritten digit strings.

    Args:
        num_samples: Number of sequences.
        length: Digits per sequence, or an inclusive ``(min, max)`` range drawn per sequence.
        rotated: Turn each digit about the vertical axis by an angle uniform in [-30, 30] degrees.
            The same seed gives the same digits with and without rotation.
        seed: Sequence ``i`` is drawn from ``numpy.random.default_rng([seed, i])``.
        digit_size: Side of each digit cell in pixels (the image height).
        source_split: Digit pool: ``"train"``, ``"validation"``, ``"test"`` (disjoint, see
            :func:`digit_pool`) or ``None`` for all 1797 digits.
        cache_dir: Cache root (``None``: ``$TEXTREC_CACHE`` or ``~/.cache/textrec/datasets``;
            ``False``: no caching).
        num_proc: Worker processes (does not change the result).

    Returns:
        A dataset with columns ``image`` (``datasets.Image``, height ``digit_size``, width
        ``digit_size`` per digit) and ``text`` (the digit string).
    """
    bounds = (length, length) if isinstance(length, int) else tuple(length)
    if len(bounds) != 2 or not 1 <= bounds[0] <= bounds[1]:
        raise ValueError(
            f"length must be a positive int or a (min, max) pair with 1 <= min <= max, got {length!r}"
        )
    if source_split is not None and source_split not in DIGIT_POOLS:
        raise ValueError(f"source_split must be one of {DIGIT_POOLS} or None, got {source_split!r}")
    fn_kwargs = {
        "seed": seed,
        "length": bounds,
        "rotated": rotated,
        "digit_size": digit_size,
        "source_split": source_split,
    }
    arguments = {
        "num_samples": num_samples,
        **fn_kwargs,
        "length": list(bounds),
    }

    def build(scratch: Path | None) -> datasets.Dataset:
        desc = f"Rendering {num_samples} digit sequences"
        return generate_indexed(
            num_samples, _render_sequence, fn_kwargs, FEATURES, scratch, num_proc=num_proc, desc=desc
        )

    return cached_dataset("synthetic-digits", arguments, build, cache_dir)
