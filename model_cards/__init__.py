"""Model cards, and the released checkpoints that ship with textrec.

`text_recognition.md` is the card template (rendered with the real evaluation results as `model-index`
metadata by `textrec.model_cards.card`). Each released checkpoint is a Hub folder in `released/<name>/`:
`config.json` (`"dtype": "float32"`: it loads and computes in fp32), fp16 `model.safetensors`,
`generation_config.json`, `tokenizer.json`, `processor_config.json` and its card `README.md`, which gives the
command that trained it and its held-out results, with `example.png` (rendered by textrec) for the card's widget.
The text-line detector (`released_detector_names()`) has no tokenizer: its image processor is in
`preprocessor_config.json`.
Its code is textrec's own; `textrec-export` writes a copy of that code into a Hub folder.
"""

from importlib import resources
from pathlib import Path

RELEASED_FOLDER = "released"
DEFAULT_RECOGNIZER = "crnn-lines"
"""The released recognizer the commands read with when none is named: it reads printed lines, scans and photographed
words best of the released line models on the real development sets (README's first table)."""
DEFAULT_DETECTOR = "line-detector"
"""The released text-line detector that finds a page's lines when none is named."""


def _released_folders() -> dict[str, bool]:
    """Each released checkpoint's short name, and whether it is a recognizer (it has a tokenizer)."""
    folder = resources.files(__name__) / RELEASED_FOLDER
    if not folder.is_dir():
        return {}
    return {entry.name: (entry / "tokenizer.json").is_file() for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if (entry / "config.json").is_file()}


def released_model_names() -> list[str]:
    """The short names of the recognizers installed with textrec (`self-attention-lines`, ...)."""
    return [name for name, recognizer in _released_folders().items() if recognizer]


def released_detector_names() -> list[str]:
    """The short names of the text-line detectors installed with textrec (`line-detector`)."""
    return [name for name, recognizer in _released_folders().items() if not recognizer]


def released_model_path(name: str) -> Path:
    """The folder of the released checkpoint `name` (a recognizer or a detector), for any `from_pretrained`:
    `AutoModelForImageTextToText.from_pretrained(released_model_path("self-attention-lines"))`."""
    if name not in _released_folders():
        available = ", ".join(_released_folders()) or "none installed"
        raise ValueError(f"No released model named {name!r} (released: {available}).")
    return Path(str(resources.files(__name__) / RELEASED_FOLDER / name))


def resolve_model_path(name_or_path: str) -> str:
    """A released model's folder for its short name; anything else (a folder, a Hub id) unchanged. A local
    folder of the same name wins over the released model."""
    if not Path(name_or_path).exists() and name_or_path in _released_folders():
        return str(released_model_path(name_or_path))
    return name_or_path
