"""The `text-recognition` pipeline: images in, their text out.

transformers 5 has no `image-to-text` task, so recognition gets its own. After `import
textrec.processing`, by folder (a released model's: `textrec.model_cards.released_model_path(name)`) or by
object, no `trust_remote_code` needed (the folder is read with textrec's own classes):

    recognize = pipeline("text-recognition", model="path/to/model")
    recognize = pipeline("text-recognition", model=model, processor=processor)
    recognize(["line1.png", "line2.png"], batch_size=8)
    # [{"generated_text": "..."}, {"generated_text": "..."}]
    recognize(["line1.png"], return_confidence=True)
    # [{"generated_text": "...", "confidence": 0.97, "characters": [{"character": "T", "confidence": 0.99}, ...]}]

and where textrec is not installed, from a saved folder with `trust_remote_code=True`. It reads as the model
reads best (`preferred_decoding`), as `model.generate()` and `textrec-recognize` do.
"""

import copy
import os
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
from transformers import AutoModelForImageTextToText, BatchFeature, Pipeline
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


def check_reading_options(model, decoding: str | None = None, num_beams: int | None = None) -> str:
    """The decoding `model` reads with (`decoding`, default its `preferred_decoding`), once it is one the model has
    and `num_beams` is a whole number of at least 1; else a `ValueError` saying what the model reads with."""
    if num_beams is not None and (isinstance(num_beams, bool) or not isinstance(num_beams, int) or num_beams < 1):
        raise ValueError(f"num_beams must be a whole number >= 1, got {num_beams!r}")
    decoding = decoding or preferred_decoding(model)
    if decoding not in DECODINGS:
        raise ValueError(f"decoding must be one of {DECODINGS}, got {decoding!r}")
    if decoding not in available_decodings(model):
        if decoding == "ctc":
            raise ValueError("decoding='ctc' needs a model trained with a CTC head (ctc_loss_weight > 0).")
        if decoding == "joint":
            raise ValueError(
                f"decoding='joint' needs an attention decoder and a CTC head; {type(model).__name__} reads with "
                f"{' or '.join(repr(name) for name in available_decodings(model))}."
            )
        raise ValueError(f"decoding='attention': {type(model).__name__} has no attention decoder; it reads with 'ctc'.")
    return decoding


def preferred_decoding(model) -> str:
    """The decoding a trained model reads best with, measured when it was packaged and kept in its generation
    config as `decoding`; `"attention"` (the decoder) when it says nothing."""
    decoding = getattr(model.generation_config, "decoding", None) or "attention"
    if decoding not in DECODINGS:
        raise ValueError(f"generation_config.decoding must be one of {DECODINGS}, got {decoding!r}")
    return decoding


def _ctc_search(generate_kwargs: dict) -> dict:
    """The part of `generate_kwargs` that CTC decoding takes."""
    return {name: generate_kwargs[name] for name in ("num_beams", "best_path_under") if generate_kwargs.get(name)}


def read_batch(model, inputs, decoding: str | None = None, **generate_kwargs):
    """The token ids of one processed batch (`processor(images=..., return_tensors="pt")`) read with `decoding`
    (default: the model's `preferred_decoding`): `ctc_decode()`, `joint_decode()` or the attention decoder
    through `generate()`; decode them with `processor.batch_decode(..., skip_special_tokens=True)`.

    Args:
        generate_kwargs: `num_beams`, `max_new_tokens`, ... for the decoder's search; `"ctc"` takes `num_beams` alone
            (prefix beam search where the model has it, as CRNN does; default: the generation config's).
    """
    decoding = decoding or preferred_decoding(model)
    if decoding == "ctc":
        return model.ctc_decode(**inputs, **_ctc_search(generate_kwargs))
    if decoding == "joint":
        return model.joint_decode(**inputs, **generate_kwargs)
    if preferred_decoding(model) != "attention":  # textrec's generate() reads as the generation config prefers
        attention = copy.deepcopy(model.generation_config)
        attention.decoding = "attention"
        generate_kwargs.setdefault("generation_config", attention)
    return model.generate(**inputs, **generate_kwargs)


