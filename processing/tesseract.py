"""Tesseract 5, the peer that textrec's recognizers are compared with: one line per image (`--psm 7`)."""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .inference import RecognitionResult
from .metrics import evaluate_texts

PAGE_SEPARATOR = "\f"
"""Tesseract ends every page but the last of a list file with a form feed."""


def check_tesseract(lang: str = "eng") -> str:
    """The `tesseract --version` line; raises SystemExit when tesseract or its language is missing."""
    if shutil.which("tesseract") is None:
        raise SystemExit("tesseract is not installed (Debian: apt-get install tesseract-ocr tesseract-ocr-eng).")
    languages = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=True).stdout
    if lang not in languages.split()[1:]:
        raise SystemExit(f"tesseract has no language {lang!r} (installed: {', '.join(languages.split()[4:])}).")
    return subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def tesseract_recognize(paths: list[Path | str], lang: str = "eng") -> RecognitionResult:
    """Reads the images with one `tesseract LIST stdout --psm 7 -l LANG` process over a list file of their
    paths, on one thread (`OMP_THREAD_LIMIT=1`); the time is the wall clock of that process."""
    if not paths:
        return RecognitionResult(texts=[], seconds=0.0)
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    with tempfile.TemporaryDirectory() as scratch:
        list_file = Path(scratch) / "images.txt"
        list_file.write_text("".join(f"{Path(path).resolve()}\n" for path in paths))
        command = ["tesseract", str(list_file), "stdout", "--psm", "7", "-l", lang]
        start = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        seconds = time.perf_counter() - start
    if completed.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {completed.stderr.strip()}")
    pages = completed.stdout.split(PAGE_SEPARATOR)
    if len(pages) != len(paths):
        raise RuntimeError(f"tesseract returned {len(pages)} pages for {len(paths)} images.")
    return RecognitionResult(texts=[page.strip("\n") for page in pages], seconds=seconds)


def read_with_tesseract(images: list, references: list[str], normalization: str = "none") -> dict:
    """Tesseract's scores and speed on the same images (written to PNG files first, as it reads files)."""
    version = check_tesseract()
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        for index, image in enumerate(images):
            paths.append(Path(scratch) / f"{index:05d}.png")
            image.save(paths[-1])
        result = tesseract_recognize(paths)
    return {
        **evaluate_texts(result.texts, references, normalization),
        "lines_per_second": result.lines_per_second,
        "version": version,
    }
