"""Benchmark: textrec's recognizers (self-attention, resnet-transformer) against a ViT+TrOCR
`VisionEncoderDecoderModel` of about the same size, all trained identically under the same CPU budget,
and against Tesseract 5.

    python scripts/lab/benchmark_recognition.py --train_minutes 30 --output_dir runs/benchmark

``--systems`` chooses what runs (default: everything). Rows of an earlier run in ``--output_dir`` are
kept for the systems not run now, so that one can be added without retraining the others:

    python scripts/lab/benchmark_recognition.py --train_minutes 30 --output_dir runs/benchmark \
        --systems resnet-transformer

That merge is refused unless the earlier run had the same settings (data, budget, training and
decoding arguments: `MERGE_SETTINGS`) and the same test images and texts.

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
   steps down). ``--max_steps`` gives every model one
   fixed value instead. Either way the wall-clock budget (``--max_train_minutes``) stops training.
3. Training. The self-attention and resnet-transformer models through ``textrec-train``
   (`textrec.processing.training.train_from_arguments`); the ViT+TrOCR model with the same `train`. Every
   model gets the same training arguments (AdamW, batch size, learning rate, warm-up, cosine
   schedule, budget, seed, data order), the same data and the same character tokenizer, and its
   architecture's own image processor settings. This holds for resnet-transformer too: the benchmark
   compares architectures under identical training, so it does not use that architecture's paper
   recipe (Adam, warm-up and staircase decay), which ``textrec-train --model resnet-transformer``
   applies on its own and is a separate comparison.
4. Recognition of both test sets: each model with batched greedy decoding (`recognize`, default
   torch threads), resnet-transformer also with the beam search of its generation config (4 beams
   ranked by the GNMT length penalty): two rows. Tesseract in one process over a list file of the images
   (``--psm 7``, ``OMP_THREAD_LIMIT=1``, `textrec.processing.tesseract`). Speed is wall-clock over the print set, reading from the
   PNG files.
5. One markdown table, printed and written to ``table.md`` with the command (or commands, after a
   merge) that made its rows; every number in ``results.json``; references and predictions in
   ``predictions.json``.

The ViT+TrOCR model: a `ViTModel` (grey 1-channel input, fixed size height x max width of the
self-attention model's line images, patches half the image height tall and 4 pixels wide: the same
2 x width/4 grid of positions as the self-attention model's CNN feature map) and a `TrOCRForCausalLM`
decoder with the self-attention decoder's width, depth, heads and feed-forward size; everything
else is transformers' defaults. The ViT depth is the smallest whose total parameter count is not
below the self-attention model's (``--vit_layers`` overrides it). The self-attention and
resnet-transformer models use ``--preset``.
"""

import argparse
import contextlib
import dataclasses
import gc
import json
import logging
import math
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import datasets
import numpy as np
import torch
from PIL import Image
from transformers import set_seed

from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.collator import TextRecognitionCollator
from textrec.processing.inference import RecognitionResult, load_recognizer, recognize
from textrec.processing.metrics import evaluate_texts
from textrec.processing.tesseract import check_tesseract, tesseract_recognize
from textrec.processing.training import (
    ArchitectureSpec,
    ModelArguments,
    build_recognizer,
    get_spec,
    load_splits,
    parse_arguments,
    train,
    train_from_arguments,
)

from recognition_table import (
    RESNET_TRANSFORMER,
    SELF_ATTENTION,
    SYSTEMS,
    TESSERACT,
    TEST_SETS,
    VIT_TROCR,
    merge_earlier_run,
    read_earlier_run,
    render_commands,
    render_table,
)
from step_calibration import seconds_per_step
from vit_trocr import MAX_PARAMETER_RATIO, VIT_TROCR_DESCRIPTION, build_vit_trocr, build_vit_trocr_processor, choose_vit_layers

