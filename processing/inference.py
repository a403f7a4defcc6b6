"""Loading a trained recognizer and reading many images with it, in batches, with a progress bar."""

import json
import logging
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from huggingface_hub import try_to_load_from_cache
from PIL import Image
from safetensors import safe_open
from tokenizers import Tokenizer
from tqdm.auto import tqdm
from transformers import AutoModelForImageTextToText, AutoProcessor
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

from textrec.model_cards import released_detector_names, released_model_names, resolve_model_path
from textrec.modeling import ARCHITECTURES, LineDetectorConfig

from .checkpoints import load_pretrained
from .image_processing_text_recognition import load_image
from .old_umlauts import write_old_umlauts
from .pipeline_text_recognition import (
    DECODINGS,
    CTCAlignment,
    available_decodings,
    batches_read_as_alone,
    character_confidences,
    check_reading_options,
    preferred_decoding,
    read_batch,
    read_batch_with_confidences,
)

logger = logging.getLogger(__name__)

MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
"""What a model folder needs besides the processor settings (`processor_config.json`)."""
RUN_RECORD = "_textrec_run.json"
"""The record a training run keeps in its output folder (`textrec.processing.training.output_folder`): what the run
is, and whether it has finished."""
SETTINGS_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "processor_config.json",
    "preprocessor_config.json",
)
"""The JSON files of a model folder that loading reads; each must parse (`check_model_folder`)."""


