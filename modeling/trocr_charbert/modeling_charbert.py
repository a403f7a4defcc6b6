# Copied from modeling/charbert/modeling_charbert.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""CharBERT: RoBERTa with a character stream beside the subword stream.

    tokens     → RoBERTa embeddings ─────────────┐
    characters → embeddings → BiGRU → [first; last char state] per token
                                                  ↓ (both streams, every layer)
                          transformer layer (shared weights) on each stream
                          fusion: per-stream linear, concat, conv1d (kernel 3) → H
                          divide: each stream + fused features → LayerNorm
                                                  ↓
               token sequence output, character sequence output (one vector per token each)

The transformer layers, embeddings and pooler are transformers' own RoBERTa modules, imported. The
pre-training heads predict masked tokens from the token stream (MLM) and, from the character
stream, the original word of a corrupted one (noisy LM, NLM).
"""

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from transformers import PreTrainedModel
from transformers import initialization as init
from transformers.activations import ACT2FN
from transformers.masking_utils import create_bidirectional_mask, create_causal_mask
from transformers.models.roberta.modeling_roberta import RobertaEmbeddings, RobertaLayer, RobertaPooler
from transformers.utils import ModelOutput

from .configuration_charbert import CharBertConfig
from .generation_cache import CACHE_NAME
from .incremental_decoding import CorrectorStepCache


IGNORE_INDEX = -100


@dataclass
class CharBertModelOutput(ModelOutput):
    """
    Args:
        last_hidden_state: `(batch, tokens, hidden_size)`, the token stream after the last layer.
        char_last_hidden_state: `(batch, tokens, hidden_size)`, the character stream after the last layer.
        pooler_output, char_pooler_output: `(batch, hidden_size)`, the first position of each stream
            through the pooler (dense + tanh); `None` without a pooler.
        hidden_states, char_hidden_states: with `output_hidden_states=True`, each stream's input to the
            first layer and output of every layer.
    """

    last_hidden_state: torch.FloatTensor | None = None
    char_last_hidden_state: torch.FloatTensor | None = None
    pooler_output: torch.FloatTensor | None = None
    char_pooler_output: torch.FloatTensor | None = None
    hidden_states: tuple[torch.FloatTensor, ...] | None = None
    char_hidden_states: tuple[torch.FloatTensor, ...] | None = None


@dataclass
class CharBertMaskedLMOutput(ModelOutput):
    """
    Args:
        loss: `mlm_loss + nlm_loss`, when `labels` or `word_labels` are given.
        mlm_loss: cross-entropy of the masked tokens (mean over labelled tokens).
        nlm_loss: cross-entropy of the original words of corrupted ones (mean over labelled tokens).
        logits: `(batch, tokens, vocab_size)`, MLM scores from the token stream.
        word_logits: `(batch, tokens, word_vocab_size)`, NLM scores from the character stream.
        last_hidden_state, char_last_hidden_state: the two streams' sequence outputs.
    """

    loss: torch.FloatTensor | None = None
    mlm_loss: torch.FloatTensor | None = None
    nlm_loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    word_logits: torch.FloatTensor | None = None
    last_hidden_state: torch.FloatTensor | None = None
    char_last_hidden_state: torch.FloatTensor | None = None


class CharBertCharacterEncoder(nn.Module):
    """Characters → one vector per token: embeddings, a bidirectional GRU of `hidden_size / 4` units,
    and the concatenation of the GRU states at the token's first and last character.

    With `char_rnn_scope="sequence"` the GRU runs over the whole character sequence (as in the
    release), so a token's vector also depends on its neighbours' characters; with `"token"` it runs
    within each token's `max_chars_per_token` slots only, so it depends on that token alone.
    """

    def __init__(self, config: CharBertConfig):
        super().__init__()
        self.embeddings = nn.Embedding(
            config.char_vocab_size, config.char_embedding_size, padding_idx=config.char_pad_token_id
        )
        self.gru = nn.GRU(config.char_embedding_size, config.hidden_size // 4, batch_first=True, bidirectional=True)
        self.max_chars_per_token = config.max_chars_per_token
        self.per_token = config.char_rnn_scope == "token"

    def forward(self, char_embeds: torch.Tensor, start_ids: torch.LongTensor, end_ids: torch.LongTensor) -> torch.Tensor:
        """`char_embeds (batch, tokens * C, char_embedding_size)`, `start_ids`/`end_ids (batch, tokens)`
        → `(batch, tokens, hidden_size)`."""
        batch_size, num_chars, width = char_embeds.shape
        if self.per_token:
            per_token = char_embeds.reshape(-1, self.max_chars_per_token, width)
            states = self.gru(per_token)[0].reshape(batch_size, num_chars, -1)
        else:
            states = self.gru(char_embeds)[0]
        index_shape = (*start_ids.shape, states.shape[-1])
        first = states.gather(1, start_ids.unsqueeze(-1).expand(index_shape))
        last = states.gather(1, end_ids.unsqueeze(-1).expand(index_shape))
        return torch.cat([first, last], dim=-1)


class CharBertFusion(nn.Module):
    """The heterogeneous interaction after a transformer layer: fuse the two streams, then divide.

    Fusion: `conv1d(concat(W_t x_t, W_c x_c))`, kernel 3 over the token axis, 2H → H channels.
    Divide: `x_t ← LayerNorm(x_t + f_t)`, `x_c ← LayerNorm(x_c + f_c)`, where `f_t = f_c` is the fused
    output (release) or, with `divide_feed_forward`, `f_s = GELU(W_s GELU(fused))` per stream (paper).
    With `causal` the convolution sees positions t-2..t instead of t-1..t+1.
    """

    def __init__(self, config: CharBertConfig):
        super().__init__()
        size = config.hidden_size
        self.token_linear = nn.Linear(size, size, bias=False)
        self.char_linear = nn.Linear(size, size, bias=False)
        self.conv = nn.Conv1d(2 * size, size, kernel_size=3)
        self.padding = (2, 0) if config.causal else (1, 1)
        if config.divide_feed_forward:
            self.activation = ACT2FN[config.hidden_act]
            self.token_feed_forward = nn.Linear(size, size)
            self.char_feed_forward = nn.Linear(size, size)
        self.divide_feed_forward = config.divide_feed_forward
        self.token_norm = nn.LayerNorm(size, eps=config.layer_norm_eps)
        self.char_norm = nn.LayerNorm(size, eps=config.layer_norm_eps)

    def forward(
        self, token_states: torch.Tensor, char_states: torch.Tensor, step_cache: CorrectorStepCache | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`step_cache`: incremental decoding of a causal CharBERT (the states are the new positions only)."""
        fused = torch.cat([self.token_linear(token_states), self.char_linear(char_states)], dim=-1)
        if step_cache is None:
            context = F.pad(fused.transpose(1, 2), self.padding)
        else:
            context = step_cache.causal_context(fused, self.conv.kernel_size[0])
        fused = self.conv(context).transpose(1, 2)
        if self.divide_feed_forward:
            fused = self.activation(fused)
            token_update = self.activation(self.token_feed_forward(fused))
            char_update = self.activation(self.char_feed_forward(fused))
        else:
            token_update = char_update = fused
        return self.token_norm(token_states + token_update), self.char_norm(char_states + char_update)


