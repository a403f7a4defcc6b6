"""Batches of dataset rows for `Seq2SeqTrainer`, and the label checks before training (length, vocabulary)."""

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

MAX_UNKNOWN_EXAMPLES = 20
"""How many distinct characters outside the vocabulary the warning of `check_labels` names."""


@dataclass
class TextRecognitionCollator:
    """Turns rows `{"image": ..., "text": ...}` into processor outputs with `labels`.

    Args:
        processor: a `TextRecognitionProcessor`.
        processor_kwargs: further options of each processor call, such as
            `{"do_scale_augmentation": True}` for the training batches of formulas.
        warn_out_of_vocabulary: let each batch warn about characters outside the vocabulary; `False` where
            the dataset's texts were checked once before (`check_labels`).

    The batch holds what the processor returns: a `pixel_mask` only where its image processor pads.
    """

    processor: Any
    processor_kwargs: dict = field(default_factory=dict)
    warn_out_of_vocabulary: bool = True

    def __call__(self, rows: list[dict]) -> dict:
        images = [row["image"] for row in rows]
        texts = [row["text"] for row in rows]
        return self.processor(
            images=images,
            text_target=texts,
            return_tensors="pt",
            warn_out_of_vocabulary=self.warn_out_of_vocabulary,
            warn_images_out_of_range=False,  # the datasets are checked before training
            **self.processor_kwargs,
        )


def check_labels(dataset, processor, max_label_length: int, split_name: str = "train"):
    """The label checks before training, over the whole dataset in one tokenization, each with one warning:
    rows whose label needs more than `max_label_length` tokens (end token included) are left out, with how
    many and examples, instead of being cut silently; characters (or LaTeX tokens) outside the vocabulary
    (read as `<unk>`) are counted and named, most frequent first, so that the collators need not warn batch
    by batch (`TextRecognitionCollator(warn_out_of_vocabulary=False)`).

    Args:
        dataset: a `datasets.Dataset` with a `text` column.
        processor: a `TextRecognitionProcessor`.
        split_name: how the warnings name the dataset ("train", "evaluation").

    Returns:
        `dataset`, without the over-long labels.
    """
    texts = list(dataset["text"])
    tokenizer = processor.tokenizer
    ids = tokenizer(texts, add_special_tokens=False, return_attention_mask=False).input_ids
    with_unknown = [text for text, row in zip(texts, ids) if tokenizer.unk_token_id in row]
    if with_unknown:
        unknown = Counter(processor.out_of_vocabulary(with_unknown))
        logger.warning(
            "%d of %d %s labels hold characters or tokens outside the vocabulary, read as %s: %s",
            len(with_unknown),
            len(texts),
            split_name,
            tokenizer.unk_token,
            ", ".join(f"{piece!r} ({count})" for piece, count in unknown.most_common(MAX_UNKNOWN_EXAMPLES)),
        )
    too_long = [i for i, row in enumerate(ids) if len(row) + 1 > max_label_length]
    if not too_long:
        return dataset
    examples = ", ".join(repr(texts[i][:40]) for i in too_long[:3])
    logger.warning(
        "%d of %d %s labels are longer than the model's maximum of %d tokens and were left out (e.g. %s). "
        "Raise --max_target_length to keep them.",
        len(too_long),
        len(dataset),
        split_name,
        max_label_length,
        examples,
    )
    keep = sorted(set(range(len(dataset))) - set(too_long))
    return dataset.select(keep)
