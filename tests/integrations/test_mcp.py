"""The MCP server, driven by the official SDK's own client: over stdio (a real `mirix mcp` process)
and over streamable HTTP (mounted in the REST app on a live loopback server, with API keys)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOOLS = {"add_memory", "search_memory", "chat_with_memory", "list_memories", "delete_memory", "get_core_memory"}


def _payload(result):
    """A tool result's structured content, else its JSON text."""
    assert not result.is_error, result
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def _error_text(result) -> str:
    assert result.is_error, result
    return " ".join(getattr(c, "text", "") for c in result.content)


def _server_params(data_dir: Path, *users: str) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "MIRIX_TEST_PG_URL") if k in os.environ}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
               MIRIX_DATA_DIR=str(data_dir), PYTHONUNBUFFERED="1")
    args = ["-m", "mirix_py.cli", "mcp", "--transport", "stdio"]
    for u in users:
        args += ["--user", u]
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(REPO))


def test_stdio_server_with_the_sdk_client(tmp_path):
    async def main():
        async with Client(_server_params(tmp_path / "data", "ada"), read_timeout_seconds=120) as client:
            tools = await client.list_tools()
            assert TOOLS <= {t.name for t in tools.tools}
            search_tool = next(t for t in tools.tools if t.name == "search_memory")
            assert "query" in search_tool.input_schema["properties"]

            added = _payload(await client.call_tool("add_memory", {
                "content": "My brother Tom is a pilot for a regional airline.",
                "occurred_at": "2024-05-01T10:00:00+00:00", "source_id": "chat-1"}))
            assert added["status"] == "processed" and added["changes"]
            _payload(await client.call_tool("add_memory", {"content": "I went sailing on Lake Geneva last weekend."}))

            hits = _payload(await client.call_tool("search_memory", {"query": "Tom pilot", "limit": 5}))
            assert hits and any("Tom" in h["text"] for h in hits)
            assert any("chat-1" in h["source_ids"] for h in hits)

            listed = _payload(await client.call_tool("list_memories", {"memory_types": ["episodic"]}))
            assert len(listed) == 2 and {m["memory_type"] for m in listed} == {"episodic"}

            answer = _payload(await client.call_tool("chat_with_memory", {"message": "What does Tom do?",
                                                                           "remember": False}))
            assert "Tom" in answer["answer"] and answer["memory_ids"] and answer["mode"] == "offline"

            core = _payload(await client.call_tool("get_core_memory", {}))
            assert set(core) == {"persona", "human"}

            victim = next(m["id"] for m in listed if "sailing" in m["text"])
            deleted = _payload(await client.call_tool("delete_memory", {"memory_id": victim}))
            assert deleted["deleted"] == victim
            left = _payload(await client.call_tool("list_memories", {}))
            assert not {victim, *deleted["taken_back"]} & {m["id"] for m in left}  # the turn, and what it alone said

            # the process acts for ada only; bad input is a tool error, not a crash
            assert "not allowed" in _error_text(await client.call_tool("search_memory", {"query": "x",
                                                                                        "user_id": "bob"}))
            assert "no memory" in _error_text(await client.call_tool("delete_memory", {"memory_id": victim}))
            assert "empty" in _error_text(await client.call_tool("add_memory", {"content": "   "}))
            assert "limit" in _error_text(await client.call_tool("search_memory", {"query": "x", "limit": 0}))
            # still serving after the errors
            assert _payload(await client.call_tool("search_memory", {"query": "Tom"}))

            # a long document comes back as the lines about the query, not all of it
            pages = [f"Page {i}. Minutes of the garden committee: hedges, compost and the rota." for i in range(60)]
            pages[47] = "Page 47. The boiler service code is kept in the red binder in the cellar."
            _payload(await client.call_tool("add_memory", {"content": "# House manual\n\n" + "\n".join(pages)}))
            hits = _payload(await client.call_tool("search_memory", {"query": "boiler service code", "limit": 3}))
            text = next(h["text"] for h in hits if h["memory_type"] == "resource")
            assert "red binder in the cellar" in text and "…" in text and len(text.split()) <= 130

    anyio.run(main)


