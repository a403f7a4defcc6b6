"""Discovery and classification of the TrueType/OpenType fonts installed on the system.

The synthetic text-line generator draws its fonts from here. Fonts are found by walking the
usual font folders (no ``fc-list`` needed), classified as ``"print"`` or ``"handwriting"`` by
family name, and kept only when their character map covers every printable ASCII character.
Fonts that map ASCII code points to pictures rather than letters (symbol, math, emoji,
dingbat, keyboard-key, small-caps and initials fonts) are left out, because an image rendered
with them would not show the text of its label.

Extra folders can be added with the environment variable ``TEXTREC_FONT_DIRS``
(``os.pathsep``-separated); they are searched before the system folders.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fontTools.merge import Merger
from fontTools.ttLib import TTFont, TTLibError

logger = logging.getLogger(__name__)

FONT_STYLES = ("print", "handwriting")
"""The styles a font is classified as."""

PRINTABLE_ASCII = "".join(chr(code) for code in range(32, 127))
"""Space plus the 94 visible ASCII characters: the default charset of the synthetic data."""

SYSTEM_FONT_DIRS = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "/usr/share/texmf/fonts/opentype",
    "~/.local/share/fonts",
    "~/.fonts",
    "/Library/Fonts",
    "/System/Library/Fonts",
    "~/Library/Fonts",
    "C:/Windows/Fonts",
)
"""Folders walked for font files (missing ones are skipped)."""

FONT_SUFFIXES = (".ttf", ".otf", ".ttc")

HANDWRITING_FAMILIES = (
    "dkg",
    "handwriting",
    "breip",
    "dancing script",
    "kristi",
    "comic neue",
    "humor sans",
    "domestic manners",
)
"""Lower-case substrings of family names that mark a handwriting-style font."""

BLACKLETTER_FAMILIES = ("blankenburg", "fraktur", "gotisch")
"""Lower-case substrings of family names of blackletter fonts: neither print nor handwriting style (they would
change what every print line looks like); the data engine draws them for its Fraktur lines
(:mod:`.fraktur`)."""

CAPS_ONLY_FAMILIES = ("humor sans", "bebas neue", "titling")
"""Lower-case substrings of family names of fonts that draw lower-case letters as capitals."""

_EXCLUDED_FONTS = re.compile(
    r"symbol|math|emoji|dingbat|d050000l|wingding|webding|ornament|keyboard|initials"
    r"|small ?caps|\bsc\b|all sc|icons?\b|awesome|penguin attack|junkyard|abogado",
    re.IGNORECASE,
)
"""Family or file names of fonts whose glyphs for ASCII code points are not letters."""


@dataclass(frozen=True)
class FontInfo:
    """One usable font file.

    Attributes:
        path: The font file.
        family: Family name from the font's ``name`` table.
        subfamily: Subfamily (weight/slant) name from the ``name`` table.
        style: ``"print"``, ``"handwriting"`` or ``"blackletter"``.
        codepoints: Unicode code points the font's character map covers.
        caps_only: Whether lower-case letters are drawn as capitals (see
            :data:`CAPS_ONLY_FAMILIES`); text rendered with it must be upper-cased to match.
    """

    path: Path
    family: str
    subfamily: str
    style: str
    codepoints: frozenset[int]
    caps_only: bool


def font_search_dirs() -> list[Path]:
    """Return the existing folders searched for fonts: ``TEXTREC_FONT_DIRS`` first, then the system ones."""
    extra = [entry for entry in os.environ.get("TEXTREC_FONT_DIRS", "").split(os.pathsep) if entry]
    folders = [Path(entry).expanduser() for entry in (*extra, *SYSTEM_FONT_DIRS)]
    return [folder for folder in folders if folder.is_dir()]


def classify_family(family: str) -> str:
    """``"handwriting"`` for the families of :data:`HANDWRITING_FAMILIES`, ``"blackletter"`` for those of
    :data:`BLACKLETTER_FAMILIES`, else ``"print"``."""
    lowered = family.lower()
    if any(name in lowered for name in BLACKLETTER_FAMILIES):
        return "blackletter"
    return "handwriting" if any(name in lowered for name in HANDWRITING_FAMILIES) else "print"


def _read_font(path: Path) -> FontInfo | None:
    """Read one font file; ``None`` when it cannot be parsed or is excluded."""
    try:
        font = TTFont(path, lazy=True, fontNumber=0)
        cmap = font.getBestCmap() or {}
        family = font["name"].getBestFamilyName() or path.stem
        subfamily = font["name"].getBestSubFamilyName() or ""
    except (TTLibError, KeyError, OSError, AssertionError, ValueError) as error:
        logger.debug("Skipping unreadable font %s: %s", path, error)
        return None
    if _EXCLUDED_FONTS.search(family) or _EXCLUDED_FONTS.search(path.stem):
        return None
    caps_only = any(name in family.lower() for name in CAPS_ONLY_FAMILIES)
    return FontInfo(path, family, subfamily, classify_family(family), frozenset(cmap), caps_only)


@functools.cache
def discover_fonts() -> tuple[FontInfo, ...]:
    """Find every usable font covering printable ASCII, one per (family, subfamily).

    The result is cached for the life of the process. Files are visited in sorted path order,
    so the first copy of a font installed twice (e.g. two Liberation packages) wins and the
    listing is the same on every run.
    """
    required = {ord(char) for char in PRINTABLE_ASCII}
    seen: set[tuple[str, str]] = set()
    fonts = []
    for folder in font_search_dirs():
        paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in FONT_SUFFIXES and p.is_file())
        for path in paths:
            info = _read_font(path)
            if info is None or not required <= info.codepoints:
                continue
            key = (info.family.lower(), info.subfamily.lower())
            if key not in seen:
                seen.add(key)
                fonts.append(info)
    return tuple(fonts)


def list_fonts(style: str, charset: str | None = None, *, caps_only: bool = False) -> list[Path]:
    """Return the font files of one style, sorted, optionally only those covering ``charset``.

    Args:
        style: ``"print"`` or ``"handwriting"``.
        charset: Characters every returned font must have a glyph for; ``None`` means
            printable ASCII, which all discovered fonts cover.
        caps_only: Also return fonts that draw lower-case letters as capitals (see
            :func:`is_caps_only`); whoever renders with them must upper-case the text.

    Returns:
        The paths, possibly empty (for instance when no handwriting font is installed).
    """
    if style not in FONT_STYLES:
        raise ValueError(f"style must be one of {FONT_STYLES}, got {style!r}")
    needed = {ord(char) for char in charset or ""}
    return sorted(
        info.path
        for info in discover_fonts()
        if info.style == style and needed <= info.codepoints and (caps_only or not info.caps_only)
    )


def is_caps_only(path: str | os.PathLike[str]) -> bool:
    """Whether the discovered font at ``path`` draws lower-case letters as capitals."""
    return any(info.caps_only and info.path == Path(path) for info in discover_fonts())


def fonts_fingerprint(paths: list[Path]) -> str:
    """Hash of file names and sizes of ``paths``, to key caches of data rendered with them."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{path.name}:{path.stat().st_size};".encode())
    return digest.hexdigest()[:16]


