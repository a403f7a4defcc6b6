"""What is specific to CRNN, the CTC-only peer: its size, best-path reading through `generate()`, the
same reading of an image alone and batched with a wider one, and training and reading through the tools."""

import pytest
import torch

from textrec.modeling import CRNNConfig, CRNNForTextRecognition
from textrec.processing.pipeline_text_recognition import available_decodings, preferred_decoding
from textrec.scripts import train as train_cli
from textrec.processing.inference import load_recognizer, recognize

from .test_train_cli import tiny_run_arguments


def tiny_model(**overrides) -> CRNNForTextRecognition:
    torch.manual_seed(0)
    return CRNNForTextRecognition(CRNNConfig.from_preset("tiny", vocab_size=20, max_target_length=12, **overrides)).eval()


def test_paper_preset_parameter_count():
    c = [64, 128, 256, 256, 512, 512, 512]
    convolutions = sum(9 * a * b + b for a, b in zip([1, *c[:4]], c[:4]))  # 3x3 with bias
    convolutions += 9 * c[3] * c[4] + 2 * c[4] + 9 * c[4] * c[5] + 2 * c[5]  # 3x3 with batch norm, no bias
    convolutions += 4 * c[5] * c[6] + c[6]  # the last, 2x2
    hidden = 256
    lstm = 2 * 4 * hidden * (c[6] + hidden + 2) + 2 * 4 * hidden * (2 * hidden + hidden + 2)
    classifier = 2 * hidden * 99 + 99
    model = CRNNForTextRecognition(CRNNConfig.from_preset("paper", vocab_size=99))
    assert model.num_parameters() == convolutions + lstm + classifier


def test_fast_preset_is_the_size_of_the_attention_models_fast_presets():
    assert 2_000_000 < CRNNForTextRecognition(CRNNConfig.from_preset("fast")).num_parameters() < 3_000_000


def test_generate_is_ctc_best_path_or_prefix_beam_search_and_refuses_sampling():
    model = tiny_model()
    pixel_values = torch.randn(2, 1, 32, 96)
    decoded = model.ctc_decode(pixel_values)
    torch.testing.assert_close(model.generate(pixel_values), decoded)
    assert model.generate(pixel_values=pixel_values, max_new_tokens=2).shape[1] <= 2
    torch.testing.assert_close(model.generate(pixel_values, num_beams=3), model.ctc_decode(pixel_values, num_beams=3))
    with pytest.raises(ValueError, match="sampling does not apply"):
        model.generate(pixel_values, do_sample=True)
    assert available_decodings(model) == ("ctc",) and preferred_decoding(model) == "ctc"


def narrow_line_padded_beside_a_wide_one(seed: int):
    """A narrow and a wide random line, and the two batched: the narrow one padded to the wide one's width, and
    the batch's pixel mask."""
    torch.manual_seed(seed)
    narrow, wide = torch.randn(1, 1, 32, 64), torch.randn(1, 1, 32, 128)
    batch = torch.cat([torch.nn.functional.pad(narrow, (0, 64)), wide])
    mask = torch.ones(2, 32, 128, dtype=torch.long)
    mask[0, :, 64:] = 0
    return narrow, wide, batch, mask


def test_an_image_reads_the_same_alone_and_batched_with_a_wider_one():
    """The pixel mask keeps the padding out of the LSTM, so an image reads as alone. Not exactly: the VGG's last
    columns have receptive fields reaching into the padding (as in every CNN recognizer), and the backward LSTM
    carries that small difference leftwards; without the mask the LSTM reads the padding itself."""
    model = tiny_model()
    narrow, wide, batch, mask = narrow_line_padded_beside_a_wide_one(seed=1)
    with torch.no_grad():
        alone = model(narrow).logits[0]
        masked = model(batch, pixel_mask=mask)
        unmasked = model(batch).logits[0, : alone.shape[0]]
    valid = masked.attention_mask[0].bool()
    assert int(valid.sum()) == alone.shape[0]
    masked_difference = (masked.logits[0, valid] - alone).abs().max(dim=-1).values
    assert masked_difference[:4].max() < 1e-3  # columns far from the padding: as alone
    assert masked_difference.max() < (unmasked - alone).abs().max() / 3
    batched_reading = model.ctc_decode(batch, pixel_mask=mask)[0]
    alone_reading = model.ctc_decode(narrow)[0]
    assert batched_reading[: len(alone_reading)].tolist() == alone_reading.tolist()


