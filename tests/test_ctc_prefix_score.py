"""Joint CTC-attention decoding: the CTC prefix scores against brute force over every alignment, the processor's
scores through beam reordering and padding, and `joint_decode` on a model."""

import itertools
import math

import pytest
import torch

from textrec.modeling import SelfAttentionRecognizerConfig, SelfAttentionRecognizerForTextRecognition
from textrec.modeling.common.ctc_prefix_score import CTCPrefixScoreLogitsProcessor, extend_prefixes

BLANK, EOS, BOS = 0, 2, 1
SOURCE_LENGTH, VOCAB_SIZE = 5, 5


def labelling_probabilities(log_probs: torch.Tensor) -> dict[tuple[int, ...], float]:
    """p(l | x) of every labelling l, summed over all alignments (repeats merged, then blanks removed)."""
    probabilities = {}
    for path in itertools.product(range(log_probs.shape[1]), repeat=log_probs.shape[0]):
        labelling = tuple(token for index, token in enumerate(path) if token != BLANK and (index == 0 or path[index - 1] != token))
        probability = math.exp(sum(log_probs[t, token].item() for t, token in enumerate(path)))
        probabilities[labelling] = probabilities.get(labelling, 0.0) + probability
    return probabilities


def prefix_log_probability(probabilities: dict, prefix: tuple[int, ...]) -> float:
    return math.log(sum(p for labelling, p in probabilities.items() if labelling[: len(prefix)] == prefix))


@pytest.fixture
def ctc_log_probs():
    torch.manual_seed(0)
    return torch.randn(2, SOURCE_LENGTH, VOCAB_SIZE).log_softmax(dim=-1)


def test_prefix_scores_equal_brute_force_over_all_alignments(ctc_log_probs):
    log_probs = ctc_log_probs[:1]
    probabilities = labelling_probabilities(log_probs[0])
    processor = CTCPrefixScoreLogitsProcessor(log_probs, None, BLANK, EOS)
    non_blank, blank, _ = processor.initial_state(0)
    prefix, last = (), -1
    for token in (3, 3, 4):  # a repeated token needs a blank between its two emissions
        candidates = torch.tensor([[1, 3, 4]])
        psi, new_non_blank, new_blank = extend_prefixes(
            log_probs, non_blank[None], blank[None], torch.tensor([last]), candidates, BLANK, torch.tensor([SOURCE_LENGTH])
        )
        for index, candidate in enumerate(candidates[0].tolist()):
            assert psi[0, index].item() == pytest.approx(prefix_log_probability(probabilities, (*prefix, candidate)), abs=1e-5)
        index = candidates[0].tolist().index(token)
        non_blank, blank, prefix, last = new_non_blank[0, index], new_blank[0, index], (*prefix, token), token
        whole = torch.logaddexp(non_blank[-1], blank[-1]).item()
        assert whole == pytest.approx(math.log(probabilities.get(prefix, 1e-300)), abs=1e-5)


def joint_scores_by_brute_force(log_probs, attention, prefix, weight, candidates):
    probabilities = labelling_probabilities(log_probs)
    before = prefix_log_probability(probabilities, prefix)
    scores = {}
    for token in candidates:
        after = math.log(probabilities.get(prefix, 1e-300)) if token == EOS else prefix_log_probability(probabilities, (*prefix, token))
        scores[token] = (1 - weight) * attention[token].item() + weight * (after - before)
    return scores


