"""The `text-recognition` pipeline: images in, their text out.

transformers 5 has no `image-to-text` task, so recognition gets its own. After `import
textrec.processing`, by folder (a released model's: `textrec.model_cards.released_model_path(name)`) or by
object, no `trust_remote_code` needed (the folder is read with textrec's own classes):

    recognize = pipeline("text-recognition", model="path/to/model")
    recognize = pipeline("text-recognition", model=model, processor=processor)
    recognize(["line1.png", "line2.png"], batch_size=8)
    # [{"generated_text": "..."}, {"generated_text": "..."}]

and where textrec is not installed, from a saved folder with `trust_remote_code=True`. It reads as the model
reads best (`preferred_decoding`), as `model.generate()` and `textrec-recognize` do.
"""

import copy
import os

from torch.utils.data import DataLoader
from transformers import AutoModelForImageTextToText, Pipeline
from transformers.pipelines import PIPELINE_REGISTRY
from transformers.pipelines.pt_utils import PipelineDataset, PipelineIterator
from transformers.utils import logging

from .image_processing_text_recognition import load_image


logger = logging.get_logger(__name__)


DECODINGS = ("attention", "ctc", "joint")
"""How a textrec model reads (its generation config's `decoding`, which its `generate()` follows): its attention
decoder, its CTC head's best path (`ctc_decode()`, models trained with a CTC loss), or both together
(`joint_decode()`: the decoder's search scored with CTC prefix scores, for models with a decoder and a CTC
head)."""


def available_decodings(model) -> tuple[str, ...]:
    """The decodings `model` has: `"attention"` where it has a decoder (an encoder-decoder config), `"ctc"` where
    it has a CTC head (joint CTC-attention training, or a CTC-only model such as CRNN), `"joint"` where it has
    both."""
    available = []
    if getattr(model.config, "is_encoder_decoder", False):
        available.append("attention")
    if getattr(model, "ctc_head", None) is not None:
        available.append("ctc")
    if len(available) == 2:
        available.append("joint")
    return tuple(available)


def preferred_decoding(model) -> str:
    """The decoding a trained model reads best with, measured when it was packaged and kept in its generation
    config as `decoding`; `"attention"` (the decoder) when it says nothing."""
    decoding = getattr(model.generation_config, "decoding", None) or "attention"
    if decoding not in DECODINGS:
        raise ValueError(f"generation_config.decoding must be one of {DECODINGS}, got {decoding!r}")
    return decoding


def read_batch(model, inputs, decoding: str | None = None, **generate_kwargs):
    """The token ids of one processed batch (`processor(images=..., return_tensors="pt")`) read with `decoding`
    (default: the model's `preferred_decoding`): `ctc_decode()`, `joint_decode()` or the attention decoder
    through `generate()`; decode them with `processor.batch_decode(..., skip_special_tokens=True)`.

    Args:
        generate_kwargs: `num_beams`, `max_new_tokens`, ... for the decoder's search (not used by `"ctc"`).
    """
    decoding = decoding or preferred_decoding(model)
    if decoding == "ctc":
        return model.ctc_decode(**inputs)
    if decoding == "joint":
        return model.joint_decode(**inputs, **generate_kwargs)
    if preferred_decoding(model) != "attention":  # textrec's generate() reads as the generation config prefers
        attention = copy.deepcopy(model.generation_config)
        attention.decoding = "attention"
        generate_kwargs.setdefault("generation_config", attention)
    return model.generate(**inputs, **generate_kwargs)


class TextRecognitionPipeline(Pipeline):
    """Recognizes the text of line images with a textrec (or any image-to-text `generate()`) model.

    Call arguments: `decoding` (`"attention"`, `"ctc"` or `"joint"`; default: the model's `preferred_decoding`),
    `max_new_tokens` and `num_beams` for `generate()`; `batch_size` as for every pipeline. An empty list of
    images gives an empty list. An image far outside what the model reads (tiny, or of an extreme aspect
    ratio: the image processor's `size_warning`) is read, with a one-line warning naming it.
    """

    _load_processor = True
    _load_image_processor = False
    _load_video_processor = False  # else transformers tries one, and asks whether to run the folder's code for it
    _load_feature_extractor = False
    _load_tokenizer = False

    def _sanitize_parameters(self, max_new_tokens=None, num_beams=None, decoding=None, **kwargs):
        forward_kwargs = {}
        if max_new_tokens is not None:
            forward_kwargs["max_new_tokens"] = max_new_tokens
        if num_beams is not None:
            forward_kwargs["num_beams"] = num_beams
        if decoding is not None:
            forward_kwargs["decoding"] = decoding
        return {}, forward_kwargs, {}

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (list, tuple)) and not inputs:
            return []  # transformers' Pipeline looks at the first input to tell chats from images
        return super().__call__(inputs, *args, **kwargs)

    def preprocess(self, image):
        # Images stay images until a batch is formed, so the processor pads each batch itself.
        loaded = load_image(image)
        problem = self.processor.image_processor.size_warning(loaded.width, loaded.height, loaded)
        if problem is not None:
            name = os.fspath(image) if isinstance(image, (str, os.PathLike)) else "an image"
            logger.warning(f"{name}: {problem}; read all the same")
        return {"images": [loaded]}

    def _forward(self, model_inputs, decoding=None, **generate_kwargs):
        inputs = self.processor(images=model_inputs["images"], return_tensors="pt", warn_images_out_of_range=False).to(self.device)
        return {"sequences": read_batch(self.model, inputs, decoding, **generate_kwargs)}

    def postprocess(self, model_outputs):
        texts = self.processor.batch_decode(model_outputs["sequences"], skip_special_tokens=True)
        return {"generated_text": texts[0]}

    def get_iterator(self, inputs, num_workers, batch_size, preprocess_params, forward_params, postprocess_params):
        dataset = PipelineDataset(inputs, self.preprocess, preprocess_params)
        loader = DataLoader(dataset, num_workers=num_workers, batch_size=batch_size, collate_fn=_join_images)
        outputs = PipelineIterator(loader, self.forward, forward_params, loader_batch_size=batch_size)
        return PipelineIterator(outputs, self.postprocess, postprocess_params)


def _join_images(items: list[dict]) -> dict:
    return {"images": [image for item in items for image in item["images"]]}


PIPELINE_REGISTRY.register_pipeline(
    "text-recognition", pipeline_class=TextRecognitionPipeline, pt_model=AutoModelForImageTextToText
)
