"""CharBERT pre-training: character noise, recognizer confusions, the MLM/NLM collator, corpora and
the pre-training and confusion-matrix scripts end to end."""

import json
import random
from collections import Counter

import datasets
import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoProcessor

from textrec.modeling import SelfAttentionRecognizerConfig, SelfAttentionRecognizerForTextRecognition
from textrec.processing import TextRecognitionImageProcessor, TextRecognitionProcessor, build_char_tokenizer
from textrec.processing.data import (
    CharacterNoise,
    CharBertPretrainingCollator,
    ConfusionMatrix,
    align_characters,
    choose_words,
    load_text_corpus,
    random_edit,
)
from textrec.scripts import build_confusion_matrix
from textrec.scripts import pretrain_charbert

from .charbert_fixtures import FORTUNES, fortune_texts, make_processor
from .remote_code import run_without_textrec


def edit_kind(original: str, corrupted: str) -> str:
    """Which single edit turns `original` into `corrupted`."""
    if len(corrupted) == len(original) + 1 and any(corrupted[:i] + corrupted[i + 1 :] == original for i in range(len(corrupted))):
        return "insertion"
    if len(corrupted) == len(original) - 1 and any(original[:i] + original[i + 1 :] == corrupted for i in range(len(original))):
        return "deletion"
    swaps = [original[:i] + original[i + 1] + original[i] + original[i + 2 :] for i in range(len(original) - 1)]
    if len(corrupted) == len(original) and corrupted in swaps:
        return "swap"
    return "other"


# Character noise ---------------------------------------------------------------------------------


def test_short_words_get_one_inserted_character():
    rng = random.Random(0)
    kinds = Counter(edit_kind(word, random_edit(word, rng)) for word in ["a", "of", "the"] * 300)
    assert kinds == {"insertion": 900}


def test_long_words_lose_a_character_or_swap_two_about_equally():
    rng = random.Random(0)
    kinds = Counter(edit_kind("words", random_edit("words", rng)) for _ in range(2000))
    assert set(kinds) == {"deletion", "swap"}
    assert 900 <= kinds["swap"] <= 1100  # 1000 expected; the seed gives a fixed count


def test_a_word_without_two_different_neighbours_is_shortened_not_swapped():
    rng = random.Random(0)
    assert {random_edit("aaaa", rng) for _ in range(50)} == {"aaa"}


def test_about_the_asked_share_of_words_is_chosen():
    rng = random.Random(0)
    counts = [len(choose_words(37, 0.1, rng)) for _ in range(2000)]
    assert set(counts) == {3, 4}  # 3.7 rounded up or down
    assert abs(sum(counts) / len(counts) - 3.7) < 0.05
    assert all(index not in {0, 1, 2} for index in choose_words(10, 0.5, rng, exclude={0, 1, 2}))


# Confusions --------------------------------------------------------------------------------------


def test_alignment_marks_substitutions_deletions_and_insertions():
    assert align_characters("a.b", "a,b") == [("a", "a"), (".", ","), ("b", "b")]
    assert align_characters("abc", "ac") == [("a", "a"), ("b", ""), ("c", "c")]
    assert align_characters("ab", "axb") == [("a", "a"), ("", "x"), ("b", "b")]


def test_confusion_matrix_of_a_hand_made_set_is_exact():
    labels = ["a.", "Oa", "ab"]
    predictions = ["a,", "oa", "axb"]
    matrix = ConfusionMatrix.from_texts(labels, predictions)
    # 9 places between characters (3 + 3 + 3), one of which got an "x".
    assert matrix.counts == {
        "": {"": 8, "x": 1},
        ".": {",": 1},
        "O": {"o": 1},
        "a": {"a": 3},
        "b": {"b": 1},
    }
    assert matrix.probabilities()[""] == {"": 8 / 9, "x": 1 / 9}
    assert matrix.probabilities()["a"] == {"a": 1.0}
    assert matrix.errors() == [("", "x", 1), (".", ",", 1), ("O", "o", 1)]
    assert matrix.num_pairs == 3


def test_a_deletion_is_counted_in_its_characters_row():
    matrix = ConfusionMatrix.from_texts(["abc", "b"], ["ac", "b"])
    assert matrix.counts["b"] == {"": 1, "b": 1}
    assert matrix.probabilities()["b"] == {"": 0.5, "b": 0.5}


def test_confusion_matrix_json_round_trip(tmp_path):
    matrix = ConfusionMatrix.from_texts(["Hello, World."], ["He1lo. World,"])
    matrix.save(tmp_path / "confusion.json")
    assert ConfusionMatrix.load(tmp_path / "confusion.json") == matrix
    saved = json.loads((tmp_path / "confusion.json").read_text())
    assert saved["probabilities"]["l"] == {"1": 1 / 3, "l": 2 / 3}


