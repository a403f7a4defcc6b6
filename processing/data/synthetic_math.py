"""Synthetic formulas: random expressions of a small LaTeX grammar rendered with matplotlib's mathtext.

Each sample is a function of ``(seed, index)`` alone: its random generator is
``numpy.random.default_rng([seed, index])``, which draws the expression, the mathtext font set, the
resolution and the margins. So the same arguments give byte-identical images whatever ``num_proc``
is. Splits are made with different seeds (see :func:`textrec.processing.data.loading.split_seed`).

Grammar: an expression is terms joined by binary operators, optionally two expressions joined by a
relation; a term is a letter, a number or a Greek letter, possibly with a subscript and/or
superscript (of atoms), or a fraction, a square root, a bracketed expression (``( )``, ``[ ]``, ``\\{ \\}``,
``| |``), a sum or integral with limits, a limit, or a function of an argument. Every token is in the
CROHME dictionary, and labels are the space-separated tokens (the CROHME caption form).

Rendering: mathtext rasterises the formula as ink coverage, which is the black-on-white rendering
inverted: white strokes on black, as CROHME images are; a random black margin surrounds it. The font
set is drawn from matplotlib's own (no system fonts needed).
"""

from __future__ import annotations

import io
import re

import datasets
import matplotlib
import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.mathtext import MathTextParser
from PIL import Image

from .generation import CacheDir, cached_dataset, generate_indexed


MATH_FONTSETS = ("dejavusans", "dejavuserif", "cm", "stix", "stixsans")
DPI_RANGE = (80, 140)
"""Resolution range of the rendering at 12 points: roughly 15 to 25 pixels per line of symbols."""
LOW_DPI_RANGE = (36, 79)
"""Resolution range of the low-resolution share (``low_resolution_share``): down to 0.45 times ``DPI_RANGE``'s
lower end, glyphs of 5-9 pixels, which the image processor's glyph normalisation enlarges, blurred, as it enlarges
a formula a user typeset small."""
MARGIN_RANGE = (2, 10)
"""Black margin on each side, in pixels."""

LETTERS = tuple("abcdefghijklmnopqrstuvwxyz") + tuple("ABCEFGHILMNPRSTVXY")
DIGITS = tuple("0123456789")
GREEK = ("\\alpha", "\\beta", "\\gamma", "\\lambda", "\\mu", "\\phi", "\\pi", "\\sigma", "\\theta", "\\Delta", "\\Pi")
OPERATORS = ("+", "-", "+", "-", "\\times", "\\div", "\\cdot", "\\pm", "/")
RELATIONS = ("=", "=", "=", "<", ">", "\\leq", "\\geq", "\\neq")
FUNCTIONS = ("\\sin", "\\cos", "\\tan", "\\log")
BRACKETS = (("(", ")"), ("(", ")"), ("[", "]"), ("\\{", "\\}"), ("|", "|"))

FEATURES = datasets.Features(
    {"image": datasets.Image(), "text": datasets.Value("string"), "font": datasets.Value("string")}
)


def _atom(rng: np.random.Generator) -> list[str]:
    kind = rng.random()
    if kind < 0.55:
        return [LETTERS[rng.integers(len(LETTERS))]]
    if kind < 0.85:
        return [DIGITS[rng.integers(len(DIGITS))] for _ in range(int(rng.integers(1, 3)))]
    return [GREEK[rng.integers(len(GREEK))]]


def _group(tokens: list[str]) -> list[str]:
    return ["{", *tokens, "}"]


def _term(rng: np.random.Generator, depth: int) -> list[str]:
    """One term; `depth` bounds the nesting of fractions, roots, brackets and scripts."""
    kind = rng.random() if depth > 0 else 0.0
    if kind < 0.45:
        atom = _atom(rng)
        script = rng.random() if depth > 0 else 1.0
        # Scripts hold atoms only: a fraction in an exponent would be a few pixels high.
        if script < 0.2:
            return [*atom, "^", *_group(_expression(rng, 0, max_terms=2))]
        if script < 0.32:
            return [*atom, "_", *_group(_expression(rng, 0, max_terms=1))]
        if script < 0.38:
            return [*atom, "_", *_group(_atom(rng)), "^", *_group(_atom(rng))]
        return atom
    if kind < 0.6:
        return ["\\frac", *_group(_expression(rng, depth - 1)), *_group(_expression(rng, depth - 1))]
    if kind < 0.7:
        return ["\\sqrt", *_group(_expression(rng, depth - 1))]
    if kind < 0.82:
        opening, closing = BRACKETS[rng.integers(len(BRACKETS))]
        return [opening, *_expression(rng, depth - 1), closing]
    if kind < 0.88:
        index = LETTERS[rng.integers(8, 14)]  # i .. n
        return ["\\sum", "_", *_group([index, "=", "1"]), "^", *_group(["n"]), *_term(rng, depth - 1)]
    if kind < 0.92:
        return ["\\int", "_", *_group(_atom(rng)), "^", *_group(_atom(rng)), *_term(rng, depth - 1), "d", "x"]
    if kind < 0.95:
        target = ["\\infty"] if rng.random() < 0.5 else _atom(rng)
        return ["\\lim", "_", *_group(["x", "\\rightarrow", *target]), *_term(rng, depth - 1)]
    function = FUNCTIONS[rng.integers(len(FUNCTIONS))]
    return [function, "(", *_expression(rng, depth - 1, max_terms=2), ")"]


