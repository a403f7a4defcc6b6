"""Test-wide settings: offline, generated datasets cached in a per-session folder, and the lab importable.

The lab (`scripts/lab/`: benchmarks, studies, the release command) is not installed with textrec; its
scripts run from a checkout (`python scripts/lab/NAME.py`) and import each other as siblings, so the tests
import them with that folder on the path, as transformers' tests import its `utils/` scripts.
"""

import os
import sys
import tempfile
from pathlib import Path

import pytest

LAB_DIR = Path(__file__).resolve().parent.parent / "scripts" / "lab"
sys.path.insert(0, str(LAB_DIR))


def pytest_configure(config):
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ.setdefault("TEXTREC_CACHE", tempfile.mkdtemp(prefix="textrec-test-cache-"))
    os.environ.setdefault("TEXTREC_HELP_CACHE", tempfile.mkdtemp(prefix="textrec-test-help-"))


@pytest.fixture(scope="session")
def sample_line_images():
    """Three rendered print lines as PIL images."""
    from textrec.processing.data import make_synthetic_lines

    return list(make_synthetic_lines(3, seed=123, augment=False)["image"])
