"""Training textrec's models: one path (`train.fit`) for every command, benchmark and study.

- `arguments`: the model, data and training arguments of `textrec-train`, and their parsing;
- `architectures`: what training needs to know of each architecture beyond its model classes (its image
  settings, vocabulary, recipe and presets' changes), in `SPECS`;
- `recipes`: optimisers and learning-rate schedules an architecture brings in place of AdamW;
- `trainer`: `TextRecognitionTrainer`, time budgets, the stop at a non-finite loss;
- `output_folder`: the output folder kept trustworthy (its lock and run record, complete checkpoints, the atomic
  final save, full disks said as such);
- `train`: `train_from_arguments` (what `textrec-train` does), `train` (any recognizer and processor on given
  data) and `fit` (any Trainer, to the end);
- `charbert`: CharBERT pre-training (`textrec-pretrain-charbert`).
"""

from .architectures import SPECS, ArchitectureSpec, get_spec
from .arguments import DataArguments, ModelArguments, TextrecTrainingArguments, parse_arguments
from .recipes import TrainingRecipe
from .train import build_recognizer, fit, load_splits, special_token_ids, train, train_from_arguments
from .trainer import TextRecognitionTrainer, TimeBudgetCallback

__all__ = [
    "SPECS",
    "ArchitectureSpec",
    "DataArguments",
    "ModelArguments",
    "TextRecognitionTrainer",
    "TextrecTrainingArguments",
    "TimeBudgetCallback",
    "TrainingRecipe",
    "build_recognizer",
    "fit",
    "get_spec",
    "load_splits",
    "parse_arguments",
    "special_token_ids",
    "train",
    "train_from_arguments",
]
