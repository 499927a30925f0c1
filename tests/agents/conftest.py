"""Fixtures the agents' tests share: engines driven by a scripted model (autogen's model-client
interface), each in a data dir of its own, closed after the test."""

from __future__ import annotations

import pytest

from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient
from mirix_py.settings import Settings


@pytest.fixture
def scripted_mx(tmp_path, embedder):
    """`make(script, timeout_s=, structured=, **client_kwargs)` -> (engine, its scripted client): a test
    may open several engines (a fresh data dir each), and every one is closed when it ends."""
    engines = []

    def make(script, *, timeout_s: float = 120.0, structured: str = "auto", **client_kwargs):
        client = ScriptedChatCompletionClient(script, **client_kwargs)
        settings = Settings(data_dir=tmp_path / f"d{len(engines)}", llm_timeout_s=timeout_s,
                            llm_structured_output=structured)
        mx = Mirix(settings=settings, embedder=embedder, model_client=client)
        engines.append(mx)
        return mx, client

    yield make
    for mx in engines:
        mx.close()
