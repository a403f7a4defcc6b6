"""CharBERT pre-training (masked LM + noisy LM) on a text corpus, through textrec's one training path (`fit`).

    textrec-pretrain-charbert --preset small --corpus /usr/share/games/fortunes \
        --max_steps 2000 --output_dir runs/charbert

A new model trains its byte-level BPE tokenizer and its noisy-LM word vocabulary on the training
part of the corpus first; `--model_name_or_path` continues from a saved CharBERT and its processor.
`--confusion_matrix` (a JSON from `scripts/build_confusion_matrix.py`) draws the character noise from
a recognizer's mistakes instead of at random. Every `TrainingArguments` option works.

Evaluation uses held-out documents, masked and corrupted once with a fixed seed, so that numbers
before and after training compare like with like: MLM and NLM losses, masked-token accuracy, and
the NLM correction accuracy (corrupted words, in the word vocabulary, whose original word the NLM
head predicts at the word's first subword). They are logged, and saved with the model in
`pretraining_results.json` (before and after).
"""

import collections
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.nn import functional as F
from transformers import HfArgumentParser, Trainer, TrainingArguments, set_seed

from textrec.modeling import CharBertConfig, CharBertForMaskedLM
from textrec.processing import CharBertProcessor, build_word_vocab, train_charbert_tokenizer
from textrec.processing.checkpoints import load_pretrained
from textrec.processing.data import CharacterNoise, CharBertPretrainingCollator, ConfusionMatrix, load_text_corpus
from textrec.processing.processing_text_recognition import IGNORE_INDEX

from .output_folder import OutputFolder, normalized_path
from .train import build_with_overrides, fit, parse_config_overrides, train_in_output_folder
from .trainer import CpuTrainingDefaults, TimeBudgetCallback

logger = logging.getLogger("textrec.pretrain_charbert")

RESULTS_FILE = "pretraining_results.json"


@dataclass
class CharBertModelArguments:
    preset: str = field(
        default="small",
        metadata={"help": "Sizes: tiny (tests), small, base (roberta-base).", "choices": sorted(CharBertConfig.PRESETS)},
    )
    model_name_or_path: str | None = field(
        default=None, metadata={"help": "Continue pre-training a saved CharBERT (folder or Hub id) and its processor."}
    )
    vocab_size: int = field(default=8000, metadata={"help": "Size of the BPE vocabulary trained for a new model."})
    word_vocab_size: int = field(
        default=10000, metadata={"help": "Words the noisy-LM head predicts, the corpus's most frequent (new model)."}
    )
    max_chars_per_token: int = field(default=6, metadata={"help": "Character slots per token (new model)."})
    max_seq_length: int = field(default=128, metadata={"help": "Longest sequence in tokens; longer documents are cut."})
    config_overrides: str | None = field(
        default=None, metadata={"help": 'JSON of configuration values over the preset, e.g. \'{"causal": true}\'.'}
    )


@dataclass
class CharBertDataArguments:
    corpus: list[str] = field(
        default_factory=list,
        metadata={
            "help": "Text files (one document per line, or fortune's %-separated records), folders of them, "
            "saved datasets or Hub dataset ids."
        },
    )
    text_column: str = field(default="text", metadata={"help": "Text column of saved or Hub datasets."})
    train_split: str = field(default="train")
    max_train_samples: int | None = field(default=None, metadata={"help": "Documents to train on (default: all)."})
    eval_samples: int = field(default=500, metadata={"help": "Documents held out (seeded) for evaluation."})
    mlm_probability: float = field(default=0.1, metadata={"help": "Share of words masked (whole words)."})
    noise_probability: float = field(default=0.1, metadata={"help": "Share of words corrupted for the noisy LM."})
    confusion_matrix: str | None = field(
        default=None, metadata={"help": "A recognizer's confusion matrix (JSON) to draw the character noise from."}
    )


@dataclass
class CharBertTrainingArguments(CpuTrainingDefaults, TrainingArguments):
    """`TrainingArguments` with defaults that suit CharBERT pre-training on a CPU."""

    output_dir: str | None = field(default="runs/charbert", metadata={"help": "Where checkpoints and the model go."})


