"""Benchmark: textrec's self-attention recognizer against a ViT+TrOCR `VisionEncoderDecoderModel` of
about the same size, trained identically under the same CPU budget, and against Tesseract 5.

    python -m textrec.scripts.benchmark_recognition --train_minutes 30 --output_dir runs/benchmark

Phases (each logs one line when it starts, and shows a progress bar where it loops):

1. Data. Training lines: synthetic, print and handwriting-style fonts mixed, augmented, split
   ``train`` of ``--seed``. A small validation set for the Trainer's own evaluation: split
   ``validation``, mixed, clean. Test sets: split ``test``, clean, one in print fonts and one in
   handwriting-style fonts (the same texts, drawn in the two styles). Splits are generated from
   disjoint seeds (`textrec.processing.data.split_seed`), so no test image is seen in training.
   The test images are written once as PNG files, and every system reads those files.
2. Step-time calibration. The cosine learning-rate schedule of each model is stretched over the
   steps it can do in the budget: a few optimiser steps of a throw-away copy of each model are
   timed, and ``max_steps`` = budget / seconds of the fastest step (other processes only ever slow
   steps down). ``--max_steps`` gives both models one
   fixed value instead. Either way the wall-clock budget (``--max_train_minutes``) stops training.
3. Training. The self-attention model through ``textrec-train`` (`textrec.scripts.train.run`);
   the ViT+TrOCR model with the same `TextRecognitionTrainer`, the same training arguments (batch
   size, learning rate, warm-up, schedule, budget, seed, data order), the same data and the same
   character tokenizer.
4. Recognition of both test sets: each model with batched greedy decoding (`recognize`, default
   torch threads), Tesseract per image through its command line (``--psm 7``,
   ``OMP_THREAD_LIMIT=1``). Speed is wall-clock over the print set, reading from the PNG files.
5. One markdown table, printed and written to ``table.md``; every number in ``results.json``;
   references and predictions in ``predictions.json``.

The ViT+TrOCR model: a `ViTModel` (grey 1-channel input, fixed size height x max width of the
self-attention model's line images, patches half the image height tall and 4 pixels wide: the same
2 x width/4 grid of positions as the self-attention model's CNN feature map) and a `TrOCRForCausalLM`
decoder with the self-attention decoder's width, depth, heads and feed-forward size; everything
else is transformers' defaults. The ViT depth is the smallest whose total parameter count is not
below the self-attention model's (``--vit_layers`` overrides it).
"""

import argparse
import contextlib
import gc
import json
import logging
import math
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import datasets
import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import (
    TrOCRConfig,
    ViTConfig,
    ViTModel,
    VisionEncoderDecoderConfig,
    VisionEncoderDecoderModel,
    set_seed,
)

from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_char_tokenizer
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.collator import TextRecognitionCollator
from textrec.processing.metrics import make_compute_metrics

from . import train as train_cli
from .architectures import LINE_IMAGES, get_spec
from .evaluate import evaluate_texts
from .inference import RecognitionResult, load_recognizer, recognize
from .training import TextRecognitionTrainer

logger = logging.getLogger("textrec.benchmark")

