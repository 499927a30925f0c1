"""One writer process per embedded store (SQLite and/or embedded Chroma under a data dir).

Two processes writing one SQLite file and one embedded Chroma directory do not see each other's
vector writes (each Chroma client keeps its own index in memory), so a memory added by one is
missing from the other's embedding search. The engine therefore takes `DATA_DIR/writer.lock` with
an OS lock (`flock`) before it writes anything; a second process asking for it gets `StoreBusy`,
naming the holder and what to do instead. The kernel drops the lock when the holder exits, however
it exits (SIGKILL included), so the lock is never stale; the file itself stays, holding the last
holder's pid and command name for the message, and the schema revision its version writes.

Inside one process the lock is shared: engines opened on the same data dir count references, and
the lock is released when the last one closes (an OS lock belongs to the open file, so a second
`flock` from the same process would refuse it). Where `fcntl` does not exist (Windows) no lock is
taken.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from mirix_py.errors import MirixError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "writer.lock"
_SUBCOMMAND = re.compile(r"^[a-z][a-z-]{1,30}$")


class StoreBusy(MirixError):
    """Another process holds the data dir's writer lock."""

    def __init__(self, message: str, holder: dict[str, Any]) -> None:
        super().__init__(message)
        self.holder = holder


class UpgradeBlocked(StoreBusy):
    """An engine opened without the writer lock (`lock=False`: a read command) found the schema behind
    this version's while another process holds the lock. Upgrading under that process (an older
    mirix-py, say) left it writing rows in its older format, which this version's searches miss."""


def upgrade_blocked_message(data_dir: Path, holder: dict[str, Any], found: str | None, needed: str) -> str:
    who = holder.get("process") or "another process"
    pid = f"pid {holder['pid']}" if holder.get("pid") else "pid unknown"
    stop = f"stop {who} (pid {holder['pid']})" if holder.get("pid") else f"stop the process holding {LOCK_NAME}"
    return (f"data dir {data_dir} has schema revision {found or 'none'} and this mirix-py needs {needed}; it is not "
            f"upgraded while {who} ({pid}) holds it, which may be an older mirix-py still writing the old layout: "
            f"{stop}, then run this again (it upgrades the data dir).")


def process_label(argv: list[str] | None = None) -> str:
    """What this process is, for another process's message: `mirix serve`, or a script's name.
    Never the arguments (they may hold a secret to remember)."""
    argv = sys.argv if argv is None else argv
    name = Path(argv[0]).name if argv and argv[0] not in ("", "-", "-c") else "python"
    if name in ("__main__.py", "mirix"):
        sub = argv[1] if len(argv) > 1 and _SUBCOMMAND.match(argv[1]) else ""
        return f"mirix {sub}".strip()
    return name


def embedded_sql(sql_url: str) -> bool:
    return sql_url.startswith("sqlite")


@dataclass
class _Held:
    fd: int
    count: int


_HELD: dict[str, _Held] = {}  # realpath of the data dir -> this process's lock on it
_GUARD = threading.Lock()


def _key(data_dir: Path) -> str:
    return os.path.realpath(data_dir)


