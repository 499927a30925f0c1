"""Fixtures for screenshot ingestion: synthetic screens, written sessions, Tesseract."""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = os.environ.get("CI") == "true"


@pytest.fixture(scope="session")
def tesseract():
    """Tesseract must be installed (scripts/setup.sh installs tesseract-ocr); skip outside CI."""
    from mirix_py.ingest.ocr import check_tesseract

    if shutil.which("tesseract") is None:
        if IN_CI:
            pytest.fail("tesseract is not installed in CI: scripts/setup.sh must install tesseract-ocr")
        pytest.skip("tesseract not installed (apt-get install tesseract-ocr)")
    return check_tesseract()


@pytest.fixture(scope="session")
def synth():
    from mirix_synth.screens import ScreenSynth

    return ScreenSynth(seed=7)

