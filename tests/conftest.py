"""Test-wide settings: offline, and generated datasets cached in a per-session folder."""

import os
import tempfile

import pytest


def pytest_configure(config):
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ.setdefault("TEXTREC_CACHE", tempfile.mkdtemp(prefix="textrec-test-cache-"))


@pytest.fixture(scope="session")
def sample_line_images():
    """Three rendered print lines as PIL images."""
    from textrec.processing.data import make_synthetic_lines

    return list(make_synthetic_lines(3, seed=123, augment=False)["image"])
