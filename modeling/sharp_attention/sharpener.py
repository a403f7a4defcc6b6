"""The sharpener of sharp attention: from the attended column's receptive field to the patch the decoder
reads. A region of the image around the column's centre, then one or two spatial transformers (Jaderberg
et al., 2015: a localisation network, an affine grid and a bilinear sampler), each composing its transform
with the current frame, so that every patch is sampled once, straight from the image."""

import torch
import torch.nn.functional as F
from torch import nn

from .configuration_sharp_attention import SharpAttentionConfig
from .vgg_bilstm import run_channels_last


class TransformHead(nn.Linear):
    """The last layer of a localisation network. It starts with zero weights and the identity transform
    as its bias, so a new sharpener passes its region through unchanged.

    `"translation_x"` predicts one shift t (the transform [[1, 0, t], [0, 1, 0]]), `"affine"` all six
    entries of a 2x3 matrix.
    """

    def __init__(self, in_features: int, transform: str):
        super().__init__(in_features, 1 if transform == "translation_x" else 6)
        self.transform = transform

    def identity(self) -> torch.Tensor:
        if self.transform == "translation_x":
            return torch.zeros(1)
        return torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """`(batch, in_features)` → `(batch, 3, 3)` homogeneous transform of normalised coordinates."""
        parameters = super().forward(features)
        batch = parameters.shape[0]
        if self.transform == "translation_x":
            zeros, ones = parameters.new_zeros(batch, 1), parameters.new_ones(batch, 1)
            parameters = torch.cat([ones, zeros, parameters, zeros, ones, zeros], dim=1)
        last_row = parameters.new_tensor([0.0, 0.0, 1.0]).expand(batch, 1, 3)
        return torch.cat([parameters.view(batch, 2, 3), last_row], dim=1)


class SpatialTransformer(nn.Module):
    """A localisation network (two 3x3 convolutions, each with ReLU and a 2x2 max-pool, then two fully
    connected layers) that reads a patch and predicts a transform of the patch's frame.

    Args:
        num_channels: image channels.
        input_size: `(height, width)` of the patches it reads.
        channels: output channels of the two convolutions.
        hidden_size: width of the first fully connected layer.
        transform: `"translation_x"` or `"affine"`.
    """

    def __init__(
        self, num_channels: int, input_size: tuple[int, int], channels: list[int], hidden_size: int, transform: str
    ):
        super().__init__()
        height, width = input_size
        self.localization = nn.Sequential(
            nn.Conv2d(num_channels, channels[0], 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(channels[0], channels[1], 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Linear(channels[1] * (height // 4) * (width // 4), hidden_size),
            nn.ReLU(inplace=True),
        )
        self.head = TransformHead(hidden_size, transform)

    def forward(self, patch: torch.Tensor) -> torch.Tensor:
        """`(batch, channels, height, width)` → `(batch, 3, 3)`."""
        return self.head(run_channels_last(self.localization, patch))


def sample_patch(images: torch.Tensor, frames: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """Bilinear samples of `images (batch, channels, H, W)` on the grid of `size (height, width)` that
    `frames (batch, 3, 3)` map into the image's normalised coordinates (borders repeated outside)."""
    grid = F.affine_grid(frames[:, :2], [frames.shape[0], images.shape[1], *size], align_corners=False)
    return F.grid_sample(images, grid, mode="bilinear", padding_mode="border", align_corners=False)


class Sharpener(nn.Module):
    """From a column's receptive-field centre to the patch the decoder reads.

    The region is `region_width` pixels of the image upsampled `upsampling` times along the width
    (`region_width / upsampling` input pixels) around the centre, at full height. Each spatial
    transformer reads the current patch and composes its transform with the current frame; the next
    patch is sampled from the image at the transformer's output width.
    """

    def __init__(self, config: SharpAttentionConfig):
        super().__init__()
        self.height = config.image_height
        self.upsampling = config.sharpener_upsampling
        self.region_width = config.sharpener_region_width
        self.patch_widths = list(config.sharpener_patch_widths)
        input_widths = [config.sharpener_region_width, *config.sharpener_patch_widths[:-1]]
        self.transformers = nn.ModuleList(
            SpatialTransformer(
                config.num_channels,
                (config.image_height, width),
                config.localization_channels,
                config.localization_hidden_size,
                transform,
            )
            for width, transform in zip(input_widths, config.sharpener_transforms)
        )

    def region_frames(self, centres: torch.Tensor, image_width: int) -> torch.Tensor:
        """`(batch,)` centres in input pixels → `(batch, 3, 3)` frames of the regions."""
        frames = torch.zeros(centres.shape[0], 3, 3, device=centres.device, dtype=centres.dtype)
        frames[:, 0, 0] = self.region_width / self.upsampling / image_width
        frames[:, 0, 2] = 2 * centres / image_width - 1
        frames[:, 1, 1] = 1.0
        frames[:, 2, 2] = 1.0
        return frames

    def forward(self, images: torch.Tensor, centres: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """
        Args:
            images: `(batch, channels, height, width)`.
            centres: `(batch,)` x of each region's centre, in input pixels.

        Returns:
            The patches `(batch, channels, image_height, patch_widths[-1])` and their frames `(batch, 3, 3)`.
        """
        frames = self.region_frames(centres, images.shape[-1])
        patch = sample_patch(images, frames, (self.height, self.region_width))
        for transformer, width in zip(self.transformers, self.patch_widths):
            frames = frames @ transformer(patch)
            patch = sample_patch(images, frames, (self.height, width))
        return patch, frames


def patch_corners(frames: torch.Tensor, image_size: tuple[int, int]) -> torch.Tensor:
    """`(..., 3, 3)` frames → `(..., 4, 2)` pixel (x, y) of the patch corners: top-left, top-right,
    bottom-right, bottom-left."""
    height, width = image_size
    corners = frames.new_tensor([[-1.0, -1.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, 1.0], [-1.0, 1.0, 1.0]])
    mapped = (frames[..., :2, :] @ corners.T).transpose(-1, -2)
    return (mapped + 1) / 2 * mapped.new_tensor([width, height])
