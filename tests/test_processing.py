"""Tests of the shared processing blocks: char tokenizer, image processor, processor (offline, fast)."""

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from transformers import AutoTokenizer

from textrec.processing.image_processing_text_recognition import TextRecognitionImageProcessor, load_image
from textrec.processing.processing_text_recognition import TextRecognitionProcessor
from textrec.processing.tokenization_char import DEFAULT_CHARSET, build_char_tokenizer, load_charset


PAD, BOS, EOS, UNK = 0, 1, 2, 3


def char_id(character: str) -> int:
    """Id of a DEFAULT_CHARSET character in the default tokenizer."""
    return 4 + DEFAULT_CHARSET.index(character)


@pytest.fixture(scope="module")
def tokenizer():
    return build_char_tokenizer()


@pytest.fixture
def processor(tokenizer):
    return TextRecognitionProcessor(TextRecognitionImageProcessor(), tokenizer)


def reference_array() -> np.ndarray:
    """uint8 (16, 40): black left half, white right half."""
    array = np.full((16, 40), 255, dtype=np.uint8)
    array[:, :20] = 0
    return array


def reference_pixels() -> np.ndarray:
    """What the default image processor makes of `reference_array()`: float32 (1, 1, 32, 80)."""
    return TextRecognitionImageProcessor()(Image.fromarray(reference_array()))["pixel_values"].numpy()


# --- tokenizer -------------------------------------------------------------------------------------


def test_default_charset_is_printable_ascii():
    assert DEFAULT_CHARSET == "".join(chr(code) for code in range(32, 127))
    assert len(DEFAULT_CHARSET) == 95


def test_special_token_ids(tokenizer):
    ids = (tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id)
    assert ids == (PAD, BOS, EOS, UNK)
    assert tokenizer.convert_ids_to_tokens([0, 1, 2, 3]) == ["<pad>", "<s>", "</s>", "<unk>"]
    assert len(tokenizer) == 4 + 95


def test_characters_follow_special_tokens_in_charset_order():
    assert build_char_tokenizer("bab c").get_vocab() == {
        "<pad>": 0,
        "<s>": 1,
        "</s>": 2,
        "<unk>": 3,
        "b": 4,
        "a": 5,
        " ": 6,
        "c": 7,
    }


def test_encoding_is_one_id_per_character(tokenizer):
    ids = tokenizer("ab c", add_special_tokens=False).input_ids
    assert ids == [char_id("a"), char_id("b"), char_id(" "), char_id("c")]


def test_encoding_appends_eos_by_default(tokenizer):
    assert tokenizer("ab").input_ids == [char_id("a"), char_id("b"), EOS]


def test_decoding_restores_text_exactly(tokenizer):
    text = "  two  spaces,then (none) ~ "
    assert tokenizer.decode(tokenizer(text).input_ids, skip_special_tokens=True) == text


def test_unknown_character_maps_to_unk(tokenizer):
    assert tokenizer("a€", add_special_tokens=False).input_ids == [char_id("a"), UNK]


def test_special_token_text_is_ordinary_characters(tokenizer):
    ids = tokenizer("<s>", add_special_tokens=False).input_ids
    assert ids == [char_id("<"), char_id("s"), char_id(">")]


def test_a_letter_and_its_combining_marks_are_one_token(tmp_path):
    """An old umlaut as the Deutsches Textarchiv writes it (u and U+0364) is one token, as the precomposed ü is; in the
    charset too, where the mark joins the letter before it. The tokenizer reloads without textrec and splits alike."""
    from textrec.processing.tokenization_char import characters_of

    assert characters_of("Bru\u0364cke \u0364") == ["B", "r", "u\u0364", "c", "k", "e", " \u0364"]
    tokenizer = build_char_tokenizer("abcekruü" + "u\u0364")
    vocabulary = tokenizer.get_vocab()
    assert sorted(vocabulary, key=vocabulary.get)[4:] == list("abcekruü") + ["u\u0364"]
    ids = tokenizer("Brue\u0364cke u\u0364ber", add_special_tokens=False).input_ids
    assert ids.count(tokenizer.convert_tokens_to_ids("u\u0364")) == 1 and ids.count(UNK) == 3  # B, e with the mark, the space
    assert tokenizer.decode(tokenizer("ru\u0364cke").input_ids, skip_special_tokens=True) == "ru\u0364cke"
    tokenizer.save_pretrained(tmp_path)
    assert AutoTokenizer.from_pretrained(tmp_path)("ru\u0364ü").input_ids == tokenizer("ru\u0364ü").input_ids


