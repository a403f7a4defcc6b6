"""What is specific to the ResNet-Transformer recognizer: its size and shapes, its GNMT-ranked beam search
and decoding limit, ImageNet backbone weights, and the optimiser and schedule textrec-train gives it."""

import json
import math

import pytest
import torch
from transformers import ResNetConfig, ResNetForImageClassification
from transformers.modeling_outputs import Seq2SeqLMOutput

from textrec.modeling import ResNetTransformerConfig, ResNetTransformerForTextRecognition
from textrec.modeling.common.transformer_encoder import TransformerEncoder
from textrec.scripts import train as train_cli
from textrec.processing.training.architectures import get_spec
from textrec.processing.training.recipes import rsqrt_scaled_learning_rate
from textrec.processing.training.trainer import TextRecognitionTrainer
from textrec.processing.training import build_recognizer, parse_arguments

PAD, BOS, EOS, A, B = range(5)


def tiny_model(**overrides) -> ResNetTransformerForTextRecognition:
    torch.manual_seed(0)
    config = ResNetTransformerConfig.from_preset("tiny", vocab_size=20, max_target_length=12, **overrides)
    return ResNetTransformerForTextRecognition(config).eval()


@pytest.fixture(scope="module")
def paper_model():
    return ResNetTransformerForTextRecognition(ResNetTransformerConfig.from_preset("paper")).eval()