def test_confusion_noise_makes_the_recognizers_mistakes_at_its_rates():
    # The recognizer read '.' as ',' in 1 of 2 cases and 'O' as 'o' in 1 of 4: '.' should be
    # corrupted twice as often as 'O'; no other edit exists.
    matrix = ConfusionMatrix.from_texts([".", ".", "O", "O", "O", "O"], [",", ".", "o", "O", "O", "O"])
    noise, rng = CharacterNoise(confusions=matrix), random.Random(0)
    outcomes = Counter(noise("On.", rng) for _ in range(3000))
    assert set(outcomes) == {"on.", "On,"}
    assert 1.8 < outcomes["On,"] / outcomes["on."] < 2.2


def test_confusion_noise_falls_back_to_random_edits_for_unconfused_words():
    matrix = ConfusionMatrix.from_texts(["."], [","])
    noise, rng = CharacterNoise(confusions=matrix), random.Random(0)
    assert edit_kind("cat", noise("cat", rng)) == "insertion"


# The collator ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def texts():
    return fortune_texts(400)


@pytest.fixture(scope="module")
def processor(texts):
    return make_processor(texts)


def collate_all(processor, texts, **kwargs):
    collator = CharBertPretrainingCollator(processor, seed=0, return_word_index=True, max_length=512, **kwargs)
    return [collator(texts[i : i + 50]) for i in range(0, len(texts), 50)]


def word_outcomes(processor, batches):
    """For every word of every text: ('masked', replacement) / ('corrupted', labelled) / ('plain', None)."""
    mask_id = processor.tokenizer.mask_token_id
    outcomes = []
    for batch in batches:
        for row in range(len(batch["input_ids"])):
            words = batch["word_index"][row]
            for word in words[words >= 0].unique().tolist():
                at = words == word
                labels, word_labels = batch["labels"][row][at], batch["word_labels"][row][at]
                if (labels != -100).any():
                    assert (labels != -100).all(), "a masked word must be masked whole"
                    ids = batch["input_ids"][row][at]
                    kind = "mask" if (ids == mask_id).all() else "keep" if torch.equal(ids, labels) else "random"
                    outcomes.append(("masked", kind))
                elif (word_labels != -100).any():
                    outcomes.append(("corrupted", True))
                else:
                    outcomes.append(("plain", None))
    return outcomes


def test_collator_masks_and_corrupts_a_tenth_of_the_words_each(processor, texts):
    outcomes = word_outcomes(processor, collate_all(processor, texts))
    total = sum(len(text.split()) for text in texts)
    assert len(outcomes) == total
    masked = sum(1 for kind, _ in outcomes if kind == "masked")
    assert abs(masked / total - 0.1) < 0.01
    # Corrupted words outside the word vocabulary carry no label, so only a lower bound here.
    corrupted = sum(1 for kind, _ in outcomes if kind == "corrupted")
    assert 0.03 < corrupted / total <= 0.11


def test_masked_words_are_replaced_80_10_10(processor, texts):
    batches = collate_all(processor, texts * 3, mlm_probability=0.3, noise_probability=0.0)
    kinds = Counter(kind for outcome, kind in word_outcomes(processor, batches) if outcome == "masked")
    total = sum(kinds.values())
    assert abs(kinds["mask"] / total - 0.8) < 0.03
    assert abs(kinds["random"] / total - 0.1) < 0.02
    assert abs(kinds["keep"] / total - 0.1) < 0.02


def test_masked_tokens_show_no_characters(processor, texts):
    batch = collate_all(processor, texts[:50])[0]
    width = processor.max_chars_per_token
    chars = batch["char_input_ids"].view(*batch["input_ids"].shape, width)
    masked = batch["labels"] != -100
    assert masked.any()
    assert not chars[masked].any()
    assert torch.equal(batch["end_ids"][masked], batch["start_ids"][masked])


def test_corrupted_words_are_labelled_with_the_original_word(processor):
    text = "the cat sat on the mat of the house"
    collator = CharBertPretrainingCollator(processor, noise_probability=1.0, mlm_probability=0.0, seed=0)
    batch = collator([text])
    labelled = batch["word_labels"][0][batch["word_labels"][0] != -100].unique().tolist()
    expected = {processor.word_id(word) for word in text.split()} - {0}
    assert set(labelled) == expected
    noisy = processor.tokenizer.decode(batch["input_ids"][0], skip_special_tokens=True).split()
    assert all(corrupted != original for corrupted, original in zip(noisy, text.split(), strict=True))


# Corpora -----------------------------------------------------------------------------------------


