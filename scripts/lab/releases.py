"""The released checkpoints: what trains each one, how it is evaluated, and its packaging into textrec.

Training goes through textrec's one path with the `textrec-train` arguments of `RELEASES` (an interrupted run
resumes from its last checkpoint), or, for a model that a paper study trains (a length curriculum of several
textrec-train runs), through that study's command, whose best model is released. Packaging evaluates the trained model on each held-out test set of the
release (clean lines of the `test` split, never seen in training) with each decoding (the CTC head's and the
attention decoder's; the one that reads the `validation` lines better becomes the model's
`generation_config.decoding`, which `generate()`, `recognize()` and the pipeline follow), stores the weights in
fp16 in `model_cards/released/<name>/` (with `"dtype": "float32"` in `config.json`: it loads and computes in
fp32) with the tokenizer, processor and generation settings, and renders its model
card with those results as `model-index` metadata and the command that trained it. The package then
installs it, and `textrec-recognize --model <name>` reads with it. `python scripts/lab/release.py NAME`
does all of it.
"""

import importlib
import json
import logging
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from textrec.processing import DEFAULT_CHARSET
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.book_marks import BOOK_MARK_CHARACTERS
from textrec.processing.data.german_print import GERMAN_PRINT_CHARACTERS, historic_spelling, load_german_corpus
from textrec.processing.data.receipt_text import receipt_lines
from textrec.processing.data.text_sampling import load_corpus
from textrec.processing.inference import available_decodings, load_recognizer, recognize
from textrec.processing.language_model import (
    LANGUAGE_MODEL_ORDER,
    LANGUAGE_MODEL_WEIGHT,
    LENGTH_BONUS,
    NUM_BEAMS,
    attach_language_model,
)
from textrec.processing.metrics import evaluate_texts
from textrec.processing.training import get_spec, parse_arguments, train_from_arguments

from textrec.model_cards import RELEASED_FOLDER
from textrec.model_cards.card import (
    SYNTHETIC_DATASET_TYPE,
    WIDGET_IMAGE,
    describe_dataset,
    render_model_card,
    training_datasets,
    training_languages,
)
from textrec.model_cards.hub import stored_state_dict

from real_sets import ALL_SETS, REAL_DATA_DIR, RealSet

logger = logging.getLogger("textrec.release")

RELEASED_MODELS_DIR = Path(__file__).resolve().parents[2] / "model_cards" / RELEASED_FOLDER
"""Where packaged releases go in the checkout (installed with the package as `textrec.model_cards`)."""
CARD_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
              "processor_config.json", "tokenizer_config.json", "special_tokens_map.json", "README.md", WIDGET_IMAGE)
"""What a packaged release keeps: everything `from_pretrained` reads, and its card with its example image (rendered
by textrec, `Release.widget_dataset`). Code files are not kept:
inside textrec the installed code is used, and `textrec-export` writes a copy of it."""

STUDY_RUNS_DIR = "scripts/lab/study_runs"
"""Where the paper studies' unfinished runs are carried between sessions, in the repository (`--carry_dir`)."""
HELD_OUT_LINES = "min_chars=15,max_chars=80,augment=false"
"""Test lines as in README's benchmark: clean, 15 to 80 characters."""


@dataclass(frozen=True)
class LanguageModelCorpus:
    """The texts a release's character n-gram is counted from when it is packaged
    (`textrec.processing.language_model.attach_language_model`, with its default order and search settings).

    Args:
        description: what the texts are, for the card.
        texts: gives them, one line of text each.
    """

    description: str
    texts: Callable[[], list[str]]
    num_beams: int = NUM_BEAMS
    language_model_weight: float = LANGUAGE_MODEL_WEIGHT
    length_bonus: float = LENGTH_BONUS
    line_break_marks: tuple[str, ...] = ()


FORTUNE_LINE_WORDS = 10
"""Debian's fortunes, a stream of words, are counted as lines of this many words."""


def fortune_lines(words: tuple[str, ...]) -> list[str]:
    return [" ".join(words[start:start + FORTUNE_LINE_WORDS]) for start in range(0, len(words), FORTUNE_LINE_WORDS)]


CAPITALISED_FORTUNE_LINES_EVERY = 2
"""Every this many English fortune lines is counted a second time in capitals by the line readers' n-grams: headings,
receipts, forms and signs print words in capitals, which fortunes seldom write (chosen with the eleventh `crnn-lines`
on the development sets, a random share of the lines: 0, 0.2, 0.5 or all of them counted again read receipts at 4.88%,
4.75%, 4.69%, 4.75%, scene words 13.96%, 13.06%, 12.86%, 12.71%, forms 10.31%, 9.79%, 9.73%, 9.72%, historic print
1.75%, 1.72%, 1.72%, 1.73%; the seventh `crnn-handwriting` with a random half of them: IAM-OnDB 12.05% -> 12.03%,
Washington 21.46% -> 21.31%, scene words 13.99% -> 13.17%, forms 13.35% -> 12.31%, receipts 5.72% -> 5.95%; as
released, every second line, the real-images report gives the tables' numbers)."""


def english_fortune_lines_and_capitals() -> list[str]:
    """Debian's English fortunes as lines, and every `CAPITALISED_FORTUNE_LINES_EVERY`-th of them again in capitals."""
    lines = fortune_lines(load_corpus())
    return lines + [line.upper() for line in lines[::CAPITALISED_FORTUNE_LINES_EVERY]]


RECEIPT_LINES = 5_000
"""Receipt-like lines (`textrec.processing.data.receipt_text`) counted by the print reader's n-gram beside the fortunes
(chosen with the fourteenth `crnn-lines` on the development sets, one run each, lines of seed 1 (the release's: 0):
none, 1,000, 2,000, 5,000, 10,000, 20,000 and 100,000 read the receipts at 4.55%, 3.74%, 3.78%, 3.79%, 3.88%, 3.89%,
3.89%, historic print at 1.66-1.68%, scene words at 12.34%, 12.47%, 12.45%, 12.47%, 12.53%, 12.56%, 12.49%, forms at
9.59%, 9.53%, 9.52%, 9.53%, 9.50%, 9.49%, 9.60%; every line in capitals: receipts 4.10%, scene words 12.40% with 5,000)."""


def english_and_historic_german_fortunes_and_receipts() -> list[str]:
    """Debian's English fortunes (`english_fortune_lines_and_capitals`), its German ones spelled as 19th-century
    print (`historic_spelling`: the long s, „German quotes“; the same draws each time), and `RECEIPT_LINES`
    receipt-like lines (`receipt_lines`, seed 0)."""
    rng = np.random.default_rng(0)
    return (english_fortune_lines_and_capitals() + [historic_spelling(line, rng) for line in fortune_lines(load_german_corpus())]
            + receipt_lines(RECEIPT_LINES, seed=0))


def handwriting_training_transcriptions_and_fortunes() -> list[str]:
    """IAM-OnDB's training transcriptions (`handwriting/train`; never its test lines, whose sentences are others) and
    Debian's English fortunes (`english_fortune_lines_and_capitals`)."""
    metadata = REAL_DATA_DIR / "handwriting" / "train" / "metadata.jsonl"
    if not metadata.is_file():
        raise FileNotFoundError(f"no IAM-OnDB training lines at {metadata} (the project's shared data folder)")
    with metadata.open(encoding="utf-8") as rows:
        transcriptions = [json.loads(row)["text"] for row in rows if row.strip()]
    return transcriptions + english_fortune_lines_and_capitals()


