"""The one training path of textrec: every command, benchmark and study trains through `fit()`.

    model_args, data_args, training_args = parse_arguments(["--model=self-attention", "--preset=fast", ...])
    train_from_arguments(model_args, data_args, training_args)      # what textrec-train does

- `train_from_arguments` builds an architecture's processor and model (new, or loaded to fine-tune) and its
  data from the three argument groups, then calls `train`;
- `train` trains any recognizer with a processor (textrec's, or a `VisionEncoderDecoderModel`) on given
  datasets with `TextRecognitionTrainer`; a recipe, augmentation and extra metrics are values passed in;
- `fit` runs any `Trainer`: resume from the last complete checkpoint, train, save, evaluate, and record.
  CharBERT pre-training (`textrec.processing.training.charbert`) goes through it too.
"""

import json
import logging
from collections.abc import Callable

import torch
from transformers import EarlyStoppingCallback, Trainer, set_seed

from textrec.model_cards.hub import export_for_hub
from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.collator import TextRecognitionCollator, check_labels
from textrec.processing.inference import check_model_source
from textrec.processing.metrics import make_compute_metrics

from .architectures import ArchitectureSpec, get_spec
from .arguments import DataArguments, ModelArguments, TextrecTrainingArguments, resolve_architecture
from .recipes import TrainingRecipe
from .trainer import (
    CpuTimeCallback,
    ReplicaConsistencyCallback,
    TextRecognitionTrainer,
    TimeBudgetCallback,
    check_writable_folder,
    last_complete_checkpoint,
)

logger = logging.getLogger("textrec.train")


def build_tokenizer(model_args: ModelArguments, spec: ArchitectureSpec):
    """The vocabulary of a new model: `--charset` when given, else the architecture's default."""
    return spec.build_tokenizer(model_args.charset) if model_args.charset else spec.build_tokenizer()


def special_token_ids(tokenizer) -> dict[str, int]:
    """The configuration's special token ids, read from the tokenizer: pad, start, end, and the decoder starting
    from the start token."""
    return dict(
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.bos_token_id,
    )


def build_config(model_args: ModelArguments, spec: ArchitectureSpec, tokenizer):
    """A new model's configuration: the preset, the vocabulary and label length, the architecture's defaults for
    new models (`ArchitectureSpec.config_defaults`), `--image_height`/`--image_width` where the configuration
    declares the input size, then `--config_overrides`."""
    takes_image_size = hasattr(spec.config_class(), "image_height")
    sizes = {}
    if takes_image_size and model_args.image_height:
        sizes["image_height"] = model_args.image_height
    if takes_image_size and model_args.image_width:
        sizes["image_width"] = model_args.image_width
    overrides = json.loads(model_args.config_overrides) if model_args.config_overrides else {}
    return spec.config_class.from_preset(
        model_args.preset,
        vocab_size=len(tokenizer),
        max_target_length=model_args.max_target_length,
        **special_token_ids(tokenizer),
        **{**spec.config_defaults, **sizes, **overrides},
    )


def build_image_processor(model_args: ModelArguments, spec: ArchitectureSpec, config) -> TextRecognitionImageProcessor:
    """A new model's image processor: the architecture's settings, with what the model's configuration declares
    read from it, never written back: the channels, the height where the configuration has one, and the width
    of a fixed-size model. `--image_height` sets the height of models whose configuration has none;
    `--max_image_width` the widest resized image."""
    kwargs = dict(spec.image_processor_kwargs, num_channels=config.num_channels)
    if hasattr(config, "image_height"):
        kwargs["height"] = config.image_height
    elif model_args.image_height:
        kwargs["height"] = model_args.image_height
    if kwargs.get("resize_mode") == "fixed":
        kwargs["width"] = config.image_width
    if model_args.max_image_width:
        kwargs["max_width"] = model_args.max_image_width
    return TextRecognitionImageProcessor(**kwargs)


