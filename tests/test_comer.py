"""What is specific to CoMER: its published size, the coverage modes and the Attention Refinement
Module, bidirectional training, incremental decoding with running coverage equal to re-running the
prefix, the bidirectional beam search with rescoring, and the LaTeX data it reads."""

import functools
import json
import logging
import shutil
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image
from textrec.modeling import CoMERConfig, CoMERForFormulaRecognition
from textrec.modeling.comer.modeling_comer import (
    CoMEREncoderOutput,
    CoverageCache,
    exclusive_cumsum,
    reverse_labels,
)
from textrec.modeling.common.positional_encoding import image_position_encoding_2d
from textrec.processing import (
    TextRecognitionImageProcessor,
    TextRecognitionProcessor,
    build_latex_tokenizer,
)
from textrec.processing.data import (
    load_crohme,
    load_text_recognition_dataset,
    make_synthetic_formulas,
)
from textrec.processing.data.collator import TextRecognitionCollator
from textrec.processing.data.synthetic_math import compact_latex, render_formula
from textrec.processing.metrics import load_metric
from textrec.processing.tokenization_latex import (
    load_latex_dictionary,
    unknown_latex_tokens,
)
import benchmark_comer_decoding, benchmark_comer_step, draw_comer_refinement
from textrec.processing.training.architectures import FORMULA_IMAGES, get_spec
from textrec.processing.training.trainer import TextRecognitionTrainer
from textrec.processing.training import parse_arguments
from transformers import Seq2SeqTrainingArguments

PAD, BOS, EOS = 0, 1, 2
COVERAGES = ("none", "self", "cross", "fusion")
LABELS = torch.tensor([[5, 6, 7, 8, EOS], [9, 10, EOS, -100, -100]])


def tiny_model(coverage: str = "fusion", **overrides) -> CoMERForFormulaRecognition:
    torch.manual_seed(0)
    config = CoMERConfig.from_preset("tiny", vocab_size=20, max_target_length=12, coverage=coverage, **overrides)
    return CoMERForFormulaRecognition(config).eval()


def formula_batch(seed: int = 0):
    """Two formula images of different sizes, the smaller padded at the bottom and on the right."""
    generator = torch.Generator().manual_seed(seed)
    pixel_values = torch.rand(2, 1, 48, 80, generator=generator)
    pixel_mask = torch.ones(2, 48, 80, dtype=torch.long)
    pixel_mask[1, 30:], pixel_mask[1, :, 50:] = 0, 0
    return pixel_values * pixel_mask[:, None], pixel_mask


def arm_parameters(model) -> list[str]:
    return [name for name, _ in model.named_parameters() if ".arm." in name]


# --- The architecture


def test_paper_preset_matches_the_published_model():
    model = CoMERForFormulaRecognition(CoMERConfig.from_preset("paper"))
    config = model.config
    assert (config.hidden_size, config.decoder_layers, config.num_attention_heads, config.ffn_dim) == (256, 3, 8, 1024)
    assert (config.dropout, config.coverage, config.arm_channels, config.vocab_size) == (0.3, "fusion", 32, 114)
    assert model.encoder.densenet.out_channels == 684  # 48 + 16 x 24 → 216 → 600 → 300 → 684
    # The paper counts 6.4M parameters for CoMER; the ARM (16 maps → 32 channels 5x5, → 8 maps, BN) is 13,104.
    assert model.num_parameters() == 6_389_042
    assert len(arm_parameters(model)) == 5 and sum(p.numel() for n, p in model.named_parameters() if ".arm." in n) == 13_104


def test_encoder_is_stride_16_and_follows_the_padding():
    model = tiny_model()
    pixel_values, pixel_mask = formula_batch()
    with torch.no_grad():
        encoded = model.encoder(pixel_values, pixel_mask=pixel_mask)
    assert encoded.feature_mask.shape == (2, 3, 5)  # ceil(48 / 16), ceil(80 / 16)
    assert encoded.feature_mask[1].tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 0], [0, 0, 0, 0, 0]]
    assert encoded.last_hidden_state.shape == (2, 15, 32)
    assert torch.equal(encoded.attention_mask, encoded.feature_mask.flatten(1))


