"""Slant correction: handwriting leaning to one side sheared upright before it is read (NumPy and Pillow only).

A writer's slant is one of the largest differences between hands: George Washington's letters lean about 40
degrees to the right, the IAM-OnDB writers a handwriting reader learns from stand about upright. The slant is
estimated as Vinciarelli and Luettin do ("A new normalization technique for cursive handwritten words", Pattern
Recognition Letters 22, 2001): of the shears `SLANT_SHEARS`, the one after which the ink stands in the most
unbroken vertical strokes, each column that holds one single run of ink (`SLANT_MIN_STROKE_SHARE` of the ink's height
or longer) scoring its length squared; a lean is corrected only where that beats the line as it is by
`SLANT_MIN_GAIN`.

`TextRecognitionImageProcessor(deslant=True)` applies it to every image (`normalize_capture`), in training as in
reading; the ONNX reader (`textrec_onnx.py`) loads this file beside it.
"""

import numpy as np
from PIL import Image

SLANT_SHEARS = np.round(np.linspace(-1.0, 1.0, 41), 2)
"""The shears tried, as the horizontal shift per row of height: leans of up to 45 degrees either way, in steps of
about 3 degrees; positive leans to the right (the top of a stroke right of its foot)."""
SLANT_ROWS = 32
"""The image is measured at this height (its width scaled alike): enough rows to tell a stroke's lean, few enough
that measuring costs under a millisecond for most lines."""
SLANT_MIN_GAIN = 1.6
"""A lean is corrected only where the strokes it stands upright score at least this many times what they score as
they are: print and most hands stand upright already, and a short or small line (a form's field) can score a steep
shear a little higher by chance ..."""
SLANT_MIN_STROKE_SHARE = 0.4
"""... and a column's run of ink counts as a stroke only from this share of the ink's height up (an underline or a
box's edge, sheared steeply, would make many short runs). Both chosen with the fifth `crnn-handwriting` on development
lines (500 FUNSD form lines, 400 IAM-OnDB lines, Washington's 388), reading with deslant: every lean corrected
16.13% / 15.81% / 28.12% CER; strokes from 0.4 of the height 11.89% / 15.10% / 28.07%; and a gain of 1.6 10.82% /
15.09% / 28.07% (without deslant 9.51% / 14.56% / 46.82%)."""
SLANT_MIN_CONTRAST = 24
"""Grey levels between the darkest and lightest pixels (2nd and 98th percentiles) below which an image is taken as
blank, with no slant to measure (the image processor's `MIN_INK_CONTRAST`, which takes them as `CONTRAST_PERCENTILES`:
here a line whose ink is under 2% of its image keeps its slant)."""


def estimate_slant(luminance: np.ndarray, ink_threshold: float) -> float:
    """The lean of the strokes of an 8-bit luminance image of dark text on light, as one of `SLANT_SHEARS`: the
    shear whose upright correction leaves the ink (darker than `ink_threshold`, the image's Otsu threshold) in the most
    unbroken vertical strokes (module docstring). 0.0 for a blank image."""
    luminance = np.asarray(luminance)
    low, high = np.percentile(luminance, (2, 98))
    if high - low < SLANT_MIN_CONTRAST:
        return 0.0
    height, width = luminance.shape
    ink = luminance < ink_threshold
    if height != SLANT_ROWS:
        size = (max(1, round(width * SLANT_ROWS / height)), SLANT_ROWS)
        ink = np.asarray(Image.fromarray(ink.astype(np.uint8) * 255).resize(size, Image.Resampling.BILINEAR)) >= 128
    inked_rows = np.flatnonzero(ink.any(axis=1))
    if inked_rows.size == 0:  # ink too thin to survive the reduction to SLANT_ROWS rows: nothing to measure
        return 0.0
    rows, columns = ink.shape
    # Column x of the image corrected for lean s holds the ink at x + s * (middle - y) of row y.
    shifts = np.rint(SLANT_SHEARS[:, None] * ((rows - 1) / 2 - np.arange(rows))[None, :]).astype(np.int64)
    pad = int(np.abs(shifts).max())
    # Each corrected row is a window of the row padded with paper: rows copied whole, not pixel by pixel.
    padded = np.zeros((rows, columns + 4 * pad), dtype=bool)
    padded[:, 2 * pad:2 * pad + columns] = ink
    windows = np.lib.stride_tricks.sliding_window_view(padded, columns + 2 * pad, axis=1)
    upright = windows[np.arange(rows)[None, :], shifts + pad]  # (shears, rows, columns + 2 * pad)
    counts = upright.sum(axis=1)
    runs = upright[:, 0, :].astype(np.int64) + (upright[:, 1:, :] & ~upright[:, :-1, :]).sum(axis=1)
    shortest = SLANT_MIN_STROKE_SHARE * (inked_rows[-1] - inked_rows[0] + 1)
    scores = np.where((runs == 1) & (counts >= shortest), counts.astype(np.float64) ** 2, 0.0).sum(axis=1)
    # Ties (a blank-ish image, a single dot) go to the shear nearest upright.
    best = np.flatnonzero(scores == scores.max())
    best = best[np.argmin(np.abs(SLANT_SHEARS[best]))]
    if scores[best] < SLANT_MIN_GAIN * scores[np.argmin(np.abs(SLANT_SHEARS))]:
        return 0.0
    return float(SLANT_SHEARS[best])


def deslant(image: Image.Image, background, ink_threshold: float) -> Image.Image:
    """`image` (8-bit "L" or "RGB", dark text on light) sheared so that its strokes stand upright
    (`estimate_slant`, its ink darker than `ink_threshold`), widened by the shear and filled with `background` (a grey
    level or an RGB triple); the image itself where it stands upright already."""
    luminance = np.asarray(image.convert("L") if image.mode != "L" else image)
    slant = estimate_slant(luminance, ink_threshold)
    if slant == 0.0:
        return image
    width, height = image.size
    extra = int(np.ceil(abs(slant) * height))
    # The output's column x of row y takes the input's x - extra + slant * (height - y) (slant > 0), or
    # x + slant * (height - y) (slant < 0): each row moved by its lean, nothing cut off.
    offset = slant * height - (extra if slant > 0 else 0)
    return image.transform((width + extra, height), Image.Transform.AFFINE, (1, -slant, offset, 0, 1, 0),
                           resample=Image.Resampling.BILINEAR, fillcolor=background)
