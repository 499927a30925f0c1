"""The model client for the real-model tier: the local model server `scripts/test.sh` starts in each
mode (`scripts/local_model.sh`); the test is skipped when that server is not running."""

from __future__ import annotations

import os

import pytest

from mirix_py.llm import build_model_client
from mirix_py.settings import Settings

MODES = {"functions": "MIRIX_TEST_LLM_FUNCTIONS_URL", "template": "MIRIX_TEST_LLM_TEMPLATE_URL"}


def local_model_client(mode: str, monkeypatch: pytest.MonkeyPatch):
    url = os.environ.get(MODES[mode])
    if not url:
        pytest.skip(f"{MODES[mode]} not set: run through scripts/test.sh (starts the local model servers)")
    monkeypatch.setenv("MIRIX_LLM_FUNCTION_CALLING", "1" if mode == "functions" else "0")
    settings = Settings(llm_provider="openai", llm_model=os.environ.get("MIRIX_TEST_LLM_MODEL", "local"),
                        llm_base_url=url)
    return build_model_client(settings)