def test_tokenizer_reloads_without_custom_code(tokenizer, tmp_path):
    tokenizer.save_pretrained(tmp_path)
    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    text = " a<s>b  c€"
    assert type(reloaded).__name__ == "TokenizersBackend"
    assert reloaded(text).input_ids == tokenizer(text).input_ids
    assert reloaded.decode(reloaded(" a b ").input_ids, skip_special_tokens=True) == " a b "
    ids = (reloaded.pad_token_id, reloaded.bos_token_id, reloaded.eos_token_id, reloaded.unk_token_id)
    assert ids == (PAD, BOS, EOS, UNK)


def test_load_charset_reads_file_without_newlines(tmp_path):
    path = tmp_path / "charset.txt"
    path.write_text("abc\nd e\r\nf\n", encoding="utf-8-sig")
    assert load_charset(path) == "abcd ef"
    assert load_charset(str(path)) == "abcd ef"


def test_load_charset_returns_plain_string():
    assert load_charset("xyz") == "xyz"


@pytest.mark.parametrize("source", ["", "missing/charset.txt"])
def test_load_charset_rejects_empty_or_missing(source):
    with pytest.raises(ValueError, match="empty" if not source else "not found"):
        load_charset(source)


def test_load_charset_rejects_empty_file(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        load_charset(path)


# --- image processor -------------------------------------------------------------------------------


def _palette_with_transparency() -> Image.Image:
    """Mode "P": left half palette 0 (black), right half palette 1 (red, marked transparent)."""
    indices = np.zeros((16, 40), dtype=np.uint8)
    indices[:, 20:] = 1
    image = Image.new("P", (40, 16))
    image.putpalette([0, 0, 0, 255, 0, 0])
    image.frombytes(indices.tobytes())
    image.info["transparency"] = 1
    return image


def _rgba() -> Image.Image:
    """Left half opaque black, right half transparent black (white once composited)."""
    array = np.zeros((16, 40, 4), dtype=np.uint8)
    array[:, :20, 3] = 255
    return Image.fromarray(array)


PIL_IMAGES = {
    "1": lambda: Image.fromarray(reference_array() > 127),
    "L": lambda: Image.fromarray(reference_array()),
    "P": lambda: Image.fromarray(reference_array()).convert("P"),
    "P-transparency": _palette_with_transparency,
    "RGB": lambda: Image.fromarray(reference_array()).convert("RGB"),
    "RGBA": _rgba,
    "RGBa": lambda: _rgba().convert("RGBa"),
    "LA": lambda: _rgba().convert("LA"),
    "PA": lambda: _rgba().convert("PA"),
    "I": lambda: Image.fromarray(reference_array().astype(np.int32) * 257),
    "I;16": lambda: Image.fromarray(reference_array().astype(np.uint16) * 257),
    "F": lambda: Image.fromarray(reference_array().astype(np.float32) / 255),
    "CMYK": lambda: Image.fromarray(reference_array()).convert("RGB").convert("CMYK"),
    "YCbCr": lambda: Image.fromarray(reference_array()).convert("RGB").convert("YCbCr"),
    "HSV": lambda: Image.fromarray(reference_array()).convert("RGB").convert("HSV"),
    "LAB": lambda: Image.fromarray(reference_array()).convert("RGB").convert("LAB"),
}


@pytest.mark.parametrize("name", list(PIL_IMAGES))
def test_every_pil_mode_gives_the_grayscale_result(name):
    image = PIL_IMAGES[name]()
    assert image.mode == name.split("-")[0]
    pixels = TextRecognitionImageProcessor()(image)["pixel_values"].numpy()
    np.testing.assert_allclose(pixels, reference_pixels(), atol=0.02)


NUMPY_ARRAYS = {
    "uint8 HxW": lambda a: a,
    "uint8 HxWx1": lambda a: a[:, :, None],
    "uint8 HxWx3": lambda a: np.repeat(a[:, :, None], 3, axis=2),
    "uint8 HxWx4": lambda a: np.dstack([a, a, a, np.full_like(a, 255)]),
    "uint16": lambda a: a.astype(np.uint16) * 257,
    "float32": lambda a: a.astype(np.float32) / 255,
    "float64 HxWx3": lambda a: np.repeat(a[:, :, None], 3, axis=2) / 255.0,
    "bool": lambda a: a > 127,
}


@pytest.mark.parametrize("name", list(NUMPY_ARRAYS))
def test_numpy_arrays_give_the_grayscale_result(name):
    array = NUMPY_ARRAYS[name](reference_array())
    pixels = TextRecognitionImageProcessor()(array)["pixel_values"].numpy()
    np.testing.assert_allclose(pixels, reference_pixels(), atol=1e-6)


def test_transparent_rgba_array_is_composited_on_white():
    array = np.zeros((16, 40, 4), dtype=np.uint8)  # transparent black everywhere
    pixels = TextRecognitionImageProcessor()(array)["pixel_values"]
    assert torch.all(pixels == 1.0)


@pytest.mark.parametrize(
    "array, problem", [(np.zeros((4, 4), dtype=np.int64), "dtype"), (np.zeros((4, 4, 2), dtype=np.uint8), "shape")]
)
def test_unsupported_arrays_are_rejected(array, problem):
    with pytest.raises(ValueError, match=f"image at index 0: .*{problem}"):
        TextRecognitionImageProcessor()(array)


def test_unsupported_input_type_is_rejected():
    with pytest.raises(TypeError, match="image at index 0: .*got int"):
        TextRecognitionImageProcessor()([3])


@pytest.mark.parametrize("as_type", [str, Path])
def test_file_paths_are_loaded(tmp_path, as_type):
    path = tmp_path / "line.png"
    Image.fromarray(reference_array()).save(path)
    pixels = TextRecognitionImageProcessor()(as_type(path))["pixel_values"].numpy()
    np.testing.assert_array_equal(pixels, reference_pixels())


def test_exif_orientation_is_applied(tmp_path):
    path = tmp_path / "rotated.png"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: rotate 90 degrees clockwise to view
    Image.new("L", (10, 40)).save(path, exif=exif)
    assert load_image(path).size == (40, 10)


def test_keep_aspect_pads_batch_to_widest_multiple():
    # 16x40 -> 32x80, 16x10 -> 32x20, 16x41 -> 32x82; widest 82 rounded up to 84.
    images = [np.zeros((16, 40), np.uint8), np.zeros((16, 10), np.uint8), np.zeros((16, 41), np.uint8)]
    batch = TextRecognitionImageProcessor(min_right_padding=0)(images)
    assert batch["pixel_values"].shape == (3, 1, 32, 84)
    assert batch["pixel_mask"].shape == (3, 32, 84)
    assert batch["pixel_mask"].dtype == torch.int64
    assert batch["pixel_mask"].sum(dim=2)[:, 0].tolist() == [80, 20, 82]
    # By default every image, the widest included, ends in 32 columns of padding or more: 82 + 32 rounded up to 116.
    batch = TextRecognitionImageProcessor()(images)
    assert batch["pixel_values"].shape == (3, 1, 32, 116)
    assert batch["pixel_mask"].sum(dim=2)[:, 0].tolist() == [80, 20, 82]


def test_mask_marks_content_and_padding_holds_padding_value():
    batch = TextRecognitionImageProcessor(padding_value=7.0)(
        [np.zeros((16, 40), np.uint8), np.zeros((16, 10), np.uint8)]
    )
    mask, pixels = batch["pixel_mask"][1], batch["pixel_values"][1, 0]
    assert torch.all(mask[:, :20] == 1) and torch.all(mask[:, 20:] == 0)
    assert torch.all(pixels[:, :20] == -1.0)  # black, normalised
    assert torch.all(pixels[:, 20:] == 7.0)


def test_default_padding_is_normalised_white():
    batch = TextRecognitionImageProcessor()([np.zeros((16, 40), np.uint8), np.zeros((16, 10), np.uint8)])
    assert torch.all(batch["pixel_values"][1, 0, :, 20:] == 1.0)


def test_fixed_mode_resizes_to_height_by_width():
    images = [np.zeros((16, 40), np.uint8), np.zeros((50, 10), np.uint8)]
    batch = TextRecognitionImageProcessor(resize_mode="fixed", height=24, width=100, num_channels=3)(images)
    assert batch["pixel_values"].shape == (2, 3, 24, 100)
    assert "pixel_mask" not in batch  # nothing is padded


def test_very_wide_image_is_capped_at_max_width():
    batch = TextRecognitionImageProcessor()(np.zeros((20, 2000), np.uint8))
    assert batch["pixel_values"].shape == (1, 1, 32, 512 + 32)
    assert torch.all(batch["pixel_mask"][..., :512] == 1) and torch.all(batch["pixel_mask"][..., 512:] == 0)


def test_very_narrow_image_keeps_one_column():
    batch = TextRecognitionImageProcessor(min_right_padding=0)(np.zeros((100, 1), np.uint8))
    assert batch["pixel_values"].shape == (1, 1, 32, 4)
    assert batch["pixel_mask"][0, 0].tolist() == [1, 0, 0, 0]


def test_per_channel_normalisation():
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    red = np.zeros((32, 32, 3), np.uint8)
    red[:, :, 0] = 255
    pixels = TextRecognitionImageProcessor(num_channels=3, image_mean=mean, image_std=std)(red)["pixel_values"]
    expected = [(1 - mean[0]) / std[0], (0 - mean[1]) / std[1], (0 - mean[2]) / std[2]]
    np.testing.assert_allclose(pixels[0, :, 0, 0].numpy(), expected, rtol=1e-5)


def test_without_normalisation_values_are_in_unit_range():
    pixels = TextRecognitionImageProcessor(do_normalize=False)(reference_array())["pixel_values"]
    assert pixels[0, 0, 0, 0] == 0.0 and pixels[0, 0, 0, -1] == 1.0


def test_invert_swaps_black_and_white_and_pads_with_black():
    images = [reference_array(), np.full((16, 10), 255, np.uint8)]
    pixels = TextRecognitionImageProcessor(invert=True)(images)["pixel_values"]
    assert pixels[0, 0, 0, 0] == 1.0 and pixels[0, 0, 0, -1] == -1.0  # black text became white
    assert torch.all(pixels[1, 0] == -1.0)  # white background and padding both black


def test_missing_file_error_names_the_file(tmp_path):
    path = tmp_path / "nowhere.png"
    with pytest.raises(ValueError, match=f"image at index 0: .*{path.name}.* not found"):
        TextRecognitionImageProcessor()([str(path)])


def test_corrupt_file_error_names_the_file(tmp_path):
    path = tmp_path / "corrupt.png"
    path.write_bytes(b"this is not an image")
    with pytest.raises(ValueError, match=f"cannot read image file .*{path.name}"):
        TextRecognitionImageProcessor()(path)


def test_empty_file_error_names_the_file(tmp_path):
    path = tmp_path / "empty.png"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=f"{path.name}.* is empty"):
        TextRecognitionImageProcessor()(path)