def test_the_lstm_reads_each_line_by_its_length_as_over_packed_sequences_and_trains_alike():
    """`read_by_lengths` runs each direction of the LSTM over the padded batch (which oneDNN runs on the CPU; packed
    sequences it does not), the backward one over each line turned around within its length: the states and their
    gradients are those of packed sequences, zeros past each line's end, in a fraction of the time."""
    import time

    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from textrec.modeling.common.vgg_bilstm import read_by_lengths

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(64, 48, num_layers=2, bidirectional=True, batch_first=True)
    columns = torch.randn(6, 90, 64, requires_grad=True)
    lengths = torch.tensor([90, 1, 45, 89, 2, 60])

    def packed(columns):
        states, _ = lstm(pack_padded_sequence(columns, lengths, batch_first=True, enforce_sorted=False))
        return pad_packed_sequence(states, batch_first=True, total_length=columns.shape[1])[0]

    expected, read = packed(columns), read_by_lengths(lstm, columns, lengths)
    assert torch.allclose(read, expected, atol=1e-6) and not read[1, 1:].any()
    weights = torch.randn_like(expected)
    gradients = [torch.autograd.grad((states * weights).sum(), [columns, *lstm.parameters()])
                 for states in (packed(columns), read_by_lengths(lstm, columns, lengths))]
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(*gradients))

    def seconds(read):
        with torch.inference_mode():
            read(columns)
            start = time.perf_counter()
            for _ in range(5):
                read(columns)
            return time.perf_counter() - start

    assert seconds(lambda columns: read_by_lengths(lstm, columns, lengths)) < seconds(packed)


def test_a_dynamically_quantized_model_reads_a_batch_as_the_model_reads_each_line():
    """torch's int8 dynamic quantization (`quantize_dynamic`, as `scripts/lab/benchmark_onnx.py` measures it) swaps the
    LSTM for one that keeps no `weight_ih_l0`: it reads a batch over packed sequences, each line as the fp32 model reads
    it alone, but for int8's rounding."""
    model = tiny_model()
    quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear, torch.nn.LSTM}, dtype=torch.qint8)
    _, wide, batch, mask = narrow_line_padded_beside_a_wide_one(seed=2)
    with torch.no_grad():
        batched = quantized(batch, pixel_mask=mask).logits[1]
        alone = model(wide).logits[0]
    assert (batched - alone).abs().max() < 0.05 * alone.abs().max()


def test_textrec_train_trains_and_evaluates_it_and_recognize_reads_with_ctc(tmp_path, sample_line_images):
    folder = tmp_path / "crnn"
    arguments = [a for a in tiny_run_arguments(folder) if not a.startswith("--model=")]
    metrics = train_cli.run([*arguments, "--model=crnn"])
    assert 0 <= metrics["eval_cer"] and "eval_loss" in metrics
    model, processor = load_recognizer(folder)
    assert isinstance(model, CRNNForTextRecognition) and preferred_decoding(model) == "ctc"
    assert len(recognize(model, processor, sample_line_images, progress=False).texts) == 3
    with pytest.raises(ValueError, match="no attention decoder"):
        recognize(model, processor, sample_line_images, decoding="attention", progress=False)


def test_model_card_says_how_generate_reads_best_path_or_beam_search_with_the_language_model():
    from textrec.model_cards.card import render_model_card
    from textrec.processing.language_model import attach_language_model

    def card_of(model):
        return render_model_card(
            model=model, architecture="crnn", architecture_description="CRNN.", reads="one line of text",
            tokens="characters", repo_id="crnn-lines",
            dataset_name="synthetic-lines", dataset_split="test", eval_results={"cer": 0.1}, eval_samples=10,
            training_summary="4 steps.", decoding="ctc",
        ).content

    card = card_of(tiny_model())
    assert "ids = model.generate(**inputs)  # CTC: the model has no decoder" in card
    assert "the CTC head's best path" in card and "attention decoder" not in card

    class Tokenizer:
        def get_vocab(self):
            return {character: 3 + index for index, character in enumerate("abcdefghijklmnop")}

    model = tiny_model()
    attach_language_model(model, Tokenizer(), ["abc", "cab"], order=3, num_beams=4)
    card = card_of(model)
    assert "prefix beam search (4 beams) with its character 3-gram" in card and "best path" in card
    assert "line_break_token_ids" not in card
    attach_language_model(model, Tokenizer(), ["abc", "cab"], order=3, num_beams=4, line_break_marks=("p",))
    assert model.generation_config.line_break_token_ids == [18]
    assert "the mark a line ends in where its last word breaks, `line_break_token_ids`" in card_of(model)
    with pytest.raises(ValueError, match=r"line_break_marks \['—'\] are not in the model's vocabulary"):
        attach_language_model(model, Tokenizer(), ["abc"], order=3, line_break_marks=("—",))


