"""Package discovery for the `textrec` namespace: each top-level library folder installs as `textrec.<folder>`
with every sub-folder holding an `__init__.py`, so a new model folder reaches the wheel without a list to keep.
`scripts/lab/` (benchmarks, studies, the release command) has no `__init__.py`: it is not installed and runs from
a checkout. Everything else about the package is in `pyproject.toml`."""

from setuptools import find_packages, setup

LIBRARY_FOLDERS = ("modeling", "processing", "scripts", "model_cards")


def library_packages() -> list[str]:
    """`["textrec.modeling", "textrec.modeling.crnn", ...]`: the library folders and their packages."""
    return [name for folder in LIBRARY_FOLDERS
            for name in (f"textrec.{folder}", *(f"textrec.{folder}.{package}" for package in find_packages(folder)))]


if __name__ == "__main__":
    setup(packages=library_packages(), package_dir={f"textrec.{folder}": folder for folder in LIBRARY_FOLDERS})
