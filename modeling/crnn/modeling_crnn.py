"""CRNN: a VGG and a bidirectional LSTM encode the line; a CTC classifier reads it.

The plain convolutional-recurrent network with CTC of Shi, Bai & Yao (TPAMI 2017), the model docTR
(`crnn_vgg16_bn`) and PaddleOCR (CRNN, and the CTC branch of PP-OCR) users pick: textrec trains it beside
its attention recognizers as their peer. The encoder is the one sharp attention reads with (`vgg_bilstm.py`).

`generate()` is CTC decoding (`ctc_decode()`), so that the model reads wherever a textrec recognizer does
(`recognize()`, the `text-recognition` pipeline, `Seq2SeqTrainer` evaluation): best path, or, with the generation
config's `num_beams` above 1, prefix beam search, fused with the model's character n-gram where it has one
(`ctc_language_model.py`); no sampling.
"""

from dataclasses import dataclass

import torch
from torch import nn
from transformers import GenerationConfig, GenerationMixin, PreTrainedModel
from transformers.utils import ModelOutput

from .configuration_crnn import CRNNConfig
from .ctc import CTCDecoderOutput, CTCHead, ctc_greedy_decode, ctc_loss
from .ctc_language_model import CharacterNGramModel, ctc_beam_decode
from .initialization import init_recognizer_weights
from .recognizer import RecognizerEncoderOutput
from .vgg_bilstm import VGGFeatureExtractor, check_line_images, read_columns


@dataclass
class CTCRecognitionOutput(ModelOutput):
    """
    Args:
        loss: CTC loss (averaged over lines after dividing each by its length), when labels are given.
        logits: `(batch, columns, vocab_size)` one distribution per feature column, the pad id as the blank.
        attention_mask: `(batch, columns)` 1 for columns of real pixels; None without a pixel mask.
    """

    loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    attention_mask: torch.LongTensor | None = None


class CRNNPreTrainedModel(PreTrainedModel):
    config_class = CRNNConfig
    base_model_prefix = "crnn"
    main_input_name = "pixel_values"
    supports_gradient_checkpointing = False
    _no_split_modules = ["VGGFeatureExtractor"]

    def _init_weights(self, module: nn.Module) -> None:
        init_recognizer_weights(module, self.config.initializer_range)


