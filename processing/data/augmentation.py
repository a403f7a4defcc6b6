"""Image augmentations for text-line images (PIL in, PIL out, same size and mode).

Each transform is a plain function with explicit magnitudes. :func:`augment` is the entry point:
it walks the transforms in a fixed order, applies each with its probability, and draws the
magnitude uniformly up to a maximum scaled by ``strength``. All randomness comes from the
``numpy.random.Generator`` passed in, so the same generator state gives the same image.

Geometric transforms (rotation, perspective) fill the uncovered area with the image's
background grey, estimated from its border. They keep the size, so on a tightly cropped line
they may clip the ends of the ink; the synthetic-line generator therefore applies them to a
padded canvas before cropping (``augment(..., photometric=False)``, then ``geometric=False``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter

DEFAULT_PROBABILITIES: Mapping[str, float] = {
    "rotation": 0.3,
    "perspective": 0.3,
    "blur": 0.3,
    "contrast": 0.4,
    "noise": 0.3,
    "jpeg": 0.3,
}
"""Probability of each transform in :func:`augment`, keyed by transform name."""

MAX_ROTATION_DEGREES = 3.0
MAX_PERSPECTIVE_SHIFT = (0.03, 0.1)
"""Largest corner displacement of the perspective warp, as fractions of (width, height)."""
MAX_BLUR_RADIUS = 1.2
MAX_CONTRAST_CHANGE = 0.4
MAX_BRIGHTNESS_CHANGE = 0.15
MAX_NOISE_SIGMA = 10.0
MIN_JPEG_QUALITY = 20


def background_color(image: Image.Image) -> int | tuple[int, ...]:
    """Median colour of the one-pixel border: the page colour of a text-line crop."""
    array = np.asarray(image)
    border = np.concatenate([array[0], array[-1], array[:, 0], array[:, -1]])
    median = np.median(border, axis=0).round().astype(int)
    return int(median) if median.ndim == 0 else tuple(median.tolist())


def rotate(image: Image.Image, degrees: float) -> Image.Image:
    """Rotate counter-clockwise about the centre, keeping the size; corners filled with background."""
    return image.rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=background_color(image))


def perspective_coefficients(output_corners: np.ndarray, input_corners: np.ndarray) -> list[float]:
    """Coefficients of PIL's PERSPECTIVE transform mapping ``output_corners`` to ``input_corners``."""
    rows, targets = [], []
    for (x, y), (u, v) in zip(output_corners, input_corners, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        targets.extend([u, v])
    return np.linalg.solve(np.asarray(rows, float), np.asarray(targets, float)).tolist()


def perspective_warp(image: Image.Image, corner_shifts: np.ndarray) -> Image.Image:
    """Move the image corners inward and warp the content onto the new quadrilateral.

    Args:
        image: The image.
        corner_shifts: ``(4, 2)`` inward displacements in pixels of the top-left, top-right,
            bottom-right and bottom-left corners, as (horizontal, vertical) pairs, non-negative.
    """
    width, height = image.size
    corners = np.array([[0, 0], [width, 0], [width, height], [0, height]], float)
    inward = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]], float)
    coefficients = perspective_coefficients(corners + inward * corner_shifts, corners)
    return image.transform(
        image.size,
        Image.Transform.PERSPECTIVE,
        coefficients,
        resample=Image.Resampling.BICUBIC,
        fillcolor=background_color(image),
    )


def gaussian_blur(image: Image.Image, radius: float) -> Image.Image:
    """Gaussian blur with the given radius in pixels."""
    return image.filter(ImageFilter.GaussianBlur(radius))


def adjust_contrast_brightness(image: Image.Image, contrast: float, brightness: float) -> Image.Image:
    """Scale contrast and brightness by the given factors (1.0 leaves the image unchanged)."""
    return ImageEnhance.Brightness(ImageEnhance.Contrast(image).enhance(contrast)).enhance(brightness)


def gaussian_noise(image: Image.Image, rng: np.random.Generator, sigma: float) -> Image.Image:
    """Add independent Gaussian noise of standard deviation ``sigma`` grey levels to each pixel."""
    array = np.asarray(image, dtype=np.float32)
    noisy = array + rng.normal(0.0, sigma, size=array.shape).astype(np.float32)
    return Image.fromarray(np.clip(noisy, 0, 255).round().astype(np.uint8))


def jpeg_recompress(image: Image.Image, quality: int) -> Image.Image:
    """Encode as JPEG at ``quality`` (1-95) and decode again, leaving its block artefacts."""
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    return Image.open(buffer).convert(image.mode)


def augment(
    image: Image.Image,
    rng: np.random.Generator,
    *,
    strength: float = 1.0,
    probabilities: Mapping[str, float] | None = None,
    geometric: bool = True,
    photometric: bool = True,
) -> Image.Image:
    """Apply a random subset of the transforms, in a fixed order.

    Order: rotation, perspective (geometric); blur, contrast/brightness, noise, JPEG
    (photometric). For each enabled transform one uniform draw decides whether it applies, then
    its magnitude is drawn uniformly up to its maximum times ``strength``.

    Args:
        image: Greyscale (``L``) or ``RGB`` image.
        rng: Source of every random decision.
        strength: Scale of all magnitudes; 0 leaves the image unchanged, 1 is the default
            range (legible text lines), larger values are harsher.
        probabilities: Per-transform probabilities overriding :data:`DEFAULT_PROBABILITIES`
            (keys as there).
        geometric: Whether rotation and perspective may apply.
        photometric: Whether blur, contrast/brightness, noise and JPEG may apply.

    Returns:
        An image of the same size and mode (the input itself when no transform applied).
    """
    unknown = set(probabilities or {}) - set(DEFAULT_PROBABILITIES)
    if unknown:
        raise ValueError(f"unknown transforms {sorted(unknown)}; known: {sorted(DEFAULT_PROBABILITIES)}")
    if strength <= 0:
        return image
    chances = {**DEFAULT_PROBABILITIES, **(probabilities or {})}
    enabled = {
        "rotation": geometric,
        "perspective": geometric,
        "blur": photometric,
        "contrast": photometric,
        "noise": photometric,
        "jpeg": photometric,
    }
    for name, allowed in enabled.items():
        if not allowed or rng.random() >= chances[name]:
            continue
        if name == "rotation":
            image = rotate(image, rng.uniform(-1, 1) * MAX_ROTATION_DEGREES * strength)
        elif name == "perspective":
            limits = np.array(MAX_PERSPECTIVE_SHIFT) * image.size * strength
            image = perspective_warp(image, rng.uniform(0, 1, size=(4, 2)) * limits)
        elif name == "blur":
            image = gaussian_blur(image, rng.uniform(0.3, 1) * MAX_BLUR_RADIUS * strength)
        elif name == "contrast":
            contrast = 1 - rng.uniform(0, MAX_CONTRAST_CHANGE * strength)
            brightness = 1 + rng.uniform(-1, 1) * MAX_BRIGHTNESS_CHANGE * strength
            image = adjust_contrast_brightness(image, max(contrast, 0.1), brightness)
        elif name == "noise":
            image = gaussian_noise(image, rng, rng.uniform(0.2, 1) * MAX_NOISE_SIGMA * strength)
        else:
            quality = round(95 - rng.uniform(0, 1) * (95 - MIN_JPEG_QUALITY) * min(strength, 1))
            image = jpeg_recompress(image, quality)
    return image
