"""Captured copies of real lines: each image of a dataset drawn ``copies`` times as a scanner or a camera might
have caught it, for training on real writing that was never scanned (IAM-OnDB's pen strokes rendered to clean
grey images) or on few real lines.

Copy ``c`` of row ``i`` is a function of ``(seed, i, c)`` alone (``numpy.random.default_rng([seed, i, c])``),
so the same arguments give the same images whatever ``num_proc`` is. Each copy, in this order:

- the writer's hand: where asked, small letters against long ascenders and descenders (:func:`small_letters`); a
  slant (shear), an elastic distortion of the strokes, thicker or thinner strokes (:func:`slant`,
  :func:`elastic_distortion`, :func:`.capture_effects.ink_spread`);
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

from ..image_processing_text_recognition import load_image, otsu_threshold
from ..old_umlauts import x_height_band
from .augmentation import augment
from .capture_effects import ink_spread, scan_effects
from .generation import CacheDir, cached_dataset

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
SMALL_LETTERS_SCALE = (0.5, 0.85)
"""The height a copy with :func:`small_letters` gives the x-height band, as a share of the band's own. George
Washington's x-height is a median 0.18 of his ink height, IAM-OnDB's writers' 0.33 (80 lines each, the handwriting
report): 0.55 of it."""


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


def small_letters(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """The writing with its small letters smaller against its ascenders and descenders, as hands with long flourishes
    write: the rows of the x-height band (:func:`~textrec.processing.old_umlauts.x_height_band`) squeezed to a share
    drawn from `SMALL_LETTERS_SCALE`, the rows of ink above and below stretched alike so that the writing keeps its
    height. A line without ink above or below the band is returned as it was."""
    values = np.asarray(image, dtype=np.float32)
    ink = values < otsu_threshold(values)
    band = x_height_band(ink)
    if band is None:
        return image
    inked_rows = np.flatnonzero(ink.any(axis=1))
    top, bottom = int(inked_rows[0]), int(inked_rows[-1]) + 1
    band_top, band_bottom = band[0], band[1] + 1
    above, letters, below = band_top - top, band_bottom - band_top, bottom - band_bottom
    if above + below == 0:
        return image
    scale = rng.uniform(*SMALL_LETTERS_SCALE)
    stretch = (above + below + letters * (1 - scale)) / (above + below)
    height, width = values.shape
    drawn_knots = [0, top, top + above * stretch, top + above * stretch + letters * scale, bottom, height]
    source_rows = np.interp(np.arange(height) + 0.5, drawn_knots, [0, top, band_top, band_bottom, bottom, height]) - 0.5
    rows, columns = np.meshgrid(source_rows, np.arange(width, dtype=np.float64), indexing="ij")
    moved = ndimage.map_coordinates(values, [rows, columns], order=1, mode="nearest")
    return Image.fromarray(np.clip(moved, 0, 255).astype(np.uint8))


HAND_EFFECTS = {"slant": slant, "elastic_distortion": elastic_distortion, "ink_spread": ink_spread}


def captured_copy(image: Image.Image, rng: np.random.Generator, small_letters_share: float = 0.0) -> Image.Image:
    """One captured copy of a greyscale line (see the module docstring); ``small_letters_share`` of the changed copies
    get :func:`small_letters` (drawn only when asked, so that other copies stay as they were)."""
    image = image.convert("L")
    if rng.random() < UNCHANGED_SHARE:
        return image
    if small_letters_share and rng.random() < small_letters_share:
        image = small_letters(image, rng)
    for name, effect in HAND_EFFECTS.items():
        if rng.random() < HAND_EFFECT_PROBABILITIES[name]:
            image = effect(image, rng)
    return scan_effects(augment(image, rng), rng)


FEATURES = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})


def _copy_rows(batch: dict, indices: list[int], *, seed: int, copies: int, small_letters_share: float) -> dict:
    images, texts = [], []
    for index, image, text in zip(indices, batch["image"], batch["text"]):
        image = load_image(image)
        for copy in range(copies):
            buffer = io.BytesIO()
            rng = np.random.default_rng([seed, index, copy])
            captured_copy(image, rng, small_letters_share).save(buffer, format="PNG")
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
    small_letters_share: float = 0.0,
    cache_dir: CacheDir = None,
    num_proc: int | None = None,
) -> datasets.Dataset:
    """``copies`` captured copies of each row of ``dataset`` (columns ``image`` and ``text``), in row order
    (the copies of row 0 first), cached like the synthetic datasets.

    Args:
        dataset: the real lines.
        copies: copies of each line (at least 1).
        seed: copy ``c`` of row ``i`` is drawn from ``numpy.random.default_rng([seed, i, c])``.
        small_letters_share: the share of changed copies whose small letters are made smaller against their
            ascenders and descenders (:func:`small_letters`), as hands with long flourishes write them.
        cache_dir: cache root (see :func:`.generation.cached_dataset`); ``False``: no caching.
        num_proc: worker processes (does not change the result).

    Returns:
        A dataset with columns ``image`` (``datasets.Image``, PNG) and ``text``.
    """
    if copies < 1:
        raise ValueError(f"copies must be at least 1, got {copies}")
    if not 0 <= small_letters_share <= 1:
        raise ValueError(f"small_letters_share must be within 0 and 1, got {small_letters_share}")
    arguments = {"copies": copies, "seed": seed, "source": dataset_fingerprint(dataset),
                 **({"small_letters_share": small_letters_share} if small_letters_share else {})}
    source = dataset.select_columns(["image", "text"])

    def build(scratch) -> datasets.Dataset:
        return source.map(
            _copy_rows, with_indices=True, batched=True, batch_size=16, fn_kwargs={"seed": seed, "copies": copies, "small_letters_share": small_letters_share},
            remove_columns=source.column_names, features=FEATURES, num_proc=num_proc,
            keep_in_memory=scratch is None, cache_file_name=None if scratch is None else str(scratch / "data.arrow"),
            desc=f"Making {copies} captured copies of {len(source)} lines",
        )

    return cached_dataset("captured-copies", arguments, build, cache_dir)
