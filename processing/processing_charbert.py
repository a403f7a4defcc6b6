"""CharBERT's processor: text → token ids and the character inputs that go with them.

    processor("some text") → input_ids, attention_mask (batch, T),
                             char_input_ids (batch, T * C), start_ids, end_ids (batch, T)

Character layout: token t owns the C = `max_chars_per_token` character slots `[t * C, (t + 1) * C)`,
filled with the first C characters of its byte-level spelling (see `tokenization_charbert`) and padded
with the padding character; special tokens, `<mask>` and padding tokens have no characters.
`start_ids[t] = t * C` and `end_ids[t] = t * C + len - 1` locate the token's first and last
character (both `t * C` for a token without characters). Because a token's characters depend on its
id alone, `token_char_table()` gives them for the whole vocabulary, which is what a model reading
soft (probability-weighted) tokens needs.
"""

import numpy as np
from transformers import PreTrainedTokenizerFast
from transformers.image_processing_utils import BatchFeature
from transformers.processing_utils import ProcessorMixin

from .tokenization_charbert import CHAR_PAD, CHAR_UNK, CHAR_VOCAB, WORD_UNK


class CharBertProcessor(ProcessorMixin):
    r"""The byte-level BPE tokenizer plus CharBERT's character and word vocabularies.

    Args:
        tokenizer (`PreTrainedTokenizerFast`): see `train_charbert_tokenizer`.
        max_chars_per_token (`int`): character slots per token; longer tokens keep their first ones.
        char_vocab (`list[str]`, *optional*): the character vocabulary, `<pad>` and `<unk>` first
            (default `CHAR_VOCAB`).
        word_vocab (`list[str]`, *optional*): the noisy-LM word vocabulary, `<unk>` first (see
            `build_word_vocab`); needed for pre-training only.
        lowercase_words (`bool`): look words up in `word_vocab` lower-cased (the original release's
            vocabulary is lower-case).
    """

    def __init__(
        self,
        tokenizer,
        max_chars_per_token: int = 6,
        char_vocab: list[str] | None = None,
        word_vocab: list[str] | None = None,
        lowercase_words: bool = False,
    ):
        super().__init__(tokenizer)
        for name in ("pad_token_id", "mask_token_id"):
            if getattr(tokenizer, name) is None:
                raise ValueError(f"the tokenizer needs {name} set; build it with train_charbert_tokenizer")
        self.max_chars_per_token = max_chars_per_token
        self.char_vocab = list(char_vocab) if char_vocab is not None else list(CHAR_VOCAB)
        if self.char_vocab[:2] != [CHAR_PAD, CHAR_UNK]:
            raise ValueError(f"char_vocab must start with {CHAR_PAD!r}, {CHAR_UNK!r}; got {self.char_vocab[:2]}")
        self.word_vocab = list(word_vocab) if word_vocab is not None else [WORD_UNK]
        if self.word_vocab[0] != WORD_UNK:
            raise ValueError(f"word_vocab must start with {WORD_UNK!r}; got {self.word_vocab[0]!r}")
        self.lowercase_words = lowercase_words
        self._char_ids = {char: index for index, char in enumerate(self.char_vocab)}
        self._word_ids = {word: index for index, word in enumerate(self.word_vocab)}
        self._token_chars = None

    @classmethod
    def _get_arguments_from_pretrained(cls, pretrained_model_name_or_path, processor_dict=None, **kwargs):
        # transformers 5.21-5.24 (5.25 loads the tokenizer by the method below alone)
        return [cls._load_tokenizer_from_pretrained("tokenizer", pretrained_model_name_or_path, **kwargs)]

    @classmethod
    def _load_tokenizer_from_pretrained(cls, sub_processor_type, pretrained_model_name_or_path, **kwargs):
        # The one sub-processor is a plain tokenizer.json: load it directly. AutoTokenizer would first
        # read config.json, whose model type is unknown (and custom code) outside textrec.
        return PreTrainedTokenizerFast.from_pretrained(pretrained_model_name_or_path, **kwargs)

    @property
    def model_input_names(self) -> list[str]:
        return ["input_ids", "attention_mask", "char_input_ids", "start_ids", "end_ids"]

    def word_id(self, word: str) -> int:
        """The word's id in `word_vocab`, 0 (`<unk>`) when it is not there."""
        return self._word_ids.get(word.lower() if self.lowercase_words else word, 0)

    def token_char_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The characters of every token of the vocabulary: ids `(vocab, C)` and lengths `(vocab,)`."""
        if self._token_chars is None:
            size, width = len(self.tokenizer), self.max_chars_per_token
            ids = np.zeros((size, width), dtype=np.int64)
            lengths = np.zeros(size, dtype=np.int64)
            special = set(self.tokenizer.all_special_ids)
            for token_id, token in enumerate(self.tokenizer.convert_ids_to_tokens(list(range(size)))):
                if token_id in special or token is None:
                    continue
                chars = [self._char_ids.get(char, 1) for char in token[:width]]
                ids[token_id, : len(chars)] = chars
                lengths[token_id] = len(chars)
            self._token_chars = ids, lengths
        return self._token_chars

    def char_inputs(self, input_ids, hidden: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The character inputs for token ids `(batch, T)`: `char_input_ids (batch, T * C)`,
        `start_ids` and `end_ids (batch, T)`. Tokens where `hidden (batch, T)` is true get no
        characters (pre-training hides the characters of masked tokens)."""
        input_ids = np.asarray(input_ids, dtype=np.int64)
        if input_ids.ndim != 2:
            raise ValueError(f"Expected input_ids of shape (batch, tokens), got {input_ids.shape}.")
        table, table_lengths = self.token_char_table()
        chars, lengths = table[input_ids], table_lengths[input_ids]
        if hidden is not None:
            hidden = np.asarray(hidden, dtype=bool)
            chars = np.where(hidden[..., None], 0, chars)
            lengths = np.where(hidden, 0, lengths)
        batch_size, num_tokens = input_ids.shape
        width = self.max_chars_per_token
        starts = np.broadcast_to(np.arange(num_tokens) * width, (batch_size, num_tokens))
        return {
            "char_input_ids": chars.reshape(batch_size, num_tokens * width),
            "start_ids": starts.copy(),
            "end_ids": starts + np.maximum(lengths - 1, 0),
        }

    def tokenize_words(self, words: list[list[str]], truncation: bool = True, max_length: int | None = None):
        """Tokenize texts given as lists of words, padded to the longest; the result's
        `word_ids(i)` maps each token of text i to its word (None for special and padding tokens)."""
        return self.tokenizer(
            words,
            is_split_into_words=True,
            padding=True,
            truncation=truncation,
            max_length=max_length,
            return_tensors="np",
        )

    def __call__(
        self,
        text: str | list[str],
        return_tensors: str | None = "pt",
        truncation: bool = True,
        max_length: int | None = None,
    ) -> BatchFeature:
        """Encode `text` (one string or a batch) with every input the model needs, padded to the longest.

        Whitespace is normalised as in pre-training: the words (see `split_words`) are joined by single
        spaces, each word spelt with its leading space ("Ġword").

        Args:
            text: the text(s).
            return_tensors: `"pt"` for torch tensors, `"np"` or `None` for NumPy arrays.
            truncation, max_length: cut sequences longer than `max_length` tokens (default: the
                tokenizer's `model_max_length`).
        """
        texts = [text] if isinstance(text, str) else list(text)
        encoding = self.tokenize_words([item.split() for item in texts], truncation=truncation, max_length=max_length)
        data = {"input_ids": encoding["input_ids"], "attention_mask": encoding["attention_mask"]}
        data.update(self.char_inputs(data["input_ids"]))
        return BatchFeature(data=data, tensor_type=return_tensors)


CharBertProcessor.register_for_auto_class("AutoProcessor")