def test_paper_preset_parameter_count(paper_model):
    # ResNet-50 has 25,557,032 parameters; without its 2048 x 1000 classifier and with a grey stem
    # (1 input channel instead of 3 in the 64 7x7 filters):
    resnet50 = 25_557_032 - (2048 * 1000 + 1000) - 64 * 2 * 7 * 7
    projection = 2048 * 512 + 512  # 1x1 convolution
    column_projection = (32 // 8) * 512 * 512 + 512  # fully connected layer over a folded column
    attention = 4 * (512 * 512 + 512)
    feed_forward = 512 * 1024 + 1024 + 1024 * 512 + 512
    layer_norm = 2 * 512
    encoder = 3 * (attention + feed_forward + 2 * layer_norm) + layer_norm
    decoder = 3 * (2 * attention + feed_forward + 3 * layer_norm) + layer_norm + 99 * 512
    head = 512 * 99 + 99
    expected = resnet50 + projection + column_projection + encoder + decoder + head
    assert paper_model.num_parameters() == expected == 41_475_107


def test_paper_preset_feature_maps(paper_model):
    config = paper_model.config
    assert (config.encoder_layers, config.decoder_layers, config.num_attention_heads, config.ffn_dim) == (3, 3, 8, 1024)
    assert (config.image_height, config.image_width) == (32, 300)
    with torch.no_grad():
        # [H/8, W/8, 2048] for handwriting (32 x 300) and long printed lines (24 x 600).
        assert paper_model.encoder.backbone(torch.zeros(1, 1, 32, 300)).last_hidden_state.shape == (1, 2048, 4, 38)
        assert paper_model.encoder.backbone(torch.zeros(1, 1, 24, 600)).last_hidden_state.shape == (1, 2048, 3, 75)
        encoded = paper_model.encoder(torch.zeros(1, 1, 32, 300)).last_hidden_state
    assert encoded.shape == (1, 38, 512)


@pytest.mark.parametrize("width", [1, 7, 64, 99, 300])
def test_sequence_length_is_the_feature_map_width(width):
    model = tiny_model()
    with torch.no_grad():
        encoded = model.encoder(torch.zeros(1, 1, 32, width)).last_hidden_state
    assert encoded.shape[1] == model.encoder.sequence_length(width) == math.ceil(width / 8)


def test_wrong_image_height_is_a_clear_error():
    model = tiny_model()
    with pytest.raises(ValueError, match=r"\(batch, 1, 32, width\)"):
        model.encoder(torch.zeros(1, 1, 24, 64))


def test_transformer_encoder_ignores_padding():
    torch.manual_seed(0)
    encoder = TransformerEncoder(dim=16, num_layers=2, num_heads=4, ffn_dim=32, norm_first=True).eval()
    inputs = torch.randn(1, 6, 16)
    mask = torch.tensor([[1, 1, 1, 1, 0, 0]])
    changed = inputs.clone()
    changed[:, 4:] = torch.randn(1, 2, 16)
    with torch.no_grad():
        torch.testing.assert_close(encoder(inputs, mask)[:, :4], encoder(changed, mask)[:, :4])


# A hand-made next-token distribution over the prefixes that start with "a": after k a's, eos has
# probability EOS_AFTER[k], "b" 0.01, "a" the rest; after any "b", eos 0.5, a 0.25, b 0.25. With 6 new
# tokens at most, the best sequence is "eos" by log-probability alone, "a a eos" under the GNMT penalty
# (alpha 0.6) and "a a a a a a" (cut at the limit) under transformers' |Y| ** 0.6.
EOS_AFTER = [0.3, 0.2, 0.5, 0.2, 0.1, 0.05]
MAX_NEW_TOKENS = 6


def next_token_probabilities(prefix: tuple[int, ...]) -> dict[int, float]:
    if B in prefix:
        return {EOS: 0.5, A: 0.25, B: 0.25}
    eos = EOS_AFTER[len(prefix)]
    return {EOS: eos, A: 1 - eos - 0.01, B: 0.01}


class ScriptedRecognizer(ResNetTransformerForTextRecognition):
    """The real model class, its decoder replaced by `next_token_probabilities` of the whole prefix."""

    def forward(self, decoder_input_ids=None, **kwargs):
        logits = torch.full((*decoder_input_ids.shape, self.config.vocab_size), -1e9)
        for row, ids in enumerate(decoder_input_ids.tolist()):
            for token, probability in next_token_probabilities(tuple(ids[1:])).items():
                logits[row, -1, token] = math.log(probability)
        return Seq2SeqLMOutput(logits=logits)


def finished_hypotheses() -> list[tuple[tuple[int, ...], float]]:
    """Every sequence the distribution can produce within the limit, with its log-probability."""
    finished, frontier = [], [((), 0.0)]
    while frontier:
        prefix, log_probability = frontier.pop()
        for token, probability in next_token_probabilities(prefix).items():
            sequence, score = prefix + (token,), log_probability + math.log(probability)
            done = token == EOS or len(sequence) == MAX_NEW_TOKENS
            (finished if done else frontier).append((sequence, score))
    return finished


def best_hypothesis(length_penalty) -> tuple[tuple[int, ...], float]:
    return max(
        ((sequence, score / length_penalty(len(sequence))) for sequence, score in finished_hypotheses()),
        key=lambda item: item[1],
    )


@pytest.mark.parametrize("alpha", [0.6, 0.0])
def test_beam_search_returns_the_best_hypothesis_under_the_gnmt_penalty(alpha):
    expected, expected_score = best_hypothesis(lambda length: ((5 + length) / 6) ** alpha)
    if alpha:
        assert expected == (A, A, EOS)
        assert best_hypothesis(lambda length: length**alpha)[0] != expected  # |Y| ** alpha disagrees
    else:
        assert expected == (EOS,)
    torch.manual_seed(0)
    config = ResNetTransformerConfig.from_preset("tiny", vocab_size=5)
    model = ScriptedRecognizer(config).eval()
    output = model.generate(
        pixel_values=torch.zeros(1, 1, 32, 64),
        num_beams=4,
        length_penalty=alpha,
        max_new_tokens=MAX_NEW_TOKENS,
        use_cache=False,
        return_dict_in_generate=True,
        output_scores=True,
    )
    assert output.sequences[0].tolist() == [BOS, *expected]
    assert output.sequences_scores[0].item() == pytest.approx(expected_score, rel=1e-5)


def test_default_decoding_is_four_beams_with_gnmt_alpha_06_and_survives_saving(tmp_path):
    tiny_model().save_pretrained(tmp_path)
    config = ResNetTransformerForTextRecognition.from_pretrained(tmp_path).generation_config
    assert (config.num_beams, config.length_penalty, config.early_stopping, config.extra_decode_length) == (
        4, 0.6, "never", 10
    )


@pytest.mark.parametrize("width, num_beams", [(64, 4), (100, 1)])
def test_default_length_limit_is_encoder_length_plus_ten(width, num_beams):
    model = tiny_model()
    # With the end token suppressed every hypothesis runs to the limit.
    ids = model.generate(pixel_values=torch.randn(1, 1, 32, width), num_beams=num_beams, suppress_tokens=[2])
    assert ids.shape[1] == 1 + math.ceil(width / 8) + 10


def test_explicit_length_limit_wins():
    model = tiny_model()
    ids = model.generate(pixel_values=torch.randn(1, 1, 32, 100), num_beams=1, suppress_tokens=[2], max_new_tokens=5)
    assert ids.shape[1] == 1 + 5


@pytest.fixture(scope="module")
def imagenet_style_checkpoint(tmp_path_factory):
    """A small RGB ResNet in the layout of `microsoft/resnet-50` (`ResNetForImageClassification`), with the
    tiny preset's stages."""
    tiny = ResNetTransformerConfig.from_preset("tiny")
    torch.manual_seed(1)
    classifier = ResNetForImageClassification(
        ResNetConfig(
            num_channels=3,
            embedding_size=tiny.backbone_embedding_size,
            hidden_sizes=tiny.backbone_hidden_sizes,
            depths=tiny.backbone_depths,
            layer_type=tiny.backbone_layer_type,
            num_labels=10,
        )
    )
    folder = tmp_path_factory.mktemp("resnet")
    classifier.save_pretrained(folder)
    return folder, classifier.resnet.state_dict()


def test_rgb_imagenet_weights_load_into_the_backbone(imagenet_style_checkpoint):
    folder, expected = imagenet_style_checkpoint
    model = tiny_model(num_channels=3)
    decoder_before = {name: tensor.clone() for name, tensor in model.decoder.state_dict().items()}
    model.load_pretrained_backbone(folder)
    loaded = model.encoder.backbone.state_dict()
    assert loaded.keys() == expected.keys()
    assert all(torch.equal(loaded[name], expected[name]) for name in expected)
    assert all(torch.equal(model.decoder.state_dict()[name], decoder_before[name]) for name in decoder_before)
    with torch.no_grad():  # the last stages still keep 1/8 resolution
        assert model.encoder(torch.zeros(1, 3, 32, 64)).last_hidden_state.shape[1] == 8


def test_rgb_stem_loads_into_a_grey_backbone_summed_over_channels(imagenet_style_checkpoint):
    folder, expected = imagenet_style_checkpoint
    model = tiny_model()
    model.load_pretrained_backbone(folder)
    stem = "embedder.embedder.convolution.weight"
    torch.testing.assert_close(model.encoder.backbone.state_dict()[stem], expected[stem].sum(dim=1, keepdim=True))


def test_backbone_weights_of_another_shape_are_refused(imagenet_style_checkpoint):
    folder, _ = imagenet_style_checkpoint
    model = tiny_model(backbone_depths=[2, 1, 1, 1])
    with pytest.raises(ValueError, match="depths"):
        model.load_pretrained_backbone(folder)


def test_textrec_train_builds_a_fixed_size_model_with_backbone_weights(imagenet_style_checkpoint):
    folder, expected = imagenet_style_checkpoint
    model_args, _, _ = parse_arguments(
        ["--model=resnet-transformer", "--preset=tiny", "--image_height=24", f"--backbone_weights={folder}"]
    )
    spec = get_spec("resnet-transformer")
    model, processor = build_recognizer(model_args, spec)
    image_processor = processor.image_processor
    assert (image_processor.resize_mode, image_processor.height, image_processor.width) == ("fixed", 24, 300)
    assert (model.config.image_height, model.config.image_width) == (24, 300)
    stem = "embedder.embedder.convolution.weight"
    torch.testing.assert_close(model.encoder.backbone.state_dict()[stem], expected[stem].sum(dim=1, keepdim=True))


PEAK = 0.3 / (math.sqrt(512) * math.sqrt(2000))


@pytest.mark.parametrize(
    "step, factor",
    [(0, 0.0), (1000, 0.5), (2000, 1.0), (2000 + 31_999, 1.0), (2000 + 32_000, 0.8), (2000 + 64_000, 0.64),
     (2000 + 320_000, 0.8**10)],
)
def test_schedule_of_textrec_train_at_known_steps(step, factor):
    _, _, args = parse_arguments(["--model=resnet-transformer"])
    assert args.learning_rate == pytest.approx(PEAK) == rsqrt_scaled_learning_rate(0.3, 512, 2000)
    recipe = get_spec("resnet-transformer").recipe
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))], lr=args.learning_rate)
    scheduler = recipe.lr_scheduler(optimizer, args, num_training_steps=10**6)
    assert scheduler.lr_lambdas[0](step) * args.learning_rate == pytest.approx(factor * PEAK)


