"""What is specific to the sharp attention recognizer, its data (MNIST IDX files, scene-text LMDB) and
its attention-entropy metric. The shared matrix (test_model_matrix.py) covers generation, caching,
saving and remote code for the default (sharp, chain) configuration."""

import gzip
import io
import json
import shutil

import datasets
import lmdb
import numpy as np
import pytest
import torch
from PIL import Image

from textrec.modeling import SharpAttentionConfig, SharpAttentionForTextRecognition
from textrec.modeling.sharp_attention.modeling_sharp_attention import RewardBaseline, VGGFeatureExtractor
from textrec.processing.data import load_text_recognition_dataset, parse_dataset_options
from textrec.processing.data.mnist import make_mnist_digit_sequences, read_idx
from textrec.processing.metrics import load_metric

VARIANTS = {
    "soft": dict(attention_type="soft"),
    "hard": dict(attention_type="hard"),
    "sharp-pooling": dict(attention_type="sharp", context_mode="pooling"),
    "sharp-chain": dict(attention_type="sharp", context_mode="chain"),
    "sharp-weighting": dict(attention_type="sharp", context_mode="weighting"),
}
LABELS = torch.tensor([[5, 6, 2], [7, 2, -100]])


def tiny_model(**overrides) -> SharpAttentionForTextRecognition:
    torch.manual_seed(0)
    config = SharpAttentionConfig.from_preset("tiny", vocab_size=12, max_target_length=6, **overrides)
    return SharpAttentionForTextRecognition(config)


def images(batch_size: int = 2, width: int = 48) -> torch.Tensor:
    return torch.randn(batch_size, 1, 32, width, generator=torch.Generator().manual_seed(0))


# ------------------------------------------------------------------------------------------ model


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_attention_variant_lowers_its_loss_in_a_short_run(variant):
    model = tiny_model(**VARIANTS[variant]).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(12):
        loss = model(pixel_values=images(), labels=LABELS).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3]), losses


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_attention_variant_decodes_through_generate(variant):
    model = tiny_model(**VARIANTS[variant]).eval()
    ids = model.generate(pixel_values=images(), max_new_tokens=5)
    assert ids.shape[0] == 2 and 2 <= ids.shape[1] <= 6
    assert (ids[:, 0] == model.config.decoder_start_token_id).all()


def test_gradients_reach_every_localisation_network():
    model = tiny_model().train()
    for transformer in model.decoder.sharpener.transformers:  # off the identity start, where the heads are zero
        torch.nn.init.normal_(transformer.head.weight, std=0.01)
    model(pixel_values=images(), labels=LABELS).loss.backward()
    for transformer in model.decoder.sharpener.transformers:
        for name, parameter in transformer.named_parameters():
            assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_reward_baseline_is_the_moving_average_of_mini_batch_mean_rewards():
    baseline = RewardBaseline(momentum=0.9)
    assert baseline(torch.tensor([-1.0, -3.0])).item() == 0.0  # b_0, used by the first mini-batch
    assert baseline.value.item() == pytest.approx(0.1 * -2.0)
    assert baseline(torch.tensor([-1.0])).item() == pytest.approx(-0.2)
    assert baseline.value.item() == pytest.approx(0.9 * -0.2 + 0.1 * -1.0)


def test_training_forward_moves_the_baseline_by_the_mean_log_likelihood_of_the_targets():
    model = tiny_model(attention_type="hard").train()
    output = model(pixel_values=images(), labels=LABELS)
    log_probs = output.logits.log_softmax(-1).gather(-1, LABELS.clamp(min=0)[..., None]).squeeze(-1)
    expected = 0.1 * log_probs[LABELS != -100].mean()
    assert model.reward_baseline.value.item() == pytest.approx(expected.item(), rel=1e-5)
    model.eval()(pixel_values=images(), labels=LABELS)
    assert model.reward_baseline.value.item() == pytest.approx(expected.item(), rel=1e-5)