@torch.no_grad()
def evaluate_pretraining(model, batches: list[dict]) -> dict[str, float]:
    """MLM and NLM losses (means over labelled tokens), masked-token accuracy, and the NLM correction
    accuracy over corrupted words (the prediction at a word's first subword) beside that of the best constant
    answer (`nlm_majority_accuracy`: the most frequent original word among them), on collated `batches`
    that carry `word_index` (see `CharBertPretrainingCollator(return_word_index=True)`)."""
    was_training = model.training
    model.eval()
    totals = dict.fromkeys(("mlm_loss", "mlm_tokens", "mlm_correct", "nlm_loss", "nlm_tokens", "words", "words_correct"), 0.0)
    original_words = collections.Counter()
    for batch in batches:
        batch = {key: value.to(model.device) for key, value in batch.items()}
        word_index = batch.pop("word_index")
        outputs = model(**batch)
        labels, word_labels = batch["labels"], batch["word_labels"]
        masked, corrupted = labels != IGNORE_INDEX, word_labels != IGNORE_INDEX
        totals["mlm_loss"] += F.cross_entropy(outputs.logits[masked], labels[masked], reduction="sum").item()
        totals["mlm_tokens"] += masked.sum().item()
        totals["mlm_correct"] += (outputs.logits[masked].argmax(-1) == labels[masked]).sum().item()
        totals["nlm_loss"] += F.cross_entropy(outputs.word_logits[corrupted], word_labels[corrupted], reduction="sum").item()
        totals["nlm_tokens"] += corrupted.sum().item()
        previous_word = F.pad(word_index[:, :-1], (1, 0), value=-1)
        first_subword = corrupted & (word_index != previous_word)
        totals["words"] += first_subword.sum().item()
        predicted = outputs.word_logits[first_subword].argmax(-1)
        totals["words_correct"] += (predicted == word_labels[first_subword]).sum().item()
        original_words.update(word_labels[first_subword].tolist())
    model.train(was_training)
    return {
        "mlm_loss": totals["mlm_loss"] / max(totals["mlm_tokens"], 1),
        "mlm_accuracy": totals["mlm_correct"] / max(totals["mlm_tokens"], 1),
        "nlm_loss": totals["nlm_loss"] / max(totals["nlm_tokens"], 1),
        "nlm_accuracy": totals["words_correct"] / max(totals["words"], 1),
        # The best constant answer: always the most frequent original word among these corrupted words.
        "nlm_majority_accuracy": max(original_words.values(), default=0) / max(totals["words"], 1),
        "nlm_words": int(totals["words"]),
    }


class CharBertPretrainingTrainer(Trainer):
    """`Trainer` that logs the MLM and NLM parts of the training loss, and evaluates with
    `evaluate_pretraining`: the `eval_dataset` texts are masked and corrupted once, by
    `eval_collator`, and every evaluation reads those same batches.

    Args:
        eval_collator: a `CharBertPretrainingCollator` with `return_word_index=True` and its own seed.
    """

    loss_is_scaled_for_ga = False  # the model's losses are per-batch means

    def __init__(self, *args, eval_collator: CharBertPretrainingCollator, **kwargs):
        super().__init__(*args, **kwargs)
        texts, size = self.eval_dataset["text"], self.args.per_device_eval_batch_size
        self.eval_batches = [eval_collator(texts[i : i + size]) for i in range(0, len(texts), size)]
        self._loss_parts = {"mlm_loss": 0.0, "nlm_loss": 0.0}
        self._loss_part_batches = 0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        if model.training:
            for name in self._loss_parts:
                self._loss_parts[name] += outputs[name].detach()
            self._loss_part_batches += 1
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if "loss" in logs and self._loss_part_batches:
            for name, total in self._loss_parts.items():
                logs[name] = round(float(total) / self._loss_part_batches, 4)
                self._loss_parts[name] = 0.0
            self._loss_part_batches = 0
        super().log(logs, start_time)

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval") -> dict[str, float]:
        metrics = {f"{metric_key_prefix}_{name}": value for name, value in evaluate_pretraining(self.model, self.eval_batches).items()}
        self.log(dict(metrics))
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics


def parse_arguments(argv: list[str]):
    """`(CharBertModelArguments, CharBertDataArguments, CharBertTrainingArguments)` from command-line
    arguments, or one JSON file of them."""
    parser = HfArgumentParser((CharBertModelArguments, CharBertDataArguments, CharBertTrainingArguments))
    if len(argv) == 1 and argv[0].endswith(".json"):
        return parser.parse_json_file(argv[0])
    return parser.parse_args_into_dataclasses(argv)


