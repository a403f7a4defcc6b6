"""The shared test matrix: every architecture in `textrec.modeling.ARCHITECTURES` joins it.

Train-mode forward with loss, a short run whose loss falls, cached and uncached generation and
beam search (for the models with a decoder; CRNN reads by CTC best path), save/load round trip, loading with `trust_remote_code` where textrec is not
importable, a very wide image, and clear errors on bad input.
"""

import json

import pytest
import torch
from transformers import AutoModelForImageTextToText

from textrec.modeling import ARCHITECTURES
from textrec.modeling.common.generation_cache import CACHE_NAME
from textrec.processing import TextRecognitionImageProcessor
from textrec.processing.training.architectures import SPECS

from .remote_code import run_without_textrec

VOCAB_SIZE = 20
NAMES = sorted(ARCHITECTURES)
DECODER_NAMES = [name for name in NAMES if ARCHITECTURES[name][0]().is_encoder_decoder]
"""The architectures that read with an autoregressive decoder (all but the CTC-only CRNN)."""


def beams_for(name: str) -> int:
    """A beam search where the model has a decoder, else best path."""
    return 2 if name in DECODER_NAMES else 1


def tiny_model(name: str, **overrides):
    config_class, model_class = ARCHITECTURES[name]
    torch.manual_seed(0)
    config = config_class.from_preset("tiny", vocab_size=VOCAB_SIZE, max_target_length=12, **overrides)
    return model_class(config)


def image_batch(name: str, model, batch_size: int = 2, width: int = 64, seed: int = 0) -> dict:
    """Images of the model's channel count and default height, the second one half padding, as the
    architecture's image processor gives them: with a `pixel_mask` only where it pads batches
    (`TextRecognitionImageProcessor.pads`), so fixed-size models, the TrOCR-based one among them, get none."""
    generator = torch.Generator().manual_seed(seed)
    height = getattr(model.config, "image_height", 32)
    pixel_values = torch.randn(batch_size, model.config.num_channels, height, width, generator=generator)
    pixel_mask = torch.ones(batch_size, height, width, dtype=torch.long)
    pixel_mask[1:, :, width // 2 :] = 0
    pixel_values[1:, :, :, width // 2 :] = 0
    if TextRecognitionImageProcessor(**SPECS[name].image_processor_kwargs).pads:
        return {"pixel_values": pixel_values, "pixel_mask": pixel_mask}
    return {"pixel_values": pixel_values}


LABELS = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 2, -100, -100]])


