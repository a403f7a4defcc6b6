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
    merged into ``destination/<name>-<weight>-<style>.ttf``, which the font discovery then reads like any installed font.
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
            written.append(destination / f"{key}.ttf")
            merged.save(written[-1])
    return written
