"""Agent sessions' conversation items, kept per user: in a SQLite file of the data dir, or in memory.

A session replays its items to the model word for word, so they hold what the user said verbatim.
Rows are keyed by (user, session, position), so a user never reads, pops or clears another user's
session of the same id; each item is stored encrypted with the data dir's vault key (as the input
log is); `delete_user` removes a user's rows and leaves none of their bytes in the file or its
write-ahead log. A backup copies the rows as stored (`stored_items`, still encrypted) and a restore
puts them back (`restore_items`): the restored data dir opens them with the same vault key, which the
backup's key check proves. No `agents` import: `Mirix.delete_user` calls it without the optional
extra installed; `mirix_py.integrations.openai_agents` is its user.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mirix_py.errors import InvalidInput
from mirix_py.store.crypto import Cipher
from mirix_py.store.private import private_file

FILE_NAME = "agent_sessions.sqlite"
_BUSY_TIMEOUT_S = 30.0


class StoredItem(BaseModel):
    """A row as the file keeps it: `item` is the JSON, encrypted when the store has a cipher (so a
    backup holds it encrypted as it is)."""

    position: int
    user_id: str
    session_id: str
    item: str


_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_items (
    position INTEGER PRIMARY KEY,  -- increasing: a session's items in the order they were added
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    item TEXT NOT NULL             -- the item as JSON, encrypted when the store has a cipher
);
CREATE INDEX IF NOT EXISTS session_items_by_key ON session_items (user_id, session_id, position);
"""


class SessionStore:
    """Sessions' items by (user, session). A file is opened for each call, so the sessions of every
    user and thread share it; without a path the items live in this object only (over REST there
    is no data dir to keep them in)."""

    def __init__(self, path: str | Path | None = None, cipher: Cipher | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.cipher = cipher
        self._lock = threading.Lock()
        self._memory: sqlite3.Connection | None = None
        if self.path is None:
            self._memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        else:
            private_file(self.path)  # 0600 before SQLite opens it: its -wal and -shm files take its mode
        with self._connect() as db:
            if self.path is not None:
                db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    def get_items(self, user_id: str, session_id: str, limit: int | None = None) -> list[Any]:
        """The latest `limit` items (all when None), oldest first: the SDK's `SQLiteSession`, whose
        SQL `LIMIT` also gives none for 0 and all for a negative limit."""
        with self._connect() as db:
            rows = db.execute("SELECT item FROM session_items WHERE user_id = ? AND session_id = ? "
                              "ORDER BY position DESC LIMIT ?",
                              (user_id, session_id, -1 if limit is None else limit)).fetchall()
        return [self._decode(item) for (item,) in reversed(rows)]

    def add_items(self, user_id: str, session_id: str, items: list[Any]) -> None:
        """Append the items, all or none (each is serialised before any is written)."""
        rows = [(user_id, session_id, self._encode(item)) for item in items]
        if rows:
            with self._write() as db:
                db.executemany("INSERT INTO session_items (user_id, session_id, item) VALUES (?, ?, ?)", rows)

    def pop_item(self, user_id: str, session_id: str) -> Any | None:
        """Remove and return the session's most recent item (None when it has none)."""
        with self._write() as db:
            rows = db.execute("DELETE FROM session_items WHERE position = (SELECT position FROM session_items "
                              "WHERE user_id = ? AND session_id = ? ORDER BY position DESC LIMIT 1) RETURNING item",
                              (user_id, session_id)).fetchall()
            return self._decode(rows[0][0]) if rows else None  # inside: an item that cannot be read stays

    def clear(self, user_id: str, session_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM session_items WHERE user_id = ? AND session_id = ?", (user_id, session_id))

    def delete_user(self, user_id: str) -> int:
        """Delete every item of the user's sessions; returns how many. Deleted rows are overwritten
        (`secure_delete`) and the write-ahead log, which still holds the pages they were in, is
        checkpointed and truncated."""
        with self._write() as db:
            deleted = db.execute("DELETE FROM session_items WHERE user_id = ?", (user_id,)).rowcount
        with self._connect() as db:
            busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy:
            raise RuntimeError(f"{self.path}: the write-ahead log could not be emptied (a reader held it for "
                               f"{_BUSY_TIMEOUT_S:.0f} s); delete the user again")
        return deleted

    def stored_items(self) -> list[StoredItem]:
        """Every row as stored (items not decrypted), in the order they were added, read in one go."""
        with self._connect() as db:
            rows = db.execute("SELECT position, user_id, session_id, item FROM session_items "
                              "ORDER BY position").fetchall()
        return [StoredItem(position=p, user_id=u, session_id=s, item=i) for p, u, s, i in rows]

    def has_items(self) -> bool:
        with self._connect() as db:
            return db.execute("SELECT 1 FROM session_items LIMIT 1").fetchone() is not None

    def restore_items(self, items: list[StoredItem]) -> int:
        """Put back rows `stored_items` read, positions and encryption as they were, into a store that
        holds none (a restore adds nothing to someone's sessions); returns how many."""
        with self._write() as db:
            if db.execute("SELECT 1 FROM session_items LIMIT 1").fetchone() is not None:
                raise InvalidInput(f"{self.path or 'the session store'} holds agent sessions: restore goes into "
                                   "an empty data directory")
            db.executemany("INSERT INTO session_items (position, user_id, session_id, item) VALUES (?, ?, ?, ?)",
                           [(i.position, i.user_id, i.session_id, i.item) for i in items])
        return len(items)

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()

    # ------------------------------------------------------------ plumbing

    def _encode(self, item: Any) -> str:
        text = json.dumps(item)
        return self.cipher.encrypt(text) if self.cipher is not None else text

    def _decode(self, stored: str) -> Any:
        return json.loads(self.cipher.decrypt(stored) if self.cipher is not None else stored)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if self._memory is not None:
            with self._lock:
                yield self._memory
            return
        db = sqlite3.connect(str(self.path), timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            db.execute("PRAGMA secure_delete=ON")  # a popped or deleted item is zeroed, not left in free space
            yield db
        finally:
            db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")


def delete_user(data_dir: str | Path, user_id: str) -> int:
    """Delete the user's session items kept in `data_dir` (0 when no session was kept there)."""
    path = Path(data_dir) / FILE_NAME
    if not path.exists():
        return 0
    store = SessionStore(path)
    return store.delete_user(user_id)


def stored_items(data_dir: str | Path) -> list[StoredItem] | None:
    """The rows kept in `data_dir` as stored, for a backup (None when no session was kept there)."""
    path = Path(data_dir) / FILE_NAME
    if not path.exists():
        return None
    return SessionStore(path).stored_items()


def has_items(data_dir: str | Path) -> bool:
    """Whether `data_dir` keeps any session item (a restore refuses to add to them)."""
    path = Path(data_dir) / FILE_NAME
    return path.exists() and SessionStore(path).has_items()


def restore_items(data_dir: str | Path, items: list[StoredItem]) -> int:
    """A backup's rows into `data_dir`'s session file, which must hold none; returns how many."""
    return SessionStore(Path(data_dir) / FILE_NAME).restore_items(items)


__all__ = ["FILE_NAME", "SessionStore", "StoredItem", "delete_user", "has_items", "restore_items", "stored_items"]
