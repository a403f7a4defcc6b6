"""How well a CTC reader's line confidence predicts that the line is read right, on real images.

    python scripts/lab/confidence_calibration.py --model crnn-lines --limit 400 \
        --output_markdown scripts/lab/results/confidence_calibration.md \
        --output_figure scripts/lab/reports/confidence_calibration.png

Reads the real development sets of `real_sets.py` (receipts, historic print, scene words; never trained on) with
`recognize(..., output_confidences=True)` and scores each line right or wrong by exact match under its set's
protocol (case-insensitive for receipts and scene words, whose protocol also keeps letters and digits only).
Beside the library's line confidence (`textrec.processing.pipeline_text_recognition`) it rates the other ways of
making one number of a line's frame posteriors and character confidences, so that the choice can be checked:
the best path's probability (product over frames), the mean and geometric mean of the frames' posteriors, the
product and the minimum of the characters' confidences. A line confidence is calibrated when, among lines given
about p, a share p is read right: the table bins lines by confidence (tenths) and gives each bin's accuracy; the
expected calibration error (ECE) is the lines-weighted mean gap between a bin's confidence and its accuracy, the
Brier score the mean squared error of confidence against right (1) or wrong (0), and the AUROC how well the
confidence ranks right lines above wrong ones (0.5: not at all). `--limit N` reads N lines of each set, evenly
spaced through it.
"""

import argparse
import logging
import shlex
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from textrec.processing.inference import LineReading, load_recognizer, recognize
from textrec.processing.metrics.text_normalization import normalize_texts

from real_sets import REAL_DATA_DIR, REAL_SETS, load_real_set

logger = logging.getLogger("textrec.confidence_calibration")

BIN_EDGES = np.linspace(0.0, 1.0, 11)
"""Confidence bins: tenths."""


def frame_product(reading: LineReading) -> float:
    return float(np.prod(np.asarray(reading.alignment.frame_probabilities, dtype=np.float64)))


def frame_mean(reading: LineReading) -> float:
    return float(np.mean(reading.alignment.frame_probabilities))


def frame_geometric_mean(reading: LineReading) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(reading.alignment.frame_probabilities, dtype=np.float64)))))


def character_product(reading: LineReading) -> float:
    return float(np.prod([confidence for _, confidence in reading.characters], dtype=np.float64))


def character_minimum(reading: LineReading) -> float:
    return float(min((confidence for _, confidence in reading.characters), default=1.0))


CANDIDATES = {
    "product of frame posteriors (best path)": frame_product,
    "mean of frame posteriors": frame_mean,
    "geometric mean of frame posteriors": frame_geometric_mean,
    "product of character confidences": character_product,
    "minimum of character confidences": character_minimum,
}
"""Ways to make a line's confidence of its CTC best path; the library uses one (`library_candidate`)."""


def library_candidate(readings: list[LineReading]) -> str:
    """The name of the candidate that gives the library's confidence on every line (it must be one of them)."""
    for name, confidence in CANDIDATES.items():
        if all(abs(confidence(reading) - reading.confidence) <= 1e-6 * max(1.0, reading.confidence) for reading in readings):
            return name
    raise AssertionError("the library's line confidence is none of CANDIDATES: add it there")


def calibration_bins(confidences: np.ndarray, right: np.ndarray) -> list[tuple[float, float, int, float, float]]:
    """`(low, high, lines, mean confidence, accuracy)` per bin of `BIN_EDGES` holding lines."""
    bins = np.clip(np.digitize(confidences, BIN_EDGES[1:-1]), 0, len(BIN_EDGES) - 2)
    return [(BIN_EDGES[b], BIN_EDGES[b + 1], int((bins == b).sum()), float(confidences[bins == b].mean()),
             float(right[bins == b].mean())) for b in range(len(BIN_EDGES) - 1) if (bins == b).any()]


def calibration_scores(confidences: np.ndarray, right: np.ndarray) -> dict[str, float]:
    """ECE over `BIN_EDGES`, Brier score and AUROC (NaN where every line is right or every one wrong)."""
    ece = sum(lines * abs(mean - accuracy) for _, _, lines, mean, accuracy in calibration_bins(confidences, right))
    auroc = roc_auc_score(right, confidences) if 0 < right.sum() < len(right) else float("nan")
    return {"ECE": ece / len(right), "Brier": float(np.mean((confidences - right) ** 2)), "AUROC": float(auroc)}


def read_sets(model_name: str, limit: int | None, data_dir: Path) -> dict[str, tuple[list[LineReading], np.ndarray]]:
    """Per real set: the readings of its development lines (`limit` of them, evenly spaced) and whether each is
    right (exact match under the set's protocol)."""
    model, processor = load_recognizer(model_name)
    results = {}
    for name, real_set in REAL_SETS.items():
        paths, references = load_real_set(name, "development", data_dir)
        if limit and limit < len(paths):
            chosen = np.linspace(0, len(paths) - 1, limit).round().astype(int)
            paths, references = [paths[i] for i in chosen], [references[i] for i in chosen]
        result = recognize(model, processor, [str(path) for path in paths], batch_size=32, progress=False,
                           output_confidences=True)
        predictions, references = (normalize_texts(texts, real_set.normalization, real_set.charset)
                                   for texts in (result.texts, references))
        right = np.array([prediction == reference for prediction, reference in zip(predictions, references)], dtype=float)
        results[name] = (result.readings, right)
        logger.info("%s: %d lines, %.1f%% right", name, len(right), 100 * right.mean())
    return results


