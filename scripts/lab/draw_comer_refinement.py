"""Draw CoMER's refinement term per decoding step over the formula image (the paper's figure of parsed
regions being suppressed), as a PNG.

    python scripts/lab/draw_comer_refinement.py --model_name_or_path runs/comer \\
        --image formula.png --output refinement.png
    python scripts/lab/draw_comer_refinement.py --model_name_or_path runs/comer \\
        --dataset synthetic-math --split test --index 3 --output refinement.png

The model decodes the image greedily, left to right; the decoded tokens are then read again by teacher
forcing while a hook records the Attention Refinement Module's output, the term subtracted from the
cross-attention logits. For each step, its mean over the heads of one decoder layer (the last by
default) is drawn over the image, one panel per step, headed by the token predicted at that step:
warm where attention is suppressed (regions already covered), cool where it is encouraged.
"""

import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure
from textrec.modeling import CoMERForFormulaRecognition
from textrec.processing import TextRecognitionProcessor
from textrec.processing.data import load_text_recognition_dataset


@torch.no_grad()
def refinement_terms(
    model: CoMERForFormulaRecognition, pixel_values: torch.Tensor, pixel_mask: torch.Tensor, max_new_tokens: int
) -> tuple[list[int], bool, torch.Tensor]:
    """Greedy left-to-right decoding of one image and the refinement term of every decoding step.

    Returns:
        The decoded ids (start and end tokens excluded), whether the end token was reached, and the terms
        `(layers - 1, num_heads, steps, h, w)` of the layers that have an ARM, for the steps that predicted
        the ids (and the end token, when reached).
    """
    if model.decoder.arm is None:
        raise ValueError("This model has no Attention Refinement Module (coverage='none'): nothing to draw.")
    sequence = model.generate(pixel_values, pixel_mask=pixel_mask, max_new_tokens=max_new_tokens, num_beams=1)[0]
    ids = [token for token in sequence[1:].tolist() if token not in (model.config.eos_token_id, model.config.pad_token_id)]
    finished = model.config.eos_token_id in sequence.tolist()
    recorded = []
    hook = model.decoder.arm.register_forward_hook(lambda module, inputs, output: recorded.append(output))
    try:
        encoder_outputs = model.encoder(pixel_values, pixel_mask=pixel_mask)
        inputs = [model.config.decoder_start_token_id, *ids]
        decoder_input_ids = torch.tensor([inputs if finished else inputs[:-1]])
        model(encoder_outputs=encoder_outputs, decoder_input_ids=decoder_input_ids)
    finally:
        hook.remove()
    height, width = encoder_outputs.feature_mask.shape[1:]
    terms = torch.stack([term[0].unflatten(-1, (height, width)) for term in recorded])
    return ids, finished, terms


def draw_refinement(image: np.ndarray, tokens: list[str], terms: np.ndarray, columns: int = 4) -> Figure:
    """One panel per step: `image (H, W)` in grey with `terms[step] (H, W)` over it.

    Args:
        tokens: the token predicted at each step, as panel titles.
    """
    steps = len(tokens)
    rows = math.ceil(steps / columns)
    height, width = image.shape
    figure = Figure(figsize=(3.2 * columns, 3.2 * rows * height / width + 0.6 * rows))
    axes = figure.subplots(rows, columns, squeeze=False)
    limit = float(np.abs(terms).max()) or 1.0
    for step, axis in enumerate(axes.flat):
        axis.axis("off")
        if step >= steps:
            continue
        axis.imshow(image, cmap="gray", vmin=0, vmax=1)
        axis.imshow(terms[step], cmap="coolwarm", vmin=-limit, vmax=limit, alpha=0.55)
        axis.set_title(f"{step + 1}: {tokens[step]}", fontsize=10)
    figure.suptitle("Refinement term (subtracted from the attention logits) per decoding step", fontsize=11)
    figure.tight_layout()
    return figure


def refinement_figure(
    model: CoMERForFormulaRecognition,
    processor: TextRecognitionProcessor,
    image,
    layer: int = -1,
    max_new_tokens: int = 40,
    columns: int = 4,
) -> tuple[Figure, str]:
    """The refinement picture of one formula image (a path, PIL image or array the processor reads): the greedy
    decoding's steps, each panel the refinement term of decoder layer `layer` (1, 2, ...; -1: the last) averaged
    over the heads, over the image. Returns the figure and the decoded formula."""
    inputs = processor(images=[image])
    ids, finished, terms = refinement_terms(model, inputs["pixel_values"], inputs["pixel_mask"], max_new_tokens)
    layer = terms.shape[0] - 1 if layer == -1 else layer - 1
    tokens = processor.tokenizer.convert_ids_to_tokens(ids) + ([processor.tokenizer.eos_token] if finished else [])
    valid = inputs["pixel_mask"][0].bool()
    picture = inputs["pixel_values"][0, 0][valid.any(1)][:, valid.any(0)].numpy()
    # Cells cover 16 x 16 pixels (the last ones may be cut); crop the terms to the image.
    cells = terms[layer].mean(dim=0)[:, : math.ceil(picture.shape[0] / 16), : math.ceil(picture.shape[1] / 16)]
    cells = F.interpolate(cells[:, None], scale_factor=16, mode="nearest")[:, 0, : picture.shape[0], : picture.shape[1]]
    return draw_refinement(picture, tokens, cells.numpy(), columns), processor.tokenizer.decode(ids)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model_name_or_path", required=True, help="A trained CoMER folder (model and processor).")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--image", help="An image file of one formula.")
    source.add_argument("--dataset", help="A dataset name or folder (see textrec-train --dataset).")
    parser.add_argument("--split", default="test")
    parser.add_argument("--index", type=int, default=0, help="Row of --dataset to draw.")
    parser.add_argument("--layer", type=int, default=-1, help="Decoder layer with an ARM (1, 2, ...; -1: the last).")
    parser.add_argument("--max_new_tokens", type=int, default=40)
    parser.add_argument("--columns", type=int, default=4)
    parser.add_argument("--output", default="refinement.png")
    args = parser.parse_args(argv)

    model = CoMERForFormulaRecognition.from_pretrained(args.model_name_or_path).eval()
    processor = TextRecognitionProcessor.from_pretrained(args.model_name_or_path)
    if args.image:
        image = args.image
    else:
        rows = load_text_recognition_dataset(args.dataset, split=args.split, num_samples=args.index + 1)
        image = rows[args.index]["image"]
    figure, decoded = refinement_figure(model, processor, image, args.layer, args.max_new_tokens, args.columns)
    figure.savefig(args.output, dpi=120)
    print(f"Decoded: {decoded}")
    print(f"Saved {args.output}")


if __name__ == "__main__":
    main()
