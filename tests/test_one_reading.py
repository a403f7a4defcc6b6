"""Issue #30: one model gives one reading everywhere.

Whatever path a user takes, a model reads with the decoding it was released with (its generation config's
`decoding`), computing in fp32 on a CPU however its weights are stored: README's `generate()` snippet (with
textrec installed here; without it in the slow tier), a plain `from_pretrained` and `generate()`, `recognize()`,
`textrec-recognize`, the `text-recognition` pipeline by folder (no `trust_remote_code`) and by object, and a folder
written by `textrec-export`. Every architecture with each decoding it has (tiny seeded models whose generation
config names the decoding), and every released model on a few of its own test images."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from transformers import AutoModelForImageTextToText, AutoProcessor, pipeline

from textrec.model_cards import DEFAULT_RECOGNIZER, released_model_names, released_model_path
import releases as release_module
from textrec.model_cards.hub import export_for_hub
from textrec.scripts.export import export_model
from textrec.modeling import ARCHITECTURES
from textrec.processing.inference import available_decodings, load_recognizer, recognize
from textrec.processing.language_model import attach_language_model
from textrec.processing.pipeline_text_recognition import read_batch, read_batch_with_confidences
from textrec.processing.training import ModelArguments, build_recognizer
from textrec.processing.training.architectures import get_spec
from textrec.scripts import recognize as recognize_cli

from .remote_code import run_without_textrec

REPOSITORY = Path(__file__).resolve().parents[1]
NAMES = sorted(ARCHITECTURES)
CTC_NAMES = [name for name in NAMES if hasattr(ARCHITECTURES[name][0](), "ctc_loss_weight")]
"""The architectures whose models may have a CTC head beside their decoder (CRNN always reads with one)."""


def tiny_recognizer(name: str):
    """A tiny seeded model (with a CTC head where its architecture may have one) and its processor; its decoder
    reads at most 8 tokens."""
    torch.manual_seed(0)
    overrides = '{"ctc_loss_weight": 0.3}' if name in CTC_NAMES else None
    model_args = ModelArguments(model=name, preset="tiny", max_target_length=8, config_overrides=overrides)
    model, processor = build_recognizer(model_args, get_spec(name))
    model.generation_config.max_new_tokens = 8  # resnet-transformer's default is the encoder length + 10
    return model.eval(), processor


def decodings_of(name: str) -> tuple[str, ...]:
    """The decodings of `tiny_recognizer(name)` (`available_decodings`), without building it."""
    if name in CTC_NAMES:
        return ("attention", "ctc", "joint")
    return ("attention",) if ARCHITECTURES[name][0]().is_encoder_decoder else ("ctc",)


CASES = [(name, decoding) for name in NAMES for decoding in decodings_of(name)]


def with_decoding(model, decoding: str):
    """`model` released to read with `decoding`, as `package_release` leaves its generation config."""
    model.generation_config.decoding = decoding
    model.generation_config._from_model_config = False
    return model


def batches_as_textrec_reads(processor, files: list[str]) -> list[list[str]]:
    """`files` in one batch; formulas, padded below as well as on the right (`pads_height`), one at a time: textrec
    reads each as alone (`batches_read_as_alone`)."""
    return [[file] for file in files] if processor.image_processor.pads_height else [files]


def generated_texts(model, processor, files: list[str], **generate_kwargs) -> list[str]:
    """README's snippet: `generate()` on what the processor makes of the images, decoded (`batches_as_textrec_reads`)."""
    return [text for batch in batches_as_textrec_reads(processor, files) for text in processor.batch_decode(
        model.generate(**processor(images=batch, return_tensors="pt"), **generate_kwargs), skip_special_tokens=True)]