SELF_ATTENTION, VIT_TROCR, TESSERACT = "self-attention", "ViT+TrOCR", "Tesseract"
TEST_SETS = {"print": "synthetic-lines", "handwriting": "synthetic-lines-handwriting"}
"""Test set name -> synthetic dataset name (the handwriting one renders handwriting-style fonts only)."""
CALIBRATION_WARMUP_STEPS = 2
"""Untimed optimiser steps before the timed ones (first-call overheads)."""
MAX_PARAMETER_RATIO = 1.15
"""The ViT+TrOCR model must have at most this many times the self-attention model's parameters."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m textrec.scripts.benchmark_recognition",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--train_minutes", type=float, default=30.0,
                        help="Wall-clock training budget per model, in minutes.")
    parser.add_argument("--output_dir", default="runs/benchmark",
                        help="Where the data, both models, the table and the JSON results go.")
    parser.add_argument("--train_samples", type=int, default=40_000,
                        help="Synthetic training lines (mixed print and handwriting fonts, augmented; cached).")
    parser.add_argument("--test_samples", type=int, default=200,
                        help="Clean held-out lines in each test set (print, handwriting).")
    parser.add_argument("--eval_samples", type=int, default=64,
                        help="Validation lines for the Trainer's evaluation at the end of training.")
    parser.add_argument("--preset", choices=["tiny", "base", "paper"], default="base",
                        help="Self-attention model preset; the ViT+TrOCR model is sized after it.")
    parser.add_argument("--vit_layers", type=int, default=None,
                        help="ViT encoder depth. Unset: the smallest giving at least the self-attention "
                        "model's parameter count.")
    parser.add_argument("--max_target_length", type=int, default=64,
                        help="Longest label in tokens, end token included (both models).")
    parser.add_argument("--batch_size", type=int, default=32, help="Training batch size (both models).")
    parser.add_argument("--learning_rate", type=float, default=5e-4, help="Peak learning rate (both models).")
    parser.add_argument("--warmup_steps", type=int, default=100, help="Linear warm-up steps (both models).")
    parser.add_argument("--max_steps", type=int, default=None,
                        help="Length of the cosine schedule for both models. Unset: calibrated per model so "
                        "that it ends with the budget.")
    parser.add_argument("--calibration_steps", type=int, default=10,
                        help="Timed optimiser steps per model for the step-time calibration.")
    parser.add_argument("--logging_steps", type=int, default=50, help="Log the training loss every this many steps.")
    parser.add_argument("--recognition_batch_size", type=int, default=32, help="Batch size of greedy decoding.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the data splits, the models and the data order.")
    parser.add_argument("--num_proc", type=int, default=2, help="Processes rendering the synthetic lines.")
    parser.add_argument("--skip_tesseract", action="store_true",
                        help="Leave the Tesseract row out (otherwise a missing tesseract is an error).")
    parser.add_argument("--tesseract_lang", default="eng", help="Tesseract language model (-l).")
    return parser


# ----------------------------------------------------------------------------------------------
# Data


def prepare_data(args, output_dir: Path) -> tuple[Path, dict[str, list[Path]], dict[str, list[str]]]:
    """Writes the training data folder (train + validation splits, read by textrec-train's
    ``--dataset``) and the test images as PNG files.

    Returns:
        The data folder; per test set, the image files and their texts.
    """
    common = dict(seed=args.seed, num_proc=args.num_proc)
    train = load_text_recognition_dataset(
        "synthetic-lines", split="train", num_samples=args.train_samples, font_style="mixed", augment=True, **common
    )
    validation = load_text_recognition_dataset(
        "synthetic-lines", split="validation", num_samples=args.eval_samples, font_style="mixed", augment=False,
        **common,
    )
    data_dir = output_dir / "data"
    if data_dir.exists():
        shutil.rmtree(data_dir)
    datasets.DatasetDict({"train": train, "validation": validation}).save_to_disk(str(data_dir))

    paths, texts = {}, {}
    for name, dataset_name in TEST_SETS.items():
        test = load_text_recognition_dataset(
            dataset_name, split="test", num_samples=args.test_samples, augment=False, **common
        )
        folder = output_dir / "test_images" / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        paths[name] = []
        for index, image in enumerate(test["image"]):
            path = folder / f"{index:05d}.png"
            image.save(path)
            paths[name].append(path)
        texts[name] = list(test["text"])
    return data_dir, paths, texts


# ----------------------------------------------------------------------------------------------
# Models


def build_self_attention(args):
    """The self-attention model and processor exactly as textrec-train builds them (for counting and
    calibration; training builds its own)."""
    spec = get_spec("self-attention")
    model_args = train_cli.ModelArguments(
        model="self-attention", preset=args.preset, max_target_length=args.max_target_length
    )
    processor = train_cli.build_processor(model_args, spec)
    return train_cli.build_model(model_args, spec, processor), processor


def build_vit_trocr_processor(max_target_length: int) -> TextRecognitionProcessor:
    """Fixed-size grey images (height and width of the self-attention model's widest line) and the
    default character tokenizer, as textrec-train uses."""
    image_processor = TextRecognitionImageProcessor(
        num_channels=LINE_IMAGES["num_channels"],
        resize_mode="fixed",
        height=LINE_IMAGES["height"],
        width=LINE_IMAGES["max_width"],
    )
    return TextRecognitionProcessor(image_processor, build_char_tokenizer(), max_label_length=max_target_length)


def build_vit_trocr(
    reference_config, processor: TextRecognitionProcessor, vit_layers: int
) -> VisionEncoderDecoderModel:
    """A randomly initialised ViT encoder + TrOCR decoder sized after the self-attention `reference_config`."""
    image_processor, tokenizer = processor.image_processor, processor.tokenizer
    height, width = image_processor.height, image_processor.width
    encoder_config = ViTConfig(
        hidden_size=reference_config.d_model,
        num_hidden_layers=vit_layers,
        num_attention_heads=reference_config.decoder_attention_heads,
        intermediate_size=reference_config.decoder_ffn_dim,
        image_size=(height, width),
        patch_size=(height // 2, 4),
        num_channels=image_processor.num_channels,
    )
    token_ids = dict(
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.bos_token_id,
    )
    decoder_config = TrOCRConfig(
        vocab_size=len(tokenizer),
        d_model=reference_config.d_model,
        decoder_layers=reference_config.decoder_layers,
        decoder_attention_heads=reference_config.decoder_attention_heads,
        decoder_ffn_dim=reference_config.decoder_ffn_dim,
        max_position_embeddings=reference_config.max_target_length,
        **token_ids,
    )
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder_config, decoder_config)
    for name, value in token_ids.items():
        setattr(config, name, value)
    # ViT's pooler would be an unused parameter block: leave it out.
    model = VisionEncoderDecoderModel(config=config, encoder=ViTModel(encoder_config, add_pooling_layer=False))
    for name, value in token_ids.items():
        setattr(model.generation_config, name, value)
    model.generation_config.max_new_tokens = reference_config.max_target_length
    return model


def choose_vit_layers(reference_config, processor, target: int) -> int:
    """The smallest ViT depth whose ViT+TrOCR model has at least `target` parameters."""
    for layers in range(1, 25):
        if build_vit_trocr(reference_config, processor, layers).num_parameters() >= target:
            return layers
    raise ValueError(f"no ViT depth up to 24 layers reaches {target:,} parameters")


@dataclass
class ImagesOnlyCollator(TextRecognitionCollator):
    """`TextRecognitionCollator` without `pixel_mask`: `VisionEncoderDecoderModel` passes unknown
    keyword arguments on to its encoder."""

    def __call__(self, rows: list[dict]) -> dict:
        batch = super().__call__(rows)
        batch.pop("pixel_mask")
        return batch


class ImagesOnlyProcessor:
    """The processor for `recognize()` with a `VisionEncoderDecoderModel`, whose `generate()` rejects
    `pixel_mask` ("model_kwargs are not used by the model")."""

    def __init__(self, processor: TextRecognitionProcessor):
        self.processor = processor

    def __call__(self, *args, **kwargs):
        inputs = self.processor(*args, **kwargs)
        inputs.pop("pixel_mask", None)
        return inputs

    def batch_decode(self, *args, **kwargs) -> list[str]:
        return self.processor.batch_decode(*args, **kwargs)


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


# ----------------------------------------------------------------------------------------------
# Training


def training_argv(args, data_dir: Path, output_dir: Path, max_steps: int) -> list[str]:
    """textrec-train arguments shared by both models (plus their output folder and schedule length)."""
    return [
        f"--dataset={data_dir}",
        "--train_split=train",
        "--eval_split=validation",
        f"--max_eval_samples={args.eval_samples}",
        f"--max_target_length={args.max_target_length}",
        f"--output_dir={output_dir}",
        f"--per_device_train_batch_size={args.batch_size}",
        f"--per_device_eval_batch_size={args.batch_size}",
        f"--learning_rate={args.learning_rate}",
        "--lr_scheduler_type=cosine",
        f"--warmup_steps={args.warmup_steps}",
        f"--max_steps={max_steps}",
        f"--max_train_minutes={args.train_minutes}",
        "--eval_strategy=no",
        "--save_strategy=no",
        f"--logging_steps={args.logging_steps}",
        f"--seed={args.seed}",
        f"--data_seed={args.seed}",
        "--use_cpu=true",
    ]


def train_self_attention(args, argv: list[str]) -> None:
    train_cli.run([f"--model={SELF_ATTENTION}", f"--preset={args.preset}", *argv])


def train_vit_trocr(args, argv: list[str], reference_config, vit_layers: int):
    """Trains the ViT+TrOCR model as `train.run` trains textrec's models; returns (model, processor)."""
    _, data_args, training_args = train_cli.parse_arguments(argv)
    set_seed(training_args.seed)
    processor = build_vit_trocr_processor(args.max_target_length)
    model = build_vit_trocr(reference_config, processor, vit_layers)
    train_dataset, eval_dataset = train_cli.load_splits(data_args, training_args, processor, args.max_target_length)
    trainer = TextRecognitionTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=ImagesOnlyCollator(processor),
        processing_class=processor,
        compute_metrics=make_compute_metrics(processor, normalization=data_args.metric_normalization),
        callbacks=train_cli.training_callbacks(training_args),
    )
    train_result = trainer.train()
    metrics = trainer.evaluate(metric_key_prefix="eval")
    trainer.log_metrics("train", train_result.metrics)
    trainer.log_metrics("eval", metrics)
    trainer.save_metrics("all", {**train_result.metrics, **metrics})
    trainer.save_state()
    trainer.save_model()
    return trainer.model.eval(), processor