def test_image_position_encoding_is_normalised_to_the_unpadded_extent():
    small = torch.ones(1, 2, 3, dtype=torch.long)
    padded = torch.zeros(1, 4, 6, dtype=torch.long)
    padded[:, :2, :3] = 1
    encoding = image_position_encoding_2d(small, 16)
    torch.testing.assert_close(image_position_encoding_2d(padded, 16)[:, :2, :3], encoding)
    # The last valid cell sits at 2 pi on both axes: sin 0, cos 1 in the first feature pair of x and of y.
    torch.testing.assert_close(encoding[0, -1, -1, [0, 1, 8, 9]], torch.tensor([0.0, 1.0, 0.0, 1.0]), atol=1e-4, rtol=0)


@pytest.mark.parametrize("coverage", COVERAGES)
def test_only_coverage_none_has_no_refinement_module(coverage):
    model = tiny_model(coverage)
    if coverage == "none":
        assert model.decoder.arm is None and not arm_parameters(model)
    else:
        in_maps = 8 if coverage == "fusion" else 4
        assert model.decoder.arm.conv.in_channels == in_maps and arm_parameters(model)


def test_coverage_is_the_sum_of_earlier_steps():
    weights = torch.rand(2, 3, 4, 5)
    coverage = exclusive_cumsum(weights)
    assert torch.equal(coverage[:, :, 0], torch.zeros(2, 3, 5))
    torch.testing.assert_close(coverage[:, :, 3], weights[:, :, :3].sum(dim=2))


def test_refinement_is_zero_on_padding_and_normalised_over_valid_cells():
    model = tiny_model().train()
    feature_mask = torch.zeros(2, 3, 4, dtype=torch.long)
    feature_mask[0], feature_mask[1, :2, :3] = 1, 1
    refinement = model.decoder.arm(torch.rand(2, 8, 5, 12), feature_mask)
    assert refinement.shape == (2, 4, 5, 12)
    valid = feature_mask.flatten(1).bool()[:, None, None, :].expand_as(refinement)
    assert torch.all(refinement[~valid] == 0)
    per_head = refinement.permute(1, 0, 2, 3)[valid.permute(1, 0, 2, 3)].view(4, -1)
    torch.testing.assert_close(per_head.mean(dim=1), torch.zeros(4), atol=1e-5, rtol=0)


def published_refinement(arm, coverage: torch.Tensor, feature_mask: torch.Tensor) -> torch.Tensor:
    """The ARM as the published code computes it, padded cells zeroed between the ReLU and the projection."""
    batch, in_maps, steps, _ = coverage.shape
    height, width = feature_mask.shape[1:]
    maps = coverage.transpose(1, 2).reshape(batch * steps, in_maps, height, width)
    valid = feature_mask.bool()[:, None].expand(batch, steps, height, width).reshape(batch * steps, height, width)
    features = F.relu(arm.conv(maps)).masked_fill(~valid[:, None], 0.0)
    features = arm.proj(features).permute(0, 2, 3, 1)
    refinement = torch.zeros_like(features)
    refinement[valid] = arm.norm(features[valid])
    return refinement.reshape(batch, steps, height * width, -1).permute(0, 3, 1, 2)


def test_refinement_and_its_gradients_equal_the_published_computation():
    model = tiny_model().train()
    arm = model.decoder.arm
    feature_mask = torch.zeros(2, 3, 4, dtype=torch.long)
    feature_mask[0], feature_mask[1, :2, :3] = 1, 1
    coverage = torch.rand(2, 8, 5, 12, generator=torch.Generator().manual_seed(0)) * feature_mask.flatten(1)[:, None, None]
    upstream = torch.randn(2, 4, 5, 12, generator=torch.Generator().manual_seed(1))
    results = []
    for refine in (arm, functools.partial(published_refinement, arm)):
        arm.zero_grad()
        inputs = coverage.clone().requires_grad_()
        refinement = refine(inputs, feature_mask)
        refinement.backward(upstream)
        results.append([refinement, inputs.grad, *(parameter.grad for parameter in arm.parameters())])
    for ours, published in zip(*results):
        torch.testing.assert_close(ours, published, rtol=0, atol=0)


