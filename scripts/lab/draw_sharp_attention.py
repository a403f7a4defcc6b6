"""Pictures of what a sharp-attention recognizer looks at: for a few test images, each decoding step's
chosen region and the sharpener's patch, with the token predicted there.

    python scripts/lab/draw_sharp_attention.py --model runs/study-sharp/l5-normal-sharp \
        --dataset "mnist-digits:length=5,mnist_dir=../shared/data/mnist" --num_images 4 --output sharp.png

Per image, from top to bottom: the image with the outline of each step's patch (one colour per step,
numbered under its centre); the attention weights of each step over the columns (one row per step,
darker is more); and, for sharp attention, the patches side by side, each under its predicted token.
Soft and hard models get the first two rows (hard attention numbers each step at its column).
"""

import argparse

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from textrec.processing.data import load_text_recognition_dataset

from textrec.processing.attention_readout import AttentionReadout, read_with_attention
from textrec.processing.inference import load_recognizer

COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324", "#808000", "#000075"]
SCALE = 4
ATTENTION_ROW_HEIGHT = 8
LABEL_HEIGHT = 18


def to_grey_image(values: np.ndarray, image_processor) -> Image.Image:
    """`(channels, height, width)` normalised values → the RGB picture the processor started from."""
    mean = np.asarray(image_processor.image_mean, dtype=np.float32)[:, None, None]
    std = np.asarray(image_processor.image_std, dtype=np.float32)[:, None, None]
    pixels = values * std + mean if image_processor.do_normalize else values
    if image_processor.invert:
        pixels = 1.0 - pixels
    array = np.clip(pixels.mean(axis=0) * 255, 0, 255).astype(np.uint8)
    return Image.fromarray(array).convert("RGB")


def draw_readout(readout: AttentionReadout, image_processor, reference: str | None = None) -> Image.Image:
    """One image's panel (see the module docstring)."""
    font = ImageFont.load_default(size=12)
    image = to_grey_image(readout.pixel_values, image_processor)
    width, height = image.width * SCALE, image.height * SCALE
    steps, columns = readout.attention.shape
    patch_size = None
    if readout.patches is not None:
        patch_size = (readout.patches.shape[-1] * SCALE // 2, readout.patches.shape[-2] * SCALE // 2)
    patches_height = patch_size[1] + LABEL_HEIGHT if patch_size else 0
    panel_width = max(width, (patch_size[0] + 4) * steps if patch_size else 0) + 8
    panel = Image.new(
        "RGB", (panel_width, LABEL_HEIGHT + height + steps * ATTENTION_ROW_HEIGHT + patches_height + 16), "white"
    )
    draw = ImageDraw.Draw(panel)
    caption = f"read: {readout.text}" + (f"   expected: {reference}" if reference is not None else "")
    draw.text((4, 2), caption, fill="black" if reference in (None, readout.text) else "red", font=font)
    top = LABEL_HEIGHT
    panel.paste(image.resize((width, height), Image.Resampling.NEAREST), (4, top))
    for step in range(steps):
        colour = COLOURS[step % len(COLOURS)]
        if readout.corners is not None:
            outline = [(4 + x * SCALE, top + y * SCALE) for x, y in readout.corners[step]]
            draw.polygon(outline, outline=colour, width=2)
        if readout.corners is not None:  # the step number under the patch's centre
            centre = readout.corners[step, :, 0].mean() * SCALE
        elif readout.indices is not None:  # the chosen column's place along the width
            centre = (readout.indices[step] + 0.5) * width / columns
        else:
            continue
        draw.text((4 + centre - 3, top + height - 14), str(step + 1), fill=colour, font=font)
    top += height + 4
    for step in range(steps):
        weights = readout.attention[step] / max(float(readout.attention[step].max()), 1e-9)
        for column, weight in enumerate(weights):
            grey = int(255 * (1 - weight))
            left = 4 + column * width / columns
            draw.rectangle((left, top, left + width / columns, top + ATTENTION_ROW_HEIGHT - 1), fill=(grey, grey, grey))
        top += ATTENTION_ROW_HEIGHT
    if patch_size:
        top += 4
        for step in range(steps):
            left = 4 + step * (patch_size[0] + 4)
            draw.text((left + 2, top), readout.tokens[step], fill=COLOURS[step % len(COLOURS)], font=font)
            patch = to_grey_image(readout.patches[step], image_processor).resize(patch_size, Image.Resampling.BILINEAR)
            panel.paste(patch, (left, top + LABEL_HEIGHT - 2))
            draw.rectangle(
                (left - 1, top + LABEL_HEIGHT - 3, left + patch_size[0], top + LABEL_HEIGHT - 2 + patch_size[1]),
                outline=COLOURS[step % len(COLOURS)],
            )
    return panel


def stack(panels: list[Image.Image]) -> Image.Image:
    sheet = Image.new("RGB", (max(p.width for p in panels), sum(p.height + 8 for p in panels)), "white")
    top = 0
    for panel in panels:
        sheet.paste(panel, (0, top))
        top += panel.height + 8
    return sheet


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="A trained sharp-attention model folder.")
    parser.add_argument("--dataset", required=True, help="Dataset name or folder (as textrec-train).")
    parser.add_argument("--split", default="test")
    parser.add_argument("--num_images", type=int, default=4)
    parser.add_argument("--output", default="sharp_attention.png", help="PNG file to write.")
    return parser


def run(argv: list[str] | None = None) -> Image.Image:
    args = build_parser().parse_args(argv)
    model, processor = load_recognizer(args.model)
    dataset = load_text_recognition_dataset(args.dataset, split=args.split, num_samples=args.num_images)
    readouts = read_with_attention(model, processor, list(dataset["image"]), progress=False)
    sheet = stack(
        [draw_readout(r, processor.image_processor, reference) for r, reference in zip(readouts, dataset["text"])]
    )
    sheet.save(args.output)
    print(f"wrote {args.output}")
    return sheet


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