def training_summary(model_dir: Path, max_steps: int) -> dict:
    """Steps done and minutes used, from the files the Trainer wrote."""
    state = json.loads((model_dir / "trainer_state.json").read_text())
    results = json.loads((model_dir / "all_results.json").read_text())
    return {
        "steps": state["global_step"],
        "max_steps": max_steps,
        "train_minutes_used": results["train_runtime"] / 60,
        "final_train_loss": next(
            (entry["loss"] for entry in reversed(state["log_history"]) if "loss" in entry), None
        ),
        "validation_cer": results.get("eval_cer"),
    }


# ----------------------------------------------------------------------------------------------
# Recognition


def check_tesseract(lang: str) -> str:
    """The `tesseract --version` line; raises SystemExit when tesseract or its language is missing."""
    if shutil.which("tesseract") is None:
        raise SystemExit(
            "tesseract is not installed (Debian: apt-get install tesseract-ocr); "
            "pass --skip_tesseract to leave its row out."
        )
    languages = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=True).stdout
    if lang not in languages.split():
        raise SystemExit(f"tesseract has no language {lang!r} (installed: {languages.split()[-2:]}...)")
    return subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def tesseract_recognize(paths: list[Path], lang: str) -> RecognitionResult:
    """Reads each image with ``tesseract IMAGE stdout --psm 7 -l LANG`` (one process per image, one
    thread each); the time is the wall clock over all images."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    texts = []
    start = time.perf_counter()
    for path in tqdm(paths, desc="tesseract", unit="line"):
        command = ["tesseract", str(path), "stdout", "--psm", "7", "-l", lang]
        completed = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if completed.returncode:
            raise RuntimeError(f"{shlex.join(command)} failed: {completed.stderr.strip()}")
        texts.append(completed.stdout.rstrip("\n\f"))
    return RecognitionResult(texts=texts, seconds=time.perf_counter() - start)


def score(read, paths: dict[str, list[Path]], references: dict[str, list[str]], predictions: dict) -> dict:
    """CER/WER/accuracy and lines/s of one system on every test set; `read(paths)` -> RecognitionResult."""
    scores = {}
    for name, files in paths.items():
        result = read(files)
        predictions[name] = result.texts
        scores[name] = {
            **evaluate_texts(result.texts, references[name]),
            "lines_per_second": result.lines_per_second,
        }
    return scores


def model_reader(model, processor, batch_size: int):
    def read(files: list[Path]) -> RecognitionResult:
        recognize(model, processor, files[:batch_size], batch_size=batch_size, progress=False)  # warm-up, untimed
        return recognize(model, processor, files, batch_size=batch_size)

    return read


# ----------------------------------------------------------------------------------------------
# Report


def render_table(results: dict) -> str:
    settings = results["settings"]
    title = f"### Text recognition on CPU: {settings['train_minutes']:g}-minute training budget per model"
    header = (
        f"Held-out synthetic lines ({settings['test_samples']} print, {settings['test_samples']} handwriting-style; "
        f"clean), after a {settings['train_minutes']:g}-minute CPU training budget per model on "
        f"{settings['train_samples']:,} augmented mixed-font lines. Models: batched greedy decoding "
        f"(batch {settings['recognition_batch_size']}, {settings['torch_threads']} torch threads); "
        f"{settings.get('tesseract_version') or 'Tesseract'}: --psm 7 -l {settings['tesseract_lang']}, "
        "OMP_THREAD_LIMIT=1, one process per line. Lines/s on the print set, reading PNG files. Training: "
        f"steps done within the budget, and how many of the {os.cpu_count()} cores training kept busy on average "
        "(fewer when other processes competed for them)."
    )
    columns = ["System", "Parameters", "Training", "Print CER", "Print WER", "Handwriting CER",
               "Handwriting WER", "Lines/s (print)"]
    lines = [title, "", header, "", "| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for name, system in results["systems"].items():
        if system.get("parameters"):
            parameters = f"{system['parameters'] / 1e6:.2f} M"
            training = (
                f"{system['steps']:,} steps in {system['train_minutes_used']:.1f} min "
                f"({system['cores_used_in_training']:.1f} cores)"
            )
        else:
            parameters, training = "n/a", f"pretrained ({settings['tesseract_lang']})"
        cells = [
            name,
            parameters,
            training,
            f"{system['print']['cer']:.2%}",
            f"{system['print']['wer']:.2%}",
            f"{system['handwriting']['cer']:.2%}",
            f"{system['handwriting']['wer']:.2%}",
            f"{system['print']['lines_per_second']:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def cores_used(record: dict, name: str):
    """Records under `name` how many cores this process kept busy on average inside the block (CPU
    time / wall time): 2 on these 2 cores when nothing else competes for them."""
    cpu, wall = time.process_time(), time.perf_counter()
    yield
    record[name] = (time.process_time() - cpu) / (time.perf_counter() - wall)


def phase(number: int, text: str, machine_load: dict) -> None:
    """Logs the start of a phase and records the machine's 1-minute load average there (about 2 while
    this benchmark alone keeps both cores busy; more means other processes competed for them)."""
    load = os.getloadavg()[0]
    machine_load[f"{number}. {text}"] = load
    logger.info("[%d/5] %s (load average %.2f)", number, text, load)
    if load > os.cpu_count() + 1:
        logger.warning(
            "Other processes are competing for the %d cores (load average %.1f): budgets and speeds measured now "
            "are not comparable with those of a quiet machine",
            os.cpu_count(),
            load,
        )


def run(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    command = shlex.join(["python", "-m", "textrec.scripts.benchmark_recognition", *argv])
    print(f"Command: {command}", flush=True)
    tesseract_version = None if args.skip_tesseract else check_tesseract(args.tesseract_lang)
    if args.skip_tesseract:
        logger.warning("--skip_tesseract: the table has no Tesseract row")
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    model_dirs = {SELF_ATTENTION: output_dir / "self-attention", VIT_TROCR: output_dir / "vit-trocr"}
    for folder in model_dirs.values():
        if folder.exists():  # textrec-train would resume from an old checkpoint, outside the budget
            logger.info("Removing the previous run's %s", folder)
            shutil.rmtree(folder)

    machine_load = {}
    phase(1, f"Data: {args.train_samples:,} training lines, 2 x {args.test_samples} test lines", machine_load)
    data_dir, test_paths, references = prepare_data(args, output_dir)
    train_dataset = datasets.load_from_disk(str(data_dir))["train"]

    phase(2, "Model sizes and step-time calibration", machine_load)
    set_seed(args.seed)
    self_attention, self_attention_processor = build_self_attention(args)
    reference_config = self_attention.config
    vit_processor = build_vit_trocr_processor(args.max_target_length)
    target = self_attention.num_parameters()
    vit_layers = args.vit_layers or choose_vit_layers(reference_config, vit_processor, target)
    set_seed(args.seed)
    vit_trocr = build_vit_trocr(reference_config, vit_processor, vit_layers)
    parameters = {SELF_ATTENTION: target, VIT_TROCR: vit_trocr.num_parameters()}
    print(f"Parameters: {SELF_ATTENTION} ({args.preset}) {parameters[SELF_ATTENTION]:,}; {VIT_TROCR} "
          f"({vit_layers} ViT layers) {parameters[VIT_TROCR]:,} "
          f"({parameters[VIT_TROCR] / parameters[SELF_ATTENTION] - 1:+.1%})", flush=True)
    if parameters[VIT_TROCR] > MAX_PARAMETER_RATIO * target:
        logger.warning(
            "%s is more than %.0f%% larger than %s", VIT_TROCR, 100 * (MAX_PARAMETER_RATIO - 1), SELF_ATTENTION
        )
    if args.max_steps:
        max_steps = dict.fromkeys(model_dirs, args.max_steps)
    else:
        step_seconds = {
            SELF_ATTENTION: seconds_per_step(
                self_attention, TextRecognitionCollator(self_attention_processor), train_dataset,
                args.batch_size, args.learning_rate, args.calibration_steps, args.seed,
            ),
            VIT_TROCR: seconds_per_step(
                vit_trocr, ImagesOnlyCollator(vit_processor), train_dataset,
                args.batch_size, args.learning_rate, args.calibration_steps, args.seed,
            ),
        }
        max_steps = {
            name: max(1, math.ceil(args.train_minutes * 60 / seconds)) for name, seconds in step_seconds.items()
        }
        for name, seconds in step_seconds.items():
            print(f"Calibration: {name} {seconds:.3f} s/step -> cosine schedule over {max_steps[name]:,} steps",
                  flush=True)
    del self_attention, vit_trocr
    gc.collect()

    cores = {}
    phase(3, f"Training {SELF_ATTENTION} for {args.train_minutes:g} min", machine_load)
    with cores_used(cores, SELF_ATTENTION):
        train_self_attention(
            args, training_argv(args, data_dir, model_dirs[SELF_ATTENTION], max_steps[SELF_ATTENTION])
        )
    gc.collect()
    phase(3, f"Training {VIT_TROCR} for {args.train_minutes:g} min", machine_load)
    with cores_used(cores, VIT_TROCR):
        vit_trocr, vit_processor = train_vit_trocr(
            args, training_argv(args, data_dir, model_dirs[VIT_TROCR], max_steps[VIT_TROCR]), reference_config,
            vit_layers,
        )

    phase(4, "Recognition of the test sets", machine_load)
    systems, predictions = {}, {}
    model, processor = load_recognizer(str(model_dirs[SELF_ATTENTION]))
    readers = {
        SELF_ATTENTION: model_reader(model, processor, args.recognition_batch_size),
        VIT_TROCR: model_reader(vit_trocr, ImagesOnlyProcessor(vit_processor), args.recognition_batch_size),
    }
    for name, read in readers.items():
        logger.info("Reading with %s", name)
        predictions[name] = {}
        systems[name] = {
            "parameters": parameters[name],
            **training_summary(model_dirs[name], max_steps[name]),
            "cores_used_in_training": cores[name],
            **score(read, test_paths, references, predictions[name]),
        }
    if not args.skip_tesseract:
        predictions[TESSERACT] = {}
        def read_with_tesseract(files: list[Path]) -> RecognitionResult:
            return tesseract_recognize(files, args.tesseract_lang)

        systems[TESSERACT] = score(read_with_tesseract, test_paths, references, predictions[TESSERACT])

    phase(5, "Report", machine_load)
    results = {
        "command": command,
        "settings": {
            **vars(args),
            "vit_layers": vit_layers,
            "torch_threads": torch.get_num_threads(),
            "tesseract_version": tesseract_version,
        },
        "machine_load_at_phase_start": machine_load,
        "systems": systems,
    }
    table = render_table(results)
    print(f"\n{table}\n\nCommand: {command}", flush=True)
    (output_dir / "table.md").write_text(f"{table}\n\nCommand: `{command}`\n")
    (output_dir / "results.json").write_text(json.dumps(results, indent=2, default=str))
    (output_dir / "predictions.json").write_text(
        json.dumps({"references": references, "predictions": predictions}, indent=2)
    )
    return results


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    run(argv)


if __name__ == "__main__":
    main()
