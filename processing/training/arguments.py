"""The arguments of a training run, as transformers' example scripts have them: the model, the data and
`Seq2SeqTrainingArguments` with textrec's additions. `textrec-train` parses them from its command line; a
program can build the three dataclasses itself and hand them to `train_from_arguments`."""

import json
import logging
from dataclasses import dataclass, field

import torch
from transformers import HfArgumentParser, PretrainedConfig, Seq2SeqTrainingArguments

from textrec.processing.inference import check_model_source

from .architectures import SPECS, ArchitectureSpec, get_spec
from .trainer import BF16_CPU_FLAGS, CpuTrainingDefaults, cpu_has_native_bf16

DEFAULT_ARCHITECTURE = "self-attention"

logger = logging.getLogger("textrec.train")


@dataclass
class ModelArguments:
    model: str | None = field(
        default=None,
        metadata={
            "help": "Architecture to train (default: with --model_name_or_path, the saved model's own; else "
            f"{DEFAULT_ARCHITECTURE}). CharBERT pre-training has its own command, textrec-pretrain-charbert.",
            "choices": sorted(SPECS),
        },
    )
    preset: str = field(
        default="base",
        metadata={"help": "Hyperparameters: tiny (seconds, tests), base, paper, fast (CPU sizes: what two cores "
                  "train to read lines within the hour for the line models; the coverage study's size for comer), "
                  "small (sharp-attention: base with half the CNN channels, the MNIST study's size).",
                  "choices": ["tiny", "small", "base", "paper", "fast"]},
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
    image_height: int | None = field(
        default=None,
        metadata={"help": "Image height (default: the architecture's; a fine-tuned model's own). With "
                  "--model_name_or_path, a model whose weights fit any height (crnn: 32 pixels or taller by a multiple "
                  "of 16) learns and reads at this height from then on."},
    )
    max_image_width: int | None = field(
        default=None, metadata={"help": "Widest resized image before padding (default: the architecture's; a fine-tuned model's own)."}
    )
    image_width: int | None = field(
        default=None,
        metadata={"help": "Width of every image, for fixed-size architectures (default: the architecture's)."},
    )
    deslant: bool | None = field(
        default=None,
        metadata={"help": "`--deslant true` shears leaning handwriting upright before the model sees it, in training and in the saved "
                  "processor's reading (default: a new model's architecture setting, a fine-tuned model's own)."},
    )
    backbone_weights: str | None = field(
        default=None,
        metadata={"help": "ResNet weights in transformers' format (folder or Hub id, e.g. microsoft/resnet-50) "
                  "for the backbone of a new resnet-transformer model."},
    )
    config_overrides: str | None = field(
        default=None, metadata={"help": 'JSON of configuration values over the preset, e.g. \'{"hidden_size": 128}\'.'}
    )
    freeze_modules: list[str] = field(
        default_factory=list,
        metadata={"help": "Parts of the model not trained: dotted submodule names such as encoder (the vision encoder "
                  "of a fine-tuned TrOCR) or decoder.embed_tokens. Their parameters keep their values."},
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

    early_stopping_patience: int | None = field(
        default=None,
        metadata={"help": "Stop when the evaluation metric (--metric_for_best_model, default cer) has not improved "
                  "for this many evaluations, and end with the best checkpoint's model (saves must fall on "
                  "evaluations). The count survives resuming."},
    )

    def __post_init__(self):
        if self.early_stopping_patience is not None:
            if self.early_stopping_patience < 1:
                raise ValueError(f"--early_stopping_patience must be >= 1 evaluations; got {self.early_stopping_patience}")
            if self.metric_for_best_model is None:
                self.metric_for_best_model = "cer"
            if self.greater_is_better is None:
                # transformers' default (greater is better unless the name ends in "loss") is wrong for error rates.
                name = self.metric_for_best_model.removeprefix("eval_")
                self.greater_is_better = not (name.endswith("loss") or name in ("cer", "wer"))
            self.load_best_model_at_end = True
            self.restore_callback_states_from_checkpoint = True
        if self.fp16 and (self.use_cpu or not (torch.cuda.is_available() or torch.backends.mps.is_available())):
            raise ValueError("--fp16 trains in half precision on a GPU only: on a CPU the run would train in fp32 all "
                             "the same. Drop --fp16 (or use --bf16 --use_cpu, where the CPU has bfloat16).")
        super().__post_init__()  # CpuTrainingDefaults': the step, epoch, batch and time arguments
        if self.bf16 and self.use_cpu and not cpu_has_native_bf16():
            logger.warning("--bf16 on a CPU without native bfloat16 (%s): torch emulates it, and training steps are "
                           "many times slower than in fp32.", " or ".join(BF16_CPU_FLAGS))
        if self.batch_max_area is not None and self.batch_max_area < 0:
            raise ValueError(f"--batch_max_area must be a number of pixels, or 0 for fixed-size batches; got {self.batch_max_area}")
        if self.batch_max_area == 0:
            self.batch_max_area = None
        if self.batch_max_area is not None and self.train_sampling_strategy != "random":
            raise ValueError(
                f"--batch_max_area makes the training batches itself; it does not go with "
                f"--train_sampling_strategy={self.train_sampling_strategy}."
            )


def resolve_architecture(model: str | None, model_name_or_path: str | None) -> str:
    """The `--model` a run trains: with `--model_name_or_path`, the saved model's architecture (read from its
    configuration's `model_type`; `--model`, if given, must agree, or the weights would load into another
    architecture and silently start afresh); else `--model`, by default `DEFAULT_ARCHITECTURE`."""
    if not model_name_or_path:
        return model or DEFAULT_ARCHITECTURE
    source = check_model_source(model_name_or_path)
    model_type = PretrainedConfig.get_config_dict(source)[0].get("model_type")
    saved = next((name for name, spec in SPECS.items() if spec.config_class.model_type == model_type), None)
    if saved is None:
        raise ValueError(f"{model_name_or_path} holds a {model_type!r} model, which textrec-train does not train.")
    if model is not None and model != saved:
        raise ValueError(f"--model {model} does not match --model_name_or_path {model_name_or_path}, a {saved} model.")
    return saved


def requested_architecture(argv: list[str]) -> ArchitectureSpec:
    """The architecture (with its preset's changes) that `argv` asks for: `--model`, `--model_name_or_path` and
    `--preset` read first, so that the architecture's recipe can set the defaults of the full parse. An unknown
    `--model` is left to the full parse to report."""
    if len(argv) == 1 and argv[0].endswith(".json"):
        with open(argv[0]) as file:
            values = json.load(file)
        model, preset = values.get("model"), values.get("preset", ModelArguments.preset)
        model_name_or_path = values.get("model_name_or_path")
    else:
        known, _ = HfArgumentParser(ModelArguments, add_help=False).parse_known_args(argv)
        model, preset, model_name_or_path = known.model, known.preset, known.model_name_or_path
    if model is not None and model not in SPECS:
        model = None  # the full parse reports it
    return get_spec(resolve_architecture(model, model_name_or_path)).for_preset(preset)


def parse_arguments(argv: list[str], spec: ArchitectureSpec | None = None):
    """`(ModelArguments, DataArguments, TextrecTrainingArguments)` from command-line arguments (or one JSON
    file of them). The recipe of `spec` (default: the architecture `argv` asks for) brings its defaults
    (`TrainingRecipe.defaults`); values given in `argv` still win."""
    parser = HfArgumentParser((ModelArguments, DataArguments, TextrecTrainingArguments))
    spec = spec if spec is not None else requested_architecture(argv)
    defaults = spec.recipe.defaults if spec.recipe is not None else {}
    if len(argv) == 1 and argv[0].endswith(".json"):
        with open(argv[0]) as file:
            return parser.parse_dict({**defaults, **json.load(file)})
    parser.set_defaults(**defaults)
    return parser.parse_args_into_dataclasses(argv)
