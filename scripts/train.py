"""textrec-train: train a text recognizer with `Seq2SeqTrainer`.

    textrec-train --model self-attention --preset base --dataset synthetic-lines \
        --max_steps 2000 --output_dir runs/self-attention

`--model charbert` pre-trains the CharBERT language model instead, with its own arguments (see
`textrec.scripts.pretrain_charbert`, or `textrec-train --model charbert --help`).

Every `Seq2SeqTrainingArguments` option works as in transformers' example scripts
(`--learning_rate`, `--resume_from_checkpoint`, `--push_to_hub`, `--hub_model_id`, ...). The
output folder is ready for the Hub: weights as safetensors, processor, custom code, generation
config and a model card with the evaluation results. It runs unchanged under
`torchrun --nproc_per_node 2` (gloo on CPU).
"""

import json
import logging
import sys
from dataclasses import dataclass, field

import datasets
import torch
import transformers
from transformers import HfArgumentParser, Seq2SeqTrainingArguments, set_seed

from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.collator import TextRecognitionCollator, check_labels
from textrec.processing.metrics import make_compute_metrics

from . import pretrain_charbert
from .architectures import SPECS, get_spec
from .cli import run_command
from .hub_export import export_for_hub
from .inference import check_model_source
from .training import (
    CpuTrainingDefaults,
    ReplicaConsistencyCallback,
    TextRecognitionTrainer,
    TimeBudgetCallback,
    check_writable_folder,
    last_complete_checkpoint,
)

logger = logging.getLogger("textrec.train")

LANGUAGE_MODEL = "charbert"
"""The `--model` handed over to `pretrain_charbert`."""


@dataclass
class ModelArguments:
    model: str = field(
        default="self-attention",
        metadata={
            "help": "Architecture to train; charbert pre-trains the CharBERT language model (its own options).",
            "choices": sorted(SPECS) + [LANGUAGE_MODEL],
        },
    )
    preset: str = field(
        default="base",
        metadata={"help": "Hyperparameters: tiny (seconds, tests), base, paper, fast (what a CPU trains to read in "
                  "an hour; self-attention and resnet-transformer).", "choices": ["tiny", "base", "paper", "fast"]},
    )
    model_name_or_path: str | None = field(
        default=None,
        metadata={"help": "Fine-tune a trained model (a released model's name such as self-attention-lines, a folder "
                  "or a Hub id) instead of a new one."},
    )
    charset: str | None = field(
        default=None,
        metadata={"help": "Characters of the vocabulary, or a file holding them (default: printable ASCII); for "
                  "comer, a LaTeX dictionary file, one token per line (default: the CROHME dictionary)."},
    )
    max_target_length: int = field(default=64, metadata={"help": "Longest label in tokens, end token included."})
    image_height: int | None = field(default=None, metadata={"help": "Image height (default: the architecture's)."})
    max_image_width: int | None = field(default=None, metadata={"help": "Widest resized image before padding."})
    image_width: int | None = field(
        default=None,
        metadata={"help": "Width of every image, for fixed-size architectures (default: the architecture's)."},
    )
    backbone_weights: str | None = field(
        default=None,
        metadata={"help": "ResNet weights in transformers' format (folder or Hub id, e.g. microsoft/resnet-50) "
                  "for the backbone of a new resnet-transformer model."},
    )
    config_overrides: str | None = field(
        default=None, metadata={"help": 'JSON of configuration values over the preset, e.g. \'{"d_model": 128}\'.'}
    )


