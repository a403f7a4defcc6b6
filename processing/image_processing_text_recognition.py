"""Image processor for text recognition: crops of text lines or formulas to normalised tensors.

Pipeline for every image (PIL and NumPy only):

1. `load_image`: read files, honour EXIF orientation, composite transparency on white, bring every
   PIL mode and NumPy dtype to 8-bit grayscale or RGB; a colour image whose text differs from its ground in
   colour far more than in brightness (red on blue) becomes the grey of its colours' main axis
   (`colour_contrast_grey`), as luminance would lose the text.
2. Convert to `num_channels` (1: grayscale by ITU-R 601-2 luma, 3: RGB), then normalise the capture
   (`normalize_capture`): light text on a dark background is inverted to dark on light
   (`text_polarity`, told per image by default), and with `crop_margin` the image is cropped to its ink
   and framed with a margin proportional to the ink's height, so tight and loose crops read alike.
   `normalize_capture_of(image)` gives this step's image alone: a reader that needs it for the size warning as well
   (`recognize()`, the pipeline) makes it once and calls the processor with `do_normalize_capture=False`.
3. Resize with PIL bicubic resampling (antialiased when shrinking; bicubic keeps thin strokes sharper
   than bilinear). `resize_mode="keep_aspect"`: to `height` rows, width scaled by the same factor
   (at least 1) and capped at `max_width` (wider crops are squeezed). `resize_mode="fixed"`: to
   `height` x `width`. `resize_mode="limits"` (formulas, whose size carries meaning): kept as they are
   when within `min_height`-`max_height` x `min_width`-`max_width`, else scaled, aspect kept, just
   enough to fit (down when a side is too long, else up when a side is too short); a side still out of
   its range then (an extremely elongated image) is squeezed or stretched to it; with `glyph_height_range`,
   an image whose glyphs (`estimate_glyph_height`) are smaller or larger than that range is first scaled to
   its nearer end, so that a formula typeset at any size reaches the model at a scale it learned. Only in this mode,
   `do_scale_augmentation=True` (a training-time option of the call) first scales each image by a
   factor drawn uniformly from `scale_augmentation_range`, from NumPy's global generator (which
   `transformers.set_seed` seeds).
4. Scale to [0, 1], optionally invert (`1 - x`), optionally normalise (`(x - mean) / std`).
5. Batch: right-pad every image to the widest one plus `min_right_padding` columns (so that every image, the
   widest and one read alone included, ends in padding rather than in the convolutions' zero border, and reads
   the same in any batch, where the padding covers the convolutions' reach: see `min_right_padding`), rounded up to
   a multiple of `width_multiple`, and
   in `"limits"` mode bottom-pad it to the tallest one, with `padding_value`; `pixel_mask` marks real
   pixels with 1 and padding with 0.
"""

import logging
import os
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageOps
from transformers.image_processing_utils import BaseImageProcessor, BatchFeature
from transformers.processing_utils import ImagesKwargs

from .document_pages import is_pdf
from .luminance import (MAX_BLANK_GAP, colour_contrast_grey, fill_blank_gaps, full_scale, grey_percentiles,
                        is_blank_margin, sparse_ink_contrast)
from .slant_correction import deslant as deslant_image


logger = logging.getLogger(__name__)

RESAMPLE = Image.Resampling.BICUBIC
RESIZE_MODES = ("keep_aspect", "fixed", "limits")
PADDED_RESIZE_MODES = ("keep_aspect", "limits")
"""The modes whose batches are padded, and so come with a `pixel_mask`; in `"fixed"` mode every image has
the same size and nothing is padded. This is the one place that says whether a model receives a pixel mask:
the processor, collator, pipeline and `recognize()` pass on what the processor returns."""
_SIXTEEN_BIT_MODES = ("I;16", "I;16B", "I;16L", "I;16N")
MIN_8BIT_FLOAT_MAX = 2.0
"""A float image whose largest value is above 1 is read as 8-bit values (0..255) only from this value up: below
it, its brightest pixel would be black, and the values more likely 0..1 ones pushed a little past 1 (by
resampling, say), so such an image is refused rather than read either way."""
MIN_IMAGE_SIDE = 8
"""An image with a side shorter than this many pixels is too small to hold readable text (`size_warning`)."""
BLANK_CONTRAST = 12
"""Grey levels between an image's darkest and lightest pixels (`ink_contrast`) below which it holds no
text to read (`size_warning`): a blank scan or an empty crop. The least on the real line sets is 17 (a scene word)."""
MAX_ASPECT_CHANGE = 8.0
"""Resizing that changes an image's aspect ratio by more than this factor (a sliver stretched to a pixel's width, a
fixed-size model's input) leaves little of its text readable (`size_warning`)."""
MAX_LINE_SQUEEZE = 2.0
"""A line model's line squeezed into `max_width` by more than this factor is read as junk (`size_warning`): `crnn-lines`
read at a `max_width` of 1,024 a line squeezed 1.9 times nearly right (`door` for `dolor`), 2.7 times as `Ward I rem
ASUM OOr sit amer` for `word1 lorem ipsum dolor sit amet`."""


EXIF_ORIENTATION = 0x0112
"""The EXIF tag of how a camera's image is to be turned to stand upright."""


def load_image(source) -> Image.Image:
    """Return `source` as an 8-bit PIL image in mode "L" (grayscale) or "RGB".

    Args:
        source: one of
            - a file path (`str` or `os.PathLike`); EXIF orientation is applied. Of a file holding several
              frames (an animated GIF, a multi-page TIFF) only the first is read, with a warning naming the
              file (once per file and process);
            - a PIL image of any mode, turned by its EXIF orientation where it has one (an image opened from a
              camera's file): "1", "L", "P", "RGB", "CMYK", "YCbCr", "LAB", "HSV" are converted;
              modes with alpha ("RGBA", "LA", "PA", "RGBa") and "P"/"L"/"RGB" with a transparency entry
              are composited on white; 16-bit modes ("I;16*") and "I" (32-bit integers) are read
              at the depth their largest value needs (`full_scale`: 0..255 for an 8-bit image converted,
              0..4095 for a 12-bit scan stored in 16 bits, else 0..65535);
              "F" (floats) by their range, as float arrays are. An image of several frames is read at the
              frame it is at, with a warning;
            - a NumPy array of shape (height, width), (height, width, 1), (height, width, 3) or
              (height, width, 4) (RGBA), dtype uint8 (0..255), uint16 (at its depth, `full_scale`), bool, or float, read by
              the range of its values: within 0..1 as 0..1; within 0..255, the largest at least
              `MIN_8BIT_FLOAT_MAX`, as 8-bit values (a float copy of an 8-bit image).

    Raises:
        ValueError: the file is missing, empty or not a readable image (the message names the file), the
            array has an unsupported shape or dtype, float values are NaN or infinite or lie in neither
            0..1 nor 0..255 (normalised values, say), "I" values lie outside 0..65535, or the image has zero
            width or height.
        TypeError: `source` is of none of the types above.
    """
    if isinstance(source, (str, os.PathLike)):
        image = _read_file(os.fspath(source))
    elif isinstance(source, Image.Image):
        _warn_of_frames(source, getattr(source, "filename", None) or "an image")
        # Turned upright by its EXIF orientation, as a file is (and as transformers' `load_image` turns a PIL image).
        image = ImageOps.exif_transpose(source) if source.getexif().get(EXIF_ORIENTATION, 1) != 1 else source
    elif isinstance(source, np.ndarray):
        image = _array_to_pil(source)
    else:
        raise TypeError(f"expected a file path, a PIL image or a NumPy array, got {type(source).__name__}")
    if image.width == 0 or image.height == 0:
        where = f" in file {os.fspath(source)!r}" if isinstance(source, (str, os.PathLike)) else ""
        raise ValueError(f"zero-size image{where}: width {image.width}, height {image.height}")
    image = _to_8bit_l_or_rgb(image)
    if image.mode == "RGB":
        image = colour_contrast_grey(image) or image
    return image


