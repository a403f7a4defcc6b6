"""Batches of dataset rows for `Seq2SeqTrainer`, and the label-length check before training."""

import logging
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)


@dataclass
class TextRecognitionCollator:
    """Turns rows `{"image": ..., "text": ...}` into processor outputs with `labels`.

    Args:
        processor: a `TextRecognitionProcessor` (or any processor taking `images` and `text_target`).
        processor_kwargs: further options of each processor call, such as
            `{"do_scale_augmentation": True}` for the training batches of formulas.

    The batch holds what the processor returns: a `pixel_mask` only where its image processor pads.
    """

    processor: Any
    processor_kwargs: dict = field(default_factory=dict)

    def __call__(self, rows: list[dict]) -> dict:
        images = [row["image"] for row in rows]
        texts = [row["text"] for row in rows]
        return self.processor(images=images, text_target=texts, return_tensors="pt", **self.processor_kwargs)


def drop_overlong_labels(dataset, tokenizer, max_label_length: int, split_name: str = "train"):
    """Removes rows whose label needs more than `max_label_length` tokens (end token included) and
    reports how many, with examples, instead of letting them be cut silently.

    Args:
        dataset: a `datasets.Dataset` with a `text` column.
        tokenizer: the processor's tokenizer.
    """
    lengths = [len(ids) + 1 for ids in tokenizer(list(dataset["text"]), add_special_tokens=False).input_ids]
    too_long = [i for i, length in enumerate(lengths) if length > max_label_length]
    if not too_long:
        return dataset
    examples = ", ".join(repr(dataset[i]["text"][:40]) for i in too_long[:3])
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