def batches_read_as_alone(processor, images: list) -> list[tuple[list[int], BatchFeature]]:
    """`images` (captures normalised already: `normalize_capture_of`) processed into batches in which each image reads
    as it reads alone, as `(positions in images, processor output)`: one batch of all where the processor pads on
    the right alone (every image ends in `min_right_padding` columns, which cover the model's reach), else
    (`pads_height`: formulas padded at the bottom too) one batch per processed size."""
    options = dict(return_tensors="pt", warn_images_out_of_range=False, do_normalize_capture=False)
    if not processor.image_processor.pads_height:
        return [(list(range(len(images))), processor(images=images, **options))]
    alone = [processor(images=[image], **options) for image in images]
    sizes: dict[tuple[int, ...], list[int]] = {}
    for position, inputs in enumerate(alone):
        sizes.setdefault(tuple(inputs["pixel_values"].shape), []).append(position)
    return [(positions, BatchFeature({name: torch.cat([alone[position][name] for position in positions])
                                      for name in alone[positions[0]]}))
            for positions in sizes.values()]


# Confidence: how sure the model is of what it read, one number per line and one per character (per token).
#
# - CTC best path (`decoding="ctc"`): each frame (encoder output) has a posterior over the vocabulary; the best path
#   takes the most probable token of each frame, merges repeats and drops blanks. A character's confidence is the
#   highest posterior among the frames collapsed into it (its run of equal best tokens). The line's confidence is
#   the product of its characters' confidences (1 for an empty line): it falls with each doubtful character,
#   more on a long line, as the chance of reading every character right does. It was chosen by calibration on
#   real lines (`scripts/lab/confidence_calibration.py`): among `crnn-lines`' lines given about p, about a share p
#   is read exactly right. The product of every frame's posterior (the best path's probability) is far too low,
#   because frames on a character's edge hesitate between the character and the blank, which read the same;
#   the mean of the frames' posteriors is far too high, blanks being sure.
# - Attention decoder, greedy or beam search, and joint CTC-attention (`decoding="attention"`, `"joint"`): a token's
#   confidence is the decoder's probability of it given the image and the tokens before it, from one
#   teacher-forced pass over the sequence read (the probabilities greedy search chose by, `compute_transition_scores`
#   of `generate()`'s scores without length normalisation); the line's is their product up to and including the
#   end token: the probability of the sequence, as a beam's unnormalised score gives it. For joint decoding it is
#   the decoder's share: the CTC prefix scores help choose the text, the decoder rates it.
#
# Either way the confidence is computed beside the reading and never changes it: the text is the same with and
# without confidences.


@dataclass
class CTCAlignment:
    """Which frames of the CTC head's output emitted which characters: the best path of one line.

    Frames are the encoder outputs of real pixels, left to right; frame `i` of `frame_count` covers about
    `[i, i + 1) / frame_count` of the line image's width (before padding).

    Args:
        frame_token_ids: `(frame_count,)` the most probable token of each frame (the pad id is the blank).
        frame_probabilities: `(frame_count,)` that token's posterior.
        character_frames: `[start, stop)` frame ranges, one per character emitted, in reading order.
    """

    frame_token_ids: list[int]
    frame_probabilities: list[float]
    character_frames: list[tuple[int, int]]

    @property
    def frame_count(self) -> int:
        return len(self.frame_token_ids)


@dataclass
class BatchReading:
    """A batch read with confidences (`read_batch_with_confidences`).

    Args:
        sequences: `(batch, length)` token ids, as `read_batch` returns them: decode them with
            `processor.batch_decode(..., skip_special_tokens=True)`.
        token_ids: per line, the tokens read, in order (the end token and padding left out).
        token_confidences: per line, one confidence per entry of `token_ids`.
        confidences: per line, the line's confidence.
        alignments: per line, its `CTCAlignment` for CTC best path, else None.
    """

    sequences: torch.LongTensor
    token_ids: list[list[int]]
    token_confidences: list[list[float]]
    confidences: list[float]
    alignments: list[CTCAlignment | None]


