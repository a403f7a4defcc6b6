"""Datasets for text recognition (synthetic lines and digit strings, the George Washington and IAM handwritten
lines, local folders, the Hub), for formula recognition (synthetic formulas, CROHME), and for language-model
pre-training (text corpora, character noise, recognizer confusions, batches)."""

from .augmentation import augment
from .charbert_collator import CharBertPretrainingCollator
from .confusion import ConfusionMatrix, align_characters
from .crohme import crohme_splits, load_crohme
from .fonts import PRINTABLE_ASCII, discover_fonts, list_fonts
from .iam import load_iam_lines
from .lmdb_dataset import read_lmdb_dataset
from .loading import load_text_recognition_dataset, parse_dataset_options, split_seed
from .mnist import load_mnist, make_mnist_digit_sequences, read_idx
from .synthetic_digits import digit_pool, digit_pool_indices, make_digit_sequences, render_digit
from .synthetic_lines import make_synthetic_lines, render_line
from .synthetic_math import make_synthetic_formulas, render_formula, sample_formula
from .text_corpus import load_text_corpus, read_text_file
from .text_noise import CharacterNoise, choose_words, confusion_edit, random_edit
from .text_sampling import sample_text
from .washington import decode_washington_transcription, load_washington_lines

__all__ = [
    "CharBertPretrainingCollator",
    "CharacterNoise",
    "ConfusionMatrix",
    "PRINTABLE_ASCII",
    "align_characters",
    "augment",
    "choose_words",
    "confusion_edit",
    "crohme_splits",
    "decode_washington_transcription",
    "digit_pool",
    "digit_pool_indices",
    "discover_fonts",
    "list_fonts",
    "load_crohme",
    "load_iam_lines",
    "load_text_corpus",
    "load_mnist",
    "load_text_recognition_dataset",
    "load_washington_lines",
    "make_digit_sequences",
    "make_mnist_digit_sequences",
    "make_synthetic_formulas",
    "make_synthetic_lines",
    "parse_dataset_options",
    "random_edit",
    "read_idx",
    "read_lmdb_dataset",
    "read_text_file",
    "render_digit",
    "render_formula",
    "render_line",
    "sample_formula",
    "sample_text",
    "split_seed",
]
