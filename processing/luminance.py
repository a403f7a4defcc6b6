"""The grey a text image is read by, where PIL's conversions would lose its text: integer images read at their own bit
depth (a 12-bit scan stored in 16 bits is not all but black), and colour images whose text differs from its ground in
colour far more than in brightness read along their colours' main axis (red on a blue of like brightness); the
percentiles of that grey (`grey_percentiles`); and whether a margin of it is blank, before it is cut
(`is_blank_margin`); and a line's wide blank gaps filled with its paper (`fill_blank_gaps`).

NumPy and Pillow only: textrec's image processor, a Hub folder's copy of it and the ONNX reader (`textrec_onnx.py`,
which finds this file beside it) load images alike.
"""

import numpy as np
from PIL import Image, ImageFilter


def grey_percentiles(grey: np.ndarray, percentiles) -> np.ndarray:
    """`np.percentile(grey, percentiles)` (its default, linear interpolation), counted from the histogram of an 8-bit
    image instead of sorting its pixels: about twice as fast on a line (25 against 55 microseconds), where the image
    processor asks for them several times per image. Other dtypes go to `np.percentile`."""
    grey = np.asarray(grey)
    if grey.dtype != np.uint8 or grey.size == 0:
        return np.percentile(grey, percentiles)
    cumulative = np.cumsum(np.bincount(grey.ravel(), minlength=256))
    index = np.asarray(percentiles, dtype=np.float64) / 100 * (grey.size - 1)
    below = np.floor(index)
    low = np.searchsorted(cumulative, below, side="right").astype(np.float64)  # the values at `below` and `below + 1`
    high = np.searchsorted(cumulative, np.minimum(below + 1, grey.size - 1), side="right").astype(np.float64)
    fraction = index - below
    difference = high - low
    return np.where(fraction >= 0.5, high - difference * (1 - fraction), low + difference * fraction)  # NumPy's lerp


SPARSE_INK_PERCENTILE = 0.02
"""The percentile of an image's grey, softened over 3 x 3 pixels, taken as its darkest where its ink is too sparse for
the image processor's percentiles (`sparse_ink_contrast`)."""


def sparse_ink_contrast(grey: np.ndarray) -> float:
    """Grey levels between an 8-bit image's darkest and lightest pixels where its ink may be a few hundred pixels (a
    word in a large blank image, under the 0.5% of its pixels that the image processor's percentiles take as its
    darkest): the `SPARSE_INK_PERCENTILE` and 99.5th percentiles of the image softened by a 3 x 3 box, which a pen or
    type stroke keeps and a scan's noise does not (softened, its grain is a third as deep)."""
    grey = np.asarray(grey)
    if grey.dtype != np.uint8 or min(grey.shape[:2], default=0) < 3:
        return 0.0
    softened = np.asarray(Image.fromarray(grey).filter(ImageFilter.BoxBlur(1)))
    low, high = grey_percentiles(softened, (SPARSE_INK_PERCENTILE, 99.5))
    return float(high - low)


INTEGER_DEPTHS = (8, 10, 12, 14, 16)
"""The bit depths an image stored in 16-bit integers may hold: a scanner's or camera's 10, 12 or 14 bits are stored
so, and read at 65535 their text would lie within the darkest 6% of grey levels."""


def full_scale(high: int) -> int:
    """The white of an integer image whose largest value is `high`: that of the smallest `INTEGER_DEPTHS` depth
    holding it (255 for an 8-bit image converted, 4095 for a 12-bit scan, 65535 for 16 bits)."""
    return next((2**depth - 1 for depth in INTEGER_DEPTHS if high <= 2**depth - 1), 65535)


LOW_LUMINANCE_CONTRAST = 40
"""Grey levels between the 1st and 99th percentiles of a colour image's luminance under which its colours are looked
at (`colour_contrast_grey`): above it luminance keeps the text, as it does for nearly every photograph. Of the 1,030
real scene-word development crops, 3 lie under 40 and read better by their colours (`crnn-lines`: `AT` -> `ATM`,
`Looadg` -> `Colorado`; the third wrong both ways); the 3 at 44-47 read better by luminance (`AS` -> `At`)."""
COLOUR_CONTRAST_GAIN = 2.0
"""How many times more contrast a colour image's main colour axis must hold than its luminance to replace it."""


def colour_contrast_grey(image: Image.Image) -> Image.Image | None:
    """An RGB image as the grey of its colours' main axis (their first principal component), where its luminance
    holds under `LOW_LUMINANCE_CONTRAST` grey levels and that axis at least `COLOUR_CONTRAST_GAIN` times as much: text
    that differs from its ground in colour and hardly in brightness (red on blue, as a sign is painted), which
    luminance would all but erase. The axis is signed to follow luminance (what is darker stays darker where
    brightness tells them apart at all) and centred on its mean grey. None where luminance serves."""
    rgb = np.asarray(image, dtype=np.float32)
    step = max(1, round((rgb.shape[0] * rgb.shape[1] / 250_000) ** 0.5))  # percentiles of a sample of a large image
    weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
    sample = rgb[::step, ::step].reshape(-1, 3)
    luma = sample @ weights
    low, high = np.percentile(luma, (1, 99))
    if high - low >= LOW_LUMINANCE_CONTRAST:
        return None
    centred = sample - sample.mean(axis=0)
    axis = np.linalg.eigh(centred.T @ centred)[1][:, -1]
    if np.dot(centred @ axis, luma - luma.mean()) < 0:
        axis = -axis
    axis_low, axis_high = np.percentile(centred @ axis, (1, 99))
    if axis_high - axis_low < COLOUR_CONTRAST_GAIN * max(high - low, 1.0):
        return None
    grey = (rgb.reshape(-1, 3) - sample.mean(axis=0)) @ axis + float(luma.mean())
    return Image.fromarray(np.clip(np.round(grey), 0, 255).astype(np.uint8).reshape(rgb.shape[:2]))