logger = logging.getLogger("textrec.benchmark")



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python scripts/lab/benchmark_recognition.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--systems", nargs="+", choices=list(SYSTEMS), default=list(SYSTEMS),
                        help="Systems to run. Rows of an earlier run in --output_dir with the same settings are "
                        "kept for the others.")
    parser.add_argument("--train_minutes", type=float, default=30.0,
                        help="Wall-clock training budget per model, in minutes.")
    parser.add_argument("--output_dir", default="runs/benchmark",
                        help="Where the data, the models, the table and the JSON results go.")
    parser.add_argument("--train_samples", type=int, default=40_000,
                        help="Synthetic training lines (mixed print and handwriting fonts, augmented; cached).")
    parser.add_argument("--test_samples", type=int, default=200,
                        help="Clean held-out lines in each test set (print, handwriting).")
    parser.add_argument("--eval_samples", type=int, default=64,
                        help="Validation lines for the Trainer's evaluation at the end of training.")
    parser.add_argument("--preset", choices=["tiny", "base", "paper"], default="base",
                        help="Preset of the self-attention and resnet-transformer models; the ViT+TrOCR model "
                        "is sized after the self-attention one.")
    parser.add_argument("--vit_layers", type=int, default=None,
                        help="ViT encoder depth. Unset: the smallest giving at least the self-attention "
                        "model's parameter count.")
    parser.add_argument("--max_target_length", type=int, default=64,
                        help="Longest label in tokens, end token included (every model).")
    parser.add_argument("--batch_size", type=int, default=32, help="Training batch size (every model).")
    parser.add_argument("--learning_rate", type=float, default=5e-4, help="Peak learning rate (every model).")
    parser.add_argument("--warmup_steps", type=int, default=100, help="Linear warm-up steps (every model).")
    parser.add_argument("--max_steps", type=int, default=None,
                        help="Length of the cosine schedule for every model. Unset: calibrated per model so "
                        "that it ends with the budget.")
    parser.add_argument("--calibration_steps", type=int, default=10,
                        help="Timed optimiser steps per model for the step-time calibration.")
    parser.add_argument("--logging_steps", type=int, default=50, help="Log the training loss every this many steps.")
    parser.add_argument("--recognition_batch_size", type=int, default=32, help="Batch size of decoding.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the data splits, the models and the data order.")
    parser.add_argument("--num_proc", type=int, default=2, help="Processes rendering the synthetic lines.")
    parser.add_argument("--tesseract_lang", default="eng", help="Tesseract language model (-l).")
    return parser


# ----------------------------------------------------------------------------------------------
# Data


def make_data(args) -> tuple[datasets.DatasetDict, dict[str, datasets.Dataset]]:
    """The training data (train + validation splits) and the test sets (print, handwriting)."""
    common = dict(seed=args.seed, num_proc=args.num_proc)
    train = load_text_recognition_dataset(
        "synthetic-lines", split="train", num_samples=args.train_samples, font_style="mixed", augment=True, **common
    )
    validation = load_text_recognition_dataset(
        "synthetic-lines", split="validation", num_samples=args.eval_samples, font_style="mixed", augment=False,
        **common,
    )
    tests = {
        name: load_text_recognition_dataset(
            dataset_name, split="test", num_samples=args.test_samples, augment=False, **common
        )
        for name, dataset_name in TEST_SETS.items()
    }
    return datasets.DatasetDict({"train": train, "validation": validation}), tests


def png_path(output_dir: Path, test_set: str, index: int) -> Path:
    return output_dir / "test_images" / test_set / f"{index:05d}.png"


def check_same_test_sets(
    output_dir: Path, tests: dict[str, datasets.Dataset], references: dict[str, list[str]]
) -> None:
    """Raises SystemExit unless `tests` hold the texts of an earlier run (`references`) and the very images it
    wrote to `output_dir`: rows read from other test sets (the data generation changed) do not compare."""
    for name, test in tests.items():
        if list(test["text"]) != references.get(name):
            raise SystemExit(
                f"Not merging: the {name} test texts differ from those of the earlier run in {output_dir}."
            )
        for index, image in enumerate(test["image"]):
            path = png_path(output_dir, name, index)
            if not path.exists():
                raise SystemExit(f"Not merging: the earlier run's test image {path} is missing.")
            with Image.open(path) as earlier:
                if not np.array_equal(np.asarray(earlier), np.asarray(image)):
                    raise SystemExit(f"Not merging: {path} differs from the {name} test image rendered now.")


def write_data(
    output_dir: Path, training: datasets.DatasetDict, tests: dict[str, datasets.Dataset]
) -> tuple[Path, dict[str, list[Path]], dict[str, list[str]]]:
    """Writes the training data folder (train + validation splits, read by textrec-train's
    ``--dataset``) and the test images as PNG files.

    Returns:
        The data folder; per test set, the image files and their texts.
    """
    data_dir = output_dir / "data"
    if data_dir.exists():
        shutil.rmtree(data_dir)
    training.save_to_disk(str(data_dir))

    paths, texts = {}, {}
    for name, test in tests.items():
        folder = png_path(output_dir, name, 0).parent
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        paths[name] = []
        for index, image in enumerate(test["image"]):
            path = png_path(output_dir, name, index)
            image.save(path)
            paths[name].append(path)
        texts[name] = list(test["text"])
    return data_dir, paths, texts


# ----------------------------------------------------------------------------------------------
# Models (ViT+TrOCR: `vit_trocr.py`; step times: `step_calibration.py`)