def test_refinement_changes_the_attention_of_later_layers_only():
    model = tiny_model("self")
    pixel_values, pixel_mask = formula_batch()
    decoder_input_ids = torch.tensor([[BOS, 5, 6, 7]] * 2)
    with torch.no_grad():
        refined = model(pixel_values=pixel_values, pixel_mask=pixel_mask, decoder_input_ids=decoder_input_ids,
                        output_attentions=True).cross_attentions
        arm = model.decoder.arm
        model.decoder.arm = None
        plain = model(pixel_values=pixel_values, pixel_mask=pixel_mask, decoder_input_ids=decoder_input_ids,
                      output_attentions=True).cross_attentions
        model.decoder.arm = arm
    torch.testing.assert_close(refined[0], plain[0])
    # The first step has no coverage, but the batch normalisation's shift still moves it.
    assert not torch.allclose(refined[1][:, :, 1:], plain[1][:, :, 1:])


# --- Training


def test_reverse_labels():
    assert reverse_labels(LABELS, BOS, EOS).tolist() == [[8, 7, 6, 5, BOS], [10, 9, BOS, -100, -100]]


def test_labels_without_end_token_are_a_clear_error():
    with pytest.raises(ValueError, match="end token"):
        reverse_labels(torch.tensor([[5, 6, 7]]), BOS, EOS)


def test_loss_is_the_token_mean_over_both_directions():
    model = tiny_model()
    pixel_values, pixel_mask = formula_batch()
    with torch.no_grad():
        output = model(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=LABELS)
        reverse = reverse_labels(LABELS, BOS, EOS)
        encoder_outputs = model.encoder(pixel_values, pixel_mask=pixel_mask)
        r2l = model(encoder_outputs=encoder_outputs, decoder_input_ids=torch.tensor([[EOS, 8, 7, 6, 5], [EOS, 10, 9, BOS, PAD]]))
    torch.testing.assert_close(output.reverse_logits, r2l.logits)
    expected = F.cross_entropy(
        torch.cat((output.logits, output.reverse_logits)).flatten(0, 1), torch.cat((LABELS, reverse)).flatten()
    )
    torch.testing.assert_close(output.loss, expected)


@functools.cache
def fitted_model(coverage: str) -> tuple[CoMERForFormulaRecognition, list[float]]:
    """A tiny model trained on `formula_batch()` and `LABELS`, and its losses.

    Its batch normalisations are then recalibrated on that batch (exact statistics of the final weights), so
    that the evaluation-mode model sees what the last training steps saw.
    """
    model = tiny_model(coverage, dropout=0.0, densenet_dropout=0.0).train()
    pixel_values, pixel_mask = formula_batch()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    losses = []
    for _ in range(15):
        loss = model(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=LABELS).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None
    with torch.no_grad():
        model(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=LABELS)
    return model.eval(), losses


LEARNT = [[BOS, 5, 6, 7, 8, EOS], [BOS, 9, 10, EOS, PAD, PAD]]


@pytest.mark.parametrize("coverage", COVERAGES)
def test_every_coverage_mode_learns_a_batch(coverage):
    _, losses = fitted_model(coverage)
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("coverage", COVERAGES)
def test_every_coverage_mode_decodes_what_it_learnt_greedily(coverage):
    model, _ = fitted_model(coverage)
    pixel_values, pixel_mask = formula_batch()
    assert model.generate(pixel_values, pixel_mask=pixel_mask, max_new_tokens=8).tolist() == LEARNT


@pytest.mark.parametrize("coverage", COVERAGES)
def test_every_coverage_mode_decodes_what_it_learnt_with_bidirectional_beams(coverage):
    model, _ = fitted_model(coverage)
    pixel_values, pixel_mask = formula_batch()
    assert model.generate(pixel_values, pixel_mask=pixel_mask, max_new_tokens=8, num_beams=3).tolist() == LEARNT


# --- Decoding


@pytest.mark.parametrize("coverage", COVERAGES)
def test_incremental_greedy_decoding_equals_full_rerun(coverage):
    model = tiny_model(coverage)
    pixel_values, pixel_mask = formula_batch()
    settings = dict(max_new_tokens=10, min_new_tokens=10, output_scores=True, return_dict_in_generate=True)
    cached = model.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, **settings)
    rerun = model.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, use_cache=False, **settings)
    assert cached.sequences.shape == (2, 11)
    assert torch.equal(cached.sequences, rerun.sequences)
    torch.testing.assert_close(torch.stack(cached.scores), torch.stack(rerun.scores), rtol=1e-4, atol=1e-5)


