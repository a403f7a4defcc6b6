"""Training batches and the label checks (length, vocabulary)."""

import logging

import datasets
from PIL import Image

from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_char_tokenizer
from textrec.processing.data.collator import TextRecognitionCollator, check_labels


def rows(texts):
    return datasets.Dataset.from_dict({"text": texts})


def char_processor(charset=None):
    tokenizer = build_char_tokenizer(charset) if charset else build_char_tokenizer()
    return TextRecognitionProcessor(TextRecognitionImageProcessor(), tokenizer)


def test_overlong_labels_are_dropped_and_reported(caplog):
    dataset = rows(["short", "x" * 10, "fits 1234"])
    with caplog.at_level(logging.WARNING):
        kept = check_labels(dataset, char_processor(), max_label_length=10, split_name="train")
    assert list(kept["text"]) == ["short", "fits 1234"]
    assert "1 of 3 train labels are longer than the model's maximum of 10 tokens" in caplog.text


def test_labels_that_fit_leave_the_dataset_untouched(caplog):
    dataset = rows(["a", "bc"])
    with caplog.at_level(logging.WARNING):
        assert check_labels(dataset, char_processor(), max_label_length=3) is dataset
    assert caplog.text == ""


def test_collator_gives_images_and_padded_labels():
    processor = TextRecognitionProcessor(TextRecognitionImageProcessor(), build_char_tokenizer())
    batch = TextRecognitionCollator(processor)(
        [{"image": Image.new("L", (40, 20), 255), "text": "ab"}, {"image": Image.new("L", (80, 20), 255), "text": "c"}]
    )
    assert batch["pixel_values"].shape[:2] == (2, 1)
    assert batch["labels"].tolist()[1][-1] == -100


def test_characters_outside_the_vocabulary_are_warned_once_per_dataset_not_per_batch(caplog):
    processor = char_processor("abc ")
    dataset = rows(["ab", "aé", "cß", "b", "éé"])
    with caplog.at_level(logging.WARNING):
        check_labels(dataset, processor, max_label_length=10)
        collator = TextRecognitionCollator(processor, warn_out_of_vocabulary=False)
        for begin in range(0, len(dataset), 2):
            batch = dataset["text"][begin : begin + 2]
            collator([{"image": Image.new("L", (20, 20), 255), "text": text} for text in batch])
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warnings == [
        "3 of 5 train labels hold characters or tokens outside the vocabulary, read as <unk>: 'é' (3), 'ß' (1)"
    ]