def test_zero_size_image_error_gives_the_index():
    images = [np.zeros((16, 40), np.uint8), np.zeros((0, 5), np.uint8)]
    with pytest.raises(ValueError, match="image at index 1: zero-size image"):
        TextRecognitionImageProcessor()(images)


@pytest.mark.parametrize(
    "settings",
    [
        {"num_channels": 2},
        {"resize_mode": "stretch"},
        {"height": 0},
        {"max_width": 30, "width_multiple": 8},
        {"num_channels": 3, "image_mean": [0.5, 0.5]},
    ],
)
def test_invalid_settings_are_rejected(settings):
    with pytest.raises(ValueError):
        TextRecognitionImageProcessor(**settings)


def test_image_processor_config_round_trip(tmp_path):
    settings = dict(
        num_channels=3,
        resize_mode="keep_aspect",
        height=48,
        max_width=256,
        width=64,
        width_multiple=8,
        do_normalize=True,
        image_mean=[0.1, 0.2, 0.3],
        image_std=[0.4, 0.5, 0.6],
        padding_value=-2.0,
        invert=True,
    )
    original = TextRecognitionImageProcessor(**settings)
    original.save_pretrained(tmp_path)
    reloaded = TextRecognitionImageProcessor.from_pretrained(tmp_path)
    assert {key: getattr(reloaded, key) for key in settings} == settings
    image = np.random.default_rng(0).integers(0, 256, (20, 70, 3), dtype=np.uint8)
    torch.testing.assert_close(reloaded(image)["pixel_values"], original(image)["pixel_values"])


