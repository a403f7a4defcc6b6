"""Configuration of the text-line detector."""

from transformers import PretrainedConfig


class LineDetectorConfig(PretrainedConfig):
    r"""
    Configuration of [`LineDetectorForTextLineDetection`]: a small fully convolutional network that marks the core
    of every text line of a page (its middle band, shrunk from the line's box as DBNet's shrunk text kernels are:
    Liao et al., "Real-time Scene Text Detection with Differentiable Binarization", AAAI 2020), from which the
    image processor's `post_process_line_detection` rebuilds each line's box by expanding its core back (how much a
    core is shrunk is the image processor's setting: it draws the training targets and expands the cores).

    Args:
        num_channels (`int`): image channels (1: grey).
        stage_channels (`list[int]`): output channels of the encoder's stages, each halving the resolution.
        decoder_channels (`int`): channels of the feature pyramid that merges the stages back.
        output_stride (`int`): the probability map's pixels per image pixel, inverted (2: one per 2x2 pixels).
        initializer_range (`float`): standard deviation of the convolutions' initialisation.
    """

    model_type = "textrec-line-detector"

    def __init__(
        self,
        num_channels: int = 1,
        stage_channels: list[int] | None = None,
        decoder_channels: int = 32,
        output_stride: int = 2,
        initializer_range: float = 0.02,
        **kwargs,
    ):
        self.num_channels = num_channels
        self.stage_channels = list(stage_channels) if stage_channels is not None else [16, 32, 48, 64, 96]
        self.decoder_channels = decoder_channels
        if output_stride not in (1, 2, 4):
            raise ValueError(f"output_stride must be 1, 2 or 4, got {output_stride}")
        self.output_stride = output_stride
        self.initializer_range = initializer_range
        super().__init__(**kwargs)


LineDetectorConfig.register_for_auto_class()

__all__ = ["LineDetectorConfig"]