def ctc_forced_path(log_probs: np.ndarray, token_ids: list[int], blank_token_id: int) -> list[int] | None:
    """The most probable frame-by-frame path of CTC that reads `token_ids` (Viterbi over the tokens with blanks
    between them): one token id per frame of `log_probs (frames, vocab_size)`; None if the frames are too few."""
    states = [blank_token_id]
    for token in token_ids:
        states += [token, blank_token_id]
    frame_count, state_count = len(log_probs), len(states)
    emissions = log_probs[:, states].astype(np.float64)
    skippable = np.array([s >= 2 and states[s] != blank_token_id and states[s] != states[s - 2]
                          for s in range(state_count)])
    skip_cost = np.where(skippable, 0.0, -np.inf)
    # A frame's scores after two places of -inf: each state stays (scores[2:]), steps from the state before
    # (scores[1:-1]) or skips a blank from two before (scores[:-2]); of equal ways, the first of these is kept.
    scores = np.full(state_count + 2, -np.inf)
    scores[2:4] = emissions[0, :2]
    came_from = np.zeros((frame_count, state_count), dtype=np.int64)
    state_numbers = np.arange(state_count)
    for frame in range(1, frame_count):
        stay, step, skip = scores[2:], scores[1:-1], scores[:-2] + skip_cost
        stepped = step > stay
        best = np.where(stepped, step, stay)
        skipped = skip > best
        came_from[frame] = state_numbers - np.where(skipped, 2, stepped)
        scores[2:] = np.where(skipped, skip, best) + emissions[frame]
    last = scores[2:]
    ends = [state_count - 1] + ([state_count - 2] if state_count > 1 else [])
    state = max(ends, key=lambda end: last[end])
    if not np.isfinite(last[state]):
        return None
    path = [state]
    for frame in range(frame_count - 1, 0, -1):
        state = int(came_from[frame, state])
        path.append(state)
    return [states[state] for state in reversed(path)]


def ctc_confidences(logits: torch.Tensor, blank_token_id: int, attention_mask: torch.Tensor | None = None,
                    sequences: torch.LongTensor | None = None, eos_token_id: int | None = None):
    """Per line, `(token_ids, token_confidences, confidence, alignment)` of the CTC best path of `logits`
    (`(batch, frames, vocab_size)`, the CTC head's; `attention_mask (batch, frames)` marks real frames, which come
    first). The tokens are the best path's, as `ctc_greedy_decode` reads them: the most probable token of each
    frame, repeats merged, blanks dropped; or, where `sequences` (read by beam search, up to `eos_token_id`) say
    otherwise, theirs, each frame given the token of the most probable path that reads them
    (`ctc_forced_path`)."""
    log_probs = logits.float().log_softmax(dim=-1)
    probabilities, best = log_probs.exp().max(dim=-1)
    frame_counts = attention_mask.long().sum(dim=1).tolist() if attention_mask is not None else [best.shape[1]] * len(best)
    readings = []
    for row, frame_count in enumerate(frame_counts):
        tokens, row_probabilities = best[row, :frame_count].tolist(), probabilities[row, :frame_count].tolist()
        if sequences is not None:
            read = sequences[row].tolist()
            read = read[:read.index(eos_token_id)] if eos_token_id in read else read
            best_path = [token for frame, token in enumerate(tokens)
                         if token != blank_token_id and (frame == 0 or token != tokens[frame - 1])]
            if read != best_path:
                frame_log_probs = log_probs[row, :frame_count].numpy()
                path = ctc_forced_path(frame_log_probs, read, blank_token_id)
                if path is not None:
                    tokens = path
                    row_probabilities = np.exp(frame_log_probs[np.arange(frame_count), path]).tolist()
        # A run of equal best tokens is one character (or a blank); a character's frames are its run.
        starts = [frame for frame in range(frame_count) if frame == 0 or tokens[frame] != tokens[frame - 1]]
        runs = zip(starts, [*starts[1:], frame_count])
        character_frames = [(start, stop) for start, stop in runs if tokens[start] != blank_token_id]
        character_confidences = [max(row_probabilities[start:stop]) for start, stop in character_frames]
        readings.append((
            [tokens[start] for start, _ in character_frames],
            character_confidences,
            float(torch.tensor(character_confidences, dtype=torch.float64).prod()),
            CTCAlignment(tokens, row_probabilities, character_frames),
        ))
    return readings