ENGLISH_LANGUAGE_MODEL = LanguageModelCorpus(
    description=("IAM-OnDB's 9,112 training transcriptions (`../shared/data/real/handwriting/train`) and Debian's "
                 f"English fortunes ({FORTUNE_LINE_WORDS} words a line, one in "
                 f"{CAPITALISED_FORTUNE_LINES_EVERY} again in capitals)"),
    texts=handwriting_training_transcriptions_and_fortunes,
)
"""The handwriting reader's n-gram, with the library's search settings (chosen on IAM-OnDB's development lines)."""
PRINT_LANGUAGE_MODEL = LanguageModelCorpus(
    description=(f"Debian's English fortunes (one line in {CAPITALISED_FORTUNE_LINES_EVERY} again in capitals), "
                 f"its German ones spelled as 19th-century print ({FORTUNE_LINE_WORDS} words a line) and "
                 f"{RECEIPT_LINES:,} receipt-like lines drawn by textrec (totals, taxes, items, numbers, addresses)"),
    texts=english_and_historic_german_fortunes_and_receipts,
    # Chosen with the fifth crnn-lines on the development receipts, historic print and scene words against best path
    # (6.04%, 6.55%, 19.66% CER, receipts and scene case-insensitive): 0.3 and 0.5 read them at 5.46%, 3.78%, 17.68%
    # (0.2 and 0.5: 5.24%, 4.08%, 17.80%; 0.4 and 1.5: 6.17%, 3.53%, 17.91%); 5 beams read as 10 do, twice as fast.
    num_beams=5,
    language_model_weight=0.3,
    length_bonus=0.5,
    # The engine ends its broken Fraktur lines in the double hyphen as `—`, as the OCR-D line ground truth writes it:
    # left unscored there by the n-gram, the development historic print read 2.89% -> 2.65% (37 of its 285 lines end
    # in one; receipts and scene words alike, forms +0.004 points).
    line_break_marks=("—",),
)
"""The print reader's n-gram: no real text (the handwriting transcriptions would bind it to their terms)."""


@dataclass(frozen=True)
class Release:
    """One released checkpoint.

    Args:
        name: its short name (`textrec-recognize --model NAME`).
        architecture: the `--model` it trains.
        train_arguments: `textrec-train` arguments, all but `--output_dir`; with `study`, the study's arguments.
        test_sets: test set name -> dataset (as `--dataset`), each read from its `test` split.
        test_samples: lines of each test set.
        study: the paper study (a module of `scripts/lab/`) that trains it, if not textrec-train.
        study_model: the trained model's folder inside the study's `--output_dir`.
        training_data: the data it learns from (default: textrec-train's `--dataset`).
        guard_cer: the CER under which the installed release must read 20 samples of its first test set
            (`tests/test_releases.py`): far above what it reads, far below what broken weights read.
        guard_samples: where the guard reads its 20 samples instead, a folder of the repository (metadata.jsonl
            layout, written by `scripts/sample_images.py` from the first test set), for a test set made from
            files that a clean clone does not have (MNIST).
        earlier_commands: the commands that trained what `train_arguments` starts from (`--model_name_or_path`),
            in order, for a release trained in stages; the card gives them before its own.
        real_sets: the real development sets (`real_sets.py`, beside the checkout) read when packaging; their
            results lead the card's.
        license: the card's licence; data_terms: the terms of its training data, where they bind the model (a
            model trained on research-use data).
        base_model: the release it was fine-tuned from (its name, as its card states it), for the card's `base_model`.
        datasets: the published datasets it learned from, for the card's `datasets` (default: those of `--dataset`,
            `training_datasets`).
        widget_dataset: textrec's rendered data whose first test image the card's widget shows (default: the first
            test set); never real data.
        widget_title: that image's title in the widget.
        image_processor_settings: values the trained model's image processor is given when it is packaged (chosen on
            validation data after training, as a decoding is).
        language_model: the texts of the character n-gram the model reads with, attached when it is packaged (CTC
            models); None for none.
    """

    name: str
    architecture: str
    train_arguments: tuple[str, ...]
    test_sets: dict[str, str]
    test_samples: int = 200
    study: str | None = None
    study_model: str = ""
    training_data: str = ""
    guard_cer: float = 0.05
    guard_samples: str | None = None
    earlier_commands: tuple[str, ...] = ()
    real_sets: tuple[str, ...] = ()
    license: str = "apache-2.0"
    data_terms: str = ""
    base_model: str | None = None
    datasets: tuple[str, ...] | None = None
    widget_dataset: str = ""
    widget_title: str = "A printed line, rendered by textrec"
    image_processor_settings: dict = field(default_factory=dict)
    language_model: LanguageModelCorpus | None = None

    def packaging_steps(self) -> list[str]:
        """What packaging (`package_release`) does to the trained model beyond storing it, as a comment line of the
        card's training command (none where it does nothing more)."""
        steps = [f"the image processor given {name}={value!r} (chosen on development data)"
                 for name, value in self.image_processor_settings.items()]
        if self.language_model:
            steps.append("the character n-gram counted and attached (attach_language_model)")
        return [f"# then, packaging (python scripts/lab/release.py): {'; '.join(steps)}"] if steps else []

    def training_command(self, run_dir: str) -> str:
        if self.study:
            return shlex.join(["python", f"scripts/lab/{self.study}.py", *self.train_arguments,
                               f"--output_dir={run_dir}"])
        return shlex.join(["textrec-train", *self.train_arguments, f"--output_dir={run_dir}"])

    def model_dir(self, run_dir: str) -> str:
        """Where the trained model is in the training output folder `run_dir`."""
        return str(Path(run_dir) / self.study_model) if self.study else run_dir

    def data_description(self) -> str:
        description = self.training_data or self.dataset_argument()
        if self.language_model:
            description += (f"; it reads with a character {LANGUAGE_MODEL_ORDER}-gram counted from "
                            f"{self.language_model.description} (prefix beam search, "
                            "`textrec.processing.language_model`)")
        return description

    def dataset_argument(self) -> str:
        """Its `textrec-train --dataset` value (empty for a study, which names its data otherwise)."""
        return next((a.split("=", 1)[1] for a in self.train_arguments if a.startswith("--dataset=")), "")

    def card_metadata_arguments(self) -> dict:
        """What its card's metadata says of its origin: `base_model`, `datasets`, `languages`, `widget_title`."""
        return dict(
            base_model=self.base_model,
            datasets=list(self.datasets if self.datasets is not None else training_datasets(self.dataset_argument())),
            languages=training_languages(self.dataset_argument()),
            widget_title=self.widget_title,
        )


LINE_TEST_SETS = {
    "print": f"synthetic-lines:{HELD_OUT_LINES}",
    "handwriting-style": f"synthetic-lines-handwriting:{HELD_OUT_LINES}",
}

def line_release_arguments(architecture: str, max_train_minutes: int) -> tuple[str, ...]:
    """The `textrec-train` arguments of a line release: the `fast` preset on 120,000 print and handwriting-style
    lines of up to 80 characters, AdamW at 7e-4 with 300 warm-up steps and linear decay over 4,500 steps of
    64 lines (fewer where 64 padded lines would exceed 600,000 pixels), evaluated every 500 steps on 200 clean
    lines with greedy decoding (the paper decoding of resnet-transformer, beam 4, would triple that time)."""
    return (
        f"--model={architecture}",
        "--preset=fast",
        "--dataset=synthetic-lines:font_style=mixed,max_chars=80",
        "--max_train_samples=120000",
        "--eval_dataset=synthetic-lines:font_style=mixed,min_chars=15,max_chars=80,augment=false",
        "--max_eval_samples=200",
        "--max_target_length=96",
        "--max_image_width=1024",
        "--learning_rate=7e-4",
        "--warmup_steps=300",
        "--max_steps=4500",
        "--per_device_train_batch_size=64",
        "--batch_max_area=600000",
        "--eval_steps=500",
        "--generation_num_beams=1",
        "--save_steps=250",
        "--logging_steps=50",
        f"--max_train_minutes={max_train_minutes}",
    )