def readings(folder: Path, model, processor, files: list[str], tmp_path: Path, capsys) -> dict[str, list[str]]:
    """The texts of `files` on every path a user may take inside textrec, by path name."""
    texts = {"generate() on the model": generated_texts(model, processor, files)}
    snippet_model = AutoModelForImageTextToText.from_pretrained(folder, trust_remote_code=True)
    assert snippet_model.dtype == torch.float32
    texts["README's snippet"] = generated_texts(
        snippet_model, AutoProcessor.from_pretrained(folder, trust_remote_code=True), files
    )
    plain = AutoModelForImageTextToText.from_pretrained(folder)
    assert plain.dtype == torch.float32
    texts["plain from_pretrained"] = generated_texts(plain, processor, files)
    loaded, loaded_processor = load_recognizer(str(folder))
    texts["recognize()"] = recognize(loaded, loaded_processor, files, progress=False).texts
    capsys.readouterr()
    texts["textrec-recognize"] = recognize_cli.run(["--model", str(folder), *files])
    assert capsys.readouterr().out.splitlines() == texts["textrec-recognize"]
    by_folder = pipeline("text-recognition", model=str(folder))
    texts["pipeline by folder"] = [r["generated_text"] for r in by_folder(files, batch_size=len(files))]
    by_object = pipeline("text-recognition", model=model, processor=processor)
    texts["pipeline by object"] = [r["generated_text"] for r in by_object(files, batch_size=len(files))]
    exported = export_model(str(folder), tmp_path / "exported")
    texts["textrec-export"] = generated_texts(AutoModelForImageTextToText.from_pretrained(exported), processor, files)
    return texts


@pytest.fixture(scope="module")
def line_files(sample_line_images, tmp_path_factory) -> list[str]:
    """Two of the sample lines, as files."""
    folder = tmp_path_factory.mktemp("lines")
    for index, image in enumerate(sample_line_images[:2]):
        image.save(folder / f"line{index}.png")
    return [str(folder / f"line{index}.png") for index in range(2)]


def batch_texts(model, processor, files: list[str], decoding: str) -> list[str]:
    """`read_batch` with `decoding` on `files` (`batches_as_textrec_reads`), decoded."""
    return [text for batch in batches_as_textrec_reads(processor, files)
            for text in processor.batch_decode(read_batch(model, processor(images=batch, return_tensors="pt"), decoding))]


def decodings_read_apart(model, processor, files: list[str], decoding: str) -> list[str]:
    """What `model` reads with `decoding`, asked for explicitly, after checking that its other decodings read
    otherwise (so that a path reading with the wrong one would be seen)."""
    texts = {name: batch_texts(model, processor, files, name) for name in available_decodings(model)}
    assert all(texts[name] != texts[decoding] for name in texts if name != decoding), texts
    return texts[decoding]


@pytest.mark.parametrize("name, decoding", CASES)
def test_every_path_reads_with_the_decoding_of_the_generation_config(name, decoding, line_files, tmp_path, capsys):
    model, processor = tiny_recognizer(name)
    with_decoding(model, decoding)
    folder = tmp_path / "model"
    export_for_hub(model, processor, folder)  # as textrec-train leaves it
    expected = decodings_read_apart(model, processor, line_files, decoding)
    texts = readings(folder, model, processor, line_files, tmp_path, capsys)
    assert {path: text for path, text in texts.items() if text != expected} == {}


@pytest.mark.parametrize("name", CTC_NAMES)
def test_generate_reads_with_the_decoder_when_asked(name, line_files):
    model, processor = tiny_recognizer(name)
    attention = generated_texts(model, processor, line_files)
    with_decoding(model, "ctc")
    assert generated_texts(model, processor, line_files) != attention
    assert generated_texts(model, processor, line_files, decoding="attention") == attention
    assert recognize(model, processor, line_files, decoding="attention", progress=False).texts == attention
    with pytest.raises(ValueError, match="decoding must be one of"):
        generated_texts(model, processor, line_files, decoding="beam")


