# Copied from modeling/common/recognizer.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""What every image-to-text recognizer in textrec shares: the encoder output, the teacher-forcing
shift, the loss, and the `forward` that joins an encoder, a decoder and a classifier.

A recognizer model class lists `EncoderDecoderRecognizerMixin` before `PreTrainedModel`'s subclass
and `GenerationMixin` among its bases, and provides three sub-modules:

- `self.encoder(pixel_values, pixel_mask)` returning a `RecognizerEncoderOutput`;
- `self.decoder(input_ids, encoder_hidden_states, encoder_attention_mask, attention_mask,
  past_key_values, output_attentions)` returning an output with `last_hidden_state`,
  `self_attentions` and `cross_attentions` (see `TransformerDecoder`);
- `self.lm_head`, mapping decoder states to vocabulary logits;
- optionally `self.ctc_head` (a `CTCHead`, when `config.ctc_loss_weight > 0`) over the encoder outputs, for
  joint CTC-attention training and `ctc_decode`.

`generate()` reads as the model was released to read: with the decoding its generation config names
(`generation_config.decoding`: "attention", "ctc" or "joint", chosen when it was packaged), so that
transformers' own calls (`model.generate(**processor(images, return_tensors="pt"))`, `Seq2SeqTrainer`'s
evaluation, a pipeline) read as textrec does, with or without textrec installed.
`model.generate(..., decoding="attention")` asks for the attention decoder whatever the model prefers.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import GenerationConfig, LogitsProcessorList
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput, Seq2SeqLMOutput

from .ctc import CTCDecoderOutput, ctc_greedy_decode, ctc_loss
from .ctc_prefix_score import CTCPrefixScoreLogitsProcessor
from .generation_cache import CACHE_NAME, resolve_cache


@dataclass
class RecognizerEncoderOutput(BaseModelOutput):
    """
    Args:
        last_hidden_state: `(batch, source_length, dim)` visual features as a sequence.
        attention_mask: `(batch, source_length)` 1 for features of real pixels, 0 for padding;
            None when no pixel mask was given.
    """

    attention_mask: torch.LongTensor | None = None


def downsample_pixel_mask(pixel_mask: torch.Tensor, feature_size: tuple[int, int]) -> torch.LongTensor:
    """The pixel mask at feature-map resolution: a feature is valid if its cell covers a real pixel.

    Args:
        pixel_mask: `(batch, height, width)`, 1 on real pixels.
        feature_size: `(feature_height, feature_width)`.

    Returns:
        `(batch, feature_height, feature_width)` long tensor of 0/1.
    """
    pooled = F.adaptive_max_pool2d(pixel_mask[:, None].float(), feature_size)
    return pooled[:, 0].long()


def shift_tokens_right(labels: torch.Tensor, pad_token_id: int, decoder_start_token_id: int) -> torch.LongTensor:
    """Teacher-forcing inputs: `[start, y_1, ..., y_{n-1}]` from labels `[y_1, ..., y_n]` (-100 read as pad).

    Args:
        labels: `(batch, target_length)`.

    Returns:
        `(batch, target_length)` decoder input ids.
    """
    shifted = labels.new_full(labels.shape, pad_token_id)
    shifted[:, 1:] = labels[:, :-1]
    shifted[:, 0] = decoder_start_token_id
    return shifted.masked_fill(shifted == -100, pad_token_id)