def test_corpus_reads_fortune_records_lines_and_saved_datasets(tmp_path):
    (tmp_path / "fortunes").write_text("One\nfortune.\n%\nAnother,\n  here.\n%\n")
    (tmp_path / "lines.txt").write_text("first line\n\nsecond _\bline\n")
    datasets.Dataset.from_dict({"body": ["saved text"]}).save_to_disk(tmp_path / "saved")
    corpus = load_text_corpus([tmp_path / "fortunes", tmp_path / "lines.txt", tmp_path / "saved"], text_column="body")
    assert corpus["text"] == ["One fortune.", "Another, here.", "first line", "second line", "saved text"]


def test_corpus_folder_skips_fortune_indexes(tmp_path):
    (tmp_path / "jokes").write_text("A joke.\n%\n")
    (tmp_path / "jokes.dat").write_bytes(b"\x00\x01binary")
    assert load_text_corpus(tmp_path)["text"] == ["A joke."]


# The scripts -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    if not FORTUNES.exists():
        pytest.skip("Debian's fortunes package is not installed (scripts/setup.sh installs it)")
    folder = tmp_path_factory.mktemp("charbert") / "model"
    arguments = dict(
        preset="tiny",
        corpus=str(FORTUNES),
        config_overrides='{"char_rnn_scope": "token"}',  # the fast character RNN
        max_train_samples=200,
        eval_samples=32,
        vocab_size=400,
        word_vocab_size=300,
        max_seq_length=48,
        max_steps=12,
        warmup_steps=0,
        learning_rate=3e-3,
        per_device_train_batch_size=8,
        eval_steps=12,
        save_steps=12,
        logging_steps=6,
        seed=3,
        output_dir=folder,
        use_cpu=True,
    )
    argv = [f"--{key}={value}" for key, value in arguments.items()]
    results = pretrain_charbert.run(argv)
    return folder, results, argv


@pytest.mark.slow
def test_short_pretraining_lowers_both_losses(pretrained):
    _, results, _ = pretrained
    assert results["after"]["mlm_loss"] < results["before"]["mlm_loss"]
    assert results["after"]["nlm_loss"] < results["before"]["nlm_loss"]


@pytest.mark.slow
def test_pretrained_folder_loads_with_its_processor(pretrained):
    folder, results, _ = pretrained
    saved = json.loads((folder / "pretraining_results.json").read_text())
    assert saved["after"] == results["after"]
    model = AutoModelForMaskedLM.from_pretrained(folder)
    processor = AutoProcessor.from_pretrained(folder)
    assert len(processor.word_vocab) == model.config.word_vocab_size
    assert model(**processor("A fortune.")).word_logits.shape[-1] == model.config.word_vocab_size


@pytest.mark.slow
def test_pretrained_folder_loads_without_textrec(pretrained, tmp_path):
    folder, _, _ = pretrained
    output = run_without_textrec(
        f"""
        from transformers import AutoModelForMaskedLM, AutoProcessor
        model = AutoModelForMaskedLM.from_pretrained({str(folder)!r}, trust_remote_code=True)
        processor = AutoProcessor.from_pretrained({str(folder)!r}, trust_remote_code=True)
        output = model(**processor("A fortune."))
        print(type(model).__name__, type(processor).__name__, tuple(output.word_logits.shape))
        """,
        tmp_path,
    )
    assert output.split()[:2] == ["CharBertForMaskedLM", "CharBertProcessor"]


@pytest.mark.slow
def test_rerunning_finished_pretraining_changes_nothing_and_returns_its_results(pretrained, caplog):
    folder, results, argv = pretrained
    before = {path.name: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    with caplog.at_level("WARNING", logger="textrec.train"):
        assert pretrain_charbert.run(argv) == json.loads(json.dumps(results))
    assert "already finished at step 12; nothing to do" in caplog.text
    assert {path.name: path.read_bytes() for path in folder.rglob("*") if path.is_file()} == before


def test_confusion_matrix_script_counts_every_prediction(tmp_path):
    config = SelfAttentionRecognizerConfig.from_preset("tiny", max_target_length=6)
    torch.manual_seed(0)
    SelfAttentionRecognizerForTextRecognition(config).save_pretrained(tmp_path / "recognizer")
    image_processor = TextRecognitionImageProcessor(num_channels=1, height=32, max_width=256)
    TextRecognitionProcessor(image_processor, build_char_tokenizer()).save_pretrained(tmp_path / "recognizer")
    matrix = build_confusion_matrix.run(
        ["--model", str(tmp_path / "recognizer"), "--dataset", "synthetic-lines", "--num_samples", "4",
         "--output", str(tmp_path / "confusion.json")]
    )
    assert ConfusionMatrix.load(tmp_path / "confusion.json") == matrix
    assert matrix.num_pairs == 4