def test_beam_search_reorders_the_coverage_with_the_beams():
    model = tiny_model()
    pixel_values, pixel_mask = formula_batch()
    settings = dict(max_new_tokens=8, num_beams=3, bidirectional_rescoring=False, return_dict_in_generate=True,
                    output_scores=True)
    cached = model.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, **settings)
    rerun = model.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, use_cache=False, **settings)
    assert torch.equal(cached.sequences, rerun.sequences)
    torch.testing.assert_close(cached.sequences_scores, rerun.sequences_scores, rtol=1e-4, atol=1e-5)


def test_coverage_cache_reorders_its_sums():
    cache = CoverageCache()
    weights = torch.arange(3.0).view(3, 1, 1, 1).expand(3, 2, 1, 4)
    cache.coverage("refined.0", weights)
    cache.reorder_cache(torch.tensor([2, 2, 0]))
    assert cache.attention_sums["refined.0"][:, 0, 0].tolist() == [2.0, 2.0, 0.0]


def test_bidirectional_beam_search_with_cache_equals_full_rerun():
    model = tiny_model()
    pixel_values, pixel_mask = formula_batch()
    settings = dict(max_new_tokens=8, num_beams=3, return_dict_in_generate=True)
    cached = model.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, **settings)
    rerun = model.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, use_cache=False, **settings)
    assert torch.equal(cached.sequences, rerun.sequences)
    torch.testing.assert_close(cached.sequences_scores, rerun.sequences_scores, rtol=1e-4, atol=1e-5)


def length_normalised_log_likelihood(model, encoder_outputs, start, tokens, stop=None):
    """log P(tokens[, stop]) / length read by teacher forcing; `stop` None for a hypothesis cut by the limit."""
    targets = [*tokens, stop] if stop is not None else tokens
    with torch.no_grad():
        logits = model(encoder_outputs=encoder_outputs, decoder_input_ids=torch.tensor([[start, *tokens][: len(targets)]])).logits
    return logits.log_softmax(-1)[0, torch.arange(len(targets)), targets].sum() / len(targets)


def test_bidirectional_score_adds_both_directions_length_normalised():
    model, _ = fitted_model("fusion")
    pixel_values, pixel_mask = formula_batch()
    output = model.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, max_new_tokens=8, num_beams=3,
                            return_dict_in_generate=True)
    encoder_outputs = model.encoder(pixel_values, pixel_mask=pixel_mask)
    for row in range(2):
        tokens = LEARNT[row][1 : LEARNT[row].index(EOS)]
        image = CoMEREncoderOutput(**{name: value[row : row + 1] for name, value in encoder_outputs.items()})
        l2r = length_normalised_log_likelihood(model, image, BOS, tokens, EOS)
        r2l = length_normalised_log_likelihood(model, image, EOS, tokens[::-1], BOS)
        torch.testing.assert_close(output.sequences_scores[row], l2r + r2l, rtol=1e-4, atol=1e-4)


# --- LaTeX data


def test_latex_tokenizer_reads_compact_and_spaced_latex_alike():
    tokenizer = build_latex_tokenizer()
    assert len(tokenizer) == 114 and tokenizer.pad_token_id == PAD and tokenizer.eos_token_id == EOS
    spaced = tokenizer("\\frac { a } { b } + \\{ x \\}").input_ids
    assert tokenizer("\\frac{a}{b}+\\{x\\}").input_ids == spaced
    assert spaced[-1] == EOS and tokenizer.unk_token_id not in spaced
    assert tokenizer.decode(spaced, skip_special_tokens=True) == "\\frac { a } { b } + \\{ x \\}"


def test_unknown_latex_tokens_are_counted_and_reported(caplog):
    tokenizer = build_latex_tokenizer()
    assert unknown_latex_tokens(["\\hbar + \\hbar ^ { 2 }", "x"], tokenizer) == {"\\hbar": 2}
    processor = TextRecognitionProcessor(TextRecognitionImageProcessor(**FORMULA_IMAGES), tokenizer)
    with caplog.at_level(logging.WARNING):
        labels = processor(text_target=["\\hbar + x"])["labels"]
    assert "1 token(s) outside the vocabulary" in caplog.text and "\\hbar" in caplog.text
    assert labels[0, 0].item() == tokenizer.unk_token_id


