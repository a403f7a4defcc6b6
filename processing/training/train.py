"""The one training path of textrec: every command, benchmark and study trains through `fit()`.

    model_args, data_args, training_args = parse_arguments(["--model=self-attention", "--preset=fast", ...])
    train_from_arguments(model_args, data_args, training_args)      # what textrec-train does

- `train_from_arguments` builds an architecture's processor and model (new, or loaded to fine-tune) and its
  data from the three argument groups, then calls `train`;
- `train` trains any recognizer with a processor (textrec's, or a `VisionEncoderDecoderModel`) on given
  datasets with `TextRecognitionTrainer`; a recipe, augmentation and extra metrics are values passed in;
- `fit` runs any `Trainer` in its output folder (`output_folder.OutputFolder`): refuse a folder holding other work,
  leave a finished run as it is, resume from the last complete checkpoint, train (stopping at a non-finite loss),
  save atomically, evaluate, and record. CharBERT pre-training (`textrec.processing.training.charbert`) goes
  through it too.
"""

import difflib
import inspect
import json
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

import torch
from transformers import EarlyStoppingCallback, Trainer, TrainerState, set_seed
from transformers.trainer import TRAINER_STATE_NAME

from textrec.model_cards import resolve_model_path
from textrec.model_cards.card import base_model_name, training_datasets, training_languages
from textrec.model_cards.hub import export_for_hub
from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.loading import MissingSplitError
from textrec.processing.data.collator import TextRecognitionCollator, check_labels
from textrec.processing.checkpoints import load_pretrained
from textrec.processing.inference import check_model_source
from textrec.processing.metrics import make_compute_metrics
from textrec.processing.tokenization_char import characters_of

from .architectures import ArchitectureSpec, get_spec
from .arguments import DataArguments, ModelArguments, TextrecTrainingArguments, resolve_architecture
from .recipes import TrainingRecipe
from .output_folder import (
    OutputFolder,
    check_writable_folder,
    checkpoint_ended,
    dataset_content,
    last_complete_checkpoint,
    naming_full_disk,
    normalized_path,
    save_final_model,
    training_ended,
    training_settings,
)
from .trainer import (
    CpuTimeCallback,
    FiniteTrainingCallback,
    ReplicaConsistencyCallback,
    TextRecognitionTrainer,
    TimeBudgetCallback,
    TrainingFailed,
)

logger = logging.getLogger("textrec.train")


FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def check_charset_argument(charset: str | None) -> None:
    """Refuses a `--charset` that names a file that is not there: text with a path separator or a file suffix
    ("charsets/latin.chars") that repeats a character, which an alphabet never does, would otherwise become a
    vocabulary of the letters of its path."""
    if not charset or os.path.isfile(charset):
        return
    if os.path.isdir(charset):
        raise ValueError(f"--charset {charset} is a folder; give the characters, or a file holding them.")
    looks_like_a_path = "/" in charset or os.sep in charset or FILE_SUFFIX.search(charset)
    characters = characters_of(charset)
    if looks_like_a_path and len(set(characters)) < len(characters):
        raise ValueError(f"--charset {charset}: no such file (as characters it would repeat some; give the "
                         "characters themselves, or the path of a file holding them).")


def build_tokenizer(model_args: ModelArguments, spec: ArchitectureSpec):
    """The vocabulary of a new model: `--charset` when given (checked by `check_charset_argument`), else the
    architecture's default."""
    check_charset_argument(model_args.charset)
    return spec.build_tokenizer(model_args.charset) if model_args.charset else spec.build_tokenizer()


def parse_config_overrides(text: str | None) -> dict:
    """`--config_overrides` as a dict (checked against the configuration by `build_with_overrides`)."""
    if not text:
        return {}
    try:
        overrides = json.loads(text)
    except ValueError as error:
        raise ValueError(f"--config_overrides is not valid JSON ({error}): {text}") from None
    if not isinstance(overrides, dict):
        raise ValueError(f"--config_overrides must be a JSON object of configuration values; got {text}")
    return overrides


