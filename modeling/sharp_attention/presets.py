# Copied from modeling/common/presets.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.
"""What every textrec configuration shares: named hyperparameter presets (`tiny`, `base`, `paper`), and a
`text-recognition` pipeline entry that gives way to the pipeline registered in the running process."""

import sys

PIPELINE_TASK = "text-recognition"
"""The task of textrec's pipeline, under which a saved folder lists its copy in `config.json`'s
`custom_pipelines`."""


def pipeline_task_is_registered(task: str) -> bool:
    """Whether transformers' pipeline registry already knows `task` in this process (textrec's pipeline, after
    `import textrec.processing`), without importing transformers' pipelines where nothing has."""
    pipelines = sys.modules.get("transformers.pipelines")
    registry = getattr(pipelines, "PIPELINE_REGISTRY", None)
    return registry is not None and task in registry.get_supported_tasks()


class ConfigPresetsMixin:
    """Gives a `PretrainedConfig` subclass `from_preset`; the subclass defines `PRESETS`, a dict of
    preset name to keyword arguments.

    A saved folder names the `text-recognition` pipeline code it carries in `custom_pipelines`, for machines
    without textrec (`pipeline(..., trust_remote_code=True)`). Where a `text-recognition` pipeline is already
    registered (inside textrec), the configuration leaves that entry out: transformers' `pipeline()` then uses
    the registered pipeline and loads the folder with textrec's own classes, without asking for
    `trust_remote_code`. Saving through the pipeline (`export_for_hub`) writes the entry again.
    """

    PRESETS: dict[str, dict] = {}

    def __init__(self, **kwargs):
        pipelines = kwargs.get("custom_pipelines")
        if pipelines and PIPELINE_TASK in pipelines and pipeline_task_is_registered(PIPELINE_TASK):
            others = {task: entry for task, entry in pipelines.items() if task != PIPELINE_TASK}
            if others:
                kwargs["custom_pipelines"] = others
            else:
                del kwargs["custom_pipelines"]
        super().__init__(**kwargs)

    @classmethod
    def from_preset(cls, preset: str, **kwargs):
        """A configuration from one of `PRESETS`, updated with `kwargs`."""
        if preset not in cls.PRESETS:
            raise ValueError(f"Unknown preset {preset!r} for {cls.__name__}; choose from {sorted(cls.PRESETS)}.")
        return cls(**{**cls.PRESETS[preset], **kwargs})
