"""Widen a CRNN's bidirectional LSTM so that it reads exactly as before: a larger model to train on from a released one.

Each LSTM layer gets `--hidden_size` units per direction instead of its own. The old units keep their weights; the new
units get fresh incoming weights (PyTorch's LSTM initialisation, uniform within 1/sqrt(hidden size)) and no outgoing
ones: their states reach neither the old units, nor the next layer's old units, nor the CTC classifier (zero weights),
so the widened model's logits equal the old model's (checked here on random images) until training moves the zeros
(`--init zero`, the function-preserving widening of Net2Net, Chen, Goodfellow & Shlens 2016, with zeros where Net2Net
splits units). Zeros learn slowly: the old units already fit the data, so the gradient reaching the new units' outgoing
weights is small and changes sign, and two trainings of 100 steps at a learning rate of 1e-4, one widened so and one
not, logged the same loss to four digits. `--init split` is Net2Net's own widening: each new unit is a copy of an old
one drawn at random (its incoming weights and biases copied, times 1 + `--noise` x a standard normal draw so that a
copy and its original can part), and every unit's outgoing weights are divided by the number of its copies, itself
included, so that the copies together pass on what the original did; with `--noise 0` the logits are the old ones.

    python scripts/lab/widen_crnn.py --model crnn-lines --hidden_size 288 --output_dir runs/crnn-lines-wide288-start
"""

from __future__ import annotations

import argparse
import logging
import math
from pathlib import Path

import torch

from textrec.processing.inference import load_recognizer

logger = logging.getLogger("textrec.widen_crnn")
GATES = 4
"""An LSTM's weight matrices stack its input, forget, cell and output gates' rows, `hidden_size` rows each."""


def widened_rows(old: torch.Tensor, old_size: int, new_size: int, generator: torch.Generator) -> torch.Tensor:
    """`old` (`GATES * old_size` rows, any columns) with each gate's block grown to `new_size` rows: the old rows
    first, the new ones drawn uniformly within 1 / sqrt(`new_size`)."""
    bound = 1 / math.sqrt(new_size)
    blocks = []
    for gate in old.split(old_size, dim=0):
        fresh = torch.empty((new_size - old_size, *gate.shape[1:]), dtype=gate.dtype)
        blocks += [gate, fresh.uniform_(-bound, bound, generator=generator)]
    return torch.cat(blocks, dim=0)


def widened_columns(old: torch.Tensor, old_size: int, new_size: int, parts: int) -> torch.Tensor:
    """`old` (`parts * old_size` columns: the states of `parts` directions side by side) with each part grown to
    `new_size` columns: the old columns first, zeros for the new units (whose states then reach nothing)."""
    blocks = []
    for part in old.split(old_size, dim=1):
        blocks += [part, torch.zeros((part.shape[0], new_size - old_size), dtype=part.dtype)]
    return torch.cat(blocks, dim=1)


def widen_state_dict(state: dict[str, torch.Tensor], old_size: int, new_size: int, num_layers: int,
                     seed: int = 0) -> dict[str, torch.Tensor]:
    """A CRNN's state dict with its LSTM (`encoder.sequence_model`, bidirectional) and CTC classifier grown from
    `old_size` to `new_size` units per direction, reading as before (see the module docstring)."""
    generator = torch.Generator().manual_seed(seed)
    widened = dict(state)
    prefix = "encoder.sequence_model."
    for layer in range(num_layers):
        for suffix in ("", "_reverse"):
            input_weights = state[f"{prefix}weight_ih_l{layer}{suffix}"]
            if layer > 0:  # the previous layer's two directions, side by side
                input_weights = widened_columns(input_weights, old_size, new_size, parts=2)
            widened[f"{prefix}weight_ih_l{layer}{suffix}"] = widened_rows(input_weights, old_size, new_size, generator)
            recurrent = widened_columns(state[f"{prefix}weight_hh_l{layer}{suffix}"], old_size, new_size, parts=1)
            widened[f"{prefix}weight_hh_l{layer}{suffix}"] = widened_rows(recurrent, old_size, new_size, generator)
            for kind in ("ih", "hh"):
                name = f"{prefix}bias_{kind}_l{layer}{suffix}"
                widened[name] = widened_rows(state[name][:, None], old_size, new_size, generator)[:, 0]
    widened["ctc_head.classifier.weight"] = widened_columns(state["ctc_head.classifier.weight"], old_size, new_size,
                                                            parts=2)
    return widened


