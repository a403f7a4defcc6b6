"""Character-level vocabularies for text recognition.

A recogniser predicts one character per decoding step, so its vocabulary is a charset: four special
tokens followed by the characters in a fixed order.

    id 0 `<pad>`, id 1 `<s>` (bos, also the decoder start token), id 2 `</s>` (eos), id 3 `<unk>`,
    ids 4.. the charset characters, deduplicated, first occurrence kept.

A character is a letter with the combining marks that follow it (`characters_of`): `uͤ` (u and U+0364, the small e
of an old umlaut as the Deutsches Textarchiv writes it) is one token, as the precomposed `ü` is.

The tokenizer is a plain `tokenizers` pipeline wrapped in `PreTrainedTokenizerFast`: it saves as a
single `tokenizer.json` and reloads with `AutoTokenizer.from_pretrained` without any custom code.
"""

import os
import re

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast


PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN = "<pad>", "<s>", "</s>", "<unk>"
SPECIAL_TOKENS = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)

DEFAULT_CHARSET = "".join(chr(code) for code in range(ord(" "), ord("~") + 1))
"""Printable ASCII: the 95 characters from space to tilde."""


COMBINING_MARKS = "\u0300-\u036f"
"""Unicode's combining diacritical marks: a mark belongs to the character before it."""
CHARACTER_PATTERN = f"[^{COMBINING_MARKS}][{COMBINING_MARKS}]*|[{COMBINING_MARKS}]+"
"""One character: a code point and the combining marks after it (marks with nothing before them stand alone). The
same pattern splits text in the tokenizer (its pre-tokenizer) and in Python (`characters_of`)."""
_CHARACTER = re.compile(CHARACTER_PATTERN)


def characters_of(text: str) -> list[str]:
    """`text` in the units a character vocabulary reads: `characters_of("Bru\u0364cke") == ["B", "r", "u\u0364", "c",
    "k", "e"]`."""
    return _CHARACTER.findall(text)


def load_charset(charset_or_path: str | os.PathLike) -> str:
    """Return a charset given as a string or as the path of a UTF-8 text file.

    A `pathlib.Path` (any `os.PathLike`) is always read as a file; a `str` is read as a file when it names
    an existing file, and is otherwise the charset itself. A file's whole contents are the charset, with
    line breaks (`\\n`, `\\r`) and a leading byte-order mark removed, so a charset may be split over lines.

    A `str` ending in ".txt" that names no file raises instead of becoming a charset: a
    deduplicated charset never ends that way (it would hold "t" twice), so it is a mistyped path.

    Raises:
        ValueError: the file is missing or unreadable, or the charset is empty.
    """
    is_path = isinstance(charset_or_path, os.PathLike) or os.path.isfile(charset_or_path)
    if not is_path and charset_or_path.endswith(".txt"):
        raise ValueError(f"charset file {charset_or_path!r} not found")
    if is_path:
        try:
            with open(charset_or_path, encoding="utf-8-sig") as file:
                charset = file.read().replace("\r", "").replace("\n", "")
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"cannot read charset file {os.fspath(charset_or_path)!r}: {err}") from err
        if not charset:
            raise ValueError(f"charset file {os.fspath(charset_or_path)!r} is empty")
        return charset
    if not charset_or_path:
        raise ValueError("charset is empty: give at least one character")
    return charset_or_path


def build_char_tokenizer(
    charset: str | os.PathLike = DEFAULT_CHARSET, model_max_length: int = 512
) -> PreTrainedTokenizerFast:
    """Build the character tokenizer for `charset` (a string or a file, see `load_charset`).

    Encoding splits the text into characters (`characters_of`: code points with their combining marks), maps each to
    its id, `<unk>` for characters outside the charset, and with `add_special_tokens=True` (the
    default) appends `</s>`: `tok("ab").input_ids == [id("a"), id("b"), 2]`, which is the label format.
    Literal "<s>" etc. in the text are ordinary characters, never special tokens. Decoding joins the
    characters with nothing in between, so `tok.decode(tok(text).input_ids, skip_special_tokens=True)`
    gives `text` back exactly (spaces included) when every character is in the charset.

    Args:
        charset: the characters of the vocabulary, in id order (`characters_of`: a combining mark joins the character
            before it, so `"ÄÖÜaͤoͤuͤ"` is six tokens); duplicates are dropped (first kept).
        model_max_length: the longest sequence, in tokens, the models using this vocabulary accept.
    """
    characters = list(dict.fromkeys(characters_of(load_charset(charset))))
    vocab = {token: index for index, token in enumerate(SPECIAL_TOKENS + tuple(characters))}

    return word_level_tokenizer(
        vocab,
        pre_tokenizers.Split(Regex(CHARACTER_PATTERN), behavior="isolated"),  # one piece per character
        model_max_length,
        decoder=decoders.Fuse(),  # join pieces without separators
    )


def word_level_tokenizer(vocab: dict[str, int], pre_tokenizer, model_max_length: int, decoder=None) -> PreTrainedTokenizerFast:
    """A fast tokenizer over a fixed vocabulary (textrec's special tokens first) that splits text with
    `pre_tokenizer`, appends `</s>` when encoding with special tokens (the label format) and treats
    special-token text in the input as ordinary pieces ("<s>" is not bos)."""
    backend = Tokenizer(models.WordLevel(vocab, unk_token=UNK_TOKEN))
    backend.pre_tokenizer = pre_tokenizer
    if decoder is not None:
        backend.decoder = decoder
    backend.post_processor = processors.TemplateProcessing(
        single=f"$A {EOS_TOKEN}", pair=f"$A $B {EOS_TOKEN}", special_tokens=[(EOS_TOKEN, vocab[EOS_TOKEN])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD_TOKEN,
        bos_token=BOS_TOKEN,
        eos_token=EOS_TOKEN,
        unk_token=UNK_TOKEN,
        model_max_length=model_max_length,
        split_special_tokens=True,
        clean_up_tokenization_spaces=False,
    )
