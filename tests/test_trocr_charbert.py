"""The TrOCR–CharBERT composite: causality, identity with TrOCR, generation, building from checkpoints."""

import copy
import shutil

import pytest
import torch
from transformers import AutoModelForImageTextToText, TrOCRForCausalLM, ViTModel, VisionEncoderDecoderModel

from textrec.modeling import (
    CharBertConfig,
    CharBertModel,
    TrOCRCharBertConfig,
    TrOCRCharBertForTextRecognition,
    TrOCRForTextRecognition,
    TrOCRRecognizerConfig,
)
from textrec.modeling.trocr_charbert.tensor_combine import WeightedCombine

from .remote_code import run_without_textrec

VOCAB_SIZE = 20
COMBINES = ["add", "mean", "linear", "conv"]
TINY = TrOCRCharBertConfig.PRESETS["tiny"]
# The thesis layout (sequence axis as channels, fixed lengths, masked channel mixing) at tiny sizes.
THESIS_LAYOUT_TINY = dict(
    encoder=TINY["encoder"], trocr=TINY["trocr"], charbert=TINY["charbert"], max_decoder_length=16, charbert_length=14
)
LAYOUTS = {"sliding": ("tiny", {}), "fixed": ("thesis", THESIS_LAYOUT_TINY)}


def build(combine="add", layout="sliding", seed=0, **overrides):
    preset, sizes = LAYOUTS[layout]
    torch.manual_seed(seed)
    config = TrOCRCharBertConfig.from_preset(
        preset, vocab_size=VOCAB_SIZE, max_target_length=12, combine=combine, **{**sizes, **overrides}
    )
    return TrOCRCharBertForTextRecognition(config).eval()


def images(model, batch_size=2, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch_size, model.config.num_channels, *model.config.image_size, generator=generator)


def fix_weights_to_embeddings(model) -> None:
    """Makes the corrector an identity: combine weight 1 on E (weighted combines), or zero corrections (add)."""
    corrector = model.decoder.corrector
    if isinstance(corrector.combine, WeightedCombine):

        def on_embeddings_only(stack, step_cache=None):
            weights = torch.zeros(stack.shape[:3])
            weights[:, 0] = 1.0
            return weights

        corrector.combine.weights = on_embeddings_only
    else:
        with torch.no_grad():
            for transform in (corrector.from_token, corrector.from_char):
                transform.output_layer().weight.zero_()
                transform.output_layer().bias.zero_()


def plain_trocr(model) -> VisionEncoderDecoderModel:
    """transformers' own ViT + TrOCR with the composite's encoder and TrOCR weights."""
    encoder = ViTModel(copy.deepcopy(model.config.encoder), add_pooling_layer=False)
    encoder.load_state_dict(model.encoder.state_dict())
    decoder = TrOCRForCausalLM(copy.deepcopy(model.config.decoder.trocr))
    decoder.load_state_dict(model.decoder.trocr.state_dict())
    trocr = VisionEncoderDecoderModel(encoder=encoder, decoder=decoder).eval()
    trocr.config.decoder_start_token_id = model.config.decoder_start_token_id
    trocr.config.pad_token_id = model.config.pad_token_id
    return trocr


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("combine", COMBINES)
def test_no_position_sees_later_tokens(combine, layout):
    model = build(combine, layout)
    pixel_values = images(model)
    ids = torch.randint(3, VOCAB_SIZE, (2, 10), generator=torch.Generator().manual_seed(1))
    t, k = 4, 2
    changed = ids.clone()
    changed[:, t + k] = (changed[:, t + k] + 1 - 3) % (VOCAB_SIZE - 3) + 3
    with torch.no_grad():
        before = model(pixel_values=pixel_values, decoder_input_ids=ids).logits
        after = model(pixel_values=pixel_values, decoder_input_ids=changed).logits
    torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1], rtol=0, atol=1e-6)
    # The change does reach the positions at and after it (the test can see a difference).
    assert not torch.allclose(after[:, t + k :], before[:, t + k :])