def write_crohme(root: Path) -> None:
    """A CROHME folder: train with its images in img/ (BMP), 2014 with PNGs beside the captions."""
    for split, lines, folder, suffix in (
        ("train", ["18_em_0\tx ^ { 2 } + 1", "18_em_1\t\\frac { a } { b }", "18_em_2\t\\hbar"], "img", ".bmp"),
        ("2014", ["RIT_1 a = b", "RIT_2 c"], "", ".png"),
    ):
        (root / split / folder).mkdir(parents=True, exist_ok=True)
        (root / split / "caption.txt").write_text("\n".join(lines) + "\n")
        for line in lines:
            Image.fromarray(np.full((20, 30 + len(line), 1), 255, np.uint8)[..., 0]).save(
                root / split / folder / f"{line.split()[0]}{suffix}"
            )
    (root / "2014" / "RIT_2.png").unlink()


def test_crohme_loader_reads_captions_and_images(tmp_path):
    write_crohme(tmp_path)
    train = load_text_recognition_dataset(tmp_path, split="train")
    assert train["text"] == ["x ^ { 2 } + 1", "\\frac { a } { b }", "\\hbar"]
    assert train["name"] == ["18_em_0", "18_em_1", "18_em_2"]
    assert train[0]["image"].size == (30 + len("18_em_0\tx ^ { 2 } + 1"), 20)


def test_crohme_loader_reports_missing_images_and_unknown_tokens(tmp_path, caplog):
    write_crohme(tmp_path)
    with caplog.at_level(logging.WARNING):
        test_year = load_crohme(tmp_path, split="2014")
        load_crohme(tmp_path, split="train")
    assert test_year["name"] == ["RIT_1"]
    assert "Left out 1 of 2 formulas" in caplog.text and "RIT_2" in caplog.text
    assert "1 of 3 formulas" in caplog.text and "\\hbar (1)" in caplog.text


def test_crohme_loader_names_the_available_splits(tmp_path):
    write_crohme(tmp_path)
    with pytest.raises(ValueError, match=r"available: \['2014', 'train'\].*2014"):
        load_crohme(tmp_path, split="validation")


def test_exprate_counts_exact_and_near_matches():
    exprate = load_metric("exprate")
    result = exprate.compute(
        predictions=["x ^ { 2 }", "a + b", "a", "\\frac { a } { b }"],
        references=["x ^ { 2 }", "a - b", "a + b + c", "\\frac { 1 } { 2 } + 3 + 4"],
    )
    assert result == {"exprate": 0.25, "exprate_within_1": 0.5, "exprate_within_2": 0.5, "exprate_within_3": 0.5}


def test_synthetic_formulas_are_white_on_black_within_the_dictionary():
    dataset = load_text_recognition_dataset("synthetic-math", split="validation", num_samples=12, cache_dir=False)
    dictionary = set(load_latex_dictionary())
    assert all(token in dictionary for text in dataset["text"] for token in text.split())
    for image in dataset["image"]:
        pixels = np.asarray(image)
        assert image.mode == "L" and pixels[0, 0] == 0 and pixels.max() > 200


def test_synthetic_formulas_depend_on_seed_and_index_only():
    first = make_synthetic_formulas(4, seed=3, cache_dir=False)
    again = make_synthetic_formulas(4, seed=3, cache_dir=False, num_proc=2)
    assert first["text"] == again["text"]
    assert [np.asarray(image).tobytes() for image in first["image"]] == [np.asarray(image).tobytes() for image in again["image"]]


def test_low_resolution_share_renders_the_same_formulas_smaller():
    """The share draws after the formula and its font set, so the formulas stay; those drawn into the
    low-resolution share come out smaller; without the share the samples are what they always were."""
    usual = make_synthetic_formulas(12, seed=3, cache_dir=False)
    assert usual["text"] == make_synthetic_formulas(12, seed=3, low_resolution_share=0.0, cache_dir=False)["text"]
    small = make_synthetic_formulas(12, seed=3, low_resolution_share=1.0, cache_dir=False)
    assert small["text"] == usual["text"] and small["font"] == usual["font"]
    def ink_height(image):
        rows = np.nonzero(np.asarray(image).max(axis=1))[0]
        return rows[-1] - rows[0] + 1

    # Rendered at 36-79 dpi instead of 80-140: at most 79/80 of the height (rounding aside).
    assert all(ink_height(low) <= ink_height(high) + 1 for low, high in zip(small["image"], usual["image"]))
    assert np.mean([ink_height(low) / ink_height(high) for low, high in zip(small["image"], usual["image"])]) < 0.75
    with pytest.raises(ValueError, match="low_resolution_share"):
        make_synthetic_formulas(2, low_resolution_share=1.5, cache_dir=False)