def config_paths(values: dict, prefix: str = "") -> set[str]:
    """The dotted paths of a configuration dict's entries, nested configurations included."""
    paths = set()
    for key, value in values.items():
        if str(key).startswith("_"):
            continue
        paths.add(f"{prefix}{key}")
        if isinstance(value, dict):
            paths |= config_paths(value, f"{prefix}{key}.")
    return paths


def fits_type(value, default) -> bool:
    """Whether the override `value` (as JSON gives it) has the type of the configuration's `default`: the same
    type (a list for a tuple too), an integer for a float, or null; a default of None takes anything. A bool is
    not an integer here, nor an integer a bool."""
    if default is None or value is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return type(value) is type(default)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(default))


def check_override_types(overrides: dict, defaults: dict, config_class, prefix: str = "") -> None:
    """Refuses an override whose value is not of the type of the entry it sets (`fits_type`), such as the string
    "64" for a size, naming the entry, the value and the type expected; nested parts are checked entry by entry.
    Entries the configuration lacks are left to `build_with_overrides`."""
    for key, value in overrides.items():
        if key not in defaults:
            continue
        default = defaults[key]
        if isinstance(value, dict) and isinstance(default, dict):
            check_override_types(value, default, config_class, f"{prefix}{key}.")
        elif not fits_type(value, default):
            raise ValueError(
                f"--config_overrides: {prefix}{key} = {json.dumps(value)} is of type {type(value).__name__}; "
                f"{config_class.__name__} expects {type(default).__name__} (its default: {json.dumps(default)})."
            )


