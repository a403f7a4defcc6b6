"""The installed textrec as a user gets it: every module imports, every command answers `--help`, and every
package that its code imports is a declared requirement (so that a dependency left out of pyproject.toml
fails here even on a machine where it was installed by hand). `.ci/run` runs this against a wheel installed
into a fresh virtual environment."""

import ast
import importlib
import importlib.metadata
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = ("textrec.modeling", "textrec.processing", "textrec.scripts", "textrec.model_cards")
COMMANDS = {"textrec-train", "textrec-evaluate", "textrec-recognize", "textrec-export"}
"""Commands README names; every command the distribution installs is run with `--help`."""
IMPORT_NAMES = {
    "PIL": "pillow",
    "sklearn": "scikit-learn",
    "fontTools": "fonttools",
    "huggingface_hub": "huggingface-hub",
    "yaml": "pyyaml",
    "pathops": "skia-pathops",
}
"""Import names that differ from their distribution's name."""


def installed_modules() -> list[str]:
    names = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        names.extend(info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."))
    return names


def console_commands() -> list[str]:
    entry_points = importlib.metadata.entry_points(group="console_scripts")
    return sorted(entry.name for entry in entry_points if entry.dist is not None and entry.dist.name == "textrec")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_requirements(extra: str | None = None) -> set[str]:
    """The distributions textrec requires outside any extra, and those of `extra`."""
    requirements = importlib.metadata.requires("textrec") or []
    return {normalized(re.split(r"[<>=!~\[;( ]", requirement, maxsplit=1)[0]) for requirement in requirements
            if "extra ==" not in requirement or extra and f'extra == "{extra}"' in requirement}


PEER_MODULES = ("benchmark_real_data.py",)
"""Benchmarks that read with other OCR engines, declared in the `peers` extra and imported only where installed."""
DEMO_MODULES = ("demo.py",)
"""The demo command, whose Gradio is the `demo` extra, imported only when the app is built."""
ONNX_MODULES = ("onnx_export.py", "textrec_onnx.py")
"""The ONNX export and its reader, whose onnx and onnxruntime are declared in the `onnx` extra."""
FONTS_MODULES = ("fonts.py",)
"""The data engine's fonts, whose outline operations (skia-pathops) are the `fonts` extra, imported only where a face
gets a long s."""
PDF_MODULES = ("document_pages.py", "searchable_pdf.py")
"""Document files' pages, whose PDFs are rendered by pypdfium2, and searchable PDFs, written by it: the `pdf` extra
(imported only where a PDF is read or written)."""


def imported_distributions(path: Path) -> set[str]:
    """The distributions that the absolute imports of the file at `path` need (standard library and textrec
    left out)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {normalized(IMPORT_NAMES.get(name, name)) for name in names
            if name not in sys.stdlib_module_names and name != "textrec"}


def test_textrec_is_installed_as_a_distribution():
    assert importlib.metadata.version("textrec")


@pytest.mark.parametrize("module", installed_modules())
def test_every_module_imports(module):
    importlib.import_module(module)


def test_every_command_is_installed():
    assert set(console_commands()) >= COMMANDS


@pytest.mark.parametrize("command", console_commands())
def test_every_command_answers_help(command):
    executable = shutil.which(command) or str(Path(sys.executable).parent / command)
    result = subprocess.run([executable, "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:"), result.stdout


def test_every_imported_package_is_a_declared_requirement():
    declared, with_peers, with_demo = declared_requirements(), declared_requirements("peers"), declared_requirements("demo")
    with_onnx, with_fonts = declared_requirements("onnx"), declared_requirements("fonts")
    with_pdf = declared_requirements("pdf")
    missing = {}
    for package_name in PACKAGES:
        root = Path(importlib.import_module(package_name).__file__).parent
        for path in sorted(root.rglob("*.py")):
            if "lab" not in path.relative_to(root).parts:
                allowed = (with_peers if path.name in PEER_MODULES else with_demo if path.name in DEMO_MODULES
                           else with_onnx if path.name in ONNX_MODULES
                           else with_fonts if path.name in FONTS_MODULES
                           else with_pdf if path.name in PDF_MODULES else declared)
                for distribution in imported_distributions(path) - allowed:
                    missing.setdefault(distribution, str(path))
    # The lab runs from a checkout beside the installed library (with the `peers` extra); its scripts import
    # each other as siblings.
    lab = Path(__file__).resolve().parent.parent / "scripts" / "lab"
    siblings = {normalized(path.stem) for path in lab.glob("*.py")}
    for path in sorted(lab.glob("*.py")):
        for distribution in imported_distributions(path) - with_peers - siblings:
            missing.setdefault(distribution, str(path))
    assert not missing, f"imported but not declared in pyproject.toml's dependencies: {missing}"


def test_the_package_data_is_installed():
    from importlib import resources

    assert (resources.files("textrec.model_cards") / "text_recognition.md").is_file()
    assert (resources.files("textrec.processing.data") / "words.txt").is_file()
    assert (resources.files("textrec.processing") / "crohme_dictionary.txt").is_file()
    metrics = resources.files("textrec.processing.metrics")
    assert all((metrics / f"{name}.py").is_file() for name in ("cer", "wer", "sequence_accuracy", "exprate"))


def test_every_file_of_the_source_folders_is_installed():
    """Each file under the checkout's package folders (code, copies of the shared modeling files, data,
    model cards, released checkpoints) is in the installed package, as a real file; the repository's shell
    scripts and the lab (`scripts/lab/`: benchmarks, studies, the release command, their results) are not."""
    root = Path(__file__).resolve().parent.parent
    missing = []
    for package_name in PACKAGES:
        source = root / package_name.removeprefix("textrec.")
        installed = Path(importlib.import_module(package_name).__file__).parent
        for path in sorted(source.rglob("*")):
            if path.is_relative_to(root / "scripts" / "lab") or path.is_relative_to(root / "scripts" / "benchmarks"):
                continue
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".sh"):
                if not (installed / path.relative_to(source)).is_file():
                    missing.append(str(path.relative_to(root)))
    assert not missing, f"files of the checkout missing from the installed package: {missing}"


def test_the_package_holds_the_library_only():
    """The installed modules are those of the checkout's package folders, and none of the lab's."""
    root = Path(__file__).resolve().parent.parent
    expected = set()
    for package_name in PACKAGES:
        source = root / package_name.removeprefix("textrec.")
        for path in source.rglob("*.py"):
            relative = path.relative_to(source)
            if (source / relative.parts[0]).name in ("lab", "benchmarks") or "__pycache__" in relative.parts:
                continue
            if not all((source / Path(*relative.parts[:depth]) / "__init__.py").exists() for depth in range(len(relative.parts))):
                continue
            parts = relative.with_suffix("").parts
            expected.add(".".join((package_name, *parts)).removesuffix(".__init__"))
    installed = set(installed_modules())
    lab_modules = {path.stem for path in (root / "scripts" / "lab").glob("*.py")}
    assert installed == expected, f"installed but not in the checkout: {installed - expected}; missing: {expected - installed}"
    assert not {name.rsplit(".", 1)[-1] for name in installed} & (lab_modules - {"__init__"}), "a lab module is installed"
