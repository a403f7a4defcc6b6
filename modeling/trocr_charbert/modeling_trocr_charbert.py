"""TrOCR–CharBERT: a TrOCR recognizer whose decoder input embeddings are corrected by CharBERT.

    token ids ─ TrOCR embeddings (scaled) ─ E ───────────────────────────────┐
                 E ─ transform ─ T (CharBERT tokens)      ┐                   │
                 E ─ transform ─ C (CharBERT characters)  ┴ CharBERT (causal) │
                                     token output ─ transform ─ T' ──────────┤
                                      char output ─ transform ─ C' ──────────┤
                                                         combine(E, T', C') ─┴─ + positions ─ TrOCR decoder layers ─ logits

`TrOCRCharBertForCausalLM` is the corrected decoder (registered for `AutoModelForCausalLM`);
`TrOCRCharBertForTextRecognition` is a `VisionEncoderDecoderModel` holding a vision encoder and that
decoder, so training, `generate()` and saving work as for TrOCR.

Causality: every part is causal (left-padded or masked convolutions, CharBERT with causal attention
and per-token character GRUs, causal combine nets), so under teacher forcing position t never reads
the tokens after it. Incremental decoding: the TrOCR layers use the KV cache, and so does the corrector
(`incremental_decoding.py`: CharBERT's keys and values and the convolutions' tails, in extra layers of the
self-attention cache, so that beam search reorders them with the rest), and a step reads its new token
only. Where that is not possible (the fixed layout, whose convolutions mix every position) or not asked
for (`incremental_corrector=False`), the corrector re-reads the whole prefix of embeddings at every step,
kept in one extra cache layer.
"""

import copy
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from transformers import AutoModel, AutoModelForImageTextToText, GenerationMixin, PreTrainedModel, TrOCRForCausalLM, VisionEncoderDecoderModel
from transformers import initialization as init
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.masking_utils import create_bidirectional_mask, create_causal_mask
from transformers.modeling_outputs import BaseModelOutput, CausalLMOutputWithCrossAttentions, Seq2SeqLMOutput
from transformers.models.vision_encoder_decoder.modeling_vision_encoder_decoder import shift_tokens_right

from .configuration_charbert import CharBertConfig
from .configuration_trocr_charbert import TrOCRCharBertConfig, TrOCRCharBertDecoderConfig
from .generation_cache import CACHE_NAME, resolve_cache
from .incremental_decoding import CorrectorStepCache
from .modeling_charbert import CharBertModel
from .modeling_self_attention import SelfAttentionRecognizerEncoder
from .recognizer import RecognizerEncoderOutput
from .tensor_combine import build_combine
from .tensor_transform import TensorTransform


@dataclass
class TrOCRCharBertCausalLMOutput(CausalLMOutputWithCrossAttentions):
    """
    Args:
        loss: cross-entropy of `labels`, plus `alignment_loss_weight * alignment_loss`.
        alignment_loss: the thesis's cosine term (see `TrOCRCharBertDecoderConfig`), when its weight > 0.
        logits: `(batch, length, vocab_size)`.
    """

    alignment_loss: torch.FloatTensor | None = None


@dataclass
class TrOCRCharBertSeq2SeqLMOutput(Seq2SeqLMOutput):
    """
    Args:
        loss: `cross_entropy + alignment_loss_weight * alignment_loss`, when `labels` are given.
        cross_entropy: mean cross-entropy over the labelled positions.
        alignment_loss: the thesis's cosine term, when its weight > 0.
        logits: `(batch, length, vocab_size)`.
    """

    cross_entropy: torch.FloatTensor | None = None
    alignment_loss: torch.FloatTensor | None = None


