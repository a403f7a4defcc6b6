"""Released checkpoints: packaging (fp16, card with results and command), loading by short name, and
`textrec-export` to a Hub folder that loads where textrec is not installed."""

import dataclasses
import json
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from textrec.model_cards import released_model_names, released_model_path, resolve_model_path
from textrec.model_cards.card import card_for_repository, describe_dataset
from textrec.processing.processing_text_recognition import LOAD_TIME_KEYS
import releases as release_module
from textrec.processing.training.architectures import get_spec
from textrec.scripts.export import export_model
from textrec.model_cards.hub import export_for_hub
from textrec.processing.inference import load_recognizer, preferred_decoding, recognize
from textrec.processing.training import ModelArguments, build_recognizer


from .remote_code import run_without_textrec

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A training output folder of a tiny self-attention model with a CTC head (untrained weights)."""
    folder = tmp_path_factory.mktemp("run")
    torch.manual_seed(0)
    model_args = ModelArguments(model="self-attention", preset="tiny", config_overrides='{"ctc_loss_weight": 0.3}')
    spec = get_spec("self-attention")
    model, processor = build_recognizer(model_args, spec)
    export_for_hub(model.eval(), processor, folder)
    return folder


@pytest.fixture(scope="module")
def small_release():
    test_set = "synthetic-lines:min_chars=3,max_chars=8,augment=false"
    return dataclasses.replace(
        release_module.get_release("self-attention-lines"),
        test_sets={"print": test_set, "handwriting-style": "synthetic-lines-handwriting:min_chars=3,max_chars=8"},
        test_samples=3,
        real_sets=(),  # read beside a checkout only; the real-set card is tested below with a few images each
    )


@pytest.fixture(scope="module")
def packaged(trained_run, small_release, tmp_path_factory):
    destination = tmp_path_factory.mktemp("released")
    return release_module.package_release(small_release, str(trained_run), destination)


def test_package_stores_fp16_weights_and_no_code(packaged):
    with safe_open(packaged / "model.safetensors", "pt") as weights:
        dtypes = {weights.get_tensor(name).dtype for name in weights.keys()}
    assert dtypes - {torch.int64} == {torch.float16}  # int64: batch norm's step counters
    assert json.loads((packaged / "config.json").read_text())["dtype"] == "float32"  # it loads in fp32
    assert not list(packaged.glob("*.py"))
    assert {"config.json", "tokenizer.json", "processor_config.json", "README.md"} <= {p.name for p in packaged.iterdir()}


def test_package_card_holds_both_test_sets_and_the_training_command(packaged, small_release):
    card = (packaged / "README.md").read_text()
    for dataset in small_release.test_sets.values():
        assert f"name: '{describe_dataset(dataset)[0]}'" in card
    assert card.count("type: synthetic") == 2 and "example_title: A printed line, rendered by textrec" in card
    assert (packaged / "example.png").is_file()
    assert "textrec-train --model=self-attention --preset=fast" in card
    assert "--output_dir=runs/self-attention-lines" in card
    assert "an image of one line of text in" in card and "(characters plus `<pad>`" in card


def test_packaged_model_loads_in_fp32_and_reads_as_the_trained_one(trained_run, packaged, sample_line_images):
    trained, processor = load_recognizer(str(trained_run))
    released, _ = load_recognizer(str(packaged))
    assert next(released.parameters()).dtype == torch.float32
    trained.to(torch.float16).to(torch.float32)  # the rounding the release went through
    decoding = preferred_decoding(released)
    expected = recognize(trained, processor, sample_line_images, progress=False, decoding=decoding).texts
    assert recognize(released, processor, sample_line_images, progress=False).texts == expected


def test_package_keeps_the_decoding_that_reads_the_validation_lines_better(trained_run, packaged):
    results = json.loads((trained_run / "release_results.json").read_text())
    cers = results["decoding_cer"]
    assert results["decoding_chosen_on"] == "validation lines"  # a release measured on no real set
    assert "Its decoding was chosen on the validation lines, by the lowest mean CER: " in (packaged / "README.md").read_text()
    assert set(cers) == {"attention", "ctc", "joint"} and results["decoding"] == min(cers, key=cers.get)
    assert json.loads((packaged / "generation_config.json").read_text())["decoding"] == results["decoding"]
    assert preferred_decoding(load_recognizer(str(packaged))[0]) == results["decoding"]
    assert set(results["test"]) == {"attention", "ctc", "joint"}


def test_unknown_release_name_lists_the_released_ones():
    with pytest.raises(ValueError, match="No released model named 'no-such-model'"):
        released_model_path("no-such-model")
    assert resolve_model_path("no-such-model") == "no-such-model"


@pytest.mark.parametrize("name", released_model_names())
def test_installed_release_loads_by_short_name(name):
    model, processor = load_recognizer(name)
    assert resolve_model_path(name) == str(released_model_path(name))
    card = (released_model_path(name) / "README.md").read_text()
    assert f"generation_config.decoding`: {preferred_decoding(model)}" in card
    assert json.loads((released_model_path(name) / "config.json").read_text())["model_type"] == model.config.model_type


@pytest.mark.parametrize("name", [name for name, release in release_module.RELEASES.items()
                                  if release.image_processor_settings and name in released_model_names()])
def test_installed_release_reads_with_the_image_processor_settings_chosen_for_it(name):
    """What `image_processor_settings` says a release reads with (chosen after training, on development data) is
    what its shipped processor holds, and so what a Hub folder or an export of it reads with."""
    _, processor = load_recognizer(name)
    for setting, value in release_module.get_release(name).image_processor_settings.items():
        assert getattr(processor.image_processor, setting) == value, setting

def test_the_print_readers_ngram_counts_receipts_words():
    """`crnn-lines`' n-gram is counted from receipt-like lines too (`PRINT_LANGUAGE_MODEL`): it takes a receipt's own
    words for likelier than what their faint dot-matrix print is misread as (counted from fortunes alone it did not)."""
    model, processor = load_recognizer("crnn-lines")
    tables, vocabulary = model.language_model.tables(), processor.tokenizer.get_vocab()

    def log_probability(text: str) -> float:
        history, total = tables.start_history(), 0.0
        for character in text:
            total += tables.log_probability(history, vocabulary[character])
            history = tables.next_history(history, vocabulary[character])
        return total

    for printed, misread in (("TOTAL INCL. GST", "TOTAL INCL. BST"), ("AMOUNT (RM)", "AMOUNT (RH)"),
                             ("STATIONERY SDN BHD", "STATIONERY SON BHD"), ("GST SUMMARY", "BST SUMMARY")):
        assert log_probability(printed) > log_probability(misread), printed


@pytest.mark.parametrize("name", [name for name in released_model_names() if name in release_module.RELEASES])
def test_installed_release_reads_held_out_lines(name):
    """A guard against shipping broken weights (a bad fp16 conversion, the wrong folder): the release's own
    benchmark numbers are in its card and README; here 20 samples of its first test set (clean print lines for the
    line models) must read at a CER under its `guard_cer`."""
    from textrec.processing.data import load_text_recognition_dataset
    from textrec.processing.metrics import evaluate_texts

    release = release_module.get_release(name)
    if release.guard_samples:
        dataset = load_text_recognition_dataset(str(REPOSITORY / release.guard_samples), split=None)
        assert len(dataset) == 20
    else:
        dataset = load_text_recognition_dataset(next(iter(release.test_sets.values())), split="test", num_samples=20)
    model, processor = load_recognizer(name)
    texts = recognize(model, processor, list(dataset["image"]), progress=False).texts
    assert evaluate_texts(texts, list(dataset["text"]))["cer"] < release.guard_cer


@pytest.mark.parametrize("name", [name for name, release in release_module.RELEASES.items() if release.guard_samples])
def test_guard_samples_are_the_first_of_the_release_test_set(name):
    """A release's `guard_samples` folder holds the first 20 samples of its first test set, as written by
    `python -m textrec.scripts.sample_images --dataset TEST_SET --split test --num_samples 20 --output_dir FOLDER`
    (compared where the test set's files are on this machine)."""
    from textrec.processing.data import load_text_recognition_dataset

    release = release_module.get_release(name)
    test_set = next(iter(release.test_sets.values()))
    guard = load_text_recognition_dataset(str(REPOSITORY / release.guard_samples), split=None)
    assert len(guard) == 20
    try:
        expected = load_text_recognition_dataset(test_set, split="test", num_samples=20)
    except FileNotFoundError:
        pytest.skip(f"{test_set}: its files are not on this machine")
    assert list(guard["text"]) == list(expected["text"])
    assert [image.tobytes() for image in guard["image"]] == [image.tobytes() for image in expected["image"]]


@pytest.mark.parametrize("name", [name for name in released_model_names()
                                  if name in release_module.RELEASES and release_module.RELEASES[name].guard_samples])
def test_recognize_command_reads_a_guard_image_with_the_release(name, capsys):
    """`textrec-recognize --model sharp-attention-digits string.png` prints the 13 digits of an MNIST test string."""
    from textrec.scripts import recognize as recognize_cli

    folder = REPOSITORY / release_module.get_release(name).guard_samples
    first = json.loads((folder / "metadata.jsonl").read_text().splitlines()[0])
    recognize_cli.main(["--model", name, str(folder / first["file_name"])])
    assert capsys.readouterr().out.strip().splitlines()[-1] == first["text"]


@pytest.mark.parametrize("name", released_model_names())
def test_released_tokenizer_config_holds_no_load_time_keys(name):
    config = json.loads((released_model_path(name) / "tokenizer_config.json").read_text())
    assert not set(config) & set(LOAD_TIME_KEYS)


def test_saved_and_exported_folders_hold_no_load_time_keys_and_the_card_loads_the_hub_repository(packaged, tmp_path):
    """transformers 5 writes how a tokenizer was loaded (`is_local`, `local_files_only`) back into
    `tokenizer_config.json`; a folder saved from a loaded model (a release) or exported again holds none of it. The
    exported card's snippets load the repository `--hub_model_id` names, and its example image comes along."""
    folder = export_model(str(packaged), tmp_path / "hub", hub_model_id="someone/lines")
    for saved in (packaged, folder):
        assert not set(json.loads((saved / "tokenizer_config.json").read_text())) & set(LOAD_TIME_KEYS)
    card = (folder / "README.md").read_text()
    assert 'from_pretrained("someone/lines", trust_remote_code=True)' in card
    assert 'from_pretrained("self-attention-lines"' not in card
    assert (folder / "example.png").read_bytes() == (packaged / "example.png").read_bytes()


@pytest.mark.slow
def test_export_loads_without_textrec_and_reads_as_textrec_does(packaged, sample_line_images, tmp_path):
    folder = export_model(str(packaged), tmp_path / "hub")
    assert (folder / "README.md").read_text() == card_for_repository((packaged / "README.md").read_text(), None)
    for index, image in enumerate(sample_line_images):
        image.save(tmp_path / f"line{index}.png")
    model, processor = load_recognizer(str(packaged))
    expected = recognize(model, processor, sample_line_images, progress=False).texts
    output = run_without_textrec(
        f"""
        import json
        from transformers import AutoModelForImageTextToText, AutoProcessor, pipeline
        model = AutoModelForImageTextToText.from_pretrained({str(folder)!r}, trust_remote_code=True)
        processor = AutoProcessor.from_pretrained({str(folder)!r}, trust_remote_code=True)
        images = [f"line{{i}}.png" for i in range(3)]
        ids = model.generate(**processor(images=images, return_tensors="pt"))
        read = pipeline("text-recognition", model={str(folder)!r}, trust_remote_code=True)
        print(json.dumps([[r["generated_text"] for r in read(images, batch_size=8)], processor.batch_decode(ids, skip_special_tokens=True)]))
        """,
        tmp_path,
    )
    piped, generated = json.loads(output.strip().splitlines()[-1])
    assert piped == expected  # the pipeline reads as textrec does, with the model's preferred decoding
    assert generated == expected  # and so does generate()


def test_export_refuses_a_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such model folder or released name"):
        export_model(str(tmp_path / "missing"), tmp_path / "out")


def test_ctc_decoding_reads_through_recognize_as_ctc_decode(trained_run, sample_line_images):
    model, processor = load_recognizer(str(trained_run))
    inputs = processor(images=sample_line_images, return_tensors="pt")
    expected = processor.batch_decode(model.ctc_decode(**inputs), skip_special_tokens=True)
    result = recognize(model, processor, sample_line_images, decoding="ctc", progress=False)
    assert result.texts == expected


def test_ctc_decoding_of_a_model_without_ctc_head_is_a_clear_error(sample_line_images, tmp_path):
    model_args = ModelArguments(model="self-attention", preset="tiny")
    spec = get_spec("self-attention")
    model, processor = build_recognizer(model_args, spec)
    model.eval()
    with pytest.raises(ValueError, match="needs a model trained with a CTC head"):
        recognize(model, processor, sample_line_images, decoding="ctc", progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", released_model_names())
def test_released_model_exported_reads_without_textrec_as_textrec_does(name, sample_line_images, tmp_path):
    """Issue #12's must-show for each shipped checkpoint: `textrec-export --model NAME` writes a folder that
    transformers alone loads (textrec blocked, offline) and that reads as textrec reads with the release."""
    import subprocess
    import sys

    folder = tmp_path / "hub"
    subprocess.run([sys.executable, "-m", "textrec.scripts.export", "--model", name, "--output_dir", str(folder)],
                   check=True, capture_output=True)
    for index, image in enumerate(sample_line_images):
        image.save(tmp_path / f"line{index}.png")
    model, processor = load_recognizer(name)
    expected = recognize(model, processor, sample_line_images, progress=False).texts
    output = run_without_textrec(
        f"""
        import json
        from transformers import pipeline
        read = pipeline("text-recognition", model={str(folder)!r}, trust_remote_code=True)
        print(json.dumps([r["generated_text"] for r in read([f"line{{i}}.png" for i in range(3)], batch_size=8)]))
        """,
        tmp_path,
    )
    assert json.loads(output.strip().splitlines()[-1]) == expected
    assert any(text.strip() for text in expected)


@pytest.mark.slow
def test_release_trained_by_a_study_packages_the_study_model(tmp_path):
    """A release trained by its paper study (`sharp-attention-digits`; the first `comer-math`): its training command
    is the study's, an unfinished study says so, and packaging takes the study's final model."""
    tiny_study = ("--preset=tiny", "--coverage", "fusion", "--curriculum_tokens", "6", "--curriculum_steps=2",
                  "--max_steps=4", "--eval_steps=2", "--patience=1", "--num_train=16", "--num_validation=4",
                  "--num_test=4", "--eval_batch_size=8", f"--carry_dir={tmp_path / 'carried'}")
    # The first comer-math was the study's model; the second is fine-tuned from it by textrec-train.
    release = dataclasses.replace(
        release_module.get_release("comer-math"), study="comer_coverage_study", study_model="fusion/tokens-48",
        train_arguments=tiny_study, test_samples=4, earlier_commands=(), base_model=None, image_processor_settings={},
        training_data="synthetic-math formulas of up to 12, 24, then 48 tokens (a length curriculum)")
    run_dir = str(tmp_path / "study")
    with pytest.raises(RuntimeError, match="run the same command again"):
        release_module.train_release(
            dataclasses.replace(release, train_arguments=(*tiny_study, "--session_minutes=0.00001")), run_dir
        )
    release_module.train_release(release, run_dir)
    folder = release_module.package_release(release, run_dir, tmp_path / "released")
    with safe_open(folder / "model.safetensors", "pt") as weights:
        assert {weights.get_tensor(key).dtype for key in weights.keys()} - {torch.int64} == {torch.float16}
    card = (folder / "README.md").read_text()
    assert f"python scripts/lab/comer_coverage_study.py {' '.join(tiny_study[:2])}" in card
    assert "typeset formulas (matplotlib mathtext), up to 48 tokens" in card and release.training_data in card
    # A formula model's card says what it reads, what its tokens are, and that its training summary is the last stage's.
    assert "an image of one typeset formula in" in card and "LaTeX tokens of the CROHME dictionary plus" in card
    assert "Training: The study's last stage: " in card and "validation metric `cer`" in card
    assert (tmp_path / "carried" / "fusion" / "tokens-48" / "model.safetensors").is_file()
    model, _ = load_recognizer(str(folder))
    assert model.config.model_type == "textrec-comer" and model.config.coverage == "fusion"


def test_a_release_measured_on_real_sets_leads_its_card_with_them(trained_run, small_release, tmp_path, monkeypatch):
    """A release with `real_sets` reads the real development sets when packaged, and keeps the decoding that reads them
    better; its card gives their results
    first, as the development split in `model-index`, then the synthetic ones, named as such; a release trained in
    stages gives the earlier commands before its own."""
    real_sets = pytest.importorskip("real_sets")
    if not real_sets.REAL_DATA_DIR.is_dir():
        pytest.skip(f"the real sets are not at {real_sets.REAL_DATA_DIR} (a checkout without ../shared)")
    evaluate = release_module.evaluate_on_real_sets
    monkeypatch.setattr(release_module, "evaluate_on_real_sets", lambda model, processor, names: evaluate(model, processor, limit=3, names=names))
    release = dataclasses.replace(small_release, real_sets=("receipts", "historic-print", "scene"), earlier_commands=("textrec-train --model=crnn --first",))
    card = (release_module.package_release(release, str(trained_run), tmp_path) / "README.md").read_text()
    # Its decoding is the one that reads the real development sets better, not textrec's renderings.
    results = json.loads((trained_run / "release_results.json").read_text())
    assert results["decoding_chosen_on"] == "real development sets" and set(results["decoding_cer"]) == {"attention", "ctc", "joint"}
    # ... among those reading at least as fast as Tesseract on one core, where one does.
    speeds, tesseract_speed = results["decoding_lines_per_second"], results["tesseract_lines_per_second"]
    assert set(speeds) == set(results["decoding_cer"]) and all(speed > 0 for speed in speeds.values())
    fast_enough = [name for name, speed in speeds.items() if tesseract_speed is None or speed >= tesseract_speed]
    assert results["decoding"] == min(fast_enough or speeds, key=results["decoding_cer"].get)
    # The card says what chose it, with each decoding's numbers.
    assert "Its decoding was chosen on the real development sets" in card
    assert all(f"{name} {cer:.2%}" in card for name, cer in results["decoding_cer"].items())
    types = [line.strip().removeprefix("type: ") for line in card.splitlines()
             if line.startswith("      type: ") and line.strip() != "type: image-to-text"]
    real_types = [real_sets.REAL_SETS[name].dataset_type for name in release.real_sets]
    assert types == [*real_types, "synthetic", "synthetic"]  # real sets first, each with its dataset type
    assert "name: SROIE scanned receipt lines" in card
    assert card.index("type: sroie") < card.index("name: 'synthetic, rendered by textrec")
    assert "split: development" in card and "Real images first" in card
    assert card.index("textrec-train --model=crnn --first") < card.index("--output_dir=runs/self-attention-lines")


def test_a_decoding_slower_than_tesseract_is_not_chosen_while_a_fast_enough_one_reads():
    """The speed rule of the line models: the lowest CER among the decodings reading at least Tesseract's lines/s
    per core; where none does, or Tesseract is not installed, the lowest CER."""
    cers = {"ctc": 0.245, "joint": 0.236}
    assert release_module.fastest_enough_best(cers, {"ctc": 320.0, "joint": 47.0}, 158.0) == "ctc"
    assert release_module.fastest_enough_best(cers, {"ctc": 320.0, "joint": 170.0}, 158.0) == "joint"
    assert release_module.fastest_enough_best(cers, {"ctc": 120.0, "joint": 47.0}, 158.0) == "joint"
    assert release_module.fastest_enough_best(cers, {"ctc": 320.0, "joint": 47.0}, None) == "joint"
