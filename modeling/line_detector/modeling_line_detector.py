"""A text-line detector: a small encoder and feature pyramid predict, per pixel, whether it lies in the core of a
text line; the image processor turns the map into line boxes (`post_process_line_detection`).

The segmentation approach of DBNet (Liao et al., AAAI 2020) and of kraken's line segmenter, cut to what a CPU reads
a page with in a fraction of a second: five convolution stages (each halving the resolution), a feature pyramid
merging them back to `output_stride`, and one logit per position. Training targets are the lines' cores
(`LineDetectionImageProcessor` draws them from line boxes or polygons); the loss is binary cross-entropy plus the
Dice loss, which keeps thin cores from being outweighed by the background.
"""

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from transformers import PreTrainedModel
from transformers.utils import ModelOutput

from .configuration_line_detector import LineDetectorConfig

DICE_SMOOTHING = 1.0


@dataclass
class LineDetectionOutput(ModelOutput):
    """
    Args:
        loss: binary cross-entropy plus Dice loss against `labels`, when they are given.
        logits: `(batch, height / output_stride, width / output_stride)` line-core logits.
    """

    loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None


class ConvNormActivation(nn.Sequential):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        convolution, norm, _ = self
        if self.training or norm.running_var is None:
            return super().forward(hidden)
        # Evaluated, the batch norm is a fixed affine map of each channel: folded into the convolution's weights it
        # costs no pass of its own over the feature map (a sixth of a page's time at full resolution; the same
        # function, rounded otherwise within 1e-6).
        scale = norm.weight * torch.rsqrt(norm.running_var + norm.eps)
        weight = convolution.weight * scale[:, None, None, None]
        bias = norm.bias - norm.running_mean * scale
        return F.relu_(F.conv2d(hidden, weight, bias, convolution.stride, convolution.padding))


def pointwise_convolution(convolution: nn.Conv2d, hidden: torch.Tensor) -> torch.Tensor:
    """A 1 x 1 `convolution` of channels-last `hidden` as one matrix product over its pixels (PyTorch's CPU
    convolutions take a slow path for 1 x 1 kernels in that layout); channels-last out."""
    pixels = F.linear(hidden.permute(0, 2, 3, 1), convolution.weight.flatten(1), convolution.bias)
    return pixels.permute(0, 3, 1, 2)


def add_upsampled(finer: torch.Tensor, coarser: torch.Tensor) -> torch.Tensor:
    """`finer + coarser` upsampled to `finer`'s size by nearest neighbours; where `finer` is exactly twice as
    high and wide, added in place through a broadcast view, without making the upsampled map."""
    batch, channels, height, width = coarser.shape
    if tuple(finer.shape[2:]) != (2 * height, 2 * width):
        return finer + F.interpolate(coarser, size=finer.shape[2:], mode="nearest")
    finer.view(batch, channels, height, 2, width, 2).add_(coarser[:, :, :, None, :, None])
    return finer


class LineDetectorPreTrainedModel(PreTrainedModel):
    config_class = LineDetectorConfig
    base_model_prefix = "line_detector"
    main_input_name = "pixel_values"

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)


class LineDetectorForTextLineDetection(LineDetectorPreTrainedModel):
    """`pixel_values (batch, num_channels, height, width)` (height and width multiples of 32) in, line-core logits at
    `output_stride` out."""

    def __init__(self, config: LineDetectorConfig):
        super().__init__(config)
        channels = [config.num_channels, *config.stage_channels]
        self.stages = nn.ModuleList(
            nn.Sequential(ConvNormActivation(channels[index], channels[index + 1], stride=2),
                          ConvNormActivation(channels[index + 1], channels[index + 1]))
            for index in range(len(config.stage_channels))
        )
        first_kept = config.output_stride.bit_length() - 1  # the stage at the output stride (stride 2: stage 0)
        self.first_kept_stage = first_kept
        self.lateral = nn.ModuleList(
            nn.Conv2d(stage_channels, config.decoder_channels, 1)
            for stage_channels in config.stage_channels[max(first_kept - 1, 0):]
        )
        self.head = nn.Sequential(
            ConvNormActivation(config.decoder_channels, config.decoder_channels),
            nn.Conv2d(config.decoder_channels, 1, 1),
        )
        self.post_init()

    def forward(self, pixel_values: torch.FloatTensor, labels: torch.FloatTensor | None = None,
                label_mask: torch.FloatTensor | None = None, **kwargs) -> LineDetectionOutput:
        """
        Args:
            pixel_values: `(batch, num_channels, height, width)`, height and width multiples of 32.
            labels: `(batch, height / output_stride, width / output_stride)` 1 in line cores, 0 elsewhere.
            label_mask: as `labels`, 0 where the loss is not counted (padding).
        """
        if pixel_values.dim() != 4 or pixel_values.shape[1] != self.config.num_channels:
            raise ValueError(f"Expected pixel_values of shape (batch, {self.config.num_channels}, height, width), got "
                             f"{tuple(pixel_values.shape)}.")
        scale = 2 ** len(self.stages)
        if pixel_values.shape[2] % scale or pixel_values.shape[3] % scale:
            raise ValueError(f"pixel_values' height and width must be multiples of {scale} (the image processor pads "
                             f"them), got {tuple(pixel_values.shape[2:])}.")
        # In the channels-last layout, where oneDNN's convolutions run about a third faster on a CPU (the same
        # numbers); a one-channel image counts as channels-last whatever its strides, so `clone` sets them.
        features, hidden = [], pixel_values.clone(memory_format=torch.channels_last)
        for stage in self.stages:
            hidden = stage(hidden)
            features.append(hidden)
        kept = features[max(self.first_kept_stage - 1, 0):]
        merged = pointwise_convolution(self.lateral[-1], kept[-1])
        for lateral, feature in zip(reversed(self.lateral[:-1]), reversed(kept[:-1])):
            merged = add_upsampled(pointwise_convolution(lateral, feature), merged)
        out_size = (pixel_values.shape[2] // self.config.output_stride, pixel_values.shape[3] // self.config.output_stride)
        if merged.shape[2:] != out_size:
            merged = F.interpolate(merged, size=out_size, mode="bilinear", align_corners=False)
        logits = pointwise_convolution(self.head[1], self.head[0](merged)).squeeze(1)
        loss = None
        if labels is not None:
            loss = line_core_loss(logits, labels.to(logits.dtype), None if label_mask is None else label_mask.to(logits.dtype))
        return LineDetectionOutput(loss=loss, logits=logits)


def line_core_loss(logits: torch.Tensor, labels: torch.Tensor, label_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Binary cross-entropy plus Dice loss (per image, averaged) of the core logits against the core map."""
    mask = torch.ones_like(labels) if label_mask is None else label_mask
    cross_entropy = (F.binary_cross_entropy_with_logits(logits, labels, reduction="none") * mask).sum() / mask.sum().clamp(min=1)
    probabilities = torch.sigmoid(logits) * mask
    intersection = (probabilities * labels).flatten(1).sum(1)
    total = probabilities.flatten(1).sum(1) + (labels * mask).flatten(1).sum(1)
    dice = 1 - (2 * intersection + DICE_SMOOTHING) / (total + DICE_SMOOTHING)
    return cross_entropy + dice.mean()


LineDetectorForTextLineDetection.register_for_auto_class("AutoModel")

__all__ = ["LineDetectorForTextLineDetection", "LineDetectorPreTrainedModel", "LineDetectionOutput"]