def build_with_overrides(build: Callable[..., object], config_class, overrides: dict):
    """`build(**overrides)`, a configuration (a class's `from_preset` with its preset and sizes), refused when an
    override names no entry of it: a configuration stores an unknown keyword as a new attribute that no model
    reads, so an override that adds an entry the configuration built without overrides lacks (at the top, or
    nested in a part) is misspelt or misplaced. The error names it and lists the configuration's keys (its
    `from_preset` arguments and its own). An override of another type than its entry's is refused too
    (`check_override_types`)."""
    defaults = build().to_dict()
    check_override_types(overrides, defaults, config_class)
    reference = config_paths(defaults)
    known = [name for cls_method in (config_class.from_preset, config_class.__init__)
             for name, parameter in inspect.signature(cls_method).parameters.items()
             if name not in ("self", "cls", "preset") and parameter.kind is not parameter.VAR_KEYWORD]
    known = list(dict.fromkeys(known))
    try:
        config = build(**overrides)
    except TypeError as error:
        raise ValueError(f"--config_overrides: {config_class.__name__}: {error}; its keys: {', '.join(known)}.") from None
    unknown = sorted(config_paths(config.to_dict()) - reference)
    if unknown:
        places = {}  # an entry's name -> where it is (its dotted path), for the guesses
        for path in sorted(reference, key=lambda path: path.count(".")):
            places.setdefault(path.rsplit(".", 1)[-1], path)
        places.update({name: name for name in known})
        guesses = {path: difflib.get_close_matches(path.rsplit(".", 1)[-1], list(places), n=1) for path in unknown}
        named = ", ".join(f"{path!r}" + (f" (did you mean {places[guess[0]]!r}?)" if guess else "")
                          for path, guess in guesses.items())
        raise ValueError(f"--config_overrides: {config_class.__name__} has no {named}; its keys: {', '.join(known)}.")
    return config


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
    declares the input size, then `--config_overrides` (each checked to be an entry of the configuration)."""
    takes_image_size = hasattr(spec.config_class(), "image_height")
    sizes = {}
    if takes_image_size and model_args.image_height:
        sizes["image_height"] = model_args.image_height
    if takes_image_size and model_args.image_width:
        sizes["image_width"] = model_args.image_width
    overrides = parse_config_overrides(model_args.config_overrides)

    def build(**overrides):
        return spec.config_class.from_preset(
            model_args.preset,
            vocab_size=len(tokenizer),
            max_target_length=model_args.max_target_length,
            **special_token_ids(tokenizer),
            **{**spec.config_defaults, **sizes, **overrides},
        )

    return build_with_overrides(build, spec.config_class, overrides)


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
    `--model_name_or_path` (fine-tuning): the saved model and processor, with a new vocabulary where
    `--charset` asks for one (its characters that the saved one has keep their weights: `keep_shared_token_rows`).
    Either way the architecture's `prepare_model` is applied and the parts named by `--freeze_modules` are frozen.
    Returns `(model, processor)`."""
    if model_args.model_name_or_path:
        source = check_model_source(model_args.model_name_or_path)
        if model_args.backbone_weights:
            raise ValueError("--backbone_weights initialises new models; it does not go with --model_name_or_path.")
        if model_args.config_overrides:
            raise ValueError("--config_overrides sets a new model's configuration; a fine-tuned model "
                             "(--model_name_or_path) keeps its own.")
        check_charset_argument(model_args.charset)
        processor = TextRecognitionProcessor.from_pretrained(source)
        # fp32 whatever the stored weights (released ones are fp16): training runs in fp32.
        model = load_pretrained(spec.model_class, source, dtype=torch.float32)  # every weight the file's, or an error
        if model_args.charset:
            saved_vocabulary, saved_weights = processor.tokenizer.get_vocab(), dict(model.state_dict())
            processor.tokenizer = spec.build_tokenizer(model_args.charset)
            model.reset_vocabulary(len(processor.tokenizer))
            kept = keep_shared_token_rows(model, saved_weights, saved_vocabulary, processor.tokenizer.get_vocab())
            logger.info("New character set (%d tokens): %d tokens it shares with the saved model keep their rows of "
                        "the token embedding and classifier, the others start afresh", len(processor.tokenizer), kept)
            dropped = sorted(set(saved_vocabulary) - set(processor.tokenizer.get_vocab()))
            if dropped:
                logger.warning("--charset leaves out %d characters the saved model reads (%s): the fine-tuned model "
                               "will not read them. Give --charset every character to keep.", len(dropped),
                               "".join(dropped[:60]) + ("..." if len(dropped) > 60 else ""))
        if model_args.image_height:
            read_at_height(model, processor, model_args.image_height)
        if model_args.max_image_width:
            processor.image_processor.max_width = model_args.max_image_width
    else:
        tokenizer = build_tokenizer(model_args, spec)
        model = spec.model_class(build_config(model_args, spec, tokenizer))
        if model_args.backbone_weights:
            if not hasattr(model, "load_pretrained_backbone"):
                raise ValueError(f"--backbone_weights: the {spec.name} model has no pre-trained backbone to load.")
            model.load_pretrained_backbone(model_args.backbone_weights)
        processor = TextRecognitionProcessor(build_image_processor(model_args, spec, model.config), tokenizer)
    processor.max_label_length = model.config.max_target_length
    if model_args.deslant is not None:
        processor.image_processor.deslant = model_args.deslant
    if spec.prepare_model is not None:
        spec.prepare_model(model, processor)
    freeze_modules(model, model_args.freeze_modules)
    return model, processor


def read_at_height(model, processor, height: int) -> None:
    """`model` and `processor` set to read lines `height` pixels high, the weights kept: for a fine-tuned model whose
    configuration declares that its weights fit any such height (`weights_fit_any_image_height`; a CRNN's convolutions
    slide over the taller line and its feature map is averaged over its rows), which learns the new scale from there.
    The height the model already reads at changes nothing, whatever the architecture.

    Raises:
        ValueError: the architecture's weights depend on the height, or its configuration does not read `height`.
    """
    config = model.config
    saved_height = getattr(config, "image_height", processor.image_processor.height)
    if height == saved_height:
        return
    if not getattr(config, "weights_fit_any_image_height", False):
        raise ValueError(f"--image_height={height}: a fine-tuned {config.model_type} keeps its height "
                         f"({saved_height} pixels); its weights depend on it.")
    type(config).from_dict({**config.to_dict(), "image_height": height})  # the configuration's own check of the height
    logger.info("Fine-tuning at %d pixels high (the saved model read at %d): the weights are kept, the scale is learned",
                height, saved_height)
    config.image_height = height
    processor.image_processor.height = height


