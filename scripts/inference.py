"""Loading a trained recognizer and reading many images with it, in batches, with a progress bar."""

import inspect
import time
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm
from transformers import AutoModelForImageTextToText, AutoProcessor

from textrec.model_cards import resolve_model_path

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


def forward_input_names(model) -> set[str]:
    """The inputs `model.forward` names in its signature (its main input always among them).

    Only these of a processor's outputs go to `generate()`: a `**kwargs` does not count, since
    `VisionEncoderDecoderModel.forward` has one and its `generate()` still rejects `pixel_mask`.
    """
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    parameters = inspect.signature(model.forward).parameters.values()
    return {parameter.name for parameter in parameters if parameter.kind not in variadic} | {model.main_input_name}


DECODINGS = ("attention", "ctc")
"""`recognize()`'s decoders: the attention decoder through `generate()`, or the CTC head's best path."""


@dataclass
class RecognitionResult:
    texts: list[str]
    seconds: float

    @property
    def lines_per_second(self) -> float:
        return len(self.texts) / self.seconds if self.seconds else float("inf")


@torch.inference_mode()
def recognize(
    model,
    processor,
    images: list,
    batch_size: int = 32,
    num_beams: int = 1,
    max_new_tokens: int | None = None,
    progress: bool = True,
    decoding: str = "attention",
) -> RecognitionResult:
    """Reads `images` (paths, PIL images or arrays) in batches with `generate()`, or with the CTC head alone
    (`decoding="ctc"`: `model.ctc_decode`, one encoder pass and no decoder, for models trained with a CTC
    loss).

    The time covers preprocessing, generation and decoding: what a user waits for. Of the processor's
    outputs, only those that the model's `forward` takes are passed on (`forward_input_names`): no
    `pixel_mask` to a model without one.
    """
    accepted = forward_input_names(model)
    generate_kwargs = dict(num_beams=num_beams, do_sample=False)
    if max_new_tokens is not None:
        generate_kwargs["max_new_tokens"] = max_new_tokens
    if decoding not in DECODINGS:
        raise ValueError(f"decoding must be one of {DECODINGS}, got {decoding!r}")
    if decoding == "ctc" and getattr(model, "ctc_head", None) is None:
        raise ValueError("decoding='ctc' needs a model trained with a CTC head (ctc_loss_weight > 0).")
    texts: list[str] = []
    start = time.perf_counter()
    for begin in tqdm(range(0, len(images), batch_size), desc="recognizing", unit="batch", disable=not progress):
        inputs = processor(images=images[begin : begin + batch_size], return_tensors="pt").to(model.device)
        inputs = {name: value for name, value in inputs.items() if name in accepted}
        if decoding == "ctc":
            sequences = model.ctc_decode(**inputs)
        else:
            sequences = model.generate(**inputs, **generate_kwargs)
        texts.extend(processor.batch_decode(sequences, skip_special_tokens=True))
    return RecognitionResult(texts=texts, seconds=time.perf_counter() - start)
