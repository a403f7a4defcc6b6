# Copied from modeling/self_attention/configuration_self_attention.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Configuration of the self-attention decoder recognizer."""

from transformers import PretrainedConfig

from .checkpoint_format import CheckpointFormatMixin
from .presets import ConfigPresetsMixin


class SelfAttentionRecognizerConfig(CheckpointFormatMixin, ConfigPresetsMixin, PretrainedConfig):
    r"""
    Configuration of [`SelfAttentionRecognizerForTextRecognition`]: a CNN encoder whose feature map is
    flattened into a sequence with sinusoidal positions, read by a transformer decoder (masked
    self-attention, cross-attention, ReLU feed-forward, each with residual and LayerNorm).

    Args:
        vocab_size (`int`): size of the character vocabulary, special tokens included.
        num_channels (`int`): image channels (1 grey, 3 RGB).
        cnn_channels (`list[int]`): output channels of the CNN stages; each stage is two 3x3
            convolutions with batch normalisation and ReLU, then a max-pool.
        cnn_pooling (`list[list[int]]`): the `(height, width)` pooling of each stage. The default
            turns a 32-pixel-high line into a feature map 2 high and width/4 wide.
        cnn_convs_per_stage (`int`): 3x3 convolutions in each stage (the description's 2).
        cnn_stem_channels (`int`): 0 for none (the description); otherwise the channels of a stride-2 3x3
            convolution before the stages, which halves the image at once so that no convolution runs at
            full resolution (with it, the stages pool half as much for the same feature map).
        hidden_size (`int`): width of the features and of the decoder.
        encoder_layers (`int`): transformer encoder layers over the flattened features (0: none, the
            description), so that each feature sees the whole line; they share the decoder's heads
            and feed-forward size.
        ctc_loss_weight (`float`): 0 for none (the description); otherwise the weight of an auxiliary CTC
            loss over the encoder outputs (joint CTC-attention training, see `ctc.py`), the decoder's
            cross-entropy weighted `1 - ctc_loss_weight`. It also enables `ctc_decode()`.
        decoder_layers (`int`): number of decoder layers.
        num_attention_heads (`int`): heads of both attentions.
        ffn_dim (`int`): inner size of the feed-forward.
        dropout (`float`): dropout on positions and on each sub-layer output.
        attention_dropout (`float`): dropout on attention weights.
        activation_dropout (`float`): dropout after the feed-forward ReLU.
        scale_embedding (`bool`): multiply token embeddings by sqrt(hidden_size).
        label_smoothing (`float`): label smoothing of the cross-entropy.
        max_target_length (`int`): longest label in tokens, eos included; also the default
            generation length.
        initializer_range (`float`): standard deviation of the token embedding initialisation.
    """

    model_type = "textrec-self-attention"
    # Names of textrec's transformer recognizers (resnet-transformer's); the BART-style names of earlier
    # checkpoints (`d_model`, `decoder_attention_heads`, `decoder_ffn_dim`) still load and read.
    attribute_map = {
        "d_model": "hidden_size",
        "decoder_attention_heads": "num_attention_heads",
        "decoder_ffn_dim": "ffn_dim",
        "num_hidden_layers": "decoder_layers",
    }

    # Presets used by `textrec-train --preset`. The description fixes 4 decoder layers and 4 heads
    # but no width; `paper` uses the transformer-base width 512.
    PRESETS = {
        "tiny": dict(cnn_channels=[8, 16, 32, 32], hidden_size=32, decoder_layers=2, ffn_dim=64),
        "base": dict(cnn_channels=[32, 64, 128, 256], hidden_size=256, decoder_layers=4, ffn_dim=1024),
        "paper": dict(cnn_channels=[64, 128, 256, 512], hidden_size=512, decoder_layers=4, ffn_dim=2048),
        # What two CPU cores can train to read in an hour: a stride-2 stem so that nothing runs at full
        # resolution, one convolution per stage, a 2-layer transformer encoder so that each column sees the
        # line, a 2-layer decoder, joint CTC-attention training (CTC weight 0.3, as ESPnet), no dropout (the
        # synthetic data is never repeated). 2.5M parameters; a 32 x W line gives W/4 features.
        "fast": dict(
            cnn_stem_channels=16,
            cnn_channels=[32, 64, 128, 192],
            cnn_pooling=[[2, 2], [2, 1], [2, 1], [2, 1]],
            cnn_convs_per_stage=1,
            hidden_size=192,
            encoder_layers=2,
            decoder_layers=2,
            ffn_dim=768,
            dropout=0.0,
            ctc_loss_weight=0.3,
        ),
    }

    def __init__(
        self,
        vocab_size: int = 99,
        num_channels: int = 1,
        cnn_channels: list[int] | None = None,
        cnn_pooling: list[list[int]] | None = None,
        cnn_convs_per_stage: int = 2,
        cnn_stem_channels: int = 0,
        hidden_size: int = 256,
        encoder_layers: int = 0,
        ctc_loss_weight: float = 0.0,
        decoder_layers: int = 4,
        num_attention_heads: int = 4,
        ffn_dim: int = 1024,
        dropout: float = 0.1,
        attention_dropout: float = 0.0,
        activation_dropout: float = 0.0,
        scale_embedding: bool = True,
        label_smoothing: float = 0.0,
        max_target_length: int = 128,
        initializer_range: float = 0.02,
        pad_token_id: int = 0,
        bos_token_id: int = 1,
        eos_token_id: int = 2,
        decoder_start_token_id: int = 1,
        is_encoder_decoder: bool = True,
        tie_word_embeddings: bool = False,
        **kwargs,
    ):
        self.vocab_size = vocab_size
        self.num_channels = num_channels
        self.cnn_channels = list(cnn_channels) if cnn_channels is not None else [32, 64, 128, 256]
        self.cnn_pooling = [list(p) for p in cnn_pooling] if cnn_pooling is not None else [[2, 2], [2, 2], [2, 1], [2, 1]]
        if len(self.cnn_channels) != len(self.cnn_pooling):
            raise ValueError(
                f"cnn_channels has {len(self.cnn_channels)} stages but cnn_pooling has {len(self.cnn_pooling)}."
            )
        self.cnn_convs_per_stage = cnn_convs_per_stage
        self.cnn_stem_channels = cnn_stem_channels
        if not 0 <= ctc_loss_weight < 1:
            raise ValueError(f"ctc_loss_weight must be in [0, 1), got {ctc_loss_weight}.")
        self.hidden_size = hidden_size
        self.encoder_layers = encoder_layers
        self.ctc_loss_weight = ctc_loss_weight
        self.decoder_layers = decoder_layers
        self.num_attention_heads = num_attention_heads
        self.ffn_dim = ffn_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation_dropout = activation_dropout
        self.scale_embedding = scale_embedding
        self.label_smoothing = label_smoothing
        self.max_target_length = max_target_length
        self.initializer_range = initializer_range
        super().__init__(
            pad_token_id=pad_token_id,
            bos_token_id=bos_token_id,
            eos_token_id=eos_token_id,
            decoder_start_token_id=decoder_start_token_id,
            is_encoder_decoder=is_encoder_decoder,
            tie_word_embeddings=tie_word_embeddings,
            **kwargs,
        )


SelfAttentionRecognizerConfig.register_for_auto_class()
