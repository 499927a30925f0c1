"""One process per data dir, with real processes: `mirix serve` holds the embedded store's writer
lock, a second server or a worker is refused naming it, reading works beside it, CLI writes and
`mirix mcp` (stdio) send their calls to the server (which then finds the memory by embedding, and
records the CLI or MCP as the actor), and after a SIGKILL of the server a new writer starts at once."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from mirix_py.store.discovery import SERVER_FILE, read_server_info, running_server  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _env(data: Path) -> dict[str, str]:
    env = {**os.environ, "MIRIX_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}
    for k in ("MIRIX_DATABASE_URL", "MIRIX_CHROMA_URL", "MIRIX_LLM_PROVIDER", "MIRIX_LLM_MODEL",
              "MIRIX_VECTOR_STORE"):
        env.pop(k, None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mirix(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mirix_py.cli", *args], env=env, capture_output=True, text=True,
                          cwd=REPO, timeout=180)


def _serve(env: dict[str, str], data: Path) -> subprocess.Popen:
    """`mirix serve`, returned once its server.json names it and it answers that file's key."""
    proc = subprocess.Popen([sys.executable, "-m", "mirix_py.cli", "serve", "--port", str(_free_port())], env=env,
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        info = running_server(data, timeout=2)
        if info is not None and info.pid == proc.pid:
            return proc
        assert time.monotonic() < deadline, "mirix serve did not come up"
        time.sleep(0.2)


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
    proc.wait(timeout=60)


def _stdio(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "mirix_py.cli", "mcp", "--user", "ada"],
                                 env=env, cwd=str(REPO))


def _payload(result):
    assert not result.is_error, result
    data = result.structured_content
    return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data


def _history(url: str, key: str, memory_id: str) -> list[dict]:
    r = httpx.get(f"{url}/v1/users/ada/memories/{memory_id}/history", headers={"Authorization": f"Bearer {key}"},
                  timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def test_one_writer_per_data_dir(tmp_path):
    data = tmp_path / "data"
    env = _env(data)
    created = _mirix(env, "keys", "create", "--user", "ada")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    first = _serve(env, data)
    try:
        info = read_server_info(data)
        assert info is not None and info.pid == first.pid and info.process == "mirix serve"
        assert (data / SERVER_FILE).stat().st_mode & 0o077 == 0  # the run's key: owner only

        # a second server, and a worker, are refused with who holds the store and what to do
        second = _mirix(env, "serve", "--port", str(_free_port()))
        assert second.returncode == 2
        message = " ".join(second.stderr.split())
        assert f"in use by mirix serve (pid {first.pid}" in message and info.url in message
        assert "one writer process" in message and "stop it" in message
        worker = _mirix(env, "worker", "--once")
        assert worker.returncode == 2 and f"pid {first.pid}" in worker.stderr
        # reading works beside it
        stats = _mirix(env, "stats", "--json")
        assert stats.returncode == 0, stats.stderr

        # CLI writes go to the server (history names the CLI); a prefix of an id works there too
        added = _mirix(env, "add", "I own a red kayak. My sister Anna paints seascapes in Bergen.", "--user", "ada",
                       "--json")
        assert added.returncode == 0, added.stderr
        assert f"sent to the server that owns this data dir: {info.url} (pid {first.pid})" in added.stderr
        kayak = [c["memory_id"] for c in json.loads(added.stdout)["changes"]]
        assert len(kayak) == 2, added.stdout
        # the fact first: deleting the turn would take back the fact said only in it (`agents.derived`)
        fact, turn = sorted(kayak, key=lambda i: i.startswith("epi_"))
        deleted = _mirix(env, "delete", fact[:12], "--user", "ada")
        assert deleted.returncode == 0 and f"deleted {fact}" in deleted.stdout, deleted.stderr
        assert _history(info.url, key, fact)[-1]["actor"] == "cli"

        # `mirix mcp` over stdio sends its calls to the running server, deletions recorded as `mcp`
        async def through_server():
            async with Client(_stdio(env), read_timeout_seconds=120) as client:
                added = _payload(await client.call_tool("add_memory", {
                    "content": "My cat Miso sleeps on the piano every afternoon."}))
                assert added["status"] == "processed" and added["changes"]
                hits = _payload(await client.call_tool("search_memory", {"query": "Miso", "limit": 3}))
                assert hits and "Miso" in hits[0]["text"]
                _payload(await client.call_tool("delete_memory", {"memory_id": turn}))
                # a turn deleted through the server names what it took back with it
                pin = _payload(await client.call_tool("add_memory", {"content": "My bank PIN is 7730."}))
                made = {c["memory_type"]: c["memory_id"] for c in pin["changes"]}
                gone = _payload(await client.call_tool("delete_memory", {"memory_id": made["episodic"]}))
                assert gone == {"deleted": made["episodic"], "taken_back": [made["knowledge_vault"]]}

        anyio.run(through_server)
        assert _history(info.url, key, turn)[-1]["actor"] == "mcp"
        pin = _mirix(env, "add", "My locker PIN is 5521.", "--user", "ada", "--json")
        made = {c["memory_type"]: c["memory_id"] for c in json.loads(pin.stdout)["changes"]}
        deleted = _mirix(env, "delete", made["episodic"], "--user", "ada", "--json")
        assert deleted.returncode == 0, deleted.stderr
        assert json.loads(deleted.stdout) == {"deleted": made["episodic"],
                                              "taken_back": [f"delete {made['knowledge_vault']}"]}
        hits = httpx.post(info.url + "/v1/users/ada/search", headers={"Authorization": f"Bearer {key}"},
                          json={"query": "Which pet naps on the musical instrument?", "method": "embedding",
                                "limit": 3}, timeout=60).json()
        assert hits and "Miso" in json.dumps(hits[0]["memory"])  # in the server's own vector index

        # MCP over HTTP is served by `mirix serve` too, on the same keys
        refused = httpx.post(info.url + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                             headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401
    finally:
        _stop(first, signal.SIGKILL)

    # SIGKILL left its server.json behind: ignored; the OS dropped the lock, so a new writer starts
    assert read_server_info(data) is not None and running_server(data) is None

    async def on_its_own():
        async with Client(_stdio(env), read_timeout_seconds=120) as client:
            listed = _payload(await client.call_tool("list_memories", {}))
            assert any("Miso" in m["text"] for m in listed)

    anyio.run(on_its_own)  # no server: `mirix mcp` opens the store itself
    again = _serve(env, data)
    _stop(again)
    assert again.returncode in (0, -signal.SIGTERM)
    assert not (data / SERVER_FILE).exists()  # removed on a clean exit
