"""Tests for the local evaluate metrics in textrec.processing.metrics and their Trainer glue."""

import shutil
import socket

import evaluate
import numpy as np
import pytest
from tokenizers import Tokenizer, decoders, models
from transformers import EvalPrediction, PreTrainedTokenizerFast

from textrec.processing.metrics import METRICS, load_metric, make_compute_metrics, metric_path
from textrec.processing.metrics.text_normalization import scene_text_normalize

PAD, BOS, EOS = 0, 1, 2


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Run every test offline: hub variables set and any network connection refused."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")

    def refuse(*args, **kwargs):
        raise OSError("network access attempted in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.fixture
def tokenizer():
    """A character-level tokenizer: ids 0-2 are <pad>, <s>, </s>; decoding inserts no spaces."""
    vocab = {"<pad>": PAD, "<s>": BOS, "</s>": EOS, "<unk>": 3}
    for character in "abcdehlo!H":
        vocab[character] = len(vocab)
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )


def encode(tokenizer, text):
    return [tokenizer.convert_tokens_to_ids(character) for character in text]


def score(name, predictions, references, **kwargs):
    return load_metric(name).compute(predictions=predictions, references=references, **kwargs)[name]


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("hallo", "hello", 0.2),  # one substitution
        ("helo", "hello", 0.2),  # one deletion
        ("helllo", "hello", 0.2),  # one insertion
        ("olleh", "hello", 0.8),  # only the middle "l" survives
        ("hello", "hello", 0.0),
    ],
)
def test_cer_hand_computed(prediction, reference, expected):
    assert score("cer", [prediction], [reference]) == pytest.approx(expected)


def test_cer_is_corpus_level():
    # 0 + 1 edits over 4 + 1 reference characters, not the mean of 0 and 1.
    assert score("cer", ["abcd", "x"], ["abcd", "y"]) == pytest.approx(0.2)


def test_cer_without_normalization_counts_case_and_spaces():
    assert score("cer", ["Hello "], ["hello"]) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("the cat sat down", "the cat sat", 1 / 3),  # one insertion
        ("the bat sat", "the cat sat", 1 / 3),  # one substitution
        ("the  cat\tsat ", "the cat sat", 0.0),  # any whitespace run separates words
        ("the cat sat", "the cat sat", 0.0),
    ],
)
def test_wer_hand_computed(prediction, reference, expected):
    assert score("wer", [prediction], [reference]) == pytest.approx(expected)


def test_sequence_accuracy():
    predictions, references = ["a", "b", "c", "D"], ["a", "b", "x", "d"]
    assert score("sequence_accuracy", predictions, references) == pytest.approx(0.5)
    assert score("sequence_accuracy", predictions, references, normalization="scene-text") == pytest.approx(0.75)


@pytest.mark.parametrize(("name", "perfect"), [("cer", 0.0), ("wer", 0.0), ("sequence_accuracy", 1.0)])
def test_scene_text_normalization_makes_case_and_punctuation_equal(name, perfect):
    assert score(name, ["Hello!"], ["hello"], normalization="scene-text") == perfect
    assert score(name, ["Hello!"], ["hello"]) != perfect


@pytest.mark.parametrize(
    ("text", "charset", "expected"),
    [
        ("Café, 24h!", "0123456789abcdefghijklmnopqrstuvwxyz", "cafe24h"),  # NFKD keeps the base letter
        ("Café, 24h!", "abcdefghijklmnopqrstuvwxyz", "cafeh"),  # the charset restricts what is kept
        ("Café, 24h!", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "CAFEH"),  # an upper-case charset upper-cases
        ("Café, 24h!", "aCcefh", "Cafeh"),  # a mixed-case charset keeps the case
    ],
)
def test_scene_text_normalize(text, charset, expected):
    assert scene_text_normalize(text, charset) == expected


def test_scene_text_charset_argument_reaches_the_metric():
    assert score("sequence_accuracy", ["ab1"], ["ab2"], normalization="scene-text", charset="ab") == 1.0


@pytest.mark.parametrize(
    ("name", "predictions", "references", "expected"),
    [
        ("cer", [""], [""], 0.0),
        ("cer", ["abc"], [""], 3.0),  # three insertions against max(1, 0) reference characters
        ("cer", ["ab", "abcd"], ["", "abcd"], 0.5),  # two insertions over four reference characters
        ("wer", ["a b"], [" "], 2.0),
        ("sequence_accuracy", ["", "a"], ["", ""], 0.5),
    ],
)
def test_empty_references(name, predictions, references, expected):
    assert score(name, predictions, references) == pytest.approx(expected)


def test_reference_empty_after_normalization():
    assert score("cer", ["a"], ["!!!"], normalization="scene-text") == 1.0


