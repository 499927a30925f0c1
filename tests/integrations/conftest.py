"""What the adapters' long-message tests share: an engine that takes short inputs."""

from __future__ import annotations

import pytest
from long_messages import LIMIT

from mirix_py.engine import Mirix


@pytest.fixture
def limited_mx(tmp_path, embedder, layout, monkeypatch):
    """An engine of each deployment layout whose inputs are at most LIMIT characters."""
    monkeypatch.setenv("MIRIX_MAX_INPUT_CHARS", str(LIMIT))
    engine = Mirix(tmp_path / "data", embedder=embedder, **layout)
    yield engine
    engine.close()
