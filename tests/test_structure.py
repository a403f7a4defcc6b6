"""The house's rules, checked on the source.

- Shared code written once: each model folder holds copies of exactly the shared files its code imports
  (directly or through another shared file), each identical to its source but for the header naming it
  (`scripts/lab/copy_shared_code.py --check`); inside textrec each copy is its source module, loaded once. No
  symbolic links. A shared file has at least two users; one with a single user lives with it.
- Dependencies point one way (`LAYERS`): modeling <- processing core <- model_cards <- data, metrics <- training,
  inference <- commands; nothing in the library imports the lab (`scripts/lab/`, not installed). Every package folder is installed: `setup.py`
  discovers the folders holding an `__init__.py`.
- One training path: only `textrec.processing.training` builds a Trainer; no module assigns into another
  module's registries (`SPECS`, `ARCHITECTURES`, `RELEASES`)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELING = ROOT / "modeling"
FOLDERS = sorted(path for path in MODELING.iterdir() if path.is_dir() and (path / "__init__.py").exists())


def test_every_copy_of_shared_code_matches_its_source_and_none_is_missing_or_stale():
    """The copies of shared modeling files in the model folders (`textrec.modeling.common.shared_code`) are
    exactly what `scripts/lab/copy_shared_code.py` writes: fix a failure by running it."""
    import copy_shared_code

    assert copy_shared_code.differences() == []


def test_no_symbolic_links_in_the_library():
    assert [str(path.relative_to(ROOT)) for folder in ("modeling", "processing", "scripts", "model_cards")
            for path in (ROOT / folder).rglob("*") if path.is_symlink()] == []


def test_every_shared_module_is_loaded_once():
    """Inside textrec a copy is its source module under a second name: each class exists once."""
    import importlib
    import sys

    import copy_shared_code

    importlib.import_module("textrec.modeling")
    for path in copy_shared_code.expected_copies():
        folder, source = copy_shared_code.copy_source(path)
        copy_name = f"textrec.modeling.{path.parent.name}.{path.stem}"
        importlib.import_module(f"textrec.modeling.{path.parent.name}")
        assert sys.modules[copy_name] is importlib.import_module(f"textrec.modeling.{folder}.{source}"), copy_name


def test_every_common_file_has_two_users_or_more():
    import copy_shared_code

    users = {}
    for path in copy_shared_code.expected_copies():
        users.setdefault(copy_shared_code.copy_source(path), []).append(path.parent.name)
    shared = [path.stem for path in (MODELING / "common").glob("*.py") if path.stem not in ("__init__", "shared_code")]
    assert {name: users.get(("common", name), []) for name in shared if len(users.get(("common", name), [])) < 2} == {}


LIBRARY_FOLDERS = ("modeling", "processing", "scripts", "model_cards")


LAB = ROOT / "scripts" / "lab"


def source_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py")
                  if not path.is_relative_to(LAB) and not path.read_text().startswith("# Copied from modeling/"))


def test_setup_discovers_every_package_folder_and_not_the_lab(tmp_path, monkeypatch):
    """`setup.py` installs each package folder of the library, a new one included, without a list to keep (the
    wheel's content is checked file by file in tests/test_installed_package.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("textrec_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    assert setup.LIBRARY_FOLDERS == LIBRARY_FOLDERS
    monkeypatch.chdir(ROOT)  # setup.py finds packages from the checkout's root, where pip builds it
    found = {
        "textrec." + ".".join(init.parent.relative_to(ROOT).parts)
        for folder in LIBRARY_FOLDERS for init in (ROOT / folder).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert set(setup.library_packages()) == found
    assert not (LAB / "__init__.py").exists(), "the lab is not a package: its scripts run from a checkout"
    for folder in LIBRARY_FOLDERS:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").touch()
    (tmp_path / "modeling" / "new_model").mkdir()
    (tmp_path / "modeling" / "new_model" / "__init__.py").touch()
    (tmp_path / "scripts" / "lab").mkdir()
    (tmp_path / "scripts" / "lab" / "study.py").touch()
    monkeypatch.chdir(tmp_path)
    assert "textrec.modeling.new_model" in setup.library_packages()
    assert not any("lab" in name for name in setup.library_packages())


def test_the_library_imports_nothing_of_the_lab():
    lab_modules = "|".join(sorted(path.stem for path in LAB.glob("*.py")))
    pattern = re.compile(rf"^\s*(from|import) ({lab_modules})\b|scripts\.lab", re.M)
    assert [str(path.relative_to(ROOT)) for path in source_files(*LIBRARY_FOLDERS) if pattern.search(path.read_text())] == []


PROCESSING_CORE = ("tokenization_", "image_processing_", "processing_", "pipeline_")
"""The processing modules in transformers' sense: what a Hub folder carries beside the model's code."""
LAYERS = {
    "processing core": [path for path in (ROOT / "processing").glob("*.py") if path.name.startswith(PROCESSING_CORE)],
    "model_cards": sorted((ROOT / "model_cards").glob("*.py")),
    "processing.data and processing.metrics": [*(ROOT / "processing" / "data").glob("*.py"),
                                               *(ROOT / "processing" / "metrics").glob("*.py")],
    "processing.training and inference": [*(ROOT / "processing" / "training").glob("*.py"),
                                          *(path for path in (ROOT / "processing").glob("*.py")
                                            if not path.name.startswith(PROCESSING_CORE))],
}
"""The library's layers, lowest first, above `modeling`: modeling <- processing core <- model_cards (cards, Hub
folders, the released checkpoints) <- data, metrics <- training, inference <- commands. As transformers' Trainer
writes its model card through `modelcard.py`, textrec's training writes its card and Hub files through
`model_cards`; the card and Hub code load nothing."""
FORBIDDEN = {
    "processing core": r"textrec\.(model_cards|scripts)|textrec\.processing\.(data|metrics|training|inference|tesseract|checkpoints|contact_sheet|attention_readout)"
                       r"|^\s*from \.(data|metrics|training|inference|tesseract|checkpoints|contact_sheet|attention_readout)\b",
    "model_cards": r"textrec\.scripts|textrec\.processing\.(data|metrics|training|inference|tesseract|checkpoints)",
    "processing.data and processing.metrics": r"textrec\.(model_cards|scripts)|textrec\.processing\.(training|inference)"
                                              r"|^\s*from \.\.(training|inference)\b",
    "processing.training and inference": r"textrec\.scripts",
}
"""What each layer may not import: anything of a layer above it."""


@pytest.mark.parametrize("layer", list(LAYERS))
def test_dependencies_point_one_way(layer):
    pattern = re.compile(FORBIDDEN[layer], re.M)
    imports = {str(path.relative_to(ROOT)): [line.strip() for line in path.read_text().splitlines()
                                             if line.lstrip().startswith(("from ", "import ")) and pattern.search(line)]
               for path in LAYERS[layer]}
    assert {path: lines for path, lines in imports.items() if lines} == {}


def test_models_import_nothing_of_processing_tools_or_cards():
    pattern = re.compile(r"^\s*(from|import) textrec\.(processing|scripts|model_cards)\b", re.M)
    assert [str(path.relative_to(ROOT)) for path in source_files("modeling") if pattern.search(path.read_text())] == []


TRAINERS = {"TextRecognitionTrainer", "CharBertPretrainingTrainer", "Seq2SeqTrainer", "Trainer"}


def builds_a_trainer(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in TRAINERS:
                return True
    return False


def test_only_the_training_package_builds_trainers():
    training = ROOT / "processing" / "training"
    builders = [
        str(path.relative_to(ROOT))
        for path in source_files(*LIBRARY_FOLDERS)
        if training not in path.parents and builds_a_trainer(path)
    ]
    assert builders == []


def test_no_module_assigns_into_another_modules_registry():
    pattern = re.compile(r"\b(SPECS|ARCHITECTURES|LANGUAGE_MODELS|RELEASES)\[[^\]]+\]\s*=[^=]")
    assert [str(path.relative_to(ROOT)) for path in source_files(*LIBRARY_FOLDERS) if pattern.search(path.read_text())] == []