@pytest.mark.parametrize("use_learned_positions", [True, False])
@pytest.mark.parametrize("combine", COMBINES)
def test_identity_corrector_gives_exactly_trocr_logits(combine, use_learned_positions):
    model = build(combine, trocr=dict(TINY["trocr"], use_learned_position_embeddings=use_learned_positions))
    fix_weights_to_embeddings(model)
    trocr = plain_trocr(model)
    pixel_values = images(model)
    labels = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 2, -100, -100]])
    with torch.no_grad():
        expected = trocr(pixel_values=pixel_values, labels=labels).logits
        actual = model(pixel_values=pixel_values, labels=labels).logits
    assert torch.equal(actual, expected)


def greedy_loop(model, pixel_values, steps):
    """Greedy decoding by calling `forward` on the whole prefix at each step, no cache."""
    ids = torch.full((pixel_values.shape[0], 1), model.config.decoder_start_token_id)
    finished = torch.zeros(pixel_values.shape[0], dtype=torch.bool)
    for _ in range(steps):
        with torch.no_grad():
            logits = model(pixel_values=pixel_values, decoder_input_ids=ids, use_cache=False).logits[:, -1]
        next_ids = logits.argmax(-1).masked_fill(finished, model.config.pad_token_id)
        ids = torch.cat([ids, next_ids[:, None]], dim=1)
        finished |= next_ids == model.config.eos_token_id
        if finished.all():
            break
    return ids


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("combine", COMBINES)
def test_generate_equals_a_greedy_loop_over_forward(combine, layout):
    model = build(combine, layout)
    pixel_values = images(model, batch_size=3)
    generated = model.generate(pixel_values=pixel_values, max_new_tokens=8, do_sample=False, num_beams=1)
    assert torch.equal(generated, greedy_loop(model, pixel_values, steps=8))


@pytest.mark.parametrize("combine", COMBINES)
def test_beam_search_with_cache_equals_without(combine):
    model = build(combine, seed=3)
    pixel_values = images(model, batch_size=2)
    cached = model.generate(pixel_values=pixel_values, max_new_tokens=8, num_beams=3)
    uncached = model.generate(pixel_values=pixel_values, max_new_tokens=8, num_beams=3, use_cache=False)
    assert torch.equal(cached, uncached)


# Two convolutions per transform and two CharBERT layers: every tail and every attention cache is exercised.
DEEPER = dict(transform_conv_layers=2, charbert=dict(TINY["charbert"], num_hidden_layers=2))


def rereading(model):
    """The same model with the corrector re-reading the prefix at every cached step."""
    copied = copy.deepcopy(model)
    copied.config.decoder.incremental_corrector = False
    copied.decoder.config.incremental_corrector = False
    return copied


