"""Shared pieces of the CharBERT tests: a few hundred real English texts (Debian's `fortunes`), a
small byte-level BPE tokenizer trained on them, and a tiny model configuration."""

from pathlib import Path

import pytest

from textrec.modeling import CharBertConfig
from textrec.processing import CharBertProcessor, build_word_vocab, train_charbert_tokenizer
from textrec.processing.data import read_text_file

FORTUNES = Path("/usr/share/games/fortunes/fortunes")


def fortune_texts(count: int = 300) -> list[str]:
    if not FORTUNES.exists():
        pytest.skip("Debian's fortunes package is not installed (scripts/setup.sh installs it)")
    return read_text_file(FORTUNES)[:count]


def make_processor(texts: list[str], **kwargs) -> CharBertProcessor:
    tokenizer = train_charbert_tokenizer(texts, vocab_size=400, model_max_length=64)
    return CharBertProcessor(tokenizer, word_vocab=build_word_vocab(texts, 200), **kwargs)


def tiny_config(processor: CharBertProcessor, **overrides) -> CharBertConfig:
    return CharBertConfig.from_preset(
        "tiny",
        vocab_size=len(processor.tokenizer),
        char_vocab_size=len(processor.char_vocab),
        word_vocab_size=len(processor.word_vocab),
        max_chars_per_token=processor.max_chars_per_token,
        **overrides,
    )
