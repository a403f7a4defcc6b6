"""Processor for text recognition: the image processor and the character tokenizer together.

Input and output conventions shared by every textrec model:

- `images` -> `pixel_values` (batch, channels, height, width) and, where the image processor pads batches,
  `pixel_mask` (batch, height, width).
- `text_target` (the transcriptions) -> `labels` (batch, target_len): character ids, then `</s>`,
  right-padded with -100 (ignored by the loss). Models build their decoder inputs by shifting the labels
  right behind the decoder start token `<s>`.
- `text` (a decoding prefix, as the `image-text-to-text` pipeline passes it) -> `decoder_input_ids`
  (batch, prompt_len) = `<s>` + the prefix characters, no `</s>`, left-padded with `<pad>`, and
  `decoder_attention_mask` (batch, prompt_len), 0 on that padding. `text=""` gives just `<s>`.
  Unlike `TrOCRProcessor`, `text` never becomes `labels`: use `text_target` for training.
"""

import numpy as np
from transformers import AutoTokenizer
from transformers.image_processing_utils import BatchFeature
from transformers.processing_utils import ProcessorMixin
from transformers.utils import logging

from .image_processing_text_recognition import TextRecognitionImageProcessor


logger = logging.get_logger(__name__)

IGNORE_INDEX = -100
"""Label value ignored by the loss; also accepted (as padding) by `batch_decode`."""
LOAD_TIME_KEYS = ("is_local", "local_files_only", "_commit_hash", "cache_dir", "token", "use_auth_token", "revision",
                  "force_download", "proxies", "subfolder", "user_agent", "trust_remote_code")
"""How a tokenizer was loaded, not what it is: transformers 5 records `from_pretrained`'s `is_local` and
`local_files_only` (and any other keyword it passes on) in the tokenizer's `init_kwargs`, which `save_pretrained`
writes back into `tokenizer_config.json`. The processor drops them, so that a saved folder loads alike anywhere."""