# --- processor -------------------------------------------------------------------------------------


def test_labels_end_with_eos_and_are_padded_with_ignore_index(processor):
    labels = processor(text_target=["ab", "c"])["labels"]
    assert labels.dtype == torch.int64
    assert labels.tolist() == [[char_id("a"), char_id("b"), EOS], [char_id("c"), EOS, -100]]


def test_images_and_targets_together(processor):
    batch = processor(images=[reference_array()] * 2, text_target=["x", "yz"])
    assert set(batch) == {"pixel_values", "pixel_mask", "labels"}
    assert batch["pixel_values"].shape[0] == batch["labels"].shape[0] == 2


def test_out_of_vocabulary_characters_give_one_warning(processor, caplog):
    with caplog.at_level(logging.WARNING):
        labels = processor(text_target=["a€€", "b¥"])["labels"]
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "3 character(s)" in warnings[0].getMessage() and "'€¥'" in warnings[0].getMessage()
    assert labels[0].tolist() == [char_id("a"), UNK, UNK, EOS]


def test_in_vocabulary_text_gives_no_warning(processor, caplog):
    with caplog.at_level(logging.WARNING):
        processor(text_target=["plain ascii"])
    assert not caplog.records


def test_label_longer_than_limit_is_an_error(tokenizer):
    processor = TextRecognitionProcessor(TextRecognitionImageProcessor(), tokenizer, max_label_length=5)
    with pytest.raises(ValueError, match=r"sample 1 has 7 tokens \(6 characters.*max_label_length=5"):
        processor(text_target=["abcd", "abcdef"])


