"""Weights that do not fit are an error, not a warning; checkpoints saved by earlier textrec versions read as
they did (`textrec.processing.checkpoints`, `textrec.modeling.common.checkpoint_format`)."""

import json
import re
import shutil
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from textrec.model_cards.hub import export_for_hub
from textrec.modeling import ARCHITECTURES, LANGUAGE_MODELS
from textrec.modeling.common.checkpoint_format import CHECKPOINT_FORMAT
from textrec.modeling.trocr_charbert.configuration_trocr_charbert import TrOCRCharBertDecoderConfig
from textrec.processing.checkpoints import KEY_RENAMES
from textrec.processing.inference import load_recognizer, recognize
from textrec.processing.training import ModelArguments, build_recognizer
from textrec.processing.training.architectures import get_spec

EARLIER = Path(__file__).parent / "fixtures" / "earlier_checkpoints"
CHECKPOINTS = sorted(path.name for path in EARLIER.iterdir() if (path / "read.json").is_file())
BEFORE_STAGE_BLOCKS = EARLIER / "self-attention-before-stage-blocks"


def recorded_reading(name: str) -> dict[str, str]:
    return json.loads((EARLIER / name / "read.json").read_text())["read"]


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_a_checkpoint_saved_by_an_earlier_textrec_reads_as_it_did(name):
    recorded = recorded_reading(name)
    model, processor = load_recognizer(str(EARLIER / name / "model"))
    result = recognize(model, processor, [str(EARLIER / name / image) for image in recorded], progress=False)
    assert result.texts == list(recorded.values())


def test_the_checkpoint_from_before_the_encoder_change_has_the_earlier_layout():
    """What the fixture must be for the test above to show the conversion: no format number, the stage weights
    under their earlier names."""
    config = json.loads((BEFORE_STAGE_BLOCKS / "model" / "config.json").read_text())
    with safe_open(BEFORE_STAGE_BLOCKS / "model" / "model.safetensors", "pt") as stored:
        names = set(stored.keys())
    assert "textrec_format" not in config
    assert {"encoder.stages.0.0.weight", "encoder.stages.0.4.running_var"} <= names
    assert not any(name.startswith("encoder.stages.0.0.0.") for name in names)


def test_an_earlier_checkpoint_is_saved_again_in_the_current_layout_and_reads_the_same(tmp_path):
    recorded = recorded_reading(BEFORE_STAGE_BLOCKS.name)
    model, processor = load_recognizer(str(BEFORE_STAGE_BLOCKS / "model"))
    model.save_pretrained(tmp_path)
    processor.save_pretrained(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["textrec_format"] == CHECKPOINT_FORMAT
    with safe_open(tmp_path / "model.safetensors", "pt") as saved:
        assert set(saved.keys()) == set(model.state_dict())
    model, processor = load_recognizer(str(tmp_path))
    result = recognize(model, processor, [str(BEFORE_STAGE_BLOCKS / image) for image in recorded], progress=False)
    assert result.texts == list(recorded.values())


def test_fine_tuning_starts_from_an_earlier_checkpoint_as_it_was_saved():
    folder = BEFORE_STAGE_BLOCKS / "model"
    model, _ = build_recognizer(ModelArguments(model_name_or_path=str(folder)), get_spec("self-attention"))
    stored = load_file(folder / "model.safetensors")
    weights = model.state_dict()
    assert torch.equal(weights["encoder.stages.0.0.0.weight"], stored["encoder.stages.0.0.weight"])
    assert torch.equal(weights["encoder.stages.3.1.1.running_var"], stored["encoder.stages.3.4.running_var"])


MODEL_TYPES = {config_class.model_type: (config_class, model_class) for config_class, model_class in ARCHITECTURES.values()}


@pytest.mark.parametrize(
    "model_type, preset",
    [(model_type, preset) for model_type in KEY_RENAMES for preset in sorted(MODEL_TYPES[model_type][0].PRESETS)],
)
def test_the_renamings_of_earlier_layouts_leave_the_current_names_alone(model_type, preset):
    """A checkpoint saved after a change but before the format was numbered has format 0 too: the renamings of
    the earlier layout must not match its names."""
    config_class, model_class = MODEL_TYPES[model_type]
    with torch.device("meta"):
        names = list(model_class(config_class.from_preset(preset)).state_dict())
    patterns = [pattern for _, renamings in KEY_RENAMES[model_type] for pattern in renamings]
    assert [(name, pattern) for name in names for pattern in patterns if re.search(pattern, name)] == []


CONFIG_CLASSES = [config_class for config_class, _ in ARCHITECTURES.values()] + [
    config_class for config_class, *_ in LANGUAGE_MODELS.values()
] + [TrOCRCharBertDecoderConfig]


@pytest.mark.parametrize("config_class", CONFIG_CLASSES, ids=lambda config_class: config_class.__name__)
def test_every_configuration_writes_its_checkpoint_format(config_class, tmp_path):
    config_class().save_pretrained(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["textrec_format"] == CHECKPOINT_FORMAT
    config_class.from_pretrained(tmp_path).save_pretrained(tmp_path / "again")  # a loaded number is not kept
    assert json.loads((tmp_path / "again" / "config.json").read_text())["textrec_format"] == CHECKPOINT_FORMAT


# ------------------------------------------------------------------------------------------------ weights that do not fit


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    """A tiny self-attention model as textrec-train saves it (99 tokens, hidden size 32)."""
    folder = tmp_path_factory.mktemp("model") / "tiny"
    torch.manual_seed(0)
    export_for_hub(*build_recognizer(ModelArguments(model="self-attention", preset="tiny"), get_spec("self-attention")), folder)
    return folder


def weights_of(architecture: str, preset: str = "tiny", **overrides):
    """What puts the weights of a new `architecture` model of `preset` into a model folder."""

    def put(folder):
        config_class, model_class = ARCHITECTURES[architecture]
        model_class(config_class.from_preset(preset, **overrides)).save_pretrained(folder / "donor")
        shutil.copy(folder / "donor" / "model.safetensors", folder / "model.safetensors")

    return put


def declared_current(folder):
    """The earlier layout's weights, with a config.json that claims the current format."""
    shutil.copy(BEFORE_STAGE_BLOCKS / "model" / "model.safetensors", folder / "model.safetensors")
    shutil.copy(BEFORE_STAGE_BLOCKS / "model" / "config.json", folder / "config.json")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "textrec_format": CHECKPOINT_FORMAT}))