def recognition_loss(logits: torch.Tensor, labels: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """Token-mean cross-entropy over positions whose label is not -100.

    Args:
        logits: `(batch, target_length, vocab_size)`.
        labels: `(batch, target_length)`.
    """
    return F.cross_entropy(
        logits.flatten(0, 1).float(), labels.flatten(), ignore_index=-100, label_smoothing=label_smoothing
    )


DECODINGS = ("attention", "ctc", "joint")
"""How a recognizer reads: its attention decoder (transformers' `generate()`), its CTC head's best path
(`ctc_decode()`), or both (`joint_decode()`)."""


class CTCReadingMixin:
    """Reading with a CTC head on the encoder (`self.ctc_head`, None without one): `ctc_decode()` alone, or
    `joint_decode()` with the attention decoder; and `generate()`, which reads with the decoding the generation
    config names. The encoder takes `pixel_mask` and returns a `RecognizerEncoderOutput` (its `attention_mask`
    marks the real columns). List it before the class that brings `GenerationMixin.generate`."""

    @torch.no_grad()
    def generate(
        self,
        inputs: torch.Tensor | None = None,
        generation_config: GenerationConfig | None = None,
        decoding: str | None = None,
        **kwargs,
    ) -> torch.LongTensor:
        """Reads the images with `decoding`: by default the generation config's `decoding` (the one the model was
        released with), else `"attention"`.

        - `"attention"`: `GenerationMixin.generate`, the attention decoder (greedy or beam search, as the
          generation config and the arguments say);
        - `"ctc"`: `ctc_decode()`, the CTC head's best path, returned as `generate()` returns sequences (decode them
          with `processor.batch_decode(..., skip_special_tokens=True)`); cut only where `max_new_tokens` is given
          in the call. The decoder's search settings (beams, length limits of the generation config) do not apply;
        - `"joint"`: `joint_decode()`, the decoder's search with CTC prefix scores; the other arguments go to it.

        Args:
            inputs: `(batch, channels, height, width)` images, or pass them as `pixel_values`.
            generation_config: replaces the model's, as in `GenerationMixin.generate`; its `decoding` is read too.
            decoding: `"attention"`, `"ctc"` or `"joint"`: `decoding="attention"` reads with the decoder whatever
                the model prefers.
            kwargs: `pixel_values`, `pixel_mask`, and `generate()` arguments.
        """
        config = generation_config if generation_config is not None else self.generation_config
        decoding = decoding or getattr(config, "decoding", None) or "attention"
        if decoding not in DECODINGS:
            raise ValueError(f"decoding must be one of {DECODINGS}, got {decoding!r}")
        if decoding == "attention":
            return super().generate(inputs, generation_config=generation_config, **kwargs)
        pixel_values = inputs if inputs is not None else kwargs.pop("pixel_values", None)
        if pixel_values is None:
            raise ValueError("Pass the images as `inputs` or `pixel_values` (batch, channels, height, width).")
        if decoding == "joint":
            return self.joint_decode(pixel_values, generation_config=generation_config, **kwargs)
        sequences = self.ctc_decode(pixel_values, pixel_mask=kwargs.get("pixel_mask"))
        limit = kwargs.get("max_new_tokens")
        return sequences[:, :limit] if limit else sequences

    @torch.no_grad()
    def ctc_decode(
        self,
        pixel_values: torch.FloatTensor,
        pixel_mask: torch.LongTensor | None = None,
        return_dict_in_generate: bool = False,
        **kwargs,
    ) -> torch.LongTensor | CTCDecoderOutput:
        """Reads the images with the CTC head alone (greedy best path): the encoder runs once and the
        decoder not at all, so it is much faster than `generate()`, and usually a little less accurate.

        Args:
            pixel_values: `(batch, channels, height, width)`.
            pixel_mask: `(batch, height, width)`, 1 on real pixels.
            return_dict_in_generate: return a `CTCDecoderOutput` (the sequences with the CTC head's logits they
                were read from), as `generate()` does with this argument.

        Returns:
            `(batch, length)` token ids ending in eos and padded with the pad id, as from `generate()`
            (decode them with `processor.batch_decode(..., skip_special_tokens=True)`).
        """
        if getattr(self, "ctc_head", None) is None:
            raise ValueError(
                f"{type(self).__name__} has no CTC head (its config has ctc_loss_weight=0): read with "
                f"generate(..., decoding=\"attention\")."
            )
        encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        logits = self.ctc_head(encoder_outputs.last_hidden_state)
        sequences = ctc_greedy_decode(
            logits,
            blank_token_id=self.config.pad_token_id,
            eos_token_id=self.config.eos_token_id,
            source_mask=encoder_outputs.attention_mask,
        )
        if return_dict_in_generate:
            return CTCDecoderOutput(sequences=sequences, logits=logits, attention_mask=encoder_outputs.attention_mask)
        return sequences

    @torch.no_grad()
    def joint_decode(
        self,
        pixel_values: torch.FloatTensor,
        pixel_mask: torch.LongTensor | None = None,
        ctc_weight: float | None = None,
        num_beams: int | None = None,
        **generate_kwargs,
    ) -> torch.LongTensor:
        """Reads the images with the attention decoder and the CTC head together: `generate()` (greedy, or beam
        search with `num_beams > 1`) whose next-token scores are joint CTC-attention scores
        (`CTCPrefixScoreLogitsProcessor`). The encoder runs once for both.

        Args:
            pixel_values: `(batch, channels, height, width)`.
            pixel_mask: `(batch, height, width)`, 1 on real pixels.
            ctc_weight: the CTC share of the score (default: `generation_config.ctc_weight`, else 0.3).
            num_beams: default: the generation config's.
            generate_kwargs: more `generate()` arguments (`max_new_tokens`, `generation_config`, ...).

        Returns:
            `(batch, length)` token ids, decoder start token first, as from `generate()`.
        """
        if getattr(self, "ctc_head", None) is None:
            raise ValueError(
                f"{type(self).__name__} has no CTC head (its config has ctc_loss_weight=0): read with "
                f"generate(..., decoding=\"attention\")."
            )
        config = generate_kwargs.get("generation_config") or self.generation_config
        if ctc_weight is None:
            ctc_weight = getattr(config, "ctc_weight", None) or 0.3
        if num_beams is not None and num_beams < 1:
            raise ValueError(f"num_beams must be >= 1, got {num_beams}")
        num_beams = num_beams or config.num_beams or 1
        encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        scorer = CTCPrefixScoreLogitsProcessor(
            self.ctc_head(encoder_outputs.last_hidden_state).float().log_softmax(dim=-1),
            encoder_outputs.attention_mask,
            blank_token_id=self.config.pad_token_id,
            eos_token_id=self.config.eos_token_id,
            ctc_weight=ctc_weight,
            num_beams=num_beams,
        )
        return self.generate(
            encoder_outputs=type(encoder_outputs)(**encoder_outputs),  # generate() expands it for the beams in place
            num_beams=num_beams,
            logits_processor=LogitsProcessorList([scorer]),
            decoding="attention",
            **generate_kwargs,
        )


@dataclass
class DecoderSteps:
    """What a recognizer's `_decode` returns beside the logits, for the output of `forward`."""

    past_key_values: object | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    self_attentions: tuple[torch.Tensor, ...] | None = None
    cross_attentions: tuple[torch.Tensor, ...] | None = None


class RecognizerForwardMixin:
    """The one `forward` of the encoder-decoder recognizers (the interface of `VisionEncoderDecoderModel`): encode
    the images (or take `encoder_outputs`), decode the decoder inputs (or the labels shifted right, teacher
    forcing), and add the loss when `labels` are given. An architecture supplies `_decode` (its decoder and
    classifier) and may override the other steps: `_encoder_outputs`, `_decoding_cache`, `_teacher_forcing`
    (CoMER learns both directions there) and `_loss`."""

    main_input_name = "pixel_values"
    # The loss is a plain token mean: the Trainer must keep dividing it for gradient accumulation.
    accepts_loss_kwargs = False
    output_class = Seq2SeqLMOutput

    def forward(
        self,
        pixel_values: torch.FloatTensor | None = None,
        pixel_mask: torch.LongTensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.LongTensor | None = None,
        labels: torch.LongTensor | None = None,
        encoder_outputs: RecognizerEncoderOutput | tuple | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
        cache: EncoderDecoderCache | None = None,
        **kwargs,
    ) -> Seq2SeqLMOutput:
        """
        Args:
            pixel_values: `(batch, channels, height, width)` images from the processor.
            pixel_mask: `(batch, height, width)`, 1 on real pixels, 0 on padding.
            decoder_input_ids: `(batch, target_length)`; when omitted, `labels` are read with teacher forcing.
            decoder_attention_mask: `(batch, target_length)` padding mask of the decoder inputs.
            labels: `(batch, target_length)` target ids ending in eos, padded with -100.
            encoder_outputs: precomputed encoder output (used by `generate()`).
            past_key_values: the cache for incremental decoding.
            use_cache: return the cache for the next step.
            output_attentions: also return the decoder's self- and cross-attention weights.
            output_hidden_states: also return the decoder's hidden states (where the decoder gives them).
            cache: `past_key_values` under the name transformers 5.24 on gives it (see `generation_cache`).

        Returns:
            `output_class` (a `Seq2SeqLMOutput`) with `logits (batch, target_length, vocab_size)` and `loss` when
            `labels` are given.
        """
        encoder_outputs = self._encoder_outputs(pixel_values, pixel_mask, encoder_outputs)
        options = dict(
            decoder_attention_mask=decoder_attention_mask,
            past_key_values=self._decoding_cache(resolve_cache(past_key_values, cache), bool(use_cache)),
            use_cache=bool(use_cache),
            output_attentions=bool(output_attentions),
            output_hidden_states=bool(output_hidden_states),
        )
        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("Pass `labels` or `decoder_input_ids`.")
            return self._teacher_forcing(encoder_outputs, labels, **options)
        return self._read(encoder_outputs, decoder_input_ids, labels, **options)

    def _encoder_outputs(self, pixel_values, pixel_mask, encoder_outputs) -> RecognizerEncoderOutput:
        """The encoder's output for `pixel_values`, or `encoder_outputs` as given (a tuple made the output)."""
        if encoder_outputs is None:
            if pixel_values is None:
                raise ValueError("Pass `pixel_values` (batch, channels, height, width) or `encoder_outputs`.")
            return self.encoder(pixel_values, pixel_mask=pixel_mask)
        if not isinstance(encoder_outputs, RecognizerEncoderOutput):
            encoder_outputs = RecognizerEncoderOutput(*encoder_outputs)
        return encoder_outputs

    def _decoding_cache(self, past_key_values, use_cache: bool):
        """The cache to decode with: a new one when `use_cache` asks for one and none was given."""
        if use_cache and past_key_values is None:
            return EncoderDecoderCache(DynamicCache(), DynamicCache())
        return past_key_values

    def _teacher_forcing(self, encoder_outputs, labels: torch.LongTensor, **options) -> Seq2SeqLMOutput:
        """`forward` given `labels` and no decoder inputs: the labels shifted right are the decoder's inputs."""
        decoder_input_ids = shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)
        return self._read(encoder_outputs, decoder_input_ids, labels, **options)

    def _read(
        self, encoder_outputs, decoder_input_ids: torch.LongTensor, labels: torch.LongTensor | None, *,
        decoder_attention_mask, past_key_values, use_cache: bool, output_attentions: bool, output_hidden_states: bool,
    ) -> Seq2SeqLMOutput:
        """Decode `decoder_input_ids` and score them against `labels` (when given)."""
        logits, steps = self._decode(
            encoder_outputs, decoder_input_ids, decoder_attention_mask, past_key_values, use_cache,
            output_attentions, output_hidden_states,
        )
        return self.output_class(
            loss=self._loss(logits, labels, encoder_outputs) if labels is not None else None,
            logits=logits,
            **{CACHE_NAME: steps.past_key_values if use_cache else None},
            decoder_hidden_states=steps.hidden_states,
            decoder_attentions=steps.self_attentions,
            cross_attentions=steps.cross_attentions,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
        )

    def _loss(self, logits: torch.Tensor, labels: torch.LongTensor, encoder_outputs) -> torch.Tensor:
        """Token-mean cross-entropy (with the configuration's `label_smoothing`), mixed with the CTC loss of the
        encoder's output by `ctc_loss_weight` where the model has a CTC head."""
        loss = recognition_loss(logits, labels, getattr(self.config, "label_smoothing", 0.0))
        if getattr(self, "ctc_head", None) is None:
            return loss
        alignment_loss = ctc_loss(
            self.ctc_head(encoder_outputs.last_hidden_state),
            labels,
            blank_token_id=self.config.pad_token_id,
            eos_token_id=self.config.eos_token_id,
            source_mask=encoder_outputs.attention_mask,
        )
        return (1 - self.config.ctc_loss_weight) * loss + self.config.ctc_loss_weight * alignment_loss