LINE_READING = {"max_width": 4096}
"""The line releases read a line up to 4,096 pixels wide at their height unsqueezed (trained with `--max_image_width` of
1,024 or 1,536: squeezed into 1,024, a line 2.7 times as long read as junk, `Ward I rem ASUM` for `word1 lorem ipsum`;
unsqueezed, each of the five read it right; of the real development lines only 6 of the forms' are wider than 1,024)."""
PRINT_AND_SCENE_SETS = ("receipts", "historic-print", "scene", "forms")
HANDWRITING_SETS = ("iam-ondb", "washington")
"""The real sets of `real_sets.py` a release is measured on (by name)."""

ENGINE_DATA = "synthetic-lines:font_style=print,max_chars=80,look=captured,num_proc=2"
"""The data engine as the line releases learn from it."""
ENGINE_IMAGE_HEIGHT = 32
"""The height the line releases learn and read at."""


def engine_stage_settings(image_height: int = ENGINE_IMAGE_HEIGHT) -> tuple[str, ...]:
    """The data engine stage's settings but its `--dataset`; at an `image_height` other than `ENGINE_IMAGE_HEIGHT` the
    widest line and a batch's padded area grow with the height, so that a batch holds the lines it holds at that one."""
    scale = image_height / ENGINE_IMAGE_HEIGHT
    return (
        "--max_train_samples=50000",
        "--eval_dataset=synthetic-lines:font_style=print,max_chars=80,look=captured",
        "--max_eval_samples=300",
        "--max_target_length=96",
        f"--max_image_width={round(1024 * scale)}",
        "--per_device_train_batch_size=64",
        f"--batch_max_area={round(600_000 * scale**2)}",
        "--eval_steps=500",
        "--save_steps=250",
        "--logging_steps=50",
    )


ENGINE_STAGE_SETTINGS = engine_stage_settings()
"""The data engine stage's settings but its `--dataset`: for a stage that learns from the engine mixed with more."""
ENGINE_STAGE_ARGUMENTS = (f"--dataset={ENGINE_DATA}", *ENGINE_STAGE_SETTINGS)
"""The data engine stage of a line release: print lines as scanners and cameras capture them."""


CRNN_LINES_ENGINE_COMMANDS = (
    shlex.join(["textrec-train", *line_release_arguments("crnn", max_train_minutes=110),
                "--output_dir=runs/crnn-lines-synthetic"]),
    shlex.join(["textrec-train", "--model=crnn", "--model_name_or_path=runs/crnn-lines-synthetic",
                *ENGINE_STAGE_ARGUMENTS, "--learning_rate=3e-4", "--warmup_steps=200", "--max_steps=6000",
                "--output_dir=runs/crnn-captured"]) + "   # stopped at step 2,750",
    shlex.join(["textrec-train", "--model=crnn", "--model_name_or_path=runs/crnn-captured/checkpoint-2750",
                *ENGINE_STAGE_ARGUMENTS, "--learning_rate=1.8e-4", "--warmup_steps=0", "--max_steps=3250", "--seed=1",
                "--output_dir=runs/crnn-lines-engine"]) + "   # released as crnn-lines on 2026-11-25",
)
"""The commands that trained `crnn-lines` as released on 2026-11-25 (textrec commit 1f13c77): clean renderings,
then the data engine in two invocations."""


HANDWRITING_DATA = f"{ENGINE_DATA} + captured:../shared/data/real/handwriting:copies=4,num_proc=2"
"""The handwriting release's mixture: the data engine's print beside IAM-OnDB's training lines, 4 captured copies each."""
CRNN_HANDWRITING_FIRST_COMMAND = shlex.join([
    "textrec-train", "--model=crnn", "--model_name_or_path=runs/crnn-lines-engine", f"--dataset={HANDWRITING_DATA}",
    *ENGINE_STAGE_SETTINGS,
    "--learning_rate=3e-4", "--warmup_steps=200", "--max_steps=3500", "--seed=42",
    "--output_dir=runs/crnn-handwriting"]) + "   # released as crnn-handwriting (textrec commit 81ab912)"
"""The first `crnn-handwriting`, which the second goes on training."""
CRNN_HANDWRITING_SECOND_COMMAND = shlex.join([
    "textrec-train", "--model=crnn", "--model_name_or_path=crnn-handwriting", f"--dataset={HANDWRITING_DATA}",
    *ENGINE_STAGE_SETTINGS,
    "--learning_rate=2e-4", "--warmup_steps=100", "--max_steps=3000", "--max_train_minutes=95", "--seed=42",
    "--data_seed=46", "--output_dir=runs/crnn-handwriting"]) + "   # released as crnn-handwriting (textrec commit 2461354)"
"""The second `crnn-handwriting` (3,000 steps from the first's fp16 weights), which the third goes on training."""
CRNN_HANDWRITING_THIRD_COMMAND = shlex.join([
    "textrec-train", "--model=crnn", "--model_name_or_path=crnn-handwriting", f"--dataset={HANDWRITING_DATA}",
    *ENGINE_STAGE_SETTINGS,
    "--learning_rate=1.5e-4", "--warmup_steps=100", "--max_steps=2700", "--max_train_minutes=85", "--seed=42",
    "--data_seed=47", "--output_dir=runs/crnn-handwriting"]) + "   # released as crnn-handwriting (textrec commit d4a307e)"
"""The third `crnn-handwriting` (2,700 steps from the second's fp16 weights), which the fourth goes on training."""
CRNN_HANDWRITING_FOURTH_COMMAND = shlex.join([
    "textrec-train", "--model=crnn", "--model_name_or_path=crnn-handwriting", f"--dataset={HANDWRITING_DATA}",
    *ENGINE_STAGE_SETTINGS,
    "--learning_rate=1.5e-4", "--warmup_steps=100", "--max_steps=2700", "--max_train_minutes=85", "--seed=42",
    "--data_seed=48", "--output_dir=runs/crnn-handwriting"]) + "   # released as crnn-handwriting (textrec commit 3e91875)"
"""The fourth `crnn-handwriting` (2,700 steps from the third's fp16 weights), which the fifth goes on training
with its slant corrected."""


def deslanted_handwriting_stage_arguments(data_seed: int, max_train_minutes: int, small_letters_share: float = 0.0,
                                         image_height: int = ENGINE_IMAGE_HEIGHT, max_steps: int = 2200) -> tuple[str, ...]:
    """The `textrec-train` arguments of a `crnn-handwriting` stage that reads with its slant corrected (the fifth release
    on): `max_steps` from the release before it on new draws (`data_seed`) of the handwriting mixture, `small_letters_share`
    of its captured copies in smaller letters; at another `image_height`, the model goes on learning and reading at it."""
    dataset = HANDWRITING_DATA + (f",small_letters_share={small_letters_share}" if small_letters_share else "")
    return ("--model=crnn", "--model_name_or_path=crnn-handwriting", "--deslant=true", f"--dataset={dataset}",
            *engine_stage_settings(image_height), "--learning_rate=1.5e-4", "--warmup_steps=100", f"--max_steps={max_steps}",
            f"--max_train_minutes={max_train_minutes}", "--seed=42", f"--data_seed={data_seed}",
            *([f"--image_height={image_height}"] if image_height != ENGINE_IMAGE_HEIGHT else []))


CRNN_HANDWRITING_FIFTH_COMMAND = shlex.join([
    "textrec-train", *deslanted_handwriting_stage_arguments(data_seed=49, max_train_minutes=75),
    "--output_dir=runs/crnn-handwriting"]) + "   # released as crnn-handwriting (textrec commit ec75578)"
"""The fifth `crnn-handwriting` (2,200 steps from the fourth's fp16 weights, every line's slant corrected), which the
sixth goes on training with half of its handwriting copies in smaller letters."""
CRNN_HANDWRITING_SIXTH_COMMAND = shlex.join([
    "textrec-train", *deslanted_handwriting_stage_arguments(data_seed=50, max_train_minutes=100, small_letters_share=0.5),
    "--output_dir=runs/crnn-handwriting"]) + (
    "   # stopped by its time limit at step 709 in a first run (--max_train_minutes=52), resumed to step 2,200; "
    "released as crnn-handwriting (textrec commit 6764983)")