def looks_like_a_path(name: str) -> bool:
    """Whether `name` is meant as a local folder rather than a Hub id ("owner/name")."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or os.sep != "/" and os.sep in name


def safetensors_problem(path: str | os.PathLike) -> str | None:
    """Why the safetensors file at `path` cannot be read (a file cut short, a corrupt header), or None."""
    try:
        with safe_open(str(path), "pt") as weights:
            for name in weights.keys():
                weights.get_slice(name)
    except Exception as error:  # safetensors raises its own error types for a truncated or corrupt file
        return str(error)
    return None


def in_hub_cache(repo_id: str) -> bool:
    """Whether the Hub repository `repo_id` has a config in the local Hub cache (so it loads offline)."""
    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except ValueError:  # not a valid repository id
        return False


def check_model_folder(folder: str | os.PathLike, required_files: Sequence[str] = MODEL_FILES) -> None:
    """Raises `FileNotFoundError` or `ValueError` naming the file of a model folder that is missing, empty or
    cut short, before transformers reads it (its own errors name no file); `required_files` are those it must
    hold (a recognizer's by default)."""
    folder = Path(folder)
    for name in required_files:
        if not (folder / name).is_file():
            raise FileNotFoundError(f"the model folder {folder} has no {name} (is it a saved textrec model?)")
        if (folder / name).stat().st_size == 0:
            raise ValueError(f"{folder / name} is empty")
    problem = safetensors_problem(folder / "model.safetensors")
    if problem is not None:
        raise ValueError(f"{folder / 'model.safetensors'} cannot be read ({problem}); is it cut short?")
    for path in (folder / name for name in SETTINGS_FILES if (folder / name).is_file()):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:  # a UnicodeDecodeError is one too
            raise ValueError(f"{path} is not valid JSON ({error}); is it cut short?") from error
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    model_type = config.get("model_type")
    if model_type not in CONFIG_MAPPING:
        known = ", ".join(sorted(config_class.model_type for config_class, _ in ARCHITECTURES.values()))
        raise ValueError(
            f"{folder / 'config.json'}: model_type {model_type!r} is no model that textrec or transformers knows "
            f"(textrec's recognizers: {known})"
        )
    if "tokenizer.json" not in required_files:
        return
    tokens = Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab_size(with_added_tokens=True)
    vocab_size = config.get("vocab_size", config.get("decoder", {}).get("vocab_size"))
    if vocab_size is not None and tokens > vocab_size:
        raise ValueError(
            f"{folder}: tokenizer.json has {tokens} tokens but config.json's vocab_size is {vocab_size}; the two "
            f"files do not belong together."
        )


def check_model_kind(folder: str, name: str, detector: bool) -> None:
    """A `ValueError` where a folder's `config.json` says it holds a text-line detector and a recognizer was
    asked for, or the other way round: the usual mix-up of `--model` and `--detector`, named as such."""
    config = Path(folder) / "config.json"
    try:
        model_type = json.loads(config.read_text()).get("model_type")
    except (OSError, ValueError, AttributeError):
        return  # check_model_folder names what is wrong with the file
    if detector and model_type != LineDetectorConfig.model_type and model_type in CONFIG_MAPPING:
        raise ValueError(f"{name} is a text recognizer ({model_type}), not a text-line detector: give it as the "
                         f"recognizer (--model), and a detector such as line-detector as --detector")
    if not detector and model_type == LineDetectorConfig.model_type:
        raise ValueError(f"{name} is a text-line detector, not a text recognizer: give it as --detector (with --page), "
                         "and a recognizer such as crnn-lines as --model")


def check_model_source(model_name_or_path: str, required_files: Sequence[str] = MODEL_FILES) -> str:
    """The folder or Hub id that `model_name_or_path` names (a released model's short name becomes its folder),
    checked before transformers reads it: a local folder by `check_model_folder`; a name that is no folder and
    no released name, and that (offline) no Hub repository in the local cache has, is reported as such (with
    offline mode named, for a Hub id), not as a failed download.

    Raises:
        FileNotFoundError: no such folder or released name, or a file of the folder is missing.
        ValueError: a file is empty or cut short; the tokenizer has more tokens than the model's vocabulary.
    """
    resolved = resolve_model_path(model_name_or_path)
    detector = "tokenizer.json" not in required_files  # a detector's folder has no tokenizer
    if Path(resolved).is_dir():
        check_model_kind(resolved, model_name_or_path, detector=detector)
        check_model_folder(resolved, required_files)
    elif looks_like_a_path(resolved) or (os.environ.get("HF_HUB_OFFLINE") == "1" and not in_hub_cache(resolved)):
        names = released_detector_names() if detector else released_model_names()
        released = ("detectors: " if detector else "") + (", ".join(names) or "none installed")
        offline = "" if looks_like_a_path(resolved) else (
            ", and no Hub model of that name in the local cache (offline mode, HF_HUB_OFFLINE=1: nothing is downloaded)")
        raise FileNotFoundError(
            f"no such model folder or released name: {model_name_or_path}{offline} (released: {released})")
    return resolved


def warn_of_unfinished_run(folder: str) -> None:
    """A warning where a training output folder holds a model and a run into it that has not finished (interrupted,
    or still training): the model read is the one saved before that run began, not what it has learned since."""
    try:
        record = json.loads((Path(folder) / RUN_RECORD).read_text())
    except (OSError, ValueError):
        return
    if isinstance(record, dict) and record.get("finished", True) is None and (Path(folder) / "model.safetensors").is_file():
        logger.warning("%s: a training run into this folder has not finished (interrupted, or still training): the "
                       "model read is the one saved there before it began; its checkpoints hold what it learned since "
                       "(run its command again to finish it)", folder)


def load_recognizer(model_name_or_path: str, device: str = "cpu", dtype: torch.dtype = torch.float32):
    """The model (in eval mode, in `dtype`) and processor of a released model's short name
    (`self-attention-lines`, see `textrec.model_cards.released_model_names()`), a folder or a Hub repository.

    Released weights are stored in fp16 to stay small; they are read in fp32 by default, which CPUs run
    fastest. The name is checked first (`check_model_source`): a broken folder names its broken file, a
    missing one is reported as such, not as a failed download. Code inside the folder is never run (no
    prompt either): textrec's own classes read it, and a `model_type` textrec does not know is an error.
    The weights must fit the model (`textrec.processing.checkpoints.load_pretrained`); a checkpoint saved by
    an earlier textrec is read in the layout it was written in.

    Raises:
        FileNotFoundError: no such folder or released name, or a file of the folder is missing.
        ValueError: a file is empty or cut short; the tokenizer has more tokens than the model's vocabulary; the
            weights do not fit the model that config.json describes (another architecture, preset, vocabulary).
    """
    resolved = check_model_source(model_name_or_path)
    warn_of_unfinished_run(resolved)
    model = load_pretrained(AutoModelForImageTextToText, resolved, dtype=dtype, trust_remote_code=False)
    processor = AutoProcessor.from_pretrained(resolved, trust_remote_code=False)
    return model.to(device).eval(), processor


@dataclass
class LineReading:
    """One image read with confidences (`iter_recognize(..., output_confidences=True)`); the definition of the
    confidences is in `textrec.processing.pipeline_text_recognition`, above `CTCAlignment`.

    Args:
        text: what was read, the same text as without confidences.
        confidence: the line's confidence, in [0, 1].
        characters: `(character, confidence)` per character read (per token, for LaTeX formulas).
        alignment: for CTC best path, which frames emitted which characters; None for the decoders.
        warning: why the image lies outside what the model reads (the image processor's `size_warning`: blank,
            tiny, several lines, a line on its side...), where it does; its reading is then not to be trusted,
            whatever its confidence (an empty reading of a blank image is a confident one).
    """

    text: str
    confidence: float
    characters: list[tuple[str, float]]
    alignment: CTCAlignment | None = None
    warning: str | None = None


@dataclass
class RecognitionResult:
    """What `recognize()` read.

    Args:
        texts: one per image, in order; None for an image that could not be read.
        seconds: wall-clock time of the whole reading (loading, preprocessing, decoding).
        errors: position in the list of images -> why that image could not be read.
        readings: with `output_confidences=True`, one `LineReading` per image (None where `texts` is None), else
            None.
    """

    texts: list[str | None]
    seconds: float
    errors: dict[int, str] = field(default_factory=dict)
    readings: list[LineReading | None] | None = None

    @property
    def confidences(self) -> list[float | None] | None:
        """The line confidence of each image (None for one not read), with `output_confidences=True`."""
        if self.readings is None:
            return None
        return [None if reading is None else reading.confidence for reading in self.readings]

    @property
    def lines_per_second(self) -> float:
        return len(self.texts) / self.seconds if self.seconds else float("inf")


def describe_image(image, index: int, count: int) -> str:
    """`image 3 of 7 (scans/b.png)`: an image's position in the whole list, and its file when it has one."""
    name = f" ({os.fspath(image)})" if isinstance(image, (str, os.PathLike)) else ""
    return f"image {index + 1} of {count}{name}"


def check_image_list(images) -> None:
    """Raises `TypeError` where `images` is not a list (or other sequence) of images: one image given alone (a
    path, a PIL image, an array, a tensor), which would otherwise be read character by character or row by
    row, or something that is no sequence at all. The message says to pass a list."""
    single = (str, bytes, os.PathLike, Image.Image, np.ndarray, torch.Tensor)
    if isinstance(images, single):
        shape = f" of shape {tuple(images.shape)}" if isinstance(images, (np.ndarray, torch.Tensor)) else ""
        raise TypeError(
            f"images must be a list of images (paths, PIL images or arrays), got a single {type(images).__name__}"
            f"{shape}; pass a list: [image] to read one image"
        )
    if not isinstance(images, Sequence):
        raise TypeError(
            f"images must be a list of images (paths, PIL images or arrays), got a {type(images).__name__}; "
            "pass a list (list(...) of it)"
        )


SORT_WINDOW_BATCHES = 8
"""`iter_recognize` reads the images in windows of this many batches, each window sorted by aspect ratio."""

BATCH_LINE_COST = 1.5
"""What a batch costs beyond its lines' padded pixels, in lines of its size: the LSTM's and convolutions' work of each
step that does not grow with the batch (`crnn-lines` on one core: a batch of 1 line costs 2.0 lines' time per line,
of 8 lines 1.1, of 32 lines 1.0)."""

BATCH_FIXED_PIXELS = 32 * 256
"""What reading a batch costs whatever its size (the processor's call, the decoding's setup), in padded pixels."""


def padded_size(image_processor, image: Image.Image) -> tuple[int, int]:
    """`(height, width)` of `image` (a normalised capture) as the image processor gives it to the model, padding
    included."""
    height, width = image_processor.output_size(image.height, image.width)
    return height, width + (image_processor.min_right_padding if image_processor.pads else 0)


def batches_by_size(sizes: Sequence[tuple[int, int]], batch_size: int) -> list[range]:
    """Cuts images sorted by aspect ratio, of processed `sizes` `(height, width)` (padding included), into runs of at
    most `batch_size` that cost least to read: a batch is padded to its highest and widest image, and costs its padded
    pixels times its lines plus `BATCH_LINE_COST` lines, plus `BATCH_FIXED_PIXELS`. A page's lines range from a
    figure to a whole row, and cut into equal runs of `batch_size` half the columns a form page's lines are read over
    were padding; a batch of short lines is now read apart from the long ones. The readings are the same in any
    batch (`iter_recognize`)."""
    least = [0.0] + [math.inf] * len(sizes)
    start_of = [0] * (len(sizes) + 1)
    for end in range(1, len(sizes) + 1):
        height = width = 0
        for start in range(end - 1, max(end - batch_size, 0) - 1, -1):
            height, width = max(height, sizes[start][0]), max(width, sizes[start][1])
            cost = least[start] + height * width * (end - start + BATCH_LINE_COST) + BATCH_FIXED_PIXELS
            if cost < least[end]:
                least[end], start_of[end] = cost, start
    batches, end = [], len(sizes)
    while end:
        batches.append(range(start_of[end], end))
        end = start_of[end]
    return batches[::-1]


@torch.inference_mode()
def iter_recognize(
    model,
    processor,
    images: list,
    batch_size: int = 32,
    num_beams: int | None = None,
    max_new_tokens: int | None = None,
    progress: bool = True,
    decoding: str | None = None,
    on_error: str = "raise",
    output_confidences: bool = False,
    warn_of_sizes: bool = True,
    old_umlauts: bool = False,
    best_path_under: float = 0.0,
) -> Iterator[tuple[int, str | LineReading | None, str | None]]:
    """Reads `images` (paths, PIL images or arrays) in batches with `generate()` (`decoding="attention"`),
    with the CTC head alone (`decoding="ctc"`: `model.ctc_decode`, one encoder pass and no decoder, for models
    trained with a CTC loss), or with both (`decoding="joint"`: `model.joint_decode`), yielding `(position, text, None)` per image in order as each batch is done.
    `decoding=None` takes the model's `preferred_decoding` (its generation config's `decoding`), and
    `num_beams=None` its generation config's `num_beams`: the reading `model.generate()` gives.

    With `output_confidences=True` each image's `LineReading` (its text, the same as without, with the line's and
    each character's confidence: `read_batch_with_confidences`) comes in place of its text.

    An image that cannot be loaded (missing, empty or corrupt file, zero size, unsupported array) raises a
    `ValueError` naming its position in the whole list and its file (`on_error="raise"`), or, with
    `on_error="skip"`, yields `(position, None, why)` and the other images are read all the same. An image far
    outside what the model reads (tiny, or of an extreme aspect ratio: the image processor's `size_warning`)
    is read, with a one-line warning naming it (unless `warn_of_sizes=False`: lines cut from a page by its reader).

    Images are read in windows of `SORT_WINDOW_BATCHES` batches: within a window, lines of like aspect ratio share
    a batch, so that a batch of short and long lines does not pad the short ones to the longest, and the batches are
    cut where padding would cost more than another batch (`batches_by_size`); the results come in order as each
    window is done. A reading does not depend on its batch: the image processor ends every line in
    padding that covers the model's reach, and formulas, padded at the bottom too, share a batch only with formulas
    of their size (`batches_read_as_alone`).

    With `old_umlauts=True` an umlaut printed with a small e above (German print of the early 1800s) is written as the
    Deutsches Textarchiv writes it, the letter and U+0364 (`uͤ`), where the reader wrote `ü`
    (`textrec.processing.old_umlauts`; CTC decoding only).

    With `best_path_under` (CTC decoding by beam search), a line whose best path reads at a character confidence under
    it is read by its best path, not searched (`ctc_beam_decode`): what a page reader, which leaves out runs read so
    unsurely, gives for its noise runs. 0.0 (the default) searches every line.

    The model receives what the processor returns (a `pixel_mask` only where its image processor pads).
    `images` must be a list (or other sequence): one image alone is refused (`check_image_list`).
    """
    check_image_list(images)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    decoding = check_reading_options(model, decoding, num_beams)
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if old_umlauts and decoding != "ctc":
        raise ValueError(f"old_umlauts=True needs decoding='ctc' (it looks where the CTC head emitted each umlaut); "
                         f"got decoding={decoding!r}.")
    generate_kwargs = dict(do_sample=False)
    if num_beams is not None:
        generate_kwargs["num_beams"] = num_beams
    if max_new_tokens is not None:
        generate_kwargs["max_new_tokens"] = max_new_tokens
    if best_path_under and decoding == "ctc":
        generate_kwargs["best_path_under"] = best_path_under
    window = batch_size * SORT_WINDOW_BATCHES
    image_processor = processor.image_processor
    with tqdm(total=len(images), desc="recognizing", unit="image", disable=not progress) as bar:
        for begin in range(0, len(images), window):
            positions = range(begin, min(begin + window, len(images)))
            # Each image normalised once (`normalize_capture_of`), for its size warning and its reading alike.
            loaded, captured, failures, problems = {}, {}, {}, {}
            for index in positions:
                try:
                    loaded[index] = load_image(images[index])
                    captured[index] = image_processor.normalize_capture_of(loaded[index])
                except (ValueError, TypeError) as error:
                    message = f"{describe_image(images[index], index, len(images))}: {error}"
                    if on_error == "raise":
                        raise type(error)(message) from error
                    failures[index] = message
                    loaded.pop(index, None)
                    continue
                problem = warn_of_sizes and image_processor.size_warning(
                    loaded[index].width, loaded[index].height, captured[index], image_is_normalized=True)
                if problem:
                    problems[index] = problem
                    logger.warning("%s: %s; read all the same", describe_image(images[index], index, len(images)), problem)
            # Lines of like aspect ratio share a batch, so that a batch pads little.
            by_shape = sorted(captured, key=lambda index: captured[index].width / max(captured[index].height, 1))
            texts = {}
            for run in batches_by_size([padded_size(image_processor, captured[index]) for index in by_shape], batch_size):
                batch = [by_shape[position] for position in run]
                for members, inputs in batches_read_as_alone(processor, [captured[index] for index in batch]):
                    texts.update(read_texts(model, processor, [batch[member] for member in members],
                                            inputs.to(model.device), decoding, output_confidences, old_umlauts,
                                            captured, problems, generate_kwargs))
                bar.update(len(batch))
            bar.update(len(failures))
            for index in positions:
                yield index, texts.get(index), failures.get(index)


def read_texts(model, processor, batch: list[int], inputs, decoding: str, output_confidences: bool, old_umlauts: bool,
               captured: dict, problems: dict, generate_kwargs: dict) -> dict:
    """`iter_recognize`'s readings of one processed batch, the images at positions `batch`: position -> text, or
    `LineReading` with `output_confidences`."""
    if not (output_confidences or old_umlauts):
        sequences = read_batch(model, inputs, decoding, **generate_kwargs)
        return dict(zip(batch, processor.batch_decode(sequences, skip_special_tokens=True)))
    texts = {}
    reading = read_batch_with_confidences(model, inputs, decoding, **generate_kwargs)
    for index, text, confidence, ids, token_confidences, alignment in zip(
            batch, processor.batch_decode(reading.sequences, skip_special_tokens=True),
            reading.confidences, reading.token_ids, reading.token_confidences, reading.alignments):
        read = LineReading(text, confidence, character_confidences(processor.tokenizer, ids, token_confidences),
                           alignment, problems.get(index))
        if old_umlauts:
            read = write_old_umlauts(captured[index], read)
        texts[index] = read if output_confidences else read.text
    return texts


def recognize(model, processor, images: list, output_confidences: bool = False, **kwargs) -> RecognitionResult:
    """All of `iter_recognize(model, processor, images, **kwargs)` at once, with the time it took: what a
    user waits for (loading, preprocessing, decoding). With `output_confidences=True` the result also holds each
    image's `LineReading` (`result.readings`, `result.confidences`); the texts are the same."""
    texts: list[str | None] = []
    readings: list[LineReading | None] = []
    errors: dict[int, str] = {}
    start = time.perf_counter()
    for index, read, error in iter_recognize(model, processor, images, output_confidences=output_confidences, **kwargs):
        readings.append(read)
        texts.append(read.text if isinstance(read, LineReading) else read)
        if error is not None:
            errors[index] = error
    return RecognitionResult(texts=texts, seconds=time.perf_counter() - start, errors=errors,
                             readings=readings if output_confidences else None)