class EncoderDecoderRecognizerMixin(RecognizerForwardMixin, CTCReadingMixin):
    """An encoder-decoder recognizer built from textrec's own decoder (`self.decoder`, `self.lm_head`): its
    `_decode`, embeddings and vocabulary reset, with the one `forward` of `RecognizerForwardMixin`."""

    def get_encoder(self):
        return self.encoder

    def get_decoder(self):
        return self.decoder

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        self.lm_head = new_embeddings

    def get_input_embeddings(self):
        return self.decoder.embed_tokens

    def set_input_embeddings(self, value):
        self.decoder.embed_tokens = value

    def reset_vocabulary(self, vocab_size: int) -> None:
        """Replaces the token embedding and the classifier with freshly initialised ones of
        `vocab_size` entries, keeping every other weight: fine-tuning with another character set."""
        old_embedding = self.get_input_embeddings()
        embedding = torch.nn.Embedding(vocab_size, old_embedding.embedding_dim, padding_idx=self.config.pad_token_id)
        head = torch.nn.Linear(self.lm_head.in_features, vocab_size, bias=self.lm_head.bias is not None)
        for module in (embedding, head):
            self._init_weights(module)
        self.set_input_embeddings(embedding.to(old_embedding.weight.device))
        self.set_output_embeddings(head.to(old_embedding.weight.device))
        self.config.vocab_size = vocab_size

    def _decode(
        self,
        encoder_outputs: RecognizerEncoderOutput,
        decoder_input_ids: torch.LongTensor,
        decoder_attention_mask: torch.LongTensor | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        use_cache: bool = False,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> tuple[torch.Tensor, DecoderSteps]:
        decoder_outputs = self.decoder(
            input_ids=decoder_input_ids,
            encoder_hidden_states=encoder_outputs.last_hidden_state,
            encoder_attention_mask=encoder_outputs.attention_mask,
            attention_mask=decoder_attention_mask,
            past_key_values=past_key_values,
            output_attentions=output_attentions,
        )
        steps = DecoderSteps(past_key_values, None, decoder_outputs.self_attentions, decoder_outputs.cross_attentions)
        return self.lm_head(decoder_outputs.last_hidden_state), steps