@dataclass
class DataArguments:
    dataset: str = field(
        default="synthetic-lines",
        metadata={
            "help": "synthetic-lines, synthetic-lines-handwriting, synthetic-digits, synthetic-math, "
            "mnist-digits (options after a colon: mnist-digits:length=13,rotated=true,mnist_dir=DIR), "
            "washington:DIR[:fold=2] (George Washington lines), iam:DIR[:train=LIST,validation=LIST,test=LIST] "
            "(IAM lines), "
            "an image folder with metadata.jsonl, an LMDB folder (data.mdb), a saved datasets folder, "
            "or a Hub dataset id."
        },
    )
    eval_dataset: str | None = field(default=None, metadata={"help": "Evaluation data (default: --dataset)."})
    train_split: str = field(default="train")
    eval_split: str = field(default="validation")
    max_train_samples: int | None = field(
        default=None, metadata={"help": "Rows to use (synthetic data: rows to generate, default 20000)."}
    )
    max_eval_samples: int = field(default=256, metadata={"help": "Rows of the evaluation split to use."})
    image_column: str = field(default="image")
    text_column: str = field(default="text")
    metric_normalization: str = field(
        default="none",
        metadata={"help": "none, or scene-text (lower-case alphanumerics) for CER/WER/accuracy.",
                  "choices": ["none", "scene-text"]},
    )


@dataclass
class TextrecTrainingArguments(CpuTrainingDefaults, Seq2SeqTrainingArguments):
    """`Seq2SeqTrainingArguments` with defaults that suit text recognition on a CPU."""

    output_dir: str | None = field(default="runs/textrec", metadata={"help": "Where checkpoints and the model go."})
    predict_with_generate: bool = field(default=True)
    max_train_cpu_minutes: float | None = field(
        default=None,
        metadata={"help": "Stop after this much CPU time of the training process. Under load it inflates too (waiting threads spin): compare budgets only on a quiet machine."},
    )
    check_replicas: bool = field(
        default=False, metadata={"help": "After training, assert all data-parallel replicas hold identical weights."}
    )
    batch_max_area: int | None = field(
        default=None,
        metadata={"help": "Pack training batches by image area: images sorted by area are grouped so that each "
                  "batch's padded area (images x tallest x widest, after resizing) stays within this many pixels, "
                  "with at most --per_device_train_batch_size images; the batch order is shuffled each epoch. "
                  "0 or unset: fixed-size batches."},
    )

    def __post_init__(self):
        if self.max_steps == 0 or self.max_steps < -1:
            raise ValueError(f"--max_steps must be >= 1 (or -1 to train --num_train_epochs); got {self.max_steps}")
        for name in ("per_device_train_batch_size", "per_device_eval_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1; got {getattr(self, name)}")
        for name in ("max_train_minutes", "max_train_cpu_minutes"):
            if getattr(self, name) is not None and getattr(self, name) <= 0:
                raise ValueError(f"--{name} must be a positive number of minutes; got {getattr(self, name)}")
        super().__post_init__()
        if self.batch_max_area is not None and self.batch_max_area < 0:
            raise ValueError(f"--batch_max_area must be a number of pixels, or 0 for fixed-size batches; got {self.batch_max_area}")
        if self.batch_max_area == 0:
            self.batch_max_area = None
        if self.batch_max_area is not None and self.train_sampling_strategy != "random":
            raise ValueError(
                f"--batch_max_area makes the training batches itself; it does not go with "
                f"--train_sampling_strategy={self.train_sampling_strategy}."
            )


def parse_arguments(argv: list[str] | None = None):
    """The three argument groups. An architecture with its own training recipe brings its defaults
    (`ArchitectureSpec.recipe.defaults`); values given in `argv` still win."""
    parser = HfArgumentParser((ModelArguments, DataArguments, TextrecTrainingArguments))
    argv = sys.argv[1:] if argv is None else argv
    spec = SPECS.get(requested_argument(argv, "model") or ModelArguments.model)
    if spec is not None:
        spec = spec.for_preset(requested_argument(argv, "preset") or ModelArguments.preset)
    defaults = spec.recipe.defaults if spec is not None and spec.recipe is not None else {}
    if len(argv) == 1 and argv[0].endswith(".json"):
        with open(argv[0]) as file:
            return parser.parse_dict({**defaults, **json.load(file)})
    parser.set_defaults(**defaults)
    return parser.parse_args_into_dataclasses(argv)