def _read_file(path: str) -> Image.Image:
    if not os.path.exists(path):
        raise ValueError(f"image file {path!r} not found")
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise ValueError(f"image file {path!r} is empty (0 bytes)")
    if is_pdf(path):
        raise ValueError(f"{path!r} is a PDF, a document of pages: read it as pages (textrec-recognize --page, or "
                         "textrec.processing.page_reading.read_document)")
    try:
        with Image.open(path) as opened:
            _warn_of_frames(opened, path)
            opened.load()
            return ImageOps.exif_transpose(opened)
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as err:
        raise ValueError(f"cannot read image file {path!r}: {err}") from err


_FRAME_WARNINGS_GIVEN: set[str] = set()


def _warn_of_frames(image: Image.Image, name: str) -> None:
    """Warns, once per message and process, that of an image of several frames only one is read."""
    try:
        frames = getattr(image, "n_frames", 1)
    except (OSError, ValueError, EOFError):  # counting reads the file, which its owner may have closed
        return
    if frames <= 1:
        return
    which = "the first" if image.tell() == 0 else f"frame {image.tell() + 1}"
    message = f"{name}: an image of {frames} frames (animated, or pages); only {which} is read"
    if message not in _FRAME_WARNINGS_GIVEN:
        _FRAME_WARNINGS_GIVEN.add(message)
        logger.warning(message)


def _array_to_pil(array: np.ndarray) -> Image.Image:
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if not (array.ndim == 2 or (array.ndim == 3 and array.shape[2] in (3, 4))):
        raise ValueError(
            f"expected an array of shape (height, width) or (height, width, 1|3|4), got shape {array.shape}"
        )
    if array.dtype == np.uint8:
        scaled = array
    elif array.dtype == np.uint16:
        high = int(array.max()) if array.size else 0
        scaled = np.round(array * (255.0 / full_scale(high))).astype(np.uint8)
    elif array.dtype == np.bool_:
        scaled = array.astype(np.uint8) * 255
    elif np.issubdtype(array.dtype, np.floating):
        scaled = _floats_to_8bit(array, f"a {array.dtype} array")
    else:
        raise ValueError(f"expected an array of dtype uint8, uint16, bool or float, got {array.dtype}")
    return Image.fromarray(np.ascontiguousarray(scaled))


def _floats_to_8bit(values: np.ndarray, what: str) -> np.ndarray:
    """Float values as uint8, read by their range (see `load_image`); `what` names them in errors."""
    if values.size == 0:
        return values.astype(np.uint8)
    finite = np.isfinite(values)
    if not finite.all():
        raise ValueError(
            f"{what} holding {values.size - int(finite.sum())} NaN or infinite values (of {values.size}); "
            "an image's values must be finite"
        )
    low, high = float(values.min()), float(values.max())
    if low >= 0.0 and high <= 1.0:
        return np.round(values * 255.0).astype(np.uint8)
    if low >= 0.0 and MIN_8BIT_FLOAT_MAX <= high <= 255.0:
        return np.round(values).astype(np.uint8)
    if low >= 0.0 and high < MIN_8BIT_FLOAT_MAX:
        raise ValueError(
            f"{what} with values from {low:g} to {high:g}: above 1, so not 0..1, yet too dark for 0..255 (its "
            "brightest pixel would be black); clip it to 0..1 or scale it to 0..255"
        )
    raise ValueError(
        f"{what} with values from {low:g} to {high:g}; expected 0..1 or 0..255 (undo any normalisation first)"
    )


def _to_8bit_l_or_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "F":
        return Image.fromarray(_floats_to_8bit(np.asarray(image, dtype=np.float64), 'a mode "F" image'))
    if image.mode == "I":
        values = np.asarray(image, dtype=np.int64)
        low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
        if low < 0 or high > 65535:
            raise ValueError(f'a mode "I" image with values from {low} to {high}; expected 0..255 or 0..65535')
        return Image.fromarray(np.round(values * (255.0 / full_scale(high))).astype(np.uint8))
    if image.mode in _SIXTEEN_BIT_MODES:
        values = np.asarray(image, dtype=np.float64)
        high = int(values.max()) if values.size else 0
        return Image.fromarray(np.round(np.clip(values / full_scale(high), 0.0, 1.0) * 255.0).astype(np.uint8))
    if image.has_transparency_data:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    if image.mode in ("L", "RGB"):
        return image
    return image.convert("L" if image.mode == "1" else "RGB")


TEXT_POLARITIES = ("auto", "dark-on-light", "light-on-dark")
"""What the image processor assumes of its inputs' text: `"auto"` tells each image's polarity from its pixels
(`has_light_text`), the others say it for all of them. Light text on a dark background is inverted first, so
that what reaches the model does not depend on it (a model that reads light on dark, `invert=True`, gets
its inversion after that)."""
MIN_INK_CONTRAST = 24
"""Grey levels between the darkest and lightest pixels (`ink_contrast`) below which an image is taken as blank: no
polarity to tell, no ink to crop to."""
CONTRAST_PERCENTILES = (0.5, 99.5)
"""The percentiles of an image's grey levels taken as its darkest and lightest pixels (`ink_contrast`): a line's ink
may be under 2% of a loosely cropped image of it (a line 40 pixels high with 6 of its heights of blank above and
below: the 2nd and 98th percentiles, as taken before, both the blank's, so that its blank was not cut and it read as
junk)."""


def ink_contrast(luminance: np.ndarray) -> float:
    """Grey levels between an 8-bit luminance image's darkest and lightest pixels (`CONTRAST_PERCENTILES`); under
    `MIN_INK_CONTRAST`, the ink may be too sparse for them (a word in a large blank image): `sparse_ink_contrast` then,
    where higher."""
    low, high = grey_percentiles(luminance, CONTRAST_PERCENTILES)
    contrast = float(high - low)
    return contrast if contrast >= MIN_INK_CONTRAST else max(contrast, sparse_ink_contrast(luminance))