def build_recognizer(model_args: ModelArguments, spec: ArchitectureSpec):
    """The model and processor of `model_args` for `spec`, made ready to train.

    A new model: its tokenizer, its configuration, the model, then the processor reading from the
    configuration what the model declares (input size, channels, the label length `max_target_length`). With
    `--model_name_or_path` (fine-tuning): the saved model and processor, with a fresh vocabulary where
    `--charset` asks for one. Either way the architecture's `prepare_model` is applied and the parts named by
    `--freeze_modules` are frozen. Returns `(model, processor)`."""
    if model_args.model_name_or_path:
        source = check_model_source(model_args.model_name_or_path)
        if model_args.backbone_weights:
            raise ValueError("--backbone_weights initialises new models; it does not go with --model_name_or_path.")
        processor = TextRecognitionProcessor.from_pretrained(source)
        # fp32 whatever the stored weights (released ones are fp16): training runs in fp32.
        model = spec.model_class.from_pretrained(source, dtype=torch.float32)
        if model_args.charset:
            processor.tokenizer = spec.build_tokenizer(model_args.charset)
            logger.info("New character set: the token embedding and classifier start afresh (%d tokens)", len(processor.tokenizer))
            model.reset_vocabulary(len(processor.tokenizer))
    else:
        tokenizer = build_tokenizer(model_args, spec)
        model = spec.model_class(build_config(model_args, spec, tokenizer))
        if model_args.backbone_weights:
            if not hasattr(model, "load_pretrained_backbone"):
                raise ValueError(f"--backbone_weights: the {spec.name} model has no pre-trained backbone to load.")
            model.load_pretrained_backbone(model_args.backbone_weights)
        processor = TextRecognitionProcessor(build_image_processor(model_args, spec, model.config), tokenizer)
    processor.max_label_length = model.config.max_target_length
    if spec.prepare_model is not None:
        spec.prepare_model(model, processor)
    freeze_modules(model, model_args.freeze_modules)
    return model, processor


def run_in_eval_mode(module: torch.nn.Module, inputs) -> None:
    module.eval()


def freeze_modules(model: torch.nn.Module, names: list[str]) -> None:
    """Stops training the submodules `names` (dotted, as `model.get_submodule` reads them): no gradients, and
    each runs in eval mode whatever the model's (batch normalisation keeps its statistics, dropout is off), as
    a fixed feature extractor does. A name the model does not have is an error that lists its top-level parts."""
    for name in names:
        try:
            module = model.get_submodule(name)
        except AttributeError:
            parts = ", ".join(child for child, _ in model.named_children())
            raise ValueError(f"--freeze_modules: the {type(model).__name__} has no part {name!r}; its parts: {parts}.") from None
        module.requires_grad_(False)
        module.register_forward_pre_hook(run_in_eval_mode)
        logger.info("Frozen: %s (%s parameters)", name, f"{sum(p.numel() for p in module.parameters()):,}")


