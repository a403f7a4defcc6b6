"""Joint CTC-attention training and CTC decoding (`modeling/common/ctc.py`), and the `fast` preset."""

import pytest
import torch
import torch.nn.functional as F

from textrec.modeling import SelfAttentionRecognizerConfig, SelfAttentionRecognizerForTextRecognition
from textrec.modeling.common.ctc import ctc_greedy_decode, ctc_loss

PAD, EOS = 0, 2


def test_ctc_loss_drops_eos_and_padding_from_the_targets():
    torch.manual_seed(0)
    logits = torch.randn(2, 7, 6)
    labels = torch.tensor([[4, 5, 4, EOS], [3, EOS, -100, -100]])
    source_mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2])
    expected = F.ctc_loss(
        F.log_softmax(logits, -1).transpose(0, 1),
        torch.tensor([4, 5, 4, 3]),
        torch.tensor([7, 5]),
        torch.tensor([3, 1]),
        blank=PAD,
    )
    assert torch.allclose(ctc_loss(logits, labels, PAD, EOS, source_mask), expected)


def test_ctc_loss_is_zero_not_infinite_for_a_line_longer_than_its_image():
    logits = torch.randn(1, 2, 6)
    labels = torch.tensor([[3, 4, 5, EOS]])
    assert ctc_loss(logits, labels, PAD, EOS).item() == 0.0


def one_hot_logits(paths: list[list[int]], vocab_size: int = 6) -> torch.Tensor:
    return F.one_hot(torch.tensor(paths), vocab_size).float()


def test_greedy_decoding_merges_repeats_drops_blanks_and_ends_with_eos():
    logits = one_hot_logits([[3, 3, PAD, 3, 4, 4, PAD], [PAD, 5, 5, 5, PAD, PAD, PAD]])
    decoded = ctc_greedy_decode(logits, PAD, EOS)
    assert decoded.tolist() == [[3, 3, 4, EOS], [5, EOS, PAD, PAD]]


def test_greedy_decoding_ignores_positions_of_padding():
    logits = one_hot_logits([[3, PAD, 4, 5]])
    decoded = ctc_greedy_decode(logits, PAD, EOS, source_mask=torch.tensor([[1, 1, 1, 0]]))
    assert decoded.tolist() == [[3, 4, EOS]]


def tiny_config(**overrides) -> SelfAttentionRecognizerConfig:
    return SelfAttentionRecognizerConfig.from_preset("tiny", vocab_size=12, max_target_length=8, **overrides)


def test_without_ctc_weight_there_is_no_ctc_head_and_no_ctc_decoding():
    model = SelfAttentionRecognizerForTextRecognition(tiny_config())
    assert model.ctc_head is None
    assert not any(name.startswith("ctc_head") for name in model.state_dict())
    with pytest.raises(ValueError, match="no CTC head"):
        model.ctc_decode(torch.zeros(1, 1, 32, 64))


def test_joint_loss_weighs_the_decoder_and_ctc_losses():
    torch.manual_seed(0)
    model = SelfAttentionRecognizerForTextRecognition(tiny_config(ctc_loss_weight=0.25, dropout=0.0)).eval()
    pixel_values = torch.randn(2, 1, 32, 64)
    labels = torch.tensor([[5, 6, 7, EOS], [8, EOS, -100, -100]])
    output = model(pixel_values=pixel_values, labels=labels)
    encoder_outputs = model.encoder(pixel_values)
    cross_entropy = F.cross_entropy(output.logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
    alignment = ctc_loss(model.ctc_head(encoder_outputs.last_hidden_state), labels, PAD, EOS)
    assert torch.allclose(output.loss, 0.75 * cross_entropy + 0.25 * alignment)


@pytest.mark.parametrize("weight", [-0.1, 1.0])
def test_ctc_weight_outside_zero_to_one_is_refused(weight):
    with pytest.raises(ValueError, match="ctc_loss_weight"):
        tiny_config(ctc_loss_weight=weight)


def test_ctc_decoding_learns_to_read_a_small_batch():
    """The fast path is a reader of its own: a few dozen steps on two images make it read them."""
    torch.manual_seed(0)
    model = SelfAttentionRecognizerForTextRecognition(tiny_config(ctc_loss_weight=0.9, dropout=0.0))
    pixel_values = torch.randn(2, 1, 32, 64)
    pixel_mask = torch.ones(2, 32, 64, dtype=torch.long)
    pixel_mask[1, :, 48:] = 0
    pixel_values[1, :, :, 48:] = 0
    labels = torch.tensor([[5, 6, 6, 7, EOS], [9, 10, EOS, -100, -100]])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(150):
        loss = model(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    decoded = model.eval().ctc_decode(pixel_values, pixel_mask)
    assert decoded.tolist() == [[5, 6, 6, 7, EOS], [9, 10, EOS, PAD, PAD]]


def test_fast_preset_runs_features_left_to_right_at_a_quarter_of_the_width():
    config = SelfAttentionRecognizerConfig.from_preset("fast", vocab_size=99)
    model = SelfAttentionRecognizerForTextRecognition(config)
    assert model.ctc_head is not None and model.encoder.stem is not None and model.encoder.context is not None
    output = model.encoder(torch.zeros(1, 1, 32, 400), pixel_mask=torch.ones(1, 32, 400, dtype=torch.long))
    assert output.last_hidden_state.shape == (1, 100, config.hidden_size)
    assert output.attention_mask.shape == (1, 100)
    assert model.num_parameters() < 5_000_000
