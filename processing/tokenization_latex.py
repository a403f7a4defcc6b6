"""LaTeX token vocabularies for formula recognition.

A formula is a sequence of LaTeX tokens: control words (`\\frac`, `\\alpha`), escaped characters
(`\\{`), and single characters (`x`, `^`, `{`). A recogniser predicts one token per decoding step, so its
vocabulary is a dictionary of tokens: four special tokens, then the dictionary in file order.

    id 0 `<pad>`, id 1 `<s>` (bos, the left-to-right start token), id 2 `</s>` (eos), id 3 `<unk>`,
    ids 4.. the dictionary tokens.

`CROHME_DICTIONARY` is the 110-symbol dictionary of the CROHME competitions as used by BTTR and CoMER,
shipped with textrec (one token per line).

Encoding splits the text at whitespace and then into LaTeX tokens, so `"\\frac{a}{b}"` and
`"\\frac { a } { b }"` (the CROHME caption form) give the same ids; tokens outside the dictionary become
`<unk>` (`unknown_latex_tokens` lists them; the processor reports them). Decoding joins tokens with single
spaces, which gives the caption form back. Like the character tokenizer, it is a plain `tokenizers`
pipeline that saves as one `tokenizer.json` and reloads with `AutoTokenizer` without custom code.
"""

import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Regex, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from .tokenization_char import SPECIAL_TOKENS, word_level_tokenizer

CROHME_DICTIONARY = Path(__file__).with_name("crohme_dictionary.txt")

LATEX_TOKEN_PATTERN = r"\\[a-zA-Z]+|\\.|\S"
"""A control word, an escaped character, or any other single non-space character."""


def split_latex(text: str) -> list[str]:
    """The LaTeX tokens of `text`: `split_latex("x^{2}+\\alpha")` → `["x", "^", "{", "2", "}", "+", "\\alpha"]`."""
    return re.findall(LATEX_TOKEN_PATTERN, text)


def load_latex_dictionary(path: str | os.PathLike = CROHME_DICTIONARY) -> list[str]:
    """The tokens of a dictionary file, one per line (blank lines and surrounding spaces ignored).

    Raises:
        ValueError: the file is missing or empty, a line holds more than one LaTeX token, or a token repeats.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    except OSError as err:
        raise ValueError(f"cannot read the LaTeX dictionary {os.fspath(path)!r}: {err}") from err
    tokens = [line.strip() for line in lines if line.strip()]
    if not tokens:
        raise ValueError(f"the LaTeX dictionary {os.fspath(path)!r} is empty")
    for number, token in enumerate(tokens, start=1):
        if split_latex(token) != [token]:
            raise ValueError(f"{os.fspath(path)!r}, entry {number}: {token!r} is not one LaTeX token")
    repeated = [token for token, count in Counter(tokens).items() if count > 1]
    if repeated:
        raise ValueError(f"{os.fspath(path)!r} lists tokens more than once: {repeated}")
    return tokens


def build_latex_tokenizer(
    dictionary: str | os.PathLike = CROHME_DICTIONARY, model_max_length: int = 512
) -> PreTrainedTokenizerFast:
    """Build the LaTeX tokenizer of a dictionary file (default: the CROHME dictionary).

    With `add_special_tokens=True` (the default) encoding appends `</s>`, which is the label format:
    `tok("x^{2}").input_ids == [id("x"), id("^"), id("{"), id("2"), id("}"), 2]`.
    """
    tokens = load_latex_dictionary(dictionary)
    vocab = {token: index for index, token in enumerate(SPECIAL_TOKENS + tuple(tokens))}
    if len(vocab) != len(SPECIAL_TOKENS) + len(tokens):
        raise ValueError(f"the dictionary {os.fspath(dictionary)!r} holds special tokens {SPECIAL_TOKENS}")

    pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex(LATEX_TOKEN_PATTERN), behavior="isolated")]
    )
    return word_level_tokenizer(vocab, pre_tokenizer, model_max_length)


def unknown_latex_tokens(texts: Iterable[str], tokenizer: PreTrainedTokenizerFast) -> Counter:
    """How often each token of `texts` outside the tokenizer's vocabulary occurs."""
    vocab = tokenizer.get_vocab()
    return Counter(token for text in texts for token in split_latex(text) if token not in vocab)
