"""Confidence intervals of the studies' tables."""

import math


def percent_with_interval(hits: int, total: int) -> str:
    """`hits / total` as a percentage with its 95% Wilson interval, as in "70.5 (67.6-73.2)"; "-" for no trials."""
    if total == 0:
        return "-"
    p, z = hits / total, 1.96
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return f"{100 * p:.1f} ({100 * max(0.0, centre - half):.1f}-{100 * min(1.0, centre + half):.1f})"
