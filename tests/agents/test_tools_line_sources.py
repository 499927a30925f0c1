"""A core line a model's tool writes records the batch's messages it was said in, unless a rewrite
merged older lines into it (`CoreMemory.line_sources`, read by `agents.derived`)."""

from __future__ import annotations

import pytest

from mirix_py.agents.tools import OpCollector
from mirix_py.engine import Mirix
from mirix_py.records import MemoryType
from mirix_py.tools.ops import InsertOp


@pytest.fixture
def mx(tmp_path):
    with Mirix(tmp_path, embedder=None) as engine:
        yield engine


def core_tools(mx: Mirix) -> OpCollector:
    return OpCollector(store=mx.store, user_id="ada", memory_type=MemoryType.core,
                       batch_source_ids=["in_x", "msg-1"], shown_ids=["msg-1"])


def written_sources(tools: OpCollector) -> dict[str, list[str]]:
    (op,) = tools.ops
    return op.memory.line_sources if isinstance(op, InsertOp) else op.fields["line_sources"]


def test_an_appended_line_records_the_batchs_messages(mx):
    tools = core_tools(mx)
    tools.core_memory_append("human", "works as a nurse")
    assert written_sources(tools) == {"works as a nurse": ["msg-1"]}


def test_a_rewrite_that_merges_an_older_line_records_none(mx):
    mx.core_append("human", "drinks coffee", user_id="ada")
    mx.core_append("human", "works as a nurse", user_id="ada")
    tools = core_tools(mx)
    tools.core_memory_rewrite("human", "drinks green tea\nworks as a nurse")
    assert written_sources(tools) == {}