"""The sixth `crnn-handwriting` (2,200 steps from the fifth's fp16 weights, half of the captured copies in smaller
letters), which the seventh goes on training with seven tenths of them so."""
CRNN_HANDWRITING_SEVENTH_COMMAND = shlex.join([
    "textrec-train", *deslanted_handwriting_stage_arguments(data_seed=51, max_train_minutes=110, small_letters_share=0.7),
    "--output_dir=runs/crnn-handwriting"]) + "   # released as crnn-handwriting (textrec commit 6c4e7d7)"
"""The seventh `crnn-handwriting` (2,200 steps from the sixth's fp16 weights, seven tenths of the captured copies in
smaller letters), which the ninth goes on training at 48 pixels high (the eighth stage, at 32 pixels, was not released)."""
# Run from a copy of the seventh release whose configuration and processor were set to 48 pixels by hand, which
# `--image_height=48` does (textrec-train, 2026-11-29).
CRNN_HANDWRITING_NINTH_COMMAND = shlex.join([
    "textrec-train", *deslanted_handwriting_stage_arguments(data_seed=52, max_train_minutes=110, small_letters_share=0.85,
                                                            image_height=48, max_steps=1100),
    "--output_dir=runs/crnn-handwriting"]) + "   # released as crnn-handwriting (textrec commit 2f340ea)"
"""The ninth `crnn-handwriting` (1,100 steps from the seventh's fp16 weights at 48 pixels high, 0.85 of the captured
copies in smaller letters), which the release goes on training on new draws of the same mixture."""


CRNN_LINES_FRAKTUR_COMMAND = shlex.join([
    "textrec-train", "--model=crnn", "--model_name_or_path=runs/crnn-lines-engine", f"--dataset={ENGINE_DATA},fraktur_share=0.15",
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1.5e-4",
    "--warmup_steps=100", "--max_steps=2000", "--seed=43", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-25 (commit d937f42)"
"""The command of the second `crnn-lines` (Fraktur), which the third starts from (`--model_name_or_path=crnn-lines`
named it when the third was trained, textrec commit e9985c0)."""


CRNN_LINES_GERMAN_ARGUMENTS = (
    "--model=crnn",
    "--model_name_or_path=crnn-lines",
    f"--charset={DEFAULT_CHARSET + GERMAN_PRINT_CHARACTERS}",
)
"""What the German and the ligature stages of `crnn-lines` share: each starts from the release before it, with German
print's characters in the vocabulary."""
CRNN_LINES_GERMAN_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_GERMAN_ARGUMENTS, f"--dataset={ENGINE_DATA},fraktur_share=0.25,german_share=0.3",
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1.5e-4",
    "--warmup_steps=100", "--max_steps=1600", "--seed=44", "--output_dir=runs/crnn-lines"]) + (
    "   # released as crnn-lines on 2026-11-25 (commit 13a75ef)")
"""The command of the third `crnn-lines` (German print), which the fourth starts from."""
CRNN_LINES_LIGATURES_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_GERMAN_ARGUMENTS, f"--dataset={ENGINE_DATA},fraktur_share=0.3,german_share=0.3",
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1e-4", "--warmup_steps=100", "--max_steps=2200", "--max_train_minutes=55",
    "--seed=45", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-25 (commit e5de423)"
"""The command of the fourth `crnn-lines` (ch, ck and tz drawn joined), which the fifth starts from."""
CRNN_LINES_FRAKTUR_FACES_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_GERMAN_ARGUMENTS, f"--dataset={ENGINE_DATA},fraktur_share=0.3,german_share=0.3",
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1e-4", "--warmup_steps=100", "--max_steps=2200", "--max_train_minutes=60",
    "--seed=46", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-25 (commit ab872cb)"
"""The command of the fifth `crnn-lines` (Fraktur from eight faces), which the sixth starts from."""
CRNN_LINES_LONG_S_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_GERMAN_ARGUMENTS, f"--dataset={ENGINE_DATA},fraktur_share=0.3,german_share=0.3",
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1e-4", "--warmup_steps=100", "--max_steps=2200", "--max_train_minutes=60",
    "--seed=47", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-27 (commit 18ab8e5)"
"""The command of the sixth `crnn-lines` (a long s in two faces, line-end breaks), which the seventh starts from."""
CRNN_LINES_DOUBLE_HYPHEN_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_GERMAN_ARGUMENTS, f"--dataset={ENGINE_DATA},fraktur_share=0.3,german_share=0.3",
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1e-4", "--warmup_steps=100", "--max_steps=2200", "--max_train_minutes=75",
    "--seed=48", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-27 (commit ba07016)"
"""The command of the seventh `crnn-lines` (the double hyphen drawn with two strokes, Fraktur's I/J as J), which the
eighth starts from."""
CRNN_LINES_SMALL_CAPS_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_GERMAN_ARGUMENTS,
    f"--dataset={ENGINE_DATA},fraktur_share=0.3,german_share=0.3,small_caps_share=0.1", *ENGINE_STAGE_SETTINGS,
    "--learning_rate=1e-4", "--warmup_steps=100", "--max_steps=2200", "--max_train_minutes=60", "--seed=50",
    "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-28 (commit 4ebc368)"
"""The command of the eighth `crnn-lines` (a tenth of the modern lines in small capitals), which the ninth starts
from."""
CRNN_LINES_BOOK_MARK_ARGUMENTS = (
    "--model=crnn",
    "--model_name_or_path=crnn-lines",
    f"--charset={DEFAULT_CHARSET + GERMAN_PRINT_CHARACTERS + BOOK_MARK_CHARACTERS}",
)
"""What the stages of `crnn-lines` since the ninth share: each starts from the release before it, with a book page's
marks in its vocabulary."""
CRNN_LINES_BOOK_MARKS_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_BOOK_MARK_ARGUMENTS,
    f"--dataset={ENGINE_DATA},fraktur_share=0.3,german_share=0.3,small_caps_share=0.1,book_marks_share=0.15",
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1e-4", "--warmup_steps=100", "--max_steps=2200", "--max_train_minutes=60",
    "--seed=51", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-28 (commit 6500143)"
"""The command of the ninth `crnn-lines` (a book page's marks), which the tenth starts from."""
CRNN_LINES_LOOSE_CROPS_DATASET = (
    f"--dataset={ENGINE_DATA},fraktur_share=0.3,german_share=0.3,small_caps_share=0.1,book_marks_share=0.15,"
    "page_number_spaces=7,loose_crop_share=0.3")
"""The data of the tenth and eleventh `crnn-lines`: page numbers' dashes spaced, loose crops."""
CRNN_LINES_LOOSE_CROPS_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_BOOK_MARK_ARGUMENTS, CRNN_LINES_LOOSE_CROPS_DATASET,
    *ENGINE_STAGE_SETTINGS, "--learning_rate=1e-4", "--warmup_steps=100", "--max_steps=2200", "--max_train_minutes=55",
    "--seed=52", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-28 (commit 1d817ef)"
"""The command of the tenth `crnn-lines` (page numbers' dashes spaced, loose crops; stopped by --max_train_minutes at
step 1,467, a quarter of the way down its schedule), which the eleventh anneals."""
CRNN_LINES_ANNEALED_COMMAND = shlex.join([
    "textrec-train", *CRNN_LINES_BOOK_MARK_ARGUMENTS, CRNN_LINES_LOOSE_CROPS_DATASET,
    *ENGINE_STAGE_SETTINGS, "--learning_rate=5e-5", "--warmup_steps=50", "--max_steps=1300", "--max_train_minutes=55",
    "--seed=53", "--output_dir=runs/crnn-lines"]) + "   # released as crnn-lines on 2026-11-29 (commit 5db6ac7)"
