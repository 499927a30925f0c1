"""The MCP tool `delete_memory` with `erase`: the model can honour "forget that I said that"."""

from __future__ import annotations

import json

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402


def _payload(result):
    assert not result.is_error, result
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def test_delete_memory_with_erase_leaves_no_word_in_history(tmp_path, embedder):
    from mirix_py import Mirix
    from mirix_py.integrations.mcp_server import build_mcp_server

    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        server = build_mcp_server(mx, users=["ada"])
        added = mx.add("I live in Zorblatt street, in Quixhaven.", user_id="ada")
        turn = next(c.memory_id for c in added.changes if c.memory_type.value == "episodic")

        async def run():
            async with Client(server) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                erase = tools["delete_memory"].input_schema["properties"]["erase"]
                assert erase["type"] == "boolean" and "forget" in erase["description"]
                return _payload(await client.call_tool("delete_memory", {"memory_id": turn, "erase": True}))

        deleted = anyio.run(run)
        assert deleted["deleted"] == turn and deleted["taken_back"]
        events = mx.history(turn, user_id="ada")
        assert [e.erased for e in events] == [True, True] and "Quixhaven" not in str([e.before for e in events])
        assert mx.inputs.get(added.input_ids[0]).messages == []
