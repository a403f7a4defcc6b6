"""Configuration of the ResNet-Transformer recognizer."""

from transformers import PretrainedConfig

from .checkpoint_format import CheckpointFormatMixin
from .presets import ConfigPresetsMixin


class ResNetTransformerConfig(CheckpointFormatMixin, ConfigPresetsMixin, PretrainedConfig):
    r"""
    Configuration of [`ResNetTransformerForTextRecognition`]: a ResNet (transformers' `ResNetModel`, ResNet-50
    by default) without pooling or classifier, its last stages kept at 1/`backbone_output_stride` resolution;
    a 1x1 convolution to `hidden_size` channels with ReLU; the feature map's height folded into the channels
    so that each column is one element of a sequence; a fully connected layer with ReLU back to `hidden_size`
    (the paper's feature_len, equal to hidden_size); sinusoidal positions; a transformer encoder-decoder.

    Images have a fixed height (`image_height`, which sets the fully connected layer's input size); any width
    is accepted. `image_width` is the width the image processor resizes to.

    Linear layers start with Xavier-uniform weights (tensor2tensor's uniform unit scaling with gain 1.0),
    convolutions with He initialisation, the token embedding with normal(0, `initializer_range`).

    Args:
        vocab_size (`int`): size of the character vocabulary, special tokens included.
        num_channels (`int`): image channels (1 grey, 3 RGB).
        image_height (`int`): height of every input image, in pixels.
        image_width (`int`): width the image processor resizes images to (the model reads any width).
        backbone_embedding_size (`int`): channels of the ResNet stem.
        backbone_hidden_sizes (`list[int]`): output channels of the ResNet stages.
        backbone_depths (`list[int]`): residual layers per ResNet stage.
        backbone_layer_type (`str`): `"bottleneck"` (ResNet-50 and deeper) or `"basic"` (ResNet-18/34).
        backbone_output_stride (`int`): downsampling of the feature map, 4, 8, 16 or 32 (with four
            stages). The stem divides by 4 and each later stage by 2 until this is reached; the stages after
            it keep their resolution (stride 1), with the same weights as the original ResNet.
        backbone_width_stride (`int`, *optional*): downsampling of the feature map's width, at most
            `backbone_output_stride` (default: equal to it). Stages past it downsample the height only (stride
            `(2, 1)`), as CRNN's pooling does, so that a line keeps one feature per few pixels of width.
        hidden_size (`int`): channels of the 1x1 convolution, and width of the feature sequence and of
            the transformer.
        encoder_layers (`int`): transformer encoder layers.
        decoder_layers (`int`): transformer decoder layers.
        num_attention_heads (`int`): heads of every attention.
        ffn_dim (`int`): inner size of the feed-forward layers.
        dropout (`float`): dropout on positions and on each sub-layer output (tensor2tensor's
            layer_prepostprocess_dropout).
        attention_dropout (`float`): dropout on attention weights.
        activation_dropout (`float`): dropout after the feed-forward ReLU (tensor2tensor's relu_dropout).
        norm_first (`bool`): LayerNorm before each sub-layer and after the last layer (tensor2tensor's
            transformer) instead of after each sub-layer.
        scale_embedding (`bool`): multiply token embeddings by sqrt(hidden_size).
        label_smoothing (`float`): label smoothing of the cross-entropy.
        max_target_length (`int`): longest label in tokens, eos included.
        ctc_loss_weight (`float`): 0 for none (the description); otherwise the weight of an auxiliary CTC
            loss over the encoder outputs (joint CTC-attention training, see `ctc.py`), the decoder's
            cross-entropy weighted `1 - ctc_loss_weight`. It also enables `ctc_decode()`.
        initializer_range (`float`, *optional*): standard deviation of the token embedding
            initialisation; defaults to hidden_size ** -0.5.
    """

    model_type = "textrec-resnet-transformer"
    attribute_map = {"num_hidden_layers": "decoder_layers"}

    # `paper` is the description: ResNet-50, 3 + 3 layers of width 512, 8 heads, feed-forward 1024,
    # handwriting input of 32 x 300 (long printed lines: image_height=24, image_width=600).
    PRESETS = {
        "tiny": dict(
            backbone_embedding_size=8,
            backbone_hidden_sizes=[16, 16, 32, 32],
            backbone_depths=[1, 1, 1, 1],
            hidden_size=32,
            encoder_layers=2,
            decoder_layers=2,
            num_attention_heads=4,
            ffn_dim=64,
        ),
        "base": dict(
            backbone_embedding_size=32,
            backbone_hidden_sizes=[64, 128, 256, 512],
            backbone_depths=[2, 2, 2, 2],
            hidden_size=256,
            num_attention_heads=4,
            ffn_dim=512,
        ),
        "paper": dict(),
        # What two CPU cores can train to read in an hour (as self-attention's `fast`): a ResNet-18-shaped
        # backbone of one basic layer per stage and few channels, downsampling the width 4 times and the
        # height 32 times (a 32-pixel line becomes one row of width/4 features), 2 + 2 transformer layers,
        # joint CTC-attention training (weight 0.3), no dropout or label smoothing (the synthetic data is
        # never repeated). Images keep their aspect ratio (the architecture's `fast` image settings).
        "fast": dict(
            backbone_embedding_size=32,
            backbone_hidden_sizes=[32, 64, 96, 160],
            backbone_depths=[1, 1, 1, 1],
            backbone_layer_type="basic",
            backbone_output_stride=32,
            backbone_width_stride=4,
            hidden_size=192,
            encoder_layers=2,
            decoder_layers=2,
            num_attention_heads=4,
            ffn_dim=768,
            dropout=0.0,
            attention_dropout=0.0,
            activation_dropout=0.0,
            label_smoothing=0.0,
            ctc_loss_weight=0.3,
        ),
    }

    def __init__(
        self,
        vocab_size: int = 99,
        num_channels: int = 1,
        image_height: int = 32,
        image_width: int = 300,
        backbone_embedding_size: int = 64,
        backbone_hidden_sizes: list[int] | None = None,
        backbone_depths: list[int] | None = None,
        backbone_layer_type: str = "bottleneck",
        backbone_output_stride: int = 8,
        backbone_width_stride: int | None = None,
        hidden_size: int = 512,
        encoder_layers: int = 3,
        decoder_layers: int = 3,
        num_attention_heads: int = 8,
        ffn_dim: int = 1024,
        dropout: float = 0.1,
        attention_dropout: float = 0.1,
        activation_dropout: float = 0.1,
        norm_first: bool = True,
        scale_embedding: bool = True,
        label_smoothing: float = 0.1,
        max_target_length: int = 128,
        ctc_loss_weight: float = 0.0,
        initializer_range: float | None = None,
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
        self.backbone_embedding_size = backbone_embedding_size
        self.backbone_hidden_sizes = list(backbone_hidden_sizes) if backbone_hidden_sizes else [256, 512, 1024, 2048]
        self.backbone_depths = list(backbone_depths) if backbone_depths else [3, 4, 6, 3]
        if len(self.backbone_hidden_sizes) != len(self.backbone_depths):
            raise ValueError(
                f"backbone_hidden_sizes has {len(self.backbone_hidden_sizes)} stages but backbone_depths has "
                f"{len(self.backbone_depths)}."
            )
        self.backbone_layer_type = backbone_layer_type
        strides = [4 * 2**stage for stage in range(len(self.backbone_depths))]
        if backbone_output_stride not in strides:
            raise ValueError(f"backbone_output_stride must be one of {strides}, got {backbone_output_stride}.")
        self.backbone_output_stride = backbone_output_stride
        if backbone_width_stride is None:
            backbone_width_stride = backbone_output_stride
        if backbone_width_stride not in strides or backbone_width_stride > backbone_output_stride:
            raise ValueError(
                f"backbone_width_stride must be one of {strides} and at most backbone_output_stride "
                f"({backbone_output_stride}), got {backbone_width_stride}."
            )
        self.backbone_width_stride = backbone_width_stride
        self.hidden_size = hidden_size
        self.encoder_layers = encoder_layers
        self.decoder_layers = decoder_layers
        self.num_attention_heads = num_attention_heads
        self.ffn_dim = ffn_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation_dropout = activation_dropout
        self.norm_first = norm_first
        self.scale_embedding = scale_embedding
        self.label_smoothing = label_smoothing
        self.max_target_length = max_target_length
        if not 0 <= ctc_loss_weight < 1:
            raise ValueError(f"ctc_loss_weight must be in [0, 1), got {ctc_loss_weight}.")
        self.ctc_loss_weight = ctc_loss_weight
        self.initializer_range = initializer_range if initializer_range is not None else hidden_size**-0.5
        super().__init__(
            pad_token_id=pad_token_id,
            bos_token_id=bos_token_id,
            eos_token_id=eos_token_id,
            decoder_start_token_id=decoder_start_token_id,
            is_encoder_decoder=is_encoder_decoder,
            tie_word_embeddings=tie_word_embeddings,
            **kwargs,
        )


ResNetTransformerConfig.register_for_auto_class()