class TrOCRCharBertCorrector(nn.Module):
    """E `(batch, T, d_model)` -> `(combine(E, T', C') (batch, T, d_model), T (batch, T_c, charbert.hidden_size))`.

    In the sliding layout T_c = T; in the fixed layout E is padded to `max_decoder_length` and
    T_c = `charbert_length`.
    """

    def __init__(self, config: TrOCRCharBertDecoderConfig):
        super().__init__()
        trocr, charbert = config.trocr, config.charbert
        self.fixed = config.sequence_layout == "fixed"
        self.max_decoder_length = config.max_decoder_length
        self.chars_per_token = charbert.max_chars_per_token
        self.max_charbert_tokens = charbert.max_position_embeddings - charbert.pad_token_id - 1
        decoder_length, charbert_length = config.max_decoder_length, config.charbert_length

        def transform(in_size, out_size, ratio=1, in_length=None, out_length=None, out_per_token=1):
            return TensorTransform(
                in_size,
                out_size,
                layout=config.sequence_layout,
                num_conv_layers=config.transform_conv_layers,
                num_ffn_layers=config.transform_ffn_layers,
                ffn_hidden_size=config.transform_ffn_size or max(in_size, out_size),
                batch_norm=config.transform_batch_norm,
                dropout=config.transform_dropout,
                slope=config.leaky_relu_slope,
                length_ratio=ratio,
                in_length=in_length,
                out_length=out_length,
                out_positions_per_token=out_per_token,
            )

        chars = self.chars_per_token
        self.to_token = transform(trocr.d_model, charbert.hidden_size, 1, decoder_length, charbert_length)
        self.to_char = transform(
            trocr.d_model, charbert.char_embedding_size, chars, decoder_length, charbert_length * chars, chars
        )
        self.charbert = CharBertModel(charbert, add_pooling_layer=False)
        self.from_token = transform(charbert.hidden_size, trocr.d_model, 1, charbert_length, decoder_length)
        self.from_char = transform(charbert.hidden_size, trocr.d_model, 1, charbert_length, decoder_length)
        self.combine = build_combine(
            config.combine, trocr.d_model, config.combine_hidden_size, config.combine_kernel_size, config.leaky_relu_slope
        )

    def forward(
        self, embeddings: torch.Tensor, step_cache: CorrectorStepCache | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """
        Args:
            embeddings: E `(batch, T, d_model)`, every token so far; with `step_cache` (incremental decoding,
                sliding layout), the new tokens only, the cache holding what the corrector needs of the
                earlier ones (see `incremental_decoding.py`).
        Returns:
            the combined embeddings `(batch, T, d_model)` and CharBERT's input token embeddings T.
        """
        batch_size, length, _ = embeddings.shape
        if self.fixed:
            if length > self.max_decoder_length:
                raise ValueError(f"The fixed layout reads at most {self.max_decoder_length} tokens, got {length}.")
            padded = F.pad(embeddings, (0, 0, 0, self.max_decoder_length - length))
        elif length + (step_cache.past_length if step_cache else 0) > self.max_charbert_tokens:
            raise ValueError(f"The corrector's CharBERT reads at most {self.max_charbert_tokens} tokens, got {length}.")
        else:
            padded = embeddings
        token_embeds = self.to_token(padded, step_cache)
        char_embeds = self.to_char(padded, step_cache)
        num_tokens = token_embeds.shape[1]
        start_ids = (torch.arange(num_tokens, device=embeddings.device) * self.chars_per_token).expand(batch_size, -1)
        outputs = self.charbert(
            inputs_embeds=token_embeds,
            char_inputs_embeds=char_embeds,
            start_ids=start_ids,
            end_ids=start_ids + self.chars_per_token - 1,
            step_cache=step_cache,
        )
        token_correction = self.from_token(outputs.last_hidden_state, step_cache)[:, :length]
        char_correction = self.from_char(outputs.char_last_hidden_state, step_cache)[:, :length]
        combined = self.combine(torch.stack([embeddings, token_correction, char_correction], dim=1), step_cache)
        return combined, token_embeds


class TrOCRCharBertPreTrainedModel(PreTrainedModel):
    config_class = TrOCRCharBertDecoderConfig
    base_model_prefix = "trocr_charbert"
    main_input_name = "input_ids"
    supports_gradient_checkpointing = False
    _no_split_modules = ["TrOCRDecoderLayer", "RobertaLayer"]
    # TrOCR's attention is eager only: it adds the mask it is given, and an "sdpa" configuration gets no
    # causal mask at all (transformers leaves causality to the sdpa kernel), silently attending to the future.
    _supports_sdpa = False

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """Xavier for the transforms' and combine nets' layers (TrOCR and CharBERT, sub-models, keep their
        own schemes), identity batch normalisation."""
        if isinstance(module, (nn.Linear, nn.Conv1d)):
            init.xavier_uniform_(module.weight)
            if module.bias is not None:
                init.zeros_(module.bias)
        elif isinstance(module, nn.BatchNorm1d):
            init.ones_(module.weight)
            init.zeros_(module.bias)
            init.zeros_(module.running_mean)
            init.ones_(module.running_var)
            init.zeros_(module.num_batches_tracked)


class TrOCRCharBertForCausalLM(TrOCRCharBertPreTrainedModel, GenerationMixin):
    """A TrOCR decoder (`self.trocr`, a `TrOCRForCausalLM` holding a TrOCR checkpoint's weights under
    their own names) whose input embeddings go through the CharBERT corrector (`self.corrector`).

    The decoder layers are TrOCR's own modules, run here rather than through `TrOCRDecoder.forward`,
    because that forward cannot take corrected embeddings as TrOCR would take ids: given
    `inputs_embeds` it skips `embed_scale` and its sinusoidal-position variant fails without ids. Here
    the ids are always at hand: E is `embed_tokens(ids)` (scaled as TrOCR scales it), and the positions
    come from the ids for both position variants, exactly as in TrOCR.
    """

    def __init__(self, config: TrOCRCharBertDecoderConfig):
        super().__init__(config)
        self.trocr = TrOCRForCausalLM(config.trocr)
        self.corrector = TrOCRCharBertCorrector(config)
        self.post_init()
        self.freeze_unused_tables()

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        loaded = super().from_pretrained(*args, **kwargs)
        model = loaded[0] if isinstance(loaded, tuple) else loaded  # (model, loading info) with output_loading_info
        model.freeze_unused_tables()  # loading makes every parameter trainable again
        return loaded

    def freeze_unused_tables(self) -> None:
        """CharBERT's embedding tables are not on the corrector's path (the transforms feed it embeddings):
        frozen, its word embeddings are the fixed reference of the alignment term."""
        self.corrector.charbert.get_input_embeddings().weight.requires_grad_(False)
        self.corrector.charbert.get_char_input_embeddings().weight.requires_grad_(False)

    def get_input_embeddings(self) -> nn.Embedding:
        return self.trocr.get_input_embeddings()

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.trocr.set_input_embeddings(value)

    def get_output_embeddings(self) -> nn.Linear:
        return self.trocr.get_output_embeddings()

    def set_output_embeddings(self, new_embeddings: nn.Linear) -> None:
        self.trocr.set_output_embeddings(new_embeddings)

    def corrector_input(
        self, embeddings: torch.Tensor, past_key_values: EncoderDecoderCache | None, past_length: int
    ) -> tuple[torch.Tensor, CorrectorStepCache | None]:
        """What the corrector reads at this step. Without a cache: the embeddings as they are. With one, in
        incremental decoding (`config.incremental_corrector`, the sliding layout): the new embeddings and a
        `CorrectorStepCache` over the cache layers after TrOCR's. Otherwise: every token's embeddings so far,
        those kept in the cache layer after TrOCR's, then the new ones (which are added to it)."""
        if past_key_values is None:
            return embeddings, None
        cache = past_key_values.self_attention_cache if isinstance(past_key_values, EncoderDecoderCache) else past_key_values
        first_layer = self.config.trocr.decoder_layers
        if self.config.decodes_incrementally:
            return embeddings, CorrectorStepCache(cache, first_layer, self.config.charbert.num_hidden_layers, past_length)
        stored, _ = cache.update(embeddings.unsqueeze(1), embeddings.unsqueeze(1), first_layer)
        return stored.squeeze(1), None

    def alignment_loss(self, token_embeds: torch.Tensor, input_ids: torch.LongTensor) -> torch.Tensor:
        """Mean over non-padding positions of `1 - cos(T_t, W[input_ids_t])`, with W CharBERT's (frozen)
        word embeddings: the transformed embeddings should look like CharBERT's own embedding of the token."""
        length = min(input_ids.shape[1], token_embeds.shape[1])
        ids = input_ids[:, :length]
        reference = self.corrector.charbert.get_input_embeddings()(ids)
        distance = 1 - F.cosine_similarity(token_embeds[:, :length], reference, dim=-1)
        valid = (ids != self.config.trocr.pad_token_id).to(distance.dtype)
        return (distance * valid).sum() / valid.sum().clamp(min=1)

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        encoder_attention_mask: torch.LongTensor | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
        cache: EncoderDecoderCache | None = None,
        **kwargs,
    ) -> TrOCRCharBertCausalLMOutput:
        """
        Args:
            input_ids: `(batch, length)` decoder input ids; with a cache, the new ids only.
            attention_mask: `(batch, past + length)`, 1 on real tokens (default: all 1).
            encoder_hidden_states: `(batch, image_positions, encoder_hidden_size)`.
            encoder_attention_mask: `(batch, image_positions)`.
            past_key_values: the cache of earlier steps (TrOCR's layers, plus the corrector's prefix).
            labels: `(batch, length)`, aligned with the logits (not shifted), -100 where ignored.
            cache: `past_key_values` under the name transformers 5.24 on gives it (see `generation_cache`).
        """
        if inputs_embeds is not None or input_ids is None:
            raise ValueError(
                "TrOCRCharBertForCausalLM reads input_ids (the corrector and TrOCR's positions need the ids), "
                "not inputs_embeds."
            )
        decoder = self.trocr.model.decoder
        if decoder.config._attn_implementation != "eager":
            raise ValueError(
                f"TrOCR's decoder layers need attn_implementation='eager', got {decoder.config._attn_implementation!r}: "
                "with any other, transformers builds no causal mask for them and every position sees the future."
            )
        output_attentions = output_attentions if output_attentions is not None else self.config.output_attentions
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        )
        use_cache = use_cache if use_cache is not None else self.config.trocr.use_cache and not self.training
        past_key_values = resolve_cache(past_key_values, cache)
        if use_cache and past_key_values is None:
            past_key_values = EncoderDecoderCache(DynamicCache(), DynamicCache())
        past_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        length = input_ids.shape[1]

        embeddings = decoder.embed_tokens(input_ids)
        corrected, token_embeds = self.corrector(*self.corrector_input(embeddings, past_key_values, past_length))
        corrected = corrected[:, -length:]
        hidden_states = corrected + decoder.embed_positions(input_ids, past_length).to(corrected.device)
        if decoder.layernorm_embedding is not None:
            hidden_states = decoder.layernorm_embedding(hidden_states)
        hidden_states = F.dropout(hidden_states, p=decoder.dropout, training=self.training)

        causal_mask = create_causal_mask(
            config=decoder.config, inputs_embeds=corrected, attention_mask=attention_mask, **{CACHE_NAME: past_key_values}
        )
        if encoder_hidden_states is not None and encoder_attention_mask is not None:
            encoder_attention_mask = create_bidirectional_mask(
                config=decoder.config,
                inputs_embeds=corrected,
                attention_mask=encoder_attention_mask,
                encoder_hidden_states=encoder_hidden_states,
            )
        all_hidden_states = () if output_hidden_states else None
        all_self_attentions = () if output_attentions else None
        all_cross_attentions = () if output_attentions and encoder_hidden_states is not None else None
        for layer in decoder.layers:
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
            if self.training and decoder.layerdrop > 0 and torch.rand([]) < decoder.layerdrop:
                continue
            layer_outputs = layer(
                hidden_states,
                causal_mask,
                encoder_hidden_states,
                encoder_attention_mask=encoder_attention_mask,
                output_attentions=output_attentions,
                use_cache=use_cache,
                **{CACHE_NAME: past_key_values},
            )
            hidden_states = layer_outputs[0]
            if output_attentions:
                all_self_attentions += (layer_outputs[1],)
                if encoder_hidden_states is not None:
                    all_cross_attentions += (layer_outputs[2],)
        if output_hidden_states:
            all_hidden_states += (hidden_states,)
        logits = self.trocr.output_projection(hidden_states)

        alignment = None
        if self.config.alignment_loss_weight > 0 and past_length == 0:
            alignment = self.alignment_loss(token_embeds, input_ids)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
            if alignment is not None:
                loss = loss + self.config.alignment_loss_weight * alignment
        return TrOCRCharBertCausalLMOutput(
            loss=loss,
            alignment_loss=alignment,
            logits=logits,
            **{CACHE_NAME: past_key_values if use_cache else None},
            hidden_states=all_hidden_states,
            attentions=all_self_attentions,
            cross_attentions=all_cross_attentions,
        )