def otsu_threshold(luminance: np.ndarray) -> float:
    """The grey level that best splits the 8-bit values into two classes (Otsu's method)."""
    counts = np.bincount(luminance.ravel().astype(np.uint8), minlength=256).astype(np.float64)
    levels = np.arange(256, dtype=np.float64)
    weight_below = np.cumsum(counts)
    weight_above = weight_below[-1] - weight_below
    sum_below = np.cumsum(counts * levels)
    mean_below = sum_below / np.maximum(weight_below, 1)
    mean_above = (sum_below[-1] - sum_below) / np.maximum(weight_above, 1)
    between = weight_below * weight_above * (mean_below - mean_above) ** 2
    return float(np.argmax(between)) + 0.5


def has_light_text(luminance: np.ndarray) -> bool:
    """Whether an 8-bit luminance image shows light text on a dark background.

    Its pixels are split in two by `otsu_threshold`; the background is the class that most of the image's
    border belongs to (a crop's edge is mostly background, even where it cuts through letters), and, where
    the border is split about evenly, the class holding most pixels (text covers less of a crop than its
    background). A blank image (`MIN_INK_CONTRAST`) has dark text.
    """
    if ink_contrast(luminance) < MIN_INK_CONTRAST:
        return False
    light = luminance > otsu_threshold(luminance)
    border = np.concatenate([light[0], light[-1], light[:, 0], light[:, -1]])
    light_border = float(border.mean())
    if abs(light_border - 0.5) > 0.1:
        return light_border < 0.5
    return float(light.mean()) < 0.5


def ink_box(luminance: np.ndarray) -> tuple[int, int, int, int] | None:
    """`(left, top, right, bottom)` of the dark text of an 8-bit luminance image (dark on light), or None for
    a blank image. Ink is what is darker than `otsu_threshold`; rows and columns holding a single ink pixel or
    less than 2% of the busiest row's or column's ink (specks, scanner noise) do not extend the box."""
    if ink_contrast(luminance) < MIN_INK_CONTRAST:
        return None
    ink = luminance < otsu_threshold(luminance)
    rows, columns = ink.sum(axis=1), ink.sum(axis=0)
    kept_rows = np.flatnonzero(rows >= max(2, 0.02 * rows.max()))
    kept_columns = np.flatnonzero(columns >= max(2, 0.02 * columns.max()))
    if kept_rows.size == 0 or kept_columns.size == 0:
        return None
    return int(kept_columns[0]), int(kept_rows[0]), int(kept_columns[-1]) + 1, int(kept_rows[-1]) + 1


RULE_RUN_WIDTH = 0.6
"""A horizontal run of ink at least this share of an image's width (or `RULE_RUN_HEIGHTS` times its height, if
shorter), and at least as long as the image is high, is a rule (a form's box, an underline), not a glyph:
`text_line_count` leaves it out. (The bar of a `T` alone in its crop is shorter than the crop is high.)"""
RULE_RUN_HEIGHTS = 3.0


def rule_pixels(ink: np.ndarray) -> np.ndarray:
    """The pixels of a boolean ink image that lie in horizontal runs as long as a rule's (`RULE_RUN_WIDTH`)."""
    height, width = ink.shape
    longest = max(height, int(min(RULE_RUN_WIDTH * width, RULE_RUN_HEIGHTS * height)))
    edges = np.diff(np.pad(ink.astype(np.int8), ((0, 0), (1, 1))), axis=1)
    rows, starts = np.nonzero(edges == 1)
    _, ends = np.nonzero(edges == -1)  # row by row in the same order: each run's end beside its start
    rules = np.zeros_like(ink)
    for row, start, end in zip(*(values[ends - starts >= longest] for values in (rows, starts, ends))):
        rules[row, start:end] = True
    return rules


def weighted_median(values, weights) -> float:
    """The median of `values`, each counted by its weight (the value where half the weight is reached)."""
    values = np.asarray(values)
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(np.asarray(weights, dtype=float)[order])
    return float(values[order][np.searchsorted(cumulative, cumulative[-1] / 2)])


PAGE_GLYPH_HEIGHTS = 4
"""An image at least this many of its glyphs high, and not four times as wide as high, may be a page: `text_line_count`
counts its lines in vertical strips as well (`PAGE_STRIP_GLYPH_HEIGHTS` glyph heights wide), where a page's
columns and skew do not blur the lines together as across the whole page."""
PAGE_STRIP_GLYPH_HEIGHTS = 8
PAGE_MIN_SIDE = 200
"""Pixels: a side of a page, even scanned at 50 dpi, is longer; a word cut from a photograph rarely is (its
background's texture could pass for small glyphs)."""


def ink_piece_heights(luminance: np.ndarray) -> np.ndarray:
    """The heights of the connected pieces of ink (darker than `otsu_threshold`; 8-connected; 8 pixels or more, so
    that specks count for nothing) of an 8-bit luminance image."""
    from scipy import ndimage

    labels, count = ndimage.label(luminance < otsu_threshold(luminance), structure=np.ones((3, 3), dtype=bool))
    if count == 0:
        return np.zeros(0)
    areas = np.bincount(labels.ravel())[1:]
    return np.array([box[0].stop - box[0].start for box in ndimage.find_objects(labels)])[areas >= 8]


def typical_component_height(luminance: np.ndarray) -> float | None:
    """The median height of the pieces of ink of an 8-bit luminance image (`ink_piece_heights`): on a page, most of
    them are glyphs, however large its pictures and rules. None where there is no such piece."""
    heights = ink_piece_heights(luminance)
    return float(np.median(heights)) if len(heights) else None


MIN_PIECES_FOR_LINES = 3
"""An image of fewer pieces of ink than this (`ink_piece_heights`: a digit, a colon) is a glyph or two, not lines:
`size_warning` does not call it several lines or a line on its side (the colons and single digits cut from receipts
were)."""


def page_glyph_height(luminance: np.ndarray) -> float | None:
    """The glyphs' height (`typical_component_height`) of an 8-bit luminance image (dark text on light) that may be a
    page, or a block of lines: at least `PAGE_GLYPH_HEIGHTS` of its glyphs high, less than four times as wide as
    high, and no side under `PAGE_MIN_SIDE` pixels; None for any other image."""
    height, width = luminance.shape
    if width >= 4 * height or min(height, width) < PAGE_MIN_SIDE:
        return None
    glyph_height = typical_component_height(luminance)
    return glyph_height if glyph_height is not None and height >= PAGE_GLYPH_HEIGHTS * glyph_height else None


def may_be_page(luminance: np.ndarray) -> bool:
    """Whether an 8-bit luminance image may be a page, or a block of lines (`page_glyph_height`)."""
    return page_glyph_height(luminance) is not None