def test_http_transport_uses_api_keys(tmp_path, embedder):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from mirix_py.engine import Mirix
    from mirix_py.server import KeyStore, create_app
    from mirix_py.server.thread import ServerThread

    mx = Mirix(tmp_path / "data", embedder=embedder)
    keys = KeyStore(mx.engine)
    ada_key = keys.create(["ada"]).key
    mx.add("Bob's private note: the boat is called Wanda.", user_id="bob")
    app = create_app(mx, keys=keys, mcp=True)

    def connect(url, key):
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60)))

    def post_tools_list(url, key):
        return httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"Accept": "application/json, text/event-stream",
                                    **({"Authorization": f"Bearer {key}"} if key else {})})

    with ServerThread(app) as server:
        url = server.url + "/mcp"  # the documented URL, served as it is (no redirect to /mcp/)

        async def main():
            async with connect(url, ada_key) as client:
                assert TOOLS <= {t.name for t in (await client.list_tools()).tools}
                added = _payload(await client.call_tool("add_memory", {"content": "My cat Miso likes boxes."}))
                assert added["status"] == "processed"
                hits = _payload(await client.call_tool("search_memory", {"query": "Miso"}))
                assert hits and "Miso" in hits[0]["text"]
                denied = await client.call_tool("search_memory", {"query": "boat", "user_id": "bob"})
                assert "not allowed" in _error_text(denied)
            async with connect(url + "/", ada_key) as client:  # /mcp/ as well
                assert TOOLS <= {t.name for t in (await client.list_tools()).tools}

        anyio.run(main)
        for path in (url, url + "/"):
            # no key or a wrong key: refused before any tool runs, with a plain Bearer challenge
            for key in (None, "mxk_0.bad"):
                r = post_tools_list(path, key)
                assert r.status_code == 401, (path, r.status_code)
                assert r.headers["www-authenticate"].lower().startswith("bearer"), path
            keyed = post_tools_list(path, ada_key)
            assert keyed.status_code not in (307, 401), (path, keyed.status_code)
    assert {m.user_id for m in mx.list(user_id="ada")} == {"ada"}
    assert all("Wanda" not in h.text for h in mx.search("Wanda", user_id="ada"))
    mx.close()


def test_standalone_http_process_with_a_key(tmp_path):
    """`mirix mcp --transport http`: its own process on loopback, keys from the same database."""
    import signal
    import socket
    import subprocess
    import time

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    params = _server_params(tmp_path / "data")
    env = {**os.environ, **params.env}
    key = subprocess.run([sys.executable, "-m", "mirix_py.cli", "keys", "create", "--user", "ada"], env=env,
                         capture_output=True, text=True, check=True, cwd=REPO).stdout.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "mirix_py.cli", "mcp", "--transport", "http", "--port", str(port)],
                            env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                httpx2.get(url, timeout=2)
                break
            except httpx2.HTTPError:
                assert time.monotonic() < deadline, "mirix mcp did not come up"
                time.sleep(0.3)

        async def main():
            client_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
            async with Client(streamable_http_client(url, http_client=client_http)) as client:
                added = _payload(await client.call_tool("add_memory", {"content": "My dog Rex loves the beach."}))
                assert added["status"] == "processed"
                hits = _payload(await client.call_tool("search_memory", {"query": "Rex"}))
                assert hits and "Rex" in hits[0]["text"]

        anyio.run(main)
        refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                              headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


@pytest.mark.parametrize("tool, args, says", [
    ("list_memories", {"offset": 10**30}, "offset"),
    ("list_memories", {"offset": 2_000_000}, "less than or equal to 1000000"),
    ("search_memory", {"query": "x" * 2001}, "at most 2000 characters"),
    ("search_memory", {"query": "x", "limit": 101}, "less than or equal to 100"),
    ("add_memory", {"content": "Ada rows on Sundays.", "source_id": "s" * 300}, "at most 256 characters"),
    ("chat_with_memory", {"message": "y" * 20_001}, "at most 20000 characters"),
    ("delete_memory", {"memory_id": ""}, "at least 1 character"),
])
def test_the_embedded_server_takes_what_the_rest_server_takes(tmp_path, embedder, tool, args, says):
    """One bound per argument (`boundary.sizes`), in the tools' schemas: a call the REST-backed server
    refuses is refused alike on the embedded engine, with the argument named, and writes nothing."""
    from mirix_py import Mirix
    from mirix_py.integrations.mcp_server import build_mcp_server
    from mirix_py.records import InputStatus

    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        server = build_mcp_server(mx, users=["ada"])

        async def run():
            async with Client(server) as client:
                return _error_text(await client.call_tool(tool, args))

        assert says in anyio.run(run)
        assert mx.store.count() == {} and mx.inputs.by_status(InputStatus.processed) == []


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