def test_max_label_length_argument_overrides_attribute(processor):
    with pytest.raises(ValueError, match="max_label_length=3"):
        processor(text_target="abc", max_label_length=3)


def test_text_prefix_gives_left_padded_decoder_inputs(processor):
    batch = processor(text=["", "ab"])
    assert batch["decoder_input_ids"].tolist() == [[PAD, PAD, BOS], [BOS, char_id("a"), char_id("b")]]
    assert batch["decoder_attention_mask"].tolist() == [[0, 0, 1], [1, 1, 1]]
    assert "labels" not in batch


@pytest.mark.parametrize("inputs", [dict(images=[reference_array()], text_target=["a", "b"]), dict(text_target=[])])
def test_batch_sizes_must_agree_and_be_non_zero(processor, inputs):
    with pytest.raises(ValueError, match="batch sizes must be equal and non-zero"):
        processor(**inputs)


@pytest.mark.parametrize("as_type", [list, np.array, torch.tensor])
def test_batch_decode_reads_ignore_index_and_stops_at_eos(processor, as_type):
    a, b = char_id("a"), char_id("b")
    sequences = as_type([[BOS, a, char_id(" "), b, EOS, a, PAD], [a, EOS, -100, -100, -100, -100, -100]])
    assert processor.batch_decode(sequences) == ["a b", "a"]


def test_decode_can_keep_special_tokens(processor):
    assert processor.decode([BOS, char_id("a"), EOS, char_id("b")], skip_special_tokens=False) == "<s>a</s>"


def test_processor_round_trip(processor, tmp_path):
    processor.max_label_length = 64
    processor.save_pretrained(tmp_path)
    reloaded = TextRecognitionProcessor.from_pretrained(tmp_path)
    assert type(reloaded.image_processor) is TextRecognitionImageProcessor
    assert reloaded.max_label_length == 64
    assert reloaded.image_processor.to_dict() == processor.image_processor.to_dict()
    inputs = dict(images=[reference_array()], text_target=["héllo"])
    original, restored = processor(**inputs), reloaded(**inputs)
    torch.testing.assert_close(restored["pixel_values"], original["pixel_values"])
    assert restored["labels"].tolist() == original["labels"].tolist()


HUB_LOADER = textwrap.dedent(
    """
    import importlib.abc, json, sys
    import numpy as np

    class BlockTextrec(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "textrec" or name.startswith("textrec."):
                raise ModuleNotFoundError(f"textrec is blocked: {name}")
            return None

    sys.meta_path.insert(0, BlockTextrec())
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(sys.argv[1], trust_remote_code=True)
    batch = processor(images=[np.load(sys.argv[2])], text_target=["a b~"], text=[""])
    print(json.dumps({
        "type": type(processor).__name__,
        "image_processor_type": type(processor.image_processor).__name__,
        "pixel_values": batch["pixel_values"].flatten().tolist(),
        "labels": batch["labels"].tolist(),
        "decoder_input_ids": batch["decoder_input_ids"].tolist(),
        "decoded": processor.batch_decode(batch["labels"]),
    }))
    """
)


def test_hub_folder_loads_without_textrec(processor, tmp_path):
    folder, work = tmp_path / "hub", tmp_path / "work"
    work.mkdir()
    processor.save_pretrained(folder)
    image = np.random.default_rng(0).integers(0, 256, (16, 30), dtype=np.uint8)
    np.save(tmp_path / "image.npy", image)
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"))
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-c", HUB_LOADER, str(folder), str(tmp_path / "image.npy")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    expected = processor(images=[image], text_target=["a b~"], text=[""])
    assert (loaded["type"], loaded["image_processor_type"]) == (
        "TextRecognitionProcessor",
        "TextRecognitionImageProcessor",
    )
    np.testing.assert_allclose(loaded["pixel_values"], expected["pixel_values"].flatten().numpy(), atol=1e-6)
    assert loaded["labels"] == expected["labels"].tolist()
    assert loaded["decoder_input_ids"] == expected["decoder_input_ids"].tolist()
    assert loaded["decoded"] == ["a b~"]
