"""Expression recognition rate (ExpRate) of formulas, and the rates within 1, 2 and 3 token errors, as a
local `evaluate` metric.

Load it offline by path: ``evaluate.load(textrec.processing.metrics.metric_path("exprate"))``.
"""

import datasets
import evaluate

_DESCRIPTION = """\
ExpRate: the fraction of formulas whose predicted LaTeX token sequence equals the reference exactly,
the measure of the CROHME competitions. The rates within 1, 2 and 3 errors (the "<=1", "<=2", "<=3"
columns of the literature) count formulas whose token-level Levenshtein distance to the reference
(substitutions + deletions + insertions) is at most 1, 2 or 3. Strings are split into tokens at
whitespace, the form the LaTeX tokenizer decodes to ("\\frac { a } { b }"); no other normalisation
is applied. Higher is better; each rate is in [0, 1].
"""

_CITATION = """\
@inproceedings{zhao2022comer,
  title = {CoMER: Modeling Coverage for Transformer-based Handwritten Mathematical Expression Recognition},
  author = {Zhao, Wenqi and Gao, Liangcai},
  booktitle = {European Conference on Computer Vision},
  year = {2022}
}
"""

_KWARGS_DESCRIPTION = """\
Computes ExpRate and the rates within 1, 2 and 3 token errors.

Args:
    predictions (`list[str]`): The recognized formulas, tokens separated by whitespace.
    references (`list[str]`): The ground-truth formulas, one per prediction.

Returns:
    exprate (`float`): Exactly matching formulas over all formulas.
    exprate_within_1 (`float`): Formulas at most 1 token edit away.
    exprate_within_2 (`float`): Formulas at most 2 token edits away.
    exprate_within_3 (`float`): Formulas at most 3 token edits away.

Examples:
    >>> exprate = evaluate.load(metric_path("exprate"))
    >>> exprate.compute(predictions=["x ^ { 2 }", "a + b"], references=["x ^ { 2 }", "a - b"])
    {'exprate': 0.5, 'exprate_within_1': 1.0, 'exprate_within_2': 1.0, 'exprate_within_3': 1.0}
"""

MAX_TOLERANCE = 3


def token_edit_distance(prediction: list[str], reference: list[str]) -> int:
    """Levenshtein distance between two token sequences."""
    previous = list(range(len(reference) + 1))
    for row, predicted in enumerate(prediction, start=1):
        current = [row]
        for column, expected in enumerate(reference, start=1):
            current.append(
                min(previous[column] + 1, current[column - 1] + 1, previous[column - 1] + (predicted != expected))
            )
        previous = current
    return previous[-1]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ExpRate(evaluate.Metric):
    """Exact-match and near-match rates of predicted formulas against reference formulas."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            codebase_urls=["https://github.com/Green-Wood/CoMER"],
        )

    def _compute(self, predictions: list[str], references: list[str]) -> dict[str, float]:
        distances = [
            token_edit_distance(prediction.split(), reference.split())
            for prediction, reference in zip(predictions, references)
        ]
        total = max(1, len(distances))
        rates = {"exprate": sum(distance == 0 for distance in distances) / total}
        for tolerance in range(1, MAX_TOLERANCE + 1):
            rates[f"exprate_within_{tolerance}"] = sum(distance <= tolerance for distance in distances) / total
        return rates
