"""Text-recognition metrics shipped as local `evaluate` modules, and their `Seq2SeqTrainer` glue.

The metrics are files of this folder, loaded by path so that no network is needed:

    >>> import evaluate
    >>> cer = evaluate.load(metric_path("cer"))  # or load_metric("cer")
    >>> cer.compute(predictions=["hallo"], references=["hello"])
    {'cer': 0.2}

Each metric takes ``normalization="none"`` (exact strings, the default) or ``"scene-text"`` (the
PARSeq protocol: lower-case, keep only ``[0-9a-z]``; see ``text_normalization.py``), and with
``"scene-text"`` an optional ``charset``. The metric scripts import only each other's helper files
(``error_rate.py``, ``text_normalization.py``), never this package, so that `evaluate` can copy them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import evaluate
import numpy as np

from .text_normalization import normalize_texts

if TYPE_CHECKING:
    from transformers import EvalPrediction

METRICS = ("cer", "wer", "sequence_accuracy")
ATTENTION_METRICS = ("attention_entropy",)
"""Metrics of a model's attention distributions rather than of its text (not in `make_compute_metrics`)."""
FORMULA_METRICS = ("exprate",)
"""Metrics of LaTeX token sequences (`make_compute_metrics(..., extra_metrics=FORMULA_METRICS)`)."""


def metric_path(name: str) -> str:
    """Path of a metric script, for ``evaluate.load(metric_path(name))``.

    Args:
        name: One of ``METRICS`` (``"cer"``, ``"wer"``, ``"sequence_accuracy"``), ``ATTENTION_METRICS``
            (``"attention_entropy"``) or ``FORMULA_METRICS`` (``"exprate"``).

    Returns:
        The absolute path of ``<name>.py`` in this folder.

    Raises:
        ValueError: For a name that is not in ``METRICS``, ``ATTENTION_METRICS`` or ``FORMULA_METRICS``.
    """
    known = METRICS + ATTENTION_METRICS + FORMULA_METRICS
    if name not in known:
        raise ValueError(f"Unknown metric {name!r}: expected one of {known}.")
    return str(Path(__file__).resolve().parent / f"{name}.py")


def load_metric(name: str, keep_in_memory: bool = True, **kwargs: Any) -> evaluate.EvaluationModule:
    """Load a textrec metric from its local file; no network is used.

    Args:
        name: One of ``METRICS``, ``ATTENTION_METRICS`` or ``FORMULA_METRICS``.
        keep_in_memory: Keep added predictions in memory (the default here) rather than in Arrow
            files under the Hugging Face cache, which `evaluate` needs only for ``num_process > 1``.
        **kwargs: Passed to ``evaluate.load`` (for example ``cache_dir``).

    Returns:
        The loaded metric, ready for ``compute``/``add_batch``.
    """
    return evaluate.load(metric_path(name), keep_in_memory=keep_in_memory, **kwargs)


def evaluate_texts(predictions: list[str], references: list[str], normalization: str = "none") -> dict[str, float]:
    """CER, WER and sequence accuracy (`METRICS`) of predictions against references."""
    return {
        name: load_metric(name).compute(predictions=predictions, references=references, normalization=normalization)[name]
        for name in METRICS
    }


def _pad_token_id(decoder: Any) -> int:
    """The pad id of a tokenizer, or of the ``.tokenizer`` of a processor."""
    for candidate in (decoder, getattr(decoder, "tokenizer", None)):
        pad_token_id = getattr(candidate, "pad_token_id", None)
        if pad_token_id is not None:
            return pad_token_id
    raise ValueError(
        f"{type(decoder).__name__} has no `pad_token_id`, on itself or on a `.tokenizer`; "
        "it is needed to replace the -100 of ignored positions before decoding."
    )


def _decode(decoder: Any, token_ids: Any, pad_token_id: int, field: str) -> list[str]:
    """Decode a (batch, length) array of token ids in which -100 marks ignored positions."""
    token_ids = np.asarray(token_ids)
    if token_ids.ndim != 2 or not np.issubdtype(token_ids.dtype, np.integer):
        raise ValueError(
            f"Expected `EvalPrediction.{field}` to hold token ids of shape (batch, length), got an array "
            f"of dtype {token_ids.dtype} and shape {token_ids.shape}. Set `predict_with_generate=True` in "
            "`Seq2SeqTrainingArguments` so that predictions are generated ids, not logits."
        )
    token_ids = np.where(token_ids == -100, pad_token_id, token_ids)
    return decoder.batch_decode(token_ids.tolist(), skip_special_tokens=True)


def make_compute_metrics(
    tokenizer_or_processor: Any,
    normalization: str = "none",
    charset: str | None = None,
    extra_metrics: tuple[str, ...] = (),
) -> Callable[[EvalPrediction], dict[str, float]]:
    """Build a ``compute_metrics`` function for ``Seq2SeqTrainer(predict_with_generate=True)``.

    The returned function takes the trainer's ``EvalPrediction``, whose ``predictions`` are
    generated ids (padded with -100 across batches) and whose ``label_ids`` hold -100 at ignored
    positions. It replaces -100 by the pad id (decoding -100 raises ``OverflowError``), decodes
    both with ``batch_decode(..., skip_special_tokens=True)``, and scores the strings.

    Args:
        tokenizer_or_processor: Anything with ``batch_decode(ids, skip_special_tokens=True)`` and a
            ``pad_token_id``, on itself or on its ``.tokenizer`` (a tokenizer or a processor).
        normalization: ``"none"`` (exact strings) or ``"scene-text"``, applied to every metric.
        charset: With ``"scene-text"`` only: the characters kept (default ``[0-9a-z]``).
        extra_metrics: Metrics of ``FORMULA_METRICS`` (``"exprate"``), computed on the decoded strings
            without normalization; all their results are returned.

    Returns:
        ``compute_metrics(eval_prediction) -> {"cer": float, "wer": float, "sequence_accuracy": float}``,
        plus the results of ``extra_metrics``.

    Raises:
        ValueError: When no pad id is found or the normalization arguments are invalid (at once,
            not at the first evaluation).
    """
    pad_token_id = _pad_token_id(tokenizer_or_processor)
    normalize_texts([], normalization, charset)  # Validates the arguments before training starts.
    unknown = [name for name in extra_metrics if name not in FORMULA_METRICS]
    if unknown:
        raise ValueError(f"Unknown extra metrics {unknown}: expected some of {FORMULA_METRICS}.")
    metrics = {name: load_metric(name) for name in METRICS}
    extras = [load_metric(name) for name in extra_metrics]

    def compute_metrics(eval_prediction: EvalPrediction) -> dict[str, float]:
        predictions = _decode(tokenizer_or_processor, eval_prediction.predictions, pad_token_id, "predictions")
        references = _decode(tokenizer_or_processor, eval_prediction.label_ids, pad_token_id, "label_ids")
        results = {
            name: metric.compute(
                predictions=predictions, references=references, normalization=normalization, charset=charset
            )[name]
            for name, metric in metrics.items()
        }
        for metric in extras:
            results.update(metric.compute(predictions=predictions, references=references))
        return results

    return compute_metrics