def text_line_count(luminance: np.ndarray) -> int:
    """How many lines of text an 8-bit luminance image (dark text on light) holds (`row_profile_line_count`); for
    an image that may be a page (`PAGE_GLYPH_HEIGHTS`) and holds at most one line by its whole rows, the most lines
    any vertical strip of it holds. A blank image holds 0."""
    lines = row_profile_line_count(luminance)
    glyph_height = None if lines > 1 else page_glyph_height(luminance)
    if glyph_height is None:
        return lines
    width = luminance.shape[1]
    strip = max(1, int(PAGE_STRIP_GLYPH_HEIGHTS * glyph_height))
    return max([lines] + [row_profile_line_count(luminance[:, left : left + strip])
                          for left in range(0, max(1, width - strip // 2), strip)])


BAND_MIN_INK_SHARE = 0.15
"""A row holds a line's ink (`row_profile_line_count`) where it holds at least this share of the inkiest row's (less, the
thin rows between two lines set close, a descender's and the next line's ascender, would join them) ..."""
SHORT_LINE_MIN_INK_SHARE = 0.05
"""... and a line apart from those rows' lines, a paper's blank of at least a quarter of their height around it, where
its rows hold at least this share: a short line under a long one (`Page 1` under a heading 11 times as long) holds
under a tenth of the long one's ink (counted at 0.15 alone, such an image was one line, read as junk). Of the 5,170
real development line crops, one more is taken for several lines than before (a Washington line whose closing
flourish runs apart under it: 66 against 65)."""
SHORT_LINE_MIN_HEIGHTS = 3
"""... and reaching across at least this many of those lines' heights (a word or two), most of its ink not joined to
theirs (a hand's loops above and below its line)."""


def _ink_reach(ink: np.ndarray) -> int:
    """Columns from the first holding ink to the last (0 for none)."""
    columns = np.flatnonzero(ink.any(axis=0))
    return int(columns[-1] - columns[0] + 1) if len(columns) else 0


def _row_bands(row_ink: np.ndarray, least: float) -> list[list[int]]:
    """`[begin, end)` of each run of rows holding more than `least` ink."""
    bands, start = [], None
    for row, has_ink in enumerate(np.append(row_ink > least, False)):
        if has_ink and start is None:
            start = row
        elif not has_ink and start is not None:
            bands.append([start, row])
            start = None
    return bands


def row_profile_line_count(luminance: np.ndarray) -> int:
    """How many lines of text an 8-bit luminance image (dark text on light) holds, by its row profile: the ink
    (darker than `otsu_threshold`) less the rules (`rule_pixels`: a form's boxes around a field, underlines),
    bands of rows holding ink (more than 1% of the ink's reach across the image and `BAND_MIN_INK_SHARE` of the inkiest row's ink), bands closer
    than a quarter of a typical band's height merged (a line's accents, dots, descenders, and the rows where a
    sloping handwritten line's ascenders thin out), and bands under half that height not counted (the edges of
    neighbouring lines); and the short lines apart from them (`SHORT_LINE_MIN_INK_SHARE`). A typical band's height is
    the median of the bands' heights weighted by their ink, so that slivers of ink do not set it. A blank image
    (`MIN_INK_CONTRAST`: a page's ink may be less than 2% of it) holds 0."""
    if ink_contrast(luminance) < MIN_INK_CONTRAST:
        return 0
    ink = luminance < otsu_threshold(luminance)
    row_ink = (ink & ~rule_pixels(ink)).sum(axis=1)
    if not row_ink.any():
        return 0
    least = 0.01 * _ink_reach(ink)  # of the ink's reach, not of the image's width: a strip's few words at its left
    bands = _row_bands(row_ink, max(least, BAND_MIN_INK_SHARE * row_ink.max()))
    if not bands:  # the inkiest row holds under 1% of the image's width: specks
        return 0
    typical = weighted_median([end - begin for begin, end in bands], [row_ink[begin:end].sum() for begin, end in bands])
    merged = [bands[0]]
    for begin, end in bands[1:]:
        if begin - merged[-1][1] < typical / 4:
            merged[-1][1] = end
        else:
            merged.append([begin, end])
    lines = [[begin, end] for begin, end in merged if end - begin >= typical / 2]
    apart = [[begin, end] for begin, end in _row_bands(row_ink, max(least, SHORT_LINE_MIN_INK_SHARE * row_ink.max()))
             if typical / 2 <= end - begin <= 2 * typical
             and all(begin >= other_end + typical / 4 or end <= other_begin - typical / 4 for other_begin, other_end in merged)
             and _ink_reach(ink[begin:end]) >= SHORT_LINE_MIN_HEIGHTS * typical]
    if apart:  # a hand's loops above and below its line are strokes of its glyphs: ink joined to the line's
        from scipy import ndimage

        pieces, _ = ndimage.label(ink, structure=np.ones((3, 3)))
        in_lines = np.unique(np.concatenate([pieces[begin:end][ink[begin:end]] for begin, end in merged]))
        apart = [band for band in apart
                 if np.isin(pieces[band[0]:band[1]][ink[band[0]:band[1]]], in_lines).mean() < 0.5]
    return len(lines) + len(apart)


GLYPH_INK_CONTRAST = 0.25
"""A pixel is ink for `estimate_glyph_height` where it is darker than the background by this fraction of the
image's contrast: low enough that the thin strokes of small anti-aliased glyphs stay whole."""
GLYPH_SCALE_LIMITS = (0.125, 8.0)
"""The smallest and largest factor `glyph_height_range` scales an image by."""


def estimate_glyph_height(luminance: np.ndarray) -> float | None:
    """The typical height in pixels of the glyphs of an 8-bit luminance image of dark text on light: the median
    height of the ink's connected components (8-connected), each weighted by its area, so that dots, accents,
    rules' fragments and noise count little. Within 2% of proportional to the rendering's scale for formulas
    typeset from half to twice their size (per image it varies about 17% with the content). None for a blank
    image. Needs scipy."""
    try:
        from scipy import ndimage
    except ImportError as err:
        raise ImportError("glyph_height_range needs scipy (pip install scipy)") from err
    low, high = np.percentile(luminance, (1, 99))
    if high - low < MIN_INK_CONTRAST:
        return None
    ink = luminance < high - GLYPH_INK_CONTRAST * (high - low)
    labels, count = ndimage.label(ink, structure=np.ones((3, 3), dtype=bool))
    if count == 0:
        return None
    heights = np.array([box[0].stop - box[0].start for box in ndimage.find_objects(labels)])
    return weighted_median(heights, np.bincount(labels.ravel())[1:])


MAX_SIDE_MARGIN = 1.0
"""The widest blank margin kept left and right of a line's ink, in ink heights (`max_side_margin`). The line
releases learned margins up to about one font size; loosely cropped, 2 to 8 ink heights of blank on each side, the
first 300 development lines of each real set read with the eighth `crnn-lines` at 16.80% (receipts), 5.57%
(historic print) and 14.25% (forms) against 6.51%, 2.51% and 6.80% tight (characters made up in the blank); with the
margins cut to one ink height, 7.72%, 2.41% and 7.39%, the tight crops unchanged (half an ink height and two: worse
on loose crops, or on the development scene words)."""
MAX_VERTICAL_MARGIN = 0.5
"""The highest blank margin kept above and below a line's ink, in ink heights (`max_vertical_margin`). With 1 to 3
line heights of blank above and below, the text reaches the model too small: the ninth `crnn-lines` read the first
400 development lines of receipts, historic print and forms so at 89.3%, 77.9% and 97.2% (scene words 90.8%); with
such blank cut to half an ink height at 14.0%, 5.7%, 30.5% and 37.6%, the lines as cut at 5.96%, 2.27%, 6.72%,
14.41% (5.82%, 2.27%, 7.00%, 14.10% uncut; one ink height: 30.7%, 36.2%, 61.0%, 59.3% loose)."""
CUT_VERTICAL_MARGIN = 0.15
"""What a blank above or below a line higher than `max_vertical_margin` is cut to, in ink heights
(`cut_vertical_margin`). Cut to half an ink height, a loose crop's capitals still reach the model 10-16 of its 32 rows
high and thin strokes are lost; a tight crop, whose blank is under `max_vertical_margin`, stays as it is. Chosen among
0-0.5 with the tenth `crnn-lines` on real development lines cut tight and with 1-3 line heights of blank above and
below (2026-11-28): at 0.15 both hold (receipts loose 15.5% -> 8.8%, forms 31.0% -> 8.6%, tight within 0.05 points;
the sweep: `scripts/lab/reports/real_images.md`, "Loose crops cut closer, tight ones kept")."""


def trim_blank_margins(image: Image.Image, luminance: np.ndarray, max_side_margin: float | None,
                       max_vertical_margin: float | None = None,
                       cut_vertical_margin: float | None = None) -> Image.Image:
    """The image with a blank margin wider than `max_side_margin` ink heights left or right of its ink (`ink_box`) cut
    to that width, and one higher than `max_vertical_margin` above or below it cut to `cut_vertical_margin` ink
    heights (to `max_vertical_margin` where that is None or lower) (None: those margins stay); a narrower margin, one
    that is not blank (`is_blank_margin`: text the ink's threshold put with the ground, as red letters on a dark
    sign), and a blank image, stay as they are."""
    box = ink_box(luminance)
    if box is None:
        return image
    left, top, right, bottom = box
    height, contrast = bottom - top, ink_contrast(luminance)
    crop = [0, 0, image.width, image.height]
    if max_side_margin is not None:
        limit = round(max_side_margin * height)
        if left - limit > 0 and is_blank_margin(luminance[:, : left - limit], contrast, height):
            crop[0] = left - limit
        if right + limit < image.width and is_blank_margin(luminance[:, right + limit:], contrast, height):
            crop[2] = right + limit
    if max_vertical_margin is not None:
        limit = round(max_vertical_margin * height)
        kept = limit if cut_vertical_margin is None else round(min(cut_vertical_margin, max_vertical_margin) * height)
        if top > limit and is_blank_margin(luminance[: top - kept], contrast, height):
            crop[1] = top - kept
        if image.height - bottom > limit and is_blank_margin(luminance[bottom + kept:], contrast, height):
            crop[3] = bottom + kept
    return image if crop == [0, 0, image.width, image.height] else image.crop(tuple(crop))


def normalize_capture(
    image: Image.Image, text_polarity: str = "auto", crop_margin: float | None = None, deslant: bool = False,
    max_side_margin: float | None = None, max_vertical_margin: float | None = None,
    cut_vertical_margin: float | None = None, max_blank_gap: float | None = None,
) -> Image.Image:
    """The image as the model expects to see any capture of its text: dark text on a light background
    (`text_polarity`), and, with `crop_margin`, cropped to its ink (`ink_box`) with a margin of `crop_margin`
    times the ink's height on every side, filled with the background's grey, so that a tight and a loose crop
    of the same text become the same image; else, with `max_side_margin`, `max_vertical_margin` and
    `cut_vertical_margin`, its blank margins left and right, and above and below, cut where wider
    (`trim_blank_margins`), and with `max_blank_gap` its blank gaps between words filled with the paper where wider
    (`fill_blank_gaps`); with
    `deslant`, sheared first so that leaning handwriting stands upright (`slant_correction.deslant`). An 8-bit "L" or
    "RGB" image in, the same mode out."""
    if text_polarity not in TEXT_POLARITIES:
        raise ValueError(f"text_polarity must be one of {TEXT_POLARITIES}, got {text_polarity!r}")
    luminance = np.asarray(image.convert("L") if image.mode != "L" else image)
    if text_polarity == "light-on-dark" or (text_polarity == "auto" and has_light_text(luminance)):
        image, luminance = ImageOps.invert(image), 255 - luminance
    if deslant:
        image = deslant_image(image, background_fill(image, luminance), otsu_threshold(luminance))
        luminance = np.asarray(image.convert("L") if image.mode != "L" else image)
    if crop_margin is None:
        if max_blank_gap is not None:  # inside the ink's box: the margins' cut below sees the same image
            image = fill_blank_gaps(image, luminance, ink_box(luminance), otsu_threshold(luminance),
                                    lambda: background_fill(image, luminance), max_blank_gap)
        return trim_blank_margins(image, luminance, max_side_margin, max_vertical_margin, cut_vertical_margin)
    box = ink_box(luminance)
    if box is None:
        return image
    left, top, right, bottom = box
    margin = round(crop_margin * (bottom - top))
    fill = background_fill(image, luminance)
    cropped = image.crop((left, top, right, bottom))
    framed = Image.new(image.mode, (cropped.width + 2 * margin, cropped.height + 2 * margin), fill)
    framed.paste(cropped, (margin, margin))
    return framed


def background_fill(image: Image.Image, luminance: np.ndarray) -> int | tuple[int, ...]:
    """The colour of the image's background, to fill what is added to it: the median of the pixels lighter than
    `otsu_threshold` (of all of them in an image of one colour) (a grey level for an "L" image, an RGB triple for an
    "RGB" one)."""
    is_background = luminance >= otsu_threshold(luminance)
    pixels = np.asarray(image)[is_background] if is_background.any() else np.asarray(image).reshape(luminance.size, -1)
    fill = tuple(int(value) for value in np.median(pixels, axis=0).reshape(-1))
    return fill if len(fill) > 1 else fill[0]


class TextRecognitionImageProcessorKwargs(ImagesKwargs, total=False):
    """The settings of `TextRecognitionImageProcessor` that `from_pretrained(..., **kwargs)` may override."""

    num_channels: int
    resize_mode: str
    height: int
    max_width: int
    width: int
    width_multiple: int
    min_height: int
    max_height: int
    min_width: int
    scale_augmentation_range: list[float]
    padding_value: float | None
    invert: bool
    text_polarity: str
    crop_margin: float | None
    max_side_margin: float | None
    max_vertical_margin: float | None
    cut_vertical_margin: float | None
    max_blank_gap: float | None
    deslant: bool
    glyph_height_range: list[float] | None
    min_right_padding: int


class TextRecognitionImageProcessor(BaseImageProcessor):
    r"""Resize, normalise and batch text images (see the module docstring for the steps).

    Args:
        num_channels (`int`, defaults to 1): 1 for grayscale, 3 for RGB.
        resize_mode (`str`, defaults to `"keep_aspect"`): `"keep_aspect"` (fixed `height`, width follows
            the aspect ratio up to `max_width`, batch padded on the right), `"fixed"` (`height` x `width`) or
            `"limits"` (size kept within the limits below, batch padded on the right and at the bottom).
        height (`int`, defaults to 32): output height in pixels.
        max_width (`int`, defaults to 512): widest resized image in `"keep_aspect"` and `"limits"` modes; a
            multiple of `width_multiple`.
        width (`int`, defaults to 128): output width in `"fixed"` mode.
        width_multiple (`int`, defaults to 4): the batch width is rounded up to a multiple of it (for
            encoders that downsample the width).
        min_height (`int`, defaults to 16), max_height (`int`, defaults to 256), min_width (`int`, defaults
            to 16): the other limits of `"limits"` mode.
        scale_augmentation_range (`list[float]`, defaults to `[0.7, 1.4]`): the range of the random scale
            factor of `do_scale_augmentation` (`"limits"` mode).
        do_normalize (`bool`, defaults to `True`): apply `(x - image_mean) / image_std` to the [0, 1] values.
        image_mean (`float` or `list[float]`, defaults to 0.5): per-channel mean (one value for all channels).
        image_std (`float` or `list[float]`, defaults to 0.5): per-channel standard deviation.
        padding_value (`float`, *optional*): value of padded pixels in the output, i.e. after
            normalisation. Defaults to the output value of the background: white, or black with `invert`,
            normalised per channel (1.0 with the default mean and std, -1.0 with `invert`).
        invert (`bool`, defaults to `False`): use `1 - x`, turning dark-on-light text into light-on-dark
            (for models trained on white-on-black formulas).
        text_polarity (`str`, defaults to `"auto"`): the inputs' text, `"auto"` (each image's own, see
            `has_light_text`), `"dark-on-light"` or `"light-on-dark"`; light text is inverted before anything
            else (`normalize_capture`), so the model sees dark text on a light background (then `invert`).
        crop_margin (`float`, *optional*): crop each image to its ink and frame it with this many times the
            ink's height on every side (`normalize_capture`), so that tight and loose crops read alike. None
            keeps the image's own margins.
        max_side_margin (`float`, *optional*, defaults to `MAX_SIDE_MARGIN`): where `crop_margin` is None, cut a
            blank margin wider than this many ink heights left or right of the ink to that width
            (`trim_blank_margins`), so that a line cropped loosely reads as one cropped tightly. None keeps them.
            Line images only (`resize_mode="keep_aspect"`: `margin_limits`).
        max_vertical_margin (`float`, *optional*, defaults to `MAX_VERTICAL_MARGIN`): the same above and below.
        cut_vertical_margin (`float`, *optional*, defaults to `CUT_VERTICAL_MARGIN`): what a blank above or below
            higher than `max_vertical_margin` is cut to, in ink heights (at most `max_vertical_margin`; None: to
            `max_vertical_margin`), so that a loose crop fills the model's rows as a tight one does.
        max_blank_gap (`float`, *optional*, defaults to `MAX_BLANK_GAP`): a blank gap between a line's words wider
            than this many ink heights is filled with the paper's colour (`fill_blank_gaps`), so that paper texture
            in it is not read as words. None keeps every gap. Line images only, as the margins.
        deslant (`bool`, defaults to `False`): shear each image so that leaning handwriting stands upright
            (`slant_correction`), before the crop; for handwriting readers, which then learn and read upright
            strokes whatever the writer's slant.
        glyph_height_range (`list[float]`, *optional*): `[low, high]` pixels, in `"limits"` mode: an image whose
            glyphs (`estimate_glyph_height`) are shorter than `low` or taller than `high` is first scaled to
            that end (by a factor within `GLYPH_SCALE_LIMITS`), so that text typeset at any size reaches the
            model at a scale it learned. None keeps every image's size.
        min_right_padding (`int`, defaults to 32): in the modes that pad, the columns of padding after the widest
            image of a batch: every image then ends in padding, so that it reads the same alone as in a batch
            (without them 10-16% of real receipt lines read differently alone and in a batch of 32). They must
            cover the convolutions' reach past an image's last column read: 23 columns for CRNN's VGG (a
            receptive field 46 columns wide), more for a ResNet (`resnet-transformer-lines` pads by 48). With 16,
            2 of 400 development receipt lines (`crnn-lines`) and 9 of 300 Washington lines (`crnn-handwriting`)
            read differently alone and in a batch of 32.
    """

    valid_kwargs = TextRecognitionImageProcessorKwargs

    def __init__(
        self,
        num_channels: int = 1,
        resize_mode: str = "keep_aspect",
        height: int = 32,
        max_width: int = 512,
        width: int = 128,
        width_multiple: int = 4,
        min_height: int = 16,
        max_height: int = 256,
        min_width: int = 16,
        scale_augmentation_range: Sequence[float] = (0.7, 1.4),
        do_normalize: bool = True,
        image_mean: float | Sequence[float] = 0.5,
        image_std: float | Sequence[float] = 0.5,
        padding_value: float | None = None,
        invert: bool = False,
        text_polarity: str = "auto",
        crop_margin: float | None = None,
        max_side_margin: float | None = MAX_SIDE_MARGIN,
        max_vertical_margin: float | None = MAX_VERTICAL_MARGIN,
        cut_vertical_margin: float | None = CUT_VERTICAL_MARGIN,
        max_blank_gap: float | None = MAX_BLANK_GAP,
        deslant: bool = False,
        glyph_height_range: Sequence[float] | None = None,
        min_right_padding: int = 32,
        **kwargs,
    ):
        kwargs.pop("model_input_names", None)  # saved by earlier versions; it follows from resize_mode
        super().__init__(**kwargs)
        if num_channels not in (1, 3):
            raise ValueError(f"num_channels must be 1 or 3, got {num_channels}")
        if resize_mode not in RESIZE_MODES:
            raise ValueError(f"resize_mode must be one of {RESIZE_MODES}, got {resize_mode!r}")
        for name, value in (
            ("height", height),
            ("max_width", max_width),
            ("width", width),
            ("width_multiple", width_multiple),
            ("min_height", min_height),
            ("max_height", max_height),
            ("min_width", min_width),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if max_width % width_multiple:
            raise ValueError(f"max_width ({max_width}) must be a multiple of width_multiple ({width_multiple})")
        if not isinstance(min_right_padding, int) or min_right_padding < 0:
            raise ValueError(f"min_right_padding must be a number of columns >= 0, got {min_right_padding!r}")
        if text_polarity not in TEXT_POLARITIES:
            raise ValueError(f"text_polarity must be one of {TEXT_POLARITIES}, got {text_polarity!r}")
        if not isinstance(deslant, bool):
            raise ValueError(f"deslant must be True or False, got {deslant!r}")
        if crop_margin is not None and not (isinstance(crop_margin, (int, float)) and 0 <= crop_margin <= 2):
            raise ValueError(f"crop_margin must be None or a number of ink heights from 0 to 2, got {crop_margin!r}")
        for name, value in (("max_side_margin", max_side_margin), ("max_vertical_margin", max_vertical_margin),
                            ("cut_vertical_margin", cut_vertical_margin), ("max_blank_gap", max_blank_gap)):
            if value is not None and not (isinstance(value, (int, float)) and value >= 0):
                raise ValueError(f"{name} must be None or a number of ink heights >= 0, got {value!r}")
        if glyph_height_range is not None:
            if resize_mode != "limits":
                raise ValueError(f'glyph_height_range needs resize_mode="limits", not {resize_mode!r}')
            if (
                isinstance(glyph_height_range, (str, bytes))
                or len(glyph_height_range) != 2
                or not all(isinstance(value, (int, float)) and value > 0 for value in glyph_height_range)
                or glyph_height_range[0] > glyph_height_range[1]
            ):
                raise ValueError(f"glyph_height_range must be None or [low, high] pixels, 0 < low <= high, got {glyph_height_range!r}")
            glyph_height_range = [float(value) for value in glyph_height_range]
        if min_height > max_height or min_width > max_width:
            raise ValueError(
                f"the limits must satisfy min <= max: height {min_height}-{max_height}, width {min_width}-{max_width}"
            )
        low, high = (float(value) for value in scale_augmentation_range)
        if not 0 < low <= high:
            raise ValueError(f"scale_augmentation_range must be [low, high] with 0 < low <= high, got {scale_augmentation_range}")
        self.num_channels = num_channels
        self.resize_mode = resize_mode
        self.height = height
        self.max_width = max_width
        self.width = width
        self.width_multiple = width_multiple
        self.min_height = min_height
        self.max_height = max_height
        self.min_width = min_width
        self.scale_augmentation_range = [low, high]
        self.do_normalize = do_normalize
        self.image_mean = self._per_channel("image_mean", image_mean)
        self.image_std = self._per_channel("image_std", image_std)
        self.padding_value = padding_value
        self.invert = invert
        self.text_polarity = text_polarity
        self.crop_margin = crop_margin
        self.max_side_margin = max_side_margin
        self.max_vertical_margin = max_vertical_margin
        self.cut_vertical_margin = cut_vertical_margin
        self.max_blank_gap = max_blank_gap
        self.deslant = deslant
        self.glyph_height_range = glyph_height_range
        self.min_right_padding = min_right_padding

    @property
    def margin_limits(self) -> tuple[float | None, float | None, float | None, float | None]:
        """`(max_side_margin, max_vertical_margin, cut_vertical_margin, max_blank_gap)` for line images
        (`resize_mode="keep_aspect"`); all None in the other modes, whose formulas and digit strings are scaled by their
        own measures (`glyph_height_range`)."""
        if self.resize_mode != "keep_aspect":
            return None, None, None, None
        return self.max_side_margin, self.max_vertical_margin, self.cut_vertical_margin, self.max_blank_gap

    @property
    def pads(self) -> bool:
        """Whether batches are padded, and so come with a `pixel_mask` (`PADDED_RESIZE_MODES`)."""
        return self.resize_mode in PADDED_RESIZE_MODES

    @property
    def pads_height(self) -> bool:
        """Whether batches are padded at the bottom as well as on the right (`"limits"` mode): an image then reads
        differently alone and beside a taller or wider one, for no padding covers a 2-D CNN's reach over the rows
        (`comer-math`: 10 of 180 formulas). Readers batch such images by their size alone
        (`textrec.processing.pipeline_text_recognition.batches_read_as_alone`)."""
        return self.resize_mode == "limits"

    @property
    def model_input_names(self) -> list[str]:
        """What `preprocess` returns: `pixel_values`, and `pixel_mask` where batches are padded (`pads`).
        Derived from `resize_mode`, so never saved with the settings."""
        return ["pixel_values", "pixel_mask"] if self.pads else ["pixel_values"]

    def to_dict(self) -> dict:
        # BaseImageProcessor.to_dict drops None values; keep the optional settings visible in the saved config.
        return {**super().to_dict(), "padding_value": self.padding_value, "crop_margin": self.crop_margin,
                "max_side_margin": self.max_side_margin, "max_vertical_margin": self.max_vertical_margin,
                "cut_vertical_margin": self.cut_vertical_margin, "max_blank_gap": self.max_blank_gap,
                "glyph_height_range": self.glyph_height_range}

    def _per_channel(self, name: str, value: float | Sequence[float]) -> list[float]:
        values = [float(value)] * self.num_channels if np.isscalar(value) else [float(v) for v in value]
        if len(values) != self.num_channels:
            raise ValueError(f"{name} needs {self.num_channels} value(s) (num_channels), got {len(values)}")
        return values

    def preprocess(
        self,
        images,
        return_tensors: str | None = "pt",
        do_scale_augmentation: bool = False,
        warn_images_out_of_range: bool = True,
        do_normalize_capture: bool = True,
    ) -> BatchFeature:
        """Turn one image or a list of images into a padded batch.

        Args:
            images: an image or a list of images, each as accepted by `load_image` (path, PIL image, array).
            return_tensors: `"pt"` for torch tensors, `"np"` or `None` for NumPy arrays.
            do_scale_augmentation: scale each image by a random factor first (training batches, `"limits"`
                mode only).
            do_normalize_capture: bring each image to what the model expects of any capture first
                (`normalize_capture_of`); `False` for images that went through `normalize_capture_of` already.
            warn_images_out_of_range: log one warning per image far outside what the model reads (`size_warning`:
                tiny, an extreme aspect ratio, several lines for a line model), naming its index; `False` where
                the caller says so itself (`recognize()`, the pipeline, which name the file) or the images were
                checked before (training).

        Returns:
            `BatchFeature` with
            - `pixel_values` float32 (batch, num_channels, batch_height, batch_width);
            - `pixel_mask` int64 (batch, batch_height, batch_width), 1 on image pixels, 0 on padding, in the
              modes that pad (`"keep_aspect"`, `"limits"`); none in `"fixed"` mode, where nothing is padded.
            `batch_width` is `width` in `"fixed"` mode; otherwise it is the widest resized image plus `min_right_padding`, rounded up
            to a multiple of `width_multiple`. `batch_height` is the tallest resized image in `"limits"`
            mode, `height` otherwise.

        Raises:
            ValueError: an image cannot be used; the message starts with "image at index i" and, for
                files, names the file. `do_scale_augmentation` outside `"limits"` mode.
        """
        if do_scale_augmentation and self.resize_mode != "limits":
            raise ValueError(f'do_scale_augmentation needs resize_mode="limits", not {self.resize_mode!r}')
        if isinstance(images, (str, os.PathLike, Image.Image, np.ndarray)):
            images = [images]
        if len(images) == 0:
            raise ValueError("expected at least one image, got an empty list")
        arrays = []
        for index, image in enumerate(images):
            scale = np.random.uniform(*self.scale_augmentation_range) if do_scale_augmentation else 1.0
            try:
                loaded = load_image(image)
                captured = self.normalize_capture_of(loaded) if do_normalize_capture else loaded
                arrays.append(self._image_to_array(captured, scale))
            except (ValueError, TypeError) as err:
                raise type(err)(f"image at index {index}: {err}") from err
            if warn_images_out_of_range:
                problem = self.size_warning(loaded.width, loaded.height, captured, image_is_normalized=True)
                if problem:
                    logger.warning("image at index %d: %s; it is read, but probably not as you expect", index, problem)

        batch_height = max(array.shape[1] for array in arrays)
        batch_width = max(array.shape[2] for array in arrays)
        if self.pads:
            batch_width += self.min_right_padding
            batch_width = -(-batch_width // self.width_multiple) * self.width_multiple
        pixel_values = np.empty((len(arrays), self.num_channels, batch_height, batch_width), dtype=np.float32)
        pixel_values[...] = self._padding_values()[:, None, None]
        pixel_mask = np.zeros((len(arrays), batch_height, batch_width), dtype=np.int64)
        for index, array in enumerate(arrays):
            pixel_values[index, :, : array.shape[1], : array.shape[2]] = array
            pixel_mask[index, : array.shape[1], : array.shape[2]] = 1
        outputs = {"pixel_values": pixel_values, "pixel_mask": pixel_mask} if self.pads else {"pixel_values": pixel_values}
        return BatchFeature(outputs, tensor_type=return_tensors)

    def output_size(self, height: int, width: int, scale: float = 1.0) -> tuple[int, int]:
        """`(height, width)` of an image of `height` x `width` pixels after resizing (see `resize_mode`),
        before batch padding; `scale` is the scale-augmentation factor (`"limits"` mode)."""
        if self.resize_mode == "fixed":
            return self.height, self.width
        if self.resize_mode == "keep_aspect":
            scaled_width = max(1, round(width * self.height / height))
            return self.height, min(scaled_width, self.max_width)
        width, height = width * scale, height * scale
        factor = min(self.max_height / height, self.max_width / width)
        if factor >= 1.0:
            factor = max(1.0, self.min_height / height, self.min_width / width)
        return (
            min(max(round(height * factor), self.min_height), self.max_height),
            min(max(round(width * factor), self.min_width), self.max_width),
        )

    def size_warning(self, width: int, height: int, image: Image.Image | None = None,
                     image_is_normalized: bool = False) -> str | None:
        """Why an image of `width` x `height` pixels lies far outside what the model reads, or None: a side
        shorter than `MIN_IMAGE_SIDE`, given the `image`, no ink in it (`BLANK_CONTRAST`), an aspect ratio that resizing (`output_size`) changes by more than
        `MAX_ASPECT_CHANGE` times (a line model's line squeezed more than `MAX_LINE_SQUEEZE` times), or, given the `image` of a line model (`"keep_aspect"`), more than one line of
        text in it (`text_line_count`), or a line turned on its side (taller than wide, and one line read across
        its columns). Such an image is still read; recognition warns about it. `image_is_normalized`: the `image`
        came from `normalize_capture_of` (the `width` and `height` stay those of the image as given), so that
        reading normalises each image once."""
        if min(width, height) < MIN_IMAGE_SIDE:
            return f"tiny image ({width}x{height} pixels, width x height)"
        if image is not None:
            contrast = ink_contrast(np.asarray(image.convert("L")))
            if contrast < BLANK_CONTRAST:
                return (f"it looks blank (its darkest and lightest pixels differ by {contrast:.0f} grey levels): there "
                        "is no text in it to read")
        if image is not None and self.resize_mode == "keep_aspect":
            if not image_is_normalized:
                image = self.normalize_capture_of(image)
            luminance = np.asarray(image.convert("L"))
            lines = text_line_count(luminance)
            if lines <= 1 and self.text_polarity == "auto" and may_be_page(255 - luminance):
                # A page photographed or scanned on a dark ground can pass for light text on dark.
                other_lines = text_line_count(255 - luminance)
                if other_lines > lines:
                    luminance, lines = 255 - luminance, other_lines
            if lines > 1 and len(ink_piece_heights(luminance)) < MIN_PIECES_FOR_LINES:
                lines = 1
            if lines > 1 and height > width and text_line_count(luminance.T) == 1 and not may_be_page(luminance.T):
                return (
                    f"it looks like a line of text turned on its side ({width}x{height} pixels, width x height, "
                    f"taller than wide), and this model reads horizontal lines (rotate the image upright)"
                )
            if lines > 1:
                return (
                    f"it looks like {lines} lines of text, and this model reads one line per image (read it as a page: "
                    f"textrec-recognize --page, or textrec.processing.page_reading.read_page)"
                )
        if self.resize_mode == "keep_aspect":  # the line as the model reads it: its blank margins cut (given the image)
            line_width, line_height = image.size if image is not None else (width, height)
            line_out_height, line_out_width = self.output_size(line_height, line_width)
            squeeze = (line_width / line_height) / (line_out_width / line_out_height)
            if squeeze > MAX_LINE_SQUEEZE:
                return (
                    f"a line too long for this model's max_width ({width}x{height} pixels, width x height; its line "
                    f"resized to {line_out_width}x{line_out_height}, its width squeezed {squeeze:.1f} times, which "
                    f"garbles its text): cut it into shorter lines, or read it with a wider image_processor.max_width"
                )
        out_height, out_width = self.output_size(height, width)
        change = (width / height) / (out_width / out_height)
        if max(change, 1 / change) > MAX_ASPECT_CHANGE:
            how = "squeezed" if change > 1 else "stretched"
            return (
                f"extreme aspect ratio ({width}x{height} pixels, width x height; resized to {out_width}x{out_height}, "
                f"its width {how} {max(change, 1 / change):.0f} times)"
            )
        return None

    def normalize_capture_of(self, image: Image.Image) -> Image.Image:
        """The image as this model expects to see any capture of its text (`normalize_capture` with this processor's
        `text_polarity`, `crop_margin`, `deslant` and margins), in its channels' mode ("L" or "RGB"), not yet
        resized."""
        image = image.convert("L" if self.num_channels == 1 else "RGB")
        return normalize_capture(image, self.text_polarity, self.crop_margin, self.deslant, *self.margin_limits)

    def _image_to_array(self, image: Image.Image, scale: float = 1.0) -> np.ndarray:
        """8-bit L/RGB image, as `normalize_capture_of` gives it -> float32 (num_channels, resized_height,
        resized_width), normalised."""
        image = image.convert("L" if self.num_channels == 1 else "RGB")
        if self.glyph_height_range is not None:
            glyphs = estimate_glyph_height(np.asarray(image.convert("L")))
            if glyphs is not None:
                scale *= float(np.clip(np.clip(glyphs, *self.glyph_height_range) / glyphs, *GLYPH_SCALE_LIMITS))
        height, width = self.output_size(image.height, image.width, scale)
        if image.size != (width, height):
            image = image.resize((width, height), resample=RESAMPLE)
        values = np.asarray(image, dtype=np.float32).reshape(height, width, -1) / 255.0
        return self._normalize(values).transpose(2, 0, 1)

    def _normalize(self, values: np.ndarray) -> np.ndarray:
        """Invert and normalise [0, 1] values; the last axis is the channel."""
        if self.invert:
            values = 1.0 - values
        if self.do_normalize:
            values = (values - np.array(self.image_mean, dtype=np.float32)) / np.array(self.image_std, dtype=np.float32)
        return values

    def _padding_values(self) -> np.ndarray:
        """The value of padded pixels per channel, float32 (num_channels,)."""
        if self.padding_value is not None:
            return np.full(self.num_channels, self.padding_value, dtype=np.float32)
        return self._normalize(np.ones(self.num_channels, dtype=np.float32))


TextRecognitionImageProcessor.register_for_auto_class("AutoImageProcessor")