LONG_S = "ſ"
"""The long s, which German print before 1900 sets at the start and inside of syllables (round s at their end)."""
LONG_S_GLYPH_NAME = "longs"


def _glyph_outline(glyph_set, name: str):
    import pathops

    outline = pathops.Path()
    glyph_set[name].draw(outline.getPen(glyphSet=glyph_set))
    return outline


def _rectangle(x_min: float, y_min: float, x_max: float, y_max: float):
    import pathops

    rectangle = pathops.Path()
    rectangle.moveTo(x_min, y_min)
    rectangle.lineTo(x_max, y_min)
    rectangle.lineTo(x_max, y_max)
    rectangle.lineTo(x_min, y_max)
    rectangle.close()
    return rectangle


def _ink_bounds(outline, y_min: float, y_max: float, x_min: float = -1e6) -> tuple[float, ...] | None:
    """The bounds of the outline's ink between heights ``y_min`` and ``y_max`` right of ``x_min``; None if none."""
    import pathops

    bounds = pathops.op(outline, _rectangle(x_min, y_min, 1e6, y_max), pathops.PathOp.INTERSECTION).bounds
    return None if bounds == (0.0, 0.0, 0.0, 0.0) else bounds


def add_long_s(font: TTFont) -> bool:
    """Give a TrueType font without the long s (``ſ``, U+017F) one made from its ``f``: the part of the f's bar right
    of the stem cut away, its left nub and its hook kept, as Fraktur print casts the long s.

    Google's UnifrakturMaguntia and UnifrakturCook (as Fontsource packages them) have no long s, which German print
    before 1900 sets in most words with an s; without one the data engine sets their s round, and a reader trained on
    it reads the print's long s as ``f``. The stem is measured low in the x-height (below the bar); the bar is the
    first run of ink right of it going up from a third of the x-height.

    Returns:
        Whether a long s was added (not where the font has one already, lacks ``f`` or ``x``, or has no ``glyf``
        outlines).
    """
    import pathops
    from fontTools.pens.cu2quPen import Cu2QuPen
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    character_map = font.getBestCmap() or {}
    if ord(LONG_S) in character_map or "glyf" not in font or not {ord("f"), ord("x")} <= set(character_map):
        return False
    glyph_set = font.getGlyphSet()
    f_name = character_map[ord("f")]
    f_outline = _glyph_outline(glyph_set, f_name)
    x_height = _glyph_outline(glyph_set, character_map[ord("x")]).bounds[3]
    step = x_height / 40
    stem = _ink_bounds(f_outline, 0.15 * x_height, 0.25 * x_height)
    if stem is None:
        return False
    right_of_stem = stem[2] + step
    bar_bottom = 0.3 * x_height
    while bar_bottom < 2 * x_height and not _ink_bounds(f_outline, bar_bottom, bar_bottom + step, right_of_stem):
        bar_bottom += step
    bar_top = bar_bottom
    while bar_top < 2 * x_height and _ink_bounds(f_outline, bar_top, bar_top + step, right_of_stem):
        bar_top += step
    if bar_top == bar_bottom:  # no bar right of the stem: the f is a long s already
        return False
    long_s = pathops.op(f_outline, _rectangle(right_of_stem, bar_bottom - step, f_outline.bounds[2] + x_height, bar_top),
                        pathops.PathOp.DIFFERENCE)
    pen = TTGlyphPen(None)
    long_s.draw(Cu2QuPen(pen, max_err=1.0))
    font["glyf"][LONG_S_GLYPH_NAME] = pen.glyph()
    font["hmtx"][LONG_S_GLYPH_NAME] = font["hmtx"][f_name]
    font.setGlyphOrder(font["glyf"].glyphOrder)
    for table in font["cmap"].tables:
        if table.isUnicode():
            table.cmap[ord(LONG_S)] = LONG_S_GLYPH_NAME
    return True


