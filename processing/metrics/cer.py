"""Character error rate (CER) as a local `evaluate` metric.

Load it offline by path: ``evaluate.load(textrec.processing.metrics.metric_path("cer"))``.
"""

import datasets
import evaluate

from .error_rate import error_rate
from .text_normalization import NORMALIZATION_ARGS_DOC, normalize_pairs

_DESCRIPTION = """\
Character error rate (CER): the character-level Levenshtein distance between predictions and
references (substitutions + deletions + insertions), summed over all pairs and divided by the
total number of reference characters. 0 is a perfect score; lower is better, and the rate exceeds
1 when predictions insert more characters than the references hold. Computed with jiwer; spaces
are characters like any other and are not stripped.

Empty references are allowed: each predicted character against an empty reference is an
insertion, and the denominator is max(1, total reference characters), so an empty prediction for
an empty reference scores 0 and "abc" for "" scores 3.0.
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
Computes the corpus-level character error rate.

Args:
    predictions (`list[str]`): The recognized strings.
    references (`list[str]`): The ground-truth strings, one per prediction.
"""
    + NORMALIZATION_ARGS_DOC
    + """
Returns:
    cer (`float`): Character edits per reference character. 0 is a perfect score.

Examples:
    >>> cer = evaluate.load(metric_path("cer"))
    >>> cer.compute(predictions=["hallo"], references=["hello"])
    {'cer': 0.2}
    >>> cer.compute(predictions=["Hello!"], references=["hello"], normalization="scene-text")
    {'cer': 0.0}
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CER(evaluate.Metric):
    """Character error rate of predicted strings against reference strings."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            codebase_urls=["https://github.com/jitsi/jiwer"],
            reference_urls=["https://en.wikipedia.org/wiki/Levenshtein_distance"],
        )

    def _compute(
        self, predictions: list[str], references: list[str], normalization: str = "none", charset: str | None = None
    ) -> dict[str, float]:
        predictions, references = normalize_pairs(predictions, references, normalization, charset)
        return {"cer": error_rate(predictions, references, unit="character")}
