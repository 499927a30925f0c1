"""A model's tools cannot set when a memory expires: that is the caller's (an input's or one memory's)."""

from __future__ import annotations

import pytest

from mirix_py.agents.tools import OpCollector, ToolError
from mirix_py.engine import Mirix
from mirix_py.records import MemoryType


def test_a_models_insert_or_update_may_not_set_an_expiry(tmp_path):
    with Mirix(tmp_path, embedder=None) as mx:
        mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        (episode,) = mx.list(user_id="ada", memory_types=["episodic"])
        tools = OpCollector(store=mx.store, user_id="ada", memory_type=MemoryType.episodic,
                            batch_source_ids=["in_x"])
        with pytest.raises(ToolError, match="expires_at"):
            tools.update_memory(episode.id, {"expires_at": "2030-01-01T00:00:00+00:00"})
        with pytest.raises(ToolError, match="expires_at"):
            tools.insert(summary="Ada has a cat.", expires_at="2030-01-01T00:00:00+00:00")
        assert tools.ops == []


def test_a_models_value_no_backend_can_store_is_refused_at_the_call(tmp_path):
    """A NUL or a lone surrogate in a tool call is the model's error to correct now, not a batch
    that fails when it is written."""
    with Mirix(tmp_path, embedder=None) as mx:
        mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        (episode,) = mx.list(user_id="ada", memory_types=["episodic"])
        tools = OpCollector(store=mx.store, user_id="ada", memory_type=MemoryType.episodic,
                            batch_source_ids=["in_x"])
        with pytest.raises(ToolError, match="summary holds a NUL"):
            tools.insert(summary="Ada adopted a cat\x00 named Miso.")
        with pytest.raises(ToolError, match=r"tags\[0\] is not valid Unicode"):
            tools.update_memory(episode.id, {"tags": ["cat\ud800"]})
        core = OpCollector(store=mx.store, user_id="ada", memory_type=MemoryType.core, batch_source_ids=["in_x"])
        with pytest.raises(ToolError, match="text holds a NUL"):
            core.core_memory_append("human", "Has a cat\x00 named Miso.")
        assert tools.ops == [] and core.ops == []