"""The command of the eleventh `crnn-lines` (the tenth's recipe, its learning rate annealed to zero), which the
fourteenth starts from (the twelfth and thirteenth were measured and not released: scripts/lab/reports/real_images.md)."""


SELF_ATTENTION_LINES_SYNTHETIC_COMMAND = shlex.join([
    "textrec-train", *line_release_arguments("self-attention", max_train_minutes=85),
    "--output_dir=runs/self-attention-lines"]) + "   # released as self-attention-lines (textrec commit 9d6d6bd)"
"""The command of the first `self-attention-lines` (clean renderings only), which the data engine stage goes on from."""
RESNET_TRANSFORMER_LINES_SYNTHETIC_COMMAND = shlex.join([
    "textrec-train", *line_release_arguments("resnet-transformer", max_train_minutes=110),
    "--output_dir=runs/resnet-transformer-lines"]) + "   # released as resnet-transformer-lines (textrec commit 6f5d45a)"
"""The command of the first `resnet-transformer-lines` (clean renderings only)."""
TROCR_LINES_SYNTHETIC_COMMAND = shlex.join([
    "textrec-train", *line_release_arguments("trocr", max_train_minutes=110),
    "--output_dir=runs/trocr-lines"]) + "   # released as trocr-lines (textrec commit 24d1e3e)"
"""The command of the first `trocr-lines` (clean renderings only)."""


def engine_stage_arguments(architecture: str, release_name: str) -> tuple[str, ...]:
    """The data engine stage of an attention line release, from its first release's fp16 weights: the first
    `crnn-lines` engine stage's data (`--seed=1`) and schedule, 3,000 steps."""
    return (f"--model={architecture}", f"--model_name_or_path={release_name}", *ENGINE_STAGE_ARGUMENTS,
            "--generation_num_beams=1", "--learning_rate=3e-4", "--warmup_steps=200", "--max_steps=3000",
            "--max_train_minutes=60", "--seed=1")


ENGINE_STAGE_TRAINING_DATA = (
    "170,000 lines: 120,000 clean print and handwriting-style renderings, then 50,000 lines of the data engine "
    "(`synthetic-lines:font_style=print,max_chars=80,look=captured`: about 800 print fonts, scanner and camera effects, "
    "scene backgrounds, tight and loose crops); no real image")