BLANK_MARGIN_SPREAD = 0.07
"""The most a margin's grey levels may vary, as a share of its image's ink contrast, for the margin to be blank
(`is_blank_margin`). Of the 1,030 real scene-word development crops, 45 had a margin cut by the ink box alone, and 6
of those margins vary more (0.10-0.14: red letters on a dark ground, which the ink's threshold put with the
ground, cut off with it); left uncut they read better (`crnn-lines`: `FAHRENHEIT` from nothing, `GOLF` from `AN IT`,
`WESTERN` from `ACTAPN`; one of the six one character worse). 0.06-0.08 leave the same margins; scanned lines whose
blank margins are their paper's own noise, at one and three times its spread, are cut as before."""


def is_blank_margin(margin: np.ndarray, contrast: float, ink_height: int) -> bool:
    """Whether `margin`, 8-bit grey cut from beside a line's ink, holds nothing to read: its grey levels, averaged
    over windows of about a sixth of the ink's height (at least 3 pixels, so that paper and sensor noise evens out and
    strokes do not), vary by less than `BLANK_MARGIN_SPREAD` of the image's `contrast`. A margin narrower than a
    window is blank."""
    radius = max(1, round(ink_height / 12))
    if min(margin.shape[:2]) < 2 * radius + 1:
        return True
    averaged = Image.fromarray(np.ascontiguousarray(margin, dtype=np.uint8)).filter(ImageFilter.BoxBlur(radius))
    return float(np.asarray(averaged, dtype=np.float32).std()) < BLANK_MARGIN_SPREAD * max(contrast, 1.0)


MAX_BLANK_GAP = 2.5
"""The widest blank gap between a line's words that reaches the model as it is, in ink heights (`fill_blank_gaps`); a
wider one (a receipt's `CASH` and `RM 23.00` at the two ends of its row, a table's columns) is filled with the paper's
colour. In such a gap a receipt's paper texture and the print of its other side showing through read as words:
`CASH IN THE NORTHENRM 23.00`, `CHANGE SANTA CLARM 0.10` (`crnn-lines`, 2026-11-30). The 1,465 rows of the 49 real
development receipt pages, cut along their annotated boxes, read at 7.67% CER as they are and at 6.52% with gaps wider
than 2.5 ink heights filled; the development line sets, where a gap that wide is rare, within 0.02 points
(`scripts/lab/benchmark_blank_gaps.py`). At 1.5 ink heights the rows read at 6.53% and the line sets alike: 2.5 is kept,
as it touches fewer lines."""
BLANK_GAP_KEPT = 0.25
"""How much of a filled gap is left as it is beside the ink on each side, in ink heights: a glyph's edge that the ink's
threshold put with the paper stays."""
FAINT_PRINT_DEPTH = 0.2
"""A gap whose darkest pixels (its first percentile of grey) lie deeper below the paper than this share of the ink's
depth holds print too faint for the ink's threshold, and is not filled: a receipt's faded `recipi` between `The` and
`ent`, 0.23 deep, where paper texture and show-through lie 0.03-0.20 deep."""


def fill_blank_gaps(image: Image.Image, luminance: np.ndarray, ink_box: tuple[int, int, int, int] | None,
                    threshold: float, paper_fill, max_blank_gap: float | None = MAX_BLANK_GAP) -> Image.Image:
    """`image` (8-bit "L" or "RGB", dark text on light; `luminance` its grey) with each gap between its words wider
    than `max_blank_gap` ink heights filled with the paper's colour (`paper_fill()`, asked for only where a gap is
    filled), but for `BLANK_GAP_KEPT` ink heights beside the ink on each side: within the rows of `ink_box`
    (`(left, top, right, bottom)`), columns that hold no pixel darker than `threshold` (the ink's) and no print fainter
    than it (`FAINT_PRINT_DEPTH`). The image as it is where there is no such gap, no ink (`ink_box` None), or
    `max_blank_gap` is None."""
    if ink_box is None or max_blank_gap is None:
        return image
    left, top, right, bottom = ink_box
    height = bottom - top
    band = luminance[top:bottom]
    columns_with_ink = np.flatnonzero((band[:, left:right] < threshold).any(axis=0)) + left
    widths = np.diff(columns_with_ink) - 1
    wide = np.flatnonzero(widths > max_blank_gap * height)
    if wide.size == 0:
        return image
    is_ink = luminance < threshold
    paper = float(np.median(luminance[~is_ink]))
    depth = max(paper - float(np.median(luminance[is_ink])), 1.0)
    kept = round(BLANK_GAP_KEPT * height)
    filled = None
    for index in wide:
        start, end = columns_with_ink[index] + 1 + kept, columns_with_ink[index + 1] - kept
        if paper - float(grey_percentiles(band[:, start:end], 1)) > FAINT_PRINT_DEPTH * depth:
            continue
        if filled is None:
            filled = image.copy()
        filled.paste(paper_fill(), (int(start), 0, int(end), image.height))
    return image if filled is None else filled