def decoder_confidences(model, inputs, sequences: torch.LongTensor):
    """Per line, `(token_ids, token_confidences, confidence)` of `sequences` (`(batch, length)`, decoder start token
    first, as `generate()` returns them) under the model's decoder: one teacher-forced pass."""
    logits = model(**inputs, decoder_input_ids=sequences[:, :-1]).logits
    targets = sequences[:, 1:]
    probabilities = logits.float().log_softmax(dim=-1).gather(-1, targets[..., None])[..., 0]
    eos_token_id = model.generation_config.eos_token_id
    eos_token_ids = set(eos_token_id if isinstance(eos_token_id, (list, tuple)) else [eos_token_id])
    readings = []
    for row in range(len(sequences)):
        ids = targets[row].tolist()
        ends = [position for position, token in enumerate(ids) if token in eos_token_ids]
        length = ends[0] if ends else len(ids)
        log_probabilities = probabilities[row, : length + (1 if ends else 0)]
        readings.append((
            ids[:length],
            log_probabilities[:length].exp().tolist(),
            float(log_probabilities.double().sum().exp()),
        ))
    return readings


def read_batch_with_confidences(model, inputs, decoding: str | None = None, **generate_kwargs) -> BatchReading:
    """`read_batch` with the confidence of each line and of each token read (see the definition above this
    function); the sequences are `read_batch`'s."""
    decoding = decoding or preferred_decoding(model)
    if decoding == "ctc":
        output = model.ctc_decode(**inputs, return_dict_in_generate=True, **_ctc_search(generate_kwargs))
        if isinstance(output, torch.Tensor):
            raise ValueError(f"{type(model).__name__}.ctc_decode gives no logits (its code predates confidences): "
                             "export the model again with this textrec to read it with confidences.")
        readings = ctc_confidences(output.logits, model.config.pad_token_id, output.attention_mask,
                                   output.sequences, model.config.eos_token_id)
        return BatchReading(
            sequences=output.sequences,
            token_ids=[reading[0] for reading in readings],
            token_confidences=[reading[1] for reading in readings],
            confidences=[reading[2] for reading in readings],
            alignments=[reading[3] for reading in readings],
        )
    sequences = read_batch(model, inputs, decoding, **generate_kwargs)
    readings = decoder_confidences(model, inputs, sequences)
    return BatchReading(
        sequences=sequences,
        token_ids=[reading[0] for reading in readings],
        token_confidences=[reading[1] for reading in readings],
        confidences=[reading[2] for reading in readings],
        alignments=[None] * len(readings),
    )


def character_confidences(tokenizer, token_ids: list[int], token_confidences: list[float]) -> list[tuple[str, float]]:
    """`[(character, confidence), ...]` of one line: its tokens as the tokenizer writes them (one character each for
    the character tokenizers, a LaTeX token for formulas), special tokens left out as `batch_decode` leaves them."""
    special = set(tokenizer.all_special_ids)
    kept = [(token, confidence) for token, confidence in zip(token_ids, token_confidences) if token not in special]
    return list(zip(tokenizer.convert_ids_to_tokens([token for token, _ in kept]), [confidence for _, confidence in kept]))