class CharBertEncoder(nn.Module):
    """Transformer layers applied to both streams, each followed by fusion and divide."""

    def __init__(self, config: CharBertConfig):
        super().__init__()
        self.layer = nn.ModuleList([RobertaLayer(config, layer_idx=i) for i in range(config.num_hidden_layers)])
        num_fusions = 1 if config.share_fusion_weights else config.num_hidden_layers
        self.fusion = nn.ModuleList([CharBertFusion(config) for _ in range(num_fusions)])

    def forward(self, token_states, char_states, attention_mask, output_hidden_states: bool = False, step_cache=None):
        token_history, char_history = [token_states], [char_states]
        token_cache = char_cache = None
        if step_cache is not None:
            token_cache, char_cache = step_cache.token_attention, step_cache.char_attention
        for index, layer in enumerate(self.layer):
            token_states = layer(token_states, attention_mask, **{CACHE_NAME: token_cache})
            char_states = layer(char_states, attention_mask, **{CACHE_NAME: char_cache})
            token_states, char_states = self.fusion[index % len(self.fusion)](token_states, char_states, step_cache)
            if output_hidden_states:
                token_history.append(token_states)
                char_history.append(char_states)
        if not output_hidden_states:
            return token_states, char_states, None, None
        return token_states, char_states, tuple(token_history), tuple(char_history)