def build_processor(model_args: ModelArguments, spec) -> TextRecognitionProcessor:
    if model_args.model_name_or_path:
        processor = TextRecognitionProcessor.from_pretrained(check_model_source(model_args.model_name_or_path))
        if model_args.charset:
            processor.tokenizer = spec.build_tokenizer(model_args.charset)
        return processor
    image_kwargs = dict(spec.image_processor_kwargs)
    if model_args.image_height:
        image_kwargs["height"] = model_args.image_height
    if model_args.max_image_width:
        image_kwargs["max_width"] = model_args.max_image_width
    if model_args.image_width:
        image_kwargs["width"] = model_args.image_width
    tokenizer = spec.build_tokenizer(model_args.charset) if model_args.charset else spec.build_tokenizer()
    return TextRecognitionProcessor(
        TextRecognitionImageProcessor(**image_kwargs), tokenizer, max_label_length=model_args.max_target_length
    )


def build_model(model_args: ModelArguments, spec, processor: TextRecognitionProcessor):
    tokenizer = processor.tokenizer
    if model_args.model_name_or_path:
        if model_args.backbone_weights:
            raise ValueError("--backbone_weights initialises new models; it does not go with --model_name_or_path.")
        # fp32 whatever the stored weights (released ones are fp16): training runs in fp32.
        model = spec.model_class.from_pretrained(check_model_source(model_args.model_name_or_path), dtype=torch.float32)
        if model_args.charset:
            logger.info("New character set: the token embedding and classifier start afresh (%d tokens)", len(tokenizer))
            model.reset_vocabulary(len(tokenizer))
        return model
    overrides = json.loads(model_args.config_overrides) if model_args.config_overrides else {}
    image_processor = processor.image_processor
    if image_processor.resize_mode == "fixed":  # a fixed-size model's input size is the processor's
        if {"image_height", "image_width"} & overrides.keys():
            raise ValueError("Give the input size of a fixed-size model with --image_height and --image_width.")
        overrides = dict(overrides, image_height=image_processor.height, image_width=image_processor.width)
    config = spec.config_class.from_preset(
        model_args.preset,
        vocab_size=len(tokenizer),
        num_channels=processor.image_processor.num_channels,
        max_target_length=model_args.max_target_length,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.bos_token_id,
        **overrides,
    )
    model = spec.model_class(config)
    if model_args.backbone_weights:
        if not hasattr(model, "load_pretrained_backbone"):
            raise ValueError(f"--backbone_weights: the {spec.name} model has no pre-trained backbone to load.")
        model.load_pretrained_backbone(model_args.backbone_weights)
    return model


def load_splits(data_args: DataArguments, training_args, processor, max_label_length: int):
    """The training and evaluation datasets, both checked before training starts, each check with one warning:
    rows whose image cannot be decoded or whose text is null or empty are left out by
    `load_text_recognition_dataset` (user data; the synthetic sets are known good), over-long labels by
    `check_labels`, which also names the characters outside the vocabulary (the collators then stay quiet
    about them)."""
    columns = dict(image_column=data_args.image_column, text_column=data_args.text_column)
    with training_args.main_process_first(desc="preparing the datasets"):
        train_dataset = load_text_recognition_dataset(
            data_args.dataset,
            split=data_args.train_split,
            num_samples=data_args.max_train_samples,
            seed=training_args.data_seed if training_args.data_seed is not None else training_args.seed,
            **columns,
        )
        eval_dataset = load_text_recognition_dataset(
            data_args.eval_dataset or data_args.dataset,
            split=data_args.eval_split,
            num_samples=data_args.max_eval_samples,
            **columns,
        )
    train_dataset = check_labels(train_dataset, processor, max_label_length, "train")
    eval_dataset = check_labels(eval_dataset, processor, max_label_length, "evaluation")
    return train_dataset, eval_dataset


