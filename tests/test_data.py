"""Tests of the data side: fonts, text sampling, augmentation, synthetic lines and digits, loading.

Offline, seeded and small: every generated dataset has a handful of rows, and caches live in
``tmp_path`` (or are switched off with ``cache_dir=False``).
"""

import io
import json
import logging

import datasets
import numpy as np
import pytest
from PIL import Image

from textrec.processing.data import augmentation, synthetic_lines
from textrec.processing.data.augmentation import augment
from textrec.processing.data.fonts import HANDWRITING_FAMILIES, PRINTABLE_ASCII, discover_fonts, list_fonts
from textrec.processing.data.loading import load_text_recognition_dataset, split_seed
from textrec.processing.data.synthetic_digits import digit_pool_indices, make_digit_sequences, render_digit
from textrec.processing.data.synthetic_lines import make_synthetic_lines
from textrec.processing.data.text_sampling import load_corpus, sample_text


def image_bytes(dataset: datasets.Dataset) -> list[bytes]:
    """The stored (encoded) image bytes of every row, without decoding."""
    return [row["bytes"] for row in dataset.cast_column("image", datasets.Image(decode=False))["image"]]


def write_png(path, size=(40, 16), ink=True):
    """Write a small greyscale PNG (light page, optionally a dark bar)."""
    array = np.full(size[::-1], 230, np.uint8)
    if ink:
        array[5:10, 5:30] = 20
    Image.fromarray(array).save(path, format="PNG")


# ---------------------------------------------------------------------------------------- fonts


def test_print_fonts_are_found_and_cover_printable_ascii():
    fonts = discover_fonts()
    print_fonts = list_fonts("print")
    assert print_fonts, "no print font found (install fonts-dejavu-core or similar)"
    assert all(set(map(ord, PRINTABLE_ASCII)) <= info.codepoints for info in fonts)
    assert not any("symbol" in info.family.lower() or "math" in info.family.lower() for info in fonts)


def test_handwriting_fonts_are_classified_by_family():
    handwriting = [info for info in discover_fonts() if info.style == "handwriting"]
    if not handwriting:
        pytest.skip("no handwriting font installed (fonts-dkg-handwriting, fonts-breip, ... )")
    assert all(any(name in info.family.lower() for name in HANDWRITING_FAMILIES) for info in handwriting)
    assert set(list_fonts("handwriting", caps_only=True)) == {info.path for info in handwriting}
    assert not set(list_fonts("handwriting")) & set(list_fonts("print"))


def test_list_fonts_keeps_only_fonts_covering_the_charset():
    assert list_fonts("print", charset="\U0010fffd") == []


# ------------------------------------------------------------------------------------ text


def test_sampled_text_uses_only_the_charset_and_respects_lengths():
    charset = "0123456789abcdef -.,"
    for index in range(200):
        text = sample_text(np.random.default_rng([3, index]), charset=charset, min_chars=2, max_chars=12)
        assert set(text) <= set(charset)
        assert 2 <= len(text) <= 12
        assert text == text.strip()


def test_sampled_text_is_deterministic_given_the_generator():
    first = [sample_text(np.random.default_rng([0, i])) for i in range(20)]
    again = [sample_text(np.random.default_rng([0, i])) for i in range(20)]
    other = [sample_text(np.random.default_rng([1, i])) for i in range(20)]
    assert first == again
    assert first != other


def test_builtin_word_list_replaces_a_missing_fortunes_corpus(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="textrec"):
        words = load_corpus(tmp_path)
    assert "the" in words and len(words) > 500
    assert "built-in word list" in caplog.text


# ------------------------------------------------------------------------------ augmentation


@pytest.mark.parametrize("mode", ["L", "RGB"])
def test_augment_keeps_size_and_mode(mode):
    image = Image.new(mode, (120, 32), "white")
    always = dict.fromkeys(augmentation.DEFAULT_PROBABILITIES, 1.0)
    result = augment(image, np.random.default_rng(0), strength=1.0, probabilities=always)
    assert result.size == image.size and result.mode == mode


def test_augment_is_deterministic_given_the_generator():
    image = Image.fromarray(np.random.default_rng(7).integers(0, 256, size=(32, 100), dtype=np.uint8))
    always = dict.fromkeys(augmentation.DEFAULT_PROBABILITIES, 1.0)
    first = augment(image, np.random.default_rng(1), probabilities=always)
    again = augment(image, np.random.default_rng(1), probabilities=always)
    other = augment(image, np.random.default_rng(2), probabilities=always)
    assert first.tobytes() == again.tobytes()
    assert first.tobytes() != other.tobytes()