def load_splits(data_args: DataArguments, training_args, processor: TextRecognitionProcessor):
    """The training and evaluation datasets, both checked before training starts, each check with one warning:
    rows whose image cannot be decoded or whose text is null or empty are left out by
    `load_text_recognition_dataset` (user data; the synthetic sets are known good), labels longer than the
    processor's `max_label_length` by `check_labels`, which also names the characters outside the vocabulary (the collators then stay quiet
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
    train_dataset = check_labels(train_dataset, processor, processor.max_label_length, "train")
    eval_dataset = check_labels(eval_dataset, processor, processor.max_label_length, "evaluation")
    return train_dataset, eval_dataset


def training_callbacks(training_args: TextrecTrainingArguments) -> list:
    callbacks = [CpuTimeCallback()]
    if training_args.max_train_minutes:
        callbacks.append(TimeBudgetCallback(training_args.max_train_minutes, clock="wall"))
    if training_args.max_train_cpu_minutes:
        callbacks.append(TimeBudgetCallback(training_args.max_train_cpu_minutes, clock="cpu"))
    if training_args.check_replicas:
        callbacks.append(ReplicaConsistencyCallback())
    if training_args.early_stopping_patience:
        callbacks.append(EarlyStoppingCallback(training_args.early_stopping_patience))
    return callbacks


def fit(trainer: Trainer, on_saved: Callable[[], None] | None = None, metric_key_prefix: str = "eval") -> dict:
    """Runs `trainer` to the end of its `args` and records the run in `args.output_dir`.

    Resumes from `args.resume_from_checkpoint`, else from the last complete checkpoint of the output folder
    (a half-written one is skipped); saves the model before anything else can fail, then `on_saved()` on the
    main process (what completes the saved folder, such as its Hub files); evaluates (when the trainer has an
    evaluation set); logs and saves the training and evaluation metrics and the trainer state; writes the
    model card and pushes to the Hub when `args.push_to_hub`. Returns the final evaluation metrics."""
    args = trainer.args
    checkpoint = args.resume_from_checkpoint
    if checkpoint is None:
        checkpoint = last_complete_checkpoint(args.output_dir)
        if checkpoint is not None:
            logger.info("Resuming from the last complete checkpoint in the output folder: %s", checkpoint)
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model()
    if on_saved is not None and trainer.is_world_process_zero():
        on_saved()
    metrics = trainer.evaluate(metric_key_prefix=metric_key_prefix) if trainer.eval_dataset is not None else {}
    trainer.log_metrics("train", train_result.metrics)
    if metrics:
        trainer.log_metrics(metric_key_prefix, metrics)
    trainer.save_metrics("all", {**train_result.metrics, **metrics})
    trainer.save_state()
    if trainer.is_world_process_zero():
        trainer.create_model_card()
    if args.push_to_hub:
        trainer.push_to_hub()
    return metrics


def train(
    model,
    processor: TextRecognitionProcessor,
    train_dataset,
    eval_dataset,
    args: TextrecTrainingArguments,
    *,
    card_details: dict,
    recipe: TrainingRecipe | None = None,
    train_processor_kwargs: dict | None = None,
    extra_metrics: tuple[str, ...] = (),
    metric_normalization: str = "none",
) -> dict:
    """Trains the recognizer `model` (reading images prepared by `processor`) on `train_dataset` with
    `TextRecognitionTrainer`, evaluating on `eval_dataset`, and saves it with its processor and Hub files.

    Args:
        card_details: what the model card says that the trainer cannot know: `architecture`,
            `architecture_description`, `reads`, `tokens`, `dataset_name`, `dataset_split`, `eval_samples`,
            optionally `preset` (`render_model_card` arguments).
        recipe: the optimiser and schedule, in place of AdamW and `args.lr_scheduler_type`.
        train_processor_kwargs: processor options of training batches only (augmentation).
        extra_metrics: evaluation metrics besides CER, WER and sequence accuracy (`"exprate"`).
        metric_normalization: `"none"`, or `"scene-text"` (lower-case alphanumerics) for the metrics.

    Returns the final evaluation metrics (none without `eval_dataset`)."""
    if args.should_save:
        check_writable_folder(args.output_dir)
    trainer = TextRecognitionTrainer(
        model=model,
        args=args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=TextRecognitionCollator(processor, warn_out_of_vocabulary=False),
        train_data_collator=TextRecognitionCollator(processor, train_processor_kwargs or {}, warn_out_of_vocabulary=False),
        processing_class=processor,
        compute_metrics=make_compute_metrics(processor, normalization=metric_normalization, extra_metrics=extra_metrics),
        callbacks=training_callbacks(args),
        recipe=recipe,
        card_details=card_details,
    )
    return fit(trainer, on_saved=lambda: export_for_hub(trainer.model, processor, args.output_dir))


def train_from_arguments(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: TextrecTrainingArguments,
    spec: ArchitectureSpec | None = None,
) -> dict:
    """What `textrec-train` does with its arguments: the architecture's processor and model (new, or
    `--model_name_or_path` to fine-tune), the checked datasets, then `train`. `spec` replaces the
    architecture `model_args` names (a study's variant, such as no recipe of its own). Returns the final
    evaluation metrics."""
    if training_args.should_save:
        check_writable_folder(training_args.output_dir)
    set_seed(training_args.seed)
    if spec is None:
        architecture = resolve_architecture(model_args.model, model_args.model_name_or_path)
        spec = get_spec(architecture).for_preset(model_args.preset)
    model, processor = build_recognizer(model_args, spec)
    logger.info("%s model with %s parameters", spec.name, f"{model.num_parameters():,}")
    train_dataset, eval_dataset = load_splits(data_args, training_args, processor)
    return train(
        model,
        processor,
        train_dataset,
        eval_dataset,
        training_args,
        recipe=spec.recipe,
        train_processor_kwargs=spec.train_processor_kwargs,
        extra_metrics=spec.extra_metrics,
        metric_normalization=data_args.metric_normalization,
        card_details=dict(
            architecture=spec.name,
            architecture_description=spec.description,
            reads=spec.reads,
            tokens=spec.tokens,
            dataset_name=data_args.eval_dataset or data_args.dataset,
            dataset_split=data_args.eval_split,
            eval_samples=len(eval_dataset),
            preset=None if model_args.model_name_or_path else model_args.preset,
        ),
    )
