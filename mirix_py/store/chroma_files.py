"""Zero the stale bytes embedded Chroma leaves in its vector graph files.

Chroma (its hnswlib) writes `data_level0.bin` and `length.bin` at their full preallocated capacity
from memory it allocated but did not clear: past the elements in use, the files hold whatever this
process's heap held before, such as SQL, JSON and memory texts. Seen in a test store: a planted API
key in `length.bin`, "login: ada / pass: [vault:kv_…]" in `data_level0.bin`, with 0 elements in use.

hnswlib clears an element's bytes when it adds one and never reads past `cur_element_count`, so the
bytes after the elements in use can be zeroed without changing the index. `scrub` does that for
every graph folder whose `header.bin` it can read and whose file sizes agree with it; any other
layout is left alone. Run with no Chroma client writing (the engine does it on `close`).

While an engine runs, Chroma rewrites those files as it adds vectors, and on the first read of a
collection it has opened again (a `get`, a `count`, a query: Chroma 1.5.9 writes the loaded graph
back). `allocations_cleared` keeps stale bytes out of them then: inside it, glibc fills every heap
block it hands out or takes back with a constant byte, so the buffers Chroma allocates while it
writes hold nothing this process had in memory before.

Deleted vectors stay in other places: a dropped collection's graph folder is left on disk, and
`chroma.sqlite3` keeps the pages of the rows Chroma deleted (its log of vectors, their ids, the
collection's metadata) as free pages. `purge_deleted` removes both.
"""

from __future__ import annotations

import ctypes
import json
import logging
import shutil
import struct
import subprocess
import sys
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["AllocationClearing", "HeapCleared", "allocations_cleared", "purge_deleted", "scrub", "vacuum"]

log = logging.getLogger(__name__)

# header.bin (Chroma's hnswlib, persist version 1): version, offsetLevel0, max_elements,
# cur_element_count, size_data_per_element, label_offset, offsetData, maxlevel, enterpoint_node,
# maxM, maxM0, M, mult, ef_construction
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")
_LEVELS_ITEM = 4  # length.bin: one uint32 per element
_CHUNK = 1 << 20


def _zero_tail(path: Path, start: int) -> int:
    """Zero `path` from `start` to its end where it is not zero already; bytes changed."""
    changed = 0
    with open(path, "r+b") as fh:
        fh.seek(start)
        pos = start
        while block := fh.read(_CHUNK):
            if block.count(0) != len(block):
                fh.seek(pos)
                fh.write(bytes(len(block)))
                changed += len(block) - block.count(0)
            pos += len(block)
    return changed


def scrub(chroma_dir: str | Path, *, since: float | None = None) -> int:
    """Zero the unused capacity of every graph under `chroma_dir` (with `since`, a time stamp: only of
    graphs written since then); how many stale bytes were cleared."""
    cleared = 0
    for header_file in sorted(Path(chroma_dir).glob("*/header.bin")):
        folder = header_file.parent
        try:
            if since is not None and max(f.stat().st_mtime for f in folder.iterdir()) < since:
                continue  # untouched since the last scrub
            raw = header_file.read_bytes()
            if len(raw) != _HEADER.size:
                continue
            version, _, max_elements, used, per_element, *_ = _HEADER.unpack(raw)
            level0, levels = folder / "data_level0.bin", folder / "length.bin"
            if (version != 1 or used > max_elements or per_element <= 0
                    or level0.stat().st_size != max_elements * per_element
                    or levels.stat().st_size != max_elements * _LEVELS_ITEM):
                continue
            cleared += _zero_tail(level0, used * per_element) + _zero_tail(levels, used * _LEVELS_ITEM)
        except OSError:  # removed meanwhile (a dropped collection)
            continue
    return cleared


DATABASE = "chroma.sqlite3"
VACUUM_TIMEOUT_S = 600  # a whole VACUUM, waits for Chroma's writes included

# Run by a Python of its own: prints the ids of the segments the database names, then rewrites it
# without free pages and empties its write-ahead log (if Chroma ever keeps one).
_VACUUM_PROGRAM = """
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
try:
    segments = [row[0] for row in db.execute("SELECT id FROM segments")]
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
finally:
    db.close()
print(json.dumps(segments))
"""