@pytest.mark.parametrize("combine", COMBINES)
def test_incremental_corrector_gives_the_logits_of_a_full_pass_in_chunks(combine):
    """Fed in chunks of 3, 1 and 2 tokens with a cache, each chunk's logits are those of one uncached pass over
    the whole sequence, and the corrector's cache layers are the ones the configuration declares."""
    model = build(combine, seed=5, **DEEPER)
    assert model.config.decoder.decodes_incrementally
    pixel_values = images(model)
    ids = torch.randint(3, VOCAB_SIZE, (2, 6), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        encoder_outputs = model.encoder(pixel_values=pixel_values)
        expected = model(encoder_outputs=encoder_outputs, decoder_input_ids=ids, use_cache=False).logits
        cache, chunks = None, []
        for begin, end in ((0, 3), (3, 4), (4, 6)):
            output = model(encoder_outputs=encoder_outputs, decoder_input_ids=ids[:, begin:end],
                           past_key_values=cache, use_cache=True)
            cache = output.past_key_values
            chunks.append(output.logits)
    torch.testing.assert_close(torch.cat(chunks, dim=1), expected, rtol=1e-5, atol=1e-5)
    assert len(cache.self_attention_cache.layers) == model.config.decoder.num_hidden_layers


SEARCHES = {
    # A freshly initialised tiny model reads one token over and over greedily; sampling (the same seed for both)
    # and the beams' alternatives make the sequences vary, so that a wrong cache would show.
    "sampling": dict(do_sample=True, top_k=0, num_beams=1),
    "beam": dict(do_sample=False, num_beams=3, num_return_sequences=3),
}


@pytest.mark.parametrize("search", sorted(SEARCHES))
@pytest.mark.parametrize("combine", COMBINES)
def test_incremental_corrector_gives_the_tokens_and_scores_of_rereading_the_prefix(combine, search):
    model = build(combine, seed=7, **DEEPER)
    pixel_values = images(model, batch_size=3, seed=4)
    settings = dict(max_new_tokens=10, output_scores=True, return_dict_in_generate=True, **SEARCHES[search])
    torch.manual_seed(0)
    incremental = model.generate(pixel_values=pixel_values, **settings)
    torch.manual_seed(0)
    reread = rereading(model).generate(pixel_values=pixel_values, **settings)
    assert torch.equal(incremental.sequences, reread.sequences)
    assert len(set(incremental.sequences[:, 1:].flatten().tolist())) >= 3, "a degenerate reading proves little"
    for incremental_scores, reread_scores in zip(incremental.scores, reread.scores, strict=True):
        torch.testing.assert_close(incremental_scores, reread_scores, rtol=1e-5, atol=1e-5)
    if search == "beam":
        torch.testing.assert_close(incremental.sequences_scores, reread.sequences_scores, rtol=1e-5, atol=1e-5)


def test_fixed_layout_rereads_the_prefix():
    model = build("add", "fixed")
    assert not model.config.decoder.decodes_incrementally
    assert model.config.decoder.num_hidden_layers == model.config.decoder.trocr.decoder_layers + 1


@pytest.mark.parametrize("layout,expected_length", [("sliding", 7), ("fixed", 14)])
def test_charbert_sequence_length_follows_the_layout(layout, expected_length):
    model = build("add", layout)
    seen = []
    handle = model.decoder.corrector.charbert.register_forward_hook(
        lambda module, args, kwargs, output: seen.append(kwargs["inputs_embeds"].shape[1]), with_kwargs=True
    )
    with torch.no_grad():
        model(pixel_values=images(model), decoder_input_ids=torch.ones(2, 7, dtype=torch.long))
    handle.remove()
    assert seen == [expected_length]


def test_fixed_layout_rejects_lines_longer_than_its_length():
    model = build("add", "fixed")
    with pytest.raises(ValueError, match="at most 16 tokens"):
        model(pixel_values=images(model), decoder_input_ids=torch.ones(2, 17, dtype=torch.long))


def test_alignment_loss_is_added_with_its_weight_and_trains_the_transform():
    model = build("add", alignment_loss_weight=0.5).train()
    labels = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 2, -100, -100]])
    output = model(pixel_values=images(model), labels=labels)
    assert 0 < output.alignment_loss.item() < 2
    torch.testing.assert_close(output.loss, output.cross_entropy + 0.5 * output.alignment_loss)
    output.alignment_loss.backward()
    assert model.decoder.corrector.to_token.output_layer().weight.grad.abs().sum() > 0
    assert model.decoder.corrector.charbert.get_input_embeddings().weight.grad is None


def test_alignment_loss_needs_a_shared_vocabulary():
    with pytest.raises(ValueError, match="share the decoder's vocabulary"):
        TrOCRCharBertConfig.from_preset("tiny", vocab_size=VOCAB_SIZE, alignment_loss_weight=1.0, charbert=dict(vocab_size=50))


