"""CRNN's encoder (Shi, Bai & Yao 2017, as in clovaai's deep-text-recognition-benchmark): a VGG reduces a
32-pixel-high line image to a feature map one pixel high, and a bidirectional LSTM reads its columns left to
right. CRNN puts a CTC classifier on it; sharp attention an attention decoder."""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _width_of(value: int | tuple[int, int]) -> int:
    return value[1] if isinstance(value, tuple) else value


def _convolution(
    in_channels: int, out_channels: int, kernel: int = 3, padding: int = 1, batch_norm: bool = False
) -> list[nn.Module]:
    layers = [nn.Conv2d(in_channels, out_channels, kernel, padding=padding, bias=not batch_norm)]
    if batch_norm:
        layers.append(nn.BatchNorm2d(out_channels))
    return [*layers, nn.ReLU(inplace=True)]


def run_channels_last(layers: nn.Sequential, images: torch.Tensor) -> torch.Tensor:
    """`layers` on `images (batch, channels, height, width)` in the channels-last layout.

    On the CPU oneDNN's convolutions run faster in that layout and its max-pools about 10x faster (the same
    numbers). A one-channel image counts as channels-last whatever its strides, so `contiguous` leaves it
    channels-first, and so would be every layer's output: `clone` gives it channels-last strides.
    """
    return nn.Sequential.forward(layers, images.clone(memory_format=torch.channels_last))


class VGGFeatureExtractor(nn.Sequential):
    """The VGG variant of CRNN, as in clovaai's deep-text-recognition-benchmark: seven convolutions
    (3x3, the fifth and sixth with batch normalisation, the last 2x2 unpadded) and four max-pools (2x2,
    2x2, 2x1, 2x1).

    `(batch, channels, 32, width)` → `(batch, width / 4 - 1, channels[-1])`: one vector per column of the
    1-pixel-high feature map (a taller map is averaged over its rows).
    """

    def __init__(self, in_channels: int, channels: list[int]):
        c = channels
        super().__init__(
            *_convolution(in_channels, c[0]),
            nn.MaxPool2d(2, 2),
            *_convolution(c[0], c[1]),
            nn.MaxPool2d(2, 2),
            *_convolution(c[1], c[2]),
            *_convolution(c[2], c[3]),
            nn.MaxPool2d((2, 1), (2, 1)),
            *_convolution(c[3], c[4], batch_norm=True),
            *_convolution(c[4], c[5], batch_norm=True),
            nn.MaxPool2d((2, 1), (2, 1)),
            *_convolution(c[5], c[6], kernel=2, padding=0),
        )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return run_channels_last(self, images).mean(dim=2).transpose(1, 2)

    def column_centres(self, num_columns: int, device: torch.device | None = None) -> torch.Tensor:
        """The x of each column's receptive-field centre in input pixels (pixel k spans [k, k + 1]),
        by receptive-field arithmetic over the layers: 4 + 4 i for this design.

        Returns:
            `(num_columns,)` float tensor.
        """
        start, jump = 0.5, 1.0
        for layer in self:
            if isinstance(layer, (nn.Conv2d, nn.MaxPool2d)):
                kernel, stride, padding = (_width_of(v) for v in (layer.kernel_size, layer.stride, layer.padding))
                start += ((kernel - 1) / 2 - padding) * jump
                jump *= stride
        return start + jump * torch.arange(num_columns, device=device, dtype=torch.float32)


def check_line_images(pixel_values: torch.Tensor, num_channels: int, image_height: int) -> None:
    """Raises a `ValueError` unless `pixel_values` is `(batch, num_channels, image_height, width >= 8)`, the
    narrowest image the VGG reads."""
    if (
        pixel_values.ndim != 4
        or pixel_values.shape[1] != num_channels
        or pixel_values.shape[2] != image_height
        or pixel_values.shape[3] < 8
    ):
        raise ValueError(
            f"Expected pixel_values of shape (batch, {num_channels}, {image_height}, width >= 8), "
            f"got {tuple(pixel_values.shape)}."
        )