def vacuum(database: str | Path) -> set[str]:
    """Rewrite Chroma's `database` without its free pages, in a process of its own; the ids of the
    segments it names. Chroma links a SQLite of its own: two SQLite libraries in one process do not see
    each other's POSIX locks (a VACUUM here while Chroma wrote failed with "disk I/O error", and a write
    of one can land in the middle of the other's), while another process's locks they both honour, so
    Chroma's writes wait for the VACUUM and the VACUUM for them."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c", _VACUUM_PROGRAM, str(database)],
                          capture_output=True, text=True, timeout=VACUUM_TIMEOUT_S)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise OSError(f"VACUUM of {database} failed: {reason}")
    return set(json.loads(done.stdout))


GRAPH_FILES = frozenset({"header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle"})


def _graph_folders(chroma_dir: Path) -> list[Path]:
    """The folders named like a segment id (a UUID) that hold nothing but graph files: the only ones
    `purge_deleted` may remove (any other layout is left alone)."""
    found = []
    for folder in chroma_dir.iterdir():
        try:
            if (folder.is_dir() and str(uuid.UUID(folder.name)) == folder.name
                    and {f.name for f in folder.iterdir()} <= GRAPH_FILES):
                found.append(folder)
        except (ValueError, OSError):  # another name; a folder removed meanwhile
            continue
    return found


def purge_deleted(chroma_dir: str | Path) -> int:
    """Leave nothing of Chroma's deleted vectors under `chroma_dir`: `chroma.sqlite3` rewritten without
    its free pages (`vacuum`), and the graph folders no segment names any more (those of dropped
    collections) removed; how many folders went. The folders are listed before the database is read:
    Chroma records a segment before it makes its folder, so a folder made meanwhile is never taken
    for a dropped one."""
    chroma_dir = Path(chroma_dir)
    database = chroma_dir / DATABASE
    if not database.exists():
        return 0
    folders = _graph_folders(chroma_dir)
    segments = vacuum(database)
    dropped = [folder for folder in folders if folder.name not in segments]
    for folder in dropped:
        shutil.rmtree(folder, ignore_errors=True)
    return len(dropped)


M_PERTURB = -6  # glibc's mallopt parameter: fill allocated and freed heap blocks with a byte
PERTURB_BYTE = 0xA5  # freed blocks hold 0xA5, handed-out ones 0x5A (glibc xors it for allocation)


def _glibc_mallopt() -> Callable[[int, int], int] | None:
    """glibc's `mallopt`, or None elsewhere (musl, macOS, Windows): there the files are only
    scrubbed on `close`."""
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


class AllocationClearing:
    """Heap blocks filled with a constant byte while any caller is inside (`__call__`), nested
    and from any thread: on at the first entry, off at the last exit. The allocator's setting is
    the whole process's, so it is on only around the calls that need it (Chroma's writes), not
    around searches, where filling every block would cost time."""

    def __init__(self, mallopt: Callable[[int, int], int] | None) -> None:
        self._mallopt = mallopt
        self._lock = threading.Lock()
        self._inside = 0

    @property
    def available(self) -> bool:
        return self._mallopt is not None

    @contextmanager
    def __call__(self) -> Iterator[None]:
        if self._mallopt is None:
            yield
            return
        with self._lock:
            self._inside += 1
            if self._inside == 1:
                self._mallopt(M_PERTURB, PERTURB_BYTE)
        try:
            yield
        finally:
            with self._lock:
                self._inside -= 1
                if self._inside == 0:
                    self._mallopt(M_PERTURB, 0)


allocations_cleared = AllocationClearing(_glibc_mallopt())


class HeapCleared:
    """An embedded Chroma client or collection whose every method call runs inside
    `allocations_cleared`: any call may allocate, load or write a graph (an upsert, a query, a `get`
    or a `count` of a collection opened again, releasing the client), so none writes stale bytes of
    this process. Attributes that are not methods (a collection's `name`, `metadata`) read through;
    a method's wrapper is made on its first use and kept (a search asks for `query` every time)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:  # only for names not already kept on the wrapper
        value = getattr(self._inner, name)
        if not callable(value):
            return value

        def cleared(*args: object, **kwargs: object) -> object:
            with allocations_cleared():
                return value(*args, **kwargs)

        setattr(self, name, cleared)
        return cleared