def test_bidirectional_charbert_is_refused():
    with pytest.raises(ValueError, match="must be causal"):
        TrOCRCharBertConfig.from_preset("tiny", vocab_size=VOCAB_SIZE, charbert=dict(causal=False))


def test_wrong_image_size_is_a_clear_error():
    model = build()
    with pytest.raises(ValueError, match=r"pixel_values must be \(batch, 1, 32, 64\)"):
        model(pixel_values=torch.randn(2, 1, 32, 128), decoder_input_ids=torch.ones(2, 3, dtype=torch.long))


def test_frozen_modules_do_not_train_and_survive_saving(tmp_path):
    model = build("linear", frozen_modules=["encoder", "charbert", "decoder_embeddings"])
    model.save_pretrained(tmp_path)
    reloaded = TrOCRCharBertForTextRecognition.from_pretrained(tmp_path)
    for candidate in (model, reloaded):
        trainable = {name for name, parameter in candidate.named_parameters() if parameter.requires_grad}
        assert not any(name.startswith(("encoder.", "decoder.corrector.charbert.")) for name in trainable)
        assert "decoder.trocr.model.decoder.embed_tokens.weight" not in trainable
        assert any(name.startswith("decoder.corrector.combine.") for name in trainable)
        assert any(name.startswith("decoder.trocr.model.decoder.layers.") for name in trainable)


def test_unknown_frozen_module_is_refused():
    with pytest.raises(ValueError, match="Unknown frozen_modules"):
        TrOCRCharBertConfig.from_preset("tiny", vocab_size=VOCAB_SIZE, frozen_modules=["vision"])


def test_from_trocr_and_charbert_checkpoints(tmp_path):
    """A TrOCR checkpoint (transformers' ViT + TrOCR, sinusoidal positions) and a bidirectional CharBERT
    checkpoint become a composite whose TrOCR path is exactly the checkpoint's."""
    reference = build("mean", trocr=dict(TINY["trocr"], use_learned_position_embeddings=False))
    trocr = plain_trocr(reference)
    trocr.save_pretrained(tmp_path / "trocr")
    torch.manual_seed(5)
    charbert_config = CharBertConfig(vocab_size=VOCAB_SIZE, **TINY["charbert"])
    assert not charbert_config.causal and charbert_config.char_rnn_scope == "sequence"
    charbert = CharBertModel(charbert_config)
    charbert.save_pretrained(tmp_path / "charbert")

    model = TrOCRCharBertForTextRecognition.from_trocr_and_charbert(
        str(tmp_path / "trocr"), str(tmp_path / "charbert"), combine="mean", frozen_modules=["charbert"]
    ).eval()
    corrector_charbert = model.decoder.corrector.charbert
    assert corrector_charbert.config.causal and corrector_charbert.config.char_rnn_scope == "token"
    torch.testing.assert_close(corrector_charbert.encoder.layer[0].output.dense.weight, charbert.encoder.layer[0].output.dense.weight)
    assert not any(parameter.requires_grad for parameter in corrector_charbert.parameters())
    fix_weights_to_embeddings(model)
    pixel_values = images(model)
    labels = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 2, -100, -100]])
    with torch.no_grad():
        assert torch.equal(model(pixel_values=pixel_values, labels=labels).logits, trocr(pixel_values=pixel_values, labels=labels).logits)


