"""BTTR's bidirectional training and decoding (Zhao et al., ICDAR 2021), which CoMER keeps: targets learnt
left to right and right to left, and a beam search in both directions whose finished hypotheses are rescored
by the opposite direction.

`BidirectionalDecodingMixin` goes before `GenerationMixin` in a model's bases; the model provides `encoder`
(images to an output with `last_hidden_state` and `feature_mask`) and `_decode(encoder_outputs,
decoder_input_ids)` returning `(logits, decoder outputs)`.
"""

from dataclasses import dataclass

import torch
from transformers.utils import ModelOutput


def reverse_labels(labels: torch.Tensor, bos_token_id: int, eos_token_id: int) -> torch.LongTensor:
    """Right-to-left labels: `[y_1, ..., y_n, end, -100, ...]` → `[y_n, ..., y_1, start, -100, ...]`.

    Args:
        labels: `(batch, target_length)`; each row ends with the end token, then -100 padding.
    """
    lengths = (labels != -100).sum(dim=1, keepdim=True)
    last = labels.gather(1, (lengths - 1).clamp(min=0))
    if (lengths == 0).any() or (last != eos_token_id).any():
        raise ValueError(
            f"Every row of labels must end with the end token {eos_token_id} before its -100 padding "
            "(bidirectional training reverses the tokens before it)."
        )
    positions = torch.arange(labels.shape[1], device=labels.device)[None]
    reversed_tokens = labels.gather(1, (lengths - 2 - positions).clamp(min=0))
    reversed_labels = torch.where(positions < lengths - 1, reversed_tokens, bos_token_id)
    return reversed_labels.masked_fill(positions >= lengths, -100)


@dataclass
class BidirectionalBeamSearchOutput(ModelOutput):
    """
    Args:
        sequences: `(batch, length)` the best hypothesis left to right: `[start] y [end]`, pad after.
        sequences_scores: `(batch,)` its score: its own length-normalised log-likelihood plus the opposite
            direction's.
        directions: `(batch,)` 0 where the left-to-right search found it, 1 where the right-to-left did.
    """

    sequences: torch.LongTensor | None = None
    sequences_scores: torch.FloatTensor | None = None
    directions: torch.LongTensor | None = None


