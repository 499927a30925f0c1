"""`mirix keys ...`, `mirix serve` (a real process on loopback) and the CLI's refusals."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from mirix_py.cli.commands import app

REPO = Path(__file__).resolve().parents[2]


def test_keys_create_list_revoke(tmp_path):
    runner = CliRunner()
    d = ["--data-dir", str(tmp_path)]
    created = runner.invoke(app, ["keys", "create", "--user", "ada", "--user", "bob", "--name", "laptop", *d])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip().splitlines()[0]
    assert key.startswith("mxk_")
    as_json = runner.invoke(app, ["keys", "create", "--user", "*", "--admin", "--json", *d])
    admin = json.loads(as_json.stdout)
    assert admin["info"]["admin"] and admin["info"]["users"] == ["*"]

    listed = json.loads(runner.invoke(app, ["keys", "list", "--json", *d]).stdout)
    assert {tuple(k["users"]) for k in listed} == {("ada", "bob"), ("*",)}
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("mirix.db*"))
    assert hashlib.sha256(key.encode()).hexdigest().encode() in stored  # the hash is stored ...
    assert key.split(".")[1].encode() not in stored and key not in json.dumps(listed)  # ... never the key
    key_id = next(k["id"] for k in listed if k["name"] == "laptop")
    assert runner.invoke(app, ["keys", "revoke", key_id, *d]).exit_code == 0
    assert runner.invoke(app, ["keys", "revoke", key_id, *d]).exit_code == 2
    assert len(json.loads(runner.invoke(app, ["keys", "list", "--json", *d]).stdout)) == 1
    assert len(json.loads(runner.invoke(app, ["keys", "list", "--all", "--json", *d]).stdout)) == 2
    bad = runner.invoke(app, ["keys", "create", "--user", " ", *d])
    assert bad.exit_code == 2 and "user id" in bad.output


def test_refusals():
    runner = CliRunner()
    r = runner.invoke(app, ["serve", "--no-auth", "--host", "0.0.0.0"])
    assert r.exit_code == 2 and "loopback" in r.output
    r = runner.invoke(app, ["mcp"])
    assert r.exit_code == 2 and "--user" in r.output
    r = runner.invoke(app, ["mcp", "--transport", "http", "--no-auth", "--user", "a", "--host", "0.0.0.0"])
    assert r.exit_code == 2 and "loopback" in r.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_mirix_serve_process(tmp_path):
    env = {**os.environ, "MIRIX_DATA_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    for k in ("MIRIX_DATABASE_URL", "MIRIX_CHROMA_URL", "MIRIX_LLM_PROVIDER", "MIRIX_LLM_MODEL"):
        env.pop(k, None)
    key = subprocess.run([sys.executable, "-m", "mirix_py.cli", "keys", "create", "--user", "ada"], env=env,
                         capture_output=True, text=True, check=True, cwd=REPO).stdout.strip()
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mirix_py.cli", "serve", "--port", str(port), "--mcp"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "mirix serve did not come up"
            time.sleep(0.3)
        headers = {"Authorization": f"Bearer {key}"}
        assert httpx.get(url + "/v1/me", headers=headers).json()["users"] == ["ada"]
        added = httpx.post(url + "/v1/users/ada/memories", headers=headers,
                           json={"content": "My brother Tom is a pilot.", "wait": True})
        assert added.status_code == 200 and added.json()["status"] == "processed"
        assert httpx.get(url + "/v1/users/ada/memories").status_code == 401
        assert "memory viewer" in httpx.get(url + "/viewer").text
        assert httpx.get(url + "/docs").status_code == 200
        mcp = httpx.post(url + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={"Accept": "application/json, text/event-stream"})
        assert mcp.status_code == 401  # MCP on the same keys
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode in (0, -signal.SIGTERM)
