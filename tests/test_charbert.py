"""CharBERT: the processor's character inputs, the two-stream model, and the release converter."""

import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoProcessor

from textrec.modeling import CharBertConfig, CharBertForMaskedLM, CharBertModel
from textrec.processing import CharBertProcessor
from textrec.processing.tokenization_charbert import CHAR_VOCAB
from textrec.scripts.convert_charbert_checkpoint import convert, rename

from .charbert_fixtures import fortune_texts, make_processor, tiny_config

TEXTS = ["The quick brown fox jumps over the lazy dog.", "Xylophonists practise."]


@pytest.fixture(scope="module")
def processor():
    return make_processor(fortune_texts())


@pytest.fixture(scope="module")
def model(processor):
    torch.manual_seed(0)
    return CharBertForMaskedLM(tiny_config(processor)).eval()


def test_processor_gives_every_model_input(processor):
    inputs = processor(TEXTS)
    batch, tokens = inputs["input_ids"].shape
    assert set(inputs) == {"input_ids", "attention_mask", "char_input_ids", "start_ids", "end_ids"}
    assert inputs["char_input_ids"].shape == (batch, tokens * processor.max_chars_per_token)
    assert inputs["start_ids"].shape == inputs["end_ids"].shape == (batch, tokens)


def test_start_and_end_indices_of_a_word_split_into_subwords(processor):
    inputs = processor("Xylophonists", return_tensors="np")
    tokens = processor.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
    width = processor.max_chars_per_token
    assert tokens[0] == "<s>" and tokens[-1] == "</s>" and len(tokens) > 4  # several subwords
    for t, token in enumerate(tokens):
        assert inputs["start_ids"][0, t] == t * width
        if token in ("<s>", "</s>"):
            assert inputs["end_ids"][0, t] == t * width
            assert not inputs["char_input_ids"][0, t * width : (t + 1) * width].any()
            continue
        spelt = token[:width]
        assert inputs["end_ids"][0, t] == t * width + len(spelt) - 1
        slot = inputs["char_input_ids"][0, t * width : (t + 1) * width]
        assert [CHAR_VOCAB[i] for i in slot[: len(spelt)]] == list(spelt)
        assert not slot[len(spelt) :].any()


def test_a_token_longer_than_its_slots_keeps_its_first_characters(processor):
    narrow = CharBertProcessor(processor.tokenizer, max_chars_per_token=2, word_vocab=processor.word_vocab)
    inputs = narrow("the", return_tensors="np")
    assert narrow.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0]) == ["<s>", "Ġthe", "</s>"]
    assert [CHAR_VOCAB[i] for i in inputs["char_input_ids"][0, 2:4]] == ["Ġ", "t"]
    assert inputs["end_ids"][0, 1] == 3


def test_processor_round_trip_through_auto_processor(processor, tmp_path):
    processor.save_pretrained(tmp_path)
    reloaded = AutoProcessor.from_pretrained(tmp_path)
    assert isinstance(reloaded, CharBertProcessor)
    assert reloaded.word_vocab == processor.word_vocab
    for name, value in processor(TEXTS).items():
        assert torch.equal(reloaded(TEXTS)[name], value), name


def test_model_save_and_load_round_trip(processor, model, tmp_path):
    inputs = processor(TEXTS)
    model.save_pretrained(tmp_path)
    reloaded = AutoModelForMaskedLM.from_pretrained(tmp_path).eval()
    assert (tmp_path / "model.safetensors").exists()
    assert reloaded.config.to_diff_dict() | {"_name_or_path": ""} == model.config.to_diff_dict() | {"_name_or_path": ""}
    assert reloaded.lm_head.decoder.weight is reloaded.charbert.embeddings.word_embeddings.weight
    with torch.no_grad():
        expected, got = model(**inputs), reloaded(**inputs)
    assert torch.equal(expected.logits, got.logits)
    assert torch.equal(expected.word_logits, got.word_logits)


def test_ids_and_embeddings_give_identical_outputs(processor, model):
    inputs = processor(TEXTS)  # padded: the second text is shorter
    encoder = model.charbert
    with torch.no_grad():
        from_ids = encoder(**inputs)
        from_embeddings = encoder(
            inputs_embeds=encoder.get_input_embeddings()(inputs["input_ids"]),
            char_inputs_embeds=encoder.get_char_input_embeddings()(inputs["char_input_ids"]),
            start_ids=inputs["start_ids"],
            end_ids=inputs["end_ids"],
            attention_mask=inputs["attention_mask"],
        )
    assert torch.equal(from_ids.last_hidden_state, from_embeddings.last_hidden_state)
    assert torch.equal(from_ids.char_last_hidden_state, from_embeddings.char_last_hidden_state)