class CRNNEncoder(CRNNPreTrainedModel):
    """VGG and bidirectional LSTM, usable alone as a vision model.

    `pixel_values (batch, num_channels, image_height, width)` → `last_hidden_state (batch, width / 4 - 1, 2 * hidden_size)`.
    """

    def __init__(self, config: CRNNConfig):
        super().__init__(config)
        self.backbone = VGGFeatureExtractor(config.num_channels, config.cnn_channels)
        self.sequence_model = nn.LSTM(
            config.cnn_channels[-1], config.hidden_size, num_layers=config.num_layers, bidirectional=True,
            batch_first=True,
        )
        self.post_init()

    def forward(
        self, pixel_values: torch.FloatTensor, pixel_mask: torch.LongTensor | None = None, **kwargs
    ) -> RecognizerEncoderOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, image_height, width)`, width at least 8.
            pixel_mask: `(batch, image_height, width)`, 1 on real pixels, 0 on right padding.

        Returns:
            `RecognizerEncoderOutput`; with a pixel mask, the LSTM reads each image's valid columns only and
            `attention_mask (batch, width / 4 - 1)` marks them.
        """
        check_line_images(pixel_values, self.config.num_channels, self.config.image_height)
        hidden_states, attention_mask = read_columns(self.backbone, self.sequence_model, pixel_values, pixel_mask)
        return RecognizerEncoderOutput(last_hidden_state=hidden_states, attention_mask=attention_mask)


class CRNNForTextRecognition(CRNNPreTrainedModel, GenerationMixin):
    """CRNN encoder + CTC classifier: `pixel_values` and `labels` (as for the encoder-decoder recognizers: ids
    ending in eos, padded with -100) in, CTC loss and per-column logits out; `generate()` / `ctc_decode()`
    read by CTC best path."""

    def __init__(self, config: CRNNConfig):
        super().__init__(config)
        self.encoder = CRNNEncoder(config)
        self.ctc_head = CTCHead(2 * config.hidden_size, config.vocab_size)
        self.language_model = None
        if config.language_model_order:
            self.language_model = CharacterNGramModel(config.language_model_order, config.vocab_size,
                                                      config.language_model_ngrams, config.language_model_histories)
        self.post_init()
        self.generation_config.decoding = "ctc"
        # Not a copy of the model config: saved as such, it would be reloaded without `decoding`.
        self.generation_config._from_model_config = False

    def get_encoder(self):
        return self.encoder

    def get_output_embeddings(self):
        return self.ctc_head.classifier

    def set_output_embeddings(self, new_embeddings):
        self.ctc_head.classifier = new_embeddings

    def reset_vocabulary(self, vocab_size: int) -> None:
        """Replaces the classifier with a freshly initialised one of `vocab_size` entries, keeping the
        encoder: fine-tuning with another character set."""
        head = CTCHead(2 * self.config.hidden_size, vocab_size).to(self.ctc_head.classifier.weight.device)
        self._init_weights(head.classifier)
        self.ctc_head = head
        self.config.vocab_size = vocab_size
        # The n-gram's tables are keyed by the old vocabulary: the model reads without one until another is attached.
        self.language_model = None
        self.config.language_model_order = self.config.language_model_ngrams = self.config.language_model_histories = 0

    def forward(
        self,
        pixel_values: torch.FloatTensor,
        pixel_mask: torch.LongTensor | None = None,
        labels: torch.LongTensor | None = None,
        **kwargs,
    ) -> CTCRecognitionOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, image_height, width)` images from the processor.
            pixel_mask: `(batch, image_height, width)`, 1 on real pixels, 0 on padding.
            labels: `(batch, target_length)` target ids ending in eos, padded with -100 (eos is not a CTC
                target).

        Returns:
            `CTCRecognitionOutput` with `logits (batch, width / 4 - 1, vocab_size)` and the CTC `loss` when
            `labels` are given.
        """
        encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        logits = self.ctc_head(encoder_outputs.last_hidden_state)
        loss = None
        if labels is not None:
            loss = ctc_loss(
                logits,
                labels,
                blank_token_id=self.config.pad_token_id,
                eos_token_id=self.config.eos_token_id,
                source_mask=encoder_outputs.attention_mask,
            )
        return CTCRecognitionOutput(loss=loss, logits=logits, attention_mask=encoder_outputs.attention_mask)

    @torch.no_grad()
    def ctc_decode(
        self,
        pixel_values: torch.FloatTensor,
        pixel_mask: torch.LongTensor | None = None,
        return_dict_in_generate: bool = False,
        num_beams: int | None = None,
        generation_config: GenerationConfig | None = None,
        best_path_under: float = 0.0,
        **kwargs,
    ) -> torch.LongTensor | CTCDecoderOutput:
        """Reads the images by CTC best path, or by prefix beam search where `num_beams` (default: the generation
        config's, `generation_config` or the model's) is above 1, fused with the model's character n-gram where it
        has one (by the generation config's `language_model_weight`, `length_bonus` and `line_break_token_ids`).

        Args:
            return_dict_in_generate: return a `CTCDecoderOutput` (the sequences with the logits they were read
                from), as `generate()` does with this argument.
            best_path_under: with beam search, a line whose best path's character confidence is under this is read
                by its best path (`ctc_beam_decode`; a page reader's noise runs); 0.0 searches every line.

        Returns:
            `(batch, length)` token ids ending in eos and padded with the pad id (decode them with
            `processor.batch_decode(..., skip_special_tokens=True)`).
        """
        outputs = self(pixel_values, pixel_mask=pixel_mask)
        search = generation_config if generation_config is not None else self.generation_config
        if num_beams is not None and num_beams < 1:
            raise ValueError(f"num_beams must be >= 1, got {num_beams}")
        num_beams = num_beams or search.num_beams or 1
        if num_beams > 1:
            special = {self.config.bos_token_id, self.config.eos_token_id, getattr(self.config, "unk_token_id", None)}
            sequences = ctc_beam_decode(
                outputs.logits,
                blank_token_id=self.config.pad_token_id,
                eos_token_id=self.config.eos_token_id,
                num_beams=num_beams,
                source_mask=outputs.attention_mask,
                language_model=self.language_model,
                language_model_weight=getattr(search, "language_model_weight", 0.0),
                length_bonus=getattr(search, "length_bonus", 0.0),
                skip_token_ids=frozenset(special - {None, self.config.pad_token_id}),
                line_break_token_ids=frozenset(getattr(search, "line_break_token_ids", None) or ()),
                best_path_under=best_path_under,
            )
        else:
            sequences = ctc_greedy_decode(
                outputs.logits,
                blank_token_id=self.config.pad_token_id,
                eos_token_id=self.config.eos_token_id,
                source_mask=outputs.attention_mask,
            )
        if return_dict_in_generate:
            return CTCDecoderOutput(sequences=sequences, logits=outputs.logits, attention_mask=outputs.attention_mask)
        return sequences

    @torch.no_grad()
    def generate(
        self,
        inputs: torch.Tensor | None = None,
        generation_config: GenerationConfig | None = None,
        pixel_mask: torch.LongTensor | None = None,
        decoding: str | None = None,
        **kwargs,
    ) -> torch.LongTensor:
        """`ctc_decode()` with `GenerationMixin.generate`'s call signature: the images as `inputs` or
        `pixel_values`, the whole reading (the same as `ctc_decode()` and the pipeline's), cut only where
        `max_new_tokens` is given in the call. Length limits of the generation config (`max_length`, which
        `Seq2SeqTrainer` passes) do not apply to a reading that has no steps; `labels` are ignored. `num_beams`
        above 1 reads by prefix beam search; sampling does not apply to CTC decoding and is refused, and so is a
        `decoding` other than `"ctc"` (the argument the recognizers with a decoder take).

        Returns:
            `(batch, length)` token ids ending in eos (unless cut) and padded with the pad id.
        """
        if decoding not in (None, "ctc"):
            raise ValueError(f"CRNN has no decoder: it reads by CTC (decoding='ctc'), not {decoding!r}.")
        config = generation_config if generation_config is not None else self.generation_config
        pixel_values = inputs if inputs is not None else kwargs.get("pixel_values")
        if pixel_values is None:
            raise ValueError("Pass the images as `inputs` or `pixel_values` (batch, channels, image_height, width).")
        if kwargs.get("do_sample", config.do_sample):
            raise ValueError("CRNN reads by CTC best path or prefix beam search: sampling does not apply.")
        sequences = self.ctc_decode(pixel_values, pixel_mask=pixel_mask, num_beams=kwargs.get("num_beams"),
                                    generation_config=config)
        limit = kwargs.get("max_new_tokens")
        return sequences[:, :limit] if limit else sequences


CRNNForTextRecognition.register_for_auto_class("AutoModelForImageTextToText")
