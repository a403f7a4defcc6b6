"""Connectionist temporal classification beside an attention decoder.

Joint CTC-attention training (Kim, Hori & Watanabe 2017; ESPnet weights CTC 0.3, PaddleOCR PP-OCRv3/v4 train
an attention head beside CTC): a linear classifier reads every encoder output, and its CTC loss, weighted
by `ctc_loss_weight`, is added to the decoder's cross-entropy. CTC's monotonic alignment teaches the
encoder where the characters are long before the decoder's attention has found them, which is what makes
a recognizer start reading within minutes on a CPU. It applies to encoders whose output sequence runs left
to right (feature-map columns in order).

The CTC blank is the pad token: it is never a target, so the vocabulary, the tokenizer and the decoder
are unchanged, and a model with `ctc_loss_weight=0` has no CTC head at all.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from transformers.utils import ModelOutput


class CTCHead(nn.Module):
    """A linear classifier over the encoder outputs: one distribution over the vocabulary (the pad
    token standing for the blank) per encoder position.

    Args:
        dim: width of the encoder outputs.
        vocab_size: size of the vocabulary, special tokens included.
    """

    def __init__(self, dim: int, vocab_size: int):
        super().__init__()
        self.classifier = nn.Linear(dim, vocab_size)

    def forward(self, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        """
        Args:
            encoder_hidden_states: `(batch, source_length, dim)`.

        Returns:
            `(batch, source_length, vocab_size)` logits.
        """
        return self.classifier(encoder_hidden_states)


@dataclass
class CTCDecoderOutput(ModelOutput):
    """What `ctc_decode(..., return_dict_in_generate=True)` returns: the reading and the CTC head's output it was
    read from, so that a confidence can be computed from the very scores that chose the text.

    Args:
        sequences: `(batch, length)` token ids ending in eos and padded with the pad id, as `ctc_decode` returns.
        logits: `(batch, source_length, vocab_size)` the CTC head's logits (the pad id standing for the blank).
        attention_mask: `(batch, source_length)` 1 for outputs of real pixels; None without a pixel mask.
    """

    sequences: torch.LongTensor | None = None
    logits: torch.FloatTensor | None = None
    attention_mask: torch.LongTensor | None = None


def ctc_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    blank_token_id: int,
    eos_token_id: int,
    source_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """The CTC loss of the decoder's labels under the CTC head's logits, averaged over the batch after
    dividing each line's loss by its length (PyTorch's `reduction="mean"`).

    Args:
        logits: `(batch, source_length, vocab_size)` from `CTCHead`.
        labels: `(batch, target_length)` the decoder's labels: token ids ending in eos, padded with -100.
            The eos token and the padding are not CTC targets.
        blank_token_id: the id standing for the blank (the pad token).
        eos_token_id: the end-of-sequence id, dropped from the targets.
        source_mask: `(batch, source_length)`, 1 on outputs of real pixels; all are real when None.

    Returns:
        A scalar. Lines too long for their source length (no alignment exists) contribute zero
        instead of infinity.
    """
    batch_size, source_length, _ = logits.shape
    is_target = (labels != -100) & (labels != eos_token_id) & (labels != blank_token_id)
    target_lengths = is_target.sum(dim=1)
    targets = labels[is_target]
    if source_mask is None:
        source_lengths = torch.full((batch_size,), source_length, dtype=torch.long, device=logits.device)
    else:
        source_lengths = source_mask.long().sum(dim=1)
    log_probs = F.log_softmax(logits.float(), dim=-1).transpose(0, 1)
    return F.ctc_loss(
        log_probs, targets, source_lengths, target_lengths, blank=blank_token_id, zero_infinity=True
    )


def ctc_greedy_decode(
    logits: torch.Tensor,
    blank_token_id: int,
    eos_token_id: int,
    source_mask: torch.Tensor | None = None,
) -> torch.LongTensor:
    """Best-path decoding: the most likely token at each position, repeats merged, blanks removed.

    Args:
        logits: `(batch, source_length, vocab_size)` from `CTCHead`.
        blank_token_id: the blank's id, which also pads the result.
        eos_token_id: appended to each line, so that the result decodes like `generate()`'s.
        source_mask: `(batch, source_length)`, 1 on outputs of real pixels.

    Returns:
        `(batch, longest + 1)` token ids: each line's tokens, eos, then blank (= pad) ids.
    """
    best = logits.argmax(dim=-1)
    keep = best != blank_token_id
    keep[:, 1:] &= best[:, 1:] != best[:, :-1]
    if source_mask is not None:
        keep &= source_mask.bool()
    lengths = keep.sum(dim=1)
    output = best.new_full((best.shape[0], int(lengths.max()) + 1 if len(lengths) else 1), blank_token_id)
    for row, (tokens, length) in enumerate(zip(best, lengths)):
        output[row, :length] = tokens[keep[row]]
        output[row, length] = eos_token_id
    return output
