"""Beam search ranked by the GNMT length penalty (Wu et al., 2016, "Google's Neural Machine Translation
System"): a finished hypothesis Y scores log P(Y) / lp(Y) with lp(Y) = ((5 + |Y|) / 6) ** alpha.

transformers' beam search divides by |Y| ** length_penalty instead, in two places: when a finished
hypothesis is ranked (`_update_finished_beams`) and when it estimates whether a running beam can
still beat the finished ones (`_check_early_stop_heuristic`). `GNMTLengthPenaltyMixin` replaces the
divisor in both and keeps everything else of `generate()`'s beam search (cache reordering, logits
processors, stopping criteria, `num_return_sequences`, `sequences_scores`).
"""

import torch
from transformers import GenerationMixin


def gnmt_length_penalty(length: int, alpha: float) -> float:
    """((5 + length) / 6) ** alpha: 1 for a one-token hypothesis, growing sub-linearly with length."""
    return ((5.0 + length) / 6.0) ** alpha


class GNMTLengthPenaltyMixin:
    """Makes `generate()`'s beam search use the GNMT length penalty, with
    `generation_config.length_penalty` as its alpha (0 ranks by log-probability alone).

    |Y| counts the generated tokens, the end token included, not the decoder start token. List the
    mixin before the `PreTrainedModel` subclass and `GenerationMixin` among the model's bases.

    With `early_stopping="never"` the search stops only once no running beam can beat the worst of
    the `num_beams` finished hypotheses, even at the maximum length: the bound of tensor2tensor's
    beam search, so the returned hypothesis is the best-scoring one the beams reach.
    """

    def _update_finished_beams(
        self, *, topk_log_probs: torch.Tensor, cur_len: int, decoder_prompt_len: int, length_penalty: float, **kwargs
    ):
        # The candidates end at position `cur_len`, so they hold cur_len + 1 - prompt generated tokens.
        penalty = gnmt_length_penalty(cur_len + 1 - decoder_prompt_len, length_penalty)
        return super()._update_finished_beams(
            topk_log_probs=topk_log_probs / penalty,
            cur_len=cur_len,
            decoder_prompt_len=decoder_prompt_len,
            length_penalty=0.0,  # already applied
            **kwargs,
        )

    @staticmethod
    def _check_early_stop_heuristic(
        *,
        running_beam_scores: torch.Tensor,
        cur_len: int,
        max_length: int,
        decoder_prompt_len: int,
        early_stopping: bool | str,
        length_penalty: float,
        **kwargs,
    ):
        # The hypothetical length transformers' heuristic assumes, under the GNMT penalty.
        if early_stopping == "never" and length_penalty > 0.0:
            best_hypothetical_length = max_length - decoder_prompt_len
        else:
            best_hypothetical_length = cur_len - decoder_prompt_len
        penalty = gnmt_length_penalty(best_hypothetical_length, length_penalty)
        return GenerationMixin._check_early_stop_heuristic(
            running_beam_scores=running_beam_scores / penalty,
            cur_len=cur_len,
            max_length=max_length,
            decoder_prompt_len=decoder_prompt_len,
            early_stopping=early_stopping,
            length_penalty=0.0,  # already applied
            **kwargs,
        )
