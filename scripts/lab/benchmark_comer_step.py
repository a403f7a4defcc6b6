"""Where a CoMER training step's time goes on a CPU: the DenseNet encoder, the decoder without the Attention
Refinement Module, and the ARM, forward and backward, for coverage none and fusion, on synthetic formulas packed
into batches as textrec-train packs them.

    python scripts/lab/benchmark_comer_step.py --presets tiny base fast --threads 1

The batches: `--num_formulas` training formulas of `synthetic-math` (at most `--max_tokens` tokens), packed by
image area as CoMER's recipe packs them (at most 8 formulas and 320,000 padded pixels) and rescaled by the
training augmentation; `--num_batches` of them are drawn at random (seeded), the same for every model. Each
model runs every batch once untimed (oneDNN builds its kernels for each new shape), then `--repeats` times; a
batch's time is the fastest of those, and the table gives the mean over the batches, in seconds:

- encoder: `model.encoder` forward, and backward from the sum of its output;
- decoder: the bidirectional decoder forward with the loss, and backward to the encoder's output (a leaf);
- ARM: the decoder of coverage=fusion less the decoder of coverage=none (the refinement module, the coverage
  sums and the second softmax of each refined layer);
- step: forward and backward of the whole model, as a training step has them (the optimiser's update, a few
  milliseconds, left out).
"""

import argparse
import platform
import random
import statistics
import time

import numpy as np
import torch

from textrec.modeling import CoMERConfig, CoMERForFormulaRecognition
from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_latex_tokenizer
from textrec.processing.data import load_text_recognition_dataset
from textrec.processing.data.area_batching import AreaBatchSampler, image_sizes
from textrec.processing.data.collator import TextRecognitionCollator
from textrec.processing.training.architectures import get_spec

from step_calibration import print_step_table

COVERAGES = ("none", "fusion")


def training_batches(num_formulas: int, max_tokens: int, num_batches: int, seed: int) -> list[dict]:
    """`num_batches` batches of synthetic formulas as textrec-train's CoMER recipe makes them."""
    dataset = load_text_recognition_dataset(f"synthetic-math:max_tokens={max_tokens}", split="train",
                                            num_samples=num_formulas, seed=seed)
    spec = get_spec("comer")
    processor = TextRecognitionProcessor(TextRecognitionImageProcessor(**spec.image_processor_kwargs), build_latex_tokenizer())
    sampler = AreaBatchSampler(
        image_sizes(dataset, processor.image_processor),
        max_area=spec.recipe.defaults["batch_max_area"],
        max_batch_size=spec.recipe.defaults["per_device_train_batch_size"],
        seed=seed,
    )
    collator = TextRecognitionCollator(processor, spec.train_processor_kwargs, warn_out_of_vocabulary=False)
    chosen = random.Random(seed).sample(list(sampler), min(num_batches, len(sampler)))
    np.random.seed(seed)  # the scale augmentation
    return [collator([dataset[index] for index in batch]) for batch in chosen]


def fastest(function, batches: list[dict], repeats: int) -> float:
    """The mean over `batches` of the fastest of `repeats` timed calls of `function(batch)`, after one untimed."""
    means = []
    for batch in batches:
        function(batch)
        timings = []
        for _ in range(repeats):
            start = time.perf_counter()
            function(batch)
            timings.append(time.perf_counter() - start)
        means.append(min(timings))
    return statistics.mean(means)


def component_times(model: CoMERForFormulaRecognition, batches: list[dict], repeats: int) -> dict[str, float]:
    """Seconds of the encoder, the decoder and the whole step, forward and backward (see the module docstring)."""
    def encoder(batch):
        model.zero_grad(set_to_none=True)
        model.encoder(batch["pixel_values"], pixel_mask=batch["pixel_mask"]).last_hidden_state.sum().backward()

    encoded = {}

    def decoder(batch):
        key = id(batch)
        if key not in encoded:
            with torch.no_grad():
                encoded[key] = model.encoder(batch["pixel_values"], pixel_mask=batch["pixel_mask"])
        outputs = encoded[key]
        leaf = type(outputs)(**{**outputs, "last_hidden_state": outputs.last_hidden_state.clone().requires_grad_()})
        model.zero_grad(set_to_none=True)
        model(encoder_outputs=leaf, labels=batch["labels"]).loss.backward()

    def step(batch):
        model.zero_grad(set_to_none=True)
        model(**batch).loss.backward()

    return {name: fastest(function, batches, repeats) for name, function in
            (("encoder", encoder), ("decoder", decoder), ("step", step))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=["tiny", "base", "fast"], choices=sorted(CoMERConfig.PRESETS))
    parser.add_argument("--num_formulas", type=int, default=400, help="Training formulas the batches are packed from.")
    parser.add_argument("--max_tokens", type=int, default=48, help="Longest formula (synthetic-math's max_tokens).")
    parser.add_argument("--num_batches", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2, help="Timed runs of each batch (the fastest counts).")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    batches = training_batches(args.num_formulas, args.max_tokens, args.num_batches, args.seed)
    formulas = sum(len(batch["labels"]) for batch in batches)
    pixels = statistics.mean(batch["pixel_values"][:, 0].numel() for batch in batches)
    tokens = statistics.mean(batch["labels"].shape[1] for batch in batches)
    rows = []
    for preset in args.presets:
        times = {}
        for coverage in COVERAGES:
            torch.manual_seed(args.seed)
            model = CoMERForFormulaRecognition(CoMERConfig.from_preset(preset, coverage=coverage)).train()
            times[coverage] = component_times(model, batches, args.repeats)
            times[coverage]["parameters"] = model.num_parameters()
        arm = times["fusion"]["decoder"] - times["none"]["decoder"]
        for coverage in COVERAGES:
            t = times[coverage]
            arm_cell = f"{arm:.3f}" if coverage == "fusion" else "-"
            decoder = t["decoder"] - (arm if coverage == "fusion" else 0.0)
            rows.append(f"| {preset} | {coverage} | {t['parameters']:,} | {t['encoder']:.3f} | {decoder:.3f} | "
                        f"{arm_cell} | {t['step']:.3f} | {1 / t['step']:.2f} |")

    print_step_table(
        f"CoMER training step (forward + backward), {len(batches)} batches of synthetic-math formulas of at most "
        f"{args.max_tokens} tokens ({formulas} formulas, on average {pixels:,.0f} padded pixels and {tokens:.0f} "
        f"label positions per batch), {torch.get_num_threads()} CPU thread(s), torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()}; seconds per step",
        ["preset", "coverage", "parameters", "encoder", "decoder without ARM", "ARM", "step", "steps/s"],
        rows, "benchmark_comer_step", argv,
    )

if __name__ == "__main__":
    main()
