"""Word error rate (WER) as a local `evaluate` metric.

Load it offline by path: ``evaluate.load(textrec.processing.metrics.metric_path("wer"))``.
"""

import datasets
import evaluate

from .error_rate import error_rate
from .text_normalization import NORMALIZATION_ARGS_DOC, normalize_pairs

_DESCRIPTION = """\
Word error rate (WER): the word-level Levenshtein distance between predictions and references
(substitutions + deletions + insertions), summed over all pairs and divided by the total number of
reference words. Words are separated by any run of whitespace; case and punctuation are part of a
word unless a normalization removes them. 0 is a perfect score; lower is better. Computed with
jiwer.

The "scene-text" normalization removes spaces (they are outside its default charset), so each
string becomes a single word and WER becomes the rate of wrong strings; pass a charset that
includes " " to keep word boundaries.

Empty references (no words) are allowed: each predicted word against an empty reference is an
insertion, and the denominator is max(1, total reference words).
"""

_CITATION = """\
@inproceedings{morris2004,
  author = {Morris, Andrew and Maier, Viktoria and Green, Phil},
  year = {2004},
  month = {01},
  title = {From WER and RIL to MER and WIL: improved evaluation measures for connected speech recognition.},
  booktitle = {Proc. Interspeech 2004}
}
"""

_KWARGS_DESCRIPTION = (
    """\
Computes the corpus-level word error rate.

Args:
    predictions (`list[str]`): The recognized strings.
    references (`list[str]`): The ground-truth strings, one per prediction.
"""
    + NORMALIZATION_ARGS_DOC
    + """
Returns:
    wer (`float`): Word edits per reference word. 0 is a perfect score.

Examples:
    >>> wer = evaluate.load(metric_path("wer"))
    >>> wer.compute(predictions=["the cat sat down"], references=["the cat sat"])
    {'wer': 0.3333333333333333}
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class WER(evaluate.Metric):
    """Word error rate of predicted strings against reference strings."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            codebase_urls=["https://github.com/jitsi/jiwer"],
            reference_urls=["https://en.wikipedia.org/wiki/Word_error_rate"],
        )

    def _compute(
        self, predictions: list[str], references: list[str], normalization: str = "none", charset: str | None = None
    ) -> dict[str, float]:
        predictions, references = normalize_pairs(predictions, references, normalization, charset)
        return {"wer": error_rate(predictions, references, unit="word")}
