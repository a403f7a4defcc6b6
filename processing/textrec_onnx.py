"""Reading text lines with a textrec recognizer exported to ONNX, with onnxruntime, NumPy and Pillow only.

`textrec-export --model crnn-lines --format onnx --output_dir DIR` writes this file into `DIR` beside
`model.onnx` (fp32), `model_int8.onnx` (int8 weights), `tokenizer.json` and `onnx_config.json`. Where neither
textrec nor torch is installed (`pip install onnxruntime numpy pillow`):

    python DIR/textrec_onnx.py DIR line1.png line2.png            # one line of text per image
    python DIR/textrec_onnx.py DIR --int8 scans/*.png             # the int8 model

or from Python, with `DIR` on `sys.path`:

    from textrec_onnx import OnnxLineReader
    reader = OnnxLineReader("DIR")                                 # model_int8.onnx: OnnxLineReader("DIR", int8=True)
    reader.read(["line1.png", "line2.png"])                        # ["...", "..."]

It gives the text that textrec's own reading (`textrec.processing.inference.recognize`, CTC decoding) gives:
it repeats the image processor's steps (`TextRecognitionImageProcessor`: 8-bit luminance, text polarity, ink crop
and margin, bicubic resize to the model's height, normalisation, right padding with a pixel mask) with the
settings the export wrote from that processor into `onnx_config.json`, and CTC's best path with the tokenizer's
vocabulary; or, where the model reads by prefix beam search with a character n-gram (`ctc_search` and
`language_model` in `onnx_config.json`), that search (`ctc_beam_search.py`, copied beside this file, NumPy only) with
the n-gram's tables (`language_model.npz`). The graph returns per-column log-probabilities (`log_probs`, the blank
at the pad id) and the mask of the columns that lie on the image (`column_mask`) for other decoders.

This file is textrec's `textrec.processing.textrec_onnx`, copied as it is; it imports nothing of textrec but the files
copied beside it (`luminance.py`, the grey of images PIL's conversions would lose, always; the beam search and the
slant correction where the model needs them), or, inside textrec, their own modules.
"""

import argparse
import functools
import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

CONFIG_FILE = "onnx_config.json"
MODEL_FILE = "model.onnx"
INT8_MODEL_FILE = "model_int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
FORMAT = "textrec-onnx-ctc"
"""The `format` of `onnx_config.json`; its `format_version` says which settings it holds."""
FORMAT_VERSION = 3
"""Version 2 added `ctc_search` and `language_model` (prefix beam search with a character n-gram); a version 1
folder reads by best path as before. Version 3 added the image processor's `deslant` (an earlier reader would read
such a folder without correcting the slant); a folder without it does not deslant."""
READABLE_FORMAT_VERSIONS = (1, 2, 3)
LANGUAGE_MODEL_FILE = "language_model.npz"
BEAM_SEARCH_FILE = "ctc_beam_search.py"
"""The prefix beam search and the n-gram's lookup, copied beside this file for a model that reads with them."""
SLANT_CORRECTION_FILE = "slant_correction.py"
"""textrec's slant correction, copied beside this file for a model whose image processor deslants (NumPy and Pillow)."""
LUMINANCE_FILE = "luminance.py"
"""textrec's grey of images its conversions would lose (integer depths, colour alone), copied beside this file."""
EXPORTED_FILES = (MODEL_FILE, INT8_MODEL_FILE, CONFIG_FILE, TOKENIZER_FILE, Path(__file__).name, "README.md",
                  LANGUAGE_MODEL_FILE, BEAM_SEARCH_FILE, SLANT_CORRECTION_FILE, LUMINANCE_FILE)
"""What an ONNX export writes into its folder (this reader among them): an export over it replaces these."""

RESAMPLE = Image.Resampling.BICUBIC
MIN_INK_CONTRAST = 24
"""Grey levels between the darkest and lightest pixels (`CONTRAST_PERCENTILES`) below which an image is blank."""
CONTRAST_PERCENTILES = (0.5, 99.5)
"""The percentiles taken as an image's darkest and lightest pixels (a line's ink may be under 2% of a loose crop)."""
SIXTEEN_BIT_MODES = ("I;16", "I;16B", "I;16L", "I;16N")
EXIF_ORIENTATION = 0x0112


