"""Training batches packed by image area, as in CoMER's published training code.

Examples sorted by area (height x width as they lie in a batch) are grouped greedily so that every
batch's padded area, batch size x tallest height x widest width, stays within a budget and its size
within a maximum: small formulas fill a batch while a large one gets few companions. The batches are
made once; each epoch shuffles their order. (CoMER's code bounds batch size x the largest image area,
which leaves out the padding between images of different shapes; this bounds the padded tensor.)

    sizes = image_sizes(dataset, processor.image_processor)
    sampler = AreaBatchSampler(sizes, max_area=320_000, max_batch_size=8, seed=42)
    loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=collator)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        ...
"""

import io
import logging
import math
from collections.abc import Sequence

import datasets
import torch
from PIL import ExifTags, Image
from torch.utils.data import Sampler
from tqdm.auto import tqdm

from ..image_processing_text_recognition import TextRecognitionImageProcessor, load_image

logger = logging.getLogger(__name__)

PROGRESS_MIN_IMAGES = 1000
"""`image_sizes` shows a progress bar from this many images on."""

_TRANSPOSING_ORIENTATIONS = (5, 6, 7, 8)
"""EXIF orientations that `load_image` turns by 90 degrees (width and height swap)."""


def pack_by_area(sizes: Sequence[tuple[int, int]], max_area: int, max_batch_size: int) -> list[list[int]]:
    """Groups examples into batches of padded area at most `max_area` and size at most `max_batch_size`.

    Examples are taken by increasing area (ties by index); a batch is closed when the next example
    would make it exceed either limit. An example larger than `max_area` by itself gets a batch of its own.

    Args:
        sizes: `(height, width)` of every example as it lies in a batch.

    Returns:
        The batches, lists of example indices, in increasing order of area.
    """
    order = sorted(range(len(sizes)), key=lambda index: (sizes[index][0] * sizes[index][1], index))
    batches, batch, batch_height, batch_width = [], [], 0, 0
    for index in order:
        height, width = sizes[index]
        new_height, new_width = max(batch_height, height), max(batch_width, width)
        if batch and (len(batch) == max_batch_size or (len(batch) + 1) * new_height * new_width > max_area):
            batches.append(batch)
            batch, new_height, new_width = [], height, width
        batch.append(index)
        batch_height, batch_width = new_height, new_width
    if batch:
        batches.append(batch)
    return batches


class AreaBatchSampler(Sampler[list[int]]):
    """A batch sampler (`DataLoader(batch_sampler=...)`) of batches packed by padded image area.

    The batches are those of `pack_by_area`, fixed for the sampler's life, so that every epoch has the
    same number of them; with `shuffle`, each epoch visits them in its own order, drawn from `seed +
    epoch` (call `set_epoch` before each epoch, as with `DistributedSampler`).

    Args:
        sizes: `(height, width)` of every example as it lies in a batch (`image_sizes`).
        max_area: the most pixels of a padded batch, batch size x tallest height x widest width. An
            example larger than this by itself is given a batch of its own (a warning counts them).
        max_batch_size: the most examples in a batch.
        shuffle: shuffle the order of the batches each epoch; else they come small to large.
        seed: the seed of the shuffles; the same on every data-parallel process.
        num_replicas, rank: the number of data-parallel processes and this one's index. Each process
            gets every `num_replicas`-th batch of the epoch's order, starting at `rank`; the order is
            first padded by repeating its first batches so that every process gets `len(self)` batches.

    Raises:
        ValueError: no sizes, a size or limit that is not positive, or `rank` outside `num_replicas`.
    """

    def __init__(
        self,
        sizes: Sequence[tuple[int, int]],
        max_area: int,
        max_batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        num_replicas: int = 1,
        rank: int = 0,
    ):
        super().__init__()
        sizes = [(int(height), int(width)) for height, width in sizes]
        if not sizes:
            raise ValueError("AreaBatchSampler needs the size of at least one example, got none")
        if min(min(size) for size in sizes) < 1:
            raise ValueError(f"every (height, width) must be positive, got {min(sizes, key=min)}")
        if max_area < 1 or max_batch_size < 1:
            raise ValueError(f"max_area and max_batch_size must be positive, got {max_area} and {max_batch_size}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank must be in [0, {num_replicas}) (num_replicas), got {rank}")
        self.max_area = max_area
        self.max_batch_size = max_batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.batches = pack_by_area(sizes, max_area, max_batch_size)
        oversize = sum(height * width > max_area for height, width in sizes)
        if oversize:
            logger.warning(
                "%d of %d examples are larger than the batch area of %d pixels by themselves: each is a batch "
                "of its own.",
                oversize,
                len(sizes),
                max_area,
            )

    def set_epoch(self, epoch: int) -> None:
        """Selects the batch order of `epoch`."""
        self.epoch = epoch

    def __len__(self) -> int:
        """Batches per epoch on this process."""
        return math.ceil(len(self.batches) / self.num_replicas)

    def __iter__(self):
        order = list(range(len(self.batches)))
        if self.shuffle:
            generator = torch.Generator().manual_seed(self.seed + self.epoch)
            order = torch.randperm(len(self.batches), generator=generator).tolist()
        total = len(self) * self.num_replicas
        order = (order * math.ceil(total / len(order)))[:total]
        for position in order[self.rank : total : self.num_replicas]:
            yield list(self.batches[position])