def build_textrec_model(args, name: str):
    """The model and processor of textrec's architecture `name` exactly as textrec-train builds them (for
    counting and calibration; training builds its own)."""
    spec = benchmark_spec(name, args.preset)
    model_args = ModelArguments(model=name, preset=args.preset, max_target_length=args.max_target_length)
    return build_recognizer(model_args, spec)


# ----------------------------------------------------------------------------------------------
# Training


def training_argv(args, data_dir: Path, output_dir: Path, max_steps: int) -> list[str]:
    """textrec-train arguments shared by every model (plus its output folder and schedule length)."""
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


def benchmark_spec(name: str, preset: str) -> ArchitectureSpec:
    """Architecture `name` as the benchmark trains it: with the Trainer's AdamW and ``--lr_scheduler_type``, as
    every other model, not with its own recipe (`ArchitectureSpec.recipe`: its optimiser, schedule and their
    defaults, such as Adam's betas)."""
    return dataclasses.replace(get_spec(name).for_preset(preset), recipe=None)


def train_with_textrec_train(args, name: str, argv: list[str]) -> None:
    """Trains textrec's architecture `name` as textrec-train does, with the shared arguments `argv`."""
    spec = benchmark_spec(name, args.preset)
    model_args, data_args, training_args = parse_arguments([f"--model={name}", f"--preset={args.preset}", *argv], spec)
    train_from_arguments(model_args, data_args, training_args, spec)


def train_vit_trocr(args, argv: list[str], reference_config, vit_layers: int):
    """Trains the ViT+TrOCR model through textrec's `train`, as textrec's models; returns (model, processor)."""
    _, data_args, training_args = parse_arguments(argv, benchmark_spec(SELF_ATTENTION, args.preset))
    set_seed(training_args.seed)
    processor = build_vit_trocr_processor(args.max_target_length)
    model = build_vit_trocr(reference_config, processor, vit_layers)
    train_dataset, eval_dataset = load_splits(data_args, training_args, processor)
    card_details = dict(
        architecture="vit-trocr",
        architecture_description=VIT_TROCR_DESCRIPTION,
        reads=get_spec("trocr").reads,
        tokens=get_spec("trocr").tokens,
        dataset_name=data_args.eval_dataset or data_args.dataset,
        dataset_split=data_args.eval_split,
        eval_samples=len(eval_dataset),
    )
    train(model, processor, train_dataset, eval_dataset, training_args, card_details=card_details,
          metric_normalization=data_args.metric_normalization)
    return model.eval(), processor


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


