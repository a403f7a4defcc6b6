"""Where a sharp-attention training step's time goes on a CPU: the encoder (VGG and BiLSTM), the sharpener (its
spatial transformers' localisation networks and the bilinear sampling), the patch CNN that re-encodes each
step's patch, and the rest of the decoder, forward and backward, for soft, hard and sharp attention.

    python scripts/lab/benchmark_sharp_step.py --presets base small --threads 1

A step is a batch of `--batch_size` 100x32 grey images (the model's fixed input size, so random pixels cost
what digits do) with `--length` + 1 label positions (13 digits and the end token), as the MNIST study trains.
Every part runs once untimed, then `--repeats` times, the parts taking turns so that a busy machine slows all
alike; the table gives the fastest run of each, in seconds:

- encoder: `model.encoder` forward, and backward from the sum of its output;
- sharpener: the sharpener called once per label position on the batch's images at random columns, forward and
  backward from the sum of the patches;
- patch CNN: the patch encoder on one patch per image and label position, forward and backward from the sum
  of its output;
- step: forward and backward of the whole model with its loss, as a training step has them (the optimiser's
  update left out). The decoder's own share (LSTM cell, attention, output layer) is the step less the others.

`--bf16` runs every forward pass under bf16 autocast, as textrec-train's `--bf16` does.
"""

import argparse
import platform
import time

import torch

from textrec.modeling import SharpAttentionConfig, SharpAttentionForTextRecognition

from step_calibration import print_step_table

ATTENTION_TYPES = ("soft", "hard", "sharp")


def part_timings(model: SharpAttentionForTextRecognition, pixel_values: torch.Tensor, labels: torch.Tensor,
                 repeats: int, bf16: bool = False) -> dict[str, float]:
    """The fastest of `repeats` timed runs of each part (see the module docstring), in seconds; forward passes
    under bf16 autocast with `bf16`, as textrec-train's `--bf16` runs them."""
    steps = labels.shape[1]

    def encoder():
        model.zero_grad(set_to_none=True)
        model.encoder(pixel_values).last_hidden_state.sum().backward()

    def step():
        model.zero_grad(set_to_none=True)
        model(pixel_values=pixel_values, labels=labels).loss.backward()

    parts = {"encoder": encoder, "step": step}
    if model.config.attention_type == "sharp":
        decoder = model.decoder
        centres = decoder.patch_encoder.column_centres(24)[torch.randint(24, (steps, len(pixel_values)))]
        patches = [decoder.sharpener(pixel_values, centres[t])[0].detach() for t in range(steps)]

        def sharpener():
            model.zero_grad(set_to_none=True)
            sum(decoder.sharpener(pixel_values, centres[t])[0].sum() for t in range(steps)).backward()

        def patch_cnn():
            model.zero_grad(set_to_none=True)
            sum(decoder.patch_encoder(patch).sum() for patch in patches).backward()

        parts.update(sharpener=sharpener, patch_cnn=patch_cnn)
    timings = {name: [] for name in parts}
    for repeat in range(repeats + 1):
        for name, function in parts.items():
            start = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                function()
            if repeat:
                timings[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in timings.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=["base"], choices=sorted(SharpAttentionConfig.PRESETS))
    parser.add_argument("--attention", nargs="+", default=list(ATTENTION_TYPES), choices=ATTENTION_TYPES)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--length", type=int, default=13, help="Digits per string (label positions less one).")
    parser.add_argument("--repeats", type=int, default=3, help="Timed runs of each part (the fastest counts).")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--bf16", action="store_true",
                        help="bf16 autocast (fast only where the CPU computes bf16 natively: AVX-512 BF16 or AMX).")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    generator = torch.Generator().manual_seed(args.seed)
    pixel_values = torch.rand(args.batch_size, 1, 32, 100, generator=generator)
    labels = torch.randint(3, 13, (args.batch_size, args.length + 1), generator=generator)
    rows = []
    for preset in args.presets:
        for attention in args.attention:
            torch.manual_seed(args.seed)
            config = SharpAttentionConfig.from_preset(preset, attention_type=attention, vocab_size=13)
            model = SharpAttentionForTextRecognition(config).train()
            t = part_timings(model, pixel_values, labels, args.repeats, args.bf16)
            sharp = attention == "sharp"
            rest = t["step"] - t["encoder"] - (t["sharpener"] + t["patch_cnn"] if sharp else 0.0)
            cells = [f"{t['sharpener']:.3f}", f"{t['patch_cnn']:.3f}"] if sharp else ["-", "-"]
            rows.append(f"| {preset} | {attention} | {model.num_parameters():,} | {t['encoder']:.3f} | "
                        f"{' | '.join(cells)} | {rest:.3f} | {t['step']:.3f} | {1 / t['step']:.2f} |")

    print_step_table(
        f"Sharp-attention training step (forward + backward), batches of {args.batch_size} 100x32 images with "
        f"{args.length + 1} label positions, {torch.get_num_threads()} CPU thread(s), "
        f"{'bf16 autocast' if args.bf16 else 'fp32'}, torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()}; seconds, the fastest of {args.repeats} runs",
        ["preset", "attention", "parameters", "encoder", "sharpener", "patch CNN", "rest of the decoder", "step",
         "steps/s"],
        rows, "benchmark_sharp_step", argv,
    )

if __name__ == "__main__":
    main()
