"""The Trainer pieces textrec adds: `TextRecognitionTrainer` (recipes, training-only augmentation, batches packed
by image area, model cards with real results), CPU training defaults and the checks of the arguments every
training command shares, time budgets, a stop at the first non-finite loss or weight, and a data-parallel sanity
check. The output folder (checkpoints, the final save, the run record and lock) is `output_folder`'s."""

import copy
import hashlib
import logging
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import torch
import torch.distributed as dist
from PIL import Image
from torch.utils.data import DataLoader
from transformers import Seq2SeqTrainer, TrainerCallback
from transformers.trainer_utils import IntervalStrategy, SchedulerType, seed_worker

from textrec.processing.data.area_batching import AreaBatchSampler, image_sizes

from textrec.model_cards.card import SYNTHETIC_DATASET_TYPE, WIDGET_IMAGE, describe_dataset, render_model_card

from .recipes import TrainingRecipe

logger = logging.getLogger("textrec.train")


@dataclass
class CpuTrainingDefaults:
    """Training-argument defaults that suit CPU training, shared by textrec's training commands, with the checks
    of those arguments that would otherwise train nothing and `--overwrite_output_dir`: put it before a
    `TrainingArguments` class in the bases to override that class's defaults."""

    remove_unused_columns: bool = field(default=False)
    per_device_train_batch_size: int = field(default=32)
    per_device_eval_batch_size: int = field(default=64)
    learning_rate: float = field(default=5e-4)
    lr_scheduler_type: SchedulerType | str = field(default="cosine")
    warmup_steps: float = field(default=100)
    max_steps: int = field(default=2000)
    eval_strategy: IntervalStrategy | str = field(default="steps")
    eval_steps: float | None = field(default=500)
    save_steps: float = field(default=500)
    save_total_limit: int | None = field(default=2)
    logging_steps: float = field(default=50)
    report_to: None | str | list[str] = field(default="none")
    max_train_minutes: float | None = field(
        default=None, metadata={"help": "Stop after this much wall-clock training time (a CPU budget)."}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "Train afresh into an --output_dir that holds another run, a finished one or another "
                  "model: its checkpoints are deleted when training starts, its model replaced when the new one is "
                  "saved. Without it such a folder is refused (a finished run of the same command is left as it is)."},
    )

    def __post_init__(self):
        if self.max_steps == 0 or self.max_steps < -1:
            raise ValueError(f"--max_steps must be >= 1 (or -1 to train --num_train_epochs); got {self.max_steps}")
        if self.num_train_epochs <= 0:
            raise ValueError(f"--num_train_epochs must be > 0; got {self.num_train_epochs}")
        for name in ("per_device_train_batch_size", "per_device_eval_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1; got {getattr(self, name)}")
        for name in ("max_train_minutes", "max_train_cpu_minutes"):
            if getattr(self, name, None) is not None and getattr(self, name) <= 0:
                raise ValueError(f"--{name} must be a positive number of minutes; got {getattr(self, name)}")
        super().__post_init__()


BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
"""x86 CPU flags of native bfloat16 arithmetic. Without them torch emulates it: a sharp-attention training step
measured 15x slower under bf16 autocast than in fp32 on an AMD EPYC without AVX-512, and 1.5x faster with it."""


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (Linux: a flag of `BF16_CPU_FLAGS` in /proc/cpuinfo)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return any(flag in flags for flag in BF16_CPU_FLAGS)


class TrainingFailed(ValueError):
    """Training ran but made nothing worth keeping (no step, a loss or weights not finite); nothing was saved."""