# Image loading: textrec's `load_image`, for files, PIL images and 8-bit arrays.


def load_image(source) -> Image.Image:
    """`source` (a file path, a PIL image, or a uint8 array of shape (height, width[, 3 or 4])) as an 8-bit "L"
    or "RGB" image: EXIF orientation applied, transparency composited on white, text told from its ground by colour
    alone made grey along the colours' main axis (`colour_contrast_grey`)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ValueError(f"image file {path!r} not found")
        if os.path.isfile(path) and os.path.getsize(path) == 0:
            raise ValueError(f"image file {path!r} is empty (0 bytes)")
        try:
            with Image.open(path) as opened:
                opened.load()
                image = ImageOps.exif_transpose(opened)
        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
            raise ValueError(f"cannot read image file {path!r}: {error}") from error
    elif isinstance(source, Image.Image):
        image = ImageOps.exif_transpose(source) if source.getexif().get(EXIF_ORIENTATION, 1) != 1 else source
    elif isinstance(source, np.ndarray) and source.dtype == np.uint8 and source.ndim in (2, 3):
        image = Image.fromarray(source[:, :, 0] if source.ndim == 3 and source.shape[2] == 1 else source)
    else:
        raise TypeError(f"expected a file path, a PIL image or a uint8 array, got {type(source).__name__}")
    if image.width == 0 or image.height == 0:
        raise ValueError(f"zero-size image: width {image.width}, height {image.height}")
    image = _to_8bit_l_or_rgb(image)
    if image.mode == "RGB":
        image = _sibling_module(LUMINANCE_FILE).colour_contrast_grey(image) or image
    return image


def _to_8bit_l_or_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "F":
        values = np.asarray(image, dtype=np.float64)
        low, high = float(values.min()), float(values.max())
        if low < 0.0 or high > 255.0 or (1.0 < high < 2.0):
            raise ValueError(f'a mode "F" image with values from {low:g} to {high:g}; expected 0..1 or 0..255')
        return Image.fromarray(np.round(values * 255.0 if high <= 1.0 else values).astype(np.uint8))
    if image.mode == "I":
        values = np.asarray(image, dtype=np.int64)
        low, high = int(values.min()), int(values.max())
        if low < 0 or high > 65535:
            raise ValueError(f'a mode "I" image with values from {low} to {high}; expected 0..255 or 0..65535')
        white = _sibling_module(LUMINANCE_FILE).full_scale(high)
        return Image.fromarray(np.round(values * (255.0 / white)).astype(np.uint8))
    if image.mode in SIXTEEN_BIT_MODES:
        values = np.asarray(image, dtype=np.float64)
        high = int(values.max()) if values.size else 0
        white = _sibling_module(LUMINANCE_FILE).full_scale(high)
        return Image.fromarray(np.round(np.clip(values / white, 0.0, 1.0) * 255.0).astype(np.uint8))
    if image.has_transparency_data:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    if image.mode in ("L", "RGB"):
        return image
    return image.convert("L" if image.mode == "1" else "RGB")


# Capture normalisation: textrec's `normalize_capture` (polarity, ink crop and margin).


def otsu_threshold(luminance: np.ndarray) -> float:
    """The grey level that best splits the 8-bit values into two classes (Otsu's method)."""
    counts = np.bincount(luminance.ravel().astype(np.uint8), minlength=256).astype(np.float64)
    levels = np.arange(256, dtype=np.float64)
    weight_below = np.cumsum(counts)
    weight_above = weight_below[-1] - weight_below
    sum_below = np.cumsum(counts * levels)
    mean_below = sum_below / np.maximum(weight_below, 1)
    mean_above = (sum_below[-1] - sum_below) / np.maximum(weight_above, 1)
    between = weight_below * weight_above * (mean_below - mean_above) ** 2
    return float(np.argmax(between)) + 0.5


def ink_contrast(luminance: np.ndarray) -> float:
    """Grey levels between an 8-bit luminance image's darkest and lightest pixels (`CONTRAST_PERCENTILES`); under
    `MIN_INK_CONTRAST`, `sparse_ink_contrast` where higher (a word in a large blank image)."""
    luminance_module = _sibling_module(LUMINANCE_FILE)
    low, high = luminance_module.grey_percentiles(luminance, CONTRAST_PERCENTILES)
    contrast = float(high - low)
    return contrast if contrast >= MIN_INK_CONTRAST else max(contrast, luminance_module.sparse_ink_contrast(luminance))


def has_light_text(luminance: np.ndarray) -> bool:
    """Whether an 8-bit luminance image shows light text on a dark background: the background is the Otsu class
    most of the border belongs to, or, where the border is split about evenly, the class holding most pixels."""
    if ink_contrast(luminance) < MIN_INK_CONTRAST:
        return False
    light = luminance > otsu_threshold(luminance)
    border = np.concatenate([light[0], light[-1], light[:, 0], light[:, -1]])
    light_border = float(border.mean())
    if abs(light_border - 0.5) > 0.1:
        return light_border < 0.5
    return float(light.mean()) < 0.5


def ink_box(luminance: np.ndarray) -> tuple[int, int, int, int] | None:
    """`(left, top, right, bottom)` of the dark text of an 8-bit luminance image, or None for a blank image; rows
    and columns with a single ink pixel or under 2% of the busiest one's ink do not extend it."""
    if ink_contrast(luminance) < MIN_INK_CONTRAST:
        return None
    ink = luminance < otsu_threshold(luminance)
    rows, columns = ink.sum(axis=1), ink.sum(axis=0)
    kept_rows = np.flatnonzero(rows >= max(2, 0.02 * rows.max()))
    kept_columns = np.flatnonzero(columns >= max(2, 0.02 * columns.max()))
    if kept_rows.size == 0 or kept_columns.size == 0:
        return None
    return int(kept_columns[0]), int(kept_rows[0]), int(kept_columns[-1]) + 1, int(kept_rows[-1]) + 1


def background_fill(image: Image.Image, luminance: np.ndarray) -> int | tuple[int, ...]:
    """The background's colour: the median of the pixels lighter than `otsu_threshold` (grey or RGB)."""
    is_background = luminance >= otsu_threshold(luminance)
    pixels = np.asarray(image)[is_background] if is_background.any() else np.asarray(image).reshape(luminance.size, -1)
    fill = tuple(int(value) for value in np.median(pixels, axis=0).reshape(-1))
    return fill if len(fill) > 1 else fill[0]


def trim_blank_margins(image: Image.Image, luminance: np.ndarray, max_side_margin: float | None,
                       max_vertical_margin: float | None = None,
                       cut_vertical_margin: float | None = None) -> Image.Image:
    """The image with a blank margin wider than `max_side_margin` ink heights left or right of its ink cut to that
    width, and one higher than `max_vertical_margin` above or below it cut to `cut_vertical_margin` ink heights (to
    `max_vertical_margin` where that is None or lower) (None: those margins stay), where that margin is blank
    (`luminance.is_blank_margin`)."""
    box = ink_box(luminance)
    if box is None:
        return image
    left, top, right, bottom = box
    height, contrast = bottom - top, ink_contrast(luminance)
    crop = [0, 0, image.width, image.height]
    if max_side_margin is not None:
        limit = round(max_side_margin * height)
        if left - limit > 0 and _sibling_module(LUMINANCE_FILE).is_blank_margin(luminance[:, : left - limit], contrast, height):
            crop[0] = left - limit
        if right + limit < image.width and _sibling_module(LUMINANCE_FILE).is_blank_margin(luminance[:, right + limit:], contrast, height):
            crop[2] = right + limit
    if max_vertical_margin is not None:
        limit = round(max_vertical_margin * height)
        kept = limit if cut_vertical_margin is None else round(min(cut_vertical_margin, max_vertical_margin) * height)
        if top > limit and _sibling_module(LUMINANCE_FILE).is_blank_margin(luminance[: top - kept], contrast, height):
            crop[1] = top - kept
        if image.height - bottom > limit and _sibling_module(LUMINANCE_FILE).is_blank_margin(luminance[bottom + kept:], contrast, height):
            crop[3] = bottom + kept
    return image if crop == [0, 0, image.width, image.height] else image.crop(tuple(crop))


def normalize_capture(image: Image.Image, text_polarity: str, crop_margin: float | None,
                      deslant: bool = False, max_side_margin: float | None = None,
                      max_vertical_margin: float | None = None,
                      cut_vertical_margin: float | None = None, max_blank_gap: float | None = None) -> Image.Image:
    """Dark text on a light background (`text_polarity`: "auto", "dark-on-light" or "light-on-dark"), with
    `deslant` sheared upright (`slant_correction.py`), and, with `crop_margin`, cropped to the ink and framed by
    `crop_margin` ink heights of the background's grey; else, with `max_side_margin`, `max_vertical_margin` and
    `cut_vertical_margin`, its blank margins left and right, and above and below, cut where wider
    (`trim_blank_margins`), and with `max_blank_gap` its blank gaps between words filled with the paper where wider
    (`luminance.fill_blank_gaps`)."""
    luminance = np.asarray(image.convert("L") if image.mode != "L" else image)
    if text_polarity == "light-on-dark" or (text_polarity == "auto" and has_light_text(luminance)):
        image, luminance = ImageOps.invert(image), 255 - luminance
    if deslant:
        image = _sibling_module(SLANT_CORRECTION_FILE).deslant(image, background_fill(image, luminance), otsu_threshold(luminance))
        luminance = np.asarray(image.convert("L") if image.mode != "L" else image)
    if crop_margin is None:
        if max_blank_gap is not None:  # inside the ink's box: the margins' cut below sees the same image
            image = _sibling_module(LUMINANCE_FILE).fill_blank_gaps(
                image, luminance, ink_box(luminance), otsu_threshold(luminance), lambda: background_fill(image, luminance),
                max_blank_gap)
        return trim_blank_margins(image, luminance, max_side_margin, max_vertical_margin, cut_vertical_margin)
    box = ink_box(luminance)
    if box is None:
        return image
    left, top, right, bottom = box
    margin = round(crop_margin * (bottom - top))
    cropped = image.crop((left, top, right, bottom))
    framed = Image.new(image.mode, (cropped.width + 2 * margin, cropped.height + 2 * margin),
                       background_fill(image, luminance))
    framed.paste(cropped, (margin, margin))
    return framed


# The image processor's contract, from `onnx_config.json`'s `image_processor` (the processor's own settings).


class LinePreprocessor:
    """Images to the model's inputs, as textrec's `TextRecognitionImageProcessor` in `"keep_aspect"` mode makes
    them: `pixel_values` float32 (batch, channels, height, batch_width) and `pixel_mask` int64 (batch, height,
    batch_width), 1 on image pixels.

    Args:
        settings: the image processor's settings (`TextRecognitionImageProcessor.to_dict()`).
    """

    def __init__(self, settings: dict):
        if settings.get("resize_mode") != "keep_aspect":
            raise ValueError("the ONNX reader reads line models (resize_mode 'keep_aspect'), got "
                             f"{settings.get('resize_mode')!r}")
        self.num_channels = settings["num_channels"]
        self.height = settings["height"]
        self.max_width = settings["max_width"]
        self.width_multiple = settings["width_multiple"]
        self.min_right_padding = settings["min_right_padding"]
        self.invert = settings["invert"]
        self.do_normalize = settings["do_normalize"]
        self.image_mean = np.array(settings["image_mean"], dtype=np.float32)
        self.image_std = np.array(settings["image_std"], dtype=np.float32)
        self.padding_value = settings["padding_value"]
        self.text_polarity = settings["text_polarity"]
        self.crop_margin = settings["crop_margin"]
        self.max_side_margin = settings.get("max_side_margin")  # None in a folder exported before these were settings
        self.max_vertical_margin = settings.get("max_vertical_margin")
        self.cut_vertical_margin = settings.get("cut_vertical_margin")  # None in a folder exported before it was one
        self.max_blank_gap = settings.get("max_blank_gap")  # None in a folder exported before it was one
        self.deslant = settings.get("deslant", False)

    def output_size(self, height: int, width: int) -> tuple[int, int]:
        """`(height, width)` after resizing: `height` rows, the width scaled alike (at least 1, at most `max_width`)."""
        return self.height, min(max(1, round(width * self.height / height)), self.max_width)

    def image_to_array(self, image: Image.Image) -> np.ndarray:
        """An 8-bit "L"/"RGB" image to float32 (channels, height, resized_width), normalised."""
        image = image.convert("L" if self.num_channels == 1 else "RGB")
        image = normalize_capture(image, self.text_polarity, self.crop_margin, self.deslant, self.max_side_margin,
                                  self.max_vertical_margin, self.cut_vertical_margin, self.max_blank_gap)
        height, width = self.output_size(image.height, image.width)
        if image.size != (width, height):
            image = image.resize((width, height), resample=RESAMPLE)
        values = np.asarray(image, dtype=np.float32).reshape(height, width, -1) / 255.0
        return self.normalize(values).transpose(2, 0, 1)

    def normalize(self, values: np.ndarray) -> np.ndarray:
        """Invert and normalise [0, 1] values; the last axis is the channel."""
        if self.invert:
            values = 1.0 - values
        if self.do_normalize:
            values = (values - self.image_mean) / self.image_std
        return values

    def padding_values(self) -> np.ndarray:
        if self.padding_value is not None:
            return np.full(self.num_channels, self.padding_value, dtype=np.float32)
        return self.normalize(np.ones(self.num_channels, dtype=np.float32))

    def __call__(self, images: list[Image.Image]) -> dict[str, np.ndarray]:
        """Loaded images (`load_image`) to `{"pixel_values", "pixel_mask"}`: each right-padded to the widest plus
        `min_right_padding` columns, rounded up to a multiple of `width_multiple`."""
        arrays = [self.image_to_array(image) for image in images]
        batch_width = max(array.shape[2] for array in arrays) + self.min_right_padding
        batch_width = -(-batch_width // self.width_multiple) * self.width_multiple
        pixel_values = np.empty((len(arrays), self.num_channels, self.height, batch_width), dtype=np.float32)
        pixel_values[...] = self.padding_values()[:, None, None]
        pixel_mask = np.zeros((len(arrays), self.height, batch_width), dtype=np.int64)
        for index, array in enumerate(arrays):
            pixel_values[index, :, :, : array.shape[2]] = array
            pixel_mask[index, :, : array.shape[2]] = 1
        return {"pixel_values": pixel_values, "pixel_mask": pixel_mask}


# CTC best path with the tokenizer's vocabulary.


class CTCVocabulary:
    """Token ids to text as textrec's processor decodes them: up to the first eos, special tokens left out,
    the characters joined with nothing between them (the tokenizer's `Fuse` decoder).

    Args:
        tokenizer: the contents of `tokenizer.json` (a `tokenizers` word-level vocabulary of characters).
        eos_token_id: the end-of-sequence id.
    """

    def __init__(self, tokenizer: dict, eos_token_id: int):
        decoder = (tokenizer.get("decoder") or {}).get("type")
        if decoder != "Fuse":
            raise ValueError(f"tokenizer.json: expected a character vocabulary (decoder 'Fuse'), got decoder {decoder!r}")
        self.tokens = {index: token for token, index in tokenizer["model"]["vocab"].items()}
        self.tokens.update({added["id"]: added["content"] for added in tokenizer.get("added_tokens", [])})
        self.special_ids = {added["id"] for added in tokenizer.get("added_tokens", []) if added.get("special")}
        self.eos_token_id = eos_token_id

    def decode(self, ids) -> str:
        pieces = []
        for token_id in ids:
            if token_id == self.eos_token_id:
                break
            if token_id not in self.special_ids:
                pieces.append(self.tokens[int(token_id)])
        return "".join(pieces)


def ctc_best_path(log_probs: np.ndarray, column_mask: np.ndarray, blank_token_id: int) -> list[list[int]]:
    """The most likely token per column, repeats merged, blanks and columns off the image removed.

    Args:
        log_probs: `(batch, columns, vocab_size)`.
        column_mask: `(batch, columns)`, 1 on columns of image pixels.
    """
    best = log_probs.argmax(axis=-1)
    keep = best != blank_token_id
    keep[:, 1:] &= best[:, 1:] != best[:, :-1]
    keep &= column_mask.astype(bool)
    return [row[kept].tolist() for row, kept in zip(best, keep)]


TEXTREC_MODULES = {BEAM_SEARCH_FILE: "textrec.modeling.crnn.ctc_beam_search",
                   SLANT_CORRECTION_FILE: "textrec.processing.slant_correction",
                   LUMINANCE_FILE: "textrec.processing.luminance"}
"""Where textrec keeps each file the reader may find beside it."""


@functools.cache
def _sibling_module(file_name: str):
    """The module of `file_name` (of `TEXTREC_MODULES`): the file beside this one in an exported folder, else
    textrec's own."""
    beside = Path(__file__).with_name(file_name)
    if not beside.is_file():
        return importlib.import_module(TEXTREC_MODULES[file_name])
    spec = importlib.util.spec_from_file_location(beside.stem, beside)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class OnnxLineReader:
    """A line recognizer exported by `textrec-export --format onnx`, read with onnxruntime.

    Args:
        folder: the exported folder.
        int8: read with `model_int8.onnx` (int8 weights) instead of `model.onnx`.
        num_threads: onnxruntime's intra-op threads (0: onnxruntime's choice, every core).
        graph_optimization_level: onnxruntime's `GraphOptimizationLevel` name (`ORT_ENABLE_ALL` by default).
    """

    def __init__(self, folder: str | os.PathLike, int8: bool = False, num_threads: int = 0,
                 graph_optimization_level: str = "ORT_ENABLE_ALL"):
        import onnxruntime

        folder = Path(folder)
        config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        if config.get("format") != FORMAT or config.get("format_version") not in READABLE_FORMAT_VERSIONS:
            raise ValueError(f"{folder / CONFIG_FILE}: not a {FORMAT} folder of version "
                             f"{' or '.join(map(str, READABLE_FORMAT_VERSIONS))} "
                             f"(format {config.get('format')!r}, version {config.get('format_version')!r})")
        self.config = config
        self.preprocess = LinePreprocessor(config["image_processor"])
        tokenizer = json.loads((folder / TOKENIZER_FILE).read_text(encoding="utf-8"))
        self.vocabulary = CTCVocabulary(tokenizer, config["eos_token_id"])
        self.blank_token_id = config["blank_token_id"]
        self.window_batches = config["sort_window_batches"]
        self.image_checks = config.get("image_checks")  # None in a folder exported before the reader warned
        self.search = config.get("ctc_search") or {}
        self.language_model = None
        if self.search:
            beam_search = _sibling_module(BEAM_SEARCH_FILE)
            if config.get("language_model"):
                tables = np.load(folder / config["language_model"]["file"])
                self.language_model = beam_search.CharacterNGramTables(
                    config["language_model"]["order"], config["language_model"]["vocab_size"],
                    **{name: tables[name] for name in tables.files})
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = num_threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, graph_optimization_level)
        self.session = onnxruntime.InferenceSession(
            str(folder / (INT8_MODEL_FILE if int8 else MODEL_FILE)), options, providers=["CPUExecutionProvider"])

    def log_probs(self, images: list[Image.Image]) -> tuple[np.ndarray, np.ndarray]:
        """`(log_probs (batch, columns, vocab_size), column_mask (batch, columns))` of one batch of loaded images."""
        log_probs, column_mask = self.session.run(self.config["outputs"], self.preprocess(images))
        return log_probs, column_mask

    def read_batch(self, images: list[Image.Image]) -> list[str]:
        """The texts of one batch of loaded images (`load_image`)."""
        log_probs, column_mask = self.log_probs(images)
        if not self.search:
            return [self.vocabulary.decode(ids) for ids in ctc_best_path(log_probs, column_mask, self.blank_token_id)]
        search = _sibling_module(BEAM_SEARCH_FILE).ctc_prefix_beam_search
        return [self.vocabulary.decode(search(
            row[mask.astype(bool)].astype(np.float64), self.blank_token_id, self.search["num_beams"], self.language_model,
            self.search["language_model_weight"], self.search["length_bonus"], self.vocabulary.eos_token_id,
            frozenset(self.search["skip_token_ids"]), frozenset(self.search.get("line_break_token_ids", ()))))
            for row, mask in zip(log_probs, column_mask)]

    def image_warning(self, image: Image.Image) -> str | None:
        """Why a loaded image holds no text to read, as textrec's `size_warning` says it (a side shorter than
        `min_image_side`, an ink contrast under `blank_contrast`), or None. Such an image is still read."""
        if not self.image_checks:
            return None
        if min(image.width, image.height) < self.image_checks["min_image_side"]:
            return f"tiny image ({image.width}x{image.height} pixels, width x height)"
        contrast = ink_contrast(np.asarray(image.convert("L")))
        if contrast < self.image_checks["blank_contrast"]:
            return (f"it looks blank (its darkest and lightest pixels differ by {contrast:.0f} grey levels): there "
                    "is no text in it to read")
        return None

    def read(self, images: list, batch_size: int = 32, errors: dict[int, str] | None = None,
             warnings: dict[int, str] | None = None) -> list[str | None]:
        """The text of each image (paths, PIL images or uint8 arrays), in order. As textrec's `recognize()`, the
        images are read in windows of `sort_window_batches` batches, each window sorted by aspect ratio, so that
        lines of like width share a batch and little is padded. An image that cannot be loaded raises its
        `ValueError`, or, where `errors` is given, is read as None, its index and message put into `errors`, and the
        others are read all the same. Where `warnings` is given, an image that holds no text to read
        (`image_warning`) has its index and why put into it (it is read all the same)."""
        texts: list[str | None] = [""] * len(images)
        window = batch_size * self.window_batches
        for begin in range(0, len(images), window):
            loaded = {}
            for index in range(begin, min(begin + window, len(images))):
                try:
                    loaded[index] = load_image(images[index])
                except ValueError as error:
                    if errors is None:
                        raise
                    errors[index], texts[index] = f"image {index + 1} of {len(images)}: {error}", None
                    continue
                warning = self.image_warning(loaded[index]) if warnings is not None else None
                if warning:
                    warnings[index] = f"image {index + 1} of {len(images)}: {warning}"
            by_shape = sorted(loaded, key=lambda index: loaded[index].width / max(loaded[index].height, 1))
            for start in range(0, len(by_shape), batch_size):
                batch = by_shape[start : start + batch_size]
                for index, text in zip(batch, self.read_batch([loaded[index] for index in batch])):
                    texts[index] = text
        return texts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Print the text of each line image, read with an ONNX export of a textrec recognizer.")
    parser.add_argument("folder", help="The folder textrec-export --format onnx wrote.")
    parser.add_argument("images", nargs="+", help="Image files.")
    parser.add_argument("--int8", action="store_true", help="Read with model_int8.onnx (int8 weights).")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--num_threads", type=int, default=0, help="onnxruntime threads (0: every core).")
    parser.add_argument("--show_paths", action="store_true", help="Print 'path<TAB>text'.")
    args = parser.parse_args(argv)
    errors: dict[int, str] = {}
    warnings: dict[int, str] = {}
    try:
        reader = OnnxLineReader(args.folder, int8=args.int8, num_threads=args.num_threads)
        texts = reader.read(args.images, batch_size=args.batch_size, errors=errors, warnings=warnings)
    except (ValueError, OSError) as error:  # a missing or unreadable folder: one line, not a traceback
        parser.exit(1, f"{parser.prog}: error: {error}\n")
    for index in sorted({**errors, **warnings}):
        print(f"{parser.prog}: {errors[index]}" if index in errors else
              f"{parser.prog}: {warnings[index]}; read all the same", file=sys.stderr)
    # one output line per image, an empty one for an image that could not be read: lines stay in step with images
    for path, text in zip(args.images, texts):
        print(f"{path}\t{text or ''}" if args.show_paths else text or "")
    if errors:
        parser.exit(1, f"{parser.prog}: {len(errors)} of {len(args.images)} images could not be read\n")


if __name__ == "__main__":
    sys.exit(main())
