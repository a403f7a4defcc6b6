"""Batches for CharBERT pre-training: masked LM on words, noisy LM on corrupted words.

For each text, split into words (runs of non-space characters):

1. Noisy LM: `noise_probability` of the words are corrupted by one character edit (`CharacterNoise`).
   Every subword of a corrupted word gets, in `word_labels`, the id of the original word in the
   processor's word vocabulary; words outside it are corrupted but not labelled.
2. Masked LM (whole-word): `mlm_probability` of the words, chosen among the uncorrupted ones, are
   masked; each masked word, all its subwords together, becomes `<mask>` 80% of the time, random
   tokens 10% and stays as it is 10%. `labels` holds the original token ids of all of them.
3. The characters of every masked subword are hidden (padding characters), whatever it became, so
   the character stream cannot give the answer away (as in the original release).

Everything else in `labels`/`word_labels` is -100.
"""

import random
from dataclasses import dataclass, field

import numpy as np
import torch

from ..processing_text_recognition import IGNORE_INDEX
from ..tokenization_charbert import split_words
from .text_noise import CharacterNoise, choose_words

MASK, RANDOM, KEEP = "mask", "random", "keep"


@dataclass
class CharBertPretrainingCollator:
    """Turns texts (or rows with a `text` column) into model inputs with `labels` and `word_labels`.

    Args:
        processor: a `CharBertProcessor` with a word vocabulary.
        mlm_probability: share of words masked (whole words).
        noise_probability: share of words corrupted at the character level.
        replacement_probabilities: chances of `<mask>`, a random token and the token kept, per masked word.
        noise: how a word is corrupted (random edits, or a recognizer's confusions).
        max_length: longest sequence in tokens, `<s>` and `</s>` included.
        seed: seed of the collator's own random generator (masking and noise).
        return_word_index: also return `word_index (batch, tokens)`, each token's word number in its
            text (-1 for special and padding tokens), for word-level evaluation; not a model input.
    """

    processor: object
    mlm_probability: float = 0.1
    noise_probability: float = 0.1
    replacement_probabilities: tuple[float, float, float] = (0.8, 0.1, 0.1)
    noise: CharacterNoise = field(default_factory=CharacterNoise)
    max_length: int = 128
    seed: int | None = None
    return_word_index: bool = False

    def __post_init__(self):
        self.rng = random.Random(self.seed)
        tokenizer = self.processor.tokenizer
        special = set(tokenizer.all_special_ids)
        self._random_token_ids = [i for i in range(len(tokenizer)) if i not in special]

    def __call__(self, rows: list) -> dict[str, torch.Tensor]:
        texts = [row["text"] if isinstance(row, dict) else row for row in rows]
        originals, noisy_words, corrupted, masked = [], [], [], []
        for text in texts:
            words = [text[start:end] for start, end in split_words(text)]
            to_corrupt = choose_words(len(words), self.noise_probability, self.rng)
            to_mask = choose_words(len(words), self.mlm_probability, self.rng, exclude=set(to_corrupt))
            noisy = list(words)
            for index in to_corrupt:
                noisy[index] = self.noise(words[index], self.rng)
            originals.append(words)
            noisy_words.append(noisy)
            corrupted.append(to_corrupt)
            masked.append({index: self._replacement() for index in to_mask})

        encoding = self.processor.tokenize_words(noisy_words, truncation=True, max_length=self.max_length)
        input_ids = encoding["input_ids"].copy()
        labels = np.full_like(input_ids, IGNORE_INDEX)
        word_labels = np.full_like(input_ids, IGNORE_INDEX)
        word_index = np.full_like(input_ids, -1)
        for row in range(len(texts)):
            for position, word in enumerate(encoding.word_ids(row)):
                if word is None:
                    continue
                word_index[row, position] = word
                if word in masked[row]:
                    labels[row, position] = input_ids[row, position]
                    input_ids[row, position] = self._replace(input_ids[row, position], masked[row][word])
            for word in corrupted[row]:
                word_id = self.processor.word_id(originals[row][word])
                if word_id:
                    word_labels[row][word_index[row] == word] = word_id

        batch = {
            "input_ids": input_ids,
            "attention_mask": encoding["attention_mask"],
            **self.processor.char_inputs(input_ids, hidden=labels != IGNORE_INDEX),
            "labels": labels,
            "word_labels": word_labels,
        }
        if self.return_word_index:
            batch["word_index"] = word_index
        return {key: torch.as_tensor(value) for key, value in batch.items()}

    def _replacement(self) -> str:
        return self.rng.choices((MASK, RANDOM, KEEP), weights=self.replacement_probabilities)[0]

    def _replace(self, token_id: int, replacement: str) -> int:
        if replacement == MASK:
            return self.processor.tokenizer.mask_token_id
        if replacement == RANDOM:
            return self.rng.choice(self._random_token_ids)
        return token_id