@pytest.mark.parametrize("name", METRICS)
def test_no_predictions_raise(name):
    metric = load_metric(name)
    with pytest.raises(ValueError, match="No predictions to score"):
        metric.compute(predictions=[], references=[])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"normalization": "lower"}, "must be one of"),
        ({"charset": "abc"}, "only applies to"),
        ({"normalization": "scene-text", "charset": ""}, "at least one character"),
    ],
)
def test_invalid_normalization_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        score("cer", ["a"], ["a"], **kwargs)


def test_metric_path_rejects_unknown_names():
    with pytest.raises(ValueError, match="Unknown metric 'bleu'"):
        metric_path("bleu")


@pytest.mark.parametrize("name", METRICS)
def test_evaluate_load_by_path_offline(name, tmp_path):
    metric = evaluate.load(metric_path(name), cache_dir=str(tmp_path))
    assert metric.name == name
    assert metric.description and metric.inputs_description
    metric.add_batch(predictions=["hello"], references=["hello"])
    metric.add_batch(predictions=["abc"], references=["abc"])
    assert metric.compute() == {name: 1.0 if name == "sequence_accuracy" else 0.0}


def test_evaluate_load_reflects_edited_sources(tmp_path):
    # evaluate caches copied scripts under a hash of the script and its relative imports:
    # editing a helper file must give a fresh copy, not a stale cached one.
    source = metric_path("sequence_accuracy")
    for file_name in ("sequence_accuracy.py", "text_normalization.py"):
        shutil.copy(source.replace("sequence_accuracy.py", file_name), tmp_path / file_name)
    copied = str(tmp_path / "sequence_accuracy.py")
    inputs = {"predictions": ["a1"], "references": ["a2"], "normalization": "scene-text"}
    assert evaluate.load(copied, keep_in_memory=True).compute(**inputs)["sequence_accuracy"] == 0.0

    helper = tmp_path / "text_normalization.py"
    source_text = helper.read_text()
    letters_only = source_text.replace('CHARSET = "0123456789', 'CHARSET = "')
    assert letters_only != source_text
    helper.write_text(letters_only)
    assert evaluate.load(copied, keep_in_memory=True).compute(**inputs)["sequence_accuracy"] == 1.0


def test_compute_metrics_replaces_minus_100(tokenizer):
    hello, hallo = encode(tokenizer, "hello"), encode(tokenizer, "hallo")
    # Generated ids: start token, text, end token, pad, then the trainer's -100 padding across batches.
    predictions = np.array(
        [
            [BOS, *hallo, EOS, PAD, -100, -100],
            [BOS, *encode(tokenizer, "abc"), EOS, -100, -100, -100, -100, -100],
        ]
    )
    labels = np.array([[*hello, EOS], [*encode(tokenizer, "abc"), EOS, -100, -100]])
    compute_metrics = make_compute_metrics(tokenizer)
    metrics = compute_metrics(EvalPrediction(predictions=predictions, label_ids=labels))
    assert metrics == pytest.approx({"cer": 1 / 8, "wer": 1 / 2, "sequence_accuracy": 1 / 2})


def test_compute_metrics_scene_text(tokenizer):
    predictions = np.array([[BOS, *encode(tokenizer, "Hello!"), EOS]])
    labels = np.array([[*encode(tokenizer, "hello"), EOS, -100]])
    compute_metrics = make_compute_metrics(tokenizer, normalization="scene-text")
    metrics = compute_metrics(EvalPrediction(predictions=predictions, label_ids=labels))
    assert metrics == {"cer": 0.0, "wer": 0.0, "sequence_accuracy": 1.0}


def test_compute_metrics_takes_pad_id_from_processor_tokenizer(tokenizer):
    class Processor:
        def __init__(self, tokenizer):
            self.tokenizer = tokenizer

        def batch_decode(self, token_ids, skip_special_tokens=False):
            return self.tokenizer.batch_decode(token_ids, skip_special_tokens=skip_special_tokens)

    ids = np.array([[*encode(tokenizer, "abc"), -100]])
    metrics = make_compute_metrics(Processor(tokenizer))(EvalPrediction(predictions=ids, label_ids=ids))
    assert metrics["sequence_accuracy"] == 1.0


def test_compute_metrics_rejects_logits(tokenizer):
    logits = np.zeros((1, 3, len(tokenizer)), dtype=np.float32)
    compute_metrics = make_compute_metrics(tokenizer)
    with pytest.raises(ValueError, match="predict_with_generate=True"):
        compute_metrics(EvalPrediction(predictions=logits, label_ids=np.array([[PAD, PAD, PAD]])))


def test_make_compute_metrics_requires_pad_id():
    class NoPad:
        def batch_decode(self, token_ids, skip_special_tokens=False):
            return []

    with pytest.raises(ValueError, match="no `pad_token_id`"):
        make_compute_metrics(NoPad())


def test_make_compute_metrics_validates_normalization_at_once(tokenizer):
    with pytest.raises(ValueError, match="must be one of"):
        make_compute_metrics(tokenizer, normalization="lower")
