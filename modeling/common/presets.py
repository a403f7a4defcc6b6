"""Named hyperparameter presets on a configuration class (`tiny`, `base`, `paper`)."""


class ConfigPresetsMixin:
    """Gives a `PretrainedConfig` subclass `from_preset`; the subclass defines `PRESETS`, a dict of
    preset name to keyword arguments."""

    PRESETS: dict[str, dict] = {}

    @classmethod
    def from_preset(cls, preset: str, **kwargs):
        """A configuration from one of `PRESETS`, updated with `kwargs`."""
        if preset not in cls.PRESETS:
            raise ValueError(f"Unknown preset {preset!r} for {cls.__name__}; choose from {sorted(cls.PRESETS)}.")
        return cls(**{**cls.PRESETS[preset], **kwargs})