def test_mathtext_renders_scripts_of_spaced_tokens():
    # mathtext drops a script written "x ^ { 2 }": the renderer must close the spaces up.
    assert compact_latex("\\sum _ { i = 1 } ^ { n } \\alpha x".split()) == "\\sum_{i=1}^{n}\\alpha x"
    assert render_formula(["x", "^", "{", "2", "}"], "cm", 100, 0).size == render_formula(["x^{2}"], "cm", 100, 0).size


# --- Image processing and training


def test_formula_sizes_are_kept_within_the_limits():
    processor = TextRecognitionImageProcessor(**FORMULA_IMAGES)
    images = [np.zeros((40, 100), np.uint8), np.zeros((8, 12), np.uint8), np.zeros((300, 2000), np.uint8)]
    masks = [processor([image], return_tensors="np")["pixel_mask"][0] for image in images]
    sizes = [(mask.any(axis=1).sum(), mask.any(axis=0).sum()) for mask in masks]
    assert sizes == [(40, 100), (16, 24), (154, 1024)]  # kept; scaled up by 2; scaled down by 1024 / 2000
    # each batch then ends in 32 columns of padding or more, rounded up to a multiple of 16
    assert [mask.shape[1] for mask in masks] == [144, 64, 1056]


def test_formula_batches_are_padded_at_the_bottom_and_right():
    processor = TextRecognitionImageProcessor(**FORMULA_IMAGES)
    batch = processor([np.full((40, 100), 255, np.uint8), np.full((20, 30), 255, np.uint8)], return_tensors="pt")
    assert batch["pixel_values"].shape == (2, 1, 40, 144)
    assert batch["pixel_mask"][1].sum() == 20 * 30 and batch["pixel_mask"][1, :20, :30].all()
    assert batch["pixel_values"][1, 0, 20:].abs().sum() == 0  # black padding


def test_scale_augmentation_only_when_asked():
    processor = TextRecognitionImageProcessor(**FORMULA_IMAGES)
    image = np.zeros((50, 100), np.uint8)
    np.random.seed(0)
    heights = {processor([image], do_scale_augmentation=True)["pixel_values"].shape[2] for _ in range(20)}
    assert len(heights) > 5 and min(heights) >= 35 and max(heights) <= 70  # 50 x [0.7, 1.4]
    assert processor([image])["pixel_values"].shape[2] == 50


def test_textrec_train_augments_training_batches_only(tmp_path):
    spec = get_spec("comer")
    processor = TextRecognitionProcessor(TextRecognitionImageProcessor(**FORMULA_IMAGES), build_latex_tokenizer())
    dataset = datasets.Dataset.from_dict({"image": [Image.new("L", (100, 50))] * 8, "text": ["x"] * 8})
    trainer = TextRecognitionTrainer(
        model=tiny_model(),
        args=Seq2SeqTrainingArguments(output_dir=str(tmp_path), remove_unused_columns=False, per_device_train_batch_size=8,
                                      per_device_eval_batch_size=8, report_to="none", use_cpu=True),
        train_dataset=dataset,
        eval_dataset=dataset,
        data_collator=TextRecognitionCollator(processor),
        train_data_collator=TextRecognitionCollator(processor, spec.train_processor_kwargs),
    )
    np.random.seed(0)
    heights = {next(iter(trainer.get_train_dataloader()))["pixel_values"].shape[2] for _ in range(5)}
    assert len(heights) > 1
    assert next(iter(trainer.get_eval_dataloader()))["pixel_values"].shape[2] == 50