class TextRecognitionTrainer(Seq2SeqTrainer):
    """`Seq2SeqTrainer` whose model card is textrec's, with the last evaluation in `model-index`.

    Args:
        card_details: `render_model_card` arguments that the trainer cannot know (architecture,
            dataset name and split, ...).
        recipe: an architecture's own optimiser and learning-rate schedule, in place of AdamW and
            `args.lr_scheduler_type`.
        train_data_collator: the collator of training batches, when they differ from evaluation batches
            (augmentation); `data_collator` serves evaluation, and training too when this is None.

    With `args.batch_max_area` set (`TextrecTrainingArguments`), training batches are packed by image
    area (`AreaBatchSampler`, at most `args.per_device_train_batch_size` images each), which needs the
    processor as `processing_class` to measure the images of `train_dataset`.
    """

    def __init__(
        self,
        *args,
        card_details: dict | None = None,
        recipe: TrainingRecipe | None = None,
        train_data_collator=None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.card_details = card_details or {}
        self.recipe = recipe
        self.train_data_collator = train_data_collator
        if recipe is not None:
            self.optimizer_cls_and_kwargs = recipe.optimizer(self.args)
            logger.info("Training recipe: %s (--lr_scheduler_type is not used)", recipe.summary)

    def get_train_dataloader(self):
        if getattr(self.args, "batch_max_area", None) is not None:
            return self.area_batched_train_dataloader()
        if self.train_data_collator is None:
            return super().get_train_dataloader()
        evaluation_collator, self.data_collator = self.data_collator, self.train_data_collator
        try:
            return super().get_train_dataloader()
        finally:
            self.data_collator = evaluation_collator

    def area_batch_sampler(self) -> AreaBatchSampler:
        """This process's sampler of training batches packed by image area (`args.batch_max_area`)."""
        if self.train_dataset is None:
            raise ValueError("Trainer: training requires a train_dataset.")
        image_processor = getattr(self.processing_class, "image_processor", None)
        if image_processor is None:
            raise ValueError("batch_max_area: the trainer needs the processor (processing_class) to measure images.")
        args = self.args
        return AreaBatchSampler(
            image_sizes(self.train_dataset, image_processor, progress=self.is_local_process_zero()),
            max_area=args.batch_max_area,
            max_batch_size=args.per_device_train_batch_size,
            seed=args.data_seed if args.data_seed is not None else args.seed,
            num_replicas=args.world_size,
            rank=args.process_index,
        )

    def area_batched_train_dataloader(self) -> DataLoader:
        """The training `DataLoader` with `area_batch_sampler()` and the Trainer's own loader settings.

        `len()` is this process's number of batches per epoch, so step counts and schedules are right.
        The Trainer calls the sampler's `set_epoch` at each epoch and, when resuming, skips the batches
        already trained of that epoch's order (`skip_first_batches`)."""
        args = self.args
        sampler = self.area_batch_sampler()
        dataloader = DataLoader(
            self._remove_unused_columns(self.train_dataset, description="Training"),
            batch_sampler=sampler,
            collate_fn=self.train_data_collator or self.data_collator,
            num_workers=args.dataloader_num_workers,
            pin_memory=args.dataloader_pin_memory,
            persistent_workers=args.dataloader_persistent_workers,
            multiprocessing_context=args.dataloader_multiprocessing_context,
            prefetch_factor=args.dataloader_prefetch_factor,
            in_order=args.dataloader_in_order,
            worker_init_fn=partial(seed_worker, num_workers=args.dataloader_num_workers, rank=args.process_index),
        )
        dataloader = self.accelerator.prepare(dataloader)
        shard = dataloader.batch_sampler
        if shard is not sampler:
            # Data-parallel: accelerate wrapped the sampler in a BatchSamplerShard, which would shard its
            # batches again: make it a passthrough (as the Trainer does for its BatchRebalanceSampler). It
            # also passes set_epoch on: on resuming, skip_first_batches wraps it once more, and the Trainer
            # calls set_epoch only one level under the outer wrapper.
            shard.num_processes, shard.process_index = 1, 0
            shard.set_epoch = sampler.set_epoch
        return dataloader

    def create_scheduler(self, num_training_steps: int, optimizer: torch.optim.Optimizer | None = None):
        if self.recipe is not None and self.lr_scheduler is None:
            self.lr_scheduler = self.recipe.lr_scheduler(optimizer or self.optimizer, self.args, num_training_steps)
            self._created_lr_scheduler = True  # as the Trainer's own: rebuilt if `train()` runs again
        return super().create_scheduler(num_training_steps, optimizer)

    def prediction_step(self, *args, **kwargs):
        # Seq2SeqTrainer fills every unset generation default (max_length=20, ...) into the model's
        # generation config, which would then be saved and clash with `max_new_tokens`; keep the model's.
        generation_config = copy.deepcopy(self.model.generation_config)
        try:
            return super().prediction_step(*args, **kwargs)
        finally:
            self.model.generation_config = generation_config

    def last_eval_results(self) -> dict[str, float]:
        for entry in reversed(self.state.log_history):
            if "eval_cer" in entry:
                return {key.removeprefix("eval_"): value for key, value in entry.items() if key.startswith("eval_")}
        return {}

    def write_widget_image(self) -> str | None:
        """Writes the first evaluation image as the card's widget example (`WIDGET_IMAGE`) when textrec rendered the
        evaluation data (images of a user's own folder stay out of a card that may be published); returns its
        title, or None when none was written."""
        dataset_name = self.card_details.get("dataset_name")
        if self.eval_dataset is None or not dataset_name or describe_dataset(dataset_name)[1] != SYNTHETIC_DATASET_TYPE:
            return None
        image = self.eval_dataset[0]["image"]
        if not isinstance(image, Image.Image):
            return None
        image.save(Path(self.args.output_dir) / WIDGET_IMAGE)
        return "An evaluation image, rendered by textrec"

    def create_model_card(self, model_name: str | None = None, **kwargs) -> None:
        if not self.is_world_process_zero():
            return
        repo_id = self.args.hub_model_id or model_name or Path(self.args.output_dir).name
        steps = self.state.global_step
        schedule = self.args.lr_scheduler_type
        batch_size = self.args.per_device_train_batch_size
        batch = f"batch {batch_size} per device"
        if getattr(self.args, "batch_max_area", None) is not None:
            batch = f"batches of at most {batch_size} images and {self.args.batch_max_area} padded pixels per device"
        widget_title = self.write_widget_image()
        card = render_model_card(
            model=self.model,
            repo_id=repo_id,
            widget_title=widget_title,
            eval_results=self.last_eval_results(),
            training_summary=(
                f"{steps} steps of `Seq2SeqTrainer`, {batch}, "
                f"learning rate {self.args.learning_rate} "
                f"({self.recipe.summary if self.recipe is not None else getattr(schedule, 'value', schedule)})"
                + (f"; validation metric `{self.args.metric_for_best_model}`." if self.args.metric_for_best_model else ".")
            ),
            **self.card_details,
        )
        card.save(Path(self.args.output_dir) / "README.md")


def parameter_checksum(model: torch.nn.Module) -> str:
    """SHA-256 of the trainable parameters. Buffers are left out: DDP copies rank 0's buffers (batch
    norm statistics) into the others at each forward, so they differ legitimately after the last step."""
    digest = hashlib.sha256()
    for name, tensor in model.named_parameters():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


class ReplicaConsistencyCallback(TrainerCallback):
    """After training, compares a checksum of every data-parallel replica's weights and raises if any
    differ (they would if gradients were not synchronised)."""

    def on_train_end(self, args, state, control, model=None, **kwargs):
        checksum = parameter_checksum(model)
        if not (dist.is_available() and dist.is_initialized()):
            logger.info("Replica check: single process, checksum %s", checksum[:16])
            return
        checksums = [None] * dist.get_world_size()
        dist.all_gather_object(checksums, checksum)
        if len(set(checksums)) != 1:
            raise RuntimeError(f"Data-parallel replicas diverged: weight checksums {checksums}")
        logger.info("Replica check: %d replicas hold identical weights (%s)", len(checksums), checksum[:16])


class TimeBudgetCallback(TrainerCallback):
    """Stops training (with a final save and evaluation) once a time budget is spent, so that models
    are compared under the same budget rather than the same step count.

    Args:
        minutes: the budget.
        clock: `"wall"` for elapsed time, or `"cpu"` for the CPU time of this process (all its
            threads). It is not immune to other work: on a busy machine a step costs 2-3x the CPU
            time (waiting threads spin), so compare budgets only on a quiet machine.
    """

    CLOCKS = {"wall": time.monotonic, "cpu": time.process_time}

    def __init__(self, minutes: float, clock: str = "wall"):
        self.seconds = minutes * 60
        self.clock = clock
        self.now = self.CLOCKS[clock]
        self.start = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = self.now()

    def on_step_end(self, args, state, control, **kwargs):
        out_of_time = torch.tensor(float(self.now() - self.start >= self.seconds))
        if dist.is_available() and dist.is_initialized():
            # Every data-parallel process must stop at the same step.
            dist.all_reduce(out_of_time, op=dist.ReduceOp.MAX)
        if out_of_time.item():
            logger.info(
                "Budget of %.1f %s minutes reached at step %d", self.seconds / 60, self.clock, state.global_step
            )
            control.should_training_stop = True
            control.should_save = args.save_strategy != "no"
            control.should_evaluate = args.eval_strategy != "no"
        return control


class CpuTimeCallback(TrainerCallback):
    """Adds `cpu_minutes` to every logged entry: the CPU time (all threads) the training processes have used
    so far, summed over resumed sessions (each session starts from the last value in the restored log history),
    so a run spread over several sessions reports its whole cost."""

    def __init__(self):
        self.previous_minutes = 0.0
        self.start = None

    def on_train_begin(self, args, state, control, **kwargs):
        logged = [entry["cpu_minutes"] for entry in state.log_history if "cpu_minutes" in entry]
        self.previous_minutes = logged[-1] if logged else 0.0
        self.start = time.process_time()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.start is not None and state.log_history:
            minutes = self.previous_minutes + (time.process_time() - self.start) / 60
            state.log_history[-1]["cpu_minutes"] = round(minutes, 3)



class FiniteTrainingCallback(TrainerCallback):
    """Stops training at the first step whose loss, or whose weights after it, are not finite (NaN or infinite),
    with a `TrainingFailed` naming the step, before that step is saved. Without it the Trainer logs such a loss as
    the mean of the earlier ones (`logging_nan_inf_filter`) and trains on, saving a model of NaN.

    The loss is read from the training model's outputs (`output.loss`, by a forward hook); the weights are every
    floating-point parameter and buffer. `remove()` takes the hook off the model."""

    def __init__(self):
        self.losses: list[torch.Tensor] = []
        self.hook = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.remove()
        self.losses.clear()
        self.hook = model.register_forward_hook(self.record_loss)

    def record_loss(self, module, inputs, output) -> None:
        loss = getattr(output, "loss", None) if module.training else None
        if isinstance(loss, torch.Tensor):
            self.losses.append(loss.detach().float().reshape(-1))

    def on_step_end(self, args, state, control, model=None, **kwargs):
        losses, self.losses = self.losses, []
        problem = None
        if losses and not (loss := torch.cat(losses)).isfinite().all():
            problem = f"the loss became {loss[~loss.isfinite()][0].item()}"
        else:
            tensors = [(name, tensor) for name, tensor in (*model.named_parameters(), *model.named_buffers())
                       if tensor.is_floating_point()]
            finite = torch.stack([tensor.detach().isfinite().all() for _, tensor in tensors])
            if not finite.all():
                bad = [name for (name, _), ok in zip(tensors, finite.tolist()) if not ok]
                problem = f"{len(bad)} of {len(tensors)} weight tensors became NaN or infinite ({bad[0]}, ...)"
        failed = torch.tensor(float(problem is not None))
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(failed, op=dist.ReduceOp.MAX)  # every process stops at the same step
        if failed.item():
            self.remove()
            raise TrainingFailed(
                f"training diverged at step {state.global_step}: "
                f"{problem or 'the loss or weights of another data-parallel process became NaN or infinite'}. "
                "Nothing was saved from that step on (try a lower --learning_rate)."
            )

    def on_train_end(self, args, state, control, **kwargs):
        self.remove()

    def remove(self) -> None:
        if self.hook is not None:
            self.hook.remove()
            self.hook = None