FREEZABLE = ("encoder", "decoder", "decoder_embeddings", "charbert")


class TrOCRCharBertForTextRecognition(VisionEncoderDecoderModel):
    """The composite: a vision encoder and a [`TrOCRCharBertForCausalLM`] decoder, as a
    `VisionEncoderDecoderModel`.

    Build it from trained parts with [`from_trocr_and_charbert`], or from scratch from a configuration. With a
    ViT (DeiT, BEiT) encoder, `pixel_values (batch, channels, height, width)` must have the encoder's image size
    (a ViT reads a fixed grid of patches; textrec's processor in `fixed` mode resizes to it). With textrec's
    convolutional line encoder (a `--model trocr` checkpoint), lines come at their own width with a
    `pixel_mask (batch, height, width)`, and the decoder's cross-attention skips the padded columns.
    """

    config_class = TrOCRCharBertConfig
    main_input_name = "pixel_values"
    accepts_loss_kwargs = False

    def __init__(
        self,
        config: TrOCRCharBertConfig,
        encoder: PreTrainedModel | None = None,
        decoder: TrOCRCharBertForCausalLM | None = None,
    ):
        if not isinstance(config, TrOCRCharBertConfig):
            # Loaded as remote code, the configuration class may come from another module copy.
            config = TrOCRCharBertConfig.from_dict(config.to_dict())
        if encoder is None and config.reads_lines:
            encoder = SelfAttentionRecognizerEncoder(config.encoder)
        elif encoder is None:
            encoder = AutoModel.from_config(config.encoder, add_pooling_layer=False)
        if decoder is None:
            decoder = TrOCRCharBertForCausalLM(config.decoder)
        super().__init__(config=config, encoder=encoder, decoder=decoder)
        self.generation_config.max_new_tokens = config.max_target_length
        self.freeze(config.frozen_modules)

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        loaded = super().from_pretrained(*args, **kwargs)
        model = loaded[0] if isinstance(loaded, tuple) else loaded  # (model, loading info) with output_loading_info
        model.freeze(model.config.frozen_modules)  # loading makes every parameter trainable again
        return loaded

    def freeze(self, parts) -> None:
        """Stops training the named parts (see `TrOCRCharBertConfig.frozen_modules`) and the corrector's
        unused CharBERT tables."""
        self.decoder.freeze_unused_tables()
        decoder = self.decoder.trocr.model.decoder
        modules = {
            "encoder": [self.encoder],
            "decoder": [decoder.layers, decoder.embed_positions, decoder.layernorm_embedding, self.decoder.trocr.output_projection],
            "decoder_embeddings": [decoder.embed_tokens],
            "charbert": [self.decoder.corrector.charbert],
        }
        for part in parts:
            if part not in modules:
                raise ValueError(f"Unknown part {part!r} to freeze; choose from {', '.join(FREEZABLE)}.")
            for module in modules[part]:
                if module is not None:
                    module.requires_grad_(False)

    @property
    def requires_fixed_image_size(self) -> bool:
        """A ViT reads a fixed grid of patches: images must come at the configured size."""
        return not self.config.reads_lines

    def check_pixel_values(self, pixel_values: torch.Tensor) -> None:
        if self.config.reads_lines:
            return
        expected = (self.config.num_channels, *self.config.image_size)
        if pixel_values.ndim != 4 or tuple(pixel_values.shape[1:]) != expected:
            raise ValueError(
                f"pixel_values must be (batch, {expected[0]}, {expected[1]}, {expected[2]}): the encoder reads a fixed "
                f"grid of patches; got {tuple(pixel_values.shape)}. Resize images with the model's processor."
            )

    def forward(
        self,
        pixel_values: torch.FloatTensor | None = None,
        pixel_mask: torch.LongTensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.BoolTensor | None = None,
        encoder_outputs: BaseModelOutput | tuple | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        labels: torch.LongTensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
        cache: EncoderDecoderCache | None = None,
        **kwargs,
    ) -> TrOCRCharBertSeq2SeqLMOutput:
        """
        Args:
            pixel_values: `(batch, channels, height, width)`: at the encoder's image size (ViT), or lines padded to
                one width (the convolutional line encoder).
            pixel_mask: `(batch, height, width)`, 1 on real pixels (the line encoder only; a ViT has no padding).
            decoder_input_ids: `(batch, length)`; made from `labels` (shifted right) when not given.
            labels: `(batch, length)` target ids, -100 on padding.
            encoder_outputs, past_key_values, use_cache: as in `VisionEncoderDecoderModel`.
            cache: `past_key_values` under the name transformers 5.24 on gives it (see `generation_cache`).
        Other keyword arguments go to the encoder, or, prefixed `decoder_`, to the decoder.
        """
        encoder_kwargs = {name: value for name, value in kwargs.items() if not name.startswith("decoder_")}
        decoder_kwargs = {name[len("decoder_"):]: value for name, value in kwargs.items() if name.startswith("decoder_")}
        if encoder_outputs is None:
            if pixel_values is None:
                raise ValueError("Give pixel_values or encoder_outputs.")
            self.check_pixel_values(pixel_values)
            if self.config.reads_lines:
                encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
            else:
                encoder_outputs = self.encoder(
                    pixel_values=pixel_values,
                    output_attentions=output_attentions,
                    output_hidden_states=output_hidden_states,
                    **encoder_kwargs,
                )
        elif isinstance(encoder_outputs, tuple):
            encoder_outputs = (RecognizerEncoderOutput if self.config.reads_lines else BaseModelOutput)(*encoder_outputs)
        encoder_hidden_states = encoder_outputs[0]
        # The line encoder's columns that are not padding; a ViT's patches are all real.
        encoder_attention_mask = getattr(encoder_outputs, "attention_mask", None)
        if hasattr(self, "enc_to_dec_proj"):
            encoder_hidden_states = self.enc_to_dec_proj(encoder_hidden_states)
        if labels is not None and decoder_input_ids is None:
            decoder_input_ids = shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)
        decoder_outputs = self.decoder(
            input_ids=decoder_input_ids,
            attention_mask=decoder_attention_mask,
            encoder_hidden_states=encoder_hidden_states,
            encoder_attention_mask=encoder_attention_mask,
            past_key_values=resolve_cache(past_key_values, cache),
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            **decoder_kwargs,
        )
        cross_entropy = loss = None
        if labels is not None:
            logits = decoder_outputs.logits
            cross_entropy = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
            loss = cross_entropy
            if decoder_outputs.alignment_loss is not None:
                loss = loss + self.config.decoder.alignment_loss_weight * decoder_outputs.alignment_loss
        return TrOCRCharBertSeq2SeqLMOutput(
            loss=loss,
            cross_entropy=cross_entropy,
            alignment_loss=decoder_outputs.alignment_loss,
            logits=decoder_outputs.logits,
            **{CACHE_NAME: getattr(decoder_outputs, CACHE_NAME)},
            decoder_hidden_states=decoder_outputs.hidden_states,
            decoder_attentions=decoder_outputs.attentions,
            cross_attentions=decoder_outputs.cross_attentions,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
            encoder_hidden_states=getattr(encoder_outputs, "hidden_states", None),
            encoder_attentions=getattr(encoder_outputs, "attentions", None),
        )

    @classmethod
    def from_trocr_and_charbert(
        cls,
        trocr_name_or_path: str,
        charbert_name_or_path: str,
        frozen_modules: list[str] | tuple[str, ...] = (),
        max_target_length: int | None = None,
        trust_remote_code: bool = False,
        **decoder_kwargs,
    ) -> "TrOCRCharBertForTextRecognition":
        """The composite from a TrOCR checkpoint and a CharBERT checkpoint (textrec format;
        `convert_charbert_checkpoint` converts the release). The TrOCR checkpoint is a folder or Hub id of
        transformers' `VisionEncoderDecoderModel` (ViT, DeiT or BEiT + TrOCR) or of textrec's `--model trocr`
        (the convolutional line encoder + TrOCR; its CTC head, if any, is not part of the composite, which reads
        with its decoder); `trust_remote_code` loads the latter where textrec is not imported. CharBERT is made
        causal (causal attention, per-token character GRUs): its weights load as they are. `decoder_kwargs` are
        `TrOCRCharBertDecoderConfig` arguments (layout, combine, transforms, alignment weight); the transforms
        and combine start from their initialisation."""
        trocr = AutoModelForImageTextToText.from_pretrained(trocr_name_or_path, trust_remote_code=trust_remote_code)
        if not isinstance(trocr, VisionEncoderDecoderModel) or not isinstance(trocr.decoder, TrOCRForCausalLM):
            raise ValueError(
                f"{trocr_name_or_path} is a {type(trocr).__name__}, not a VisionEncoderDecoderModel with a TrOCR decoder."
            )
        charbert_config = CharBertConfig.from_pretrained(charbert_name_or_path, causal=True, char_rnn_scope="token")
        charbert = CharBertModel.from_pretrained(charbert_name_or_path, config=charbert_config, add_pooling_layer=False)
        decoder_config = TrOCRCharBertDecoderConfig(trocr=trocr.config.decoder, charbert=charbert_config, **decoder_kwargs)
        token_ids = {
            name: getattr(trocr.config, name) if getattr(trocr.config, name, None) is not None else getattr(trocr.config.decoder, name)
            for name in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id")
        }
        config = TrOCRCharBertConfig(
            encoder=trocr.config.encoder.to_dict(),
            decoder=decoder_config,
            frozen_modules=list(frozen_modules),
            max_target_length=max_target_length or getattr(trocr.config, "max_target_length", trocr.generation_config.max_length),
            **token_ids,
        )
        model = cls(config)
        parts = [
            (model.encoder, trocr.encoder, "encoder"),
            (model.decoder.trocr, trocr.decoder, "TrOCR decoder"),
            (model.decoder.corrector.charbert, charbert, "CharBERT"),
        ]
        if hasattr(model, "enc_to_dec_proj"):
            parts.append((model.enc_to_dec_proj, trocr.enc_to_dec_proj, "encoder-to-decoder projection"))
        for target, source, name in parts:
            missing, _ = target.load_state_dict(source.state_dict(), strict=False)
            if missing:
                raise ValueError(f"The {name} checkpoint lacks weights the composite needs: {missing[:5]}")
        model.generation_config = copy.deepcopy(trocr.generation_config)
        if getattr(model.generation_config, "decoding", "attention") != "attention":
            # A TrOCR that read with its CTC head (`--model trocr` releases): the composite has none, its decoder reads.
            model.generation_config.decoding = "attention"
        return model


TrOCRCharBertForCausalLM.register_for_auto_class("AutoModelForCausalLM")
TrOCRCharBertForTextRecognition.register_for_auto_class("AutoModelForImageTextToText")
