"""Writes each model folder's copies of the shared modeling files it imports (or checks them with --check).

    python scripts/lab/copy_shared_code.py           # after editing a shared file, or importing a new one
    python scripts/lab/copy_shared_code.py --check   # what tests/test_structure.py runs

A model folder's own files import shared code as siblings (`from .ctc import CTCHead`); a sibling that is not
the folder's own file is a copy of the file of that name in `modeling/common/`, or in another model folder that
owns it, written here with a header naming its source (`textrec.modeling.common.shared_code`). The copies a
folder needs follow from its own files' imports, and from the imports of what they import.
"""

import argparse
import ast
import importlib.util
from pathlib import Path

MODELING = Path(__file__).resolve().parents[2] / "modeling"

# The library's module read as a file: importing textrec.modeling would need the copies this script writes.
_spec = importlib.util.spec_from_file_location("shared_code", MODELING / "common" / "shared_code.py")
shared_code = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shared_code)
COPY_HEADER, copy_source = shared_code.COPY_HEADER, shared_code.copy_source


def relative_imports(path: Path) -> set[str]:
    """Module names of `from .name import ...` in the file at `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}


def is_copy(path: Path) -> bool:
    """A copy of a shared file, or a symbolic link to one (how shared files were once carried)."""
    return path.is_symlink() or copy_source(path) is not None


def model_folders() -> list[Path]:
    return sorted(path for path in MODELING.iterdir() if (path / "__init__.py").exists() and path.name != "common")


def owned_files() -> dict[str, Path]:
    """Each module name that a folder owns (a file that is not a copy, `__init__` aside) -> its file."""
    owners = {}
    for folder in [MODELING / "common", *model_folders()]:
        for path in folder.glob("*.py"):
            if path.stem not in ("__init__", "shared_code") and not is_copy(path):
                if path.stem in owners:
                    raise SystemExit(f"{path} and {owners[path.stem]} share a name: a copy could not tell them apart")
                owners[path.stem] = path
    return owners


def expected_copies() -> dict[Path, str]:
    """Every copy the model folders need -> the text it must hold."""
    owners, copies = owned_files(), {}
    for folder in model_folders():
        own = {path.stem for path in folder.glob("*.py") if not is_copy(path)}
        queue = [name for stem in own for name in relative_imports(folder / f"{stem}.py")]
        needed = set()
        while queue:
            name = queue.pop()
            if name in own or name in needed:
                continue
            if name not in owners:
                raise SystemExit(f"{folder.name} imports .{name}, which no folder of modeling/ has")
            needed.add(name)
            queue.extend(relative_imports(owners[name]))
        for name in sorted(needed):
            source = owners[name]
            header = COPY_HEADER.format(source=source.parent.name, name=name)
            copies[folder / f"{name}.py"] = header + source.read_text(encoding="utf-8")
    return copies


def stale_files() -> list[Path]:
    """Copies no folder needs any more, and symbolic links (shared files were once linked, not copied)."""
    expected = expected_copies()
    return [path for folder in model_folders() for path in sorted(folder.glob("*.py"))
            if (path.is_symlink() or copy_source(path) is not None) and path not in expected]


def differences() -> list[str]:
    """What `--check` reports: copies missing, differing from their source, or stale."""
    problems = [f"{path.relative_to(MODELING.parent)} differs from its source" if path.exists() and not path.is_symlink()
                else f"{path.relative_to(MODELING.parent)} is missing"
                for path, text in expected_copies().items()
                if path.is_symlink() or not path.exists() or path.read_text(encoding="utf-8") != text]
    return problems + [f"{path.relative_to(MODELING.parent)} is stale" for path in stale_files()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="Report what differs and exit 1, writing nothing.")
    args = parser.parse_args(argv)
    if args.check:
        problems = differences()
        print("\n".join(problems) or "every copy matches its source")
        raise SystemExit(1 if problems else 0)
    for path in stale_files():
        path.unlink()
    for path, text in expected_copies().items():
        if path.is_symlink():
            path.unlink()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(MODELING.parent)}")


if __name__ == "__main__":
    main()