def build_processor(model_args: CharBertModelArguments, texts: list[str]) -> CharBertProcessor:
    if model_args.model_name_or_path:
        return CharBertProcessor.from_pretrained(model_args.model_name_or_path)
    logger.info("Training a %d-token BPE vocabulary and a %d-word vocabulary", model_args.vocab_size, model_args.word_vocab_size)
    tokenizer = train_charbert_tokenizer(texts, vocab_size=model_args.vocab_size, model_max_length=model_args.max_seq_length)
    return CharBertProcessor(
        tokenizer,
        max_chars_per_token=model_args.max_chars_per_token,
        word_vocab=build_word_vocab(texts, model_args.word_vocab_size),
    )


def build_model(model_args: CharBertModelArguments, processor: CharBertProcessor) -> CharBertForMaskedLM:
    if model_args.model_name_or_path:
        return load_pretrained(CharBertForMaskedLM, model_args.model_name_or_path)
    tokenizer = processor.tokenizer

    def build(**overrides):
        return CharBertConfig.from_preset(
            model_args.preset,
            vocab_size=len(tokenizer),
            char_vocab_size=len(processor.char_vocab),
            word_vocab_size=len(processor.word_vocab),
            max_chars_per_token=processor.max_chars_per_token,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            **overrides,
        )

    config = build_with_overrides(build, CharBertConfig, parse_config_overrides(model_args.config_overrides))
    longest = model_args.max_seq_length + config.pad_token_id + 1
    if config.max_position_embeddings < longest:
        raise ValueError(
            f"--max_seq_length {model_args.max_seq_length} needs max_position_embeddings >= {longest}; the "
            f"{model_args.preset} preset has {config.max_position_embeddings} (set it with --config_overrides)."
        )
    return CharBertForMaskedLM(config)


def make_collator(processor, data_args: CharBertDataArguments, max_length: int, seed: int, **kwargs):
    confusions = ConfusionMatrix.load(data_args.confusion_matrix) if data_args.confusion_matrix else None
    return CharBertPretrainingCollator(
        processor,
        mlm_probability=data_args.mlm_probability,
        noise_probability=data_args.noise_probability,
        noise=CharacterNoise(confusions=confusions),
        max_length=max_length,
        seed=seed,
        **kwargs,
    )


BINARY_SIGNATURES = {b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image",
                     b"%PDF": "a PDF document", b"PK\x03\x04": "a zip archive", b"\x1f\x8b": "a gzip archive"}


def text_file_problem(path: Path) -> str | None:
    """Why the corpus file `path` is no UTF-8 text (binary, or a byte that is not UTF-8, with its line), or None."""
    data = path.read_bytes()
    for signature, kind in BINARY_SIGNATURES.items():
        if data.startswith(signature):
            return f"is {kind}, not text"
    if b"\x00" in data[:65536]:
        return "is binary (it holds NUL bytes), not text"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        return (f"is not UTF-8: line {line} has the byte 0x{data[error.start]:02x} (convert it, e.g. "
                f"`iconv -f latin1 -t utf-8`)")
    return None


def check_corpus_files(sources: list[str]) -> None:
    """Refuses a corpus file (given, or in a folder given) that is binary or not UTF-8, before it becomes
    documents of replacement characters; names the file and the line of its first bad byte."""
    for source in sources:
        path = Path(source)
        if path.is_file():
            files = [path]
        elif path.is_dir() and not any((path / name).exists() for name in ("dataset_info.json", "dataset_dict.json", "state.json")):
            files = sorted(file for file in path.iterdir() if file.is_file() and file.suffix in ("", ".txt"))
        else:
            continue
        for file in files:
            if (problem := text_file_problem(file)) is not None:
                raise ValueError(f"--corpus {file} {problem}.")


def check_corpus_size(documents: int, eval_samples: int) -> None:
    """Refuses a corpus too small to hold out `eval_samples` documents and still train on some."""
    if documents <= eval_samples:
        raise ValueError(f"the corpus has {documents} documents (lines or records): --eval_samples {eval_samples} "
                         "holds out that many for evaluation and would leave none to train on. Give more text or a "
                         "smaller --eval_samples.")


def run_description(model_args: CharBertModelArguments, data_args: CharBertDataArguments) -> dict:
    """What a `textrec-pretrain-charbert` run is, as its output folder records it (`OutputFolder`): what makes its
    model (a new one's preset, vocabulary sizes and configuration overrides, or the model continued) and its data."""
    new = model_args.model_name_or_path is None
    return dict(
        command="textrec-pretrain-charbert",
        preset=model_args.preset if new else None,
        config_overrides=parse_config_overrides(model_args.config_overrides) if new else None,
        vocab_size=model_args.vocab_size if new else None,
        word_vocab_size=model_args.word_vocab_size if new else None,
        max_chars_per_token=model_args.max_chars_per_token if new else None,
        model_name_or_path=normalized_path(model_args.model_name_or_path),
        corpus=[normalized_path(source) for source in data_args.corpus],
        train_split=data_args.train_split,
        max_train_samples=data_args.max_train_samples,
        eval_samples=data_args.eval_samples,
    )