def read_holder(data_dir: Path) -> dict[str, Any]:
    """What the lock file says about its last holder ({} when it says nothing readable)."""
    try:
        data = json.loads((Path(data_dir) / LOCK_NAME).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def busy_message(data_dir: Path, holder: dict[str, Any], server_url: str | None = None) -> str:
    who = holder.get("process") or "another process"
    pid = f"pid {holder['pid']}" if holder.get("pid") else "pid unknown"
    since = f", since {holder['started_at']}" if holder.get("started_at") else ""
    serving = f", serving {server_url}" if server_url else ""
    return (f"data dir {data_dir} is in use by {who} ({pid}{since}{serving}). An embedded store (SQLite and "
            f"embedded Chroma) takes one writer process at a time. Send writes through that process"
            f"{' (REST, MCP at /mcp, or `mirix mcp`, which uses it)' if server_url else ''}, or stop it and "
            f"retry; reading (mirix stats, list, show, search) works alongside it.")


def acquire(data_dir: Path, *, label: str | None = None, upgrading: bool = False) -> "WriterLock":
    """This process's writer lock on `data_dir`; `StoreBusy` when another process holds it. Two holders
    are waited for instead: one that has the lock but has not said who it is yet (the stamp still
    names a process that is gone, or nothing), for up to `STAMP_WAIT_S`, and a read-only open
    upgrading the schema under the lock (`upgrading`, `opening.bring_schema_up`), for up to
    `UPGRADE_WAIT_S`: a writer opening beside it would have upgraded the same way."""
    key = _key(data_dir)
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            held.count += 1
            return WriterLock(key)
        if fcntl is None:  # pragma: no cover - Windows
            return WriterLock(None)
        fd = os.open(os.path.join(key, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
        started = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = read_holder(Path(data_dir))
                if time.monotonic() - started >= _patience(holder):
                    os.close(fd)
                    _refuse(Path(data_dir), holder)
                time.sleep(HOLDER_POLL_S)
        _stamp(fd, label, upgrading)
        _HELD[key] = _Held(fd, 1)
        return WriterLock(key)


STAMP_WAIT_S = 2.0  # a holder between taking the lock and writing who it is
UPGRADE_WAIT_S = 300.0  # a read-only open upgrading the schema under the lock
HOLDER_POLL_S = 0.05


def _patience(holder: dict[str, Any]) -> float:
    """How long to wait for the lock's holder: a live read-only open upgrading the schema, `UPGRADE_WAIT_S`;
    a holder the stamp does not name yet (it names a process that is gone, or none), `STAMP_WAIT_S`;
    any other, not at all."""
    if not pid_alive(holder.get("pid")):
        return STAMP_WAIT_S
    return UPGRADE_WAIT_S if holder.get("upgrading") else 0.0


def pid_alive(pid: Any) -> bool:
    """Whether `pid` names a running process of this host (a lock stamp's holder, a claim's worker)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _refuse(data_dir: Path, holder: dict[str, Any]) -> None:
    from mirix_py.store.discovery import running_server  # the holder may be a server: say where

    server = running_server(data_dir, check=False)
    raise StoreBusy(busy_message(data_dir, holder, server.url if server else None), holder) from None


def _stamp(fd: int, label: str | None, upgrading: bool = False) -> None:
    """Write who holds the lock, and the schema revision its version writes (`opening.bring_schema_up`
    lets a reader upgrade beside a holder of its own version only). The stamp is written over the
    last one, padded with spaces, then cut to length: a reader never sees a half-written file."""
    from mirix_py.store.migrations import head_revision

    said = {"pid": os.getpid(), "process": label or process_label(),
            "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"), "schema": head_revision()}
    stamp = json.dumps({**said, "upgrading": True} if upgrading else said).encode("utf-8")
    os.pwrite(fd, stamp.ljust(os.fstat(fd).st_size, b" "), 0)
    os.ftruncate(fd, len(stamp))


def held_by(owner: object, data_dir: Path) -> Callable[[], Any]:
    """The writer lock on `data_dir` for `owner` (an engine): the returned callable releases it,
    as does collecting an owner that failed to open."""
    held = acquire(data_dir)
    return weakref.finalize(owner, held.release)


def held_here(data_dir: Path) -> bool:
    """Whether this process holds the writer lock on `data_dir`."""
    with _GUARD:
        return _key(data_dir) in _HELD


class WriterLock:
    """One reference to this process's lock; `release()` is idempotent."""

    def __init__(self, key: str | None) -> None:
        self._key = key

    def release(self) -> None:
        key, self._key = self._key, None
        if key is None:
            return
        with _GUARD:
            held = _HELD.get(key)
            if held is None:
                return
            held.count -= 1
            if held.count == 0:
                del _HELD[key]
                os.close(held.fd)  # closing the only descriptor drops the flock


__all__ = ["LOCK_NAME", "StoreBusy", "UpgradeBlocked", "WriterLock", "acquire", "busy_message", "embedded_sql",
           "held_by", "held_here", "pid_alive", "process_label", "read_holder", "upgrade_blocked_message"]
