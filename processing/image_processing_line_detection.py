"""The text-line detector's image processor: a page in, the model's input out; the model's line-core map in, line
boxes and polygons with scores out (`post_process_line_detection`, in transformers' detection conventions).

A page is made grey and dark-on-light (light text on a dark page is inverted: `page_has_light_text`), scaled so that
its longer side is `longest_edge` pixels, normalised, and padded at the right and bottom to a multiple of
`size_divisor`. A page of small print (a newspaper of many columns, scanned whole) would bring its lines below the
heights the detector learned; `longest_edge_for` measures the page's line pitch (`estimate_line_pitch`) and gives the
larger side that brings it to `target_line_pitch`. Given the lines of each page (`annotations`: 4-point polygons or
boxes in the page's pixels), it also draws the training targets: each line's core, the band of `core_height_ratio` of
its height around its middle, starting `core_inset_ratio` line heights inside each end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw
from transformers.feature_extraction_utils import BatchFeature
from transformers.image_processing_utils import BaseImageProcessor
from transformers.utils import logging

from .image_processing_text_recognition import MIN_INK_CONTRAST, ink_contrast, load_image, otsu_threshold, weighted_median

logger = logging.get_logger(__name__)

Polygon = list[list[float]]
"""Four corners `[[x, y], ...]`: top left, top right, bottom right, bottom left of the line as it reads."""


def box_to_polygon(box: Sequence[float]) -> Polygon:
    x0, y0, x1, y1 = box
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def polygon_to_box(polygon: Polygon) -> list[float]:
    points = np.asarray(polygon, dtype=np.float64)
    return [float(points[:, 0].min()), float(points[:, 1].min()), float(points[:, 0].max()), float(points[:, 1].max())]


def polygon_part(polygon: Polygon, start: float, end: float, top: float = 0.0, bottom: float = 1.0) -> Polygon:
    """The part of a line's polygon from `start` to `end` of its length and from `top` to `bottom` of its height
    (fractions), its corners in the polygon's order."""
    top_left, top_right, bottom_right, bottom_left = (np.asarray(point, dtype=np.float64) for point in polygon)
    corners = []
    for along, across in ((start, top), (end, top), (end, bottom), (start, bottom)):
        upper = top_left + (top_right - top_left) * along
        lower = bottom_left + (bottom_right - bottom_left) * along
        corners.append((upper + (lower - upper) * across).tolist())
    return corners


def line_core(polygon: Polygon, height_ratio: float, inset_ratio: float) -> Polygon:
    """The core of a line: its middle band of `height_ratio` of its height, `inset_ratio` heights inside each end."""
    top_left, top_right, bottom_right, bottom_left = (np.asarray(point, dtype=np.float64) for point in polygon)
    height = (np.linalg.norm(bottom_left - top_left) + np.linalg.norm(bottom_right - top_right)) / 2
    length = (np.linalg.norm(top_right - top_left) + np.linalg.norm(bottom_right - bottom_left)) / 2
    inset = min(inset_ratio * height, 0.45 * length) / max(length, 1e-6)
    keep = (1 - height_ratio) / 2
    return polygon_part(polygon, inset, 1 - inset, keep, 1 - keep)


DETECTION_THRESHOLD = 0.85
"""The line-core probability above which a map position belongs to a line (the default `threshold`). Chosen on the
real development pages with the page reader (`scripts/lab/benchmark_pages.py`): page CER at 0.5 / 0.7 / 0.85 / 0.93,
receipts 12.0 / 11.8 / 11.5 / 12.6%, forms 20.4 / 18.8 / 18.2 / 19.1%, books 14.3 / 12.5 / 9.6 / 9.2%, newspaper
73.8 / 67.9 / 52.2 / 58.2%: lower, the cores of closely set lines run into each other."""


PAGE_MIDDLE_SHARE = 2 / 3
"""A page's polarity is told from its middle, this share of its width and height (`page_has_light_text`)."""


