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


@pytest.fixture
def thumbnails_engine(tmp_path, tesseract):
    """An engine whose screenshots keep their thumbnails, OCR in the calling thread, no embedder."""
    from mirix_py.engine import Mirix

    engine = Mirix(tmp_path / "data", embedder=None)
    engine.configure_screenshots(workers=0, keep_thumbnails=True)
    yield engine
    engine.close()
