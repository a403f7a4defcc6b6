"""Optimisers and learning-rate schedules that an architecture can bring to textrec-train in place of the
Trainer's AdamW and `--lr_scheduler_type` (see `ArchitectureSpec.recipe`)."""

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch
from torch.optim.lr_scheduler import LambdaLR, LRScheduler
from transformers import TrainingArguments, get_constant_schedule_with_warmup


def rsqrt_scaled_learning_rate(learning_rate: float, hidden_size: int, warmup_steps: int) -> float:
    """The peak learning rate of tensor2tensor-style schedules:
    learning_rate / (sqrt(hidden_size) * sqrt(warmup_steps))."""
    return learning_rate / (math.sqrt(hidden_size) * math.sqrt(warmup_steps))


def warmup_staircase_decay(step: int, num_warmup_steps: int, decay_rate: float, decay_steps: int) -> float:
    """The factor of the peak learning rate at `step`: `step / num_warmup_steps` during the warm-up, then
    `decay_rate ** floor((step - num_warmup_steps) / decay_steps)`."""
    if step < num_warmup_steps:
        return step / num_warmup_steps
    return decay_rate ** ((step - num_warmup_steps) // decay_steps)


def get_warmup_staircase_decay_schedule(
    optimizer: torch.optim.Optimizer, num_warmup_steps: int, decay_rate: float, decay_steps: int, last_epoch: int = -1
) -> LambdaLR:
    """Linear warm-up from 0 to the optimiser's learning rate over `num_warmup_steps`, then multiplied by
    `decay_rate` every `decay_steps` steps (a staircase, counted from the end of the warm-up)."""
    schedule = partial(
        warmup_staircase_decay, num_warmup_steps=num_warmup_steps, decay_rate=decay_rate, decay_steps=decay_steps
    )
    return LambdaLR(optimizer, schedule, last_epoch)


@dataclass(frozen=True)
class TrainingRecipe:
    """An architecture's optimiser and learning-rate schedule for textrec-train.

    Args:
        summary: one line for logs and model cards.
        defaults: `TextrecTrainingArguments` defaults of the recipe; values given on the command line win.
        optimizer: `args -> (optimizer class, keyword arguments)`, the Trainer's `optimizer_cls_and_kwargs`.
        lr_scheduler: `(optimizer, args, num_training_steps) -> scheduler`; replaces `--lr_scheduler_type`.
    """

    summary: str
    defaults: dict
    optimizer: Callable[[TrainingArguments], tuple[type[torch.optim.Optimizer], dict]]
    lr_scheduler: Callable[[torch.optim.Optimizer, TrainingArguments, int], LRScheduler]


def adam_from_arguments(args: TrainingArguments) -> tuple[type[torch.optim.Optimizer], dict]:
    """Adam (L2 weight decay, not AdamW's decoupled one) with `--learning_rate`, `--adam_beta1/2`, `--adam_epsilon`."""
    kwargs = dict(lr=args.learning_rate, betas=(args.adam_beta1, args.adam_beta2), eps=args.adam_epsilon)
    return torch.optim.Adam, kwargs


def warmup_staircase_from_arguments(
    optimizer: torch.optim.Optimizer, args: TrainingArguments, num_training_steps: int, **defaults
) -> LambdaLR:
    """`get_warmup_staircase_decay_schedule` with `--warmup_steps` and `decay_rate`/`decay_steps` from
    `--lr_scheduler_kwargs`, else from `defaults`."""
    kwargs = {**defaults, **(args.lr_scheduler_kwargs or {})}
    return get_warmup_staircase_decay_schedule(optimizer, args.get_warmup_steps(num_training_steps), **kwargs)


def adadelta_from_arguments(args: TrainingArguments, rho: float = 0.95) -> tuple[type[torch.optim.Optimizer], dict]:
    """ADADELTA with `--learning_rate` and decay `rho`; `--weight_decay` enters as L2 (added to the gradient)."""
    return torch.optim.Adadelta, dict(lr=args.learning_rate, rho=rho)


def constant_from_arguments(optimizer: torch.optim.Optimizer, args: TrainingArguments, num_training_steps: int) -> LambdaLR:
    """A constant learning rate, after a linear warm-up over `--warmup_steps` if any."""
    return get_constant_schedule_with_warmup(optimizer, args.get_warmup_steps(num_training_steps))


def sgd_from_arguments(args: TrainingArguments, momentum: float = 0.9) -> tuple[type[torch.optim.Optimizer], dict]:
    """SGD with `--learning_rate` and `momentum`; `--weight_decay` enters as L2 on the Trainer's decayed
    parameter group (biases and normalisation weights are not decayed)."""
    return torch.optim.SGD, dict(lr=args.learning_rate, momentum=momentum)


def reduce_on_plateau_from_arguments(
    optimizer: torch.optim.Optimizer, args: TrainingArguments, num_training_steps: int, **defaults
) -> torch.optim.lr_scheduler.ReduceLROnPlateau:
    """`ReduceLROnPlateau` on `--metric_for_best_model`, which the Trainer steps after each evaluation (not
    after each training step), raising it when `--greater_is_better`; `factor`, `patience` (in evaluations)
    and the rest from `--lr_scheduler_kwargs`, else from `defaults`."""
    if args.metric_for_best_model is None:
        raise ValueError("A learning rate reduced on plateau needs --metric_for_best_model (the metric it watches).")
    kwargs = {**defaults, **(args.lr_scheduler_kwargs or {})}
    mode = "max" if args.greater_is_better else "min"
    return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode=mode, **kwargs)