@pytest.mark.parametrize("name", NAMES)
def test_train_forward_gives_loss_and_gradients_everywhere(name):
    model = tiny_model(name).train()
    inputs = image_batch(name, model)
    output = model(**inputs, labels=LABELS)
    assert output.logits.shape[0] == 2 and output.logits.shape[-1] == VOCAB_SIZE
    if name in DECODER_NAMES:  # one distribution per label token (CTC: per feature column)
        assert output.logits.shape[1] == LABELS.shape[1]
    assert torch.isfinite(output.loss)
    output.loss.backward()
    missing = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    assert not missing, f"parameters without gradient: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_short_training_run_lowers_loss(name):
    model = tiny_model(name, dropout=0.0).train()
    inputs = image_batch(name, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        loss = model(**inputs, labels=LABELS).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("name", DECODER_NAMES)
def test_cached_generation_equals_uncached(name):
    model = tiny_model(name).eval()
    inputs = image_batch(name, model)
    cached = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    uncached = model.generate(**inputs, max_new_tokens=8, do_sample=False, use_cache=False)
    assert torch.equal(cached, uncached)
    assert (cached[:, 0] == model.config.decoder_start_token_id).all()


@pytest.mark.parametrize("cache_keyword", ["past_key_values", "cache"])
@pytest.mark.parametrize("name", DECODER_NAMES)
def test_incremental_logits_equal_teacher_forced_logits(name, cache_keyword):
    """Step by step with the cache, under either of its names (transformers before 5.24 passes
    `past_key_values`, 5.24 on `cache`), and read back from the output field the installed transformers reads."""
    model = tiny_model(name).eval()
    inputs = image_batch(name, model)
    decoder_input_ids = torch.tensor([[1, 5, 6, 7], [1, 9, 10, 3]])
    with torch.no_grad():
        full = model(**inputs, decoder_input_ids=decoder_input_ids).logits
        encoder = model.get_encoder()
        encoder_outputs = encoder(**inputs)
        cache, steps = None, []
        for t in range(decoder_input_ids.shape[1]):
            output = model(
                encoder_outputs=encoder_outputs,
                decoder_input_ids=decoder_input_ids[:, t : t + 1],
                use_cache=True,
                **{cache_keyword: cache},
            )
            cache = getattr(output, CACHE_NAME)
            steps.append(output.logits)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", DECODER_NAMES)
def test_a_cache_passed_under_both_names_is_refused(name):
    model = tiny_model(name).eval()
    inputs = image_batch(name, model)
    with torch.no_grad():
        first = model(**inputs, decoder_input_ids=torch.tensor([[1], [1]]), use_cache=True)
        step = dict(encoder_outputs=model.get_encoder()(**inputs), decoder_input_ids=torch.tensor([[5], [9]]))
        other = model(**step, use_cache=True)
    with pytest.raises(ValueError, match="not both"):
        model(**step, past_key_values=getattr(first, CACHE_NAME), cache=getattr(other, CACHE_NAME))


@pytest.mark.parametrize("name", DECODER_NAMES)
def test_beam_search_returns_sequences_starting_with_decoder_start(name):
    model = tiny_model(name).eval()
    inputs = image_batch(name, model)
    beams = model.generate(**inputs, max_new_tokens=6, num_beams=3)
    assert beams.shape[0] == 2 and beams.shape[1] <= 7
    assert (beams[:, 0] == model.config.decoder_start_token_id).all()


@pytest.mark.parametrize("name", NAMES)
def test_save_and_load_round_trip(name, tmp_path):
    model = tiny_model(name).eval()
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").exists()
    config = json.loads((tmp_path / "config.json").read_text())
    assert "AutoModelForImageTextToText" in config["auto_map"]
    reloaded = AutoModelForImageTextToText.from_pretrained(tmp_path).eval()
    assert type(reloaded) is type(model)
    inputs = image_batch(name, model)
    with torch.no_grad():
        expected = model(**inputs, labels=LABELS).logits
        actual = reloaded(**inputs, labels=LABELS).logits
    torch.testing.assert_close(actual, expected)


@pytest.mark.parametrize("name", NAMES)
def test_trust_remote_code_load_without_textrec(name, tmp_path):
    model = tiny_model(name).eval()
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    inputs = image_batch(name, model)
    torch.save(inputs, tmp_path / "inputs.pt")
    expected = model.generate(**inputs, max_new_tokens=8, num_beams=beams_for(name))
    output = run_without_textrec(
        f"""
        import torch
        from transformers import AutoModelForImageTextToText
        model = AutoModelForImageTextToText.from_pretrained({str(folder)!r}, trust_remote_code=True).eval()
        assert not type(model).__module__.startswith("textrec"), type(model).__module__
        inputs = torch.load("inputs.pt")
        ids = model.generate(**inputs, max_new_tokens=8, num_beams={beams_for(name)})
        print(ids.tolist())
        """,
        tmp_path,
    )
    assert output.strip().splitlines()[-1] == str(expected.tolist())


@pytest.mark.parametrize("name", NAMES)
def test_very_wide_image(name):
    model = tiny_model(name).eval()
    inputs = image_batch(name, model, width=2048)
    if getattr(model, "requires_fixed_image_size", False):  # a ViT's grid of patches: the processor resizes
        with pytest.raises(ValueError, match="pixel_values"):
            model(**inputs, labels=LABELS)
        return
    with torch.no_grad():
        output = model(**inputs, labels=LABELS)
    assert torch.isfinite(output.loss)
    ids = model.generate(**inputs, max_new_tokens=4)
    assert ids.shape[0] == 2


@pytest.mark.parametrize("name", NAMES)
def test_wrong_channel_count_is_a_clear_error(name):
    model = tiny_model(name).eval()
    pixel_values = image_batch(name, model)["pixel_values"]
    wrong = pixel_values.repeat(1, 2, 1, 1)
    with pytest.raises(ValueError, match="pixel_values"):
        model(pixel_values=wrong, labels=LABELS)


PADDING_NAMES = [name for name in NAMES if TextRecognitionImageProcessor(**SPECS[name].image_processor_kwargs).pads]
"""The architectures whose processor pads batches to the widest image (with a `pixel_mask`)."""


@pytest.mark.parametrize("name", PADDING_NAMES)
def test_an_image_reads_as_alone_when_batched_with_a_wider_one(name):
    """The point of `pixel_mask`: padding a narrow image to a wider neighbour's width must not change what the
    model makes of it. Not to the last bit: the convolutions' last columns see into the padding (as in every
    CNN recognizer), so the masked batch is compared with what the model does with the padding unmasked."""
    model = tiny_model(name).eval()
    height = getattr(model.config, "image_height", 32)
    torch.manual_seed(1)
    narrow = torch.randn(1, model.config.num_channels, height, 64)
    wide = torch.randn(1, model.config.num_channels, height, 128)
    batch = torch.cat([torch.nn.functional.pad(narrow, (0, 64)), wide])
    mask = torch.ones(2, height, 128, dtype=torch.long)
    mask[0, :, 64:] = 0
    if name in DECODER_NAMES:
        decoder_input_ids = torch.tensor([[model.config.decoder_start_token_id, 5, 6, 7]] * 2)
        with torch.no_grad():
            alone = model(narrow, decoder_input_ids=decoder_input_ids[:1]).logits[0]
            masked = model(batch, pixel_mask=mask, decoder_input_ids=decoder_input_ids).logits[0]
            unmasked = model(batch, decoder_input_ids=decoder_input_ids).logits[0]
    else:  # CTC only: one prediction per feature column
        with torch.no_grad():
            alone = model(narrow).logits[0]
            output = model(batch, pixel_mask=mask)
            masked = output.logits[0, output.attention_mask[0].bool()]
            unmasked = model(batch).logits[0, : alone.shape[0]]
    assert masked.shape == alone.shape
    masked_difference, unmasked_difference = (masked - alone).abs().max(), (unmasked - alone).abs().max()
    assert masked_difference < unmasked_difference / 3, (masked_difference, unmasked_difference)


@pytest.mark.parametrize("name", NAMES)
def test_a_new_models_processor_reads_the_input_size_its_config_declares(name):
    """One input contract: what the model declares (channels, height where it has one, a fixed-size model's
    width, the label length) the processor reads from its configuration; nothing is copied back."""
    from textrec.processing.training import ModelArguments, build_recognizer

    overrides = '{"image_height": 24}' if name in ("resnet-transformer", "sharp-attention") else None
    model_args = ModelArguments(model=name, preset="tiny", max_target_length=12, config_overrides=overrides)
    model, processor = build_recognizer(model_args, SPECS[name])
    config, image_processor = model.config, processor.image_processor
    assert image_processor.num_channels == config.num_channels
    assert processor.max_label_length == config.max_target_length == 12
    if hasattr(config, "image_height"):
        assert image_processor.height == config.image_height
    if image_processor.resize_mode == "fixed":
        assert image_processor.width == config.image_width
    if overrides:
        assert image_processor.height == 24
