# Copied from modeling/common/checkpoint_format.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""The layout of a saved textrec model, numbered: every textrec configuration writes `textrec_format` into
`config.json`, so that a later textrec reads the weights beside it by the layout they were written in.

Format 0 is every checkpoint saved before the number was recorded; `CHECKPOINT_FORMAT` is the layout this code
writes. A change that renames saved weights raises `CHECKPOINT_FORMAT` and tells textrec's loader how to rename
the earlier layout (`textrec.processing.checkpoints.KEY_RENAMES`, in the form of transformers' checkpoint
conversion mappings), so that the earlier checkpoints keep loading and reading as they did.
"""

CHECKPOINT_FORMAT = 1
"""1: the first numbered layout (all architectures as of textrec 0.1.0)."""


class CheckpointFormatMixin:
    """Makes a `PretrainedConfig` subclass write `"textrec_format": CHECKPOINT_FORMAT` into `config.json`.

    The number a loaded `config.json` holds is not kept on the configuration: a model in memory always has the
    current layout (its weights converted on loading where they had another), and is saved as such. textrec's
    loader reads the number from the file before loading, to rename what an earlier layout named otherwise."""

    def __init__(self, **kwargs):
        kwargs.pop("textrec_format", None)
        super().__init__(**kwargs)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "textrec_format": CHECKPOINT_FORMAT}