# --------------------------------------------------------------------------- synthetic lines


def test_synthetic_lines_are_byte_identical_for_the_same_seed():
    first = make_synthetic_lines(4, seed=5, cache_dir=False)
    again = make_synthetic_lines(4, seed=5, cache_dir=False)
    other = make_synthetic_lines(4, seed=6, cache_dir=False)
    assert image_bytes(first) == image_bytes(again) and first["text"] == again["text"]
    assert image_bytes(first) != image_bytes(other)


def test_synthetic_lines_do_not_depend_on_the_number_of_workers():
    single = make_synthetic_lines(4, seed=3, cache_dir=False)
    parallel = make_synthetic_lines(4, seed=3, cache_dir=False, num_proc=2)
    assert image_bytes(single) == image_bytes(parallel)


def test_synthetic_lines_contain_ink_on_a_light_page():
    dataset = make_synthetic_lines(6, seed=0, cache_dir=False, font_style="mixed")
    assert dataset.column_names == ["image", "text", "font"]
    for row in dataset:
        pixels = np.asarray(row["image"])
        assert row["image"].mode == "L" and row["text"]
        assert np.median(pixels) > 150, "page should be light"
        assert pixels.min() < np.median(pixels) - 60, f"no ink in the image of {row['text']!r}"


def test_synthetic_lines_use_only_the_charset():
    charset = "0123456789.:-/ "
    dataset = make_synthetic_lines(8, seed=1, cache_dir=False, charset=charset, max_chars=12, augment=False)
    assert all(set(text) <= set(charset) and 1 <= len(text) <= 12 for text in dataset["text"])


def test_synthetic_lines_are_loaded_from_the_cache_on_the_second_call(tmp_path, monkeypatch):
    first = make_synthetic_lines(3, seed=2, cache_dir=tmp_path)

    def fail(*args, **kwargs):
        raise AssertionError("rendered again instead of loading from the cache")

    monkeypatch.setattr(synthetic_lines, "generate_indexed", fail)
    again = make_synthetic_lines(3, seed=2, cache_dir=tmp_path)
    assert image_bytes(again) == image_bytes(first)
    assert len(list(tmp_path.iterdir())) == 1


def test_a_cached_dataset_is_drawn_again_when_the_code_that_drew_it_changes(tmp_path, monkeypatch):
    """The cache key holds a fingerprint of `textrec.processing.data`'s source: lines drawn by an older textrec (an
    upgrade, a fix to the scanner effects) are never read back as if the new code had drawn them."""
    from textrec.processing.data import generation

    make_synthetic_lines(2, seed=2, cache_dir=tmp_path)
    assert generation.code_fingerprint() == generation.code_fingerprint.__wrapped__()  # the files, read again
    monkeypatch.setattr(generation, "code_fingerprint", lambda: "changed")
    rendered = []
    original = synthetic_lines.generate_indexed
    monkeypatch.setattr(synthetic_lines, "generate_indexed", lambda *a, **k: rendered.append(1) or original(*a, **k))
    make_synthetic_lines(2, seed=2, cache_dir=tmp_path)
    assert rendered and len(list(tmp_path.iterdir())) == 2
    entries = [json.loads((entry / generation.ARGUMENTS_FILE).read_text())["code"] for entry in tmp_path.iterdir()]
    assert "changed" in entries


def test_synthetic_lines_fall_back_to_pillows_font_without_system_fonts(monkeypatch, caplog):
    monkeypatch.setattr(synthetic_lines, "list_fonts", lambda *args, **kwargs: [])
    with caplog.at_level(logging.WARNING, logger="textrec"):
        dataset = make_synthetic_lines(2, font_style="handwriting", cache_dir=False)
    assert set(dataset["font"]) == {synthetic_lines.DEFAULT_FONT_NAME}
    assert "Pillow's bundled font" in caplog.text


# ---------------------------------------------------------------------------------- digits


def test_digit_sequences_have_one_cell_per_digit():
    dataset = make_digit_sequences(4, length=(2, 6), digit_size=24, cache_dir=False)
    for row in dataset:
        assert row["text"].isdigit() and 2 <= len(row["text"]) <= 6
        assert row["image"].size == (24 * len(row["text"]), 24)


def test_digit_pools_are_disjoint_and_cover_all_digits():
    pools = [set(digit_pool_indices(split).tolist()) for split in ("train", "validation", "test")]
    assert not pools[0] & pools[1] and not pools[0] & pools[2] and not pools[1] & pools[2]
    assert set().union(*pools) == set(range(1797))


