"""Configuration of the CRNN recognizer."""

from transformers import PretrainedConfig

from .checkpoint_format import CheckpointFormatMixin
from .presets import ConfigPresetsMixin


class CRNNConfig(CheckpointFormatMixin, ConfigPresetsMixin, PretrainedConfig):
    r"""
    Configuration of [`CRNNForTextRecognition`] (Shi, Bai & Yao, "An End-to-End Trainable Neural Network for
    Image-based Sequence Recognition", TPAMI 2017): a VGG turns a 32-pixel-high line into one row of features
    (one per 4 pixels of width; a taller line into a few rows, averaged), a bidirectional LSTM reads them left to
    right, and a linear classifier trained with CTC gives one distribution over the vocabulary (the pad token
    standing for CTC's blank) per column.
    There is no decoder: the model reads by CTC best path.

    Args:
        vocab_size (`int`): size of the character vocabulary, special tokens included.
        num_channels (`int`): image channels (1 grey, 3 RGB).
        image_height (`int`): height of every input image; the VGG's poolings reduce 32 pixels to 1 row, each 16
            more to one row more (its rows are averaged). 32 or more, a multiple of 16.
        cnn_channels (`list[int]`): output channels of the VGG's 7 convolutions.
        hidden_size (`int`): units per direction of the bidirectional LSTM.
        num_layers (`int`): layers of the bidirectional LSTM.
        max_target_length (`int`): longest label in tokens, eos included; also the longest reading.
        initializer_range (`float`): standard deviation of embedding initialisations (none in CRNN; kept for
            the shared initialisation).
        language_model_order (`int`): the n of the character n-gram the model reads with (`ctc_language_model.py`;
            attached by `textrec.processing.language_model`); 0 for none.
        language_model_ngrams, language_model_histories (`int`): the sizes of its tables (the shapes of their
            buffers in the saved weights).
    """

    model_type = "textrec-crnn"
    weights_fit_any_image_height = True
    """The VGG's convolutions slide over a line of any height it reads, and its feature map is averaged over its rows:
    a trained model can be fine-tuned to read taller lines (`textrec-train --image_height`)."""
    attribute_map = {"num_hidden_layers": "num_layers"}

    # `paper` is the publication's network (8.8M parameters with 99 tokens). `fast` (also `base`) has about the
    # parameters of the other architectures' `fast` presets (2.5M), most of them in the LSTM, and a VGG narrow
    # where the feature map is large, so that a training step costs about what theirs do (the paper's widths
    # halved would cost 2-3 times more).
    FAST = dict(cnn_channels=[16, 32, 64, 64, 128, 128, 256], hidden_size=224)
    PRESETS = {
        "tiny": dict(cnn_channels=[8, 16, 16, 16, 32, 32, 32], hidden_size=16),
        "base": FAST,
        "fast": FAST,
        "paper": dict(),
    }

    def __init__(
        self,
        vocab_size: int = 99,
        num_channels: int = 1,
        image_height: int = 32,
        cnn_channels: list[int] | None = None,
        hidden_size: int = 256,
        num_layers: int = 2,
        max_target_length: int = 128,
        initializer_range: float = 0.02,
        language_model_order: int = 0,
        language_model_ngrams: int = 0,
        language_model_histories: int = 0,
        pad_token_id: int = 0,
        bos_token_id: int = 1,
        eos_token_id: int = 2,
        **kwargs,
    ):
        if image_height < 32 or image_height % 16:
            raise ValueError(f"CRNN's VGG reads images 32 pixels high or taller by a multiple of 16, got "
                             f"image_height={image_height}.")
        self.vocab_size = vocab_size
        self.num_channels = num_channels
        self.image_height = image_height
        self.cnn_channels = list(cnn_channels) if cnn_channels is not None else [64, 128, 256, 256, 512, 512, 512]
        if len(self.cnn_channels) != 7:
            raise ValueError(f"cnn_channels lists the 7 convolutions of the VGG, got {len(self.cnn_channels)}.")
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.max_target_length = max_target_length
        self.initializer_range = initializer_range
        self.language_model_order = language_model_order
        self.language_model_ngrams = language_model_ngrams
        self.language_model_histories = language_model_histories
        kwargs.setdefault("is_encoder_decoder", False)
        super().__init__(pad_token_id=pad_token_id, bos_token_id=bos_token_id, eos_token_id=eos_token_id, **kwargs)


CRNNConfig.register_for_auto_class()
