"""Model-card metadata users can act on (Hub conventions): datasets named by what they are, the model a fine-tune
started from, training datasets and languages, an exported card that loads its Hub repository."""

import pytest
from huggingface_hub import ModelCard

from textrec.model_cards import released_model_names
from textrec.model_cards.card import (
    base_model_name,
    card_for_repository,
    describe_dataset,
    render_model_card,
    training_datasets,
    training_languages,
)
from textrec.processing.training import ModelArguments, build_recognizer
from textrec.processing.training.architectures import get_spec


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("synthetic-lines:min_chars=15,max_chars=80,augment=false",
         ("synthetic, rendered by textrec: print lines, 15-80 characters, clean", "synthetic")),
        ("synthetic-lines-handwriting:max_chars=80",
         ("synthetic, rendered by textrec: handwriting-style lines, up to 80 characters", "synthetic")),
        ("mnist-digits:length=13,mnist_dir=../shared/data/mnist", ("MNIST digits in strings of 13, composed by textrec", "mnist")),
        ("runs/quickstart/digit-strings", ("digit-strings, an image folder", "imagefolder")),
        ("my-lines/", ("my-lines, an image folder", "imagefolder")),
        ("someone/receipt-lines", ("someone/receipt-lines", "someone/receipt-lines")),
    ],
)
def test_a_dataset_is_named_by_what_it_is_never_by_a_spec_or_a_path(spec, expected):
    assert describe_dataset(spec) == expected


def test_training_datasets_and_languages_come_from_the_training_sources():
    mixture = "synthetic-lines:german_share=0.2 + someone/receipt-lines + captured:my-lines/:copies=4"
    assert training_datasets(mixture) == ["someone/receipt-lines"]
    assert training_languages(mixture) == ["en", "de"]
    assert training_languages("synthetic-math") == [] and training_datasets("synthetic-math") == []


def test_base_model_is_the_name_a_card_states_never_a_local_path(tmp_path):
    assert base_model_name("crnn-lines") == "crnn-lines"  # a released short name: its card's name
    assert base_model_name("someone/crnn-receipts") == "someone/crnn-receipts"  # a Hub id: itself
    assert base_model_name(str(tmp_path)) is None  # a folder without a card
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n\n# my-crnn\n\nA card.\n")
    assert base_model_name(str(tmp_path)) == "my-crnn"
    assert base_model_name(None) is None


@pytest.fixture(scope="module")
def fine_tuned_card():
    model, _ = build_recognizer(ModelArguments(model="crnn", preset="tiny"), get_spec("crnn"))
    return render_model_card(
        model=model, architecture="crnn", architecture_description="CRNN.", reads="one line of text",
        tokens="characters", repo_id="my-crnn", dataset_name="/data/lines/test-folder", dataset_split="train",
        eval_results={"cer": 0.1, "wer": 0.3, "sequence_accuracy": 0.5}, eval_samples=10,
        more_evaluations={"synthetic-lines:min_chars=15,max_chars=80": {"cer": 0.02},
                          "synthetic-lines-handwriting:min_chars=15,max_chars=80": {"cer": 0.05}},
        training_summary="4 steps.", decoding="ctc", base_model="crnn-lines", datasets=["someone/receipt-lines"],
        languages=["en"], widget_title="A printed line",
    )


def test_a_fine_tuned_models_card_metadata(fine_tuned_card):
    data = fine_tuned_card.data
    assert data.base_model == "crnn-lines" and data.datasets == ["someone/receipt-lines"] and data.language == ["en"]
    assert data.library_name == "transformers" and data.pipeline_tag == "image-to-text"
    assert data.metrics == ["cer", "wer"]
    assert data.widget == [{"src": "example.png", "example_title": "A printed line"}]
    datasets = {(result.dataset_name, result.dataset_type, result.dataset_config) for result in data.eval_results}
    assert datasets == {
        ("test-folder, an image folder", "imagefolder", None),
        # two rendered sets of one split are told apart by their config, or the Hub would keep one
        ("synthetic, rendered by textrec: print lines, 15-80 characters", "synthetic", "print-lines-15-80-characters"),
        ("synthetic, rendered by textrec: handwriting-style lines, 15-80 characters", "synthetic",
         "handwriting-style-lines-15-80-characters"),
    }
    assert "/data/lines" not in str(data.to_dict())


def test_an_exported_card_loads_its_hub_repository(fine_tuned_card):
    card = str(fine_tuned_card)
    assert 'from_pretrained("my-crnn"' in card
    exported = card_for_repository(card, "someone/my-crnn")
    assert 'from_pretrained("my-crnn"' not in exported and 'model="my-crnn"' not in exported
    assert exported.count('from_pretrained("someone/my-crnn", trust_remote_code=True)') == 2
    assert 'pipeline("text-recognition", model="someone/my-crnn"' in exported
    placeholder = card_for_repository(card, None)
    assert 'from_pretrained("<user>/my-crnn"' in placeholder
    assert "`<user>/my-crnn` stands for the Hub repository" in placeholder.split("## Use", 1)[1].split("```")[0]


@pytest.mark.parametrize("name", released_model_names())
def test_released_card_metadata_names_datasets_and_carries_its_example(name):
    from textrec.model_cards import released_model_path

    folder = released_model_path(name)
    data = ModelCard.load(folder / "README.md").data
    assert data.library_name == "transformers" and data.pipeline_tag == "image-to-text"
    assert set(data.metrics) == {"cer", "wer"}
    assert [entry["src"] for entry in data.widget] == ["example.png"] and (folder / "example.png").is_file()
    assert (folder / "example.png").stat().st_size < 20_000
    kinds = []
    for result in data.eval_results:
        assert ":" not in result.dataset_type and "/" not in result.dataset_type  # no --dataset value, no path
        assert "../" not in result.dataset_name and "`" not in result.dataset_name
        kinds.append("synthetic" if result.dataset_name.startswith("synthetic, rendered by textrec") else "real")
        assert (result.dataset_type == "synthetic") == (kinds[-1] == "synthetic")
    assert kinds == sorted(kinds, key=lambda kind: kind == "synthetic")  # real data first