def test_rotated_digit_sequences_differ_but_keep_the_digits():
    plain = make_digit_sequences(3, seed=4, cache_dir=False)
    rotated = make_digit_sequences(3, seed=4, rotated=True, cache_dir=False)
    assert plain["text"] == rotated["text"]
    assert all(a != b for a, b in zip(image_bytes(plain), image_bytes(rotated), strict=True))


def test_render_digit_accepts_mnist_sized_digits():
    mnist_like = np.zeros((28, 28), np.uint8)
    mnist_like[6:22, 12:16] = 255  # a "1"
    cell = render_digit(mnist_like, size=32, angle=20.0, max_value=255)
    assert cell.shape == (32, 32) and cell.dtype == np.uint8
    assert cell[0, 0] == 255 and cell.min() < 64


# --------------------------------------------------------------------------------- loading


def test_synthetic_splits_get_distinct_seeds():
    seeds = {split_seed(0, split) for split in ("train", "validation", "test")}
    assert split_seed(0, "train") == 0 and len(seeds) == 3


def test_loader_generates_synthetic_digits_for_a_split(tmp_path):
    dataset = load_text_recognition_dataset(
        "synthetic-digits", split="test", num_samples=2, cache_dir=tmp_path
    )
    assert len(dataset) == 2 and dataset.column_names == ["image", "text"]


def test_image_folder_skips_and_counts_missing_images(tmp_path, caplog):
    for name in ("a.png", "b.png"):
        write_png(tmp_path / name)
    (tmp_path / "broken.png").write_bytes(b"not an image")
    rows = [("a.png", "first"), ("missing.png", "gone"), ("b.png", "second"), ("broken.png", "bad")]
    lines = [json.dumps({"file_name": name, "text": text}) for name, text in rows]
    (tmp_path / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING, logger="textrec"):
        dataset = load_text_recognition_dataset(tmp_path)
    assert dataset["text"] == ["first", "second"]
    assert isinstance(dataset[0]["image"], Image.Image)
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and "Skipped 2 of 4 rows" in warnings[0].getMessage()
    assert "missing.png" in warnings[0].getMessage()


def test_image_folder_with_split_folders_and_renamed_text_key(tmp_path):
    for split, text in (("train", "train line"), ("validation", "held-out line")):
        (tmp_path / split).mkdir()
        write_png(tmp_path / split / "x.png")
        (tmp_path / split / "metadata.jsonl").write_text(
            json.dumps({"file_name": "x.png", "label": text}) + "\n"
        )
    dataset = load_text_recognition_dataset(tmp_path, split="validation", text_column="label")
    assert dataset.column_names == ["image", "text"] and dataset["text"] == ["held-out line"]


def test_saved_dataset_dict_folder_with_renamed_columns(tmp_path):
    buffer = io.BytesIO()
    write_png(buffer)
    images = {"bytes": buffer.getvalue(), "path": None}
    features = datasets.Features({"picture": datasets.Image(), "transcription": datasets.Value("string")})
    splits = {
        split: datasets.Dataset.from_dict(
            {"picture": [images] * 3, "transcription": [f"{split} {i}" for i in range(3)]}, features=features
        )
        for split in ("train", "test")
    }
    datasets.DatasetDict(splits).save_to_disk(str(tmp_path))
    dataset = load_text_recognition_dataset(
        tmp_path, split="test", image_column="picture", text_column="transcription"
    )
    assert dataset.column_names == ["image", "text"]
    assert dataset["text"] == ["test 0", "test 1", "test 2"]
    assert isinstance(dataset.features["image"], datasets.Image)


def test_saved_dataset_folder_and_random_subset(tmp_path):
    buffer = io.BytesIO()
    write_png(buffer)
    images = [{"bytes": buffer.getvalue(), "path": None}] * 10
    features = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})
    datasets.Dataset.from_dict({"image": images, "text": [str(i) for i in range(10)]}, features=features).save_to_disk(
        str(tmp_path)
    )
    dataset = load_text_recognition_dataset(tmp_path, num_samples=4, seed=0)
    texts = [int(text) for text in dataset["text"]]
    assert len(texts) == 4 and texts == sorted(texts)


def test_existing_path_that_is_no_dataset_gives_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ValueError, match="not a dataset folder"):
        load_text_recognition_dataset(tmp_path)


def test_missing_local_path_is_not_sent_to_the_hub(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_text_recognition_dataset(tmp_path / "nowhere" / "data")


def test_uncached_hub_dataset_offline_gives_a_clear_error(monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("Couldn't reach the Hub (OfflineModeIsEnabled)")

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(ConnectionError, match="offline mode"):
        load_text_recognition_dataset("someone/some-dataset")