def test_a_model_bound_by_its_data_terms_says_so_in_its_card():
    from textrec.model_cards.card import render_model_card

    arguments = dict(
        model=tiny_model(), architecture="crnn", architecture_description="CRNN.", reads="one line of text",
        tokens="characters", repo_id="crnn-handwriting", dataset_name="iam-ondb", dataset_split="test",
        eval_results={"cer": 0.1}, eval_samples=10, training_summary="4 steps.", decoding="ctc",
    )
    free = render_model_card(**arguments)
    bound = render_model_card(**arguments, license="other", data_terms="For non-commercial research only.")
    assert free.data.license == "apache-2.0" and "Terms of the training data" not in free.content
    assert bound.data.license == "other"
    assert "## Terms of the training data\n\nFor non-commercial research only." in bound.content


def test_widening_the_lstm_keeps_the_reading_and_lets_the_new_units_learn():
    """`scripts/lab/widen_crnn.py`: the widened CRNN gives the old logits exactly (its new units reach nothing yet),
    and a training step's gradient reaches the zero weights that will connect them."""
    from widen_crnn import widen_state_dict

    model = tiny_model()
    config = model.config
    wide = CRNNForTextRecognition(CRNNConfig.from_dict({**config.to_dict(), "hidden_size": config.hidden_size + 8}))
    wide.load_state_dict(widen_state_dict(model.state_dict(), config.hidden_size, config.hidden_size + 8,
                                          config.num_layers))
    wide.eval()
    pixel_values = torch.randn(3, 1, 32, 96)
    with torch.no_grad():
        torch.testing.assert_close(wide(pixel_values=pixel_values).logits, model(pixel_values=pixel_values).logits)
    assert wide.num_parameters() > model.num_parameters()
    wide.train()
    wide(pixel_values=pixel_values).logits.logsumexp(-1).sum().backward()
    new_columns = wide.ctc_head.classifier.weight.grad[:, config.hidden_size:config.hidden_size + 8]
    assert new_columns.abs().sum() > 0


def test_splitting_the_lstm_units_keeps_the_reading_and_gives_the_copies_their_originals_weights():
    """`widen_crnn.py --init split` (Net2Net): without noise the widened CRNN gives the old logits; each new unit
    starts as a jittered copy of an old one, and the classifier reads a unit and its copies with weights that add up
    to the original's."""
    from widen_crnn import split_state_dict

    model = tiny_model()
    config = model.config
    old, new = config.hidden_size, config.hidden_size + 8
    wide = CRNNForTextRecognition(CRNNConfig.from_dict({**config.to_dict(), "hidden_size": new}))
    pixel_values = torch.randn(3, 1, 32, 96)
    wide.load_state_dict(split_state_dict(model.state_dict(), old, new, config.num_layers, noise=0.0))
    wide.eval()
    with torch.no_grad():
        torch.testing.assert_close(wide(pixel_values=pixel_values).logits, model(pixel_values=pixel_values).logits)

    state = split_state_dict(model.state_dict(), old, new, config.num_layers, noise=0.05)
    rows = state["encoder.sequence_model.weight_ih_l0"]
    old_rows = model.state_dict()["encoder.sequence_model.weight_ih_l0"]
    torch.testing.assert_close(rows[:old], old_rows[:old])  # the originals keep their incoming weights
    for unit in range(old, new):  # a copy: an original's input gate weights, each jittered by about 5%
        original = old_rows[(old_rows[:old] - rows[unit]).abs().sum(1).argmin()]
        ratios = rows[unit] / original
        assert 0.97 < ratios.median() < 1.03 and 0.01 < ratios.std() < 0.1
    # each original and its copies pass on together what the original did: the classifier's columns (forward
    # direction first, then backward) add up to the old ones
    classifier, old_classifier = state["ctc_head.classifier.weight"], model.ctc_head.classifier.weight.detach()
    torch.testing.assert_close(classifier[:, :new].sum(1), old_classifier[:, :old].sum(1))
    torch.testing.assert_close(classifier[:, new:].sum(1), old_classifier[:, old:].sum(1))
