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
from collections.abc import Callable
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


LSTM_PREFIX = "encoder.sequence_model."
DIRECTIONS = ("", "_reverse")
"""The suffixes of a bidirectional LSTM's forward and backward weights."""


def grown_state_dict(state: dict[str, torch.Tensor], num_layers: int,
                     grown_columns: Callable[[torch.Tensor, int, tuple[str, ...]], torch.Tensor],
                     grown_rows: Callable[[torch.Tensor, int, str], torch.Tensor]) -> dict[str, torch.Tensor]:
    """A CRNN's state dict with its LSTM (`encoder.sequence_model`, bidirectional) and CTC classifier grown: what reads
    layer `layer`'s states (`directions` of it side by side) through `grown_columns(weights, layer, directions)`, the
    rows of the units of layer `layer`'s direction `direction` through `grown_rows(weights, layer, direction)`, columns
    first, each direction of each layer in turn."""
    widened = dict(state)
    for layer in range(num_layers):
        for direction in DIRECTIONS:
            input_weights = state[f"{LSTM_PREFIX}weight_ih_l{layer}{direction}"]
            if layer > 0:  # the previous layer's two directions, side by side
                input_weights = grown_columns(input_weights, layer - 1, DIRECTIONS)
            widened[f"{LSTM_PREFIX}weight_ih_l{layer}{direction}"] = grown_rows(input_weights, layer, direction)
            recurrent = grown_columns(state[f"{LSTM_PREFIX}weight_hh_l{layer}{direction}"], layer, (direction,))
            widened[f"{LSTM_PREFIX}weight_hh_l{layer}{direction}"] = grown_rows(recurrent, layer, direction)
            for kind in ("ih", "hh"):
                name = f"{LSTM_PREFIX}bias_{kind}_l{layer}{direction}"
                widened[name] = grown_rows(state[name][:, None], layer, direction)[:, 0]
    widened["ctc_head.classifier.weight"] = grown_columns(state["ctc_head.classifier.weight"], num_layers - 1,
                                                          DIRECTIONS)
    return widened


def widen_state_dict(state: dict[str, torch.Tensor], old_size: int, new_size: int, num_layers: int,
                     seed: int = 0) -> dict[str, torch.Tensor]:
    """A CRNN's state dict with its LSTM and CTC classifier grown from `old_size` to `new_size` units per direction,
    the new units with fresh incoming and zero outgoing weights, reading as before (see the module docstring)."""
    generator = torch.Generator().manual_seed(seed)
    return grown_state_dict(
        state, num_layers,
        grown_columns=lambda weights, layer, directions: widened_columns(weights, old_size, new_size, len(directions)),
        grown_rows=lambda weights, layer, direction: widened_rows(weights, old_size, new_size, generator))


def split_state_dict(state: dict[str, torch.Tensor], old_size: int, new_size: int, num_layers: int, seed: int = 0,
                     noise: float = 0.01) -> dict[str, torch.Tensor]:
    """A CRNN's state dict with its LSTM and CTC classifier grown from `old_size` to `new_size` units per direction by
    Net2Net's split (see the module docstring): each direction of each layer copies `new_size - old_size` of its units
    drawn at random, and what reads a unit's state (its direction's recurrent weights, the next layer's input weights,
    the classifier) reads each copy with the original's weights divided by the number of copies."""
    generator = torch.Generator().manual_seed(seed)
    originals = {(layer, direction): torch.randint(old_size, (new_size - old_size,), generator=generator)
                 for layer in range(num_layers) for direction in DIRECTIONS}

    def units(layer: int, direction: str) -> torch.Tensor:  # each unit's original: the units' indices, old first
        return torch.cat([torch.arange(old_size), originals[layer, direction]])

    def read_columns(weights: torch.Tensor, layer: int, directions: tuple[str, ...]) -> torch.Tensor:
        blocks = []
        for part, direction in zip(weights.split(old_size, dim=1), directions):
            index = units(layer, direction)
            copies = torch.bincount(index, minlength=old_size).to(part.dtype)
            blocks.append(part[:, index] / copies[index])
        return torch.cat(blocks, dim=1)

    def copied_rows(weights: torch.Tensor, layer: int, direction: str) -> torch.Tensor:
        index = torch.cat([gate * old_size + units(layer, direction) for gate in range(GATES)])
        rows = weights[index].clone()
        is_copy = torch.cat([torch.arange(new_size) >= old_size] * GATES)
        jitter = 1 + noise * torch.randn(rows[is_copy].shape, generator=generator, dtype=rows.dtype)
        rows[is_copy] = rows[is_copy] * jitter
        return rows

    return grown_state_dict(state, num_layers, read_columns, copied_rows)


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
    if args.init == "zero":
        state = widen_state_dict(model.state_dict(), config.hidden_size, args.hidden_size, config.num_layers, args.seed)
    else:
        state = split_state_dict(model.state_dict(), config.hidden_size, args.hidden_size, config.num_layers, args.seed,
                                 args.noise)
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
