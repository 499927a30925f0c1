"""Agent sessions' conversation items, kept per user: in a SQLite file of the data dir, or in memory.

A session replays its items to the model word for word, so they hold what the user said verbatim.
Rows are keyed by (user, session, position), so a user never reads, pops or clears another user's
session of the same id; each item is stored encrypted with the data dir's vault key (as the input
log is); `delete_user` removes a user's rows and leaves none of their bytes in the file or its
write-ahead log. A backup copies the rows as stored (`stored_items`, still encrypted) and a restore
puts them back (`restore_items`): the restored data dir opens them with the same vault key, which the
backup's key check proves. Each item an adapter remembered keeps the ids of the messages it became
(`said_as`), so that `Mirix.delete(..., erase=True)`, which takes a message out of the input log, takes
its words out of the items that carried it too (`erase_said`). No `agents` import: `Mirix.delete_user`
calls it without the optional extra installed; `mirix_py.integrations.openai_agents` is its user.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mirix_py.errors import InvalidInput
from mirix_py.store.crypto import Cipher
from mirix_py.store.private import private_file
from mirix_py.text.storable import printable

log = logging.getLogger(__name__)

FILE_NAME = "agent_sessions.sqlite"
ERASED_TEXT = "[erased]"  # an erased message item's text: the item stays, so the sequence replayed is the same
_BUSY_TIMEOUT_S = 30.0


class StoredItem(BaseModel):
    """A row as the file keeps it: `item` is the JSON, encrypted when the store has a cipher (so a
    backup holds it encrypted as it is)."""

    position: int
    user_id: str
    session_id: str
    item: str
    said_as: list[str] | None = None  # the ids of the messages it was remembered as; None: kept before they were


_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_items (
    position INTEGER PRIMARY KEY,  -- increasing: a session's items in the order they were added
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    item TEXT NOT NULL,            -- the item as JSON, encrypted when the store has a cipher
    said_as TEXT                   -- JSON list of the ids of the messages it was remembered as; NULL: not recorded
);
CREATE INDEX IF NOT EXISTS session_items_by_key ON session_items (user_id, session_id, position);
"""


