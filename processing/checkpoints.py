"""Loading a saved textrec model so that its weights are the file's, all of them, or an error says which are not.

transformers' `from_pretrained` initialises a weight the file lacks at random and ignores one the model lacks,
with a report on stderr: a folder of another architecture, or one saved by an earlier textrec whose weights
were named otherwise, loaded half random and read garbage, differently on every run. `load_pretrained` refuses
such a folder in one line that names the file and the weights, and reads a checkpoint of an earlier textrec by
the layout it was written in: its `config.json`'s `textrec_format` (0 where it has none; see
`textrec.modeling.common.checkpoint_format`) picks the renamings of `KEY_RENAMES`, applied as transformers
applies its checkpoint conversion mappings (`from_pretrained(..., key_mapping=...)`).
"""

import logging
import os
from contextlib import contextmanager
from pathlib import Path

from transformers import PretrainedConfig

from textrec.modeling import SelfAttentionRecognizerConfig
from textrec.modeling.common.checkpoint_format import CHECKPOINT_FORMAT

WEIGHTS_FILE = "model.safetensors"
SHOWN_KEYS = 3
"""How many weights of each kind an error names (then how many more there are)."""

_BATCH_NORM_TENSOR = r"(?=(?:weight|bias|running_mean|running_var|num_batches_tracked)$)"
KEY_RENAMES: dict[str, list[tuple[int, dict[str, str]]]] = {
    SelfAttentionRecognizerConfig.model_type: [
        # Until commit 078afb0 (the strided stem, the context encoder and the `fast` preset) a CNN stage was one
        # nn.Sequential (convolution, norm, ReLU, convolution, norm, ReLU, max-pool); since then each
        # convolution, norm and ReLU is a ConvBlock of its own within the stage. A stage's children 0, 1, 3, 4
        # became 0.0, 0.1, 1.0, 1.1. The checkpoints saved since have format 0 too; these patterns cannot
        # match their names (`encoder.stages.0.0.0.weight`).
        (
            1,
            {
                r"^encoder\.stages\.(\d+)\.0\.(?=weight$)": r"encoder.stages.\1.0.0.",
                r"^encoder\.stages\.(\d+)\.1\." + _BATCH_NORM_TENSOR: r"encoder.stages.\1.0.1.",
                r"^encoder\.stages\.(\d+)\.3\.(?=weight$)": r"encoder.stages.\1.1.0.",
                r"^encoder\.stages\.(\d+)\.4\." + _BATCH_NORM_TENSOR: r"encoder.stages.\1.1.1.",
            },
        ),
    ],
}
"""model_type -> `(format, renamings)` in the order the layouts changed: the renamings (regular expression ->
replacement, transformers' `key_mapping`) turn the names of checkpoints of formats below `format` into those of
`format`. A change that renames weights raises `CHECKPOINT_FORMAT` and adds its renamings here, with a
checkpoint of the earlier layout in `tests/fixtures/earlier_checkpoints/` that must still read as it did."""


def checkpoint_format(config_dict: dict) -> int:
    """The layout of the weights beside a `config.json` (its `textrec_format`; 0 where it has none)."""
    return int(config_dict.get("textrec_format", 0))


def key_mapping(model_type: str | None, found_format: int) -> dict[str, str]:
    """The renamings that bring the weight names of a `model_type` checkpoint of format `found_format` to the
    current layout (none for the current format)."""
    mapping = {}
    for changed_in, renamings in KEY_RENAMES.get(model_type, []):
        if found_format < changed_in:
            mapping.update(renamings)
    return mapping


def weights_file_name(source: str | os.PathLike) -> str:
    """`folder/model.safetensors`, or `model.safetensors of owner/name` for a Hub repository."""
    return str(Path(source) / WEIGHTS_FILE) if Path(source).is_dir() else f"{WEIGHTS_FILE} of {source}"


def _some(keys) -> str:
    keys = sorted(keys)
    shown = ", ".join(keys[:SHOWN_KEYS])
    return shown + (f", ... ({len(keys) - SHOWN_KEYS} more)" if len(keys) > SHOWN_KEYS else "")


def _shape(size) -> str:
    return str(tuple(size))


def loading_problems(info: dict) -> list[str]:
    """What `from_pretrained(..., output_loading_info=True)` reports that keeps a model from being the file's:
    weights the file lacks, weights the model lacks, weights of another shape; each kind counted, the first few
    named."""
    problems = []
    if info["missing_keys"]:
        problems.append(f"{len(info['missing_keys'])} weights of the model are not in the file ({_some(info['missing_keys'])})")
    if info["unexpected_keys"]:
        problems.append(f"{len(info['unexpected_keys'])} weights of the file are not in the model ({_some(info['unexpected_keys'])})")
    if info["mismatched_keys"]:
        mismatched = sorted(info["mismatched_keys"])
        shown = "; ".join(
            f"{key}: {_shape(stored)} in the file, {_shape(expected)} in the model" for key, stored, expected in mismatched[:SHOWN_KEYS]
        )
        more = f"; ... ({len(mismatched) - SHOWN_KEYS} more)" if len(mismatched) > SHOWN_KEYS else ""
        problems.append(f"{len(mismatched)} weights have another shape ({shown}{more})")
    return problems


class _WithoutLoadReport(logging.Filter):
    """Drops transformers' multi-line load report: `load_pretrained` turns what it says into its one-line error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "LOAD REPORT" not in record.getMessage()


@contextmanager
def _load_report_silenced():
    report_logger = logging.getLogger("transformers.modeling_utils")
    quiet = _WithoutLoadReport()
    report_logger.addFilter(quiet)
    try:
        yield
    finally:
        report_logger.removeFilter(quiet)


def load_pretrained(model_class, source: str | os.PathLike, **kwargs):
    """`model_class.from_pretrained(source, **kwargs)` (a textrec model class, or an Auto class that resolves to
    one), with every weight of the model read from the file, in its shape, and every weight of the file used.

    A checkpoint saved by an earlier textrec (an older `textrec_format` in its `config.json`) is read with its
    weights renamed to the current layout (`KEY_RENAMES`); the model saves in the current layout.

    Raises:
        ValueError: the file lacks weights of the model, holds weights the model lacks, or holds weights of
            another shape (another architecture, preset or vocabulary than `config.json` describes; a
            layout this textrec cannot convert); or `config.json` was written by a later textrec. The one-line
            message names the file, counts each kind and names the first few weights.
    """
    config_dict, _ = PretrainedConfig.get_config_dict(source)
    found_format = checkpoint_format(config_dict)
    if found_format > CHECKPOINT_FORMAT:
        raise ValueError(
            f"{source}: saved by a later textrec (checkpoint format {found_format}; this textrec reads formats up to "
            f"{CHECKPOINT_FORMAT}); update textrec to load it."
        )
    mapping = key_mapping(config_dict.get("model_type"), found_format)
    with _load_report_silenced():
        model, info = model_class.from_pretrained(
            source, output_loading_info=True, ignore_mismatched_sizes=True, key_mapping=mapping or None, **kwargs
        )
    problems = loading_problems(info)
    if problems:
        raise ValueError(
            f"{weights_file_name(source)} does not fit the {config_dict.get('model_type')} model that its config.json "
            f"describes: {'; '.join(problems)}. Was it saved by another architecture, preset or vocabulary?"
        )
    if mapping:
        # transformers remembers the renamings it applied so as to save in the file's layout again; a textrec
        # model saves in the current layout, which its config.json's textrec_format names.
        model._weight_conversions = None
    return model
