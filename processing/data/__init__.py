"""Datasets for text recognition: synthetic lines and digit strings, local folders, the Hub."""

from .augmentation import augment
from .fonts import PRINTABLE_ASCII, discover_fonts, list_fonts
from .loading import load_text_recognition_dataset, split_seed
from .synthetic_digits import digit_pool, digit_pool_indices, make_digit_sequences, render_digit
from .synthetic_lines import make_synthetic_lines, render_line
from .text_sampling import sample_text

__all__ = [
    "PRINTABLE_ASCII",
    "augment",
    "digit_pool",
    "digit_pool_indices",
    "discover_fonts",
    "list_fonts",
    "load_text_recognition_dataset",
    "make_digit_sequences",
    "make_synthetic_lines",
    "render_digit",
    "render_line",
    "sample_text",
    "split_seed",
]
