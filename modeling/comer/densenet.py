"""CoMER's encoder backbone: DenseNet-B (Huang et al., 2017, with bottleneck layers and compressing
transitions), as BTTR and CoMER use it (WAP's DenseNet: growth 24, 16 layers per block, reduction 0.5)."""

import torch
import torch.nn.functional as F
from torch import nn

from .configuration_comer import CoMERConfig


class DenseBottleneckLayer(nn.Module):
    """1x1 convolution to 4 x growth, BN, ReLU, dropout, 3x3 convolution to growth, BN, ReLU, dropout; the
    output is concatenated to the input."""

    def __init__(self, in_channels: int, growth_rate: int, dropout: float):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 4 * growth_rate, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(4 * growth_rate)
        self.conv2 = nn.Conv2d(4 * growth_rate, growth_rate, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(growth_rate)
        self.dropout = nn.Dropout(dropout)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        new = self.dropout(F.relu(self.norm1(self.conv1(features))))
        new = self.dropout(F.relu(self.norm2(self.conv2(new))))
        return torch.cat((features, new), dim=1)


class DenseTransition(nn.Module):
    """1x1 convolution, BN, ReLU, dropout, then 2x2 average pooling (rounding up)."""

    def __init__(self, in_channels: int, out_channels: int, dropout: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.norm = nn.BatchNorm2d(out_channels)
        self.dropout = nn.Dropout(dropout)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        features = self.dropout(F.relu(self.norm(self.conv(features))))
        return F.avg_pool2d(features, 2, ceil_mode=True)


class DenseNetB(nn.Module):
    """DenseNet-B of three dense blocks: a 7x7 stride-2 stem of 2 x growth channels, BN, ReLU, 2x2 max
    pool; blocks of bottleneck layers with transitions after the first two; a final BN. Stride 16.

    Every stride-2 step rounds up (`ceil(size / 2)`), so the pixel mask follows by keeping every other
    row and column.
    """

    def __init__(self, config: CoMERConfig):
        super().__init__()
        growth, layers, dropout = config.densenet_growth_rate, config.densenet_block_layers, config.densenet_dropout
        channels = 2 * growth
        self.stem = nn.Conv2d(config.num_channels, channels, 7, stride=2, padding=3, bias=False)
        self.stem_norm = nn.BatchNorm2d(channels)
        blocks, transitions = [], []
        for block in range(3):
            blocks.append(
                nn.Sequential(*(DenseBottleneckLayer(channels + i * growth, growth, dropout) for i in range(layers)))
            )
            channels += layers * growth
            if block < 2:
                reduced = int(channels * config.densenet_reduction)
                transitions.append(DenseTransition(channels, reduced, dropout))
                channels = reduced
        self.blocks = nn.ModuleList(blocks)
        self.transitions = nn.ModuleList(transitions)
        self.final_norm = nn.BatchNorm2d(channels)
        self.out_channels = channels

    def forward(self, pixel_values: torch.Tensor, pixel_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """
        Args:
            pixel_values: `(batch, num_channels, height, width)`.
            pixel_mask: `(batch, height, width)`, 1 on real pixels.

        Returns:
            `(batch, out_channels, h, w)` features and their `(batch, h, w)` mask, h = ceil(height / 16).
        """
        features = F.max_pool2d(F.relu(self.stem_norm(self.stem(pixel_values))), 2, ceil_mode=True)
        mask = pixel_mask[:, ::2, ::2][:, ::2, ::2]
        for index, block in enumerate(self.blocks):
            features = block(features)
            if index < len(self.transitions):
                features = self.transitions[index](features)
                mask = mask[:, ::2, ::2]
        return self.final_norm(features), mask
