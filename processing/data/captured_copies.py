"""Captured copies of real lines: each image of a dataset drawn ``copies`` times as a scanner or a camera might
have caught it, for training on real writing that was never scanned (IAM-OnDB's pen strokes rendered to clean
grey images) or on few real lines.

Copy ``c`` of row ``i`` is a function of ``(seed, i, c)`` alone (``numpy.random.default_rng([seed, i, c])``),
so the same arguments give the same images whatever ``num_proc`` is. Each copy, in this order:

- the writer's hand: a slant (shear), an elastic distortion of the strokes, thicker or thinner strokes
  (:func:`slant`, :func:`elastic_distortion`, :func:`.capture_effects.ink_spread`);
- the mild augmentation of the synthetic lines (:func:`.augmentation.augment`: rotation, perspective, blur,
  contrast, noise, JPEG);
- the data engine's scanner effects (:func:`.capture_effects.scan_effects`: low resolution, binarisation,
  paper, shading, rules, parts of neighbouring lines, light on dark).

A share of copies (`UNCHANGED_SHARE`) is left as it was, so the clean original is seen too.
"""

from __future__ import annotations

import hashlib
import io

import datasets
import numpy as np
from PIL import Image
from scipy import ndimage

from ..image_processing_text_recognition import load_image
from .augmentation import augment
from .capture_effects import ink_spread, scan_effects
from .generation import CacheDir, cached_dataset

FORMAT_VERSION = 1
"""Bumped whenever the copies change, so that older cache entries are not reused."""
UNCHANGED_SHARE = 0.1
"""Share of copies left as the source image."""
HAND_EFFECT_PROBABILITIES = {"slant": 0.5, "elastic_distortion": 0.5, "ink_spread": 0.35}
"""Probability of each change of the writer's hand, applied in this order."""
SLANT_RANGE = (-0.35, 0.35)
"""Horizontal shear (x shift per pixel of height) of :func:`slant`; positive leans the strokes right."""
ELASTIC_ALPHA = (0.6, 1.6)
"""Displacement of :func:`elastic_distortion`, in pixels per 32 pixels of line height."""
ELASTIC_SIGMA = (0.25, 0.5)
"""Smoothness of :func:`elastic_distortion`'s field, as a share of the line height."""


def slant(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Shear the line horizontally (a writer's slant), widening the image so that no stroke leaves it."""
    shear = rng.uniform(*SLANT_RANGE)
    width, height = image.size
    extra = int(np.ceil(abs(shear) * height))
    paper = int(np.percentile(np.asarray(image), 95))
    # x_in = x_out + shear * y - offset: the top row shifts by `extra` to one side of the bottom row.
    offset = extra if shear > 0 else 0
    return image.transform(
        (width + extra, height), Image.Transform.AFFINE, (1, shear, -offset, 0, 1, 0),
        resample=Image.Resampling.BILINEAR, fillcolor=paper,
    )


def elastic_distortion(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Bend the strokes with a smooth random displacement field (Simard et al., 2003), scaled to the line's
    height so that a line looks alike at any resolution."""
    values = np.asarray(image, dtype=np.float32)
    height, width = values.shape
    sigma = rng.uniform(*ELASTIC_SIGMA) * height
    alpha = rng.uniform(*ELASTIC_ALPHA) * height / 32 * sigma
    fields = [ndimage.gaussian_filter(rng.uniform(-1, 1, size=values.shape), sigma, mode="constant") * alpha
              for _ in range(2)]
    rows, columns = np.mgrid[0:height, 0:width].astype(np.float32)
    paper = float(np.percentile(values, 95))
    moved = ndimage.map_coordinates(values, [rows + fields[0], columns + fields[1]], order=1, mode="constant", cval=paper)
    return Image.fromarray(np.clip(moved, 0, 255).astype(np.uint8))


HAND_EFFECTS = {"slant": slant, "elastic_distortion": elastic_distortion, "ink_spread": ink_spread}


def captured_copy(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """One captured copy of a greyscale line (see the module docstring)."""
    image = image.convert("L")
    if rng.random() < UNCHANGED_SHARE:
        return image
    for name, effect in HAND_EFFECTS.items():
        if rng.random() < HAND_EFFECT_PROBABILITIES[name]:
            image = effect(image, rng)
    return scan_effects(augment(image, rng), rng)


FEATURES = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})


def _copy_rows(batch: dict, indices: list[int], *, seed: int, copies: int) -> dict:
    images, texts = [], []
    for index, image, text in zip(indices, batch["image"], batch["text"]):
        image = load_image(image)
        for copy in range(copies):
            buffer = io.BytesIO()
            captured_copy(image, np.random.default_rng([seed, index, copy])).save(buffer, format="PNG")
            images.append({"bytes": buffer.getvalue(), "path": None})
            texts.append(text)
    return {"image": images, "text": texts}


def dataset_fingerprint(dataset: datasets.Dataset) -> str:
    """A hash of a dataset's texts and image bytes (what its copies depend on)."""
    digest = hashlib.sha256()
    undecoded = dataset.select_columns(["image", "text"]).cast_column("image", datasets.Image(decode=False))
    for rows in undecoded.iter(batch_size=1000):
        for value, text in zip(rows["image"], rows["text"]):
            source = value["bytes"] if value["bytes"] is not None else open(value["path"], "rb").read()
            digest.update(hashlib.sha256(source).digest())
            digest.update(text.encode())
    return digest.hexdigest()[:16]


def make_captured_copies(
    dataset: datasets.Dataset,
    copies: int = 4,
    *,
    seed: int = 0,
    cache_dir: CacheDir = None,
    num_proc: int | None = None,
) -> datasets.Dataset:
    """``copies`` captured copies of each row of ``dataset`` (columns ``image`` and ``text``), in row order
    (the copies of row 0 first), cached like the synthetic datasets.

    Args:
        dataset: the real lines.
        copies: copies of each line (at least 1).
        seed: copy ``c`` of row ``i`` is drawn from ``numpy.random.default_rng([seed, i, c])``.
        cache_dir: cache root (see :func:`.generation.cached_dataset`); ``False``: no caching.
        num_proc: worker processes (does not change the result).

    Returns:
        A dataset with columns ``image`` (``datasets.Image``, PNG) and ``text``.
    """
    if copies < 1:
        raise ValueError(f"copies must be at least 1, got {copies}")
    arguments = {"format_version": FORMAT_VERSION, "copies": copies, "seed": seed, "source": dataset_fingerprint(dataset)}
    source = dataset.select_columns(["image", "text"])

    def build(scratch) -> datasets.Dataset:
        return source.map(
            _copy_rows, with_indices=True, batched=True, batch_size=16, fn_kwargs={"seed": seed, "copies": copies},
            remove_columns=source.column_names, features=FEATURES, num_proc=num_proc,
            keep_in_memory=scratch is None, cache_file_name=None if scratch is None else str(scratch / "data.arrow"),
            desc=f"Making {copies} captured copies of {len(source)} lines",
        )

    return cached_dataset("captured-copies", arguments, build, cache_dir)