def test_paper_recipe_is_sgd_with_a_plateau_schedule_on_exprate(tmp_path):
    arguments = ["--model", "comer", "--output_dir", str(tmp_path), "--eval_strategy", "no"]
    _, _, training_args = parse_arguments(arguments)
    assert (training_args.learning_rate, training_args.weight_decay) == (0.08, 1e-4)
    trainer = TextRecognitionTrainer(model=tiny_model(), args=training_args, recipe=get_spec("comer").recipe)
    trainer.create_optimizer_and_scheduler(num_training_steps=10)
    assert isinstance(trainer.optimizer, torch.optim.SGD) and trainer.optimizer.defaults["momentum"] == 0.9
    scheduler = trainer.lr_scheduler
    assert isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)
    assert (scheduler.mode, scheduler.factor, training_args.metric_for_best_model) == ("max", 0.25, "exprate")


# --- Scripts


def test_decoding_benchmark_prints_its_table(capsys):
    benchmark_comer_decoding.main(
        ["--preset", "tiny", "--tokens", "3", "--height", "32", "--width", "64", "--num_beams", "2", "--repeats", "1"]
    )
    table = capsys.readouterr().out
    assert "| greedy |" in table and "| bidirectional beam 2 |" in table and "Command:" in table


def test_refinement_figure_is_drawn(tmp_path):
    tokenizer = build_latex_tokenizer()
    torch.manual_seed(0)
    CoMERForFormulaRecognition(CoMERConfig.from_preset("tiny", vocab_size=len(tokenizer))).save_pretrained(tmp_path)
    TextRecognitionProcessor(TextRecognitionImageProcessor(**FORMULA_IMAGES), tokenizer).save_pretrained(tmp_path)
    render_formula(["\\frac", "{", "a", "}", "{", "b", "}"], "cm", 120, 4).save(tmp_path / "formula.png")
    output = tmp_path / "refinement.png"
    draw_comer_refinement.main(["--model_name_or_path", str(tmp_path), "--image", str(tmp_path / "formula.png"),
                                "--max_new_tokens", "3", "--output", str(output)])
    assert Image.open(output).size[0] > 300


def test_step_benchmark_prints_where_the_time_goes(capsys):
    benchmark_comer_step.main(["--presets", "tiny", "--num_formulas", "12", "--max_tokens", "8", "--num_batches", "1",
                               "--repeats", "1"])
    table = capsys.readouterr().out
    assert "| tiny | none |" in table and "| tiny | fusion |" in table and "Command:" in table


@pytest.mark.slow
def test_coverage_study_runs_its_curriculum_across_sessions_and_reports(tmp_path):
    """A session too short to finish leaves the run unfinished (and says so); the same command then resumes it,
    trains the full length from the curriculum stage's model until the CER plateaus, and reports."""
    import comer_coverage_study

    output = tmp_path / "study"
    arguments = [
        f"--output_dir={output}", "--preset=tiny", "--coverage", "fusion", "--curriculum_tokens", "6",
        "--curriculum_steps=3", "--max_steps=30", "--eval_steps=2", "--patience=2", "--num_train=24",
        "--num_validation=4", "--num_test=6", "--eval_batch_size=8", "--threads=1", f"--carry_dir={tmp_path / 'carried'}",
    ]
    assert comer_coverage_study.run([*arguments, "--session_minutes=0.00001"]) == []
    report = (output / "results.md").read_text()
    assert "Still training" in report and "fusion" in report

    (result,) = comer_coverage_study.run(arguments)
    first_stage = json.loads((output / "fusion" / "tokens-6" / "trainer_state.json").read_text())
    final_stage = json.loads((output / "fusion" / "tokens-48" / "trainer_state.json").read_text())
    assert first_stage["global_step"] == 3
    assert final_stage["global_step"] < 30 and final_stage["best_global_step"] is not None
    assert result["training_steps"] == 3 + final_stage["global_step"] and result["cpu_minutes"] > 0
    assert len(result["token_errors"]) == len(result["lengths"]) == 6 and max(result["lengths"]) <= 48
    assert result["best_step"] == final_stage["best_global_step"]
    report = (output / "results.md").read_text()
    assert "| fusion |" in report and "Still training" not in report and "59.3 / 59.8 / 63.0" in report
    for picture in ("curves.png", "cer_curves.png", "refinement.png"):
        assert (output / picture).is_file()
    assert comer_coverage_study.run([*arguments, "--report"]) == [result]
    # The next session's checkout has no runs/: the run carried in the repository comes back, finished.
    shutil.rmtree(output)
    assert comer_coverage_study.run([*arguments, "--report"]) == [result]
    assert (output / "fusion" / "tokens-48" / "model.safetensors").is_file()