def _expression(rng: np.random.Generator, depth: int, max_terms: int = 3) -> list[str]:
    tokens = _term(rng, depth)
    for _ in range(int(rng.integers(0, max_terms))):
        tokens += [OPERATORS[rng.integers(len(OPERATORS))], *_term(rng, depth)]
    return tokens


def sample_formula(rng: np.random.Generator, max_depth: int = 3, max_tokens: int = 48) -> list[str]:
    """The tokens of one random formula of at most `max_tokens` tokens (longer draws are redrawn)."""
    while True:
        tokens = _expression(rng, int(rng.integers(1, max_depth + 1)))
        if rng.random() < 0.4:
            tokens += [RELATIONS[rng.integers(len(RELATIONS))], *_expression(rng, int(rng.integers(0, max_depth)))]
        if len(tokens) <= max_tokens:
            return tokens


_PARSER = MathTextParser("agg")


def compact_latex(tokens: list[str]) -> str:
    """The tokens as mathtext reads them: without spaces (mathtext drops a script written `x ^ { 2 }`),
    except after a control word followed by a letter (`\\alpha x`)."""
    text = ""
    for token in tokens:
        if text and re.search(r"\\[a-zA-Z]+$", text) and token[0].isalpha():
            text += " "
        text += token
    return text


def render_formula(tokens: list[str], fontset: str, dpi: int, margin: int) -> Image.Image:
    """Rasterise a formula with mathtext: white strokes on black, mode ``L``, `margin` pixels around."""
    prop = FontProperties(size=12, math_fontfamily=fontset)
    raster = _PARSER.parse(f"${compact_latex(tokens)}$", dpi=dpi, prop=prop)
    ink = np.asarray(raster.image, dtype=np.uint8)
    rows, columns = np.nonzero(ink)
    if rows.size:
        ink = ink[rows.min() : rows.max() + 1, columns.min() : columns.max() + 1]
    return Image.fromarray(np.pad(ink, margin))


def _render_example(
    example: dict, *, seed: int, max_depth: int, max_tokens: int, low_resolution_share: float
) -> dict:
    """Render the sample numbered ``example["index"]``; a ``datasets.map`` function."""
    rng = np.random.default_rng([seed, example["index"]])
    tokens = sample_formula(rng, max_depth, max_tokens)
    fontset = MATH_FONTSETS[rng.integers(len(MATH_FONTSETS))]
    # No draw without a low-resolution share, so that those samples stay what they were.
    low = low_resolution_share > 0 and rng.random() < low_resolution_share
    dpi_range = LOW_DPI_RANGE if low else DPI_RANGE
    dpi = int(rng.integers(dpi_range[0], dpi_range[1] + 1))
    margin = int(rng.integers(MARGIN_RANGE[0], MARGIN_RANGE[1] + 1))
    buffer = io.BytesIO()
    render_formula(tokens, fontset, dpi, margin).save(buffer, format="PNG")
    return {"image": {"bytes": buffer.getvalue(), "path": None}, "text": " ".join(tokens), "font": fontset}


def make_synthetic_formulas(
    num_samples: int,
    *,
    seed: int = 0,
    max_depth: int = 3,
    max_tokens: int = 48,
    low_resolution_share: float = 0.0,
    cache_dir: CacheDir = None,
    num_proc: int | None = None,
) -> datasets.Dataset:
    """Generate (or load from the cache) a dataset of rendered random formulas.

    Args:
        num_samples: Number of formulas.
        seed: Sample ``i`` is drawn from ``numpy.random.default_rng([seed, i])``.
        max_depth: Deepest nesting of fractions, roots, brackets and scripts.
        max_tokens: Longest formula in LaTeX tokens.
        low_resolution_share: Share of the formulas rendered at ``LOW_DPI_RANGE`` instead of ``DPI_RANGE``
            (typeset at less than half to one times the usual size).
        cache_dir: Cache root (``None``: ``$TEXTREC_CACHE`` or ``~/.cache/textrec/datasets``;
            ``False``: no caching). The entry's key hashes the arguments, the code that draws them and
            the matplotlib version.
        num_proc: Worker processes for rendering (does not change the result).

    Returns:
        A dataset with columns ``image`` (``datasets.Image``, white on black), ``text`` (space-separated
        LaTeX tokens) and ``font`` (the mathtext font set).
    """
    if not 0.0 <= low_resolution_share <= 1.0:
        raise ValueError(f"low_resolution_share must be in [0, 1], got {low_resolution_share}")
    arguments = {
        "num_samples": num_samples,
        "seed": seed,
        "max_depth": max_depth,
        "max_tokens": max_tokens,
        "low_resolution_share": low_resolution_share,
        "matplotlib": matplotlib.__version__,
    }

    def build(scratch):
        fn_kwargs = {"seed": seed, "max_depth": max_depth, "max_tokens": max_tokens,
                     "low_resolution_share": low_resolution_share}
        desc = f"Rendering {num_samples} synthetic formulas"
        return generate_indexed(num_samples, _render_example, fn_kwargs, FEATURES, scratch, num_proc=num_proc, desc=desc)

    return cached_dataset("synthetic-math", arguments, build, cache_dir)