def outputs_after_changing_a_later_token(processor, causal: bool, changed: int = 6):
    """Both streams' outputs for a text and for the same text with token `changed` (and its characters) replaced."""
    torch.manual_seed(0)
    encoder = CharBertModel(tiny_config(processor, causal=causal)).eval()
    inputs = processor(TEXTS[0])
    other = dict(inputs)
    other_ids = inputs["input_ids"].clone()
    other_ids[0, changed] = processor.tokenizer.convert_tokens_to_ids("Ġthe")
    other.update(input_ids=other_ids, **{k: torch.as_tensor(v) for k, v in processor.char_inputs(other_ids).items()})
    with torch.no_grad():
        return encoder(**inputs), encoder(**other)


def test_causal_model_outputs_do_not_depend_on_later_tokens(processor):
    changed = 6
    original, modified = outputs_after_changing_a_later_token(processor, causal=True, changed=changed)
    for name in ("last_hidden_state", "char_last_hidden_state"):
        assert torch.equal(original[name][:, :changed], modified[name][:, :changed]), name
        assert not torch.equal(original[name][:, changed], modified[name][:, changed]), name


def test_bidirectional_model_outputs_depend_on_later_tokens(processor):
    changed = 6
    original, modified = outputs_after_changing_a_later_token(processor, causal=False, changed=changed)
    for name in ("last_hidden_state", "char_last_hidden_state"):
        assert not torch.allclose(original[name][:, : changed - 1], modified[name][:, : changed - 1]), name


def test_defaults_follow_the_release_and_the_paper_variant_is_an_option(processor):
    release = CharBertModel(tiny_config(processor))
    paper = CharBertModel(tiny_config(processor, share_fusion_weights=False, divide_feed_forward=True))
    assert len(release.encoder.fusion) == 1 and not hasattr(release.encoder.fusion[0], "token_feed_forward")
    assert len(paper.encoder.fusion) == paper.config.num_hidden_layers
    assert hasattr(paper.encoder.fusion[0], "token_feed_forward")
    inputs = processor(TEXTS)
    assert paper(**inputs).char_last_hidden_state.shape == (2, inputs["input_ids"].shape[1], paper.config.hidden_size)


def test_loss_is_the_sum_of_mlm_and_nlm_and_never_nan(processor, model):
    inputs = processor(TEXTS)
    labels = torch.full_like(inputs["input_ids"], -100)
    labels[0, 2] = inputs["input_ids"][0, 2]
    word_labels = torch.full_like(inputs["input_ids"], -100)
    output = model(**inputs, labels=labels, word_labels=word_labels)
    assert output.nlm_loss.item() == 0.0  # nothing to predict: zero, not NaN
    assert torch.equal(output.loss, output.mlm_loss + output.nlm_loss)


def test_character_sequence_of_the_wrong_length_is_refused(processor, model):
    inputs = processor(TEXTS)
    inputs["char_input_ids"] = inputs["char_input_ids"][:, :-1]
    with pytest.raises(ValueError, match="character positions"):
        model(**inputs)


# The original release --------------------------------------------------------------------------

RELEASE_CHARS = [" ", "Ġ", "e", "t", "a", ".", ",", "<unk>"]  # line number = id, 0 pads
RELEASE_WORDS = ["the", "of", "<unk>", "and"]


