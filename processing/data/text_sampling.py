"""Random text lines for synthetic text-recognition data.

Lines are assembled from "pieces" joined by single spaces, in one of four modes drawn per line:

- ``span``: consecutive words of the text corpus, so punctuation, capitals and quotes sit where
  a writer put them;
- ``words``: corpus words drawn independently (unigram frequencies), with some numbers mixed in;
- ``numbers``: mostly numbers (integers, decimals, dates, prices, percentages, times) with a few
  words, as on forms and receipts;
- ``chars``: groups of characters drawn uniformly from the charset, so that rare symbols
  (``{``, ``~``, ``^``, ...) are seen as often as the charset demands.

The corpus is Debian's ``fortunes`` collection (``/usr/share/games/fortunes``) when installed,
otherwise the word list ``words.txt`` shipped beside this module. Every random decision is
drawn from the ``numpy.random.Generator`` passed in, so a line is a function of the generator
state (and of the corpus, see :func:`corpus_fingerprint`).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .fonts import PRINTABLE_ASCII

logger = logging.getLogger(__name__)

FORTUNES_DIR = Path("/usr/share/games/fortunes")
BUILTIN_WORDS = Path(__file__).with_name("words.txt")

MODES = ("span", "words", "numbers", "chars")
MODE_PROBABILITIES = (0.45, 0.3, 0.15, 0.1)
UPPERCASE_PROBABILITY = 0.05
"""Probability that a ``span`` or ``words`` line is written in capitals."""

_MAX_TOKEN_LENGTH = 24
_FORTUNE_FILES_EXCLUDED = {"ascii-art"}
_REPEATED_CHAR = re.compile(r"(.)\1{3,}")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


PRINTABLE_NON_SPACE = frozenset(chr(code) for code in range(33, 127))


def keep_token(token: str, characters: frozenset[str] = PRINTABLE_NON_SPACE) -> bool:
    """Whether a whitespace-separated corpus token looks like written text (not ASCII art): written with
    `characters`, not too long, no character four times in a row, mostly letters and digits."""
    if len(token) > _MAX_TOKEN_LENGTH or not characters.issuperset(token):
        return False
    if _REPEATED_CHAR.search(token):
        return False
    return len(token) <= 3 or sum(char.isalnum() for char in token) * 2 >= len(token)


def fortune_files(folder: Path) -> list[Path]:
    """The plain-text fortune files of `folder` (not the ``.dat``/``.u8`` indexes, not its sub-folders), sorted."""
    return sorted(path for path in (folder.iterdir() if folder.is_dir() else ())
                  if path.is_file() and not path.suffix and path.name not in _FORTUNE_FILES_EXCLUDED)


def fortune_tokens(files: list[Path], characters: frozenset[str] = PRINTABLE_NON_SPACE) -> tuple[str, ...]:
    """The tokens of fortune `files` that `keep_token` keeps, in reading order."""
    tokens = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="ignore")
        tokens.extend(token for token in text.split() if token != "%" and keep_token(token, characters))
    return tuple(tokens)


@functools.cache
def load_corpus(fortunes_dir: Path = FORTUNES_DIR) -> tuple[str, ...]:
    """Return the corpus as a stream of tokens (words with their punctuation), in reading order.

    Reads the plain-text fortune files of ``fortunes_dir`` (not the ``.dat``/``.u8`` indexes);
    when there are none, logs a warning and falls back to the built-in word list.
    """
    files = fortune_files(fortunes_dir)
    if not files:
        logger.warning("No fortunes corpus in %s; sampling text from the built-in word list", fortunes_dir)
        lines = BUILTIN_WORDS.read_text(encoding="utf-8").splitlines()
        return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))
    return fortune_tokens(files)


@functools.cache
def corpus_fingerprint(fortunes_dir: Path = FORTUNES_DIR) -> str:
    """Short hash of the corpus :func:`load_corpus` returns, to key caches of data built from it."""
    digest = hashlib.sha256("\n".join(load_corpus(fortunes_dir)).encode())
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=16)
def _corpus_for_charset(charset: str) -> tuple[str, ...]:
    """The corpus tokens written entirely with characters of ``charset``."""
    allowed = frozenset(charset)
    return tuple(token for token in load_corpus() if allowed.issuperset(token))


def sample_number(rng: np.random.Generator) -> str:
    """Return a number as people write it: an integer, decimal, date, price, percentage or time."""
    kind = int(rng.integers(6))
    if kind == 0:  # integer, magnitudes log-uniform up to ten million
        value = int(10 ** rng.uniform(0, 7))
        text = f"{value:,}" if value >= 1000 and rng.random() < 0.3 else str(value)
        return f"-{text}" if rng.random() < 0.1 else text
    if kind == 1:  # decimal
        value = rng.uniform(0, 1000) * (-1 if rng.random() < 0.1 else 1)
        return f"{value:.{rng.integers(1, 4)}f}"
    if kind == 2:  # date
        day, month, year = int(rng.integers(1, 29)), int(rng.integers(1, 13)), int(rng.integers(1900, 2040))
        formats = (
            f"{day:02d}/{month:02d}/{year}",
            f"{year}-{month:02d}-{day:02d}",
            f"{day}.{month}.{year}",
            f"{day} {_MONTHS[month - 1]} {year}",
            f"{_MONTHS[month - 1]} {day}, {year}",
        )
        return formats[int(rng.integers(len(formats)))]
    if kind == 3:  # price
        cents = int(10 ** rng.uniform(1, 6))
        return f"${cents // 100:,}.{cents % 100:02d}" if rng.random() < 0.7 else f"{cents // 100} USD"
    if kind == 4:  # percentage
        return f"{rng.uniform(0, 100):.{rng.integers(0, 2)}f}%"
    hour, minute = int(rng.integers(0, 24)), int(rng.integers(0, 60))  # time
    if rng.random() < 0.6:
        return f"{hour}:{minute:02d}"
    return f"{hour % 12 or 12}:{minute:02d} {'pm' if hour >= 12 else 'am'}"


def _random_chars(rng: np.random.Generator, visible: str) -> str:
    """A group of 1 to 8 characters drawn uniformly from ``visible``."""
    return "".join(visible[i] for i in rng.integers(len(visible), size=int(rng.integers(1, 9))))


def _pieces(mode: str, rng: np.random.Generator, charset: str) -> Iterator[str]:
    """Endless stream of pieces for one line, each written only with characters of ``charset``."""
    allowed = frozenset(charset)
    visible = "".join(sorted(allowed - {" "}))
    words = _corpus_for_charset(charset)
    uppercase = mode in ("span", "words") and rng.random() < UPPERCASE_PROBABILITY
    position = int(rng.integers(len(words))) if words else 0
    while True:
        for _ in range(10):
            if mode == "chars":
                piece = _random_chars(rng, visible)
            elif mode == "span" and words:
                piece, position = words[position], (position + 1) % len(words)
            elif words and rng.random() < (0.8 if mode == "words" else 0.3):
                piece = words[int(rng.integers(len(words)))]
            else:
                piece = sample_number(rng)
            if uppercase and allowed.issuperset(piece.upper()):
                piece = piece.upper()
            if allowed.issuperset(piece):
                break
        else:  # the charset excludes every word and number tried
            piece = _random_chars(rng, visible)
        yield piece


def sample_text(
    rng: np.random.Generator,
    *,
    charset: str = PRINTABLE_ASCII,
    min_chars: int = 1,
    max_chars: int = 40,
) -> str:
    """Sample one text line.

    The target length is drawn uniformly in ``[min_chars, max_chars]``; pieces are appended while
    they fit, so lines usually end on a whole word. A first piece longer than the target is cut,
    and a line shorter than ``min_chars`` is completed with random characters of the charset.

    Args:
        rng: Source of every random decision.
        charset: Characters the line may use; it needs at least one non-space character. Pieces
            are joined by spaces only when the charset has a space.
        min_chars: Minimum length in characters (at least 1).
        max_chars: Maximum length in characters.

    Returns:
        A line without leading or trailing whitespace, ``min_chars <= len(line) <= max_chars``.
    """
    visible = "".join(sorted(set(charset) - {" "}))
    if not visible:
        raise ValueError("charset needs at least one non-space character")
    if not 1 <= min_chars <= max_chars:
        raise ValueError(
            f"need 1 <= min_chars <= max_chars, got min_chars={min_chars}, max_chars={max_chars}"
        )
    target = int(rng.integers(min_chars, max_chars + 1))
    mode = MODES[int(rng.choice(len(MODES), p=MODE_PROBABILITIES))]
    separator = " " if " " in charset else ""
    line = ""
    for piece in _pieces(mode, rng, charset):
        candidate = f"{line}{separator}{piece}" if line else piece
        if len(candidate) <= target:
            line = candidate
            if len(line) == target:
                break
        else:
            if len(line) < min_chars:
                line = candidate[:target].rstrip()
            break
    while len(line) < min_chars:
        line += visible[int(rng.integers(len(visible)))]
    return line