WEB_FONT_SUBSETS = ("latin", "latin-ext")
"""The Unicode-range subsets of a web font package that :func:`merge_web_font_subsets` joins (Latin with its
extension, where letters like the long s ``ſ`` lie)."""


def merge_web_font_subsets(
    package: str | os.PathLike[str], destination: str | os.PathLike[str], weights: tuple[str, ...] | None = None
) -> list[Path]:
    """Join a web font package's subsets back into one TrueType file per weight and style.

    Web font packages (Fontsource's npm packages, as ``scripts/setup.sh --release_fonts`` fetches the Fraktur faces
    that Debian does not package) split each font into files by Unicode range,
    ``files/<name>-<subset>-<weight>-<style>.woff``. The :data:`WEB_FONT_SUBSETS` files of each weight and style are
    merged into ``destination/<name>-<weight>-<style>.ttf``, which the font discovery then reads like any installed font;
    a face without the long s gets one made from its f (:func:`add_long_s`).
    ``weights`` (``("400", "700")``) keeps only those; None keeps every weight.

    Returns:
        The written files, sorted.
    """
    files = Path(package) / "files"
    pattern = re.compile(rf"(?P<name>.+?)-(?P<subset>{'|'.join(map(re.escape, WEB_FONT_SUBSETS))})-(?P<weight>\d+)-"
                         r"(?P<style>[a-z]+)\.woff$")
    groups: dict[str, dict[str, Path]] = {}
    for path in sorted(files.glob("*.woff")):
        match = pattern.fullmatch(path.name)
        if match and (weights is None or match["weight"] in weights):
            key = f"{match['name']}-{match['weight']}-{match['style']}"
            groups.setdefault(key, {})[match["subset"]] = path
    if not groups:
        raise FileNotFoundError(f"no {' or '.join(WEB_FONT_SUBSETS)} .woff files under {files}"
                                + (f" in weights {', '.join(weights)}" if weights else ""))
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    for key, subsets in sorted(groups.items()):
        with tempfile.TemporaryDirectory() as unpacked:
            truetype = []
            for subset in WEB_FONT_SUBSETS:  # Latin first: its glyph names and metrics win
                if subset in subsets:
                    font = TTFont(subsets[subset])
                    font.flavor = None
                    truetype.append(str(Path(unpacked) / f"{subset}.ttf"))
                    font.save(truetype[-1])
            merged = Merger().merge(truetype) if len(truetype) > 1 else TTFont(truetype[0])
            if add_long_s(merged):
                logger.info("%s: no long s; one made from its f", key)
            written.append(destination / f"{key}.ttf")
            merged.save(written[-1])
    return written