def release_state_dict(vocab=50, hidden=32, layers=2, ffn=64, positions=20, char_size=16) -> dict[str, torch.Tensor]:
    """Random tensors under the release's names, with the release's shapes."""
    generator = torch.Generator().manual_seed(0)

    def tensor(*shape):
        return torch.randn(*shape, generator=generator)

    gru = hidden // 4
    state = {
        "roberta.embeddings.word_embeddings.weight": tensor(vocab, hidden),
        "roberta.embeddings.position_embeddings.weight": tensor(positions, hidden),
        "roberta.embeddings.token_type_embeddings.weight": tensor(1, hidden),
        "roberta.embeddings.LayerNorm.weight": tensor(hidden),
        "roberta.embeddings.LayerNorm.bias": tensor(hidden),
        "roberta.encoder.embeddings.word_embeddings.weight": tensor(vocab, hidden),  # unused copy
        "roberta.char_embeddings.char_embeddings.weight": tensor(len(RELEASE_CHARS), char_size),
        "roberta.encoder.word_linear1.weight": tensor(hidden, hidden),
        "roberta.encoder.char_linear1.weight": tensor(hidden, hidden),
        "roberta.encoder.fusion_layer.weight": tensor(hidden, 2 * hidden, 3),
        "roberta.encoder.fusion_layer.bias": tensor(hidden),
        "roberta.pooler.dense.weight": tensor(hidden, hidden),
        "roberta.pooler.dense.bias": tensor(hidden),
        "lm_head.dense.weight": tensor(hidden, hidden),
        "lm_head.dense.bias": tensor(hidden),
        "lm_head.char_dense.weight": tensor(hidden, hidden),
        "lm_head.char_dense.bias": tensor(hidden),
        "lm_head.layer_norm.weight": tensor(hidden),
        "lm_head.layer_norm.bias": tensor(hidden),
        "lm_head.bias": tensor(vocab),
        "lm_head.adv_decoder.weight": tensor(len(RELEASE_WORDS), hidden),
        "lm_head.adv_decoder.bias": tensor(len(RELEASE_WORDS)),
    }
    state["lm_head.decoder.weight"] = state["roberta.embeddings.word_embeddings.weight"]  # tied
    for suffix in ("", "_reverse"):
        state[f"roberta.char_embeddings.rnn_layer.weight_ih_l0{suffix}"] = tensor(3 * gru, char_size)
        state[f"roberta.char_embeddings.rnn_layer.weight_hh_l0{suffix}"] = tensor(3 * gru, gru)
        state[f"roberta.char_embeddings.rnn_layer.bias_ih_l0{suffix}"] = tensor(3 * gru)
        state[f"roberta.char_embeddings.rnn_layer.bias_hh_l0{suffix}"] = tensor(3 * gru)
    for norm in ("word_norm", "char_norm"):
        state[f"roberta.encoder.{norm}.weight"] = tensor(hidden)
        state[f"roberta.encoder.{norm}.bias"] = tensor(hidden)
    for n in range(layers):
        prefix = f"roberta.encoder.layer.{n}."
        for name, shape in {
            "attention.self.query": (hidden, hidden),
            "attention.self.key": (hidden, hidden),
            "attention.self.value": (hidden, hidden),
            "attention.output.dense": (hidden, hidden),
            "intermediate.dense": (ffn, hidden),
            "output.dense": (hidden, ffn),
        }.items():
            state[prefix + name + ".weight"] = tensor(*shape)
            state[prefix + name + ".bias"] = tensor(shape[0])
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            state[prefix + name + ".weight"] = tensor(hidden)
            state[prefix + name + ".bias"] = tensor(hidden)
    return state


@pytest.fixture(scope="module")
def converted(processor, tmp_path_factory):
    folder = tmp_path_factory.mktemp("release")
    original = release_state_dict(vocab=len(processor.tokenizer))
    torch.save(original, folder / "pytorch_model.bin")
    (folder / "roberta_char_vocab").write_text("\n".join(RELEASE_CHARS) + "\n", encoding="utf-8")
    (folder / "term_vocab").write_text("\n".join(RELEASE_WORDS) + "\n", encoding="utf-8")
    (folder / "config.json").write_text('{"num_attention_heads": 4, "layer_norm_eps": 1e-05}')
    processor.tokenizer.save_pretrained(folder / "tokenizer")
    convert(
        str(folder / "pytorch_model.bin"),
        str(folder / "roberta_char_vocab"),
        str(folder / "converted"),
        original_config=str(folder / "config.json"),
        word_vocab=str(folder / "term_vocab"),
        tokenizer=str(folder / "tokenizer"),
    )
    return original, folder / "converted"


def test_converted_release_loads_strictly_from_safetensors(converted):
    _, folder = converted
    assert (folder / "model.safetensors").exists()
    model, info = CharBertForMaskedLM.from_pretrained(folder, output_loading_info=True)
    assert not any(info.values()), info
    assert (model.config.num_hidden_layers, model.config.num_attention_heads, model.config.hidden_size) == (2, 4, 32)