def keep_shared_token_rows(model: torch.nn.Module, saved_weights: dict[str, torch.Tensor], saved_vocabulary: dict[str, int],
                           vocabulary: dict[str, int]) -> int:
    """After `model.reset_vocabulary`, copies back the rows of the tokens that the saved vocabulary and the new one
    share, in every weight indexed by token (token embedding, classifier, CTC head: a weight that the reset replaced,
    whose first dimension was the saved vocabulary's size and is now the new one's), so that a character set
    extending the model's reads its old characters as before while the new ones learn. A new character with combining
    marks starts from its letter's row (`uͤ` from `u`: the letter is what it most looks like). Returns how many tokens
    kept or took a saved row."""
    shared = [(saved_vocabulary[token], index) for token, index in vocabulary.items() if token in saved_vocabulary]
    shared += [(saved_vocabulary[token[0]], index) for token, index in vocabulary.items()
               if token not in saved_vocabulary and len(token) > 1 and characters_of(token) == [token]
               and token[0] in saved_vocabulary]
    if not shared:
        return 0
    saved_rows, rows = (torch.tensor(column) for column in zip(*shared))
    weights = model.state_dict()
    with torch.no_grad():
        for name, saved in saved_weights.items():
            weight = weights.get(name)
            if (weight is not None and saved.dim() >= 1 and saved.shape[0] == len(saved_vocabulary)
                    and weight.shape[0] == len(vocabulary) and weight.shape[1:] == saved.shape[1:]
                    and weight.data_ptr() != saved.data_ptr()):
                weight[rows.to(weight.device)] = saved[saved_rows.to(saved.device)].to(weight.device, weight.dtype)
    return len(shared)


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
    about them). An evaluation split the data lacks is an error naming `--eval_split` and `--eval_dataset`."""
    columns = dict(image_column=data_args.image_column, text_column=data_args.text_column)
    with training_args.main_process_first(desc="preparing the datasets"):
        train_dataset = load_text_recognition_dataset(
            data_args.dataset,
            split=data_args.train_split,
            num_samples=data_args.max_train_samples,
            seed=training_args.data_seed if training_args.data_seed is not None else training_args.seed,
            **columns,
        )
        try:
            eval_dataset = load_text_recognition_dataset(
                data_args.eval_dataset or data_args.dataset,
                split=data_args.eval_split,
                num_samples=data_args.max_eval_samples,
                **columns,
            )
        except MissingSplitError as error:
            raise ValueError(
                f"{error.source} has no split {error.split!r} to evaluate on; available: {error.available}. Pass "
                f"--eval_split one of them (--eval_split {error.available[0]}), or --eval_dataset with data to evaluate on."
            ) from None
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


def fit(
    trainer: Trainer,
    on_saved: Callable[[Path], None] | None = None,
    metric_key_prefix: str = "eval",
    output_folder: OutputFolder | None = None,
    finish: Callable[[dict], object] | None = None,
):
    """Runs `trainer` to the end of its `args` in `args.output_dir` and records the run there.

    Everything happens under the folder's lock (`output_folder`, by default one that compares nothing but what
    the folder holds): a folder holding other work is refused; a finished run is left as it is and its recorded
    result returned. Resumes from `args.resume_from_checkpoint`, else from the last complete checkpoint of the
    output folder (a damaged one is skipped for the one before); from a checkpoint at the run's end (a run killed
    during its final save) it trains no step, only restores and saves. Training stops at the first non-finite
    loss or weight (`FiniteTrainingCallback`), and a run that trained no step fails: neither saves anything.
    Then saves the model atomically (`save_final_model`; `on_saved(folder)` adds on the main process what
    completes it, such as its Hub files), evaluates (when the trainer has an evaluation set), logs and saves the
    training and evaluation metrics and the trainer state, writes the model card, pushes to the Hub when
    `args.push_to_hub`, and, when the run has ended (not when a time budget stopped it), records it as finished,
    last. A full disk is said as such.

    Returns `finish(metrics)` (what the caller makes of the final evaluation metrics, writing files of its own on
    the main process), by default the metrics; the record keeps it for reruns."""
    args = trainer.args
    if output_folder is None:
        output_folder = OutputFolder(args.output_dir, overwrite=getattr(args, "overwrite_output_dir", False),
                                     main_process=args.should_save, max_steps=args.max_steps)
    with output_folder.locked():
        finished = output_folder.check()
        if finished is not None:
            return already_finished(output_folder, finished)
        output_folder.start()
        checkpoint = args.resume_from_checkpoint
        if checkpoint is None and not output_folder.overwrite:
            checkpoint = last_complete_checkpoint(args.output_dir)
            if checkpoint is not None:
                logger.info("Resuming from the last complete checkpoint in the output folder: %s", checkpoint)
        guard = FiniteTrainingCallback()
        trainer.add_callback(guard)
        try:
            ended = checkpoint is not None and checkpoint_ended(checkpoint, args)
            if ended:
                logger.info("%s is the run's last step: restoring it to finish the run, training no step", checkpoint)
                train_metrics = restore_ended_training(trainer, checkpoint)
            else:
                check_a_batch_trains(trainer)
                start = json.loads((Path(checkpoint) / TRAINER_STATE_NAME).read_text())["global_step"] if checkpoint else 0
                with naming_full_disk(lambda: Path(args.output_dir) / f"checkpoint-{trainer.state.global_step}"):
                    train_metrics = trainer.train(resume_from_checkpoint=checkpoint).metrics
                if trainer.state.global_step <= start:
                    raise TrainingFailed(
                        f"training ran no step (from step {start}, to step {trainer.state.max_steps}): the training "
                        "data gave no batch? Nothing was saved."
                    )
                ended = training_ended(trainer)
        finally:
            guard.remove()
            trainer.remove_callback(guard)
        save_final_model(trainer, on_saved)
        with naming_full_disk(args.output_dir):
            metrics = trainer.evaluate(metric_key_prefix=metric_key_prefix) if trainer.eval_dataset is not None else {}
            trainer.log_metrics("train", train_metrics)
            if metrics:
                trainer.log_metrics(metric_key_prefix, metrics)
            trainer.save_metrics("all", {**train_metrics, **metrics})
            trainer.save_state()
            if trainer.is_world_process_zero():
                trainer.create_model_card()
            result = finish(metrics) if finish is not None else metrics
        if args.push_to_hub:
            trainer.push_to_hub()
        if ended:
            target = args.max_steps if args.max_steps > 0 else trainer.state.max_steps
            output_folder.finish(trainer.state.global_step, target, result)
        return result


def already_finished(output_folder: OutputFolder, record: dict):
    """What a rerun of a finished run does: say so, and return the run's recorded result."""
    logger.warning("%s: already finished at step %d; nothing to do (use --overwrite_output_dir to train again)",
                   output_folder.path, record["finished"]["step"])
    return record.get("result")


