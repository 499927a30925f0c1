"""Fixtures for the synthetic desktop."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def synth():
    from mirix_synth.screens import ScreenSynth

    return ScreenSynth(seed=7)
