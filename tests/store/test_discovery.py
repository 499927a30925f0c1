"""server.json: written whole and owner-only, removed only by its writer, ignored when stale."""

from __future__ import annotations

import os
import subprocess
import sys

from mirix_py.store import discovery
from mirix_py.store.discovery import ServerInfo, local_url, read_server_info, remove_server_info, running_server


def _info(pid: int, url: str = "http://127.0.0.1:9") -> ServerInfo:
    return ServerInfo(url=url, pid=pid, started_at=discovery.now(), key="mxk_session.x")


def test_local_url():
    assert local_url("0.0.0.0", 8000) == "http://127.0.0.1:8000"
    assert local_url("::", 8000) == "http://[::1]:8000"
    assert local_url("127.0.0.1", 80) == "http://127.0.0.1:80"


def test_written_owner_only_and_removed_by_its_writer_only(tmp_path):
    path = discovery.write_server_info(tmp_path, _info(os.getpid()))
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_server_info(tmp_path).pid == os.getpid()
    remove_server_info(tmp_path, pid=os.getpid() + 1)  # another server's exit leaves this file
    assert path.exists()
    with discovery.announced(tmp_path, _info(os.getpid())):
        assert path.exists()
    assert not path.exists() and read_server_info(tmp_path) is None


def test_a_dead_or_silent_server_is_not_running(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    discovery.write_server_info(tmp_path, _info(int(dead.stdout)))
    assert running_server(tmp_path, check=False) is None  # its pid is gone
    discovery.write_server_info(tmp_path, _info(os.getpid()))  # alive, but nothing answers at the URL
    assert running_server(tmp_path, check=False).pid == os.getpid()
    assert running_server(tmp_path, timeout=2) is None
    (tmp_path / discovery.SERVER_FILE).write_text("{not json")
    assert running_server(tmp_path, check=False) is None