class BidirectionalDecodingMixin:
    """`generate()` with CoMER's bidirectional beam search: `num_beams > 1` and `bidirectional_rescoring` (a
    generation-config attribute or argument) go to `bidirectional_beam_search`; everything else to
    transformers' `generate()`."""

    @torch.no_grad()
    def generate(self, inputs: torch.Tensor | None = None, generation_config=None, **kwargs):
        """`GenerationMixin.generate`, except that beam search (`num_beams > 1`) with
        `bidirectional_rescoring` (a generation-config attribute or argument, True by default) goes to
        `bidirectional_beam_search`. Pass `bidirectional_rescoring=False` for transformers' left-to-right
        beam search."""
        config = generation_config if generation_config is not None else self.generation_config
        num_beams = kwargs.get("num_beams") or config.num_beams or 1
        rescoring = kwargs.pop("bidirectional_rescoring", getattr(config, "bidirectional_rescoring", False))
        if num_beams > 1 and rescoring:
            if inputs is not None:
                kwargs["pixel_values"] = inputs
            return self.bidirectional_beam_search(generation_config=generation_config, **kwargs)
        return super().generate(inputs, generation_config=generation_config, **kwargs)

    @torch.no_grad()
    def bidirectional_beam_search(
        self,
        pixel_values: torch.FloatTensor | None = None,
        pixel_mask: torch.LongTensor | None = None,
        encoder_outputs: ModelOutput | None = None,
        generation_config=None,
        return_dict_in_generate: bool = False,
        **kwargs,
    ) -> torch.LongTensor | BidirectionalBeamSearchOutput:
        """CoMER's decoding: beam search left to right (start token → end token) and right to left (end
        token → start token) over one encoder pass; every finished hypothesis of either direction is
        rescored by the opposite direction, and the best sum is kept.

        A hypothesis y scores `log P(y, stop | direction) / (|y| + 1) ** length_penalty` in its own
        search (transformers' beam search normalisation) plus the same for reversed y under the other
        direction, read by teacher forcing. Hypotheses cut by the length limit have no stop token in
        either score, and none in the returned sequence.

        Args:
            pixel_values, pixel_mask: images and their mask (or `encoder_outputs`).
            generation_config: defaults to the model's; `num_beams`, `max_new_tokens`,
                `length_penalty`, `use_cache`, ... may also be given as keyword arguments, which go to
                both beam searches.
            return_dict_in_generate: return a `BidirectionalBeamSearchOutput` instead of the sequences.

        Returns:
            `(batch, length)` sequences left to right, `[start] y [end]` padded with the pad token, at
            most `1 + max_new_tokens` long.
        """
        config = generation_config if generation_config is not None else self.generation_config
        num_beams = kwargs.pop("num_beams", None) or config.num_beams
        length_penalty = kwargs.get("length_penalty", config.length_penalty)
        if kwargs.pop("num_return_sequences", None) not in (None, 1):
            raise ValueError("The bidirectional beam search returns one sequence per image.")
        for name in ("output_scores", "do_sample", "decoder_input_ids"):
            kwargs.pop(name, None)
        if encoder_outputs is None:
            if pixel_values is None:
                raise ValueError("Pass `pixel_values` (batch, channels, height, width) or `encoder_outputs`.")
            encoder_outputs = self.encoder(pixel_values, pixel_mask=pixel_mask)
        bos, eos, pad = self.config.bos_token_id, self.config.eos_token_id, self.config.pad_token_id

        candidates, own_scores = [], []
        for start, stop in ((bos, eos), (eos, bos)):
            searched = super().generate(
                encoder_outputs=type(encoder_outputs)(**encoder_outputs),  # generate expands it in place
                generation_config=generation_config,
                num_beams=num_beams,
                num_return_sequences=num_beams,
                decoder_start_token_id=start,
                eos_token_id=stop,
                pad_token_id=pad,
                do_sample=False,
                output_scores=True,
                return_dict_in_generate=True,
                **kwargs,
            )
            for sequence in searched.sequences[:, 1:].tolist():
                finished = stop in sequence
                tokens = sequence[: sequence.index(stop)] if finished else sequence
                candidates.append((tokens if start == bos else tokens[::-1], finished))
            own_scores.append(searched.sequences_scores)

        # Rate left-to-right hypotheses right to left and the other way round, in one teacher-forced batch.
        batch = encoder_outputs.last_hidden_state.shape[0]
        half = batch * num_beams
        directions = [(eos, bos)] * half + [(bos, eos)] * half
        expanded = type(encoder_outputs)(
            last_hidden_state=encoder_outputs.last_hidden_state.repeat_interleave(num_beams, dim=0).repeat(2, 1, 1),
            feature_mask=encoder_outputs.feature_mask.repeat_interleave(num_beams, dim=0).repeat(2, 1, 1),
        )
        opposite_scores = self._sequence_log_likelihood(expanded, candidates, directions, length_penalty)
        scores = torch.cat(own_scores) + opposite_scores
        scores = torch.cat((scores[:half].view(batch, num_beams), scores[half:].view(batch, num_beams)), dim=1)
        best_scores, best = scores.max(dim=1)
        best_direction = best // num_beams
        chosen = [
            candidates[direction * half + image * num_beams + beam]
            for image, (direction, beam) in enumerate(zip(best_direction.tolist(), (best % num_beams).tolist()))
        ]
        chosen = [[bos, *tokens, eos] if finished else [bos, *tokens] for tokens, finished in chosen]
        sequences = torch.full((batch, max(map(len, chosen))), pad, dtype=torch.long, device=best.device)
        for row, ids in enumerate(chosen):
            sequences[row, : len(ids)] = torch.tensor(ids, device=best.device)
        if return_dict_in_generate:
            return BidirectionalBeamSearchOutput(
                sequences=sequences, sequences_scores=best_scores, directions=best_direction
            )
        return sequences

    def _sequence_log_likelihood(
        self,
        encoder_outputs: ModelOutput,
        candidates: list[tuple[list[int], bool]],
        directions: list[tuple[int, int]],
        length_penalty: float,
    ) -> torch.Tensor:
        """`log P(tokens, stop) / (len(tokens) + 1) ** length_penalty` of each `(tokens, finished)` (tokens in
        left-to-right order) read by teacher forcing in its direction `(start, stop)`, over the encoder
        output of the same row; unfinished ones (cut by the length limit) are rated without the stop
        token, `log P(tokens) / len(tokens) ** length_penalty`, as their own search scored them."""
        device = encoder_outputs.last_hidden_state.device
        length = max(len(tokens) for tokens, _ in candidates) + 1
        decoder_input_ids = torch.full((len(candidates), length), self.config.pad_token_id, dtype=torch.long)
        labels = torch.full((len(candidates), length), -100, dtype=torch.long)
        for row, ((tokens, finished), (start, stop)) in enumerate(zip(candidates, directions)):
            ordered = tokens if start == self.config.bos_token_id else tokens[::-1]
            targets = [*ordered, stop] if finished else ordered
            decoder_input_ids[row, : len(targets)] = torch.tensor([start, *ordered][: len(targets)])
            labels[row, : len(targets)] = torch.tensor(targets)
        logits, _ = self._decode(encoder_outputs, decoder_input_ids.to(device))
        labels = labels.to(device)
        log_probs = logits.float().log_softmax(dim=-1).gather(2, labels.clamp(min=0)[..., None])[..., 0]
        valid = labels != -100
        return (log_probs * valid).sum(dim=1) / valid.sum(dim=1).float() ** length_penalty