class TextRecognitionProcessor(ProcessorMixin):
    r"""Join a `TextRecognitionImageProcessor` and a character tokenizer (see `build_char_tokenizer`).

    Args:
        image_processor (`TextRecognitionImageProcessor`): turns images into `pixel_values`/`pixel_mask`.
        tokenizer (`PreTrainedTokenizerFast`): character-level, with pad, bos, eos and unk tokens.
        max_label_length (`int`, *optional*): longest allowed label, in tokens including `</s>` (so
            characters + 1); longer targets raise. Saved with the processor. `None`: no limit.
    """

    def __init__(self, image_processor, tokenizer, max_label_length: int | None = None):
        super().__init__(image_processor, tokenizer)
        for key in LOAD_TIME_KEYS:
            tokenizer.init_kwargs.pop(key, None)
        for name in ("pad_token_id", "bos_token_id", "eos_token_id", "unk_token_id"):
            if getattr(tokenizer, name) is None:
                raise ValueError(f"the tokenizer needs {name} set; build it with build_char_tokenizer")
        self.max_label_length = max_label_length

    @classmethod
    def _get_arguments_from_pretrained(cls, pretrained_model_name_or_path, processor_dict=None, **kwargs):
        # transformers 5.21-5.24: ProcessorMixin would load the image processor through AutoImageProcessor and its
        # `auto_map`, which asks for trust_remote_code even inside textrec and then returns a class from the
        # dynamic-module cache instead of ours. Our parts are fixed, so load them directly; in a Hub folder the
        # relative import above resolves to the copied sibling file, so this works there too. (5.25 resolves the
        # image processor by the model's config instead, where textrec registers its class: `textrec.processing`.)
        image_processor = TextRecognitionImageProcessor.from_pretrained(pretrained_model_name_or_path, **kwargs)
        return [image_processor, cls._load_tokenizer_from_pretrained("tokenizer", pretrained_model_name_or_path, **kwargs)]

    @classmethod
    def _load_tokenizer_from_pretrained(cls, sub_processor_type, pretrained_model_name_or_path, **kwargs):
        try:
            return AutoTokenizer.from_pretrained(pretrained_model_name_or_path, **kwargs)
        except ValueError as error:  # json's decoding errors among them: a tokenizer.json cut short
            raise ValueError(f"the tokenizer of {pretrained_model_name_or_path} (tokenizer.json) cannot be read, cut "
                             f"short or damaged? ({type(error).__name__}: {error})") from error

    @property
    def model_input_names(self) -> list[str]:
        return self.image_processor.model_input_names + ["decoder_input_ids", "decoder_attention_mask", "labels"]

    def __call__(
        self,
        images=None,
        text: str | list[str] | None = None,
        text_target: str | list[str] | None = None,
        return_tensors: str | None = "pt",
        max_label_length: int | None = None,
        padding: bool | str = True,
        do_scale_augmentation: bool = False,
        warn_out_of_vocabulary: bool = True,
        warn_images_out_of_range: bool = True,
        do_normalize_capture: bool = True,
    ) -> BatchFeature:
        """Prepare model inputs and/or training labels.

        Args:
            images: an image or a list of images (paths, PIL images, arrays; see `load_image`).
            text: decoding prefix(es), one per image; see the module docstring.
            text_target: transcription(s), one per image.
            return_tensors: `"pt"` for torch tensors, `"np"` or `None` for NumPy arrays.
            max_label_length: overrides the processor's `max_label_length` for this call.
            padding: accepted for pipeline compatibility; sequences are always padded to the longest in
                the batch (`True` or `"longest"`).
            do_scale_augmentation: randomly rescale the images (training batches; see the image processor).
            warn_out_of_vocabulary: log the warning below; `False` where the texts were checked once before
                (a training collator, whose dataset was checked as a whole).
            warn_images_out_of_range: the image processor's warning of images far outside what the model reads
                (a page given to a line model, a tiny image); `False` where the caller warns itself.
            do_normalize_capture: the image processor's normalisation of each capture (polarity, margins);
                `False` for images that went through its `normalize_capture_of` already.

        Returns:
            `BatchFeature` with, depending on the inputs given:
            - `pixel_values` float32 (batch, channels, height, width), and `pixel_mask` int64 (batch, height,
              width) where the image processor pads (not in "fixed" mode);
            - `decoder_input_ids` int64 (batch, prompt_len), `decoder_attention_mask` int64 (batch, prompt_len);
            - `labels` int64 (batch, target_len).

        Raises:
            ValueError: nothing to process, a label longer than `max_label_length` (the message gives the
                sample index, its length and the limit), or an image that cannot be used.

        Characters (or LaTeX tokens) outside the vocabulary become `<unk>`; each call logs one warning with
        their count (see `out_of_vocabulary`).
        """
        if images is None and text is None and text_target is None:
            raise ValueError("nothing to process: give images, text (a decoding prefix) or text_target")
        if padding not in (True, "longest"):
            raise ValueError(f"sequences are always padded to the longest in the batch; got padding={padding!r}")
        texts, targets = _as_list(text), _as_list(text_target)
        data = {}
        if images is not None:
            data.update(self.image_processor(images, return_tensors=None, do_scale_augmentation=do_scale_augmentation,
                                             warn_images_out_of_range=warn_images_out_of_range,
                                             do_normalize_capture=do_normalize_capture))
        sizes = {
            name: len(value)
            for name, value in (("images", data.get("pixel_values")), ("text", texts), ("text_target", targets))
            if value is not None
        }
        if len(set(sizes.values())) > 1 or 0 in sizes.values():
            raise ValueError(f"batch sizes must be equal and non-zero, got {sizes}")
        if warn_out_of_vocabulary:
            self._warn_out_of_vocabulary((texts or []) + (targets or []))
        if texts is not None:
            data.update(self._prefix_ids(texts))
        if targets is not None:
            limit = self.max_label_length if max_label_length is None else max_label_length
            data["labels"] = self._label_ids(targets, limit)
        return BatchFeature(data, tensor_type=return_tensors)

    def out_of_vocabulary(self, texts: list[str]) -> list[str]:
        """The characters (or LaTeX tokens) of `texts` that the vocabulary lacks, as often as they occur."""
        # The tokenizer's own pre-tokenizer gives the units it looks up: characters, or LaTeX tokens.
        vocab = self.tokenizer.get_vocab()
        pieces = self.tokenizer.backend_tokenizer.pre_tokenizer.pre_tokenize_str
        return [piece for text in texts for piece, _ in pieces(text) if piece not in vocab]

    def _warn_out_of_vocabulary(self, texts: list[str]) -> None:
        unknown = self.out_of_vocabulary(texts)
        if unknown:
            characters = all(len(piece) == 1 for piece in unknown)
            distinct = ("" if characters else " ").join(dict.fromkeys(unknown))
            logger.warning(
                f"{len(unknown)} {'character' if characters else 'token'}(s) outside the vocabulary were mapped "
                f"to {self.tokenizer.unk_token}: {distinct!r}"
            )

    def _prefix_ids(self, texts: list[str]) -> dict[str, np.ndarray]:
        """`<s>` + characters, left-padded: int64 (batch, prompt_len) ids and attention mask."""
        encoded = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        sequences = [[self.tokenizer.bos_token_id] + ids for ids in encoded]
        length = max(len(ids) for ids in sequences)
        input_ids = np.full((len(sequences), length), self.tokenizer.pad_token_id, dtype=np.int64)
        attention_mask = np.zeros((len(sequences), length), dtype=np.int64)
        for row, ids in enumerate(sequences):
            input_ids[row, length - len(ids) :] = ids
            attention_mask[row, length - len(ids) :] = 1
        return {"decoder_input_ids": input_ids, "decoder_attention_mask": attention_mask}

    def _label_ids(self, texts: list[str], max_label_length: int | None) -> np.ndarray:
        """Characters + `</s>`, right-padded with -100: int64 (batch, target_len)."""
        eos = self.tokenizer.eos_token_id
        sequences = [ids + [eos] for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]]
        for index, ids in enumerate(sequences):
            if max_label_length is not None and len(ids) > max_label_length:
                raise ValueError(
                    f"label of sample {index} has {len(ids)} tokens ({len(ids) - 1} characters + "
                    f"{self.tokenizer.eos_token}), more than max_label_length={max_label_length}"
                )
        labels = np.full((len(sequences), max(len(ids) for ids in sequences)), IGNORE_INDEX, dtype=np.int64)
        for row, ids in enumerate(sequences):
            labels[row, : len(ids)] = ids
        return labels

    def batch_decode(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        """Decode id sequences (batch, seq_len) to strings.

        Args:
            sequences: nested lists, a NumPy array or a torch tensor of ids, such as `generate()` output or
                `labels`; -100 is read as padding.
            skip_special_tokens: drop `<pad>`, `<s>`, `</s>` and `<unk>` from the strings.

        Each sequence ends at its first `</s>` (kept only when `skip_special_tokens=False`).
        """
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in sequences]

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """Decode one id sequence (seq_len,) to a string; see `batch_decode`."""
        ids = [int(i) for i in (ids.tolist() if hasattr(ids, "tolist") else ids)]
        pad, eos = self.tokenizer.pad_token_id, self.tokenizer.eos_token_id
        ids = [pad if i == IGNORE_INDEX else i for i in ids]
        if eos in ids:
            ids = ids[: ids.index(eos) + 1]
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=False)

    def post_process_image_text_to_text(self, generated_outputs, skip_special_tokens: bool = True) -> list[str]:
        """Decode `generate()` output (batch, seq_len) for the `image-text-to-text` pipeline."""
        return self.batch_decode(generated_outputs, skip_special_tokens=skip_special_tokens)


def _as_list(texts: str | list[str] | None) -> list[str] | None:
    return [texts] if isinstance(texts, str) else None if texts is None else list(texts)


TextRecognitionProcessor.register_for_auto_class("AutoProcessor")