def test_from_a_trocr_with_the_convolutional_line_encoder(tmp_path):
    """A `--model trocr` checkpoint (textrec's line encoder, TrOCR's decoder, a CTC head) becomes a composite that
    reads lines at their own width: with the corrector an identity it gives the checkpoint's logits on a padded
    batch, padded columns masked; it generates, saves and loads back."""
    torch.manual_seed(3)
    trocr = TrOCRForTextRecognition(TrOCRRecognizerConfig.from_preset("tiny", vocab_size=VOCAB_SIZE, max_target_length=12))
    trocr.generation_config.decoding = "joint"  # as `trocr-lines` reads: the composite has no CTC head to join
    trocr.generation_config._from_model_config = False  # saved as set, not rebuilt from the model config
    trocr.save_pretrained(tmp_path / "trocr")
    CharBertModel(CharBertConfig(vocab_size=VOCAB_SIZE, **TINY["charbert"])).save_pretrained(tmp_path / "charbert")

    model = TrOCRCharBertForTextRecognition.from_trocr_and_charbert(
        str(tmp_path / "trocr"), str(tmp_path / "charbert"), combine="conv"
    ).eval()
    assert model.config.reads_lines and not model.requires_fixed_image_size
    assert model.generation_config.decoding == "attention"
    model.save_pretrained(tmp_path / "composite")
    assert not hasattr(model.config, "image_height")  # the processor keeps each line's width
    pixel_values = torch.randn(2, 1, 32, 48, generator=torch.Generator().manual_seed(0))
    pixel_mask = torch.ones(2, 32, 48, dtype=torch.long)
    pixel_mask[1, :, 24:] = 0
    pixel_values[1, :, :, 24:] = 0
    labels = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 2, -100, -100]])
    fix_weights_to_embeddings(model)
    with torch.no_grad():
        expected = trocr.eval()(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=labels).logits
        actual = model(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=labels).logits
        # The second line alone, unpadded, reads the same: the padding is masked.
        alone = model(pixel_values=pixel_values[1:, :, :, :24], labels=labels[1:]).logits
    torch.testing.assert_close(actual, expected, rtol=0, atol=1e-5)
    torch.testing.assert_close(actual[1:], alone, rtol=1e-4, atol=1e-4)


    loaded = AutoModelForImageTextToText.from_pretrained(tmp_path / "composite").eval()
    assert isinstance(loaded.encoder, type(model.encoder))
    with torch.no_grad():
        forced = loaded(pixel_values=pixel_values, pixel_mask=pixel_mask, labels=labels).logits
    generated = loaded.generate(pixel_values=pixel_values, pixel_mask=pixel_mask, max_new_tokens=6, do_sample=False)
    # Greedy generation with the cache picks, at each step, the arg-max of what a full forward pass gives.
    with torch.no_grad():
        rerun = loaded(pixel_values=pixel_values, pixel_mask=pixel_mask, decoder_input_ids=generated[:, :-1]).logits
    assert torch.equal(rerun.argmax(-1), generated[:, 1:])
    assert not torch.equal(forced, actual)  # the saved corrector is not the identity the test imposed

    torch.save({"pixel_values": pixel_values, "pixel_mask": pixel_mask, "labels": labels}, tmp_path / "batch.pt")
    maximum = run_without_textrec(
        """
        import torch
        from transformers import AutoModelForImageTextToText
        model = AutoModelForImageTextToText.from_pretrained("composite", trust_remote_code=True).eval()
        with torch.no_grad():
            print(model(**torch.load("batch.pt")).logits.abs().max().item(), type(model.encoder).__name__)
        """,
        tmp_path,
    ).split()
    assert maximum == [str(forced.abs().max().item()), "SelfAttentionRecognizerEncoder"]


def test_from_a_checkpoint_without_a_trocr_decoder_is_refused(tmp_path):
    from textrec.modeling import SelfAttentionRecognizerConfig, SelfAttentionRecognizerForTextRecognition

    SelfAttentionRecognizerForTextRecognition(SelfAttentionRecognizerConfig.from_preset("tiny", vocab_size=VOCAB_SIZE)).save_pretrained(tmp_path / "sa")
    CharBertModel(CharBertConfig(vocab_size=VOCAB_SIZE, **TINY["charbert"])).save_pretrained(tmp_path / "charbert")
    with pytest.raises(ValueError, match="not a VisionEncoderDecoderModel with a TrOCR decoder"):
        TrOCRCharBertForTextRecognition.from_trocr_and_charbert(str(tmp_path / "sa"), str(tmp_path / "charbert"))


