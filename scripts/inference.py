"""Loading a trained recognizer and reading many images with it, in batches, with a progress bar."""

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm
from transformers import AutoModelForImageTextToText, AutoProcessor

from textrec.model_cards import resolve_model_path
from textrec.processing.image_processing_text_recognition import load_image

from . import architectures  # noqa: F401  (registers textrec's processors with AutoProcessor)


def load_recognizer(model_name_or_path: str, device: str = "cpu", dtype: torch.dtype = torch.float32):
    """The model (in eval mode, in `dtype`) and processor of a released model's short name
    (`self-attention-lines`, see `textrec.model_cards.released_model_names()`), a folder or a Hub repository.

    Released weights are stored in fp16 to stay small; they are read in fp32 by default, which CPUs run
    fastest."""
    model_name_or_path = resolve_model_path(model_name_or_path)
    model = AutoModelForImageTextToText.from_pretrained(model_name_or_path, dtype=dtype).to(device).eval()
    processor = AutoProcessor.from_pretrained(model_name_or_path)
    return model, processor


DECODINGS = ("attention", "ctc")
"""`recognize()`'s decoders: the attention decoder through `generate()`, or the CTC head's best path."""


@dataclass
class RecognitionResult:
    """What `recognize()` read.

    Args:
        texts: one per image, in order; None for an image that could not be read.
        seconds: wall-clock time of the whole reading (loading, preprocessing, decoding).
        errors: position in the list of images -> why that image could not be read.
    """

    texts: list[str | None]
    seconds: float
    errors: dict[int, str] = field(default_factory=dict)

    @property
    def lines_per_second(self) -> float:
        return len(self.texts) / self.seconds if self.seconds else float("inf")


def describe_image(image, index: int, count: int) -> str:
    """`image 3 of 7 (scans/b.png)`: an image's position in the whole list, and its file when it has one."""
    name = f" ({os.fspath(image)})" if isinstance(image, (str, os.PathLike)) else ""
    return f"image {index + 1} of {count}{name}"


@torch.inference_mode()
def iter_recognize(
    model,
    processor,
    images: list,
    batch_size: int = 32,
    num_beams: int = 1,
    max_new_tokens: int | None = None,
    progress: bool = True,
    decoding: str = "attention",
    on_error: str = "raise",
) -> Iterator[tuple[int, str | None, str | None]]:
    """Reads `images` (paths, PIL images or arrays) in batches with `generate()`, or with the CTC head alone
    (`decoding="ctc"`: `model.ctc_decode`, one encoder pass and no decoder, for models trained with a CTC
    loss), yielding `(position, text, None)` per image in order as each batch is done.

    An image that cannot be loaded (missing, empty or corrupt file, zero size, unsupported array) raises a
    `ValueError` naming its position in the whole list and its file (`on_error="raise"`), or, with
    `on_error="skip"`, yields `(position, None, why)` and the other images are read all the same.

    The model receives what the processor returns (a `pixel_mask` only where its image processor pads).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if num_beams < 1:
        raise ValueError(f"num_beams must be >= 1, got {num_beams}")
    if decoding not in DECODINGS:
        raise ValueError(f"decoding must be one of {DECODINGS}, got {decoding!r}")
    if decoding == "ctc" and getattr(model, "ctc_head", None) is None:
        raise ValueError("decoding='ctc' needs a model trained with a CTC head (ctc_loss_weight > 0).")
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    generate_kwargs = dict(num_beams=num_beams, do_sample=False)
    if max_new_tokens is not None:
        generate_kwargs["max_new_tokens"] = max_new_tokens
    for begin in tqdm(range(0, len(images), batch_size), desc="recognizing", unit="batch", disable=not progress):
        loaded, failures = {}, {}
        for index in range(begin, min(begin + batch_size, len(images))):
            try:
                loaded[index] = load_image(images[index])
            except (ValueError, TypeError) as error:
                message = f"{describe_image(images[index], index, len(images))}: {error}"
                if on_error == "raise":
                    raise type(error)(message) from error
                failures[index] = message
        texts = {}
        if loaded:
            inputs = processor(images=list(loaded.values()), return_tensors="pt").to(model.device)
            if decoding == "ctc":
                sequences = model.ctc_decode(**inputs)
            else:
                sequences = model.generate(**inputs, **generate_kwargs)
            texts = dict(zip(loaded, processor.batch_decode(sequences, skip_special_tokens=True)))
        for index in range(begin, min(begin + batch_size, len(images))):
            yield index, texts.get(index), failures.get(index)


def recognize(model, processor, images: list, **kwargs) -> RecognitionResult:
    """All of `iter_recognize(model, processor, images, **kwargs)` at once, with the time it took: what a
    user waits for (loading, preprocessing, decoding)."""
    texts: list[str | None] = []
    errors: dict[int, str] = {}
    start = time.perf_counter()
    for index, text, error in iter_recognize(model, processor, images, **kwargs):
        texts.append(text)
        if error is not None:
            errors[index] = error
    return RecognitionResult(texts=texts, seconds=time.perf_counter() - start, errors=errors)
