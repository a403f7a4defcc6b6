"""The house's rules, checked on the source.

- The sharing between model folders made visible: each architecture folder links exactly the shared files its
  code imports (directly or through another shared file), no more and no fewer, and every link points at a real
  file of another folder. `save_pretrained` copies what is imported; a stale or missing link would break a
  saved folder or hide dead code. A shared file has at least two users; one with a single user lives with it.
- Dependencies point one way: the models import nothing of processing, the tools or the model cards; nothing in
  the library imports the lab (`scripts/lab/`, not installed). Every package folder is installed: the list in
  `pyproject.toml` is exactly the folders holding an `__init__.py`.
- One training path: only `textrec.processing.training` builds a Trainer; no module assigns into another
  module's registries (`SPECS`, `ARCHITECTURES`, `RELEASES`)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELING = ROOT / "modeling"
FOLDERS = sorted(path for path in MODELING.iterdir() if path.is_dir() and (path / "__init__.py").exists())


def relative_imports(path: Path) -> set[str]:
    """Module names of `from .name import ...` in `path`."""
    tree = ast.parse(path.read_text())
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}


def needed_links(folder: Path) -> set[str]:
    """The modules the folder's own files import from elsewhere, with what those import in turn."""
    own = {path.stem for path in folder.glob("*.py") if not path.is_symlink()}
    needed, queue = set(), [name for path in folder.glob("*.py") if not path.is_symlink() for name in relative_imports(path)]
    while queue:
        name = queue.pop()
        if name in own or name in needed:
            continue
        needed.add(name)
        target = (folder / f"{name}.py").resolve()
        if target.exists():
            queue.extend(relative_imports(target))
    return needed


@pytest.mark.parametrize("folder", [f for f in FOLDERS if f.name != "common"], ids=lambda f: f.name)
def test_links_are_exactly_the_shared_files_imported(folder):
    links = {path.stem for path in folder.glob("*.py") if path.is_symlink()}
    assert links == needed_links(folder)
    for link in folder.glob("*.py"):
        if link.is_symlink():
            target = link.resolve()
            assert target.is_file() and target.parent != folder and target.parent.parent == MODELING, link


def test_every_common_file_has_two_users_or_more():
    users = {}
    for folder in FOLDERS:
        for path in folder.glob("*.py"):
            if path.is_symlink():
                users.setdefault(path.resolve(), []).append(folder.name)
    shared = [path for path in (MODELING / "common").glob("*.py") if path.name != "__init__.py"]
    assert {path.name: users.get(path.resolve(), []) for path in shared if len(users.get(path.resolve(), [])) < 2} == {}


LIBRARY_FOLDERS = ("modeling", "processing", "scripts", "model_cards")


LAB = ROOT / "scripts" / "lab"


def source_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py")
                  if not path.is_symlink() and not path.is_relative_to(LAB))


def test_pyproject_installs_every_package_folder_and_not_the_lab():
    tomllib = pytest.importorskip("tomllib")
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {
        "textrec." + ".".join(init.parent.relative_to(ROOT).parts)
        for folder in LIBRARY_FOLDERS for init in (ROOT / folder).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert set(settings["packages"]) == found
    assert not (LAB / "__init__.py").exists(), "the lab is not a package: its scripts run from a checkout"


def test_the_library_imports_nothing_of_the_lab():
    lab_modules = "|".join(sorted(path.stem for path in LAB.glob("*.py")))
    pattern = re.compile(rf"^\s*(from|import) ({lab_modules})\b|scripts\.lab", re.M)
    assert [str(path.relative_to(ROOT)) for path in source_files(*LIBRARY_FOLDERS) if pattern.search(path.read_text())] == []


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
