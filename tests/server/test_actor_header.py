"""Who an edit sent over REST is recorded under (`X-Mirix-Actor`): `rest` by default, `mcp` for the
stdio MCP bridge to a running server (`RemoteMemory`), `cli`; nothing else may be claimed."""

from __future__ import annotations

from mirix_py.client import MirixClient
from mirix_py.integrations.mcp_remote import RemoteMemory


def _actors(mx, memory_id):
    return [e.actor for e in mx.history(memory_id, user_id="alice")]


def test_edits_carry_the_actor_their_client_names(live_sqlite):
    mx = live_sqlite.mx
    mx.add("My brother Tom is a pilot for a regional airline.", user_id="alice")
    tom = next(m for m in mx.list(user_id="alice", memory_types=["semantic"]) if m.name == "Tom")
    c = live_sqlite.client(live_sqlite.alice)
    path = f"/v1/users/alice/memories/{tom.id}"

    assert c.patch(path, json={"fields": {"summary": "Tom flies airliners"}}).status_code == 200
    assert c.patch(path, json={"fields": {"summary": "Tom flies jets"}},
                   headers={"X-Mirix-Actor": "cli"}).status_code == 200
    assert _actors(mx, tom.id)[-2:] == ["rest", "cli"]
    # an actor that means something to the engine (an undo's) is not a client's to claim
    refused = c.patch(path, json={"fields": {"summary": "Tom flies gliders"}}, headers={"X-Mirix-Actor": "undo:in_1"})
    assert refused.status_code == 422 and mx.get(tom.id, user_id="alice").summary == "Tom flies jets"

    with MirixClient(live_sqlite.url, api_key=live_sqlite.alice) as client:
        client.core_append("human", "Likes gliding.", user_id="alice", actor="cli")
        RemoteMemory(client).delete(tom.id, user_id="alice")  # what `mirix mcp` does with a server running
    assert _actors(mx, tom.id)[-1] == "mcp"
    core = mx.core_memory(user_id="alice")["human"]
    assert _actors(mx, core.id)[-1] == "cli"