def test_decoder_refuses_inputs_embeds():
    model = build()
    with pytest.raises(ValueError, match="reads input_ids"):
        model.decoder(inputs_embeds=torch.randn(1, 3, 32))


@pytest.mark.slow
def test_textrec_train_trains_saves_and_the_folder_loads_without_textrec(tmp_path):
    """`textrec-train --model trocr-charbert` through Seq2SeqTrainer; the folder holds safetensors and the
    custom code, and loads with trust_remote_code where textrec is not importable."""
    from textrec.scripts import train as train_cli

    from .remote_code import run_without_textrec
    from .test_train_cli import tiny_run_arguments

    folder = tmp_path / "model"
    arguments = tiny_run_arguments(folder, config_overrides='{"combine": "conv"}')
    metrics = train_cli.run([a.replace("--model=self-attention", "--model=trocr-charbert") for a in arguments])
    assert "eval_cer" in metrics
    assert (folder / "model.safetensors").exists()
    assert {"modeling_trocr_charbert.py", "modeling_charbert.py", "tensor_combine.py"} <= {p.name for p in folder.iterdir()}
    output = run_without_textrec(
        f"""
        from PIL import Image
        from transformers import AutoModelForImageTextToText, AutoProcessor
        model = AutoModelForImageTextToText.from_pretrained({str(folder)!r}, trust_remote_code=True).eval()
        processor = AutoProcessor.from_pretrained({str(folder)!r}, trust_remote_code=True)
        assert type(model).__name__ == "TrOCRCharBertForTextRecognition" and model.config.decoder.combine == "conv"
        inputs = processor(images=[Image.new("L", (120, 30), 255)], return_tensors="pt")
        ids = model.generate(pixel_values=inputs["pixel_values"], max_new_tokens=5, num_beams=2)
        print(ids.shape[0])
        """,
        tmp_path,
    )
    assert output.strip().splitlines()[-1] == "1"


