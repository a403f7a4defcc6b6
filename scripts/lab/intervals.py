"""Confidence intervals of the studies' tables."""

import math

import numpy as np


def percent_with_interval(hits: int, total: int) -> str:
    """`hits / total` as a percentage with its 95% Wilson interval, as in "70.5 (67.6-73.2)"; "-" for no trials."""
    if total == 0:
        return "-"
    p, z = hits / total, 1.96
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return f"{100 * p:.1f} ({100 * max(0.0, centre - half):.1f}-{100 * min(1.0, centre + half):.1f})"


def paired_accuracy_difference(correct: list[bool], baseline_correct: list[bool], samples: int = 10_000,
                               seed: int = 0) -> str:
    """The accuracy of `correct` minus that of `baseline_correct` (one entry per test item, the same items in the
    same order), in points, with a 95% paired bootstrap interval (the items resampled, both systems' answers on
    the same items), as in "+4.8 (+2.1 to +7.5)"."""
    if len(correct) != len(baseline_correct) or not correct:
        raise ValueError(f"Compare answers on the same items: got {len(correct)} and {len(baseline_correct)}.")
    differences = np.asarray(correct, dtype=float) - np.asarray(baseline_correct, dtype=float)
    resampled = np.random.default_rng(seed).integers(len(differences), size=(samples, len(differences)))
    low, high = np.percentile(differences[resampled].mean(axis=1), [2.5, 97.5])
    return f"{100 * differences.mean():+.1f} ({100 * low:+.1f} to {100 * high:+.1f})"