RELEASES = {
    release.name: release
    for release in (
        # The model the main job fine-tunes: trained on clean print and handwriting-style renderings, then (2026-11-28)
        # on the data engine's scans and photos, from the first release's fp16 weights.
        Release(
            name="self-attention-lines",
            architecture="self-attention",
            earlier_commands=(SELF_ATTENTION_LINES_SYNTHETIC_COMMAND,),
            train_arguments=engine_stage_arguments("self-attention", "self-attention-lines"),
            test_sets=LINE_TEST_SETS,
            training_data=ENGINE_STAGE_TRAINING_DATA,
            real_sets=PRINT_AND_SCENE_SETS,
            image_processor_settings=LINE_READING,
        ),
        # Trained as self-attention-lines is: clean renderings, then (2026-11-28) one data engine stage.
        Release(
            name="resnet-transformer-lines",
            architecture="resnet-transformer",
            earlier_commands=(RESNET_TRANSFORMER_LINES_SYNTHETIC_COMMAND,),
            train_arguments=engine_stage_arguments("resnet-transformer", "resnet-transformer-lines"),
            test_sets=LINE_TEST_SETS,
            training_data=ENGINE_STAGE_TRAINING_DATA,
            real_sets=PRINT_AND_SCENE_SETS,
            image_processor_settings=LINE_READING,
        ),
        # The general print reader: the CRNN peer, trained identically to the attention models on clean renderings,
        # then on the data engine's scans and photos (in two invocations; the second goes on from the first's
        # step 2,750 with a fresh optimizer and new lines, its learning rate where the first's schedule was; released
        # on 2026-11-25), then on new engine lines of which 15% are Fraktur (from that release's fp16 weights;
        # released on 2026-11-25 too), then with German print's characters added to its vocabulary (the rows of its
        # old characters kept) on new engine lines of which 30% are German, a quarter of all in Fraktur with the
        # long s (from the second release's fp16 weights, as `crnn-lines` then named them; released on 2026-11-25),
        # then on new engine lines of which 30% are in Fraktur with ch, ck and tz drawn joined (from the third
        # release's fp16 weights; released on 2026-11-25), then on new engine lines drawn in Fraktur from eight faces,
        # four of them 19th-century Fraktur faces from npm (`scripts/setup.sh --release_fonts`; from the fourth
        # release's fp16 weights; released on 2026-11-25), then on new engine lines in which two of those faces have a
        # long s and German Fraktur lines may end in a broken word (from the fifth release's fp16 weights; released on
        # 2026-11-27), then on new engine lines whose breaks are drawn with two strokes in half of them and whose German
        # Fraktur sets Fraktur's one capital I/J as J (from the sixth release's fp16 weights; released on 2026-11-27),
        # then on new engine lines of which a tenth of the modern ones are set in small capitals (from the seventh
        # release's fp16 weights; released on 2026-11-28), then (2026-11-28) with the dagger, double dagger and en
        # dash added to its vocabulary on new engine lines of which 15% carry a book page's marks (footnote marks and
        # footnotes, page numbers, en dashes, opening quotes; from the eighth release's fp16 weights; released on
        # 2026-11-28), then (2026-11-28) on new engine lines whose page numbers set their dashes up to seven spaces
        # from the number and of which 30% of those made to look scanned are cropped with one to two font sizes of
        # blank above and below (from the ninth release's fp16 weights; stopped by --max_train_minutes at step 1,467;
        # released on 2026-11-28), then (2026-11-29) on 50,000 new lines of the same recipe with the learning rate
        # annealed from 5e-5 to zero over 1,300 steps, where the tenth had stopped at a quarter of its peak rate (from
        # the tenth release's fp16 weights; released on 2026-11-29), then (2026-11-30) on 50,000 new lines of which 30%
        # of the modern scanned ones are printed in dots as dot-matrix and thermal receipt printers print (the data
        # engine at textrec commit 4ca17a6; from the eleventh release's fp16 weights, annealed from 5e-5 to zero over
        # 1,200 steps, stopped by --max_train_minutes at step 1,151).
        Release(
            name="crnn-lines",
            architecture="crnn",
            train_arguments=(
                *CRNN_LINES_BOOK_MARK_ARGUMENTS,
                CRNN_LINES_LOOSE_CROPS_DATASET + ",dot_matrix_share=0.3",
                *ENGINE_STAGE_SETTINGS,
                "--learning_rate=5e-5",
                "--warmup_steps=50",
                "--max_steps=1200",
                "--max_train_minutes=55",
                "--seed=56",
            ),
            earlier_commands=(*CRNN_LINES_ENGINE_COMMANDS, CRNN_LINES_FRAKTUR_COMMAND, CRNN_LINES_GERMAN_COMMAND,
                              CRNN_LINES_LIGATURES_COMMAND, CRNN_LINES_FRAKTUR_FACES_COMMAND, CRNN_LINES_LONG_S_COMMAND,
                              CRNN_LINES_DOUBLE_HYPHEN_COMMAND, CRNN_LINES_SMALL_CAPS_COMMAND,
                              CRNN_LINES_BOOK_MARKS_COMMAND, CRNN_LINES_LOOSE_CROPS_COMMAND,
                              CRNN_LINES_ANNEALED_COMMAND),
            test_sets=LINE_TEST_SETS,
            language_model=PRINT_LANGUAGE_MODEL,
            training_data=("650,000 lines of the data engine (`synthetic-lines:font_style=print,max_chars=80,"
                           "look=captured`: about 800 print fonts, scanner and camera effects, scene backgrounds, "
                           "tight and loose crops): 100,000 in its first stage, then eleven stages of 50,000 new lines: "
                           "15% in Fraktur; 30% German text from Debian's fortunes-de and 25% in Fraktur, German lines "
                           "in Fraktur spelled with the long s; 30% German and 30% in Fraktur with the ligatures ch, ck "
                           "and tz drawn joined; the same, the Fraktur drawn from eight faces, UnifrakturMaguntia, "
                           "UnifrakturCook and Grenze Gotisch among them; the same, UnifrakturMaguntia and "
                           "UnifrakturCook with a long s made from their f, and 15% of German Fraktur lines ending in a "
                           "word broken with the double hyphen; the same, half of those breaks drawn with two strokes "
                           "and Fraktur's capital I/J labelled J; the same, a tenth of the lines neither German nor in "
                           "Fraktur set in small capitals and labelled in capitals; the same, 15% of all with a book "
                           "page's marks (footnote marks such as *) and the dagger, footnotes, page numbers between "
                           "dashes, en dashes, opening quotes); the same, page numbers' dashes drawn up to seven "
                           "spaces from the number and 30% of the lines made to look scanned cropped with one to two "
                           "font sizes of blank above and below; the same again, the learning rate annealed to "
                           "zero; the same, 30% of the modern lines made to look scanned printed in dots as "
                           "9-pin and thermal receipt printers print (textrec commit 4ca17a6); all after 120,000 "
                           "clean print and handwriting-style renderings; no real image"),
            real_sets=PRINT_AND_SCENE_SETS,
            image_processor_settings=LINE_READING,
        ),
        # The handwriting reader: crnn-lines fine-tuned on real pen strokes (IAM-OnDB's training writers, drawn as
        # scanned) beside the data engine's print, so that print still reads; its last stage (2026-11-27) reads every
        # line with its slant corrected (the image processor's `deslant`), so that a leaning hand reads as an upright one.
        Release(
            name="crnn-handwriting",
            architecture="crnn",
            earlier_commands=(*CRNN_LINES_ENGINE_COMMANDS, CRNN_HANDWRITING_FIRST_COMMAND,
                              CRNN_HANDWRITING_SECOND_COMMAND, CRNN_HANDWRITING_THIRD_COMMAND,
                              CRNN_HANDWRITING_FOURTH_COMMAND, CRNN_HANDWRITING_FIFTH_COMMAND,
                              CRNN_HANDWRITING_SIXTH_COMMAND, CRNN_HANDWRITING_SEVENTH_COMMAND,
                              CRNN_HANDWRITING_NINTH_COMMAND),
            train_arguments=deslanted_handwriting_stage_arguments(data_seed=53, max_train_minutes=100,
                                                                  small_letters_share=0.85, image_height=48,
                                                                  max_steps=1100),
            test_sets=LINE_TEST_SETS,
            training_data=("the 9,112 training lines of IAM-OnDB (real pen strokes of 1,314 forms, rendered to images; "
                           "`../shared/data/real/handwriting/train`), 4 captured copies each (slant, elastic strokes, "
                           "stroke width, blur, paper, scanner effects), mixed with 50,000 lines of the data engine "
                           "(`synthetic-lines:look=captured`): 3,500 steps from `crnn-lines` as released on 2026-11-25 "
                           "(its fp16 weights; textrec commit 1f13c77), then 3,000 more from the first `crnn-handwriting` "
                           "(its fp16 weights; textrec commit 81ab912), 2,700 more from the second (its fp16 weights; textrec commit "
                           "2461354), 2,700 more from the third (its fp16 weights; textrec commit d4a307e), each on "
                           "new draws of the same mixture, then 2,200 more from the fourth (its fp16 weights; textrec "
                           "commit 3e91875) with every line's slant corrected (`--deslant true`, "
                           "`textrec.processing.slant_correction`), in training as in reading, then 2,200 more from "
                           "the fifth (its fp16 weights; textrec commit ec75578) with half of the IAM-OnDB copies "
                           "drawn in smaller letters (the x-height band squeezed to 0.5-0.85 of itself, ascenders "
                           "and descenders stretched: `captured:...:small_letters_share=0.5`), then 2,200 more from "
                           "the sixth (its fp16 weights; textrec commit 6764983) with seven tenths of them so "
                           "(`small_letters_share=0.7`), then 1,100 more from the seventh (its fp16 weights; textrec "
                           "commit 6c4e7d7) reading lines 48 pixels high instead of 32 (`--image_height=48`), with "
                           "0.85 of them so, then 1,100 more from the ninth (its fp16 weights; textrec commit 2f340ea) "
                           "on new draws of the same mixture"),
            real_sets=PRINT_AND_SCENE_SETS + HANDWRITING_SETS,
            # Blank above and below a line cut to 0.15 of its ink height, not the default half: a hand fills the height
            # it is read at as IAM-OnDB's lines taught it to (real development sets, 2026-11-28: Washington 28.06% ->
            # 24.59%, IAM-OnDB 12.39% -> 12.30%, forms 12.47% -> 12.32%; print it reads less well: receipts 6.22% ->
            # 6.73%, scene words 14.52% -> 15.09%; 0.05 read Washington at 23.74% and print far worse: the sweep is in
            # scripts/lab/reports/handwriting.md).
            image_processor_settings={"max_vertical_margin": 0.15, **LINE_READING},
            language_model=ENGLISH_LANGUAGE_MODEL,
            base_model="crnn-lines",
            datasets=("iam-ondb",),
            widget_dataset=LINE_TEST_SETS["handwriting-style"],
            widget_title="A handwriting-style line, rendered by textrec",
            license="other",
            data_terms=("This model learned from IAM-OnDB (M. Liwicki and H. Bunke, \"IAM-OnDB - an On-Line English "
                        "Sentence Database Acquired from Handwritten Text on a Whiteboard\", ICDAR 2005; FKI group, "
                        "University of Bern), which is free for non-commercial research after registration. Use the "
                        "model for research and demonstrations only, and cite that paper. Its print training data "
                        "is rendered by textrec from fonts and carries no such terms."),
        ),
        # TrOCR's decoder over the same encoder, trained identically: the TrOCR peer, and the TrOCR that the
        # TrOCR-CharBERT study starts from.
        Release(
            name="trocr-lines",
            architecture="trocr",
            earlier_commands=(TROCR_LINES_SYNTHETIC_COMMAND,),
            train_arguments=engine_stage_arguments("trocr", "trocr-lines"),
            test_sets=LINE_TEST_SETS,
            training_data=ENGINE_STAGE_TRAINING_DATA,
            real_sets=PRINT_AND_SCENE_SETS,
            image_processor_settings=LINE_READING,
        ),
        # The paper studies' models, trained by the studies to convergence over several sessions (each run
        # carried in the repository between them): the best 13-digit MNIST string reader, and CoMER with fusion
        # coverage on synthetic formulas. Packaged once their study has finished (`--package_only --run_dir`).
        Release(
            name="sharp-attention-digits",
            architecture="sharp-attention",
            study="study_sharp_attention",
            train_arguments=("--mnist_dir=../shared/data/mnist", "--attention", "sharp", "--digits", "normal",
                             f"--carry_dir={STUDY_RUNS_DIR}/sharp-attention"),
            study_model="l13-normal-sharp/length-13",
            test_sets={"13 MNIST test digits": "mnist-digits:length=13,rotated=false,mnist_dir=../shared/data/mnist"},
            test_samples=1000,
            training_data="strings of 5, 9, then 13 MNIST training digits (a length curriculum)",
            datasets=("mnist",),
            widget_dataset="synthetic-digits:length=13",
            widget_title="A string of 13 digits, rendered by textrec",
            # The released sharp run reads these 20 strings at 0.4% CER.
            guard_samples="tests/fixtures/mnist-13-digits",
        ),
        # CoMER as its study trained it, then fine-tuned on formulas of which 40% are typeset at 36-79 dpi (down to
        # 0.45 times the study's smallest), so that a formula typeset at half the size reads too (textrec commit
        # after 6422c03; scripts/lab/reports/real_images.md, formula scale).
        Release(
            name="comer-math",
            architecture="comer",
            train_arguments=(
                "--model=comer",
                "--model_name_or_path=comer-math",
                "--dataset=synthetic-math:max_tokens=48,low_resolution_share=0.4",
                "--max_train_samples=30000",
                "--eval_dataset=synthetic-math:max_tokens=48,low_resolution_share=0.4",
                "--eval_split=validation",
                "--max_eval_samples=200",
                "--max_target_length=49",
                "--learning_rate=0.005",
                '--lr_scheduler_kwargs={"patience": 4}',
                "--metric_for_best_model=cer",
                "--greater_is_better=false",
                "--eval_steps=500",
                "--save_steps=500",
                "--save_total_limit=2",
                "--logging_steps=50",
                "--generation_num_beams=1",
                "--max_steps=20000",
                "--max_train_minutes=105",
                "--seed=45",
                "--data_seed=45",
                "--use_cpu=true",
            ),
            earlier_commands=(shlex.join(["python", "scripts/lab/comer_coverage_study.py", "--coverage", "fusion",
                                          f"--carry_dir={STUDY_RUNS_DIR}/comer", "--output_dir=runs/comer-math"])
                              + "   # released as comer-math (the study's fusion/tokens-48 model)",),
            test_sets={"synthetic formulas": "synthetic-math:max_tokens=48"},
            test_samples=1000,
            training_data=("synthetic-math formulas of up to 12, 24, then 48 tokens (a length curriculum), then 30,000 "
                           "formulas of up to 48 tokens of which 40% typeset at 36-79 dpi instead of 80-140"),
            base_model="comer-math",
            widget_title="A typeset formula, rendered by textrec",
            # Formulas whose glyphs are under 12 px are enlarged to 12, not 10: on 60 validation formulas per scale
            # (seed 123456, not the benchmark's) 47% exact at 0.5x against 45%, and no scale read worse.
            image_processor_settings={"glyph_height_range": [12.0, 14.0]},
            # A formula's LaTeX is harder to read exactly than a printed line: the first release read these 20
            # test formulas at 3.5% CER (the study's `none` arm at 5.7%).
            guard_cer=0.15,
        ),
    )
}


