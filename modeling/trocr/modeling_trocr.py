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
from transformers.cache_utils import EncoderDecoderCache

from .configuration_trocr import TrOCRRecognizerConfig
from .ctc import CTCHead
from .generation_cache import CACHE_NAME
from .initialization import init_recognizer_weights
from .modeling_self_attention import SelfAttentionRecognizerEncoder
from .recognizer import CTCReadingMixin, DecoderSteps, RecognizerEncoderOutput, RecognizerForwardMixin


class TrOCRForTextRecognition(RecognizerForwardMixin, CTCReadingMixin, VisionEncoderDecoderModel):
    """A `VisionEncoderDecoderModel` of textrec's convolutional line encoder and transformers' TrOCR decoder.

    `pixel_values (batch, channels, 32, width)` and `pixel_mask (batch, 32, width)` in; `Seq2SeqLMOutput` out,
    with `loss` from `labels (batch, target_length)` (cross-entropy, plus `ctc_loss_weight` x CTC when the
    config has a CTC head). `generate()` is TrOCR's decoding; `ctc_decode()` and `joint_decode()` read with the
    CTC head (see `CTCReadingMixin`).
    """

    config_class = TrOCRRecognizerConfig

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
        """transformers' `TrOCRForCausalLM` over the encoder's output (projected to its width where they differ)."""
        encoder_hidden_states = encoder_outputs.last_hidden_state
        if hasattr(self, "enc_to_dec_proj"):
            encoder_hidden_states = self.enc_to_dec_proj(encoder_hidden_states)
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
        steps = DecoderSteps(getattr(decoder_outputs, CACHE_NAME), decoder_outputs.hidden_states,
                             decoder_outputs.attentions, decoder_outputs.cross_attentions)
        return decoder_outputs.logits, steps


TrOCRForTextRecognition.register_for_auto_class("AutoModelForImageTextToText")