def test_generate_of_a_model_without_ctc_head_asked_for_ctc_is_a_clear_error(line_files):
    model, processor = tiny_recognizer("sharp-attention")
    with pytest.raises(ValueError, match="no CTC head"):
        generated_texts(model, processor, line_files, decoding="ctc")
    with pytest.raises(ValueError, match="CRNN has no decoder"):
        generated_texts(tiny_recognizer("crnn")[0], processor, line_files, decoding="attention")


def test_resnet_transformer_reads_with_its_beam_search_everywhere(line_files, tmp_path, capsys):
    """Its generation config asks for beam search of 4 (the description's); `recognize()` and `textrec-recognize`
    read with it too, as `generate()` does, unless told `num_beams`."""
    model, processor = tiny_recognizer("resnet-transformer")
    assert model.generation_config.num_beams == 4
    folder = tmp_path / "model"
    export_for_hub(model, processor, folder)
    expected = generated_texts(model, processor, line_files)
    assert recognize(model, processor, line_files, progress=False).texts == expected
    assert recognize_cli.run(["--model", str(folder), *line_files]) == expected
    greedy = generated_texts(model, processor, line_files, num_beams=1)
    assert recognize(model, processor, line_files, num_beams=1, progress=False).texts == greedy


def test_a_folder_saved_inside_textrec_keeps_its_custom_pipeline(tmp_path):
    """Inside textrec the configuration leaves the folder's own `text-recognition` pipeline aside (so that
    `pipeline()` needs no `trust_remote_code`); saving through the pipeline writes it again for machines without."""
    model, processor = tiny_recognizer("self-attention")
    export_for_hub(model, processor, tmp_path / "first")
    reloaded, reloaded_processor = load_recognizer(str(tmp_path / "first"))
    assert "text-recognition" not in getattr(reloaded.config, "custom_pipelines", {})
    export_for_hub(reloaded, reloaded_processor, tmp_path / "second")
    for folder in ("first", "second"):
        config = json.loads((tmp_path / folder / "config.json").read_text())
        assert config["custom_pipelines"]["text-recognition"]["impl"] == "pipeline_text_recognition.TextRecognitionPipeline"
        assert (tmp_path / folder / "pipeline_text_recognition.py").is_file()


def stored_dtypes(folder: Path) -> set[torch.dtype]:
    with safe_open(folder / "model.safetensors", "pt") as weights:
        return {weights.get_tensor(name).dtype for name in weights.keys()} - {torch.int64}


def test_an_fp16_export_loads_in_fp32_with_no_argument(tmp_path):
    model, processor = tiny_recognizer("self-attention")
    export_for_hub(model, processor, tmp_path / "run")
    folder = export_model(str(tmp_path / "run"), tmp_path / "hub", dtype="float16")
    assert stored_dtypes(folder) == {torch.float16}
    assert json.loads((folder / "config.json").read_text())["dtype"] == "float32"
    assert AutoModelForImageTextToText.from_pretrained(folder).dtype == torch.float32


@pytest.mark.parametrize("name", released_model_names())
def test_released_folder_stores_fp16_and_loads_in_fp32(name):
    folder = released_model_path(name)
    assert stored_dtypes(folder) == {torch.float16}
    assert json.loads((folder / "config.json").read_text())["dtype"] == "float32"
    assert AutoModelForImageTextToText.from_pretrained(folder).dtype == torch.float32


LANGUAGE_MODEL_TEXTS = ["the quick brown fox", "jumps over the lazy dog", "the end"] * 5


def crnn_with_language_model():
    """A tiny CRNN reading with a character trigram of a few texts, weighted so that it changes the reading, and a
    line-break mark (`e`, for the test's sake)."""
    model, processor = tiny_recognizer("crnn")
    with_decoding(model, "ctc")
    attach_language_model(model, processor.tokenizer, LANGUAGE_MODEL_TEXTS, order=3, min_count=1, num_beams=4,
                          language_model_weight=3.0, length_bonus=2.0, line_break_marks=("e",))
    return model, processor