def get_release(name: str) -> Release:
    if name not in RELEASES:
        raise ValueError(f"Unknown release {name!r}; releases: {', '.join(sorted(RELEASES))}.")
    return RELEASES[name]


def train_release(release: Release, run_dir: str) -> None:
    """Trains (or resumes training) the release's model into `run_dir`, as its training command does."""
    if release.study:
        study = importlib.import_module(release.study)
        study.run([*release.train_arguments, f"--output_dir={run_dir}"])
        if not (Path(release.model_dir(run_dir)) / "config.json").is_file():
            raise RuntimeError(f"The study has not finished training {release.name}'s model yet: run the same "
                               f"command again (it resumes): {release.training_command(run_dir)}")
    else:
        train_from_arguments(*parse_arguments([*release.train_arguments, f"--output_dir={run_dir}"]))


def evaluate_release(
    model, processor, release: Release, decoding: str, split: str = "test", batch_size: int = 32,
    num_beams: int | None = None
) -> dict[str, dict[str, float]]:
    """CER, WER, sequence accuracy and lines/s of `model` read with `decoding` on each of the release's test
    sets (their `split`); the search its generation config's (`num_beams`) unless told otherwise."""
    results = {}
    for test_set, dataset_name in release.test_sets.items():
        dataset = load_text_recognition_dataset(dataset_name, split=split, num_samples=release.test_samples)
        recognition = recognize(
            model, processor, list(dataset["image"]), batch_size=batch_size, decoding=decoding, num_beams=num_beams
        )
        results[test_set] = {
            **evaluate_texts(recognition.texts, list(dataset["text"])),
            "lines_per_second": recognition.lines_per_second,
        }
        logger.info("%s, %s decoding, %s %s: %s", release.name, decoding, test_set, split, results[test_set])
    return results


@dataclass
class DecodingChoice:
    """The decoding a release reads with, and what chose it (`choose_decoding`)."""

    decoding: str
    cers: dict[str, float] = field(default_factory=dict)
    """Each decoding's mean CER (empty for a model with one decoding)."""
    chosen_on: str = ""
    real_results: dict[str, dict] = field(default_factory=dict)
    """Each decoding's real-set results (`evaluate_on_real_sets`; empty where none were read)."""
    lines_per_second: dict[str, float] = field(default_factory=dict)
    """Each decoding's lines/s on one thread on the speed set (`SPEED_SET`), where real sets were read."""
    tesseract_lines_per_second: float | None = None
    """Tesseract's lines/s on one thread on the same lines: the slowest a released decoding may read."""

    def describe(self) -> str | None:
        """A sentence for the card: what chose the decoding, with each decoding's numbers."""
        if not self.cers:
            return None
        measured = ", ".join(
            f"{name} {cer:.2%}" + (f" at {self.lines_per_second[name]:.0f} lines/s" if name in self.lines_per_second else "")
            for name, cer in self.cers.items())
        if self.tesseract_lines_per_second is None:
            return f"Its decoding was chosen on the {self.chosen_on}, by the lowest mean CER: {measured}."
        return (f"Its decoding was chosen on the {self.chosen_on}: the lowest mean CER among the decodings that read at "
                f"least as many lines per second on one core as Tesseract ({self.tesseract_lines_per_second:.0f} on "
                f"the receipt lines): {measured}.")


def fastest_enough_best(cers: dict[str, float], lines_per_second: dict[str, float], minimum: float | None) -> str:
    """The decoding with the lowest CER among those reading at least `minimum` lines/s (all of them where `minimum`
    is None or none is that fast: the speed rule cannot be met by the decoding, only by the model)."""
    fast_enough = [decoding for decoding in cers if minimum is None or lines_per_second.get(decoding, 0.0) >= minimum]
    if not fast_enough:
        logger.warning("no decoding reads as fast as Tesseract (%.0f lines/s; %s): choosing on CER alone", minimum,
                       lines_per_second)
    return min(fast_enough or cers, key=cers.get)


def tesseract_lines_per_second(set_name: str, limit: int | None = None) -> float | None:
    """Tesseract's lines/s on one thread on the development part of a real set (its first `limit` images); None
    where Tesseract is not installed."""
    from real_sets import load_real_set
    from textrec.processing.tesseract import check_tesseract, tesseract_recognize

    try:
        check_tesseract()
    except SystemExit:
        logger.warning("Tesseract is not installed: a release's decoding is chosen without its speed rule")
        return None
    paths = load_real_set(set_name, "development")[0][:limit]
    return len(paths) / tesseract_recognize(paths).seconds


def choose_decoding(model, processor, release: Release) -> DecodingChoice:
    """The decoding that reads with the lower mean CER: on the release's real development sets where it has
    `real_sets` (what users' images are like; a joint decoding that reads textrec's renderings better may read real
    lines worse, and slower), among the decodings reading at least as many lines per second on one core as
    Tesseract (the line models' speed rule), else on its `validation` lines (never its test lines); the only one,
    unmeasured, for a model that has one."""
    from benchmark_real_data import SPEED_SET  # here, not at the top: that benchmark imports this module

    decodings = available_decodings(model)
    if len(decodings) == 1:
        return DecodingChoice(decodings[0])
    if not release.real_sets:
        cers = {}
        for decoding in decodings:
            results = evaluate_release(model, processor, release, decoding, split="validation")
            cers[decoding] = sum(scores["cer"] for scores in results.values()) / len(results)
        return DecodingChoice(min(cers, key=cers.get), cers, "validation lines")
    choice = DecodingChoice("", chosen_on="real development sets")
    speed_set_scores = None
    for decoding in decodings:
        model.generation_config.decoding = decoding
        results = choice.real_results[decoding] = evaluate_on_real_sets(model, processor, names=release.real_sets)
        choice.cers[decoding] = sum(scores["cer"] for scores in results.values()) / len(results)
        speed_set_scores = next((scores for label, scores in results.items()
                                 if real_set_of(label) is ALL_SETS[SPEED_SET]), None)
        if speed_set_scores is not None:
            choice.lines_per_second[decoding] = speed_set_scores["lines_per_second"]
    if speed_set_scores is not None:
        choice.tesseract_lines_per_second = tesseract_lines_per_second(SPEED_SET, limit=len(speed_set_scores["predictions"]))
    choice.decoding = fastest_enough_best(choice.cers, choice.lines_per_second, choice.tesseract_lines_per_second)
    return choice


