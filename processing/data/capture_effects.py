"""What scanners, fax machines, receipt printers and cameras do to a text line (PIL "L" in, "L" out).

The data engine's degradations, on top of :mod:`.augmentation`'s mild ones: each function takes a greyscale
line image (dark text on a light background, as :func:`.synthetic_lines.render_line` draws it) and one
``numpy.random.Generator``; :func:`scan_effects` applies a random subset of them. :func:`scene_composite`
instead puts the text on a photographic-looking background (textured, coloured, lit unevenly), with an
outline or a shadow, light on dark as often as dark on light.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

SCAN_EFFECT_PROBABILITIES = {
    "low_resolution": 0.35,
    "ink_spread": 0.25,
    "binarize": 0.25,
    "broken_glyphs": 0.1,
    "paper_texture": 0.3,
    "uneven_light": 0.25,
    "rule": 0.08,
    "neighbour_lines": 0.12,
}
"""Probability of each effect in :func:`scan_effects`, applied in this order."""

LOW_RESOLUTION_SCALE = (0.3, 0.75)
"""The line is shrunk by a factor in this range and enlarged back (a scan at a low resolution)."""
LOW_RESOLUTION_MIN_HEIGHT = 16
"""The fewest pixels a line is shrunk to in height (its text then about 10 px high: a fax still reads; under it no
reader does, and the label would name text the image has lost)."""
ERODED_SHARE = (0.3, 0.7)
"""How far ink erosion goes towards the 3-px minimum of the ink (a thin toner, a light ribbon): part of the way, so
that a stroke or a printer's dot under 3 px fades instead of vanishing."""
INVERTED_PROBABILITY = 0.15
"""Share of scanned-look lines turned light on dark (screens, dark labels, negatives)."""


def _noise_field(rng: np.random.Generator, height: int, width: int, cells: int) -> np.ndarray:
    """Smooth random values in [0, 1] of shape (height, width): uniform noise on a coarse grid of about
    `cells` cells across the width, enlarged bicubically."""
    grid_width = max(2, cells)
    grid_height = max(2, round(cells * height / max(width, 1)))
    coarse = Image.fromarray((rng.random((grid_height, grid_width)) * 255).astype(np.uint8))
    return np.asarray(coarse.resize((width, height), Image.Resampling.BICUBIC), dtype=np.float32) / 255.0