def test_a_crnn_with_a_language_model_reads_alike_on_every_path(line_files, tmp_path, capsys):
    """The n-gram is saved with the weights and the search settings with the generation config: every path reads
    with them; `num_beams=1` is best path; the confidences are those of the characters read."""
    model, processor = crnn_with_language_model()
    folder = tmp_path / "model"
    export_for_hub(model, processor, folder)
    expected = generated_texts(model, processor, line_files)
    inputs = processor(images=line_files, return_tensors="pt")
    best_path = processor.batch_decode(model.ctc_decode(**inputs, num_beams=1), skip_special_tokens=True)
    assert expected != best_path
    assert recognize(model, processor, line_files, num_beams=1, progress=False).texts == best_path
    texts = readings(folder, model, processor, line_files, tmp_path, capsys)
    assert {path: text for path, text in texts.items() if text != expected} == {}
    reading = read_batch_with_confidences(model, inputs)
    assert processor.batch_decode(reading.token_ids) == expected
    assert all(0 < confidence <= 1 for confidence in reading.confidences)
    assert [len(alignment.character_frames) for alignment in reading.alignments] == list(map(len, reading.token_ids))
    reloaded = AutoModelForImageTextToText.from_pretrained(folder)
    assert torch.equal(reloaded.language_model.ngram_keys, model.language_model.ngram_keys)
    assert reloaded.generation_config.line_break_token_ids == [processor.tokenizer.convert_tokens_to_ids("e")]


def test_iter_recognize_reads_lines_unsure_by_their_best_path_where_asked(line_files):
    """`best_path_under`: a floor above every line's best-path character confidence reads each line by its best path,
    one of 0 (the default) by the search, as `generate()` does."""
    from textrec.processing.inference import iter_recognize

    model, processor = crnn_with_language_model()
    inputs = processor(images=line_files, return_tensors="pt")
    best_path = processor.batch_decode(model.ctc_decode(**inputs, num_beams=1), skip_special_tokens=True)
    expected = generated_texts(model, processor, line_files)

    def texts(**options):
        return [text for _, text, _ in iter_recognize(model, processor, line_files, progress=False, **options)]

    assert texts() == texts(best_path_under=0.0) == expected != best_path
    assert texts(best_path_under=1.01) == [text if text else searched for text, searched in zip(best_path, expected)]


def release_files(name: str, tmp_path: Path, count: int = 2) -> list[str]:
    """The first `count` images of the release's own test data (its guard samples where it has them), as files."""
    from textrec.processing.data import load_text_recognition_dataset

    release = release_module.get_release(name)
    if release.guard_samples:
        dataset = load_text_recognition_dataset(str(REPOSITORY / release.guard_samples), split=None)
        dataset = dataset.select(range(count))
    else:
        dataset = load_text_recognition_dataset(next(iter(release.test_sets.values())), split="test", num_samples=count)
    for index, image in enumerate(dataset["image"]):
        image.save(tmp_path / f"image{index}.png")
    return [str(tmp_path / f"image{index}.png") for index in range(count)]


RELEASED = [name for name in released_model_names() if name in release_module.RELEASES]


@pytest.mark.parametrize("name", RELEASED)
def test_released_model_reads_alike_on_every_path(name, tmp_path, capsys):
    """By short name and by folder; the paths of the tiny models above that touch the release's own files (the
    export is in the slow tier); `textrec-recognize` without `--model` reads with the default recognizer."""
    folder = released_model_path(name)
    files = release_files(name, tmp_path)
    decoding = json.loads((folder / "generation_config.json").read_text())["decoding"]
    model, processor = load_recognizer(name)
    expected = batch_texts(model, processor, files, decoding)
    plain = AutoModelForImageTextToText.from_pretrained(folder)
    assert plain.dtype == torch.float32
    texts = {
        "recognize() by short name": recognize(model, processor, files, progress=False).texts,
        "textrec-recognize by short name": recognize_cli.run(["--model", name, *files]),
        "plain from_pretrained": generated_texts(plain, AutoProcessor.from_pretrained(folder), files),
    }
    if name == DEFAULT_RECOGNIZER:
        texts["textrec-recognize without --model"] = recognize_cli.run(files)
    for path, reader in (("pipeline by folder", pipeline("text-recognition", model=str(folder))),
                         ("pipeline by object", pipeline("text-recognition", model=model, processor=processor))):
        texts[path] = [result["generated_text"] for result in reader(files, batch_size=len(files))]
    assert {path: text for path, text in texts.items() if text != expected} == {}
    assert all(text.strip() for text in expected)