def markdown_report(model_name: str, results, library: str, command: str) -> str:
    everything = [reading for readings, _ in results.values() for reading in readings]
    right = np.concatenate([right for _, right in results.values()])
    library_confidences = np.array([reading.confidence for reading in everything])
    lines = [
        f"# Line confidence of `{model_name}` on real development lines",
        "",
        f"Exact match under each set's protocol; {len(right)} lines ({', '.join(f'{name} {len(r)}' for name, (_, r) in results.items())}), "
        f"{100 * right.mean():.1f}% right. The library's line confidence is the **{library}**.",
        "",
        "## Accuracy by confidence (the library's confidence, every set together)",
        "",
        "| confidence | lines | mean confidence | accuracy |",
        "|---|---|---|---|",
        *(f"| {low:.1f}-{high:.1f} | {count} | {mean:.3f} | {accuracy:.3f} |"
          for low, high, count, mean, accuracy in calibration_bins(library_confidences, right)),
        "",
        "## The candidates (every set together, and per set: ECE / AUROC)",
        "",
        f"| line confidence | ECE | Brier | AUROC | {' | '.join(results)} |",
        f"|---|---|---|---|{'---|' * len(results)}",
    ]
    for name, confidence in CANDIDATES.items():
        scores = calibration_scores(np.array([confidence(reading) for reading in everything]), right)
        per_set = [calibration_scores(np.array([confidence(reading) for reading in readings]), set_right)
                   for readings, set_right in results.values()]
        label = f"**{name}** (library)" if name == library else name
        lines.append(f"| {label} | {scores['ECE']:.3f} | {scores['Brier']:.3f} | {scores['AUROC']:.3f} | "
                     + " | ".join(f"{s['ECE']:.3f} / {s['AUROC']:.3f}" for s in per_set) + " |")
    lines += ["", f"Command: `{command}`", ""]
    return "\n".join(lines)


def draw_figure(model_name: str, results, path: Path) -> None:
    """One reliability diagram per candidate: accuracy against mean confidence per bin, a curve per set and one for
    every set together, and the diagonal a calibrated confidence follows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    everything = [reading for readings, _ in results.values() for reading in readings]
    right = np.concatenate([right for _, right in results.values()])
    figure, axes = plt.subplots(1, len(CANDIDATES), figsize=(4 * len(CANDIDATES), 4.2), sharey=True)
    for axis, (name, confidence) in zip(axes, CANDIDATES.items()):
        axis.plot([0, 1], [0, 1], color="0.7", linestyle="--", linewidth=1)
        curves = [*((set_name, readings, set_right) for set_name, (readings, set_right) in results.items()),
                  ("all sets", everything, right)]
        for label, readings, set_right in curves:
            bins = calibration_bins(np.array([confidence(reading) for reading in readings]), set_right)
            style = dict(color="black", linewidth=2) if label == "all sets" else dict(linewidth=1, alpha=0.8)
            axis.plot([b[3] for b in bins], [b[4] for b in bins], marker="o", markersize=3, label=label, **style)
        ece = calibration_scores(np.array([confidence(reading) for reading in everything]), right)["ECE"]
        axis.set_title(f"{name}\nECE {ece:.3f}", fontsize=9)
        axis.set_xlabel("confidence (bin mean)")
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
    axes[0].set_ylabel("lines read exactly right")
    axes[0].legend(fontsize=8, loc="upper left")
    figure.suptitle(f"{model_name}: line confidence against accuracy, real development lines", fontsize=11)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="crnn-lines", help="A released CTC line model (or a folder).")
    parser.add_argument("--limit", type=int, help="Read N lines of each set, evenly spaced (default: every line).")
    parser.add_argument("--data_dir", type=Path, default=REAL_DATA_DIR, help="The shared real-data folder.")
    parser.add_argument("--output_markdown", type=Path, help="Write the tables to this file.")
    parser.add_argument("--output_figure", type=Path, help="Write the reliability diagrams to this PNG file.")
    return parser


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = build_parser().parse_args(argv)
    results = read_sets(args.model, args.limit, args.data_dir)
    if any(reading.alignment is None for readings, _ in results.values() for reading in readings):
        raise SystemExit(f"{args.model} does not read by CTC best path: its candidates need the frames' posteriors")
    library = library_candidate([reading for readings, _ in results.values() for reading in readings])
    command = "python scripts/lab/confidence_calibration.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    report = markdown_report(args.model, results, library, command)
    print(report)
    if args.output_markdown:
        args.output_markdown.parent.mkdir(parents=True, exist_ok=True)
        args.output_markdown.write_text(report)
    if args.output_figure:
        draw_figure(args.model, results, args.output_figure)


if __name__ == "__main__":
    main()
