"""What the incremental corrector saves: greedy decoding time of the TrOCR-CharBERT composite whose corrector
reads only each step's new token (its keys, values and convolution tails cached), against the same model
re-reading the whole prefix at every step, and against plain TrOCR (the same encoder and decoder, no corrector).

    python scripts/lab/benchmark_corrector_decoding.py --lengths 20 60 --output_markdown corrector.md

Each model decodes exactly `length` tokens (`min_new_tokens = max_new_tokens`) for a batch of line images, so the
timings compare equal work whatever the (untrained) weights would read; the incremental and re-reading models
share their weights and give the same tokens (checked here, and in tests/test_trocr_charbert.py).
"""

import argparse
import copy
import shlex
import sys
import time
from pathlib import Path

import torch
from transformers import TrOCRForCausalLM, ViTModel, VisionEncoderDecoderModel

from textrec.modeling import TrOCRCharBertConfig, TrOCRCharBertForTextRecognition


def build_systems(preset: str, combine: str, max_length: int) -> dict[str, torch.nn.Module]:
    torch.manual_seed(0)
    config = TrOCRCharBertConfig.from_preset(preset, vocab_size=100, image_height=32, image_width=384,
                                             max_target_length=max_length + 1, combine=combine)
    incremental = TrOCRCharBertForTextRecognition(config).eval()
    rereading = copy.deepcopy(incremental)
    rereading.config.decoder.incremental_corrector = False
    encoder = ViTModel(copy.deepcopy(config.encoder), add_pooling_layer=False)
    encoder.load_state_dict(incremental.encoder.state_dict())
    decoder = TrOCRForCausalLM(copy.deepcopy(config.decoder.trocr))
    decoder.load_state_dict(incremental.decoder.trocr.state_dict())
    trocr = VisionEncoderDecoderModel(encoder=encoder, decoder=decoder).eval()
    trocr.generation_config = copy.deepcopy(incremental.generation_config)
    return {"TrOCR (no corrector)": trocr, "re-reading corrector": rereading, "incremental corrector": incremental}


def time_decoding(model, pixel_values: torch.Tensor, length: int, repeats: int) -> tuple[float, torch.Tensor]:
    """Best of `repeats` wall-clock seconds for greedy decoding of exactly `length` tokens, and the tokens."""
    settings = dict(max_new_tokens=length, min_new_tokens=length, do_sample=False, num_beams=1)
    with torch.no_grad():
        sequences = model.generate(pixel_values=pixel_values, **settings)  # warm-up
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            model.generate(pixel_values=pixel_values, **settings)
            best = min(best, time.perf_counter() - start)
    return best, sequences


def render_table(rows: list[dict], command: str) -> str:
    lines = ["| tokens | system | ms per batch | lines/s | vs re-reading |", "|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['length']} | {row['system']} | {1000 * row['seconds']:.0f} | {row['lines_per_second']:.1f} | "
                     f"{row['speedup']:.2f}x |")
    return "\n".join(lines) + f"\n\nCommand: `{command}`\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[20, 60], help="Tokens decoded per line.")
    parser.add_argument("--preset", default="base", choices=sorted(TrOCRCharBertConfig.PRESETS))
    parser.add_argument("--combine", default="conv", choices=["add", "mean", "linear", "conv"])
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output_markdown", type=Path)
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    systems = build_systems(args.preset, args.combine, max(args.lengths))
    config = systems["incremental corrector"].config
    pixel_values = torch.randn(args.batch_size, config.num_channels, *config.image_size, generator=torch.Generator().manual_seed(0))
    rows = []
    for length in args.lengths:
        timings, readings = {}, {}
        for name, model in systems.items():
            timings[name], readings[name] = time_decoding(model, pixel_values, length, args.repeats)
        if not torch.equal(readings["incremental corrector"], readings["re-reading corrector"]):
            raise AssertionError("The incremental corrector read other tokens than the re-reading one.")
        for name, seconds in timings.items():
            rows.append(dict(length=length, system=name, seconds=seconds, lines_per_second=args.batch_size / seconds,
                             speedup=timings["re-reading corrector"] / seconds))
    command = shlex.join(["python", "scripts/lab/benchmark_corrector_decoding.py", *argv])
    table = render_table(rows, command)
    print(table)
    if args.output_markdown:
        args.output_markdown.write_text(table)
    return rows


if __name__ == "__main__":
    run()
