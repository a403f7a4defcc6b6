"""The sharing between model folders made visible: each architecture folder links exactly the shared files its
code imports (directly or through another shared file), no more and no fewer, and every link points at a real
file of another folder. `save_pretrained` copies what is imported; a stale or missing link would break a saved
folder or hide dead code."""

import ast
from pathlib import Path

import pytest

MODELING = Path(__file__).resolve().parent.parent / "modeling"
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


def test_every_common_file_has_a_user():
    linked = {path.resolve() for folder in FOLDERS for path in folder.glob("*.py") if path.is_symlink()}
    unused = [path.name for path in (MODELING / "common").glob("*.py") if path.name != "__init__.py" and path.resolve() not in linked]
    assert not unused