def read_columns(
    backbone: VGGFeatureExtractor,
    sequence_model: nn.LSTM,
    pixel_values: torch.FloatTensor,
    pixel_mask: torch.LongTensor | None = None,
) -> tuple[torch.Tensor, torch.LongTensor | None]:
    """The bidirectional LSTM's reading of the VGG's columns; with a pixel mask, each image's valid columns
    only (those whose receptive-field centre lies on real pixels; at least the first).

    Args:
        pixel_values: `(batch, channels, 32, width)`.
        pixel_mask: `(batch, 32, width)`, 1 on real pixels, 0 on right padding.

    Returns:
        `(batch, width / 4 - 1, 2 * hidden)` states and, with a pixel mask, the `(batch, width / 4 - 1)`
        mask of valid columns.
    """
    columns = backbone(pixel_values)
    if pixel_mask is None:
        hidden_states, _ = sequence_model(columns)
        return hidden_states, None
    image_widths = pixel_mask.amax(dim=1).sum(dim=-1)
    centres = backbone.column_centres(columns.shape[1], device=columns.device)
    attention_mask = (centres[None] < image_widths[:, None]).long()
    attention_mask[:, 0] = 1  # every image reads at least its first column
    lengths = attention_mask.sum(dim=1)
    if len(columns) > 1 and isinstance(sequence_model, nn.LSTM) and not torch.onnx.is_in_onnx_export():
        return read_by_lengths(sequence_model, columns, lengths), attention_mask
    # packed sequences: one line (oneDNN's LSTM costs it twice the time), the ONNX export (an ONNX LSTM with
    # `sequence_lens`, which ONNX Runtime reads by lengths itself), and an LSTM that is no `nn.LSTM` and keeps no
    # `weight_ih_l0` (torch's dynamically quantized int8 LSTM, `torch.ao.quantization.quantize_dynamic`)
    packed = pack_padded_sequence(columns, lengths.cpu(), batch_first=True, enforce_sorted=False)
    hidden_states, _ = sequence_model(packed)
    hidden_states, _ = pad_packed_sequence(hidden_states, batch_first=True, total_length=columns.shape[1])
    return hidden_states, attention_mask


def read_by_lengths(sequence_model: nn.LSTM, columns: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """`sequence_model` (bidirectional, batch first, without dropout between layers) reading each sequence of
    `columns (batch, steps, features)` over its first `lengths` steps alone, as it reads them packed: each direction of
    each layer runs over the padded batch, the backward one over each sequence turned around within its length, and
    the states past a sequence's length are zeros.

    On the CPU oneDNN runs an LSTM over a padded batch but not over packed sequences: 32 lines of 80-160 columns read
    1.8x faster on one core, and a training step's forward and backward 4.5x faster (the same states within 1e-6).
    """
    steps = torch.arange(columns.shape[1], device=columns.device)
    lengths = lengths.to(columns.device)
    valid = steps[None] < lengths[:, None]
    # a sequence turned around within its length: its step length - 1 - t at step t, its padding where it was
    turned_around = torch.where(valid, lengths[:, None] - 1 - steps[None], steps[None])[..., None]
    states = columns
    for layer in range(sequence_model.num_layers):
        directions = []
        for suffix in ("", "_reverse"):
            weights = [getattr(sequence_model, f"{name}_l{layer}{suffix}")
                       for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            start = states.new_zeros(1, states.shape[0], sequence_model.hidden_size)
            given = states.gather(1, turned_around.expand_as(states)) if suffix else states
            read, _, _ = torch.lstm(given, (start, start), weights, True, 1, 0.0, sequence_model.training, False, True)
            directions.append(read.gather(1, turned_around.expand_as(read)) if suffix else read)
        states = torch.cat(directions, dim=-1)
    return states.masked_fill(~valid[..., None], 0.0)
