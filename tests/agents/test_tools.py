"""What a model's tool call may not write: an expiry (the caller's, an input's or one memory's), and a
string no backend stores alike (`text.storable`)."""

from __future__ import annotations

import pytest

from mirix_py.agents.tools import OpCollector, ToolError
from mirix_py.engine import Mirix
from mirix_py.records import MemoryType


@pytest.fixture
def episode_tools(tmp_path):
    """(engine, one stored episode, the episodic manager's tools for a batch)."""
    with Mirix(tmp_path, embedder=None) as mx:
        mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        (episode,) = mx.list(user_id="ada", memory_types=["episodic"])
        yield mx, episode, OpCollector(store=mx.store, user_id="ada", memory_type=MemoryType.episodic,
                                       batch_source_ids=["in_x"])


def test_a_models_insert_or_update_may_not_set_an_expiry(episode_tools):
    _, episode, tools = episode_tools
    with pytest.raises(ToolError, match="expires_at"):
        tools.update_memory(episode.id, {"expires_at": "2030-01-01T00:00:00+00:00"})
    with pytest.raises(ToolError, match="expires_at"):
        tools.insert(summary="Ada has a cat.", expires_at="2030-01-01T00:00:00+00:00")
    assert tools.ops == []


def test_a_models_value_no_backend_can_store_is_refused_at_the_call(episode_tools):
    """A NUL or a lone surrogate in a tool call is the model's error to correct now, not a batch
    that fails when it is written."""
    mx, episode, tools = episode_tools
    with pytest.raises(ToolError, match="summary holds a NUL"):
        tools.insert(summary="Ada adopted a cat\x00 named Miso.")
    with pytest.raises(ToolError, match=r"tags\[0\] is not valid Unicode"):
        tools.update_memory(episode.id, {"tags": ["cat\ud800"]})
    core = OpCollector(store=mx.store, user_id="ada", memory_type=MemoryType.core, batch_source_ids=["in_x"])
    with pytest.raises(ToolError, match="text holds a NUL"):
        core.core_memory_append("human", "Has a cat\x00 named Miso.")
    assert tools.ops == [] and core.ops == []
