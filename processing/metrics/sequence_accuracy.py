"""Sequence accuracy (exact match of whole strings) as a local `evaluate` metric.

Load it offline by path: ``evaluate.load(textrec.processing.metrics.metric_path("sequence_accuracy"))``.
"""

import datasets
import evaluate

from .text_normalization import NORMALIZATION_ARGS_DOC, normalize_pairs

_DESCRIPTION = """\
Sequence accuracy: the fraction of predictions equal to their reference as whole strings, after
the chosen normalization. 1 is a perfect score; higher is better. With normalization="scene-text"
this is the word accuracy reported on scene-text benchmarks (IIIT5k, SVT, IC13, IC15, SVTP, CUTE80)
under the protocol used by PARSeq. An empty prediction matches an empty reference.
"""

_CITATION = """\
@inproceedings{bautista2022parseq,
  title = {Scene Text Recognition with Permuted Autoregressive Sequence Models},
  author = {Bautista, Darwin and Atienza, Rowel},
  booktitle = {European Conference on Computer Vision},
  pages = {178--196},
  year = {2022},
  publisher = {Springer Nature Switzerland}
}
"""

_KWARGS_DESCRIPTION = (
    """\
Computes the fraction of exactly matching strings.

Args:
    predictions (`list[str]`): The recognized strings.
    references (`list[str]`): The ground-truth strings, one per prediction.
"""
    + NORMALIZATION_ARGS_DOC
    + """
Returns:
    sequence_accuracy (`float`): Matching strings over all strings, in [0, 1].

Examples:
    >>> accuracy = evaluate.load(metric_path("sequence_accuracy"))
    >>> accuracy.compute(predictions=["Hello!", "world"], references=["hello", "word"], normalization="scene-text")
    {'sequence_accuracy': 0.5}
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SequenceAccuracy(evaluate.Metric):
    """Exact-match rate of predicted strings against reference strings."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            codebase_urls=["https://github.com/baudm/parseq"],
        )

    def _compute(
        self, predictions: list[str], references: list[str], normalization: str = "none", charset: str | None = None
    ) -> dict[str, float]:
        predictions, references = normalize_pairs(predictions, references, normalization, charset)
        matches = sum(prediction == reference for prediction, reference in zip(predictions, references))
        return {"sequence_accuracy": matches / len(references)}
