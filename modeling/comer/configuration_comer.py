"""Configuration of CoMER, the coverage-refined transformer for handwritten mathematical expressions."""

from transformers import PretrainedConfig

from .checkpoint_format import CheckpointFormatMixin
from .presets import ConfigPresetsMixin

COVERAGE_MODES = ("none", "self", "cross", "fusion")
"""What the Attention Refinement Module reads: nothing (no ARM: the BTTR baseline), the coverage of the
layer's own attention, of the previous layer's refined attention, or both."""


class CoMERConfig(CheckpointFormatMixin, ConfigPresetsMixin, PretrainedConfig):
    r"""
    Configuration of [`CoMERForFormulaRecognition`] (Zhao and Gao, "CoMER: Modeling Coverage for
    Transformer-based Handwritten Mathematical Expression Recognition", ECCV 2022; its baseline is BTTR,
    Zhao et al., ICDAR 2021).

    A DenseNet-B reads a grey image (white strokes on black, values in [0, 1]) down to stride 16; a 1x1
    convolution brings it to `hidden_size`; a 2-D sinusoidal encoding normalised to each image's unpadded
    extent is added, then LayerNorm. A post-norm transformer decoder reads the feature map; in its
    cross-attention, from the second layer on, one shared Attention Refinement Module (ARM) turns the
    coverage (the sum of earlier steps' attention) into a term subtracted from the attention logits.
    Training is bidirectional: every label is also learnt right to left, started by the end token.

    Args:
        vocab_size (`int`): size of the vocabulary, special tokens included (the CROHME dictionary's 110
            symbols + pad, start, end and unknown).
        num_channels (`int`): image channels (1: grey).
        densenet_growth_rate (`int`): channels each dense layer adds; the stem has twice as many.
        densenet_block_layers (`int`): bottleneck layers in each of the three dense blocks.
        densenet_reduction (`float`): channel reduction of the two transitions.
        densenet_dropout (`float`): dropout after each convolution of the dense layers and transitions.
        hidden_size (`int`): width of the projected features and of the decoder; a multiple of 4.
        decoder_layers (`int`): decoder layers.
        num_attention_heads (`int`): heads of both attentions.
        ffn_dim (`int`): inner size of the feed-forward.
        dropout (`float`): dropout of the decoder: on attention weights, after the feed-forward ReLU and on
            each sub-layer output.
        coverage (`str`): one of `COVERAGE_MODES`; `"none"` builds no ARM at all.
        arm_channels (`int`): channels of the ARM's convolution.
        arm_kernel_size (`int`): kernel size of the ARM's convolution (odd).
        max_target_length (`int`): longest label in tokens, end token included; also the default
            generation length.
        initializer_range (`float`): standard deviation of the token embedding initialisation.
    """

    model_type = "textrec-comer"
    # Names of textrec's transformer recognizers (resnet-transformer's); the BART-style names of earlier
    # checkpoints (`d_model`, `decoder_attention_heads`, `decoder_ffn_dim`) still load and read.
    attribute_map = {
        "d_model": "hidden_size",
        "decoder_attention_heads": "num_attention_heads",
        "decoder_ffn_dim": "ffn_dim",
        "num_hidden_layers": "decoder_layers",
    }

    # `paper` is the published configuration (the defaults). `base` is a narrower model for CPU studies;
    # `tiny` is for tests (41k parameters: it does not learn to read). `fast` is the size the coverage study
    # trains on one CPU thread (1.1M parameters): `base`'s DenseNet without its dropout (drawing the
    # dropout masks took a third of the DenseNet's forward and backward on a CPU, and rendered formulas are not
    # repeated enough to need it), 4 heads and a 16-channel ARM (a quarter of `base`'s ARM arithmetic: its
    # convolution runs over every decoding step), decoder dropout 0.1.
    PRESETS = {
        "tiny": dict(
            densenet_growth_rate=4,
            densenet_block_layers=2,
            hidden_size=32,
            decoder_layers=2,
            num_attention_heads=4,
            ffn_dim=64,
            arm_channels=8,
        ),
        "base": dict(
            densenet_growth_rate=12,
            densenet_block_layers=8,
            hidden_size=128,
            decoder_layers=3,
            num_attention_heads=8,
            ffn_dim=512,
            dropout=0.1,
        ),
        "paper": dict(),
        "fast": dict(
            densenet_growth_rate=12,
            densenet_block_layers=8,
            densenet_dropout=0.0,
            hidden_size=128,
            decoder_layers=3,
            num_attention_heads=4,
            ffn_dim=512,
            dropout=0.1,
            arm_channels=16,
        ),
    }

    def __init__(
        self,
        vocab_size: int = 114,
        num_channels: int = 1,
        densenet_growth_rate: int = 24,
        densenet_block_layers: int = 16,
        densenet_reduction: float = 0.5,
        densenet_dropout: float = 0.2,
        hidden_size: int = 256,
        decoder_layers: int = 3,
        num_attention_heads: int = 8,
        ffn_dim: int = 1024,
        dropout: float = 0.3,
        coverage: str = "fusion",
        arm_channels: int = 32,
        arm_kernel_size: int = 5,
        max_target_length: int = 200,
        initializer_range: float = 0.02,
        pad_token_id: int = 0,
        bos_token_id: int = 1,
        eos_token_id: int = 2,
        decoder_start_token_id: int = 1,
        is_encoder_decoder: bool = True,
        tie_word_embeddings: bool = False,
        **kwargs,
    ):
        if coverage not in COVERAGE_MODES:
            raise ValueError(f"coverage must be one of {COVERAGE_MODES}, got {coverage!r}.")
        if hidden_size % 4:
            raise ValueError(f"hidden_size must be a multiple of 4 (the 2-D position encoding), got {hidden_size}.")
        if arm_kernel_size % 2 == 0:
            raise ValueError(f"arm_kernel_size must be odd, got {arm_kernel_size}.")
        self.vocab_size = vocab_size
        self.num_channels = num_channels
        self.densenet_growth_rate = densenet_growth_rate
        self.densenet_block_layers = densenet_block_layers
        self.densenet_reduction = densenet_reduction
        self.densenet_dropout = densenet_dropout
        self.hidden_size = hidden_size
        self.decoder_layers = decoder_layers
        self.num_attention_heads = num_attention_heads
        self.ffn_dim = ffn_dim
        self.dropout = dropout
        self.coverage = coverage
        self.arm_channels = arm_channels
        self.arm_kernel_size = arm_kernel_size
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


CoMERConfig.register_for_auto_class()