def training_callbacks(training_args: TextrecTrainingArguments) -> list:
    callbacks = []
    if training_args.max_train_minutes:
        callbacks.append(TimeBudgetCallback(training_args.max_train_minutes, clock="wall"))
    if training_args.max_train_cpu_minutes:
        callbacks.append(TimeBudgetCallback(training_args.max_train_cpu_minutes, clock="cpu"))
    if training_args.check_replicas:
        callbacks.append(ReplicaConsistencyCallback())
    return callbacks


def requested_argument(argv: list[str], name: str) -> str | None:
    """The value of `--name` in `argv` (or in its single JSON file of arguments), if any."""
    if len(argv) == 1 and argv[0].endswith(".json"):
        with open(argv[0]) as file:
            return json.load(file).get(name)
    for index, argument in enumerate(argv):
        if argument.startswith(f"--{name}="):
            return argument.split("=", 1)[1]
        if argument == f"--{name}" and index + 1 < len(argv):
            return argv[index + 1]
    return None


def run(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    if requested_argument(argv, "model") == LANGUAGE_MODEL:
        return pretrain_charbert.run(argv)
    model_args, data_args, training_args = parse_arguments(argv)
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        level=logging.INFO if training_args.should_log else logging.WARNING,
    )
    transformers.utils.logging.set_verbosity(training_args.get_process_log_level())
    datasets.utils.logging.set_verbosity(training_args.get_process_log_level())

    if training_args.should_save:
        check_writable_folder(training_args.output_dir)
    set_seed(training_args.seed)
    spec = get_spec(model_args.model).for_preset(model_args.preset)
    processor = build_processor(model_args, spec)
    model = build_model(model_args, spec, processor)
    if spec.prepare_model is not None:
        spec.prepare_model(model, processor)
    max_label_length = model.config.max_target_length
    processor.max_label_length = max_label_length
    logger.info("%s model with %s parameters", spec.name, f"{model.num_parameters():,}")

    train_dataset, eval_dataset = load_splits(data_args, training_args, processor, max_label_length)
    trainer = TextRecognitionTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=TextRecognitionCollator(processor, warn_out_of_vocabulary=False),
        train_data_collator=TextRecognitionCollator(
            processor, spec.train_processor_kwargs, warn_out_of_vocabulary=False
        ),
        processing_class=processor,
        compute_metrics=make_compute_metrics(
            processor, normalization=data_args.metric_normalization, extra_metrics=spec.extra_metrics
        ),
        callbacks=training_callbacks(training_args),
        recipe=spec.recipe,
        card_details=dict(
            architecture=spec.name,
            architecture_description=spec.description,
            dataset_name=data_args.eval_dataset or data_args.dataset,
            dataset_split=data_args.eval_split,
            eval_samples=len(eval_dataset),
            preset=None if model_args.model_name_or_path else model_args.preset,
        ),
    )

    checkpoint = training_args.resume_from_checkpoint
    if checkpoint is None:
        checkpoint = last_complete_checkpoint(training_args.output_dir)
        if checkpoint is not None:
            logger.info("Resuming from the last complete checkpoint in the output folder: %s", checkpoint)
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    # Saved before the final evaluation, so that nothing after training can lose the trained model.
    trainer.save_model()
    if trainer.is_world_process_zero():
        export_for_hub(trainer.model, processor, training_args.output_dir)
    metrics = trainer.evaluate(metric_key_prefix="eval")
    trainer.log_metrics("train", train_result.metrics)
    trainer.log_metrics("eval", metrics)
    trainer.save_metrics("all", {**train_result.metrics, **metrics})
    trainer.save_state()
    if trainer.is_world_process_zero():
        trainer.create_model_card()
    if training_args.push_to_hub:
        trainer.push_to_hub()
    return metrics


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run_command("textrec-train", run, argv)


if __name__ == "__main__":
    main()
