"""TrOCR over a convolutional line encoder: transformers' `TrOCRForCausalLM` reads the features of textrec's
self-attention encoder, in a `VisionEncoderDecoderModel`, with an optional CTC head on the encoder.

    line image ─ CNN (strided stem, stages) ─ columns ─ transformer encoder ─┬─ TrOCR decoder ─ logits
                                                                           └─ CTC head (optional) ─ CTC logits

TrOCR (Li et al. 2021) reads 16x16 ViT patches of a 384x384 image with a pre-trained encoder; trained from
scratch on a CPU, a ViT's patches are slow to start reading. This keeps TrOCR's decoder and the
`VisionEncoderDecoderModel` interface (and so `from_trocr_and_charbert`) and gives it the encoder, and the CTC
term, that make textrec's line models read within the hour. Lines keep their aspect ratio: the encoder's
`attention_mask` (the columns that are not padding) reaches the decoder's cross-attention.
"""

import torch
from torch import nn
from transformers import TrOCRForCausalLM, VisionEncoderDecoderModel
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import Seq2SeqLMOutput

from .configuration_trocr_recognizer import TrOCRRecognizerConfig
from .ctc import CTCHead, ctc_loss
from .generation_cache import CACHE_NAME, resolve_cache
from .initialization import init_recognizer_weights
from .modeling_self_attention import SelfAttentionRecognizerEncoder
from .recognizer import CTCReadingMixin, RecognizerEncoderOutput, recognition_loss, shift_tokens_right


class TrOCRForTextRecognition(CTCReadingMixin, VisionEncoderDecoderModel):
    """A `VisionEncoderDecoderModel` of textrec's convolutional line encoder and transformers' TrOCR decoder.

    `pixel_values (batch, channels, 32, width)` and `pixel_mask (batch, 32, width)` in; `Seq2SeqLMOutput` out,
    with `loss` from `labels (batch, target_length)` (cross-entropy, plus `ctc_loss_weight` x CTC when the
    config has a CTC head). `generate()` is TrOCR's decoding; `ctc_decode()` and `joint_decode()` read with the
    CTC head (see `CTCReadingMixin`).
    """

    config_class = TrOCRRecognizerConfig
    main_input_name = "pixel_values"
    # The loss is a plain token mean: the Trainer must keep dividing it for gradient accumulation.
    accepts_loss_kwargs = False

    def __init__(
        self,
        config: TrOCRRecognizerConfig,
        encoder: SelfAttentionRecognizerEncoder | None = None,
        decoder: TrOCRForCausalLM | None = None,
    ):
        if not isinstance(config, TrOCRRecognizerConfig):
            # Loaded as remote code, the configuration class may come from another module copy.
            config = TrOCRRecognizerConfig.from_dict(config.to_dict())
        if encoder is None:
            encoder = SelfAttentionRecognizerEncoder(config.encoder)
        if decoder is None:
            decoder = TrOCRForCausalLM(config.decoder)
        super().__init__(config=config, encoder=encoder, decoder=decoder)
        self.ctc_head = None
        if config.ctc_loss_weight > 0:
            self.ctc_head = CTCHead(config.encoder.hidden_size, config.vocab_size)
            self.ctc_head.apply(lambda module: init_recognizer_weights(module, config.encoder.initializer_range))
        self.generation_config.max_new_tokens = config.max_target_length

    def reset_vocabulary(self, vocab_size: int) -> None:
        """New token embeddings, classifier and CTC head of `vocab_size` entries, every other weight kept:
        fine-tuning with another character set."""
        decoder = self.decoder.model.decoder
        old = decoder.embed_tokens
        decoder.embed_tokens = type(old)(vocab_size, old.embedding_dim, padding_idx=self.config.pad_token_id,
                                         embed_scale=getattr(old, "embed_scale", 1.0)).to(old.weight.device)
        self.decoder.output_projection = nn.Linear(old.embedding_dim, vocab_size, bias=False).to(old.weight.device)
        modules = [decoder.embed_tokens, self.decoder.output_projection]
        if self.ctc_head is not None:
            self.ctc_head = CTCHead(self.config.encoder.hidden_size, vocab_size).to(old.weight.device)
            modules.append(self.ctc_head)
        for module in modules:
            module.apply(lambda m: init_recognizer_weights(m, self.config.encoder.initializer_range))
        self.config.decoder.vocab_size = vocab_size
        self.decoder.config.vocab_size = vocab_size

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
            decoder_input_ids: `(batch, target_length)`; built from `labels` when omitted.
            decoder_attention_mask: `(batch, target_length)` padding mask of the decoder inputs.
            labels: `(batch, target_length)` target ids ending in eos, padded with -100.
            encoder_outputs: precomputed encoder output (used by `generate()`).
            past_key_values: `EncoderDecoderCache` for incremental decoding.
            use_cache: return the cache for the next step.
            output_attentions: also return the decoder's self- and cross-attention weights.
            cache: `past_key_values` under the name transformers 5.24 on gives it (see `generation_cache`).

        Returns:
            `Seq2SeqLMOutput` with `logits (batch, target_length, vocab_size)` and `loss` when `labels` are given.
        """
        if encoder_outputs is None:
            if pixel_values is None:
                raise ValueError("Pass `pixel_values` (batch, channels, height, width) or `encoder_outputs`.")
            encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        elif not isinstance(encoder_outputs, RecognizerEncoderOutput):
            encoder_outputs = RecognizerEncoderOutput(*encoder_outputs)
        encoder_hidden_states = encoder_outputs.last_hidden_state
        if hasattr(self, "enc_to_dec_proj"):
            encoder_hidden_states = self.enc_to_dec_proj(encoder_hidden_states)
        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("Pass `labels` or `decoder_input_ids`.")
            decoder_input_ids = shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)
        past_key_values = resolve_cache(past_key_values, cache)
        if use_cache and past_key_values is None:
            past_key_values = EncoderDecoderCache(DynamicCache(), DynamicCache())
        decoder_outputs = self.decoder(
            input_ids=decoder_input_ids,
            attention_mask=decoder_attention_mask,
            encoder_hidden_states=encoder_hidden_states,
            encoder_attention_mask=encoder_outputs.attention_mask,
            use_cache=use_cache,
            **{CACHE_NAME: past_key_values},
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        logits = decoder_outputs.logits
        loss = None
        if labels is not None:
            loss = recognition_loss(logits, labels)
            if self.ctc_head is not None:
                alignment_loss = ctc_loss(
                    self.ctc_head(encoder_outputs.last_hidden_state),
                    labels,
                    blank_token_id=self.config.pad_token_id,
                    eos_token_id=self.config.eos_token_id,
                    source_mask=encoder_outputs.attention_mask,
                )
                loss = (1 - self.config.ctc_loss_weight) * loss + self.config.ctc_loss_weight * alignment_loss
        return Seq2SeqLMOutput(
            loss=loss,
            logits=logits,
            **{CACHE_NAME: getattr(decoder_outputs, CACHE_NAME) if use_cache else None},
            decoder_hidden_states=decoder_outputs.hidden_states,
            decoder_attentions=decoder_outputs.attentions,
            cross_attentions=decoder_outputs.cross_attentions,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
        )


TrOCRForTextRecognition.register_for_auto_class("AutoModelForImageTextToText")
