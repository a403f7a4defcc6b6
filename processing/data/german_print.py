"""German text for the data engine, written as 19th-century German book print sets it.

The text is Debian's German fortunes (``fortunes-de``, in ``/usr/share/games/fortunes/de``): modern German with its
umlauts and ß. Print of the 1800s wrote the same words with a long s (ſ) wherever an s does not end a word or
syllable, „low-high“ or »French« quotation marks, long dashes, and one capital for I and J; :func:`historic_spelling`
writes a line so, for the lines the engine draws in Fraktur (:mod:`.fraktur`). Lines drawn in roman type keep the
modern spelling.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

import numpy as np

from ..old_umlauts import COMBINING_SMALL_E, DOTTED_UMLAUTS
from .fonts import LONG_S, PRINTABLE_ASCII
from .text_sampling import FORTUNES_DIR, fortune_files, fortune_tokens

GERMAN_FORTUNES_DIR = FORTUNES_DIR / "de"
GERMAN_LETTERS = "ÄÖÜäöüß"
HISTORIC_PRINT_MARKS = LONG_S + "„“—»«"
"""The long s, German and French quotation marks and the em dash, as 19th-century print sets them."""
GERMAN_PRINT_CHARACTERS = GERMAN_LETTERS + HISTORIC_PRINT_MARKS
"""What German print adds to printable ASCII: the characters a vocabulary reading it needs besides."""
GUILLEMETS_SHARE = 0.25
"""Share of historic lines quoting with »guillemets« instead of „German quotes“."""
COMBINING_DIAERESIS = "\u0308"
OLD_UMLAUTS = "".join(letter + COMBINING_SMALL_E for letter in DOTTED_UMLAUTS.values())
"""The old umlauts ``aͤ oͤ uͤ``: three characters of a vocabulary (one token each, as ``ä`` is: a combining mark joins its
letter in :func:`textrec.processing.tokenization_char.characters_of`), so that a CTC head gives the letter and its small e
one frame. No face draws the small e (:data:`textrec.processing.old_umlauts.COMBINING_SMALL_E`): the engine does
(:func:`.fraktur.draw_joined`). Labels of old umlauts hold it beside :data:`GERMAN_PRINT_CHARACTERS`, so a vocabulary
reading them adds these."""
DOUBLE_OBLIQUE_HYPHEN = "\u2e17"
"""Fraktur's double hyphen as print casts it, ``⸗``: two short strokes rising to the right, drawn by the engine where the
face has no glyph for it (:func:`.fraktur.draw_joined`)."""
SHORT_DOUBLE_HYPHEN = "\ue001"
"""Stand-in, in the text a line draws and never in a label, for the double hyphen as print of the 1780s casts it: two
short heavy strokes, steep and close (:func:`.fraktur.draw_short_double_hyphen`); labelled :data:`DOUBLE_HYPHEN_LABEL`."""
HAIRLINE_LOW_QUOTE = "\ue000"
"""Stand-in, in the text a line draws and never in a label, for the opening „ as Fraktur print of about 1780-1840 sets
it: two oblique hairlines on the baseline, where the engine's faces draw two commas
(:func:`.fraktur.draw_hairline_low_quote`); labelled „."""
DOUBLE_HYPHEN_LABEL = "—"
"""How the Deutsches Textarchiv's transcriptions (OCR-D's line ground truth) write Fraktur's double hyphen ``⸗``, which
breaks a word at the end of a line; the faces draw it as their hyphen or with two strokes (:func:`as_printed`)."""
FRAKTUR_CAPITAL_I = "J"
"""How the Deutsches Textarchiv's transcriptions write Fraktur's one capital for I and J (``Jch``, ``Jn``): no capital I
is in the historic print's development labels, 23 J are."""
DOUBLE_HYPHEN_DRAWN_DOUBLE_SHARE = 0.5
"""Share of line-end breaks drawn as print's double oblique hyphen (:data:`DOUBLE_OBLIQUE_HYPHEN`), the others with
the face's hyphen (double and oblique in UnifrakturMaguntia and Blankenburg, single in the others)."""
LINE_END_HYPHEN_SHARE = 0.15
"""Share of historic lines that end in a word broken with the double hyphen (about one in seven of a book page's)."""

_WORD_CHARACTERS = frozenset(PRINTABLE_ASCII.replace(" ", "") + GERMAN_LETTERS)


@functools.cache
def load_german_corpus() -> tuple[str, ...]:
    """The German fortunes as a stream of tokens (words with their punctuation), in reading order; empty where
    ``fortunes-de`` is not installed."""
    return fortune_tokens(fortune_files(GERMAN_FORTUNES_DIR), _WORD_CHARACTERS)


@functools.cache
def german_corpus_fingerprint() -> str:
    """Short hash of :func:`load_german_corpus`, to key caches of data built from it."""
    return hashlib.sha256("\n".join(load_german_corpus()).encode()).hexdigest()[:16]