class CharBertPreTrainedModel(PreTrainedModel):
    config_class = CharBertConfig
    base_model_prefix = "charbert"
    main_input_name = "input_ids"
    supports_gradient_checkpointing = False
    _no_split_modules = ["RobertaEmbeddings", "RobertaLayer"]
    _supports_sdpa = True

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """RoBERTa's scheme (normal `initializer_range`, zero biases, identity LayerNorm), Xavier for
        the GRU, and the embeddings' non-persistent index buffers rebuilt (they are not saved)."""
        super()._init_weights(module)
        if isinstance(module, nn.GRU):
            for name, parameter in module.named_parameters():
                (init.xavier_uniform_ if "weight" in name else init.zeros_)(parameter)
        elif isinstance(module, RobertaEmbeddings):
            init.copy_(module.position_ids, torch.arange(module.position_ids.shape[-1]).expand((1, -1)))
            init.zeros_(module.token_type_ids)
        elif isinstance(module, CharBertPreTrainingHeads):
            init.zeros_(module.bias)


class CharBertModel(CharBertPreTrainedModel):
    """The two-stream encoder. Inputs are token ids or token embeddings, and character ids or
    character embeddings, with each token's first and last character position; the output holds a
    token-level and a character-level sequence output (see `CharBertModelOutput`)."""

    def __init__(self, config: CharBertConfig, add_pooling_layer: bool = True):
        super().__init__(config)
        self.embeddings = RobertaEmbeddings(config)
        self.char_encoder = CharBertCharacterEncoder(config)
        self.encoder = CharBertEncoder(config)
        self.pooler = RobertaPooler(config) if add_pooling_layer else None
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.embeddings.word_embeddings = value

    def get_char_input_embeddings(self) -> nn.Embedding:
        return self.char_encoder.embeddings

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        char_input_ids: torch.LongTensor | None = None,
        start_ids: torch.LongTensor | None = None,
        end_ids: torch.LongTensor | None = None,
        attention_mask: torch.LongTensor | None = None,
        token_type_ids: torch.LongTensor | None = None,
        position_ids: torch.LongTensor | None = None,
        inputs_embeds: torch.FloatTensor | None = None,
        char_inputs_embeds: torch.FloatTensor | None = None,
        output_hidden_states: bool | None = None,
        step_cache: CorrectorStepCache | None = None,
    ) -> CharBertModelOutput:
        """
        Args:
            input_ids: `(batch, tokens)` subword ids; or `inputs_embeds (batch, tokens, hidden_size)`,
                rows of the token embedding matrix (`get_input_embeddings()`), before positions are added.
            char_input_ids: `(batch, tokens * max_chars_per_token)` character ids, token t in slots
                `[t * C, (t + 1) * C)`; or `char_inputs_embeds (batch, tokens * C, char_embedding_size)`,
                rows of `get_char_input_embeddings()`.
            start_ids, end_ids: `(batch, tokens)`, the position in the character sequence of each
                token's first and last character.
            attention_mask: `(batch, tokens)`, 1 on real tokens, 0 on padding (default: all 1).
            position_ids: `(batch, tokens)`; default: RoBERTa's, counted over unpadded tokens from
                `pad_token_id + 1`, the same for ids and embeddings.
            step_cache: incremental decoding (a causal CharBERT with per-token character GRUs, no padding):
                the inputs are the tokens after `step_cache.past_length` earlier ones, whose attention keys
                and values and fusion inputs the cache holds (see `incremental_decoding.py`).
        """
        config = self.config
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("Give exactly one of input_ids and inputs_embeds.")
        if (char_input_ids is None) == (char_inputs_embeds is None):
            raise ValueError("Give exactly one of char_input_ids and char_inputs_embeds.")
        if start_ids is None or end_ids is None:
            raise ValueError("start_ids and end_ids (batch, tokens) are required: each token's first and last character.")
        batch_size, num_tokens = input_ids.shape if input_ids is not None else inputs_embeds.shape[:2]
        num_chars = char_input_ids.shape[1] if char_input_ids is not None else char_inputs_embeds.shape[1]
        if num_chars != num_tokens * config.max_chars_per_token:
            raise ValueError(
                f"Expected {num_tokens} tokens x {config.max_chars_per_token} characters = "
                f"{num_tokens * config.max_chars_per_token} character positions, got {num_chars}."
            )
        if start_ids.shape != (batch_size, num_tokens) or end_ids.shape != (batch_size, num_tokens):
            raise ValueError(
                f"Expected start_ids and end_ids of shape {(batch_size, num_tokens)}, "
                f"got {tuple(start_ids.shape)} and {tuple(end_ids.shape)}."
            )
        output_hidden_states = output_hidden_states if output_hidden_states is not None else config.output_hidden_states

        device = input_ids.device if input_ids is not None else inputs_embeds.device
        if step_cache is not None:
            if not (config.causal and config.char_rnn_scope == "token") or attention_mask is not None:
                raise ValueError(
                    "Incremental decoding needs a causal CharBERT with per-token character GRUs "
                    "(causal=True, char_rnn_scope='token') and no attention_mask (no padding)."
                )
            if position_ids is None:
                position_ids = (config.pad_token_id + 1 + step_cache.past_length + torch.arange(num_tokens, device=device)).expand(batch_size, -1)
        if attention_mask is None:
            attention_mask = torch.ones(batch_size, num_tokens, dtype=torch.long, device=device)
        if position_ids is None:
            mask = attention_mask.long()
            position_ids = torch.cumsum(mask, dim=1) * mask + config.pad_token_id
        token_states = self.embeddings(
            input_ids=input_ids, token_type_ids=token_type_ids, position_ids=position_ids, inputs_embeds=inputs_embeds
        )
        if char_inputs_embeds is None:
            char_inputs_embeds = self.char_encoder.embeddings(char_input_ids)
        char_states = self.char_encoder(char_inputs_embeds, start_ids, end_ids)

        if step_cache is not None:
            mask = step_cache.attention_mask(
                num_tokens, batch_size, token_states.dtype, device, additive=config._attn_implementation == "eager"
            )
        elif config.causal:
            mask = create_causal_mask(
                config=config,
                inputs_embeds=token_states,
                attention_mask=attention_mask,
                **{CACHE_NAME: None},
                allow_is_causal_skip=False,
            )
        else:
            mask = create_bidirectional_mask(config=config, inputs_embeds=token_states, attention_mask=attention_mask)
        token_states, char_states, token_history, char_history = self.encoder(
            token_states, char_states, mask, output_hidden_states=output_hidden_states, step_cache=step_cache
        )
        return CharBertModelOutput(
            last_hidden_state=token_states,
            char_last_hidden_state=char_states,
            pooler_output=self.pooler(token_states) if self.pooler is not None else None,
            char_pooler_output=self.pooler(char_states) if self.pooler is not None else None,
            hidden_states=token_history,
            char_hidden_states=char_history,
        )


