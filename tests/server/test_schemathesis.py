"""Schemathesis against the live server's OpenAPI (SQLite and PostgreSQL): no request it generates,
valid or not, may get a 5xx. Bounded examples and a fixed seed keep it well under a minute."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("schemathesis")


def _st() -> list[str]:
    exe = Path(sys.executable).with_name("schemathesis")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("schemathesis") or shutil.which("st")
    if not found:
        pytest.skip("schemathesis CLI not found")
    return [found]


def test_no_request_gets_a_server_error(live, tmp_path):
    # some data, so list/search/history have something to chew on
    admin = live.client(live.admin)
    admin.post("/v1/users/alice/memories", json={"content": "My brother Tom is a pilot.", "wait": True})
    args = _st() + [
        "run", f"{live.url}/openapi.json",
        "-H", f"Authorization: Bearer {live.admin}",  # an all-users admin key: generated user ids are allowed
        "--checks", "not_a_server_error",
        "--max-examples", "10", "--seed", "20240501", "--max-failures", "10",
        "--request-timeout", "60", "--workers", "1",
        "--report", "junit", "--report-dir", str(tmp_path),
    ]
    if not hasattr(live.mx, "add_screenshot"):  # 501 until screenshot ingestion lands; a deliberate 5xx
        args += ["--exclude-path", "/v1/users/{user_id}/screenshots"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path)  # its cache dir goes there
    tail = result.stdout[-6000:]
    assert result.returncode == 0, tail + result.stderr[-2000:]
    generated = re.search(r"(\d+) generated", tail)
    assert generated and int(generated.group(1)) > 0, tail
    assert "Server error" not in tail
