"""Mean attention entropy per image, as a local `evaluate` metric.

Load it offline by path: ``evaluate.load(textrec.processing.metrics.metric_path("attention_entropy"))``.
"""

import datasets
import evaluate
import numpy as np

_DESCRIPTION = """\
Mean attention entropy: for each image, the average over its decoding steps of the entropy
H[a_t] = -sum_i a_{t,i} log a_{t,i} (natural logarithm, 0 log 0 = 0) of the attention distribution a_t
over the encoder positions; then the mean over images. Lower is sharper: 0 when every step attends to
one position, log(n) when a step spreads evenly over n positions. Pass only the valid steps (up to and
including the end token) and the valid positions (not padding) of each image.
"""

_CITATION = """\
@inproceedings{xu2015show,
  title = {Show, Attend and Tell: Neural Image Caption Generation with Visual Attention},
  author = {Xu, Kelvin and Ba, Jimmy and Kiros, Ryan and Cho, Kyunghyun and Courville, Aaron and
            Salakhudinov, Ruslan and Zemel, Rich and Bengio, Yoshua},
  booktitle = {International Conference on Machine Learning},
  pages = {2048--2057},
  year = {2015}
}
"""

_KWARGS_DESCRIPTION = """\
Computes the mean over images of the mean entropy of their attention distributions.

Args:
    attentions (`list[list[list[float]]]`): per image, per decoding step, the attention weights over the
        encoder positions (each step's weights sum to 1; images may differ in steps and positions).

Returns:
    mean_attention_entropy (`float`): in nats, >= 0.

Examples:
    >>> entropy = evaluate.load(metric_path("attention_entropy"))
    >>> entropy.compute(attentions=[[[1.0, 0.0], [0.5, 0.5]]])
    {'mean_attention_entropy': 0.34657359027997264}
"""


def image_attention_entropy(steps: list[list[float]]) -> float:
    """The mean entropy (nats) of one image's attention distributions, one per step."""
    entropies = []
    for weights in steps:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.size == 0 or not np.isclose(weights.sum(), 1.0, atol=1e-3) or (weights < 0).any():
            raise ValueError(f"Each step's attention weights must be non-negative and sum to 1, got {weights.tolist()}")
        positive = weights[weights > 0]
        entropies.append(float(-(positive * np.log(positive)).sum()))
    if not entropies:
        raise ValueError("An image has no decoding step: pass at least one attention distribution per image.")
    return float(np.mean(entropies))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AttentionEntropy(evaluate.Metric):
    """Mean per-image entropy of attention distributions."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"attentions": datasets.Sequence(datasets.Sequence(datasets.Value("float64")))}),
        )

    def _compute(self, attentions: list[list[list[float]]]) -> dict[str, float]:
        if not attentions:
            raise ValueError("No attentions to score: pass at least one image's attention distributions.")
        return {"mean_attention_entropy": float(np.mean([image_attention_entropy(steps) for steps in attentions]))}