def pretrain(
    model_args: CharBertModelArguments, data_args: CharBertDataArguments, training_args: CharBertTrainingArguments
) -> dict[str, dict[str, float]]:
    """Pre-trains CharBERT (new, or continued from `--model_name_or_path`); returns the evaluation metrics
    `{"before": ..., "after": ...}`, also saved in the output folder's `pretraining_results.json`.

    The output folder is checked first, as `textrec-train` checks its own (`OutputFolder`): another run or model
    in it, or the model continued, is refused, a finished run left as it is (its results returned); the corpus
    files must be UTF-8 text, with more documents than `--eval_samples`."""
    if not data_args.corpus:
        raise ValueError("Give the text to pre-train on with --corpus (e.g. --corpus /usr/share/games/fortunes).")
    if data_args.eval_samples < 1:
        raise ValueError(f"--eval_samples must be >= 1 (documents held out for evaluation); got {data_args.eval_samples}")
    if model_args.model_name_or_path and model_args.config_overrides:
        raise ValueError("--config_overrides sets a new model's configuration; a continued model "
                         "(--model_name_or_path) keeps its own.")
    return train_in_output_folder(
        training_args, run_description(model_args, data_args), model_args.model_name_or_path,
        lambda output_folder: pretrain_in(output_folder, model_args, data_args, training_args))


def pretrain_in(
    output_folder: OutputFolder,
    model_args: CharBertModelArguments,
    data_args: CharBertDataArguments,
    training_args: CharBertTrainingArguments,
) -> dict[str, dict[str, float]]:
    """`pretrain`'s work once its output folder is checked and locked."""
    set_seed(training_args.seed)
    data_seed = training_args.data_seed if training_args.data_seed is not None else training_args.seed
    check_corpus_files(data_args.corpus)
    with training_args.main_process_first(desc="loading the corpus"):
        corpus = load_text_corpus(data_args.corpus, split=data_args.train_split, text_column=data_args.text_column)
    check_corpus_size(len(corpus), data_args.eval_samples)
    splits = corpus.train_test_split(test_size=data_args.eval_samples, seed=data_seed)
    train_dataset, eval_dataset = splits["train"], splits["test"]
    if data_args.max_train_samples is not None:
        train_dataset = train_dataset.select(range(min(data_args.max_train_samples, len(train_dataset))))
    logger.info("%d training and %d evaluation documents", len(train_dataset), len(eval_dataset))

    processor = build_processor(model_args, train_dataset["text"])
    model = build_model(model_args, processor)
    output_folder.check_model(model.config)
    logger.info("CharBERT with %s parameters", f"{model.num_parameters():,}")

    max_length = model_args.max_seq_length
    trainer = CharBertPretrainingTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=make_collator(processor, data_args, max_length, seed=data_seed),
        eval_collator=make_collator(processor, data_args, max_length, seed=data_seed + 1, return_word_index=True),
        processing_class=processor,
        callbacks=[TimeBudgetCallback(training_args.max_train_minutes)] if training_args.max_train_minutes else [],
    )
    before = trainer.evaluate(metric_key_prefix="before")

    def finish(after: dict) -> dict[str, dict[str, float]]:
        results = {
            "before": {name.removeprefix("before_"): value for name, value in before.items()},
            "after": {name.removeprefix("after_"): value for name, value in after.items()},
        }
        if trainer.is_world_process_zero():
            with open(os.path.join(training_args.output_dir, RESULTS_FILE), "w") as file:
                json.dump({**results, "steps": trainer.state.global_step, "num_parameters": model.num_parameters()},
                          file, indent=1)
        return results

    return fit(trainer, metric_key_prefix="after", output_folder=output_folder, finish=finish)


def format_results(results: dict[str, dict[str, float]]) -> str:
    """A Markdown table of the evaluation metrics before and after pre-training."""
    lines = ["| metric | before | after |", "|---|---|---|"]
    for name in ("mlm_loss", "nlm_loss", "mlm_accuracy", "nlm_accuracy", "nlm_majority_accuracy", "nlm_words"):
        lines.append(f"| {name} | {results['before'][name]:.4g} | {results['after'][name]:.4g} |")
    return "\n".join(lines)
