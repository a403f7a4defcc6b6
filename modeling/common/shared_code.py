"""Code shared between the model folders, written once and loaded once.

A shared module is written once, in `modeling/common/` (or in the model folder it belongs to), and each model
folder that imports it holds a copy (`from .ctc import CTCHead`), so that the folder is a flat, self-contained
Hub repository's code as it is: `save_pretrained` copies the files a model imports, and a folder saved or
exported loads with `trust_remote_code=True` where textrec is not installed. Each copy starts with `COPY_HEADER`
naming its source; `python scripts/lab/copy_shared_code.py` writes the copies, and `tests/test_structure.py`
fails when one differs from its source (as transformers' `utils/check_copies.py` does).

Inside textrec each copy is not loaded as a module of its own: `use_shared_modules`, called by each model
folder's `__init__.py`, makes the folder's name for it the source module itself, so every class exists once.
"""

import importlib
import re
import sys
from pathlib import Path

COPY_HEADER = "# Copied from modeling/{source}/{name}.py by scripts/lab/copy_shared_code.py: edit that file, not this copy.\n"
COPY_PATTERN = re.compile(r"# Copied from modeling/(\w+)/(\w+)\.py by scripts/lab/copy_shared_code\.py")


def copy_source(path: Path) -> tuple[str, str] | None:
    """`(folder, module)` of the source a copy was made from, for a copy; None for a file of its own."""
    with open(path, encoding="utf-8") as file:
        match = COPY_PATTERN.match(file.readline())
    return (match.group(1), match.group(2)) if match else None


def use_shared_modules(package_name: str, package_path: list[str]) -> None:
    """Makes each copy in the package's folder an alias of its source module (imported on the way)."""
    modeling = package_name.rsplit(".", 1)[0]
    for path in sorted(Path(package_path[0]).glob("*.py")):
        source = copy_source(path)
        if source is not None:
            module = importlib.import_module(f"{modeling}.{source[0]}.{source[1]}")
            sys.modules[f"{package_name}.{path.stem}"] = module
            setattr(sys.modules[package_name], path.stem, module)