def without_textrec_readings(folders: list[Path], files: list[str], tmp_path: Path) -> list[list[list[str]]]:
    """README's snippet and pipeline one-liner on each folder, where textrec cannot be imported: per folder,
    [texts of `generate()`, texts of the pipeline]."""
    output = run_without_textrec(
        f"""
        import json
        from transformers import AutoModelForImageTextToText, AutoProcessor, pipeline
        results = []
        for folder in {[str(folder) for folder in folders]!r}:
            model = AutoModelForImageTextToText.from_pretrained(folder, trust_remote_code=True)
            processor = AutoProcessor.from_pretrained(folder, trust_remote_code=True)
            assert not type(model).__module__.startswith("textrec") and str(model.dtype) == "torch.float32"
            # formulas, padded below as well, one at a time: textrec reads each as alone
            batches = [[file] for file in {files!r}] if processor.image_processor.pads_height else [{files!r}]
            generated = [text for batch in batches for text in processor.batch_decode(
                model.generate(**processor(images=batch, return_tensors="pt")), skip_special_tokens=True)]
            read = pipeline("text-recognition", model=folder, trust_remote_code=True)
            piped = [result["generated_text"] for result in read({files!r}, batch_size={len(files)})]
            results.append([generated, piped])
        print(json.dumps(results))
        """,
        tmp_path,
    )
    return json.loads(output.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_exported_folders_read_alike_without_textrec(name, line_files, tmp_path):
    """Each decoding of the architecture, through README's snippet and the pipeline, where textrec is not
    installed: the exported code follows the generation config's decoding as textrec does."""
    model, processor = tiny_recognizer(name)
    folders, expected = [], []
    for decoding in available_decodings(model):
        with_decoding(model, decoding)
        folders.append(tmp_path / decoding)
        export_for_hub(model, processor, tmp_path / "run")
        export_model(str(tmp_path / "run"), folders[-1])
        expected.append(recognize(model, processor, line_files, progress=False).texts)
    for (generated, piped), texts in zip(without_textrec_readings(folders, line_files, tmp_path), expected):
        assert generated == piped == texts


@pytest.mark.slow
def test_an_exported_crnn_with_a_language_model_reads_alike_without_textrec(line_files, tmp_path):
    model, processor = crnn_with_language_model()
    export_for_hub(model, processor, tmp_path / "run")
    export_model(str(tmp_path / "run"), tmp_path / "exported")
    expected = recognize(model, processor, line_files, progress=False).texts
    [[generated, piped]] = without_textrec_readings([tmp_path / "exported"], line_files, tmp_path)
    assert generated == piped == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", RELEASED)
def test_released_model_exported_by_the_command_reads_alike_without_textrec(name, tmp_path):
    files = release_files(name, tmp_path)
    folder = tmp_path / "hub"
    subprocess.run([sys.executable, "-m", "textrec.scripts.export", "--model", name, "--output_dir", str(folder)],
                   check=True, capture_output=True)
    model, processor = load_recognizer(name)
    expected = recognize(model, processor, files, progress=False).texts
    [[generated, piped]] = without_textrec_readings([folder], files, tmp_path)
    assert generated == piped == expected