@pytest.mark.parametrize("reinforce_weight", [0.0, 1.0])
def test_hard_attention_learns_where_to_look_only_through_reinforce(reinforce_weight):
    model = tiny_model(attention_type="hard", reinforce_weight=reinforce_weight).train()
    output = model(pixel_values=images(), labels=LABELS)
    assert output.loss.item() == pytest.approx(output.ce_loss.item())  # the REINFORCE term adds no value
    output.loss.backward()
    gradient = model.decoder.attention.score.weight.grad.abs().sum().item()
    assert (gradient > 0) == (reinforce_weight > 0)


def test_eval_mode_reads_the_most_probable_column():
    model = tiny_model(attention_type="hard").eval()
    output = model(pixel_values=images(), labels=LABELS, output_attentions=True)
    assert torch.equal(output.attention_indices, output.attention_weights.argmax(-1))


def test_vgg_columns_and_their_receptive_field_centres():
    backbone = VGGFeatureExtractor(1, [4] * 7)
    assert backbone(torch.zeros(1, 1, 32, 100)).shape == (1, 24, 4)
    assert backbone.column_centres(24).tolist() == [4.0 + 4 * i for i in range(24)]


def test_convolutions_and_pools_run_channels_last_on_one_channel_images_with_the_same_result():
    """oneDNN's max-pools are about 10x faster channels-last; a one-channel image must not leave the VGG and the
    localisation networks channels-first (`contiguous(channels_last)` is a no-op on it)."""
    model = tiny_model(attention_type="sharp")
    layouts = []

    def record_layout(module, inputs):
        if inputs[0].shape[1] > 1:  # the first convolution's one-channel input has no layout to speak of
            layouts.append(inputs[0].is_contiguous(memory_format=torch.channels_last))

    for module in model.modules():
        if isinstance(module, (torch.nn.Conv2d, torch.nn.MaxPool2d)):
            module.register_forward_pre_hook(record_layout)
    model(pixel_values=images(width=100), labels=LABELS).loss.backward()
    assert layouts and all(layouts)
    backbone = model.encoder.backbone
    pixels = images(width=100)
    torch.testing.assert_close(backbone(pixels), torch.nn.Sequential.forward(backbone, pixels).mean(2).transpose(1, 2))


def test_new_sharpener_patch_is_the_region_around_the_chosen_column():
    model = tiny_model(sharpener_upsampling=2.0, sharpener_region_width=64).eval()
    output = model(pixel_values=images(width=100), labels=LABELS, output_attentions=True)
    centres = 4.0 + 4.0 * output.attention_indices.float()
    corners = output.patch_corners  # the identity transformers keep the region: 64 / 2.0 pixels wide
    torch.testing.assert_close(corners[..., 0, 0], centres - 16.0)
    torch.testing.assert_close(corners[..., 2, 0], centres + 16.0)
    torch.testing.assert_close(corners[..., 2, 1], torch.full_like(centres, 32.0))


def test_step_benchmark_prints_where_the_time_goes(capsys):
    import benchmark_sharp_step

    benchmark_sharp_step.main(["--presets", "tiny", "--batch_size", "2", "--length", "2", "--repeats", "1"])
    table = capsys.readouterr().out
    sharp_row = next(line for line in table.splitlines() if line.startswith("| tiny | sharp |"))
    assert "| tiny | soft |" in table and "| tiny | hard |" in table and "Command:" in table
    assert "| - |" not in sharp_row  # the sharpener and the patch CNN are timed for sharp


def test_reference_loss_compares_patches_with_the_glyphs_of_the_targets():
    model = tiny_model(reference_loss_weight=1.0).eval()
    glyphs = torch.arange(12, dtype=torch.float32)[:, None, None, None].expand(12, 1, 32, 24) / 12
    available = torch.arange(12) >= 4  # special tokens (eos = 2) have no glyph
    model.set_reference_glyphs(glyphs, available)
    output = model(pixel_values=images(), labels=LABELS, output_attentions=True)
    steps = [(0, 0), (0, 1), (1, 0)]  # labels 5, 6, 7; the eos steps are left out
    expected = torch.stack([(output.patches[b, t] - glyphs[LABELS[b, t]]).pow(2).mean() for b, t in steps]).mean()
    torch.testing.assert_close(output.reference_loss, expected)
    torch.testing.assert_close(output.loss, output.ce_loss + expected)


