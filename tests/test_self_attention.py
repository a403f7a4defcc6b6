"""What is specific to the self-attention decoder recognizer and its shared blocks."""

import math

import torch

from textrec.modeling import SelfAttentionRecognizerConfig, SelfAttentionRecognizerEncoder
from textrec.modeling.common.positional_encoding import sinusoidal_position_encoding
from textrec.modeling.common.recognizer import shift_tokens_right


def test_sinusoidal_encoding_follows_the_formula():
    dim = 8
    encoding = sinusoidal_position_encoding(torch.arange(5), dim)
    for i in range(5):
        for x in range(dim // 2):
            angle = i / 10000 ** (2 * x / dim)
            assert math.isclose(encoding[i, 2 * x].item(), math.sin(angle), abs_tol=1e-6)
            assert math.isclose(encoding[i, 2 * x + 1].item(), math.cos(angle), abs_tol=1e-6)


def test_encoder_alone_returns_a_left_to_right_feature_sequence():
    config = SelfAttentionRecognizerConfig.from_preset("tiny")
    encoder = SelfAttentionRecognizerEncoder(config).eval()
    pixel_values = torch.randn(2, 1, 32, 100)
    pixel_mask = torch.ones(2, 32, 100, dtype=torch.long)
    pixel_mask[1, :, 40:] = 0
    output = encoder(pixel_values, pixel_mask=pixel_mask)
    # 32x100 → a 2x25 feature map (pooling 16 down, 4 across), flattened column by column.
    assert output.last_hidden_state.shape == (2, 2 * 25, config.hidden_size)
    assert output.attention_mask[0].all()
    # The second image has 40 real columns → 10 feature columns → 20 valid positions, then padding.
    assert output.attention_mask[1].tolist() == [1] * 20 + [0] * 30


def test_paper_preset_has_four_layers_and_four_heads():
    config = SelfAttentionRecognizerConfig.from_preset("paper")
    assert (config.decoder_layers, config.num_attention_heads) == (4, 4)


def test_teacher_forcing_inputs_shift_labels_behind_the_start_token():
    labels = torch.tensor([[5, 6, 2], [7, 2, -100]])
    assert shift_tokens_right(labels, pad_token_id=0, decoder_start_token_id=1).tolist() == [[1, 5, 6], [1, 7, 2]]


def test_a_config_saved_with_the_earlier_names_loads_with_the_new_ones(tmp_path):
    """Checkpoints saved before the names were unified (`d_model`, `decoder_attention_heads`, `decoder_ffn_dim`)
    load with their values under `hidden_size`, `num_attention_heads`, `ffn_dim`, and save with the new names."""
    import json

    from textrec.modeling import CoMERConfig

    for config_class in (SelfAttentionRecognizerConfig, CoMERConfig):
        saved = config_class().to_dict()
        for new, old in (("hidden_size", "d_model"), ("num_attention_heads", "decoder_attention_heads"), ("ffn_dim", "decoder_ffn_dim")):
            saved[old] = saved.pop(new) + 8
        (tmp_path / "config.json").write_text(json.dumps(saved))
        config = config_class.from_pretrained(tmp_path)
        defaults = config_class()
        assert (config.hidden_size, config.num_attention_heads, config.ffn_dim) == (
            defaults.hidden_size + 8, defaults.num_attention_heads + 8, defaults.ffn_dim + 8
        )
        assert config.d_model == config.hidden_size
        resaved = config.to_dict()
        assert "hidden_size" in resaved and "d_model" not in resaved