def check_a_batch_trains(trainer: Trainer) -> None:
    """Refuses, before training, a run whose every training batch `--dataloader_drop_last` would drop."""
    args, dataset = trainer.args, trainer.train_dataset
    if not args.dataloader_drop_last or getattr(args, "batch_max_area", None) or not hasattr(dataset, "__len__"):
        return
    batch = args.per_device_train_batch_size * args.world_size
    if len(dataset) < batch:
        processes = f" x {args.world_size} processes" if args.world_size > 1 else ""
        raise ValueError(
            f"--dataloader_drop_last drops every batch: the {len(dataset)} training rows are fewer than one batch of "
            f"{batch} (--per_device_train_batch_size {args.per_device_train_batch_size}{processes}); no step could train."
        )


def restore_ended_training(trainer: Trainer, checkpoint: str) -> dict:
    """Puts `trainer` where it stood when training ended at `checkpoint` (its state, its weights, the best
    checkpoint's with `load_best_model_at_end`), as `trainer.train()` would have left it; returns the training
    metrics of this session, which trained nothing."""
    trainer.state = TrainerState.load_from_json(os.path.join(checkpoint, TRAINER_STATE_NAME))
    trainer._load_from_checkpoint(checkpoint)
    best = trainer.state.best_model_checkpoint
    if trainer.args.load_best_model_at_end and best is not None and os.path.isdir(best):
        trainer._load_best_model()
    metrics = {"train_runtime": 0.0, "total_flos": trainer.state.total_flos}
    trainer.log(metrics)  # the log entry that closes training, as `train()` writes it (the Trainer adds the epoch)
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
    output_folder: OutputFolder | None = None,
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
        output_folder: the run's `OutputFolder` (what its record compares), by default one that compares nothing
            but what `args.output_dir` holds.

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
    return fit(trainer, on_saved=lambda folder: export_for_hub(trainer.model, processor, folder), output_folder=output_folder)


