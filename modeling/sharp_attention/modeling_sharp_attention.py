"""Sharp attention recognizer: soft, hard and sharp attention over a VGG + BiLSTM encoding.

Encoder (feature extraction, then sequence modelling): the VGG variant of CRNN reduces a 32-pixel-high
grey image to a feature map one pixel high (24 columns for a 100-pixel-wide image); its columns, read
by a 2-layer bidirectional LSTM, are X = (x_1, ..., x_L).

Decoder (prediction), at step t with state (h_{t-1}, c_{t-1}) and the previous token y_{t-1} (a zero
vector for the start token):

    a_t = softmax_i(v^T tanh(W h_{t-1} + U x_i))                   additive attention over X
    context:  soft    sum_i a_{t,i} x_i
              hard    x_l, l ~ a_t in training, l = argmax a_t in eval mode
              sharp   Z_t = CNN(sharpener(image, region of x_l)); pooling: mean(Z_t);
                      chain: [mean(Z_t); x_l]; weighting: attention from h_{t-1} over {Z_t, x_l}
    h_t, c_t = LSTM([y_{t-1}; context], (h_{t-1}, c_{t-1}))
    logits_t = FC([y_{t-1}; h_t])

(h_0, c_0) = tanh(FC(mean of X)). The sharpener cuts the region around x_l's receptive field from the
image (upsampled along the width), and one or two spatial transformers (localisation network, affine
grid, bilinear sampler) turn it into the patch; each transformer's frame is composed with the
region's, so every patch is sampled once, straight from the image.

Training (hybrid rule for hard and sharp attention): cross-entropy for the predictions, and REINFORCE
for the drawn indices with reward r_t = log p(y_t | ...), weight `reinforce_weight` and the
moving-average baseline b_j = 0.9 b_{j-1} + 0.1 mean(r) of mini-batch j (a buffer, updated by each
training forward). One index is drawn per image and step: as many Monte Carlo samples as images.

Files, one concept each: `sharpener.py` (the region and the spatial transformers), `reinforce.py` (the
REINFORCE baseline), `reference_glyphs.py` (the reference-image loss), `vgg_bilstm.py` (the encoder shared
with CRNN); this file holds the attention decoder and composes them.

`generate()` carries the LSTM state between steps in a `RecurrentStateCache`; without a cache each
call decodes the whole prefix from the start state, with the same result.
"""

from dataclasses import dataclass

import torch
from torch import nn
from transformers import GenerationMixin, PreTrainedModel
from transformers import initialization as init
from transformers.cache_utils import Cache
from transformers.modeling_outputs import Seq2SeqLMOutput
from transformers.utils import ModelOutput

from .configuration_sharp_attention import SharpAttentionConfig
from .generation_cache import CACHE_NAME, resolve_cache
from .initialization import init_recognizer_weights
from .recognizer import EncoderDecoderRecognizerMixin, RecognizerEncoderOutput, recognition_loss, shift_tokens_right
from .reference_glyphs import ReferenceGlyphs
from .reinforce import RewardBaseline
from .sharpener import Sharpener, TransformHead, patch_corners
from .vgg_bilstm import VGGFeatureExtractor, check_line_images, read_columns


@dataclass
class SharpAttentionEncoderOutput(RecognizerEncoderOutput):
    """
    Args:
        last_hidden_state: `(batch, columns, 2 * encoder_hidden_size)` X, one vector per feature-map column.
        attention_mask: `(batch, columns)` 1 for columns whose receptive-field centre lies on real pixels;
            None when no pixel mask was given.
        pixel_values: `(batch, channels, height, width)` the images the sharpener cuts its regions from
            (sharp attention only).
    """

    pixel_values: torch.FloatTensor | None = None