def image_sizes(
    dataset: datasets.Dataset,
    image_processor: TextRecognitionImageProcessor,
    image_column: str = "image",
    progress: bool = True,
) -> list[tuple[int, int]]:
    """`(height, width)` of every image of `dataset` as it lies in a batch of `image_processor`: its
    `output_size`, the width with the processor's `min_right_padding` (where it pads) rounded up to its
    `width_multiple` (a batch is as wide as its widest image so padded and rounded, so batch size x tallest x
    widest of these sizes is the batch's area).

    Images stored as `datasets.Image` are measured from their file header without decoding the
    pixels, EXIF orientation included as `load_image` applies it (an EXIF block that a PNG stores
    after its pixel data is not seen). Other columns (paths, arrays, ...) are decoded with
    `load_image`. Random scale augmentation of training batches and glyph-height scaling
    (`glyph_height_range`, which needs the pixels) are not included: with them, the batches vary around
    these sizes.

    Args:
        dataset: the rows, with images in `image_column`.
        progress: show a progress bar (from `PROGRESS_MIN_IMAGES` images on).
    """
    column = dataset.select_columns([image_column])
    if isinstance(dataset.features[image_column], datasets.Image):
        column = column.cast_column(image_column, datasets.Image(decode=False))
        read_size = _stored_image_size
    else:
        read_size = _decoded_image_size
    multiple = image_processor.width_multiple
    padding = image_processor.min_right_padding if image_processor.pads else 0
    sizes = []
    show_progress = progress and len(column) >= PROGRESS_MIN_IMAGES
    with tqdm(total=len(column), desc="Measuring images", unit="image", disable=not show_progress) as bar:
        for rows in column.iter(batch_size=1000):
            for value in rows[image_column]:
                width, height = read_size(value)
                height, width = image_processor.output_size(height, width)
                sizes.append((height, -(-(width + padding) // multiple) * multiple))
            bar.update(len(rows[image_column]))
    return sizes


def _decoded_image_size(value) -> tuple[int, int]:
    """`(width, height)` of an image in any form `load_image` reads, decoded."""
    return load_image(value).size


def _stored_image_size(value: dict) -> tuple[int, int]:
    """`(width, height)` of an undecoded `datasets.Image` value (`{"bytes": ..., "path": ...}`), read from
    the file header, after EXIF orientation."""
    source = io.BytesIO(value["bytes"]) if value["bytes"] is not None else value["path"]
    with Image.open(source) as image:
        width, height = image.size
        # A PNG's getexif() decodes the pixels to look for EXIF after them: look in the header only.
        has_exif = image.format != "PNG" or "exif" in image.info
        if has_exif and image.getexif().get(ExifTags.Base.Orientation, 1) in _TRANSPOSING_ORIENTATIONS:
            return height, width
    return width, height