def run_description(model_args: ModelArguments, data_args: DataArguments, spec: ArchitectureSpec) -> dict:
    """What a `textrec-train` run is, as its output folder records it (`OutputFolder`): the architecture, the
    preset of a new model or the model fine-tuned, the vocabulary and the training data."""
    return dict(
        command="textrec-train",
        architecture=spec.name,
        preset=None if model_args.model_name_or_path else model_args.preset,
        model_name_or_path=normalized_path(model_args.model_name_or_path),
        charset=model_args.charset,
        dataset=normalized_path(data_args.dataset),
        dataset_content=dataset_content(data_args.dataset),
        train_split=data_args.train_split,
        max_train_samples=data_args.max_train_samples,
    )


def train_in_output_folder(training_args, description: dict, model_name_or_path: str | None,
                           train: Callable[[OutputFolder], object]):
    """A training command's start, checked as `textrec-train`'s is: the output folder writable and not the model
    being continued (`check_not_in_place`), then locked and checked against `description` (`OutputFolder`: another
    run or model there is refused, a finished run left as it is and its result returned); `train(output_folder)`
    does the work."""
    if training_args.should_save:
        check_writable_folder(training_args.output_dir)
    check_not_in_place(model_name_or_path, training_args.output_dir)
    output_folder = OutputFolder(training_args.output_dir, {**description, **training_settings(training_args)},
                                 overwrite=training_args.overwrite_output_dir, main_process=training_args.should_save,
                                 max_steps=training_args.max_steps)
    with output_folder.locked():
        finished = output_folder.check()
        if finished is not None:
            return already_finished(output_folder, finished)
        return train(output_folder)


def check_not_in_place(model_name_or_path: str | None, output_dir: str) -> None:
    """Refuses to fine-tune a model folder into itself: its weights, card and files would be replaced."""
    if not model_name_or_path:
        return
    source = Path(resolve_model_path(model_name_or_path))
    if source.is_dir() and Path(output_dir).resolve() == source.resolve():
        raise ValueError(f"--output_dir {output_dir} is the model being fine-tuned (--model_name_or_path "
                         f"{model_name_or_path}): training would replace it. Choose another --output_dir.")


def train_from_arguments(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: TextrecTrainingArguments,
    spec: ArchitectureSpec | None = None,
) -> dict:
    """What `textrec-train` does with its arguments: under the output folder's lock, the folder checked (another
    run or another model in it, or the model being fine-tuned, refused), the architecture's processor and model
    (new, or `--model_name_or_path` to fine-tune) checked against the configuration the folder's run saved; then
    a finished run is left as it is (its final evaluation returned), else the checked datasets and `train`.
    `spec` replaces the architecture `model_args` names (a study's variant, such as no recipe of its own).
    Returns the final evaluation metrics."""
    if training_args.should_save:
        check_writable_folder(training_args.output_dir)
    set_seed(training_args.seed)
    if spec is None:
        architecture = resolve_architecture(model_args.model, model_args.model_name_or_path)
        spec = get_spec(architecture).for_preset(model_args.preset)
    check_not_in_place(model_args.model_name_or_path, training_args.output_dir)
    output_folder = OutputFolder(
        training_args.output_dir,
        {**run_description(model_args, data_args, spec), **training_settings(training_args)},
        overwrite=training_args.overwrite_output_dir,
        main_process=training_args.should_save,
        max_steps=training_args.max_steps,
    )
    with output_folder.locked():
        finished = output_folder.check()
        model, processor = build_recognizer(model_args, spec)
        output_folder.check_model(model.config)
        if finished is not None:
            return already_finished(output_folder, finished)
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
                training_data=data_args.dataset,
                base_model=base_model_name(model_args.model_name_or_path),
                datasets=training_datasets(data_args.dataset),
                languages=training_languages(data_args.dataset),
            ),
            output_folder=output_folder,
        )