NOT_FITTING = {
    "weights of another architecture": (
        weights_of("crnn"),
        r"weights of the model are not in the file \(decoder\.embed_tokens\.weight, .*weights of the file are not "
        r"in the model \(",
    ),
    "weights of a larger preset": (
        weights_of("self-attention", "base"),
        r"weights have another shape \(decoder\.embed_tokens\.weight: \(99, 256\) in the file, \(99, 32\) in the model",
    ),
    "weights of a larger vocabulary": (
        weights_of("self-attention", vocab_size=120),
        r"3 weights have another shape \(decoder\.embed_tokens\.weight: \(120, 32\) in the file, \(99, 32\) in the "
        r"model; lm_head\.bias: \(120,\) in the file, \(99,\) in the model",
    ),
    "an earlier layout that claims the current format": (
        declared_current,
        r"48 weights of the model are not in the file \(encoder\.stages\.0\.0\.0\.weight, .*, \.\.\. \(45 more\)\); "
        r"48 weights of the file are not in the model \(encoder\.stages\.0\.0\.weight, ",
    ),
}
LOADERS = {
    "load_recognizer": load_recognizer,
    "fine-tuning": lambda folder: build_recognizer(ModelArguments(model_name_or_path=folder), get_spec("self-attention")),
}


@pytest.mark.parametrize("loader", list(LOADERS))
@pytest.mark.parametrize("case", list(NOT_FITTING))
def test_weights_that_do_not_fit_are_an_error_naming_the_file_and_the_weights(model_folder, tmp_path, case, loader):
    breaks, message = NOT_FITTING[case]
    folder = tmp_path / "broken"
    shutil.copytree(model_folder, folder)
    breaks(folder)
    with pytest.raises(ValueError) as error:
        LOADERS[loader](str(folder))
    text = str(error.value)
    assert text.startswith(f"{folder / 'model.safetensors'} does not fit the textrec-self-attention model"), text
    assert re.search(message, text) and "\n" not in text, text


def test_a_checkpoint_of_a_later_textrec_is_refused(model_folder, tmp_path):
    folder = tmp_path / "later"
    shutil.copytree(model_folder, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "textrec_format": CHECKPOINT_FORMAT + 1}))
    with pytest.raises(ValueError, match=rf"saved by a later textrec \(checkpoint format {CHECKPOINT_FORMAT + 1}; "):
        load_recognizer(str(folder))