class CharBertPreTrainingHeads(nn.Module):
    """MLM on the token stream and noisy LM on the character stream, as in the release: each stream
    through its own dense + GELU, one shared LayerNorm, then the token decoder (weights tied to the
    token embeddings, plus `bias`) or the word decoder."""

    def __init__(self, config: CharBertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.char_dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.activation = ACT2FN[config.hidden_act]
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))
        self.word_decoder = nn.Linear(config.hidden_size, config.word_vocab_size)

    def forward(self, token_states: torch.Tensor, char_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        token_logits = self.decoder(self.layer_norm(self.activation(self.dense(token_states)))) + self.bias
        word_logits = self.word_decoder(self.layer_norm(self.activation(self.char_dense(char_states))))
        return token_logits, word_logits


def masked_mean_cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy averaged over the positions whose label is not -100; 0 (with a gradient path)
    when there are none, where `F.cross_entropy` would give NaN."""
    total = F.cross_entropy(logits.flatten(0, -2), labels.flatten(), ignore_index=IGNORE_INDEX, reduction="sum")
    return total / (labels != IGNORE_INDEX).sum().clamp(min=1)


class CharBertForMaskedLM(CharBertPreTrainedModel):
    """CharBERT with its two pre-training heads: `labels` (masked tokens, -100 elsewhere) train the
    MLM head, `word_labels` (the original word's id at every subword of a corrupted word, -100
    elsewhere) train the noisy-LM head; `loss` is their sum."""

    _tied_weights_keys = {"lm_head.decoder.weight": "charbert.embeddings.word_embeddings.weight"}

    def __init__(self, config: CharBertConfig):
        super().__init__(config)
        self.charbert = CharBertModel(config)
        self.lm_head = CharBertPreTrainingHeads(config)
        self.post_init()

    def get_output_embeddings(self) -> nn.Linear:
        return self.lm_head.decoder

    def set_output_embeddings(self, new_embeddings: nn.Linear) -> None:
        self.lm_head.decoder = new_embeddings

    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        char_input_ids: torch.LongTensor | None = None,
        start_ids: torch.LongTensor | None = None,
        end_ids: torch.LongTensor | None = None,
        attention_mask: torch.LongTensor | None = None,
        token_type_ids: torch.LongTensor | None = None,
        position_ids: torch.LongTensor | None = None,
        inputs_embeds: torch.FloatTensor | None = None,
        char_inputs_embeds: torch.FloatTensor | None = None,
        labels: torch.LongTensor | None = None,
        word_labels: torch.LongTensor | None = None,
    ) -> CharBertMaskedLMOutput:
        """Inputs as `CharBertModel.forward`; `labels (batch, tokens)` for MLM and
        `word_labels (batch, tokens)` for NLM, -100 where there is nothing to predict."""
        outputs = self.charbert(
            input_ids=input_ids,
            char_input_ids=char_input_ids,
            start_ids=start_ids,
            end_ids=end_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            char_inputs_embeds=char_inputs_embeds,
        )
        logits, word_logits = self.lm_head(outputs.last_hidden_state, outputs.char_last_hidden_state)
        mlm_loss = masked_mean_cross_entropy(logits, labels) if labels is not None else None
        nlm_loss = masked_mean_cross_entropy(word_logits, word_labels) if word_labels is not None else None
        losses = [loss for loss in (mlm_loss, nlm_loss) if loss is not None]
        return CharBertMaskedLMOutput(
            loss=sum(losses) if losses else None,
            mlm_loss=mlm_loss,
            nlm_loss=nlm_loss,
            logits=logits,
            word_logits=word_logits,
            last_hidden_state=outputs.last_hidden_state,
            char_last_hidden_state=outputs.char_last_hidden_state,
        )


CharBertModel.register_for_auto_class("AutoModel")
CharBertForMaskedLM.register_for_auto_class("AutoModelForMaskedLM")