@pytest.mark.slow
def test_study_fine_tunes_every_system_from_one_trocr_and_resumes(tmp_path):
    """The thesis protocol end to end at toy sizes: a trained `--model trocr` folder reads the held-out lines, its
    confusions drive CharBERT's pre-training, and plain TrOCR and a composite are fine-tuned from it; a session too
    short to fine-tune leaves them unfinished (and says so), the same command then finishes and reports."""
    from textrec.scripts import train as train_cli
    import study_trocr_charbert

    from .charbert_fixtures import FORTUNES
    from .test_train_cli import tiny_run_arguments

    if not FORTUNES.exists():
        pytest.skip("Debian's fortunes package is not installed (scripts/setup.sh installs it)")
    trocr = tmp_path / "trocr"
    train_cli.run([a.replace("--model=self-attention", "--model=trocr").replace("--max_target_length=48", "--max_target_length=96")
                   for a in tiny_run_arguments(trocr, max_steps=2)])
    systems = ["trocr", "trocr-charbert-conv"]
    common = [
        f"--trocr={trocr}", f"--output_dir={tmp_path / 'study'}", f"--corpus={FORTUNES}",
        "--charbert_preset=tiny", "--charbert_steps=2",
        "--charbert_arguments=--max_train_samples=64 --eval_samples=16 --vocab_size=300 --word_vocab_size=200 "
        "--max_seq_length=48 --per_device_train_batch_size=8 --config_overrides='{\"char_rnn_scope\": \"token\"}'",
        "--confusion_samples=8", "--num_train=32", "--num_validation=4", "--num_test=4", "--max_steps=2",
        "--eval_steps=1", "--patience=1", "--batch_size=8", "--num_beams=2", "--threads=1", "--no-bf16",
        f"--carry_dir={tmp_path / 'carried'}",
    ]
    arguments = [*common, "--systems", *systems]
    # Phases 1-3 only (no systems), then a session with no time left to fine-tune: both leave the systems unfinished.
    prepared = study_trocr_charbert.run([*common, "--systems"])
    assert prepared["systems"] == {} and "start" in prepared and "charbert" in prepared
    # The next session's checkout has no runs/: CharBERT and the numbers come back from the carry, so a session
    # with no time left still has them (it could not pre-train CharBERT again).
    shutil.rmtree(tmp_path / "study")
    first = study_trocr_charbert.run([*arguments, "--session_minutes=0"])
    assert first["systems"] == {} and first["charbert"] == prepared["charbert"] and first["start"] == prepared["start"]
    assert (tmp_path / "study" / "charbert" / "config.json").is_file()
    report = (tmp_path / "study" / "results.md").read_text()
    assert "Still training" in report and "trocr-charbert-conv" in report

    results = study_trocr_charbert.run(arguments)
    assert (tmp_path / "study" / "confusion.json").is_file()
    assert results["charbert"]["steps"] == 2 and 0 <= results["charbert"]["nlm_majority_accuracy"] <= 1
    assert list(results["systems"]) == systems
    for record in results["systems"].values():
        assert 1 <= record["training"]["training_steps"] <= 2
        assert 0 <= record["reading"]["beam_changed"] <= 1 and record["reading"]["greedy"]["lines_per_second"] > 0
    assert results["systems"]["trocr-charbert-conv"]["reading"]["parameters"] > results["systems"]["trocr"]["reading"]["parameters"]
    composite = TrOCRCharBertForTextRecognition.from_pretrained(tmp_path / "study" / "trocr-charbert-conv" / "finetune")
    assert composite.config.reads_lines and composite.config.frozen_modules == ["charbert"]
    table = (tmp_path / "study" / "results.md").read_text()
    assert all(f"| {name} |" in table for name in ["start (no fine-tuning)", *systems])
    assert "Still training" not in table and "at most 2 steps of 8 lines, bf16 autocast off" in table
    # Readings of 4 test lines cannot be compared with readings of 3: another --num_test is refused; so is a
    # fine-tuning unlike the finished systems' (they must all be fine-tuned alike).
    with pytest.raises(ValueError, match="readings of 4 test lines, not --num_test 3"):
        study_trocr_charbert.run([*arguments, "--num_test=3"])
    for other in ("--bf16", "--max_steps=3"):
        with pytest.raises(ValueError, match="was fine-tuned with bf16=False and at most 2 steps"):
            study_trocr_charbert.run([*arguments, other])


def test_corrector_decoding_benchmark_times_the_three_systems_on_equal_work():
    import benchmark_corrector_decoding

    rows = benchmark_corrector_decoding.run(
        ["--preset=tiny", "--lengths", "3", "5", "--batch_size=2", "--repeats=1", "--threads=1"]
    )
    assert [(row["length"], row["system"]) for row in rows] == [
        (length, system) for length in (3, 5)
        for system in ("TrOCR (no corrector)", "re-reading corrector", "incremental corrector")
    ]
    assert all(row["seconds"] > 0 for row in rows)
    assert all(row["speedup"] == 1.0 for row in rows if row["system"] == "re-reading corrector")


def test_study_error_rate_difference_is_paired_and_in_points():
    from study_trocr_charbert import error_rate_difference

    references = ["one two", "three four"] * 10
    assert error_rate_difference(references, references, references, "char") == "+0.00 (+0.00 to +0.00)"
    # One wrong character in each of 10 lines of 7 and 10 of 10 characters: 10 / 170 characters, 10 / 40 words.
    worse = ["one twx", "three four"] * 10
    assert error_rate_difference(worse, references, references, "char").startswith("+5.88 (")
    assert error_rate_difference(worse, references, references, "word").startswith("+25.00 (")
    assert error_rate_difference(references, worse, references, "word").startswith("-25.00 (")