def package_release(release: Release, run_dir: str, destination: Path = RELEASED_MODELS_DIR) -> Path:
    """Evaluates the model trained in `run_dir` and writes the release folder `destination / release.name`:
    fp16 weights (read in fp32), processor, generation settings and a model card with the results and the training
    command."""
    model_dir = release.model_dir(run_dir)
    model, processor = load_recognizer(model_dir)
    for name, value in release.image_processor_settings.items():
        setattr(processor.image_processor, name, value)
    if release.language_model:
        corpus = release.language_model
        attach_language_model(model, processor.tokenizer, corpus.texts(), num_beams=corpus.num_beams,
                              language_model_weight=corpus.language_model_weight, length_bonus=corpus.length_bonus,
                              line_break_marks=corpus.line_break_marks)
    choice = choose_decoding(model, processor, release)
    decoding = choice.decoding
    model.generation_config.decoding = decoding
    # No longer a copy of the model config: saved as such, it would be rebuilt from it on loading, without `decoding`.
    model.generation_config._from_model_config = False
    results = {name: evaluate_release(model, processor, release, name) for name in choice.cers or [decoding]}
    (Path(model_dir) / "release_results.json").write_text(json.dumps(
        {"decoding": decoding, "decoding_cer": choice.cers, "decoding_chosen_on": choice.chosen_on,
         "decoding_lines_per_second": choice.lines_per_second,
         "tesseract_lines_per_second": choice.tesseract_lines_per_second, "test": results},
        indent=2))
    folder = destination / release.name
    folder.mkdir(parents=True, exist_ok=True)
    # fp16 files, fp32 in config.json: the folder loads in fp32 with no argument.
    model.save_pretrained(folder, state_dict=stored_state_dict(model, torch.float16))
    processor.save_pretrained(folder)
    spec = get_spec(release.architecture)
    evaluations = {release.test_sets[name]: scores for name, scores in results[decoding].items()}
    evaluation_note, dataset_splits, dataset_types = None, {}, {}
    if release.real_sets:
        synthetic = {f"{describe_dataset(dataset)[0]} (test, {release.test_samples} images)": scores
                     for dataset, scores in evaluations.items()}
        real = choice.real_results.get(decoding) or evaluate_on_real_sets(model, processor, names=release.real_sets)
        dataset_splits = dict.fromkeys(real, "development")
        dataset_types = {**{label: real_set_of(label).dataset_type for label in real},
                         **dict.fromkeys(synthetic, SYNTHETIC_DATASET_TYPE)}
        evaluations = {**real, **synthetic}
        evaluation_note = ("Real images first (never trained on; the development part of each set, scored under its "
                           "protocol), then textrec's own renderings")
    write_widget_image(release, folder)
    first_dataset = next(iter(evaluations))
    card = render_model_card(
        model=model,
        architecture=spec.name,
        architecture_description=spec.description,
        reads=spec.reads,
        tokens=spec.tokens,
        repo_id=release.name,
        dataset_name=first_dataset,
        dataset_split="test",
        eval_results=evaluations[first_dataset],
        eval_samples=release.test_samples,
        training_summary=("The study's last stage: " if release.study else "") + training_summary(model_dir),
        more_evaluations={dataset: scores for dataset, scores in evaluations.items() if dataset != first_dataset},
        decoding=decoding,
        decoding_choice=choice.describe(),
        training_data=release.data_description(),
        training_command="\n  ".join([*release.earlier_commands, release.training_command(f"runs/{release.name}"),
                                      *release.packaging_steps()]),
        evaluation_note=evaluation_note,
        dataset_splits=dataset_splits,
        dataset_types=dataset_types,
        license=release.license,
        data_terms=release.data_terms,
        **release.card_metadata_arguments(),
    )
    card.save(folder / "README.md")
    for path in folder.iterdir():
        if path.name not in CARD_FILES:
            path.unlink()
    return folder


def evaluate_on_real_sets(
    model, processor, split: str = "development", limit: int | None = None, names: tuple[str, ...] | None = None
) -> dict[str, dict[str, float]]:
    """CER, WER, sequence accuracy and lines/s on one thread of `model` on real sets of `real_sets.py` (`names`, by
    default the print and scene sets; their `split`; their first `limit` images), under each set's protocol, named
    for a card:
    "<description> (<split>, <n> images)" (`real_set_of` finds the set again)."""
    from benchmark_real_data import score_system  # here, not at the top: that benchmark imports this module
    from real_sets import REAL_DATA_DIR, load_real_set

    if not REAL_DATA_DIR.is_dir():
        raise SystemExit(f"this release is measured on the real sets, which are not at {REAL_DATA_DIR} "
                         "(set TEXTREC_REAL_DATA to their folder)")
    sets = {name: tuple(part[:limit] for part in load_real_set(name, split)) for name in names or PRINT_AND_SCENE_SETS}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # lines/s per core, as the benchmark and Tesseract read
    try:
        scores = score_system(lambda paths, _: recognize(model, processor, [str(path) for path in paths], batch_size=32).texts, sets)
    finally:
        torch.set_num_threads(threads)
    logger.info("%s on the real sets (%s), CER: %s", type(model).__name__, split, {name: scores[name]["cer"] for name in sets})
    return {f"{ALL_SETS[name].description} ({split}, {len(sets[name][0]):,} images)": scores[name] for name in sets}


def real_set_of(label: str) -> RealSet:
    """The real set a card's results label names (`evaluate_on_real_sets`; cards packaged before 2026-12 prefix the
    label with "real: ")."""
    description = label.removeprefix("real: ").rsplit(" (", 1)[0]
    return next(real_set for real_set in ALL_SETS.values() if real_set.description == description)


def write_widget_image(release: Release, folder: Path) -> None:
    """Writes the card's example image (`WIDGET_IMAGE`) into the release folder: the first test image of the
    release's `widget_dataset` (default its first test set), which textrec renders."""
    dataset_name = release.widget_dataset or next(iter(release.test_sets.values()))
    if describe_dataset(dataset_name)[1] != SYNTHETIC_DATASET_TYPE:
        raise ValueError(f"{release.name}: the widget's image must be rendered by textrec, not {dataset_name!r}")
    load_text_recognition_dataset(dataset_name, split="test", num_samples=1)[0]["image"].save(folder / WIDGET_IMAGE)


def training_summary(run_dir: str) -> str:
    """The training paragraph of the run's own model card (steps, batches, schedule), if it wrote one, and the
    wall-clock time of its training (of the last session only, for a run resumed from a checkpoint)."""
    summary = "see the training command below."
    card = Path(run_dir) / "README.md"
    if card.is_file():
        for line in card.read_text().splitlines():
            if line.startswith("- Training: "):
                summary = line.removeprefix("- Training: ")
    results = Path(run_dir) / "all_results.json"
    if results.is_file() and "train_runtime" in (metrics := json.loads(results.read_text())):
        summary += (f" Its last training session took {metrics['train_runtime'] / 60:.0f} wall-clock minutes (all of"
                    " training unless the run was resumed from a checkpoint).")
    return summary