@dataclass
class SharpAttentionOutput(Seq2SeqLMOutput):
    """`Seq2SeqLMOutput` with the terms of the loss and what the attention chose.

    Args:
        loss: `ce_loss + reference_loss_weight * reference_loss`; in training with hard or sharp attention
            the REINFORCE term adds its gradient (weighted by `reinforce_weight`) but not its value, so
            that `loss` keeps reading as the likelihood objective.
        ce_loss: token-mean cross-entropy.
        reinforce_loss: `-mean((r_t - b) log a_t[l_t])` over the target tokens, the REINFORCE surrogate
            (training with hard or sharp attention only).
        reference_loss: mean squared difference between the sharpener's patches and the reference
            glyphs of the target tokens (with `reference_loss_weight > 0`).
        attention_weights: `(batch, target_length, columns)` a_t (with `output_attentions`).
        attention_indices: `(batch, target_length)` the column l_t each step read (hard and sharp, with
            `output_attentions`).
        patches: `(batch, target_length, channels, image_height, patch_width)` the sharpener's patches
            (sharp, with `output_attentions`).
        patch_corners: `(batch, target_length, 4, 2)` (x, y) in image pixels of each patch's top-left,
            top-right, bottom-right and bottom-left corners (sharp, with `output_attentions`).
    """

    ce_loss: torch.FloatTensor | None = None
    reinforce_loss: torch.FloatTensor | None = None
    reference_loss: torch.FloatTensor | None = None
    attention_weights: torch.FloatTensor | None = None
    attention_indices: torch.LongTensor | None = None
    patches: torch.FloatTensor | None = None
    patch_corners: torch.FloatTensor | None = None


@dataclass
class AttentionDecoderOutput(ModelOutput):
    """
    Args:
        last_hidden_state: `(batch, steps, embedding_dim + decoder_hidden_size)` [y_{t-1}; h_t], the
            input of the output layer.
        hidden: `(batch, decoder_hidden_size)` h after the last step.
        cell: `(batch, decoder_hidden_size)` c after the last step.
        attention_log_weights: `(batch, steps, columns)` log a_t (-inf on padding).
        indices: `(batch, steps)` l_t (hard and sharp).
        index_log_probs: `(batch, steps)` log a_t[l_t] (hard and sharp).
        patches: `(batch, steps, channels, image_height, patch_width)` (sharp).
        frames: `(batch, steps, 3, 3)` the affine map from each patch's normalised coordinates to the
            image's (sharp).
    """

    last_hidden_state: torch.FloatTensor | None = None
    hidden: torch.FloatTensor | None = None
    cell: torch.FloatTensor | None = None
    attention_log_weights: torch.FloatTensor | None = None
    indices: torch.LongTensor | None = None
    index_log_probs: torch.FloatTensor | None = None
    patches: torch.FloatTensor | None = None
    frames: torch.FloatTensor | None = None


class RecurrentStateCache(Cache):
    """The decoder LSTM's state after the tokens decoded so far: what `generate()` carries between steps.

    Args:
        hidden: `(batch, decoder_hidden_size)` h_t.
        cell: `(batch, decoder_hidden_size)` c_t.
        seen_tokens: tokens decoded into this state.
    """

    def __init__(self, hidden: torch.Tensor, cell: torch.Tensor, seen_tokens: int):
        super().__init__(layers=[])
        self.hidden = hidden
        self.cell = cell
        self.seen_tokens = seen_tokens

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.seen_tokens

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        """Keeps the rows of the beams that survive (beam search)."""
        self.hidden = self.hidden.index_select(0, beam_idx.to(self.hidden.device))
        self.cell = self.cell.index_select(0, beam_idx.to(self.cell.device))


