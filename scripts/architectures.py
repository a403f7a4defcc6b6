"""What the command-line tools need to know about each architecture beyond its model classes:
the image processor settings its models are trained with."""

from dataclasses import dataclass, field

from transformers import AutoProcessor

from textrec.modeling import ARCHITECTURES
from textrec.processing import TextRecognitionProcessor


@dataclass(frozen=True)
class ArchitectureSpec:
    """One entry of `--model`.

    Args:
        name: the command-line name.
        config_class, model_class: from `textrec.modeling.ARCHITECTURES`.
        description: one or two sentences for model cards.
        image_processor_kwargs: `TextRecognitionImageProcessor` settings for new models.
    """

    name: str
    config_class: type
    model_class: type
    description: str
    image_processor_kwargs: dict = field(default_factory=dict)


LINE_IMAGES = dict(num_channels=1, resize_mode="keep_aspect", height=32, max_width=512, width_multiple=4)

SPECS = {
    "self-attention": ArchitectureSpec(
        "self-attention",
        *ARCHITECTURES["self-attention"],
        description=(
            "A CNN encodes the line image; its feature map, flattened into a sequence with sinusoidal "
            "positions, is read by a transformer decoder (masked self-attention, cross-attention, ReLU "
            "feed-forward) that predicts the characters."
        ),
        image_processor_kwargs=LINE_IMAGES,
    ),
}


def get_spec(name: str) -> ArchitectureSpec:
    if name not in SPECS:
        raise ValueError(f"Unknown architecture {name!r}; available: {', '.join(sorted(SPECS))}.")
    return SPECS[name]


for _spec in SPECS.values():
    AutoProcessor.register(_spec.config_class, TextRecognitionProcessor, exist_ok=True)
