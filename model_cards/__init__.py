"""Model cards, and the released checkpoints that ship with textrec.

`text_recognition.md` is the card template (rendered with the real evaluation results as `model-index`
metadata by `textrec.model_cards.card`). Each released checkpoint is a Hub folder in `released/<name>/`:
`config.json` (`"dtype": "float32"`: it loads and computes in fp32), fp16 `model.safetensors`,
`generation_config.json`, `tokenizer.json`, `processor_config.json` and its card `README.md`, which gives the
command that trained it and its held-out results. Its code is
textrec's own; `textrec-export` writes a copy of that code into a Hub folder.
"""

from importlib import resources
from pathlib import Path

RELEASED_FOLDER = "released"


def released_model_names() -> list[str]:
    """The short names of the checkpoints installed with textrec (`self-attention-lines`, ...)."""
    folder = resources.files(__name__) / RELEASED_FOLDER
    if not folder.is_dir():
        return []
    return sorted(entry.name for entry in folder.iterdir() if (entry / "config.json").is_file())


def released_model_path(name: str) -> Path:
    """The folder of the released checkpoint `name`, for any `from_pretrained`:
    `AutoModelForImageTextToText.from_pretrained(released_model_path("self-attention-lines"))`."""
    if name not in released_model_names():
        available = ", ".join(released_model_names()) or "none installed"
        raise ValueError(f"No released model named {name!r} (released: {available}).")
    return Path(str(resources.files(__name__) / RELEASED_FOLDER / name))


def resolve_model_path(name_or_path: str) -> str:
    """A released model's folder for its short name; anything else (a folder, a Hub id) unchanged. A local
    folder of the same name wins over the released model."""
    if not Path(name_or_path).exists() and name_or_path in released_model_names():
        return str(released_model_path(name_or_path))
    return name_or_path