def test_converted_tensors_land_where_they_belong(converted):
    original, folder = converted
    state = CharBertForMaskedLM.from_pretrained(folder).state_dict()
    pairs = {
        "roberta.encoder.layer.1.attention.self.query.weight": "charbert.encoder.layer.1.attention.self.query.weight",
        "roberta.encoder.layer.0.output.LayerNorm.bias": "charbert.encoder.layer.0.output.LayerNorm.bias",
        "roberta.encoder.word_linear1.weight": "charbert.encoder.fusion.0.token_linear.weight",
        "roberta.encoder.char_linear1.weight": "charbert.encoder.fusion.0.char_linear.weight",
        "roberta.encoder.fusion_layer.weight": "charbert.encoder.fusion.0.conv.weight",
        "roberta.encoder.char_norm.weight": "charbert.encoder.fusion.0.char_norm.weight",
        "roberta.char_embeddings.rnn_layer.weight_hh_l0_reverse": "charbert.char_encoder.gru.weight_hh_l0_reverse",
        "roberta.pooler.dense.weight": "charbert.pooler.dense.weight",
        "lm_head.char_dense.weight": "lm_head.char_dense.weight",
        "lm_head.decoder.weight": "charbert.embeddings.word_embeddings.weight",
    }
    for release_name, name in pairs.items():
        assert torch.equal(state[name], original[release_name]), name


def test_converted_character_and_word_rows_follow_the_new_vocabularies(converted):
    original, folder = converted
    state = CharBertForMaskedLM.from_pretrained(folder).state_dict()
    release_chars = original["roberta.char_embeddings.char_embeddings.weight"]
    chars = state["charbert.char_encoder.embeddings.weight"]
    assert torch.equal(chars[CHAR_VOCAB.index("e")], release_chars[RELEASE_CHARS.index("e")])
    assert torch.equal(chars[CHAR_VOCAB.index("Ġ")], release_chars[RELEASE_CHARS.index("Ġ")])
    assert torch.equal(chars[CHAR_VOCAB.index("z")], release_chars[RELEASE_CHARS.index("<unk>")])  # not in the release
    assert torch.equal(chars[0], release_chars[0])  # padding
    processor = CharBertProcessor.from_pretrained(folder)
    assert processor.word_vocab == ["<unk>", "the", "of", "and"]
    assert processor.word_id("The") == 1  # the release's words are lower-case
    words = state["lm_head.word_decoder.weight"]
    assert torch.equal(words[0], original["lm_head.adv_decoder.weight"][RELEASE_WORDS.index("<unk>")])
    assert torch.equal(words[3], original["lm_head.adv_decoder.weight"][RELEASE_WORDS.index("and")])


def test_a_release_parameter_without_a_rule_is_refused():
    assert rename("roberta.encoder.embeddings.word_embeddings.weight") is None
    with pytest.raises(KeyError, match="No rule"):
        rename("roberta.encoder.word_linear2.weight")


def test_config_presets_size_the_model():
    base = CharBertConfig.from_preset("base")
    assert (base.hidden_size, base.num_hidden_layers, base.num_attention_heads, base.intermediate_size) == (768, 12, 12, 3072)
    assert base.char_embedding_size == 256 and base.max_chars_per_token == 6
    with pytest.raises(ValueError, match="multiple of 4"):
        CharBertConfig(hidden_size=30, num_attention_heads=2)


def test_per_token_character_rnn_ignores_the_neighbours_characters(processor):
    torch.manual_seed(0)
    encoder = CharBertModel(tiny_config(processor, char_rnn_scope="token")).char_encoder
    inputs = processor(TEXTS[0])
    changed = inputs["char_input_ids"].clone()
    changed[0, 6 * processor.max_chars_per_token :] = CHAR_VOCAB.index("z")  # every token from the 7th on
    with torch.no_grad():
        original = encoder(encoder.embeddings(inputs["char_input_ids"]), inputs["start_ids"], inputs["end_ids"])
        modified = encoder(encoder.embeddings(changed), inputs["start_ids"], inputs["end_ids"])
    assert torch.equal(original[:, :6], modified[:, :6])


def test_causal_model_needs_the_per_token_character_rnn():
    assert CharBertConfig(causal=True).char_rnn_scope == "token"
    with pytest.raises(ValueError, match="char_rnn_scope"):
        CharBertConfig(causal=True, char_rnn_scope="sequence")
