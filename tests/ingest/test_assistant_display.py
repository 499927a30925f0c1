"""`mirix assistant` on a real (virtual) X display: one process captures and serves; it names
itself in the data dir's server.json, so a second writer is refused naming it while `mirix add`
and `mirix mcp` (stdio) send their writes to it; Ctrl-C removes the file."""

from __future__ import annotations

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

from test_capture_display import display  # noqa: F401  (Xvfb + openbox + a Chromium window)

from mirix_py.store.discovery import SERVER_FILE, running_server

pytest.importorskip("mcp")
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_assistant_is_the_one_writer_and_mcp_uses_it(display, tmp_path):  # noqa: F811
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    data = tmp_path / "data"
    env = {**os.environ, "DISPLAY": display, "MIRIX_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    for k in ("MIRIX_DATABASE_URL", "MIRIX_CHROMA_URL", "MIRIX_LLM_PROVIDER", "MIRIX_LLM_MODEL"):
        env.pop(k, None)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mirix_py.cli", "assistant", "-u", "bo", "--no-auth", "--port",
                             str(port), "--interval", "0.5", "--create"], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while (info := running_server(data, timeout=2)) is None or info.pid != proc.pid:
            assert proc.poll() is None, proc.stderr.read()[-2000:]
            assert time.monotonic() < deadline, "mirix assistant did not come up"
            time.sleep(0.2)
        assert info.process == "mirix assistant" and info.url == f"http://127.0.0.1:{port}"

        refused = subprocess.run([sys.executable, "-m", "mirix_py.cli", "worker", "--once"], env=env,
                                 cwd=REPO, capture_output=True, text=True, timeout=180)
        assert refused.returncode == 2 and f"in use by mirix assistant (pid {proc.pid}" in " ".join(
            refused.stderr.split())
        # a CLI write goes to the assistant, as `mirix mcp` does
        sent = subprocess.run([sys.executable, "-m", "mirix_py.cli", "add", "a note", "-u", "bo"], env=env,
                              cwd=REPO, capture_output=True, text=True, timeout=180)
        assert sent.returncode == 0 and f"(pid {proc.pid})" in sent.stderr, sent.stderr

        params = StdioServerParameters(command=sys.executable, args=["-m", "mirix_py.cli", "mcp", "--user", "bo"],
                                       env=env, cwd=str(REPO))

        async def through_assistant():
            async with Client(params, read_timeout_seconds=120) as client:
                added = await client.call_tool("add_memory", {"content": "My locker code hint is the blue door."})
                assert not added.is_error, added

        anyio.run(through_assistant)
        hits = httpx.post(info.url + "/v1/users/bo/search", json={"query": "locker blue door", "limit": 3},
                          timeout=60).json()
        assert hits and "blue door" in str(hits[0]["memory"])  # written by the assistant's own engine
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # Ctrl-C: the capture flushes, the server stops
        proc.wait(timeout=120)
    assert proc.returncode == 0, proc.stderr.read()[-2000:]
    assert not (data / SERVER_FILE).exists()