def low_resolution(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """A scan at a low resolution: shrunk by `LOW_RESOLUTION_SCALE`, never under `LOW_RESOLUTION_MIN_HEIGHT` pixels
    high (a line already that low is left as it is), and enlarged back."""
    scale = rng.uniform(*LOW_RESOLUTION_SCALE)
    scale = min(1.0, max(scale, LOW_RESOLUTION_MIN_HEIGHT / image.height))
    small = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    down = image.resize(small, Image.Resampling.BOX if rng.random() < 0.5 else Image.Resampling.BILINEAR)
    return down.resize(image.size, Image.Resampling.NEAREST if rng.random() < 0.3 else Image.Resampling.BICUBIC)


def ink_spread(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Ink bleed (strokes thicken: a minimum filter on dark-on-light) or erosion (strokes thin and fade: part of the
    way to a maximum filter, `ERODED_SHARE`)."""
    if rng.random() < 0.6:
        return image.filter(ImageFilter.MinFilter(3))
    values = np.asarray(image, dtype=np.float32)
    eroded = np.asarray(image.filter(ImageFilter.MaxFilter(3)), dtype=np.float32)
    return Image.fromarray(np.round(values + rng.uniform(*ERODED_SHARE) * (eroded - values)).astype(np.uint8))


def binarize(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Hard black-and-white edges, thresholded between the darkest and lightest grey (a bitonal scan)."""
    values = np.asarray(image, dtype=np.float32)
    low, high = np.percentile(values, 2), np.percentile(values, 98)
    threshold = low + (high - low) * rng.uniform(0.35, 0.65)
    return Image.fromarray(np.where(values < threshold, low, high).astype(np.uint8))


def broken_glyphs(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Specks of paper in the ink (a worn ribbon, a dry thermal head)."""
    values = np.asarray(image, dtype=np.float32)
    paper = np.percentile(values, 95)
    holes = rng.random(values.shape) < rng.uniform(0.05, 0.25)
    return Image.fromarray(np.where(holes & (values < paper - 40), paper, values).astype(np.uint8))


def paper_texture(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Fibres and stains: the page darkened by smooth noise at two scales."""
    values = np.asarray(image, dtype=np.float32)
    height, width = values.shape
    stain = 0.6 * _noise_field(rng, height, width, int(rng.integers(2, 8))) + 0.4 * _noise_field(
        rng, height, width, int(rng.integers(20, 60)))
    return Image.fromarray(np.clip(values * (1 - rng.uniform(0.1, 0.35) * stain), 0, 255).astype(np.uint8))


def uneven_light(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """A linear shading across the line (a curled page, a phone's shadow)."""
    values = np.asarray(image, dtype=np.float32)
    height, width = values.shape
    angle = rng.uniform(0, 2 * np.pi)
    ys, xs = np.mgrid[0:height, 0:width]
    ramp = (np.cos(angle) * xs / max(width, 1) + np.sin(angle) * ys / max(height, 1))
    ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
    return Image.fromarray(np.clip(values * (1 - rng.uniform(0.2, 0.6) * ramp), 0, 255).astype(np.uint8))


def rule(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """An underline or a table rule, near the bottom or the top of the line."""
    image = image.copy()
    width, height = image.size
    y = int(rng.uniform(0.85, 0.98) * height) if rng.random() < 0.7 else int(rng.uniform(0.02, 0.12) * height)
    x0, x1 = (0, width) if rng.random() < 0.5 else sorted(rng.integers(0, width, size=2).tolist())
    grey = int(np.percentile(np.asarray(image), 2))
    ImageDraw.Draw(image).line([(x0, y), (x1, y)], fill=grey, width=max(1, round(height * rng.uniform(0.02, 0.06))))
    return image


def neighbour_lines(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Parts of the lines above and below at the crop's edge: the descenders or ascenders a tight line
    crop of a page catches, drawn as dark strokes and dots along the top or bottom border."""
    image = image.copy()
    width, height = image.size
    draw = ImageDraw.Draw(image)
    grey = int(np.percentile(np.asarray(image), 2))
    for edge in (0, 1) if rng.random() < 0.3 else (int(rng.integers(2)),):
        depth = max(1, round(height * rng.uniform(0.05, 0.18)))
        x = int(rng.integers(0, max(1, width // 8)))
        while x < width:
            stroke = int(rng.integers(1, max(2, height // 6)))
            length = int(rng.integers(1, depth + 1))
            y0 = 0 if edge == 0 else height - length
            draw.rectangle([x, y0, x + stroke, y0 + length], fill=grey)
            x += stroke + int(rng.integers(2, max(3, height // 2)))
    return image


def show_through(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """The print of the other side seen through thin paper: the page's own ink mirrored left to right, moved up
    or down, blurred and faint (a page's effect: :mod:`.synthetic_pages`)."""
    values = np.asarray(image, dtype=np.float32)
    paper = float(np.percentile(values, 90))
    verso = np.clip(paper - values, 0, None)[:, ::-1]
    verso = np.roll(verso, int(rng.integers(-values.shape[0] // 10, values.shape[0] // 10 + 1)), axis=0)
    verso = Image.fromarray(verso.clip(0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(float(rng.uniform(0.6, 2.5))))
    faded = values - rng.uniform(0.1, 0.4) * np.asarray(verso, dtype=np.float32)
    return Image.fromarray(np.clip(faded, 0, 255).astype(np.uint8))


def specks(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Dust, pores and foxing: dark specks of one to a few pixels, a few larger faint spots, strewn over the page
    (a page's effect: :mod:`.synthetic_pages`)."""
    image = image.copy()
    width, height = image.size
    draw = ImageDraw.Draw(image)
    values = np.asarray(image)
    paper = float(np.percentile(values, 90))
    ink = min(float(np.percentile(values, 1)), 0.3 * paper)  # as dark as the print, or dark on a page of little print
    count = int(width * height * rng.uniform(2e-5, 3e-4))
    for _ in range(count):
        x, y = rng.uniform(0, width), rng.uniform(0, height)
        faint = rng.random() < 0.3
        radius = rng.uniform(2, 8) if faint else rng.uniform(0.5, 2.5)
        darkness = rng.uniform(0.1, 0.3) if faint else rng.uniform(0.4, 1.0)
        draw.ellipse([x - radius, y - radius * rng.uniform(0.5, 1.5), x + radius, y + radius],
                     fill=int(paper - darkness * (paper - ink)))
    return image


DOT_PITCH = (0.06, 0.1)
"""The distance between the dot rows of a dot-matrix printer's glyphs, in font sizes: a capital seven to nine dots
high or more, as the 9-pin and thermal-dot heads of receipt printers set it (coarser, a font drawn for a finer grid
no longer reads)."""
DOT_COLUMN_PITCH = (0.5, 1.0)
"""The distance between dot columns, in row pitches (heads that step half a dot print their columns denser)."""
DOT_RADIUS = (0.35, 0.55)
"""A dot's radius, in row pitches: under half a pitch the dots of a stroke stand apart, over it they run together."""
DOT_MIN_RADIUS = 0.75
"""The smallest dot's radius in pixels: a scan shows no dot finer than one and a half of its pixels (a small font's
dots run together, as they do in a scan of small dot-matrix print)."""
DOT_COVERAGE = (0.2, 0.4)
"""The share of a dot's cell that the glyph's ink must cover for the head to print the dot, of what the line's most
covered cells hold (where some of the cell is ink through and through): a hairline face's strokes still get their
dots, as a printer's own font has no hairlines."""
DOT_STRENGTH = (0.7, 1.0)
"""How dark each dot prints, of the line's ink (a worn ribbon, an uneven thermal head)."""


def dot_matrix(image: Image.Image, rng: np.random.Generator, font_size: int,
               double_width: bool = False) -> Image.Image:
    """The line as a dot-matrix or thermal-dot receipt printer prints it: its glyphs sampled on a grid of dot cells
    (`DOT_PITCH` of `font_size` apart, columns `DOT_COLUMN_PITCH` of that), a dot printed where the ink covers
    enough of its cell (`DOT_COVERAGE`) and is solid somewhere in it, each a round dot of `DOT_RADIUS` pitches (at
    least `DOT_MIN_RADIUS` pixels), as dark as `DOT_STRENGTH` of the ink; drawn four times as fine and reduced, so
    that the dots' edges are grey as a scan sees them. For a line as :func:`.synthetic_lines.render_line` draws it,
    before its scan: ink on plain paper, mostly paper. With `double_width`, as a printer's double-width mode prints a
    receipt's totals: the line drawn twice as wide, its dot columns twice as far apart, each dot still round."""
    if double_width:
        image = image.resize((2 * image.width, image.height), Image.Resampling.BICUBIC)
    values = np.asarray(image, dtype=np.float32)
    paper, ink = float(np.median(values)), float(values.min())  # a drawn line: mostly paper, its ink the darkest
    if paper - ink < 16:  # nothing printed to sample
        return image
    height, width = values.shape
    row_pitch = font_size * rng.uniform(*DOT_PITCH)
    rows = min(height, max(1, round(height / row_pitch)))
    column_pitch = row_pitch * rng.uniform(*DOT_COLUMN_PITCH) * (2 if double_width else 1)
    columns = min(width, max(1, round(width / column_pitch)))
    darkness = np.clip((paper - values) / (paper - ink), 0, 1)
    # Darkness as a share of the strokes' own (a thin face's anti-aliased strokes never reach its darkest pixel's).
    darkness = np.clip(darkness / np.percentile(darkness[darkness > 0.1], 90), 0, 1)
    row_starts = np.searchsorted(np.arange(height) * rows // height, np.arange(rows))
    column_starts = np.searchsorted(np.arange(width) * columns // width, np.arange(columns))
    cell_sums = np.add.reduceat(np.add.reduceat(darkness, row_starts, axis=0), column_starts, axis=1)
    cell_sizes = np.outer(np.diff(np.append(row_starts, height)), np.diff(np.append(column_starts, width)))
    cell_darkest = np.maximum.reduceat(np.maximum.reduceat(darkness, row_starts, axis=0), column_starts, axis=1)
    coverage, inked = cell_sums / cell_sizes, cell_darkest > 0.5
    if not inked.any():
        return image
    # Coverage as a share of the most covered cells' (a hairline face covers a fifth of any cell it runs through).
    fullest = float(np.percentile(coverage[inked], 90))
    printed = np.argwhere(inked & (coverage > rng.uniform(*DOT_COVERAGE) * fullest))
    fine, radius = 4, max(row_pitch * rng.uniform(*DOT_RADIUS), DOT_MIN_RADIUS)
    dots = Image.new("L", (width * fine, height * fine), 0)
    draw = ImageDraw.Draw(dots)
    cell_height, cell_width = height / rows, width / columns
    for (row, column), strength in zip(printed, rng.uniform(*DOT_STRENGTH, size=len(printed))):
        x, y = (column + 0.5) * cell_width * fine, (row + 0.5) * cell_height * fine
        reach = radius * fine
        draw.ellipse([x - reach, y - reach, x + reach, y + reach], fill=int(255 * strength))
    printed_darkness = np.asarray(dots.resize((width, height), Image.Resampling.BOX), dtype=np.float32) / 255
    return Image.fromarray(np.clip(paper - printed_darkness * (paper - ink), 0, 255).astype(np.uint8))


SCAN_EFFECTS = {
    "low_resolution": low_resolution,
    "ink_spread": ink_spread,
    "binarize": binarize,
    "broken_glyphs": broken_glyphs,
    "paper_texture": paper_texture,
    "uneven_light": uneven_light,
    "rule": rule,
    "neighbour_lines": neighbour_lines,
}


def scan_effects(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """A random subset of the scanner effects (`SCAN_EFFECT_PROBABILITIES`), then, for
    `INVERTED_PROBABILITY` of lines, light text on a dark background."""
    for name, effect in SCAN_EFFECTS.items():
        if rng.random() < SCAN_EFFECT_PROBABILITIES[name]:
            image = effect(image, rng)
    if rng.random() < INVERTED_PROBABILITY:
        image = Image.fromarray(255 - np.asarray(image))
    return image


def _background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A float RGB background (height, width, 3) in [0, 255]: a colour with smooth texture, a two-colour
    gradient, or stripes and blocks of colour, often with fine grain."""
    kind = int(rng.integers(3))
    base = rng.uniform(0, 255, size=3)
    if kind == 0:
        texture = _noise_field(rng, height, width, int(rng.integers(3, 30)))[..., None]
        background = base + (texture - 0.5) * rng.uniform(20, 140)
    elif kind == 1:
        other = rng.uniform(0, 255, size=3)
        angle = rng.uniform(0, 2 * np.pi)
        ys, xs = np.mgrid[0:height, 0:width]
        ramp = np.cos(angle) * xs / max(width, 1) + np.sin(angle) * ys / max(height, 1)
        ramp = ((ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6))[..., None]
        background = base * (1 - ramp) + other * ramp
    else:
        background = np.broadcast_to(base, (height, width, 3)).copy()
        for _ in range(int(rng.integers(1, 5))):
            x0, x1 = sorted(rng.integers(0, width + 1, size=2).tolist())
            y0, y1 = sorted(rng.integers(0, height + 1, size=2).tolist())
            background[y0:y1, x0:x1] = rng.uniform(0, 255, size=3)
    if rng.random() < 0.5:
        background = background + rng.normal(0, rng.uniform(2, 12), size=(height, width, 1))
    return np.clip(background, 0, 255)


def _contrasting_colour(rng: np.random.Generator, background: np.ndarray) -> np.ndarray:
    """A text colour whose luminance differs from the background's mean by at least 70 grey levels."""
    luminance = float((background.reshape(-1, 3) @ np.array([0.299, 0.587, 0.114])).mean())
    target = rng.uniform(0, max(0.0, luminance - 70)) if luminance > 127 else rng.uniform(min(255.0, luminance + 70), 255)
    colour = rng.uniform(0, 255, size=3)
    shift = target - float(colour @ np.array([0.299, 0.587, 0.114]))
    return np.clip(colour + shift, 0, 255)


def scene_composite(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """The text of a dark-on-light line, put on a scene-like background in a contrasting colour (light on
    dark about half of the time), sometimes with an outline or a drop shadow; returned in luminance ("L").
    """
    values = np.asarray(image, dtype=np.float32)
    ink, paper = np.percentile(values, 1), np.percentile(values, 99)
    alpha = np.clip((paper - values) / max(paper - ink, 1.0), 0, 1)
    height, width = alpha.shape
    background = _background(rng, height, width)
    colour = _contrasting_colour(rng, background)
    canvas = background
    decoration = rng.random()
    if decoration < 0.25:  # drop shadow
        shift = max(1, round(height * rng.uniform(0.03, 0.08)))
        shadow = np.zeros_like(alpha)
        shadow[shift:, shift:] = alpha[:-shift, :-shift]
        shadow_image = Image.fromarray((shadow * 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(shift / 2))
        shadow = np.asarray(shadow_image, dtype=np.float32)[..., None] / 255.0 * rng.uniform(0.4, 0.9)
        canvas = canvas * (1 - shadow) + (255 - colour) * shadow
    elif decoration < 0.4:  # outline
        size = 3 if height < 60 else 5
        outline = Image.fromarray((alpha * 255).astype(np.uint8)).filter(ImageFilter.MaxFilter(size))
        outline = np.asarray(outline, dtype=np.float32)[..., None] / 255.0
        canvas = canvas * (1 - outline) + (255 - colour) * outline
    canvas = canvas * (1 - alpha[..., None]) + colour * alpha[..., None]
    return Image.fromarray(np.clip(canvas, 0, 255).astype(np.uint8), "RGB").convert("L")
