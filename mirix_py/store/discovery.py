"""How other processes find the server that owns a data dir: `DATA_DIR/server.json`.

A serving process (`mirix serve`, `mirix assistant`) holds the data dir's writer lock
(`store/writer_lock.py`), so no other process may open the store to write. Once it listens it
writes `server.json` (mode 0600: URL, pid, start time and a key made for this run only), and
removes it on exit. `mirix mcp` reads it to send its tool calls to that server instead of
opening the store. The key is worth no more than the file's neighbours: whoever can read the data
dir can read the database and the vault key too.

A file left by a process that died (SIGKILL, power loss) is ignored: its pid is gone, or the
server does not answer its own key.
"""

from __future__ import annotations

import contextlib
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from pydantic import BaseModel, ValidationError

SERVER_FILE = "server.json"


class ServerInfo(BaseModel):
    url: str
    pid: int
    started_at: datetime
    key: str
    process: str = "mirix serve"


def local_url(host: str, port: int) -> str:
    """The URL a process on this machine uses for a server bound to `host`."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def write_server_info(data_dir: Path, info: ServerInfo) -> Path:
    """Write `server.json` whole (a reader never sees half a file), readable by the owner only."""
    path = Path(data_dir) / SERVER_FILE
    tmp = path.with_name(f".{SERVER_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(info.model_dump_json())
    os.replace(tmp, path)
    return path


def remove_server_info(data_dir: Path, pid: int | None = None) -> None:
    """Remove `server.json` if it is this process's (`pid`), so a newer server's file stays."""
    path = Path(data_dir) / SERVER_FILE
    found = read_server_info(data_dir)
    if found is not None and found.pid != (pid or os.getpid()):
        return
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def read_server_info(data_dir: Path) -> ServerInfo | None:
    try:
        return ServerInfo.model_validate_json((Path(data_dir) / SERVER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _answers(info: ServerInfo, timeout: float) -> bool:
    """Whether the server at `info.url` accepts this run's key (so it is the one that wrote the file)."""
    import httpx

    try:
        r = httpx.get(info.url + "/v1/me", headers={"Authorization": f"Bearer {info.key}"}, timeout=timeout)
    except httpx.HTTPError:
        return False
    return r.status_code == 200


def running_server(data_dir: Path, *, check: bool = True, timeout: float = 5.0) -> ServerInfo | None:
    """The live server of `data_dir`, or None. `check=False` trusts a live pid without asking the
    server (for messages); otherwise the server must answer its own key."""
    info = read_server_info(data_dir)
    if info is None or not _alive(info.pid):
        return None
    if check and not _answers(info, timeout):
        return None
    return info


@contextlib.contextmanager
def announced(data_dir: Path, info: ServerInfo) -> Iterator[ServerInfo]:
    """`server.json` for as long as the block runs."""
    write_server_info(data_dir, info)
    try:
        yield info
    finally:
        remove_server_info(data_dir, info.pid)


def now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = ["SERVER_FILE", "ServerInfo", "announced", "local_url", "now", "read_server_info", "remove_server_info",
           "running_server", "write_server_info"]
