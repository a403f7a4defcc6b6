"""Configuration of the sharp attention recognizer."""

from transformers import PretrainedConfig

from .checkpoint_format import CheckpointFormatMixin
from .presets import ConfigPresetsMixin

ATTENTION_TYPES = ("soft", "hard", "sharp")
CONTEXT_MODES = ("pooling", "chain", "weighting")
SHARPENER_TRANSFORMS = ("translation_x", "affine")
MIN_PATCH_WIDTH = 8
"""The narrowest patch the VGG backbone design reads (two 2x2 poolings and a 2x2 convolution)."""


BASE_PRESET = dict(
    cnn_channels=[32, 64, 128, 128, 256, 256, 256],
    encoder_hidden_size=128,
    decoder_hidden_size=128,
    attention_dim=128,
    embedding_dim=64,
    localization_channels=[16, 32],
    localization_hidden_size=64,
)
"""The `base` preset: CPU-sized, for the line and digit-string studies."""


class SharpAttentionConfig(CheckpointFormatMixin, ConfigPresetsMixin, PretrainedConfig):
    r"""
    Configuration of [`SharpAttentionForTextRecognition`]: the VGG backbone of CRNN turns a grey line image
    into a feature map one pixel high; its columns X (24 for a 100-pixel-wide image) are read by a 2-layer
    bidirectional LSTM; an LSTM decoder with additive attention over X predicts the characters.

    `attention_type` chooses what the decoder reads at each step:

    - `"soft"`: the attention-weighted average of X;
    - `"hard"`: one x_i drawn from the attention distribution (the most probable one in eval mode), trained
      with cross-entropy for the prediction and REINFORCE for the attention (reward log p(y_t | ...),
      weight `reinforce_weight`, moving-average baseline with momentum `baseline_momentum`);
    - `"sharp"`: the drawn index selects an image region around the receptive field of x_i; a sharpener of
      one or two spatial transformers crops and transforms it into a patch, encoded by a CNN of the
      backbone's design into Z_t; `context_mode` makes the context from Z_t.

    Args:
        vocab_size (`int`): size of the character vocabulary, special tokens included.
        num_channels (`int`): image channels (1 grey, 3 RGB).
        image_height (`int`): height of every input image; the backbone reduces 32 pixels to 1 (taller
            feature maps are averaged over their rows).
        image_width (`int`): width the image processor resizes to (the model reads any width of at least 8).
        cnn_channels (`list[int]`): output channels of the 7 convolutions of the VGG backbone (and of the
            sharpener's patch encoder, which has the same design and its own weights).
        encoder_hidden_size (`int`): units per direction of the bidirectional LSTM; X is twice as wide.
        encoder_layers (`int`): layers of the bidirectional LSTM.
        decoder_hidden_size (`int`): units of the decoder LSTM.
        attention_dim (`int`): depth of the additive (Bahdanau) attention.
        embedding_dim (`int`): size of y_{t-1}, a learned embedding of the previous token (a linear layer
            over its one-hot vector); y_0, for the start token, is the zero vector.
        attention_type (`str`): `"soft"`, `"hard"` or `"sharp"` (see above).
        context_mode (`str`): with `"sharp"`: `"pooling"` (average of Z_t), `"chain"` (that average
            concatenated with the drawn x_i) or `"weighting"` (an additive attention from h_{t-1} over
            {Z_t, x_i}; needs `cnn_channels[-1] == 2 * encoder_hidden_size`).
        sharpener_upsampling (`float`): the regions are cut from the image upsampled along the width by
            this factor: a region `sharpener_region_width` pixels wide covers that many / the factor
            pixels of the input image.
        sharpener_region_width (`int`): width of the region around x_i's receptive-field centre, in pixels
            of the upsampled image; the region spans the full height.
        sharpener_transforms (`list[str]`): one or two spatial transformers, each `"translation_x"` (a
            horizontal shift) or `"affine"`.
        sharpener_patch_widths (`list[int]`): output width of each spatial transformer (the height is
            `image_height`); the last is the patch the encoder reads.
        localization_channels (`list[int]`): channels of the two 3x3 convolutions (each with ReLU and a
            2x2 max-pool) of each localisation network.
        localization_hidden_size (`int`): width of the fully connected layer of each localisation network.
        reinforce_weight (`float`): lambda_r, the weight of the REINFORCE term (1.0 for digits, 0.1 for scene
            text in the paper).
        baseline_momentum (`float`): the reward baseline b_j = momentum * b_{j-1} + (1 - momentum) * the mean
            reward of mini-batch j.
        reference_loss_weight (`float`): with `"sharp"`: weight of the L2 loss between the sharpener's patch
            and the reference glyph of the target token (0 disables it; see `set_reference_glyphs`).
        dropout (`float`): dropout on h_t before the output layer.
        max_target_length (`int`): longest label in tokens, eos included; the number of decoding steps.
        initializer_range (`float`): standard deviation of the token embedding initialisation.
    """

    model_type = "textrec-sharp-attention"

    # `paper` follows the description: CRNN's VGG (64-512 channels), BiLSTM 2 x 256, decoder LSTM 256,
    # attention 256, regions from the image upsampled x2.0, an x-translation transformer on a 64x32 patch then
    # an affine one giving 24x32, context by chain. `base` halves the widths for CPU studies.
    PRESETS = {
        "tiny": dict(
            cnn_channels=[4, 8, 8, 8, 16, 16, 16],
            encoder_hidden_size=8,
            decoder_hidden_size=32,
            attention_dim=16,
            embedding_dim=16,
            localization_channels=[4, 4],
            localization_hidden_size=8,
        ),
        "base": BASE_PRESET,
        # `base` with half the CNN channels (the VGG's and the patch CNN's): a quarter of their arithmetic, for the
        # MNIST study on a CPU.
        "small": {**BASE_PRESET, "cnn_channels": [16, 32, 64, 64, 128, 128, 128]},
        "paper": dict(),
    }

    def __init__(
        self,
        vocab_size: int = 99,
        num_channels: int = 1,
        image_height: int = 32,
        image_width: int = 100,
        cnn_channels: list[int] | None = None,
        encoder_hidden_size: int = 256,
        encoder_layers: int = 2,
        decoder_hidden_size: int = 256,
        attention_dim: int = 256,
        embedding_dim: int = 128,
        attention_type: str = "sharp",
        context_mode: str = "chain",
        sharpener_upsampling: float = 2.0,
        sharpener_region_width: int = 64,
        sharpener_transforms: list[str] | None = None,
        sharpener_patch_widths: list[int] | None = None,
        localization_channels: list[int] | None = None,
        localization_hidden_size: int = 128,
        reinforce_weight: float = 1.0,
        baseline_momentum: float = 0.9,
        reference_loss_weight: float = 0.0,
        dropout: float = 0.0,
        max_target_length: int = 32,
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
        self.image_height = image_height
        self.image_width = image_width
        self.cnn_channels = list(cnn_channels) if cnn_channels is not None else [64, 128, 256, 256, 512, 512, 512]
        if len(self.cnn_channels) != 7:
            raise ValueError(f"cnn_channels lists the 7 convolutions of the VGG backbone, got {self.cnn_channels}.")
        self.encoder_hidden_size = encoder_hidden_size
        self.encoder_layers = encoder_layers
        self.decoder_hidden_size = decoder_hidden_size
        self.attention_dim = attention_dim
        self.embedding_dim = embedding_dim
        if attention_type not in ATTENTION_TYPES:
            raise ValueError(f"attention_type must be one of {ATTENTION_TYPES}, got {attention_type!r}.")
        if context_mode not in CONTEXT_MODES:
            raise ValueError(f"context_mode must be one of {CONTEXT_MODES}, got {context_mode!r}.")
        self.attention_type = attention_type
        self.context_mode = context_mode
        self.sharpener_upsampling = float(sharpener_upsampling)
        self.sharpener_region_width = sharpener_region_width
        self.sharpener_transforms = list(sharpener_transforms) if sharpener_transforms else ["translation_x", "affine"]
        self.sharpener_patch_widths = list(sharpener_patch_widths) if sharpener_patch_widths else [64, 24]
        if not 1 <= len(self.sharpener_transforms) <= 2 or any(
            t not in SHARPENER_TRANSFORMS for t in self.sharpener_transforms
        ):
            raise ValueError(
                f"sharpener_transforms must list one or two of {SHARPENER_TRANSFORMS}, got {self.sharpener_transforms}."
            )
        if len(self.sharpener_patch_widths) != len(self.sharpener_transforms):
            raise ValueError(
                f"sharpener_patch_widths ({self.sharpener_patch_widths}) needs one width per transformer "
                f"({self.sharpener_transforms})."
            )
        if min(self.sharpener_patch_widths + [sharpener_region_width]) < MIN_PATCH_WIDTH:
            raise ValueError(f"Sharpener regions and patches must be at least {MIN_PATCH_WIDTH} pixels wide.")
        if (
            attention_type == "sharp"
            and context_mode == "weighting"
            and self.cnn_channels[-1] != 2 * encoder_hidden_size
        ):
            raise ValueError(
                "context_mode='weighting' averages Z_t with x_i: cnn_channels[-1] "
                f"({self.cnn_channels[-1]}) must equal 2 * encoder_hidden_size ({2 * encoder_hidden_size})."
            )
        self.localization_channels = list(localization_channels) if localization_channels else [32, 64]
        if len(self.localization_channels) != 2:
            raise ValueError(f"localization_channels lists two convolutions, got {self.localization_channels}.")
        self.localization_hidden_size = localization_hidden_size
        self.reinforce_weight = reinforce_weight
        self.baseline_momentum = baseline_momentum
        if reference_loss_weight > 0 and attention_type != "sharp":
            raise ValueError(
                "reference_loss_weight > 0 supervises the sharpener's patches: it needs attention_type='sharp'."
            )
        self.reference_loss_weight = reference_loss_weight
        self.dropout = dropout
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


SharpAttentionConfig.register_for_auto_class()
