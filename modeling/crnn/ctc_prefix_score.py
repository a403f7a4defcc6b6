# Copied from modeling/common/ctc_prefix_score.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""Joint CTC-attention decoding: the attention decoder's next-token scores combined with CTC prefix scores
(Watanabe, Hori, Kim, Hershey & Hayashi 2017, "Hybrid CTC/Attention Architecture for End-to-End Speech
Recognition", section 3.3; ESPnet's `CTCPrefixScore`).

A hypothesis h (tokens after the decoder start) and a candidate next token c score

    (1 - ctc_weight) * log p_att(c | h) + ctc_weight * (psi(h c) - psi(h))

where psi(h) is the CTC prefix score, the log probability under the CTC head that the line's labelling
begins with h, and psi(h eos) is the log probability that it is exactly h. Summed over the steps of a
hypothesis (as greedy search and beam search do), the CTC terms telescope to ctc_weight * psi(h): the
attention decoder's fluency and CTC's monotonic alignment vote together, which stops the decoder from
dropping or repeating characters on long lines.

psi is computed by the CTC forward recursion over the encoder positions, extended by one token per step:
r_t^n(h) and r_t^b(h), the log probabilities of the first t positions collapsing to h and ending in a
non-blank or a blank. `CTCPrefixScoreLogitsProcessor` keeps them for every live hypothesis, keyed by its
tokens, so that beam search may reorder, drop and duplicate hypotheses between steps.
"""

import torch
from transformers import LogitsProcessor

NEGATIVE_INFINITY = float("-inf")


def shifted(values: torch.Tensor, first: torch.Tensor | float) -> torch.Tensor:
    """`values (..., T)` moved one position right along the last axis, `first` (a number, or `(...)`) in front:
    `[first, v_0, ..., v_T-2]`."""
    front = torch.as_tensor(first, dtype=values.dtype, device=values.device)
    front = front[..., None].expand(*values.shape[:-1], 1) if front.dim() else front.expand(*values.shape[:-1], 1)
    return torch.cat([front, values[..., :-1]], dim=-1)


def extend_prefixes(
    log_probs: torch.Tensor,
    non_blank: torch.Tensor,
    blank: torch.Tensor,
    last_tokens: torch.Tensor,
    candidates: torch.Tensor,
    blank_token_id: int,
    source_lengths: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of the CTC prefix recursion for `batch` hypotheses h and `num_candidates` next tokens c each:

        r_t^n(h c) = logaddexp(r_{t-1}^n(h c), phi_{t-1}) + x_t(c)        phi_t = r_t^b(h) if c ends h,
        r_t^b(h c) = logaddexp(r_{t-1}^n(h c), r_{t-1}^b(h c)) + x_t(blank)        else logaddexp(r_t^n(h), r_t^b(h))
        psi(h c) = logsumexp(r_0^n(h c), phi_0 + x_1(c), ..., phi_{T-2} + x_{T-1}(c))   over the line's T positions

    Both recursions are linear in probability, so each is one cumulative log-sum-exp over the positions
    (`r_t = S_t + logcumsumexp(terms - S)` with `S` the cumulative sum of the emitted log probabilities), not a
    loop over them.

    Args:
        log_probs: `(batch, source_length, vocab_size)` CTC log probabilities (float64 keeps the cumulative sums
            exact enough).
        non_blank, blank: `(batch, source_length)` r^n and r^b of each hypothesis h.
        last_tokens: `(batch,)` the last token of each h, -1 for the empty hypothesis.
        candidates: `(batch, num_candidates)` token ids c (never the blank).
        source_lengths: `(batch,)` real positions of each line; what follows is padding, and ignored.

    Returns:
        psi(h c) `(batch, num_candidates)`, and r^n, r^b of h c, each `(batch, num_candidates, source_length)`.
    """
    batch, source_length, _ = log_probs.shape
    emit = log_probs.gather(2, candidates[:, None, :].expand(batch, source_length, -1)).transpose(1, 2)
    emit_blank = log_probs[:, None, :, blank_token_id]
    phi = torch.logaddexp(non_blank, blank)[:, None, :].expand(-1, candidates.shape[1], -1)
    phi = torch.where((candidates == last_tokens[:, None])[..., None], blank[:, None, :], phi)
    empty = (last_tokens < 0)[:, None]
    first = torch.where(empty, emit[..., 0], NEGATIVE_INFINITY)
    emitted = emit.cumsum(dim=-1)
    new_non_blank = emitted + torch.logcumsumexp(shifted(phi - emitted, first - emitted[..., 0]), dim=-1)
    blanks = emit_blank.cumsum(dim=-1)
    new_blank = blanks + torch.logcumsumexp(shifted(new_non_blank - blanks, NEGATIVE_INFINITY), dim=-1)
    valid = torch.arange(source_length, device=log_probs.device) < source_lengths[:, None, None]
    terms = torch.cat([first[..., None], phi[..., :-1] + emit[..., 1:]], dim=-1)
    psi = torch.logsumexp(terms.masked_fill(~valid, NEGATIVE_INFINITY), dim=-1)
    return psi, new_non_blank, new_blank


class CTCPrefixScoreLogitsProcessor(LogitsProcessor):
    """A transformers `LogitsProcessor` that turns the decoder's next-token scores into joint CTC-attention
    scores (see the module docstring), for `generate()`'s greedy and beam search alike.

    Only the `num_candidates` best tokens of the attention decoder at each step are scored (ESPnet's pre-beam);
    the others get -inf. The blank (the pad token) is never a candidate.

    Args:
        ctc_log_probs: `(batch, source_length, vocab_size)` log-softmax of the CTC head, one row per image.
        source_mask: `(batch, source_length)`, 1 on positions of real pixels (a line's real positions come
            first); None when all are.
        blank_token_id: the CTC blank (textrec's pad token).
        eos_token_id: the end of the line: scored with the probability that the line is exactly the hypothesis.
        ctc_weight: the CTC share of the score, in [0, 1].
        num_beams: hypotheses per image in the rows `generate()` passes (1 for greedy search).
        num_candidates: tokens scored per hypothesis and step.
    """

    def __init__(
        self,
        ctc_log_probs: torch.Tensor,
        source_mask: torch.Tensor | None,
        blank_token_id: int,
        eos_token_id: int,
        ctc_weight: float = 0.3,
        num_beams: int = 1,
        num_candidates: int = 8,
    ):
        if not 0.0 <= ctc_weight <= 1.0:
            raise ValueError(f"ctc_weight must be in [0, 1], got {ctc_weight}.")
        self.log_probs = ctc_log_probs.double().repeat_interleave(num_beams, dim=0)
        lengths = torch.full(ctc_log_probs.shape[:1], ctc_log_probs.shape[1], device=ctc_log_probs.device)
        if source_mask is not None:
            lengths = source_mask.long().sum(dim=1)
        self.source_lengths = lengths.repeat_interleave(num_beams, dim=0)
        self.blank_token_id = blank_token_id
        self.eos_token_id = eos_token_id
        self.ctc_weight = ctc_weight
        self.num_beams = num_beams
        self.num_candidates = num_candidates
        self.states: dict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        """(row's image, tokens of the hypothesis) -> (r^n, r^b, psi) of the hypotheses the last step scored."""

    def initial_state(self, row: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """r^n, r^b and psi of the empty hypothesis: nothing emitted, blanks only; psi = log 1."""
        blank = self.log_probs[row, :, self.blank_token_id].cumsum(dim=0)
        return torch.full_like(blank, NEGATIVE_INFINITY), blank, blank.new_zeros(())

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        """
        Args:
            input_ids: `(batch * num_beams, length)` the hypotheses, decoder start token first.
            scores: `(batch * num_beams, vocab_size)` the decoder's next-token logits or log probabilities.

        Returns:
            `(batch * num_beams, vocab_size)` joint scores, -inf outside each row's candidates.
        """
        attention = scores.float().log_softmax(dim=-1)
        rows = input_ids.shape[0]
        keys = [(row // self.num_beams, *input_ids[row, 1:].tolist()) for row in range(rows)]
        states = [self.states.get(key) or self.initial_state(row) for row, key in enumerate(keys)]
        non_blank = torch.stack([state[0] for state in states])
        blank = torch.stack([state[1] for state in states])
        previous = torch.stack([state[2] for state in states])
        last_tokens = torch.tensor([key[-1] if len(key) > 1 else -1 for key in keys], device=scores.device)

        ranked = attention.clone()
        ranked[:, self.blank_token_id] = NEGATIVE_INFINITY
        candidates = ranked.topk(min(self.num_candidates, ranked.shape[1] - 1), dim=-1).indices
        is_eos = candidates == self.eos_token_id
        # The end token is not emitted by CTC: its score is the whole line's, below; any real token stands in.
        placeholder = (self.blank_token_id + 1) % attention.shape[1]
        psi, new_non_blank, new_blank = extend_prefixes(
            self.log_probs,
            non_blank,
            blank,
            last_tokens,
            candidates.masked_fill(is_eos, placeholder),
            self.blank_token_id,
            self.source_lengths,
        )
        line_end = (self.source_lengths - 1)[:, None]
        whole_line = torch.logaddexp(non_blank.gather(1, line_end), blank.gather(1, line_end))[:, 0]
        psi = torch.where(is_eos, whole_line[:, None], psi)

        # A hypothesis CTC rules out (psi = -inf: longer than the line allows) has no future: -inf, not -inf - -inf.
        ctc_gain = torch.where(torch.isfinite(previous)[:, None], psi - previous[:, None], NEGATIVE_INFINITY).float()
        joint = torch.full_like(attention, NEGATIVE_INFINITY)
        joint.scatter_(1, candidates, (1 - self.ctc_weight) * attention.gather(1, candidates) + self.ctc_weight * ctc_gain)
        self.states = {
            (*key, token): (new_non_blank[row, index], new_blank[row, index], psi[row, index])
            for row, key in enumerate(keys)
            for index, token in enumerate(candidates[row].tolist())
            if token != self.eos_token_id
        }
        return joint.to(scores.dtype)