def model_reader(model, processor, batch_size: int, num_beams: int = 1):
    def read(files: list[Path]) -> RecognitionResult:
        # warm-up, untimed
        recognize(model, processor, files[:batch_size], batch_size=batch_size, num_beams=num_beams, progress=False)
        return recognize(model, processor, files, batch_size=batch_size, num_beams=num_beams)

    return read


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
    command = shlex.join(["python", "scripts/lab/benchmark_recognition.py", *argv])
    print(f"Command: {command}", flush=True)
    systems = [system for choice, system in SYSTEMS.items() if choice in args.systems]
    settings = {key: value for key, value in vars(args).items() if key != "systems"}
    settings["torch_threads"] = torch.get_num_threads()
    settings["tesseract_version"] = check_tesseract(args.tesseract_lang) if TESSERACT in systems else None
    output_dir = Path(args.output_dir)
    earlier = read_earlier_run(output_dir, settings, systems)
    output_dir.mkdir(parents=True, exist_ok=True)
    trained = [system for system in systems if system != TESSERACT]
    model_dirs = {system: output_dir / choice for choice, system in SYSTEMS.items() if system in trained}
    for folder in model_dirs.values():
        if folder.exists():  # textrec-train would resume from an old checkpoint, outside the budget
            logger.info("Removing the previous run's %s", folder)
            shutil.rmtree(folder)

    machine_load = {}
    phase(1, f"Data: {args.train_samples:,} training lines, 2 x {args.test_samples} test lines", machine_load)
    training_data, tests = make_data(args)
    if earlier is not None:
        check_same_test_sets(output_dir, tests, earlier[1]["references"])
    data_dir, test_paths, references = write_data(output_dir, training_data, tests)
    train_dataset = datasets.load_from_disk(str(data_dir))["train"]

    phase(2, "Model sizes and step-time calibration", machine_load)
    models, collators = {}, {}  # throw-away models, for counting and calibration
    if SELF_ATTENTION in trained or VIT_TROCR in trained:  # the ViT+TrOCR model is sized after it
        set_seed(args.seed)
        models[SELF_ATTENTION], processor = build_textrec_model(args, SELF_ATTENTION)
        collators[SELF_ATTENTION] = TextRecognitionCollator(processor)
        reference_config = models[SELF_ATTENTION].config
    if VIT_TROCR in trained:
        processor = build_vit_trocr_processor(args.max_target_length)
        target = models[SELF_ATTENTION].num_parameters()
        settings["vit_layers"] = args.vit_layers or choose_vit_layers(reference_config, processor, target)
        set_seed(args.seed)
        models[VIT_TROCR] = build_vit_trocr(reference_config, processor, settings["vit_layers"])
        collators[VIT_TROCR] = TextRecognitionCollator(processor)
        if models[VIT_TROCR].num_parameters() > MAX_PARAMETER_RATIO * target:
            logger.warning(
                "%s is more than %.0f%% larger than %s", VIT_TROCR, 100 * (MAX_PARAMETER_RATIO - 1), SELF_ATTENTION
            )
    if RESNET_TRANSFORMER in trained:
        set_seed(args.seed)
        models[RESNET_TRANSFORMER], processor = build_textrec_model(args, RESNET_TRANSFORMER)
        collators[RESNET_TRANSFORMER] = TextRecognitionCollator(processor)
    parameters = {name: model.num_parameters() for name, model in models.items()}
    sizes = {
        SELF_ATTENTION: args.preset, VIT_TROCR: f"{settings['vit_layers']} ViT layers", RESNET_TRANSFORMER: args.preset
    }
    if models:
        print("Parameters: " + "; ".join(f"{name} ({sizes[name]}) {parameters[name]:,}" for name in models), flush=True)
    if args.max_steps:
        max_steps = dict.fromkeys(trained, args.max_steps)
    else:
        step_seconds = {
            name: seconds_per_step(
                models[name], collators[name], train_dataset,
                args.batch_size, args.learning_rate, args.calibration_steps, args.seed,
            )
            for name in trained
        }
        max_steps = {
            name: max(1, math.ceil(args.train_minutes * 60 / seconds)) for name, seconds in step_seconds.items()
        }
        for name, seconds in step_seconds.items():
            print(f"Calibration: {name} {seconds:.3f} s/step -> cosine schedule over {max_steps[name]:,} steps",
                  flush=True)
    del models, collators
    gc.collect()

    cores = {}
    for name in trained:
        phase(3, f"Training {name} for {args.train_minutes:g} min", machine_load)
        shared_argv = training_argv(args, data_dir, model_dirs[name], max_steps[name])
        with cores_used(cores, name):
            if name == VIT_TROCR:
                vit_trocr, vit_processor = train_vit_trocr(args, shared_argv, reference_config, settings["vit_layers"])
            else:
                train_with_textrec_train(args, name, shared_argv)
        gc.collect()

    phase(4, "Recognition of the test sets", machine_load)
    batch_size = args.recognition_batch_size
    readers = {}  # row -> (system, reader, fields of the row besides the scores)
    for name in trained:
        if name == VIT_TROCR:
            readers[name] = name, model_reader(vit_trocr, vit_processor, batch_size), {}
            continue
        model, processor = load_recognizer(str(model_dirs[name]))
        if name == RESNET_TRANSFORMER:  # greedy, and the beam search of its generation config
            num_beams = model.generation_config.num_beams
            for row, beams in ((f"{name} (greedy)", 1), (f"{name} (beam {num_beams})", num_beams)):
                readers[row] = name, model_reader(model, processor, batch_size, beams), {"num_beams": beams}
        else:
            readers[name] = name, model_reader(model, processor, batch_size), {}
    rows, predictions = {}, {}
    for row, (name, read, details) in readers.items():
        logger.info("Reading with %s", row)
        predictions[row] = {}
        rows[row] = {
            "parameters": parameters[name],
            **training_summary(model_dirs[name], max_steps[name]),
            "cores_used_in_training": cores[name],
            **details,
            **score(read, test_paths, references, predictions[row]),
        }
    if TESSERACT in systems:
        predictions[TESSERACT] = {}
        def read_with_tesseract(files: list[Path]) -> RecognitionResult:
            return tesseract_recognize(files, args.tesseract_lang)

        rows[TESSERACT] = score(read_with_tesseract, test_paths, references, predictions[TESSERACT])

    phase(5, "Report", machine_load)
    results = {
        "command": command,
        "settings": settings,
        "machine_load_at_phase_start": machine_load,
        "systems": rows,
        "earlier_runs": [],
    }
    if earlier is not None:
        results, predictions = merge_earlier_run(results, predictions, *earlier)
    table, commands = render_table(results), render_commands(results)
    print(f"\n{table}\n\n{commands}", flush=True)
    (output_dir / "table.md").write_text(f"{table}\n\n{commands}\n")
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