def test_other_architectures_keep_the_trainer_defaults():
    _, _, args = parse_arguments(["--model=self-attention"])
    assert (args.learning_rate, args.adam_beta2, args.adam_epsilon) == (5e-4, 0.999, 1e-8)


def test_textrec_train_uses_adam_and_the_staircase_schedule(tmp_path, monkeypatch):
    optimizers = []
    create_optimizer = TextRecognitionTrainer.create_optimizer

    def keep_optimizer(self, *args, **kwargs):
        optimizers.append(create_optimizer(self, *args, **kwargs))
        return optimizers[-1]

    monkeypatch.setattr(TextRecognitionTrainer, "create_optimizer", keep_optimizer)
    output_dir = tmp_path / "run"
    arguments = dict(
        model="resnet-transformer", preset="tiny", dataset="synthetic-lines", max_train_samples=16,
        max_eval_samples=4, max_target_length=48, output_dir=output_dir, max_steps=4, per_device_train_batch_size=4,
        per_device_eval_batch_size=4, eval_steps=4, save_steps=4, logging_steps=1, seed=7, use_cpu=True,
        warmup_steps=2, lr_scheduler_kwargs=json.dumps({"decay_steps": 1}), generation_num_beams=1,
        generation_max_length=8,
    )
    train_cli.run([f"--{key}={value}" for key, value in arguments.items()])

    (optimizer,) = optimizers
    assert type(optimizer) is torch.optim.Adam
    group = optimizer.param_groups[0]
    assert (group["betas"], group["eps"], group["initial_lr"]) == ((0.9, 0.997), 1e-9, pytest.approx(PEAK))
    state = json.loads((output_dir / "trainer_state.json").read_text())
    rates = [entry["learning_rate"] for entry in state["log_history"] if "learning_rate" in entry]
    # Steps 1..4: the start of the warm-up (0), half-way, the peak, then x0.8 per step (decay_steps=1).
    assert rates == pytest.approx([PEAK * f for f in (0.0, 0.5, 1.0, 0.8)])
    assert (output_dir / "modeling_resnet_transformer.py").exists()


