"""How many steps a model can train in a budget: the time of its fastest training step, measured on a
throw-away copy."""

import sys
import time

import numpy as np
import torch

CALIBRATION_WARMUP_STEPS = 2
"""Untimed optimiser steps before the timed ones (first-call overheads)."""


def seconds_per_step(model, collator, dataset, batch_size: int, learning_rate: float, steps: int, seed: int) -> float:
    """Wall-clock seconds of the fastest of `steps` training steps (rows read and collated, forward,
    backward, clipping, AdamW) after a short warm-up: other processes can only slow a step down, so the
    fastest is the best estimate of the step time on a quiet machine. The model's weights change: use a
    throw-away copy."""
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    timings = []
    for step in range(CALIBRATION_WARMUP_STEPS + steps):
        start = time.perf_counter()
        indices = rng.integers(len(dataset), size=batch_size).tolist()
        batch = collator([dataset[i] for i in indices])
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        if step >= CALIBRATION_WARMUP_STEPS:
            timings.append(time.perf_counter() - start)
    return min(timings)


def print_step_table(caption: str, columns: list[str], rows: list[str], script: str, argv: list[str] | None) -> None:
    """A step benchmark's report: the caption (what was timed, where), a Markdown table of `rows` under `columns`
    (the first two columns name the model, the others are numbers, right-aligned), and the command that made it."""
    print(caption)
    print()
    print("| " + " | ".join(columns) + " |")
    print("|---|---|" + "---:|" * (len(columns) - 2))
    print("\n".join(rows))
    print()
    print(f"Command: python scripts/lab/{script}.py " + " ".join(sys.argv[1:] if argv is None else argv))