class AdditiveAttention(nn.Module):
    """Bahdanau attention: score_i = v^T tanh(W q + U k_i), normalised over the unmasked keys."""

    def __init__(self, query_size: int, key_size: int, dim: int):
        super().__init__()
        self.query_projection = nn.Linear(query_size, dim, bias=False)
        self.key_projection = nn.Linear(key_size, dim)
        self.score = nn.Linear(dim, 1, bias=False)

    def forward(
        self, query: torch.Tensor, projected_keys: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """
        Args:
            query: `(batch, query_size)`.
            projected_keys: `(batch, keys, dim)`, `key_projection` of the keys.
            mask: `(batch, keys)`, 0 on keys to ignore.

        Returns:
            `(batch, keys)` log attention weights, -inf on masked keys.
        """
        scores = self.score(torch.tanh(projected_keys + self.query_projection(query)[:, None])).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return scores.log_softmax(dim=-1)


class SharpAttentionPreTrainedModel(PreTrainedModel):
    config_class = SharpAttentionConfig
    base_model_prefix = "recognizer"
    main_input_name = "pixel_values"
    supports_gradient_checkpointing = False
    _no_split_modules = ["VGGFeatureExtractor", "AttentionDecoder"]

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, TransformHead):
            init.zeros_(module.weight)
            init.copy_(module.bias, module.identity())
        elif isinstance(module, RewardBaseline):
            init.zeros_(module.value)
        elif isinstance(module, ReferenceGlyphs):
            init.zeros_(module.glyphs)
            init.zeros_(module.available)
        else:
            init_recognizer_weights(module, self.config.initializer_range)


