"""Captured copies of real lines (`captured:<folder>`) and mixtures of sources (`a + b`): what trains the
handwriting reader on pen strokes rendered clean, beside the data engine's print."""

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw

from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.captured_copies import (
    HAND_EFFECTS,
    captured_copy,
    elastic_distortion,
    make_captured_copies,
    slant,
    small_letters,
)
from textrec.processing.old_umlauts import x_height_band


def written_line(text: str = "a move to stop") -> Image.Image:
    image = Image.new("L", (180, 40), 255)
    ImageDraw.Draw(image).text((8, 8), text, fill=0, font_size=22)
    return image


def line_folder(path, texts=("a move to stop", "Mr. Gaitskell", "from nominating")):
    path.mkdir()
    with open(path / "metadata.jsonl", "w") as file:
        for index, text in enumerate(texts):
            written_line(text).save(path / f"{index}.png")
            file.write(json.dumps({"file_name": f"{index}.png", "text": text}) + "\n")
    return path


def test_slant_leans_the_strokes_and_keeps_every_column():
    image = Image.new("L", (40, 40), 255)
    ImageDraw.Draw(image).line([(20, 0), (20, 39)], fill=0, width=2)  # an upright stroke
    leaned = np.asarray(slant(image, np.random.default_rng(0)))
    assert leaned.shape[0] == 40 and leaned.shape[1] > 40  # widened, not cropped
    top, bottom = (np.flatnonzero(leaned[row] < 128).mean() for row in (2, 37))
    assert abs(top - bottom) > 3  # the stroke is no longer upright
    assert (leaned < 128).sum() >= 0.8 * (np.asarray(image) < 128).sum()  # no ink lost


def test_elastic_distortion_bends_strokes_but_keeps_size_and_ink():
    image = written_line()
    bent = elastic_distortion(image, np.random.default_rng(1))
    original, moved = np.asarray(image), np.asarray(bent)
    assert moved.shape == original.shape
    assert not np.array_equal(moved, original)
    assert 0.7 < (moved < 128).sum() / (original < 128).sum() < 1.3


@pytest.mark.parametrize("name", list(HAND_EFFECTS))
def test_each_hand_effect_is_seeded(name):
    first = HAND_EFFECTS[name](written_line(), np.random.default_rng(5))
    second = HAND_EFFECTS[name](written_line(), np.random.default_rng(5))
    assert np.array_equal(np.asarray(first), np.asarray(second))


def test_small_letters_shrink_the_x_height_band_and_keep_the_writing_tall():
    """Ascenders and descenders grow as the small letters shrink: the band of rows holding most ink is lower against
    the writing's height, the writing as high and as wide as before; a line of small letters alone stays as it was."""
    image = written_line("Highly figured")
    smaller = np.asarray(small_letters(image, np.random.default_rng(3)))

    def band_share(values):
        ink = values < 128
        rows = np.flatnonzero(ink.any(axis=1))
        top, bottom = x_height_band(ink)
        return (bottom - top + 1) / (rows[-1] - rows[0] + 1), rows[-1] - rows[0]

    (share_before, height_before), (share_after, height_after) = band_share(np.asarray(image)), band_share(smaller)
    assert smaller.shape == np.asarray(image).shape
    assert share_after < 0.9 * share_before and abs(height_after - height_before) <= 1
    plain = written_line("ace meow")  # no ascender, no descender
    assert np.array_equal(np.asarray(small_letters(plain, np.random.default_rng(3))), np.asarray(plain))


def test_small_letters_are_drawn_only_when_asked(tmp_path):
    folder = line_folder(tmp_path / "lines")
    default = load_text_recognition_dataset(f"captured:{folder}:copies=4")
    asked = load_text_recognition_dataset(f"captured:{folder}:copies=4,small_letters_share=1.0")
    assert list(asked["text"]) == list(default["text"])
    assert any(not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(asked["image"], default["image"]))
    again = make_captured_copies(load_text_recognition_dataset(folder), 4, small_letters_share=0.0, cache_dir=False)
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(default["image"], again["image"]))
    with pytest.raises(ValueError, match="small_letters_share must be within 0 and 1"):
        make_captured_copies(load_text_recognition_dataset(folder), 1, small_letters_share=2.0, cache_dir=False)


def test_copies_differ_from_the_source_and_from_each_other():
    copies = [np.asarray(captured_copy(written_line(), np.random.default_rng([0, 0, c]))) for c in range(8)]
    source = np.asarray(written_line())
    changed = [c.shape != source.shape or not np.array_equal(c, source) for c in copies]
    assert sum(changed) >= 5
    assert len({c.tobytes() for c in copies}) >= 6


def test_captured_folder_gives_each_line_copies_times_in_order_and_reproducibly(tmp_path):
    folder = line_folder(tmp_path / "lines")
    copies = load_text_recognition_dataset(f"captured:{folder}:copies=3")
    assert list(copies["text"]) == [text for text in ("a move to stop", "Mr. Gaitskell", "from nominating") for _ in range(3)]
    again = make_captured_copies(load_text_recognition_dataset(folder), 3, cache_dir=False)
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(copies["image"], again["image"]))


def test_captured_copies_refuse_unknown_options_and_zero_copies(tmp_path):
    folder = line_folder(tmp_path / "lines")
    with pytest.raises(ValueError, match="options copies, small_letters_share and num_proc"):
        load_text_recognition_dataset(f"captured:{folder}:copy=3")
    with pytest.raises(ValueError, match="copies must be at least 1"):
        load_text_recognition_dataset(f"captured:{folder}:copies=0")


def test_mixture_reads_each_source_as_if_alone(tmp_path):
    folder = line_folder(tmp_path / "lines")
    mixture = load_text_recognition_dataset(
        f"synthetic-lines:max_chars=12,cache_dir=false + captured:{folder}:copies=2 + {folder}", num_samples=4, seed=3
    )
    assert mixture.column_names == ["image", "text"]
    synthetic = load_text_recognition_dataset("synthetic-lines:max_chars=12,cache_dir=false", num_samples=4, seed=3)
    assert list(mixture["text"][:4]) == list(synthetic["text"])
    assert len(mixture) == 4 + 4 + 3  # 4 of the 6 copies, then the folder's 3 lines
    assert set(mixture["text"][4:]) <= {"a move to stop", "Mr. Gaitskell", "from nominating"}


def test_mixture_names_a_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_text_recognition_dataset(f"synthetic-lines:max_chars=12,cache_dir=false + {tmp_path}/nowhere", num_samples=2)