def page_has_light_text(luminance: np.ndarray) -> bool:
    """Whether an 8-bit luminance page shows light text on a dark background: its middle
    (`PAGE_MIDDLE_SHARE`) split in two by `otsu_threshold`, the paper is the class holding most of it. (A line
    crop's polarity comes from its border, `has_light_text`; a page's border is often the scanner's lid or the
    table it lay on, dark around light paper.) A blank page has dark text. It is told from the page with its light
    evened (`even_light`), brought down to `4 * EVEN_LIGHT_SIDE` pixels on its shorter side: a page half in a shadow
    is not light print on a dark page."""
    luminance = np.asarray(luminance)
    height, width = luminance.shape[:2]
    factor = min(height, width) / (4 * EVEN_LIGHT_SIDE)
    if factor > 1:
        height, width = round(height / factor), round(width / factor)
        luminance = np.asarray(Image.fromarray(luminance).resize((width, height), Image.Resampling.BOX))
    luminance = even_light(luminance)
    margin_y, margin_x = round(height * (1 - PAGE_MIDDLE_SHARE) / 2), round(width * (1 - PAGE_MIDDLE_SHARE) / 2)
    middle = luminance[margin_y:height - margin_y, margin_x:width - margin_x]
    if middle.size == 0:
        middle = luminance
    if ink_contrast(middle) < MIN_INK_CONTRAST:
        return False
    return float((middle > otsu_threshold(middle)).mean()) < 0.5


EVEN_LIGHT_SIDE = 128
"""A page's light is measured on it brought down to this shorter side (`light_gain`)."""
EVEN_LIGHT_WINDOW = 1 / 16
"""The light around a point is the median of the page's light within this share of its shorter side (`light_gain`):
wider than a line of print, so that the print does not count, narrower than a shadow."""
EVEN_LIGHT_LEVEL = 75
"""The light a page is evened to: this percentile of the light around its points (`light_gain`), the paper's where it
covers a quarter of the page or more (a scan's dark border, a shadow over half the page do not set it)."""
EVEN_LIGHT_MIN_SIDE = 256
"""A page whose shorter side is under this many pixels is kept as it is (`light_gain`): a few lines of its print fill
the window its light would be measured over."""
EVEN_LIGHT_GAIN = (0.5, 2.0)
"""The most a point of the page is darkened or lightened (`light_gain`): a picture or a box printed in reverse,
darker than the paper over more than `EVEN_LIGHT_WINDOW`, stays darker than the paper."""