def message_text(content: Any) -> str:
    """The text of a chat message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else getattr(p, "text", None) for p in content]
        return "\n".join(p for p in parts if isinstance(p, str) and p.strip())
    return ""


def said_text(item: Any) -> str | None:
    """What a user or assistant message item is remembered as: its text made plain (a terminal's escape
    sequences dropped, `printable`); None for tool calls, reasoning and the rest, and for an empty text."""
    get = item.get if isinstance(item, dict) else lambda key, default=None: getattr(item, key, default)
    if get("role") not in ("user", "assistant") or get("type", "message") != "message":
        return None
    text = printable(message_text(get("content")))
    return text if text.strip() else None


def erased_item(item: dict[str, Any]) -> dict[str, Any]:
    """A message item with its words taken out: each text part (or the text) reads ERASED_TEXT, and an
    output part keeps no annotation or log probability (they quote it); its role, id, type and other parts
    stay, so the session's sequence of items is the same."""
    content = item.get("content")
    if isinstance(content, str):
        return {**item, "content": ERASED_TEXT}
    if not isinstance(content, list):
        return item
    parts = [{"type": p.get("type", "input_text"), "text": ERASED_TEXT,
              **({"annotations": []} if p.get("type") == "output_text" else {})}
             if isinstance(p, dict) and "text" in p else p for p in content]
    return {**item, "content": parts}


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
            recorded = "said_as" in {row[1] for row in db.execute("PRAGMA table_info(session_items)")}
        if not recorded:  # a file kept before `said_as` was: it gains the column (once, whoever opens it first)
            with self._write() as db:
                if "said_as" not in {row[1] for row in db.execute("PRAGMA table_info(session_items)")}:
                    db.execute("ALTER TABLE session_items ADD COLUMN said_as TEXT")

    def get_items(self, user_id: str, session_id: str, limit: int | None = None) -> list[Any]:
        """The latest `limit` items (all when None), oldest first: the SDK's `SQLiteSession`, whose
        SQL `LIMIT` also gives none for 0 and all for a negative limit."""
        with self._connect() as db:
            rows = db.execute("SELECT item FROM session_items WHERE user_id = ? AND session_id = ? "
                              "ORDER BY position DESC LIMIT ?",
                              (user_id, session_id, -1 if limit is None else limit)).fetchall()
        return [self._decode(item) for (item,) in reversed(rows)]

    def add_items(self, user_id: str, session_id: str, items: list[Any],
                  said_as: Sequence[Sequence[str]] | None = None) -> None:
        """Append the items, all or none (each is serialised before any is written). `said_as`: for each
        item, the ids of the messages it is remembered as (none for an item not remembered), which an
        erasure of those messages finds it by; without it, an erasure compares texts (`erase_said`)."""
        if said_as is not None and len(said_as) != len(items):
            raise InvalidInput(f"said_as names {len(said_as)} items' messages for {len(items)} items")
        links = [json.dumps(list(ids)) for ids in said_as] if said_as is not None else [None] * len(items)
        rows = [(user_id, session_id, self._encode(item), link) for item, link in zip(items, links)]
        if rows:
            with self._write() as db:
                db.executemany("INSERT INTO session_items (user_id, session_id, item, said_as) VALUES (?, ?, ?, ?)",
                               rows)

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

    def erase_said(self, user_id: str, messages: Sequence[dict[str, Any]]) -> int:
        """Take the words of these messages (as the input log held them: `content`, and `id` when given)
        out of the user's items that carried them; returns how many items. An item is found by the ids
        of the messages it was remembered as (`said_as`); one kept before they were recorded, by its text
        (`said_text`) equal to a message's. Its text then reads ERASED_TEXT (`erased_item`): removed, it
        would change the sequence the SDK replays (a reply to nothing; a model's reasoning item without
        the message that followed it, which the Responses API refuses). Old rows are overwritten
        (`secure_delete`) and the write-ahead log truncated, as `delete_user` does."""
        ids = {str(m["id"]) for m in messages if m.get("id")}
        texts = {str(m.get("content")) for m in messages if m.get("content")}
        if not ids and not texts:
            return 0
        with self._write() as db:
            rows = db.execute("SELECT position, item, said_as FROM session_items WHERE user_id = ?",
                              (user_id,)).fetchall()
            erased = []
            for position, stored, link in rows:
                item = self._decode(stored)
                if not isinstance(item, dict):
                    continue
                carried = not ids.isdisjoint(json.loads(link)) if link is not None else said_text(item) in texts
                if carried and item != erased_item(item):
                    erased.append((self._encode(erased_item(item)), position))
            db.executemany("UPDATE session_items SET item = ? WHERE position = ?", erased)
        if erased and self._memory is None and not self._truncate_log():
            log.warning("%s: the write-ahead log was in use: the erased words leave it at its next checkpoint",
                        self.path)
        return len(erased)

    def delete_user(self, user_id: str) -> int:
        """Delete every item of the user's sessions; returns how many. Deleted rows are overwritten
        (`secure_delete`) and the write-ahead log, which still holds the pages they were in, is
        checkpointed and truncated."""
        with self._write() as db:
            deleted = db.execute("DELETE FROM session_items WHERE user_id = ?", (user_id,)).rowcount
        if not self._truncate_log():
            raise RuntimeError(f"{self.path}: the write-ahead log could not be emptied (a reader held it for "
                               f"{_BUSY_TIMEOUT_S:.0f} s); delete the user again")
        return deleted

    def stored_items(self) -> list[StoredItem]:
        """Every row as stored (items not decrypted), in the order they were added, read in one go."""
        with self._connect() as db:
            rows = db.execute("SELECT position, user_id, session_id, item, said_as FROM session_items "
                              "ORDER BY position").fetchall()
        return [StoredItem(position=p, user_id=u, session_id=s, item=i, said_as=json.loads(a) if a else None)
                for p, u, s, i, a in rows]

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
            db.executemany("INSERT INTO session_items (position, user_id, session_id, item, said_as) "
                           "VALUES (?, ?, ?, ?, ?)",
                           [(i.position, i.user_id, i.session_id, i.item,
                             json.dumps(i.said_as) if i.said_as is not None else None) for i in items])
        return len(items)

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()

    # ------------------------------------------------------------ plumbing

    def _truncate_log(self) -> bool:
        """Copy the write-ahead log into the file and empty it (it keeps the pages a write changed, as they
        were); False when a reader held it."""
        with self._connect() as db:
            return not db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]

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


def kept_in(data_dir: str | Path, cipher: Cipher) -> SessionStore | None:
    """The session store of `data_dir`, opened with its vault key (None when no session was kept there)."""
    path = Path(data_dir) / FILE_NAME
    return SessionStore(path, cipher) if path.exists() else None


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


__all__ = ["ERASED_TEXT", "FILE_NAME", "SessionStore", "StoredItem", "delete_user", "erased_item", "has_items", "kept_in",
           "message_text", "restore_items", "said_text", "stored_items"]