class TextRecognitionPipeline(Pipeline):
    """Recognizes the text of line images with a textrec (or any image-to-text `generate()`) model.

    Call arguments: `decoding` (`"attention"`, `"ctc"` or `"joint"`; default: the model's `preferred_decoding`),
    `max_new_tokens` and `num_beams` for `generate()`, or in `generate_kwargs` (a dict, as transformers' pipelines take
    them); beams under 1, a decoding the model lacks and unknown arguments are refused (`check_reading_options`);
    `return_confidence=True` adds `"confidence"` (the line's)
    and `"characters"` (`[{"character": ..., "confidence": ...}, ...]`) beside `"generated_text"`, the text
    unchanged (`read_batch_with_confidences`); `batch_size` as for every pipeline. An empty list of
    images gives an empty list. An image far outside what the model reads (tiny, or of an extreme aspect
    ratio: the image processor's `size_warning`) is read, with a one-line warning naming it.
    """

    _load_processor = True
    _load_image_processor = False
    _load_video_processor = False  # else transformers tries one, and asks whether to run the folder's code for it
    _load_feature_extractor = False
    _load_tokenizer = False

    def _sanitize_parameters(self, max_new_tokens=None, num_beams=None, decoding=None, return_confidence=None,
                             generate_kwargs=None, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unknown arguments {sorted(kwargs)}: it takes decoding, "
                            f"num_beams, max_new_tokens, generate_kwargs (a dict of generate() arguments), "
                            f"return_confidence and batch_size")
        forward_kwargs = dict(generate_kwargs or {})
        for name, value in (("max_new_tokens", max_new_tokens), ("num_beams", num_beams), ("decoding", decoding)):
            if value is not None:
                if name in forward_kwargs and forward_kwargs[name] != value:
                    raise ValueError(f"{name} given twice: {value!r}, and {forward_kwargs[name]!r} in generate_kwargs")
                forward_kwargs[name] = value
        if "decoding" in forward_kwargs or "num_beams" in forward_kwargs:
            check_reading_options(self.model, forward_kwargs.get("decoding"), forward_kwargs.get("num_beams"))
        if return_confidence is not None:
            forward_kwargs["return_confidence"] = bool(return_confidence)
        return {}, forward_kwargs, {}

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (list, tuple)) and not inputs:
            return []  # transformers' Pipeline looks at the first input to tell chats from images
        return super().__call__(inputs, *args, **kwargs)

    def preprocess(self, image):
        # Images stay images until a batch is formed, so the processor pads each batch itself.
        # Normalised once (`normalize_capture_of`), for its size warning and its reading alike.
        loaded = load_image(image)
        captured = self.processor.image_processor.normalize_capture_of(loaded)
        problem = self.processor.image_processor.size_warning(loaded.width, loaded.height, captured,
                                                              image_is_normalized=True)
        if problem is not None:
            name = os.fspath(image) if isinstance(image, (str, os.PathLike)) else "an image"
            logger.warning(f"{name}: {problem}; read all the same")
        return {"images": [captured]}

    def _forward(self, model_inputs, decoding=None, return_confidence=False, **generate_kwargs):
        images = model_inputs["images"]
        sequences, confidences, token_ids, token_confidences = ([None] * len(images) for _ in range(4))
        for positions, inputs in batches_read_as_alone(self.processor, images):
            inputs = inputs.to(self.device)
            if not return_confidence:
                for position, row in zip(positions, read_batch(self.model, inputs, decoding, **generate_kwargs)):
                    sequences[position] = row.tolist()
                continue
            reading = read_batch_with_confidences(self.model, inputs, decoding, **generate_kwargs)
            for row, position in enumerate(positions):
                sequences[position] = reading.sequences[row].tolist()
                confidences[position] = reading.confidences[row]
                token_ids[position], token_confidences[position] = reading.token_ids[row], reading.token_confidences[row]
        # Tensors, one row per image, so that transformers' batching splits them as it splits the sequences.
        outputs = {"sequences": rows_of(sequences, torch.long, self.processor.tokenizer.pad_token_id)}
        if return_confidence:
            outputs["confidence"] = torch.tensor(confidences, dtype=torch.float64)
            outputs["token_ids"] = rows_of(token_ids, torch.long, -1)
            outputs["token_confidences"] = rows_of(token_confidences, torch.float64, 0.0)
        return outputs

    def postprocess(self, model_outputs):
        texts = self.processor.batch_decode(model_outputs["sequences"], skip_special_tokens=True)
        result = {"generated_text": texts[0]}
        if "confidence" in model_outputs:
            length = int((model_outputs["token_ids"][0] >= 0).sum())
            characters = character_confidences(self.processor.tokenizer, model_outputs["token_ids"][0, :length].tolist(),
                                               model_outputs["token_confidences"][0, :length].tolist())
            result["confidence"] = float(model_outputs["confidence"][0])
            result["characters"] = [{"character": character, "confidence": confidence} for character, confidence in characters]
        return result

    def get_iterator(self, inputs, num_workers, batch_size, preprocess_params, forward_params, postprocess_params):
        dataset = PipelineDataset(inputs, self.preprocess, preprocess_params)
        loader = DataLoader(dataset, num_workers=num_workers, batch_size=batch_size, collate_fn=_join_images)
        outputs = PipelineIterator(loader, self.forward, forward_params, loader_batch_size=batch_size)
        return PipelineIterator(outputs, self.postprocess, postprocess_params)


def rows_of(sequences: list[list], dtype: torch.dtype, padding) -> torch.Tensor:
    """`(len(sequences), longest)` tensor of `sequences`, each padded on the right with `padding`."""
    return pad_sequence([torch.tensor(sequence, dtype=dtype) for sequence in sequences], batch_first=True,
                        padding_value=padding)


def _join_images(items: list[dict]) -> dict:
    return {"images": [image for item in items for image in item["images"]]}


PIPELINE_REGISTRY.register_pipeline(
    "text-recognition", pipeline_class=TextRecognitionPipeline, pt_model=AutoModelForImageTextToText
)