def light_gain(luminance: np.ndarray) -> np.ndarray:
    """What evens the light of an 8-bit luminance page, as a camera's page in the shade of a hand or lit from one side
    needs: for each pixel, the page's light (`EVEN_LIGHT_LEVEL`) over the light around it (the median within
    `EVEN_LIGHT_WINDOW` of the page's shorter side, measured at `EVEN_LIGHT_SIDE`), at most `EVEN_LIGHT_GAIN`; 1
    everywhere on a page under `EVEN_LIGHT_MIN_SIDE`. The medians take the paper's light in either polarity, light
    print on dark as dark on light. `even_light` applies it."""
    from scipy import ndimage

    luminance = np.asarray(luminance)
    height, width = luminance.shape[:2]
    if min(height, width) < EVEN_LIGHT_MIN_SIDE:
        return np.ones((height, width), dtype=np.float32)
    # Brought down in two steps: averaged to four times the measuring side, then each 4 x 4 block's median, so that
    # the print's pixels, a minority of most blocks, do not darken the paper's light.
    factor = max(1.0, min(height, width) / (4 * EVEN_LIGHT_SIDE))
    size = (round(width / factor) // 4 * 4, round(height / factor) // 4 * 4)
    small = np.asarray(Image.fromarray(luminance).resize(size, Image.Resampling.BOX), dtype=np.float32)
    blocks = np.sort(small.reshape(size[1] // 4, 4, size[0] // 4, 4).transpose(0, 2, 1, 3).reshape(
        size[1] // 4, size[0] // 4, 16), axis=2)
    blocks = (blocks[..., 7] + blocks[..., 8]) / 2  # each block's median (`np.median`'s, sorting 16 values being faster)
    window = max(3, round(EVEN_LIGHT_WINDOW * min(blocks.shape)))
    around = np.maximum(ndimage.median_filter(blocks, size=window, mode="nearest"), 1.0)
    gain = np.clip(float(np.percentile(around, EVEN_LIGHT_LEVEL)) / around, *EVEN_LIGHT_GAIN).astype(np.float32)
    return np.asarray(Image.fromarray(gain).resize((width, height), Image.Resampling.BILINEAR))


def even_light(pixels: np.ndarray, gain: np.ndarray | None = None) -> np.ndarray:
    """An 8-bit page (luminance, or colour with the channels last) with its light made even: times `gain`
    (`light_gain` of its luminance when not given)."""
    pixels = np.asarray(pixels)
    if gain is None:
        gain = light_gain(pixels if pixels.ndim == 2 else np.asarray(Image.fromarray(pixels).convert("L")))
    if np.all(gain == 1):
        return pixels
    return np.clip(pixels * (gain if pixels.ndim == 2 else gain[..., None]), 0, 255).round().astype(np.uint8)


CORE_INSET_RATIO = 0.25
"""How far a line's core starts inside each of its ends, in line heights (the default `core_inset_ratio`)."""
PITCH_ESTIMATE_EDGE = 2560
"""A page's line pitch is measured on it scaled down to at most this longer side (never enlarged)."""
LINE_HEIGHT_ESTIMATE_PIXELS = 1_500_000
"""A page's line height is measured on it scaled down to at most this many pixels (never enlarged): about the
detector's own view of an ordinary page, whatever the page's shape."""
LINE_HEIGHT_ESTIMATE_SIDE = 1000
"""... and to no less than this shorter side (or its own)."""
LINE_HEIGHT_INK_DEPTH = 40
"""Ink, for the line height: pixels this many grey levels darker than their neighbourhood's mean (faint dot-matrix
print included, the paper's grain and a scan's dark surround left out)."""


def scaled_down(page: Image.Image, scale: float) -> Image.Image:
    """`page` scaled by `scale` (bilinear) where it is under 1, for a measurement of its lines; else as it is."""
    if scale >= 1.0:
        return page
    return page.resize((max(1, round(page.width * scale)), max(1, round(page.height * scale))), Image.Resampling.BILINEAR)


def estimate_line_height(grey: np.ndarray, strips: int = 16, min_height: int = 3) -> float | None:
    """The height in pixels of a page's printed lines (8-bit grey, dark on light), on pages of any layout, regular or
    not (receipts, forms): in each of `strips` vertical strips, the runs of rows holding ink (`LINE_HEIGHT_INK_DEPTH`;
    rows one apart joined, as dot-matrix print's dots are) from `min_height` pixels to a tenth of the page high are
    lines; the page's height is their ink-weighted median. None where fewer than two runs are found (a blank page)."""
    from scipy import ndimage

    ink_depth = 255.0 - grey.astype(np.float32)
    ink = ink_depth - ndimage.uniform_filter(ink_depth, max(15, ink_depth.shape[0] // 30)) > LINE_HEIGHT_INK_DEPTH
    height, width = ink.shape
    runs, weights = [], []
    for strip in range(strips):
        columns = ink[:, strip * width // strips : (strip + 1) * width // strips]
        rows = ndimage.binary_closing(columns.sum(axis=1) >= 2, np.ones(3, dtype=bool))
        edges = np.diff(np.concatenate([[0], rows.astype(np.int8), [0]]))
        for start, end in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            if min_height <= end - start <= height // 10:
                runs.append(end - start)
                weights.append(float(columns[start:end].sum()))
    if len(runs) < 2:
        return None
    return weighted_median(np.asarray(runs, dtype=np.float64), np.asarray(weights))


def estimate_line_pitch(grey: np.ndarray, strips: int = 8, min_pitch: int = 3) -> float | None:
    """The distance in pixels from one printed line to the next on a page of 8-bit grey (dark on light), when the
    page's rows are clearly periodic, else None. The page is cut into `strips` vertical strips (columns have their
    own lines); in each, the rows' ink profile (the background taken out) is autocorrelated and its first strong
    peak is the strip's pitch. The page's pitch is the strength-weighted median, returned only when the median
    strength is at least 0.4 and three strips in four agree within 10%: forms, receipts and pictures, whose rows are
    not regular, give None."""
    from scipy import ndimage

    ink = 255.0 - grey.astype(np.float32)
    ink = np.clip(ink - ndimage.uniform_filter(ink, max(9, ink.shape[0] // 30)), 0, None)
    height, width = ink.shape
    periods, strengths = [], []
    for strip in range(strips):
        columns = ink[:, strip * width // strips : (strip + 1) * width // strips]
        if not columns.size:  # a page narrower than `strips` pixels
            continue
        profile = columns.mean(axis=1)
        profile = profile - profile.mean()
        if not profile.any():
            continue
        spectrum = np.fft.rfft(profile, 2 * height)
        correlation = np.fft.irfft(spectrum * np.conj(spectrum))[:height]
        correlation = correlation[min_pitch : height // 8] / correlation[0]
        peaks = [lag for lag in range(1, len(correlation) - 1) if correlation[lag - 1] < correlation[lag] >= correlation[lag + 1]
                 and correlation[lag] > 0.05]
        if not peaks:
            continue
        strongest = max(correlation[lag] for lag in peaks)
        first = next(lag for lag in peaks if correlation[lag] >= 0.8 * strongest)  # the line pitch, not a multiple
        periods.append(first + min_pitch)
        strengths.append(float(correlation[first]))
    if len(periods) < strips // 2:
        return None
    order = np.argsort(periods)
    cumulative = np.cumsum(np.asarray(strengths)[order])
    pitch = float(np.asarray(periods)[order][np.searchsorted(cumulative, cumulative[-1] / 2)])
    agreeing = sum(abs(period - pitch) <= 0.1 * pitch for period in periods)
    if np.median(strengths) < 0.4 or agreeing < 0.75 * strips:
        return None
    return pitch


class LineDetectionImageProcessor(BaseImageProcessor):
    r"""
    Image processor of [`LineDetectorForTextLineDetection`].

    Args:
        longest_edge (`int`): the page's longer side after scaling, in pixels.
        size_divisor (`int`): height and width are padded to a multiple of this (the model's total stride).
        text_polarity (`str`): `"auto"` inverts pages of light text on dark, `"dark"` / `"light"` say which it is.
        image_mean (`float`), image_std (`float`): normalisation of the [0, 1] grey values.
        core_height_ratio (`float`): a line core's height as a share of the line's.
        core_inset_ratio (`float`): how far a core starts inside each end of its line, in line heights.
        small_print_pitch (`float`, *optional*): a page whose line pitch (`estimate_line_pitch`) comes out under this
            many pixels at `longest_edge` is detected larger (`longest_edge_for`); None: every page at `longest_edge`.
        target_line_pitch (`float`): the line pitch such a page is brought to.
        max_longest_edge (`int`): the largest longer side a page is detected at, for its small print (a page detected
            larger for its lines' height may go beyond it, not beyond an A-series page's pixels at it: `max_pixels`).
        small_print_line_height (`float`, *optional*): a page whose lines (`estimate_line_height`) come out under this
            many pixels high at the side it would be detected at is detected larger (`longest_edge_for`): a long till
            receipt, a strip of a few lines, whose print its longer side shrinks; None: not measured.
        target_line_height (`float`): the line height such a page is brought to (at most twice its own size).
    """

    model_input_names = ["pixel_values"]

    def __init__(
        self,
        longest_edge: int = 1280,
        size_divisor: int = 32,
        text_polarity: str = "auto",
        image_mean: float = 0.5,
        image_std: float = 0.5,
        core_height_ratio: float = 0.5,
        core_inset_ratio: float = CORE_INSET_RATIO,
        small_print_pitch: float | None = 13.0,
        target_line_pitch: float = 20.0,
        max_longest_edge: int = 4096,
        small_print_line_height: float | None = 6.5,
        target_line_height: float = 12.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if text_polarity not in ("auto", "dark", "light"):
            raise ValueError(f"text_polarity must be 'auto', 'dark' or 'light', got {text_polarity!r}")
        if not 0 < core_height_ratio <= 1:
            raise ValueError(f"core_height_ratio must be in (0, 1], got {core_height_ratio}")
        self.longest_edge = longest_edge
        self.size_divisor = size_divisor
        self.text_polarity = text_polarity
        self.image_mean = image_mean
        self.image_std = image_std
        self.core_height_ratio = core_height_ratio
        self.core_inset_ratio = core_inset_ratio
        self.small_print_pitch = small_print_pitch
        self.target_line_pitch = target_line_pitch
        self.max_longest_edge = max_longest_edge
        self.small_print_line_height = small_print_line_height
        self.target_line_height = target_line_height

    def scale_for(self, width: int, height: int) -> float:
        """The factor a page of `width` x `height` pixels is scaled by."""
        return self.longest_edge / max(width, height)

    @property
    def max_pixels(self) -> int:
        """The most pixels a page is detected at: an A-series page's whose longer side is `max_longest_edge`."""
        return int(self.max_longest_edge ** 2 / math.sqrt(2))

    def longest_edge_for(self, image) -> int:
        """The longer side to detect this page at: `longest_edge`, or, for a page of small print (its line pitch at
        `longest_edge` under `small_print_pitch`), the side that brings its pitch to `target_line_pitch`, at most
        `max_longest_edge` (and never beyond what brings the page to its own size twice over); then, where its lines
        would still be detected under `small_print_line_height` pixels high (a long receipt, a strip of lines: a page
        shrunk to be detected), the side that brings them to `target_line_height`, at most twice the page's own size and
        `max_pixels`, with a warning where even that leaves them under `small_print_line_height`."""
        if self.small_print_pitch is None and self.small_print_line_height is None:
            return self.longest_edge
        grey = self.grey_page(image)
        edge = self.longest_edge if self.small_print_pitch is None else self._edge_for_pitch(grey)
        if self.small_print_line_height is None:
            return edge
        page_width, page_height = grey.size
        page_side = max(page_width, page_height)
        if edge >= page_side:  # detected at its own size or larger: its print is not shrunk
            return edge
        # a strip's shorter side is kept to `LINE_HEIGHT_ESTIMATE_SIDE`: a long receipt's print stays measurable
        scale = min(1.0, max(math.sqrt(LINE_HEIGHT_ESTIMATE_PIXELS / (page_width * page_height)),
                             LINE_HEIGHT_ESTIMATE_SIDE / min(page_width, page_height)))
        grey = scaled_down(grey, scale)
        height = estimate_line_height(np.asarray(grey))
        if height is None:
            return edge
        height_at_edge = height / scale * edge / page_side
        if height_at_edge >= self.small_print_line_height:
            return edge
        largest = min(2 * page_side, int(page_side * math.sqrt(self.max_pixels / (page_width * page_height))))
        enlarged = min(int(edge * self.target_line_height / height_at_edge), largest)
        if enlarged * height_at_edge / edge < self.small_print_line_height:
            logger.warning(f"a page of {page_width} x {page_height} pixels: its lines are "
                           f"detected {enlarged * height_at_edge / edge:.1f} pixels high at most (under the "
                           f"{self.small_print_line_height:g} the detector reads well); read it cut into parts")
        return max(edge, enlarged)

    def _edge_for_pitch(self, grey: Image.Image) -> int:
        """`longest_edge`, or the larger side that brings a page of small print to `target_line_pitch`."""
        page_side = max(grey.size)
        scale = min(1.0, PITCH_ESTIMATE_EDGE / page_side)
        grey = scaled_down(grey, scale)
        pitch = estimate_line_pitch(np.asarray(grey))
        if pitch is None:
            return self.longest_edge
        pitch_at_edge = pitch / scale * self.longest_edge / page_side
        if pitch_at_edge >= self.small_print_pitch:
            return self.longest_edge
        edge = self.longest_edge * self.target_line_pitch / pitch_at_edge
        return int(min(edge, self.max_longest_edge, 2 * page_side))

    def resized_size(self, width: int, height: int) -> tuple[int, int]:
        scale = self.scale_for(width, height)
        return max(1, round(width * scale)), max(1, round(height * scale))

    def padded_size(self, width: int, height: int) -> tuple[int, int]:
        resized_width, resized_height = self.resized_size(width, height)
        divisor = self.size_divisor
        return -(-resized_width // divisor) * divisor, -(-resized_height // divisor) * divisor

    def grey_page(self, image) -> Image.Image:
        """The page as 8-bit grey, dark text on light (its polarity told with its light evened, `page_has_light_text`)."""
        grey = load_image(image).convert("L")
        light = self.text_polarity == "light" or self.text_polarity == "auto" and page_has_light_text(np.asarray(grey))
        return Image.eval(grey, lambda value: 255 - value) if light else grey

    def preprocess(self, images, annotations: Sequence[Sequence[Polygon]] | None = None, label_stride: int = 2,
                   return_tensors: str | None = "pt", **kwargs) -> BatchFeature:
        """`pixel_values (batch, 1, height, width)` of the pages, padded to the batch's largest; with `annotations`
        (per page, its lines' polygons or boxes in the page's pixels), also `labels` (their cores drawn at
        `label_stride`, the model's `output_stride`) and `label_mask` (0 on padding)."""
        if not isinstance(images, (list, tuple)):
            images = [images]
        if annotations is not None and len(annotations) != len(images):
            raise ValueError(f"annotations: got {len(annotations)} pages' lines for {len(images)} images")
        pages = [self.grey_page(image) for image in images]
        sizes = [self.padded_size(*page.size) for page in pages]
        batch_width, batch_height = max(size[0] for size in sizes), max(size[1] for size in sizes)
        pixel_values = np.ones((len(pages), 1, batch_height, batch_width), dtype=np.float32)
        pixel_values = (pixel_values - self.image_mean) / self.image_std  # padding is white paper
        labels = np.zeros((len(pages), batch_height // label_stride, batch_width // label_stride), dtype=np.float32)
        label_mask = np.zeros_like(labels)
        for index, page in enumerate(pages):
            width, height = self.resized_size(*page.size)
            resized = page.resize((width, height), Image.Resampling.BILINEAR if width < page.width else Image.Resampling.BICUBIC)
            values = np.asarray(resized, dtype=np.float32) / 255.0
            pixel_values[index, 0, :height, :width] = (values - self.image_mean) / self.image_std
            if annotations is not None:
                scale = self.scale_for(*page.size) / label_stride
                labels[index] = self.core_map(annotations[index], scale, labels.shape[1:])
                label_mask[index, : -(-height // label_stride), : -(-width // label_stride)] = 1
        data = {"pixel_values": pixel_values}
        if annotations is not None:
            data.update(labels=labels, label_mask=label_mask)
        return BatchFeature(data=data, tensor_type=return_tensors)

    def core_map(self, lines: Sequence[Polygon | Sequence[float]], scale: float, shape: tuple[int, int]) -> np.ndarray:
        """The cores of `lines` (polygons or boxes), scaled by `scale`, drawn as 1 on a map of `shape`."""
        picture = Image.new("L", (shape[1], shape[0]), 0)
        draw = ImageDraw.Draw(picture)
        for line in lines:
            polygon = line if isinstance(line[0], (list, tuple)) else box_to_polygon(line)
            core = line_core([[x * scale, y * scale] for x, y in polygon], self.core_height_ratio, self.core_inset_ratio)
            draw.polygon([tuple(point) for point in core], fill=1)
        return np.asarray(picture, dtype=np.float32)

    def post_process_line_detection(self, outputs, target_sizes: Sequence[tuple[int, int]],
                                    threshold: float = DETECTION_THRESHOLD,
                                    min_core_pixels: int = 4, min_score: float = 0.6,
                                    max_height_to_length: float = 1.5) -> list[dict]:
        """Line boxes from the model's outputs, in transformers' detection conventions: per page a dict with
        `scores` (the mean core probability of each line), `boxes` (`[x0, y0, x1, y1]` in the page's pixels) and
        `polygons` (4 corners, for skewed lines). Each connected region of the map above `threshold` is one line;
        its core is measured along its main direction and expanded back to the line's full height and length.
        Regions of fewer than `min_core_pixels`, of a mean probability under `min_score`, or taller than
        `max_height_to_length` times their length once expanded (a page's edge, a rule across lines, a picture) are
        no lines.

        Args:
            outputs: the model's output (its `logits`), for the pages in the order `preprocess` got them.
            target_sizes: each page's `(height, width)` in pixels, as transformers' detection processors take them.
        """
        from scipy import ndimage

        logits = outputs.logits if hasattr(outputs, "logits") else outputs["logits"]
        probabilities = logits.detach().float().sigmoid().cpu().numpy()
        padded = [self.padded_size(width, height) for height, width in target_sizes]
        stride = max(size[1] for size in padded) / probabilities.shape[1]
        results = []
        for probability, (height, width) in zip(probabilities, target_sizes):
            scale = self.scale_for(width, height)
            regions, count = ndimage.label(probability > threshold)
            scores, boxes, polygons = [], [], []
            for label, found in enumerate(ndimage.find_objects(regions), start=1):
                rows, columns = np.nonzero(regions[found] == label)
                if len(rows) < min_core_pixels:
                    continue
                score = float(probability[found][regions[found] == label].mean())
                if score < min_score:
                    continue
                points = np.stack([columns + found[1].start + 0.5, rows + found[0].start + 0.5], axis=1) * stride / scale
                polygon = self._expand_core(points, stride / scale)
                if math.dist(polygon[0], polygon[3]) > max_height_to_length * math.dist(polygon[0], polygon[1]):
                    continue
                polygon = [[min(max(x, 0.0), float(width)), min(max(y, 0.0), float(height))] for x, y in polygon]
                scores.append(score)
                polygons.append(polygon)
                boxes.append(polygon_to_box(polygon))
            results.append({"scores": scores, "boxes": boxes, "polygons": polygons})
        return results

    def _expand_core(self, points: np.ndarray, pixel: float) -> Polygon:
        """The line polygon around a core given as the page coordinates of its map pixels (`pixel` page pixels
        each): the core's direction from its points' principal axis (near horizontal), its extent along and across
        it, then its height divided by `core_height_ratio` and its ends moved out by `core_inset_ratio` heights."""
        centre = points.mean(axis=0)
        centred = points - centre
        if len(points) > 2:
            covariance = np.cov(centred.T)
            values, vectors = np.linalg.eigh(covariance)
            direction = vectors[:, int(np.argmax(values))]
        else:
            direction = np.array([1.0, 0.0])
        if direction[0] < 0:
            direction = -direction
        if abs(direction[1]) > 0.35:  # cores run along lines: a steeper axis is a short core's noise
            direction = np.array([1.0, 0.0])
        normal = np.array([-direction[1], direction[0]])
        along, across = centred @ direction, centred @ normal
        core_height = across.max() - across.min() + pixel
        height = core_height / self.core_height_ratio
        start = along.min() - pixel / 2 - self.core_inset_ratio * height
        end = along.max() + pixel / 2 + self.core_inset_ratio * height
        middle = (across.max() + across.min()) / 2
        top, bottom = middle - height / 2, middle + height / 2
        return [(centre + direction * a + normal * b).tolist() for a, b in ((start, top), (end, top), (end, bottom), (start, bottom))]


LineDetectionImageProcessor.register_for_auto_class("AutoImageProcessor")

__all__ = ["LineDetectionImageProcessor", "box_to_polygon", "line_core", "polygon_to_box"]