def split_state_dict(state: dict[str, torch.Tensor], old_size: int, new_size: int, num_layers: int, seed: int = 0,
                     noise: float = 0.01) -> dict[str, torch.Tensor]:
    """A CRNN's state dict with its LSTM and CTC classifier grown from `old_size` to `new_size` units per direction by
    Net2Net's split (see the module docstring): each direction of each layer copies `new_size - old_size` of its units
    drawn at random, and what reads a unit's state (its direction's recurrent weights, the next layer's input weights,
    the classifier) reads each copy with the original's weights divided by the number of copies."""
    generator = torch.Generator().manual_seed(seed)
    prefix = "encoder.sequence_model."
    suffixes = ("", "_reverse")
    originals = {(layer, suffix): torch.randint(old_size, (new_size - old_size,), generator=generator)
                 for layer in range(num_layers) for suffix in suffixes}

    def units(layer: int, suffix: str) -> torch.Tensor:  # each new unit's original: the units' indices, old first
        return torch.cat([torch.arange(old_size), originals[layer, suffix]])

    def read_columns(weights: torch.Tensor, layer: int, parts: tuple[str, ...]) -> torch.Tensor:
        """`weights`' columns reading layer `layer`'s states (`parts`: its directions, side by side), grown."""
        blocks = []
        for part, suffix in zip(weights.split(old_size, dim=1), parts):
            index = units(layer, suffix)
            copies = torch.bincount(index, minlength=old_size).to(part.dtype)
            blocks.append(part[:, index] / copies[index])
        return torch.cat(blocks, dim=1)

    def copied_rows(weights: torch.Tensor, layer: int, suffix: str) -> torch.Tensor:
        index = torch.cat([gate * old_size + units(layer, suffix) for gate in range(GATES)])
        rows = weights[index].clone()
        is_copy = torch.cat([torch.arange(new_size) >= old_size] * GATES)
        jitter = 1 + noise * torch.randn(rows[is_copy].shape, generator=generator, dtype=rows.dtype)
        rows[is_copy] = rows[is_copy] * jitter
        return rows

    widened = dict(state)
    for layer in range(num_layers):
        for suffix in suffixes:
            input_weights = state[f"{prefix}weight_ih_l{layer}{suffix}"]
            if layer > 0:
                input_weights = read_columns(input_weights, layer - 1, suffixes)
            widened[f"{prefix}weight_ih_l{layer}{suffix}"] = copied_rows(input_weights, layer, suffix)
            recurrent = read_columns(state[f"{prefix}weight_hh_l{layer}{suffix}"], layer, (suffix,))
            widened[f"{prefix}weight_hh_l{layer}{suffix}"] = copied_rows(recurrent, layer, suffix)
            for kind in ("ih", "hh"):
                name = f"{prefix}bias_{kind}_l{layer}{suffix}"
                widened[name] = copied_rows(state[name][:, None], layer, suffix)[:, 0]
    widened["ctc_head.classifier.weight"] = read_columns(state["ctc_head.classifier.weight"], num_layers - 1, suffixes)
    return widened


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="crnn-lines", help="A released CRNN's short name or a folder.")
    parser.add_argument("--hidden_size", type=int, required=True, help="LSTM units per direction after widening.")
    parser.add_argument("--output_dir", type=Path, required=True)
    parser.add_argument("--init", choices=("zero", "split"), default="zero",
                        help="New units with fresh incoming and zero outgoing weights, or copies of old units.")
    parser.add_argument("--noise", type=float, default=0.01,
                        help="--init split: the relative noise on a copy's incoming weights (0: the old logits).")
    parser.add_argument("--seed", type=int, default=0, help="Draws the new units' incoming weights (or originals).")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    model, processor = load_recognizer(args.model)
    config = model.config
    if args.hidden_size <= config.hidden_size:
        parser.error(f"--hidden_size must exceed the model's {config.hidden_size}")
    widen = widen_state_dict if args.init == "zero" else split_state_dict
    state = widen(model.state_dict(), config.hidden_size, args.hidden_size, config.num_layers, args.seed,
                  **({"noise": args.noise} if args.init == "split" else {}))
    wide_config = type(config).from_dict({**config.to_dict(), "hidden_size": args.hidden_size})
    wide = type(model)(wide_config)
    wide.load_state_dict(state)
    wide.generation_config = model.generation_config  # its decoding: the beam search with the n-gram kept in `state`
    wide.eval()

    images = torch.rand(4, config.num_channels, config.image_height, 160, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        before, after = model(pixel_values=images).logits, wide(pixel_values=images).logits
    gap = (before - after).abs().max().item()
    if gap > 1e-4 and not (args.init == "split" and args.noise > 0):
        raise SystemExit(f"The widened model reads otherwise (logits differ by up to {gap:.2e}); nothing saved.")
    wide.save_pretrained(args.output_dir)
    processor.save_pretrained(args.output_dir)
    parameters = sum(tensor.numel() for tensor in wide.parameters())
    logger.info("%s widened from %d to %d LSTM units per direction (%s parameters; logits within %.1e of the "
                "model's; --init %s): %s", args.model, config.hidden_size, args.hidden_size, f"{parameters:,}", gap,
                args.init, args.output_dir)


if __name__ == "__main__":
    main()