def sample_german_text(rng: np.random.Generator, min_chars: int, max_chars: int) -> str:
    """A run of consecutive corpus words from a random place, as long as fits a length drawn in
    ``[min_chars, max_chars]`` (a first word longer than that is cut)."""
    words = load_german_corpus()
    if not words:
        raise ValueError(f"No German text in {GERMAN_FORTUNES_DIR}: install Debian's fortunes-de "
                         "(bash scripts/setup.sh --release_fonts)")
    target = int(rng.integers(min_chars, max_chars + 1))
    position = int(rng.integers(len(words)))
    line = words[position][:target]
    while True:
        position = (position + 1) % len(words)
        candidate = f"{line} {words[position]}"
        if len(candidate) > target:
            return line
        line = candidate


def long_s(text: str) -> str:
    """``text`` with the long s of Fraktur print: an s followed by a letter becomes ſ; one ending a word stays
    round (``Sonnenschein`` -> ``Sonnenſchein``, ``das`` -> ``das``). Compound and syllable ends, where print kept the
    round s inside a word (``Ausgang``), are not known to the rule."""
    return "".join(LONG_S if character == "s" and following.isalpha() else character
                   for character, following in zip(text, text[1:] + " "))


def old_umlauts(text: str) -> str:
    """``text`` with its lower-case umlauts as the early 1800s printed them, the letter with a small e above
    (:data:`COMBINING_SMALL_E`: ``über`` -> ``uͤber``); capitals stay as they are. 44 of the 141 lower-case umlauts of
    the historic print's development labels are so. The engine prints them only where asked (``synthetic-lines``'
    ``old_umlaut_share``): a CTC line reader at 32 pixels did not learn to tell the small e from the diaeresis (the
    seventh ``crnn-lines``, trained 2,200 steps on lines 30% of whose German Fraktur was printed so, its vocabulary given
    the mark, never wrote it, on the engine's lines or the real ones; nor with :data:`OLD_UMLAUTS` as three tokens of
    its vocabulary, 40% or 50% of the German Fraktur lines printed so, 2,200 steps each)."""
    return text.translate({ord(umlaut): letter + COMBINING_SMALL_E for umlaut, letter in DOTTED_UMLAUTS.items()})


def historic_spelling(text: str, rng: np.random.Generator, old_umlaut_share: float = 0.0) -> str:
    """``text`` as 19th-century German print sets it: :func:`long_s`, straight double quotes as „…“ (or, in a
    share of lines, »…«), a dash between spaces as an em dash, the capital I as Fraktur's I/J
    (:data:`FRAKTUR_CAPITAL_I`) and, in ``old_umlaut_share`` of the lines (drawn only when asked), :func:`old_umlauts`."""
    opening, closing = ("»", "«") if rng.random() < GUILLEMETS_SHARE else ("„", "“")
    quotes = iter([opening, closing] * (text.count('"') // 2 + 1))
    text = re.sub('"', lambda match: next(quotes), text)
    text = re.sub(r" --?(?= |$)", " —", text)
    text = long_s(text).replace("I", FRAKTUR_CAPITAL_I)
    return old_umlauts(text) if old_umlaut_share and rng.random() < old_umlaut_share else text


def break_last_word(text: str, rng: np.random.Generator) -> str:
    """``text`` with its last word broken at the line's end, as a book page hyphenates: cut after one of its letters
    (two kept and two dropped at least) and ended with the double hyphen (:data:`DOUBLE_HYPHEN_LABEL`); a line
    ending otherwise than in a word of four letters or more is returned as it is."""
    match = re.search(r"[^\W\d_]{4,}$", text)
    if match is None:
        return text
    cut = match.start() + int(rng.integers(2, len(match[0]) - 1))
    return text[:cut] + DOUBLE_HYPHEN_LABEL


def as_printed(text: str, double: bool = False, early_marks: bool = False) -> str:
    """What Fraktur print draws for the label ``text``: a double hyphen ending the line after a letter as the face's
    hyphen, or as print's double oblique hyphen (``double``: :data:`DOUBLE_OBLIQUE_HYPHEN`); an em dash after a space
    stays one. With ``early_marks``, as print of about 1780-1840 draws its marks: the double hyphen short and heavy
    (:data:`SHORT_DOUBLE_HYPHEN`) and the opening „ as two hairlines (:data:`HAIRLINE_LOW_QUOTE`)."""
    if early_marks:
        text, hyphen = text.replace("„", HAIRLINE_LOW_QUOTE), SHORT_DOUBLE_HYPHEN
    else:
        hyphen = DOUBLE_OBLIQUE_HYPHEN if double else "-"
    return re.sub(rf"(?<=[^\W\d_]){DOUBLE_HYPHEN_LABEL}$", hyphen, text)


def decomposed_umlauts(text: str) -> str:
    """``text`` with its umlauts as base letter and combining diaeresis, for fonts (the Mathematical Fraktur
    alphabets) that have the letter and the mark but no precomposed umlaut."""
    return "".join(unicodedata.normalize("NFD", character) if character in "ÄÖÜäöü" else character
                   for character in text)
