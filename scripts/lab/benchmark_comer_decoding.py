"""Speed of CoMER's incremental decoding (cached keys, values and running coverage sums) against
re-running the whole prefix at every step, as the published code does.

    python scripts/lab/benchmark_comer_decoding.py --tokens 50 --repeats 3

Builds a `paper`-preset model (or `--preset`; random weights: speed does not depend on them), encodes a batch of
formula images once, then decodes exactly `--tokens` tokens (the end token is suppressed) with
`generate(use_cache=True)` and `generate(use_cache=False)`, greedily, with transformers' beam search
and with CoMER's bidirectional beam search (whose rescoring pass is the same in both modes), and
prints a Markdown table of the best of `--repeats` timings with the speed-up. Both modes give the
same tokens (checked here too; `tests/test_comer.py` checks the scores).
"""

import argparse
import platform
import sys
import time
from functools import partial

import torch
from textrec.modeling import CoMERConfig, CoMERForFormulaRecognition


def best_time(function, repeats: int) -> tuple[float, torch.Tensor]:
    """The fastest of `repeats` calls, in seconds, and the last result."""
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        timings.append(time.perf_counter() - start)
    return min(timings), result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=50, help="Tokens decoded per formula.")
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--height", type=int, default=128, help="Image height (the feature map is 1/16).")
    parser.add_argument("--width", type=int, default=512, help="Image width.")
    parser.add_argument("--num_beams", type=int, default=10, help="Beams of the beam-search rows (0: none).")
    parser.add_argument("--coverage", default="fusion", choices=["none", "self", "cross", "fusion"])
    parser.add_argument("--preset", default="paper", choices=sorted(CoMERConfig.PRESETS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's).")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    model = CoMERForFormulaRecognition(CoMERConfig.from_preset(args.preset, coverage=args.coverage)).eval()
    pixel_values = torch.rand(args.batch_size, 1, args.height, args.width)
    with torch.no_grad():
        encoder_outputs = model.encoder(pixel_values)

    rows = []
    modes = [("greedy", dict(num_beams=1))]
    if args.num_beams > 1:
        # transformers' beam search, one direction: the cache is reordered with the beams at every step.
        modes.append((f"beam {args.num_beams}", dict(num_beams=args.num_beams, bidirectional_rescoring=False)))
        # CoMER's decoding: beam search in both directions, then rescoring by the opposite direction.
        modes.append((f"bidirectional beam {args.num_beams}", dict(num_beams=args.num_beams)))
    def decode(use_cache: bool, settings: dict) -> torch.Tensor:
        return model.generate(
            encoder_outputs=type(encoder_outputs)(**encoder_outputs),  # generate expands it in place for beams
            max_new_tokens=args.tokens,
            min_new_tokens=args.tokens,
            use_cache=use_cache,
            **settings,
        )

    for name, settings in modes:
        timings, results = {}, {}
        for use_cache in (True, False):
            timings[use_cache], results[use_cache] = best_time(partial(decode, use_cache, settings), args.repeats)
        if not torch.equal(results[True], results[False]):
            raise AssertionError(f"{name}: incremental and full re-run decoding gave different tokens")
        rows.append((name, timings[False], timings[True]))

    print(f"CoMER {args.preset} preset, coverage={args.coverage}, {args.batch_size} image(s) of {args.height}x{args.width} "
          f"({(args.height + 15) // 16}x{(args.width + 15) // 16} features), {args.tokens} tokens, "
          f"{torch.get_num_threads()} CPU thread(s), torch {torch.__version__}, {platform.processor() or platform.machine()}")
    print()
    print("| decoding | full re-run (s) | incremental (s) | speed-up |")
    print("|---|---:|---:|---:|")
    for name, rerun, incremental in rows:
        print(f"| {name} | {rerun:.2f} | {incremental:.2f} | {rerun / incremental:.1f}x |")
    print()
    print("Command: python scripts/lab/benchmark_comer_decoding.py " + " ".join(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