class SharpAttentionEncoder(SharpAttentionPreTrainedModel):
    """VGG backbone and bidirectional LSTM, usable alone as a vision model.

    `pixel_values (batch, num_channels, image_height, width)` → X `(batch, width / 4 - 1, 2 * encoder_hidden_size)`.
    """

    def __init__(self, config: SharpAttentionConfig):
        super().__init__(config)
        self.backbone = VGGFeatureExtractor(config.num_channels, config.cnn_channels)
        self.sequence_model = nn.LSTM(
            config.cnn_channels[-1],
            config.encoder_hidden_size,
            num_layers=config.encoder_layers,
            bidirectional=True,
            batch_first=True,
        )
        self.post_init()

    def forward(
        self, pixel_values: torch.FloatTensor, pixel_mask: torch.LongTensor | None = None, **kwargs
    ) -> SharpAttentionEncoderOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, image_height, width)`, width at least 8.
            pixel_mask: `(batch, image_height, width)`, 1 on real pixels, 0 on right padding.

        Returns:
            `SharpAttentionEncoderOutput`; with a pixel mask, the LSTM reads each image's valid columns only.
        """
        check_line_images(pixel_values, self.config.num_channels, self.config.image_height)
        hidden_states, attention_mask = read_columns(self.backbone, self.sequence_model, pixel_values, pixel_mask)
        return SharpAttentionEncoderOutput(
            last_hidden_state=hidden_states,
            attention_mask=attention_mask,
            pixel_values=pixel_values if self.config.attention_type == "sharp" else None,
        )


class AttentionDecoder(nn.Module):
    """The attention-LSTM decoder (see the module docstring): one LSTM cell step per target position."""

    def __init__(self, config: SharpAttentionConfig):
        super().__init__()
        feature_size = 2 * config.encoder_hidden_size
        patch_size = config.cnn_channels[-1]
        self.attention_type = config.attention_type
        self.context_mode = config.context_mode
        self.decoder_start_token_id = config.decoder_start_token_id
        self.embed_tokens = nn.Embedding(config.vocab_size, config.embedding_dim, padding_idx=config.pad_token_id)
        self.initial_state = nn.Linear(feature_size, 2 * config.decoder_hidden_size)
        self.attention = AdditiveAttention(config.decoder_hidden_size, feature_size, config.attention_dim)
        context_size = feature_size
        if config.attention_type == "sharp":
            self.sharpener = Sharpener(config)
            self.patch_encoder = VGGFeatureExtractor(config.num_channels, config.cnn_channels)
            context_size = {"pooling": patch_size, "chain": patch_size + feature_size, "weighting": patch_size}[
                config.context_mode
            ]
            if config.context_mode == "weighting":
                self.context_attention = AdditiveAttention(config.decoder_hidden_size, patch_size, config.attention_dim)
        self.cell = nn.LSTMCell(config.embedding_dim + context_size, config.decoder_hidden_size)
        self.dropout = nn.Dropout(config.dropout)

    def start_state(self, features: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """(h_0, c_0) = tanh(FC(mean of the valid x_i))."""
        if mask is None:
            mean = features.mean(dim=1)
        else:
            weights = mask.to(features.dtype)[..., None]
            mean = (features * weights).sum(dim=1) / weights.sum(dim=1)
        return torch.tanh(self.initial_state(mean)).chunk(2, dim=-1)

    def sharp_context(
        self, hidden: torch.Tensor, chosen: torch.Tensor, images: torch.Tensor, centres: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The context from the sharpener's patch Z_t and the chosen x_l; also the patch and its frame."""
        patch, frames = self.sharpener(images, centres)
        patch_features = self.patch_encoder(patch)
        if self.context_mode == "pooling":
            context = patch_features.mean(dim=1)
        elif self.context_mode == "chain":
            context = torch.cat([patch_features.mean(dim=1), chosen], dim=-1)
        else:
            candidates = torch.cat([patch_features, chosen[:, None]], dim=1)
            keys = self.context_attention.key_projection(candidates)
            weights = self.context_attention(hidden, keys).exp()
            context = (weights[..., None] * candidates).sum(dim=1)
        return context, patch, frames

    def forward(
        self,
        input_ids: torch.LongTensor,
        encoder_outputs: SharpAttentionEncoderOutput,
        state: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> AttentionDecoderOutput:
        """
        Args:
            input_ids: `(batch, steps)` y_0 ... y_{steps-1}.
            encoder_outputs: X, its mask, and for sharp attention the images.
            state: (h, c) `(batch, decoder_hidden_size)` after the preceding tokens; None starts afresh.
        """
        features, mask = encoder_outputs.last_hidden_state, encoder_outputs.attention_mask
        hidden, cell = self.start_state(features, mask) if state is None else state
        keys = self.attention.key_projection(features)
        embedded = self.embed_tokens(input_ids) * (input_ids != self.decoder_start_token_id)[..., None]
        rows = torch.arange(features.shape[0], device=features.device)
        if self.attention_type == "sharp":
            centres = self.patch_encoder.column_centres(features.shape[1], device=features.device)
        steps = {name: [] for name in ("outputs", "log_weights", "indices", "index_log_probs", "patches", "frames")}
        for t in range(input_ids.shape[1]):
            log_weights = self.attention(hidden, keys, mask)
            if self.attention_type == "soft":
                context = (log_weights.exp()[..., None] * features).sum(dim=1)
            else:
                if self.training:
                    indices = torch.multinomial(log_weights.exp(), 1).squeeze(1)
                else:
                    indices = log_weights.argmax(dim=-1)
                chosen = features[rows, indices]
                steps["indices"].append(indices)
                steps["index_log_probs"].append(log_weights[rows, indices])
                if self.attention_type == "hard":
                    context = chosen
                else:
                    context, patch, frames = self.sharp_context(
                        hidden, chosen, encoder_outputs.pixel_values, centres[indices]
                    )
                    steps["patches"].append(patch)
                    steps["frames"].append(frames)
            hidden, cell = self.cell(torch.cat([embedded[:, t], context], dim=-1), (hidden, cell))
            steps["outputs"].append(torch.cat([embedded[:, t], self.dropout(hidden)], dim=-1))
            steps["log_weights"].append(log_weights)
        stacked = {name: torch.stack(values, dim=1) if values else None for name, values in steps.items()}
        return AttentionDecoderOutput(
            last_hidden_state=stacked["outputs"],
            hidden=hidden,
            cell=cell,
            attention_log_weights=stacked["log_weights"],
            indices=stacked["indices"],
            index_log_probs=stacked["index_log_probs"],
            patches=stacked["patches"],
            frames=stacked["frames"],
        )


class SharpAttentionForTextRecognition(EncoderDecoderRecognizerMixin, SharpAttentionPreTrainedModel, GenerationMixin):
    """VGG + BiLSTM encoder, attention-LSTM decoder with soft, hard or sharp attention, and the output
    layer over [y_{t-1}; h_t]; the interface of `VisionEncoderDecoderModel`: `pixel_values` and `labels`
    in, `SharpAttentionOutput` out, `generate()` (greedy or beam) with the LSTM state as its cache.

    `EncoderDecoderRecognizerMixin` brings the accessors and `reset_vocabulary`; `forward` is this model's
    own, since its decoder reads the image and its loss has a REINFORCE term."""

    def __init__(self, config: SharpAttentionConfig):
        super().__init__(config)
        self.encoder = SharpAttentionEncoder(config)
        self.decoder = AttentionDecoder(config)
        self.lm_head = nn.Linear(config.embedding_dim + config.decoder_hidden_size, config.vocab_size)
        if config.attention_type != "soft":
            self.reward_baseline = RewardBaseline(config.baseline_momentum)
        if config.reference_loss_weight > 0:
            self.reference_glyphs = ReferenceGlyphs(
                config.vocab_size, config.num_channels, config.image_height, config.sharpener_patch_widths[-1]
            )
        self.post_init()
        self.generation_config.max_new_tokens = config.max_target_length

    @classmethod
    def _supports_default_dynamic_cache(cls) -> bool:
        # No key/value cache: the first forward of `generate()` starts a `RecurrentStateCache`.
        return False

    def reset_vocabulary(self, vocab_size: int) -> None:
        """As `EncoderDecoderRecognizerMixin.reset_vocabulary`; reference glyphs are cleared too (set them
        again for the new vocabulary)."""
        super().reset_vocabulary(vocab_size)
        if self.config.reference_loss_weight > 0:
            device = self.reference_glyphs.glyphs.device
            self.reference_glyphs = ReferenceGlyphs(vocab_size, *self.reference_glyphs.glyphs.shape[1:]).to(device)

    def set_reference_glyphs(self, glyphs: torch.Tensor, available: torch.Tensor) -> None:
        """Stores the reference glyphs (needs `reference_loss_weight > 0`, which needs sharp attention).

        Args:
            glyphs: `(vocab_size, num_channels, image_height, patch_width)` in the normalised values of
                `pixel_values`.
            available: `(vocab_size,)` bool, true for tokens that have a glyph.
        """
        if self.config.reference_loss_weight <= 0:
            raise ValueError("Reference glyphs supervise the sharpener only with reference_loss_weight > 0.")
        expected = tuple(self.reference_glyphs.glyphs.shape)
        if tuple(glyphs.shape) != expected or tuple(available.shape) != expected[:1]:
            raise ValueError(
                f"Expected glyphs of shape {expected} and available of shape {expected[:1]}, got "
                f"{tuple(glyphs.shape)} and {tuple(available.shape)}."
            )
        with torch.no_grad():
            self.reference_glyphs.glyphs.copy_(glyphs)
            self.reference_glyphs.available.copy_(available)

    def forward(
        self,
        pixel_values: torch.FloatTensor | None = None,
        pixel_mask: torch.LongTensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        labels: torch.LongTensor | None = None,
        encoder_outputs: SharpAttentionEncoderOutput | tuple | None = None,
        past_key_values: RecurrentStateCache | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        return_dict: bool | None = None,
        cache: RecurrentStateCache | None = None,
        **kwargs,
    ) -> SharpAttentionOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, image_height, width)` images from the processor.
            pixel_mask: `(batch, image_height, width)`, 1 on real pixels, 0 on right padding.
            decoder_input_ids: `(batch, target_length)`; built from `labels` when omitted.
            labels: `(batch, target_length)` target ids ending in eos, padded with -100.
            encoder_outputs: precomputed encoder output (used by `generate()`).
            past_key_values: the `RecurrentStateCache` after the preceding tokens; anything else (None, or
                an empty cache) starts from the initial state.
            use_cache: return the state for the next step.
            output_attentions: also return the attention weights, chosen columns and patches.
            cache: `past_key_values` under the name transformers 5.24 on gives it (see `generation_cache`).

        Returns:
            `SharpAttentionOutput` with `logits (batch, target_length, vocab_size)` and, given `labels`,
            `loss` and its terms.
        """
        if encoder_outputs is None:
            if pixel_values is None:
                raise ValueError("Pass `pixel_values` (batch, channels, height, width) or `encoder_outputs`.")
            encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        elif not isinstance(encoder_outputs, SharpAttentionEncoderOutput):
            encoder_outputs = SharpAttentionEncoderOutput(*encoder_outputs)
        if decoder_input_ids is None:
            if labels is None:
                raise ValueError("Pass `labels` or `decoder_input_ids`.")
            decoder_input_ids = shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)

        past_key_values = resolve_cache(past_key_values, cache)
        cached = isinstance(past_key_values, RecurrentStateCache)
        state = (past_key_values.hidden, past_key_values.cell) if cached else None
        decoded = self.decoder(decoder_input_ids, encoder_outputs, state)
        logits = self.lm_head(decoded.last_hidden_state)

        losses = dict(ce_loss=None, reinforce_loss=None, reference_loss=None)
        loss = None
        if labels is not None:
            loss = losses["ce_loss"] = recognition_loss(logits, labels)
            if self.training and self.config.attention_type != "soft":
                losses["reinforce_loss"] = self.reinforce_loss(logits, labels, decoded.index_log_probs)
                # The surrogate minus its own value: its gradient joins `loss`, its value does not.
                reinforce = losses["reinforce_loss"] - losses["reinforce_loss"].detach()
                loss = loss + self.config.reinforce_weight * reinforce
            if self.config.reference_loss_weight > 0:
                losses["reference_loss"] = self.reference_glyphs(decoded.patches, labels)
                loss = loss + self.config.reference_loss_weight * losses["reference_loss"]

        next_cache = None
        if use_cache:
            seen = past_key_values.seen_tokens if cached else 0
            next_cache = RecurrentStateCache(decoded.hidden, decoded.cell, seen + decoder_input_ids.shape[1])
        attention = {}
        if output_attentions:
            weights = decoded.attention_log_weights.exp()
            attention = dict(attention_weights=weights, cross_attentions=(weights[:, None],))
            attention["attention_indices"] = decoded.indices
            if decoded.frames is not None:
                attention["patches"] = decoded.patches
                attention["patch_corners"] = patch_corners(decoded.frames, encoder_outputs.pixel_values.shape[-2:])
        return SharpAttentionOutput(
            loss=loss,
            logits=logits,
            **{CACHE_NAME: next_cache},
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
            **losses,
            **attention,
        )

    def reinforce_loss(self, logits: torch.Tensor, labels: torch.Tensor, index_log_probs: torch.Tensor) -> torch.Tensor:
        """-mean((r_t - b) log a_t[l_t]) over the target tokens, r_t = log p(y_t | ...) (no gradient); updates
        the baseline with this mini-batch's mean reward.

        Args:
            logits: `(batch, target_length, vocab_size)`.
            labels: `(batch, target_length)`, -100 on padding.
            index_log_probs: `(batch, target_length)` log a_t[l_t] of the drawn columns.
        """
        valid = labels != -100
        log_probs = logits.detach().float().log_softmax(dim=-1)
        rewards = log_probs.gather(-1, labels.clamp(min=0)[..., None]).squeeze(-1)[valid]
        advantages = rewards - self.reward_baseline(rewards)
        return -(advantages * index_log_probs[valid]).mean()


SharpAttentionForTextRecognition.register_for_auto_class("AutoModelForImageTextToText")
