"""CharBERT's three vocabularies: subwords, characters and words.

- Subwords: a byte-level BPE tokenizer in RoBERTa's style, trained with the `tokenizers` library on a
  corpus (`train_charbert_tokenizer`). Ids 0-4 are `<s>`, `<pad>`, `</s>`, `<unk>`, `<mask>`; every word
  gets a leading space (`add_prefix_space`), so a word is spelt the same at the start of a text as
  anywhere else ("Ġword"). It saves as one `tokenizer.json` and reloads with `AutoTokenizer`.
- Characters: the characters of a token's byte-level spelling ("Ġ" for the space, two symbols for
  "é"), as in the original release. `CHAR_VOCAB` is `<pad>`, `<unk>`, then the 256 byte-level symbols,
  so every BPE token is spelt without `<unk>`.
- Words: the noisy-LM head predicts the original word of a corrupted one from a word vocabulary,
  the most frequent whitespace-separated words of the corpus (`build_word_vocab`), `<unk>` first.
"""

import re
from collections import Counter
from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast


SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
"""RoBERTa's special tokens, in id order 0-4."""

CHAR_PAD, CHAR_UNK = "<pad>", "<unk>"
CHAR_VOCAB = (CHAR_PAD, CHAR_UNK, *sorted(pre_tokenizers.ByteLevel.alphabet()))
"""Character vocabulary: id 0 pads (empty slots, special and masked tokens), id 1 is unknown, then
the 256 byte-level symbols in code-point order."""

WORD_UNK = "<unk>"

_WORD = re.compile(r"\S+")


def split_words(text: str) -> list[tuple[int, int]]:
    """The `(start, end)` character spans of the words of `text`: maximal runs of non-space
    characters, punctuation included ("end." is one word). Words are the unit of whole-word masking,
    of character noise and of noisy-LM labels."""
    return [match.span() for match in _WORD.finditer(text)]


def train_charbert_tokenizer(
    texts: Iterable[str], vocab_size: int = 8000, min_frequency: int = 2, model_max_length: int = 512
) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer on `texts` (RoBERTa's pre-tokenisation, special tokens and
    `<s> ... </s>` template).

    Args:
        texts: the training corpus, one document per item.
        vocab_size: the size of the vocabulary, special tokens and the 256 byte symbols included.
        min_frequency: a merge needs at least this many occurrences.
        model_max_length: the longest sequence, in tokens, the model accepts.
    """
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer)
    backend.post_processor = processors.RobertaProcessing(
        ("</s>", backend.token_to_id("</s>")),
        ("<s>", backend.token_to_id("<s>")),
        add_prefix_space=True,
        trim_offsets=True,
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
        cls_token="<s>",
        sep_token="</s>",
        model_max_length=model_max_length,
        clean_up_tokenization_spaces=False,
    )


def build_word_vocab(texts: Iterable[str], size: int = 30000, min_frequency: int = 1) -> list[str]:
    """`<unk>` followed by the `size` most frequent words of `texts` (see `split_words`; case and
    punctuation kept) occurring at least `min_frequency` times; ties in corpus order."""
    counts = Counter(text[start:end] for text in texts for start, end in split_words(text))
    frequent = [word for word, count in counts.most_common(size) if count >= min_frequency]
    return [WORD_UNK, *frequent]
