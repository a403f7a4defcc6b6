"""Training batches and the label-length check."""

import logging

import datasets
from PIL import Image

from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_char_tokenizer
from textrec.processing.data.collator import TextRecognitionCollator, drop_overlong_labels


def rows(texts):
    return datasets.Dataset.from_dict({"text": texts})


def test_overlong_labels_are_dropped_and_reported(caplog):
    tokenizer = build_char_tokenizer()
    dataset = rows(["short", "x" * 10, "fits 1234"])
    with caplog.at_level(logging.WARNING):
        kept = drop_overlong_labels(dataset, tokenizer, max_label_length=10, split_name="train")
    assert list(kept["text"]) == ["short", "fits 1234"]
    assert "1 of 3 train labels are longer than the model's maximum of 10 tokens" in caplog.text


def test_labels_that_fit_leave_the_dataset_untouched(caplog):
    dataset = rows(["a", "bc"])
    with caplog.at_level(logging.WARNING):
        assert drop_overlong_labels(dataset, build_char_tokenizer(), max_label_length=3) is dataset
    assert caplog.text == ""


def test_collator_gives_images_and_padded_labels():
    processor = TextRecognitionProcessor(TextRecognitionImageProcessor(), build_char_tokenizer())
    batch = TextRecognitionCollator(processor)(
        [{"image": Image.new("L", (40, 20), 255), "text": "ab"}, {"image": Image.new("L", (80, 20), 255), "text": "c"}]
    )
    assert batch["pixel_values"].shape[:2] == (2, 1)
    assert batch["labels"].tolist()[1][-1] == -100