def test_fast_preset_reads_a_line_as_one_row_of_width_over_4_features():
    config = ResNetTransformerConfig.from_preset("fast", vocab_size=20)
    model = ResNetTransformerForTextRecognition(config).eval()
    assert 2_000_000 < model.num_parameters() < 4_000_000
    pixel_values = torch.rand(2, 1, 32, 200)
    pixel_mask = torch.ones(2, 32, 200, dtype=torch.long)
    pixel_mask[1, :, 100:] = 0
    with torch.no_grad():
        encoded = model.encoder(pixel_values, pixel_mask)
    assert encoded.last_hidden_state.shape == (2, 50, 192) and model.encoder.sequence_length(200) == 50
    assert encoded.attention_mask.sum(dim=1).tolist() == [50, 25]
    assert model.ctc_head is not None and model.ctc_decode(pixel_values).shape[0] == 2


def test_stage_strides_downsample_the_height_only_past_the_width_stride():
    from textrec.modeling.resnet_transformer.modeling_resnet_transformer import stage_strides

    assert stage_strides(ResNetTransformerConfig.from_preset("paper")) == [(2, 2), (1, 1), (1, 1)]
    assert stage_strides(ResNetTransformerConfig.from_preset("fast")) == [(2, 1), (2, 1), (2, 1)]
    with pytest.raises(ValueError, match="backbone_width_stride"):
        ResNetTransformerConfig(backbone_output_stride=8, backbone_width_stride=16)


def test_fast_preset_trains_at_the_aspect_ratio_with_adamw():
    model_args, _, args = parse_arguments(["--model=resnet-transformer", "--preset=fast"])
    spec = get_spec("resnet-transformer").for_preset("fast")
    assert spec.recipe is None and args.learning_rate == 5e-4  # the Trainer's AdamW default, not the paper's peak
    model, processor = build_recognizer(model_args, spec)
    assert processor.image_processor.resize_mode == "keep_aspect"
    assert processor.image_processor.height == model.config.image_height == 32
    assert model.config.backbone_width_stride == 4