def test_textrec_train_brings_the_paper_recipe_adadelta():
    from textrec.processing.training.architectures import SPECS
    from textrec.processing.training import parse_arguments

    _, _, training_args = parse_arguments(["--model", "sharp-attention", "--output_dir", "unused"])
    assert (training_args.learning_rate, training_args.weight_decay) == (1.0, 4e-5)
    optimizer_class, kwargs = SPECS["sharp-attention"].recipe.optimizer(training_args)
    assert optimizer_class is torch.optim.Adadelta and kwargs == dict(lr=1.0, rho=0.95)


# ------------------------------------------------------------------------------------------- data


def idx_bytes(array: np.ndarray, type_code: int) -> bytes:
    header = bytes([0, 0, type_code, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_mnist_fixture(folder, count: int = 6, compress: bool = True):
    """MNIST-named IDX files of `count` 28x28 digits: a filled square of brightness 40 * label, label i % 10."""
    labels = (np.arange(count) % 10).astype(np.uint8)
    digits = np.zeros((count, 28, 28), np.uint8)
    for i, label in enumerate(labels):
        digits[i, 6:22, 8:20] = 40 + 20 * label
    for prefix in ("train", "t10k"):
        for name, array in ((f"{prefix}-images-idx3-ubyte", digits), (f"{prefix}-labels-idx1-ubyte", labels)):
            data = idx_bytes(array, 0x08)
            if compress:
                (folder / f"{name}.gz").write_bytes(gzip.compress(data))
            else:
                (folder / name).write_bytes(data)
    return digits, labels


@pytest.mark.parametrize("compress", [True, False])
def test_idx_reader_reads_the_fixture_gzipped_or_not(tmp_path, compress):
    digits, labels = write_mnist_fixture(tmp_path, compress=compress)
    suffix = ".gz" if compress else ""
    assert np.array_equal(read_idx(tmp_path / f"t10k-images-idx3-ubyte{suffix}"), digits)
    assert np.array_equal(read_idx(tmp_path / f"t10k-labels-idx1-ubyte{suffix}"), labels)


def test_idx_reader_reads_wider_types_big_endian(tmp_path):
    values = np.array([[1.5, -2.0], [3.25, 1e6]], np.float32)
    (tmp_path / "values.idx").write_bytes(idx_bytes(values, 0x0D))
    assert np.array_equal(read_idx(tmp_path / "values.idx"), values)


def test_mnist_digit_sequences_are_built_from_the_idx_files(tmp_path):
    write_mnist_fixture(tmp_path)
    dataset = make_mnist_digit_sequences(4, mnist_dir=tmp_path, length=3, source_split="test", cache_dir=False)
    for row in dataset:
        assert row["image"].size == (3 * 32, 32) and len(row["text"]) == 3
        cells = np.asarray(row["image"]).reshape(32, 3, 32)
        for cell, label in enumerate(row["text"]):  # ink 40 + 20 * label in the fixture, drawn dark on white
            assert abs(int(np.median(cells[12:20, cell, 12:20])) - (255 - (40 + 20 * int(label)))) <= 2


def test_dataset_options_follow_the_name():
    assert parse_dataset_options("mnist-digits:length=13,rotated=true,mnist_dir=data/mnist") == (
        "mnist-digits",
        {"length": 13, "rotated": True, "mnist_dir": "data/mnist"},
    )
    assert parse_dataset_options("folder:with:colons") == ("folder:with:colons", {})


def test_lmdb_loader_reads_the_benchmark_layout(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")  # where the Arrow copy goes
    texts = ["hello", "World", "42"]
    with lmdb.open(str(tmp_path / "test"), map_size=1 << 20) as environment, environment.begin(write=True) as txn:
        for index, text in enumerate(texts, start=1):
            buffer = io.BytesIO()
            Image.new("L", (10 * index, 8), 200).save(buffer, format="PNG")
            txn.put(b"image-%09d" % index, buffer.getvalue())
            txn.put(b"label-%09d" % index, text.encode())
        txn.put(b"num-samples", str(len(texts)).encode())
    dataset = load_text_recognition_dataset(tmp_path, split="test")
    assert dataset["text"] == texts
    assert [image.size for image in dataset["image"]] == [(10, 8), (20, 8), (30, 8)]


# ----------------------------------------------------------------------------------------- metric


def test_attention_entropy_metric_averages_step_entropies_per_image_then_over_images():
    metric = load_metric("attention_entropy")
    one_hot, uniform_4 = [0.0, 1.0, 0.0, 0.0], [0.25] * 4
    result = metric.compute(attentions=[[one_hot, uniform_4], [[0.5, 0.5]]])
    expected = np.mean([np.mean([0.0, np.log(4)]), np.log(2)])
    assert result["mean_attention_entropy"] == pytest.approx(expected)


# ------------------------------------------------------------------------------------------ the study


@pytest.mark.slow
def test_study_default_arguments_are_textrec_train_arguments(tmp_path):
    """The study's own defaults (the `small` preset, the recipe, bf16 as the CPU allows) are what textrec-train
    accepts for the first stage (a new model); a later stage starts from the previous stage's model."""
    from textrec.processing.training import parse_arguments
    import study_sharp_attention

    args = study_sharp_attention.build_parser().parse_args([f"--mnist_dir={tmp_path}"])
    first, final = study_sharp_attention.stages(args, rotated=False)[::2]
    model_args, _, training_args = parse_arguments(
        study_sharp_attention.train_arguments(args, tmp_path, "sharp", first, None, 10.0))
    assert model_args.preset == "small" and training_args.max_steps == args.curriculum_steps
    later = study_sharp_attention.train_arguments(args, tmp_path, "sharp", final, tmp_path / "length-9", 10.0)
    assert f"--model_name_or_path={tmp_path / 'length-9'}" in later and "--early_stopping_patience=8" in later
    assert not any(argument.startswith("--preset") for argument in later)  # the saved model's own


def test_study_runs_its_curriculum_across_sessions_and_reports(tmp_path):
    """A session too short to finish leaves the run unfinished (and says so); the same command then resumes
    it, trains the final length from the curriculum stage's model until the CER plateaus, and reports."""
    import study_sharp_attention

    mnist = tmp_path / "mnist"
    mnist.mkdir()
    write_mnist_fixture(mnist, count=5_020)  # more than the 5,000 digits held out for validation
    arguments = [
        f"--mnist_dir={mnist}", f"--output_dir={tmp_path / 'study'}", "--preset=tiny", "--attention", "soft",
        "--digits", "normal", "--curriculum_lengths", "2", "--curriculum_steps=4", "--length=3", "--max_steps=40",
        "--eval_steps=2", "--patience=2", "--num_train=64", "--num_validation=8", "--num_test=8", "--threads=1",
        "--no-bf16", f"--carry_dir={tmp_path / 'carried'}",
    ]
    assert study_sharp_attention.run([*arguments, "--session_minutes=0.00001"]) == []
    report = (tmp_path / "study" / "results.md").read_text()
    assert "Still training" in report and "l3-normal-soft" in report

    (result,) = study_sharp_attention.run(arguments)
    run_dir = tmp_path / "study" / "l3-normal-soft"
    first_stage = json.loads((run_dir / "length-2" / "trainer_state.json").read_text())
    final_stage = json.loads((run_dir / "length-3" / "trainer_state.json").read_text())
    assert first_stage["global_step"] == 4
    # Finished: the curriculum stage keeps its log (the curves) but not its weights; the final stage's model stays.
    assert not (run_dir / "length-2" / "model.safetensors").exists() and (run_dir / "length-3" / "model.safetensors").is_file()
    assert final_stage["global_step"] < 40 and final_stage["best_global_step"] is not None
    assert result["training_steps"] == 4 + final_stage["global_step"] and result["cpu_minutes"] > 0
    assert result["test_images"] == 8 and 0 <= result["accuracy"] <= 1
    assert (run_dir / "figure.png").is_file() and (tmp_path / "study" / "curves.png").is_file()
    assert f"| normal | soft | {100 * result['accuracy']:.1f} (" in (tmp_path / "study" / "results.md").read_text()
    # The next session's checkout has no runs/: the run carried in the repository comes back, finished.
    shutil.rmtree(tmp_path / "study")
    assert study_sharp_attention.run([*arguments, "--report"]) == [result]
    assert (run_dir / "length-3" / "model.safetensors").is_file()