def test_processor_scores_follow_hypotheses_through_beam_reordering_and_padding(ctc_log_probs):
    """Two images of two beams each; the second image's last position is padding. Between the steps the
    beams swap places (as beam search reorders them): each row's score is its own hypothesis's."""
    weight, num_beams = 0.4, 2
    source_mask = torch.ones(2, SOURCE_LENGTH, dtype=torch.long)
    source_mask[1, -1] = 0
    processor = CTCPrefixScoreLogitsProcessor(ctc_log_probs, source_mask, BLANK, EOS, weight, num_beams, num_candidates=VOCAB_SIZE)
    torch.manual_seed(1)
    steps = [
        torch.tensor([[BOS], [BOS], [BOS], [BOS]]),
        torch.tensor([[BOS, 3], [BOS, 4], [BOS, 4], [BOS, 3]]),
        torch.tensor([[BOS, 4, 4], [BOS, 3, 2 + 1], [BOS, 3, 4], [BOS, 4, 3]]),  # rows of the step before, reordered
    ]
    for input_ids in steps:
        logits = torch.randn(4, VOCAB_SIZE)
        joint = processor(input_ids, logits)
        attention = logits.log_softmax(dim=-1)
        for row in range(4):
            image = row // num_beams
            valid = int(source_mask[image].sum())
            prefix = tuple(input_ids[row, 1:].tolist())
            expected = joint_scores_by_brute_force(ctc_log_probs[image, :valid], attention[row], prefix, weight, [3, 4, EOS])
            for token, score in expected.items():
                assert joint[row, token].item() == pytest.approx(score, abs=1e-4), (row, token)
            assert joint[row, BLANK].item() == float("-inf")


def test_only_the_best_candidates_of_the_decoder_are_scored(ctc_log_probs):
    processor = CTCPrefixScoreLogitsProcessor(ctc_log_probs, None, BLANK, EOS, num_candidates=2)
    logits = torch.tensor([[9.0, 0.0, 5.0, 4.0, 1.0], [9.0, 3.0, 0.0, 1.0, 2.0]])  # the blank's 9 never counts
    joint = processor(torch.tensor([[BOS], [BOS]]), logits)
    assert torch.isfinite(joint).tolist() == [[False, False, True, True, False], [False, True, False, False, True]]


def ctc_model(**overrides):
    torch.manual_seed(0)
    config = SelfAttentionRecognizerConfig.from_preset("tiny", vocab_size=12, max_target_length=8, **{"ctc_loss_weight": 0.3, **overrides})
    return SelfAttentionRecognizerForTextRecognition(config).eval()


@pytest.mark.parametrize("num_beams", [1, 3])
def test_joint_decode_reads_batches_greedily_and_with_beams(num_beams):
    model = ctc_model()
    pixel_values = torch.randn(2, 1, 32, 64)
    pixel_mask = torch.ones(2, 32, 64, dtype=torch.long)
    pixel_mask[1, :, 40:] = 0
    sequences = model.joint_decode(pixel_values, pixel_mask=pixel_mask, num_beams=num_beams, max_new_tokens=6)
    assert sequences.shape[0] == 2 and sequences.shape[1] <= 7
    assert (sequences[:, 0] == model.config.decoder_start_token_id).all()
    assert not (sequences[:, 1:] == model.config.decoder_start_token_id).any()


def test_joint_decode_with_no_ctc_weight_is_the_decoders_greedy_reading():
    """Greedy, as `generate()`'s, except that the blank (the pad token) is never read."""
    model = ctc_model()
    pixel_values = torch.randn(2, 1, 32, 64)
    greedy = model.generate(pixel_values, max_new_tokens=6, num_beams=1, suppress_tokens=[model.config.pad_token_id])
    joint = model.joint_decode(pixel_values, ctc_weight=0.0, num_beams=1, max_new_tokens=6)
    assert joint.tolist() == greedy.tolist()


def test_joint_decode_needs_a_ctc_head():
    model = ctc_model(ctc_loss_weight=0.0)
    with pytest.raises(ValueError, match="no CTC head"):
        model.joint_decode(torch.randn(1, 1, 32, 64))


def test_a_hypothesis_ctc_rules_out_scores_minus_infinity_not_nan():
    """Three tokens cannot come out of two positions: psi is -inf, and so is every extension (a NaN would win
    beam search's top-k)."""
    log_probs = torch.randn(1, 2, VOCAB_SIZE).log_softmax(dim=-1)
    processor = CTCPrefixScoreLogitsProcessor(log_probs, None, BLANK, EOS, num_candidates=VOCAB_SIZE)
    for input_ids in ([[BOS]], [[BOS, 3]], [[BOS, 3, 4]], [[BOS, 3, 4, 3]]):
        joint = processor(torch.tensor(input_ids), torch.randn(1, VOCAB_SIZE))
    assert not joint.isnan().any() and (joint == float("-inf")).all()
