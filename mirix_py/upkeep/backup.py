"""Backup and restore of a data directory (or a PostgreSQL database), safe while the engine runs.

A backup is one `.tar.gz` holding `manifest.json` and one JSON-lines file per table, read inside a
single snapshot (a read transaction on SQLite's WAL, REPEATABLE READ on PostgreSQL), so it is
consistent even while inputs are being processed. Chroma's index is not copied: SQL is the
source of truth and restore rebuilds it. A pgvector table (`memory_vector`) is SQL like the rest: it
is in the same snapshot and restored as it was, so a restore into a pgvector database re-embeds
nothing (into any other layout, `doctor` re-embeds from the rows). The OpenAI Agents sessions' items,
a SQLite file of the data dir (`store.agent_sessions`), are `agent_sessions.jsonl`, read in one
transaction of that file (consistent in itself, not with the tables' snapshot). Vault secrets,
logged inputs and session items stay encrypted, and a restore puts them back as they are: it needs
the same vault key, which opens them all. The vault key is never put in the backup — the manifest
only holds a token that proves the right key was given at restore.

A backup is written to `<dest>.partial` and renamed when complete: an interrupted or failed backup
leaves no file (the partial one, which holds memories' text, is removed).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import warnings
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from sqlalchemy import MetaData, Table, inspect, select, text
from sqlalchemy.exc import SAWarning
from sqlalchemy.engine import Connection, Engine

from mirix_py.errors import InvalidInput
from mirix_py.store.migrations import current_revision, upgrade
from mirix_py.store import agent_sessions
from mirix_py.store.crypto import Cipher, VaultKeyError
from mirix_py.store.private import open_private

FORMAT = 1
KEY_CHECK = "mirix-backup-key-check"
TABLES = ("memory", "memory_history", "input_log", "llm_usage", "api_key", "memory_vector")
SESSIONS = "agent_sessions"  # the member and count of the data dir's agent session items (not a table)
# made from other columns (PostgreSQL's tsvectors, the neighbours' words): a restore makes them again
DERIVED_COLUMNS = ("tsv", "near", "near_tsv")
DATE_COLUMNS = {"occurred_at", "created_at", "updated_at", "processed_at", "claimed_at", "revoked_at", "expires_at"}
# what reading a damaged or truncated backup raises (gzip's EOFError at a cut, zlib's at bad bytes, ...)
READ_ERRORS = (OSError, EOFError, ValueError, zlib.error, tarfile.TarError, KeyError)
HOLDS_DATA = ("restore goes into an empty data directory or database; this one holds data (if a restore into it "
              "stopped while re-embedding, opening it finishes that restore)")


def _reflect(name: str, metadata: MetaData, conn: Connection) -> Table:
    """The table as the database has it (pgvector's `vector` type reads and writes as text)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Did not recognize type 'vector'", category=SAWarning)
        return Table(name, metadata, autoload_with=conn)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat() if value.tzinfo else value.replace(tzinfo=timezone.utc).isoformat()
    return value


def _snapshot(engine: Engine):
    conn = engine.connect()
    if engine.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN")  # the first read pins a WAL snapshot for the whole dump
    else:
        conn = conn.execution_options(isolation_level="REPEATABLE READ")
        conn.begin()
    return conn


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(datetime.now(timezone.utc).timestamp())
    tar.addfile(info, io.BytesIO(data))


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    lines = [json.dumps({k: _jsonable(v) for k, v in row.items()}, ensure_ascii=False) for row in rows]
    return ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8")


def check_dest(dest: Path) -> None:
    """Refuse, before any work, a destination that is a folder or in a folder that does not exist."""
    if dest.is_dir():
        raise InvalidInput(f"{dest} is a directory: name the backup file to write, e.g. {dest / 'mirix.tar.gz'}")
    if not dest.parent.is_dir():
        raise InvalidInput(f"cannot write {dest}: the directory {dest.parent} does not exist")


def _write(dest: Path, manifest: dict[str, Any], dumps: dict[str, bytes]) -> None:
    """The tarball as `<dest>.partial`, renamed to `dest` when complete; removed on any failure or
    interrupt (it holds memories' text): a backup file is either complete or absent."""
    tmp = dest.with_name(dest.name + ".partial")
    try:
        with open_private(tmp, "wb") as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:  # every memory: 0600
            _add_bytes(tar, "manifest.json", json.dumps(manifest, indent=2).encode())
            for name, data in dumps.items():
                _add_bytes(tar, f"{name}.jsonl", data)
        os.replace(tmp, dest)
    except BaseException:  # KeyboardInterrupt too
        tmp.unlink(missing_ok=True)
        raise


def backup(engine: Engine, cipher: Cipher, dest: str | Path, *, embedder: str | None = None,
           data_dir: str | Path | None = None) -> dict[str, Any]:
    """Write a consistent backup; returns its manifest. `data_dir`: the engine's, whose agent
    session items are backed up too (when it keeps any file of them)."""
    dest = Path(dest)
    check_dest(dest)
    present = set(inspect(engine).get_table_names())
    conn = _snapshot(engine)
    try:
        metadata = MetaData()
        counts: dict[str, int] = {}
        dumps: dict[str, bytes] = {}
        for name in TABLES:
            if name not in present:
                continue
            table = _reflect(name, metadata, conn)
            columns = [c for c in table.columns if c.name not in DERIVED_COLUMNS]
            rows = [dict(row) for row in conn.execute(select(*columns)).mappings()]
            counts[name] = len(rows)
            dumps[name] = _jsonl(rows)
    finally:
        conn.rollback()
        conn.close()
    sessions = agent_sessions.stored_items(data_dir) if data_dir is not None else None
    if sessions is not None:
        counts[SESSIONS] = len(sessions)
        dumps[SESSIONS] = _jsonl([item.model_dump() for item in sessions])
    manifest = {
        "format": FORMAT, "created_at": datetime.now(timezone.utc).isoformat(), "schema": current_revision(engine),
        "source_dialect": engine.dialect.name, "embedder": embedder, "counts": counts,
        "key_check": cipher.encrypt(KEY_CHECK),
        "note": "vault secrets, inputs and agent session items are encrypted; restore needs the vault key, "
                "which is not in this file",
    }
    _write(dest, manifest, dumps)
    return manifest


def read_manifest(path: str | Path) -> dict[str, Any]:
    try:
        with tarfile.open(path, "r:gz") as tar:
            member = tar.extractfile("manifest.json")
            if member is None:
                raise KeyError("manifest.json")
            manifest = json.loads(member.read())
    except READ_ERRORS as exc:  # a truncated file too: `extractfile` reads every member's header
        raise InvalidInput(f"{path} is not a mirix backup, or is damaged or truncated: "
                           f"{exc or type(exc).__name__}") from exc
    if manifest.get("format") != FORMAT:
        raise InvalidInput(f"unsupported backup format {manifest.get('format')!r}")
    return manifest


def check_key(manifest: dict[str, Any], key: str | bytes | None) -> Cipher:
    if not key:
        raise InvalidInput("restoring needs the vault key of the backed-up data: pass it (--vault-key-file or "
                           "MIRIX_VAULT_KEY); it is never stored in the backup")
    try:
        cipher = Cipher(key.encode() if isinstance(key, str) else key)
        if cipher.decrypt(manifest["key_check"]) != KEY_CHECK:
            raise VaultKeyError("key check mismatch")
    except VaultKeyError as exc:
        raise InvalidInput("this vault key does not open the backup: use the key of the data it was made from") from exc
    return cipher


def _rows(tar: tarfile.TarFile, name: str) -> Iterator[dict[str, Any]]:
    try:
        member = tar.extractfile(f"{name}.jsonl")
        if member is None:  # a backup without this table: no rows
            return
        for line in io.TextIOWrapper(member, encoding="utf-8"):
            if line.strip():
                row = json.loads(line)
                for column in DATE_COLUMNS & set(row):
                    if row[column] is not None:
                        row[column] = datetime.fromisoformat(row[column])
                yield row
    except READ_ERRORS as exc:
        raise InvalidInput(f"the backup's {name}.jsonl is damaged or truncated: {exc or type(exc).__name__}") from exc


def _restore_sessions(tar: tarfile.TarFile, data_dir: str | Path) -> int:
    """The backup's agent session items into the data dir, encrypted as they were backed up."""
    items = [agent_sessions.StoredItem.model_validate(row) for row in _rows(tar, SESSIONS)]
    return agent_sessions.restore_items(data_dir, items)


def _is_empty(conn: Connection) -> bool:
    names = set(inspect(conn).get_table_names())
    for name in TABLES:
        if name in names and conn.execute(text(f"SELECT count(*) FROM {name}")).scalar():
            return False
    return True


def ensure_empty(engine: Engine, data_dir: str | Path | None = None) -> None:
    """Migrate to the current schema, and refuse a database (or data dir's agent sessions) that holds
    data: a restore adds to nobody's store."""
    upgrade(engine)
    with engine.connect() as conn:
        if not _is_empty(conn) or (data_dir is not None and agent_sessions.has_items(data_dir)):
            raise InvalidInput(HOLDS_DATA)


def _wipe(conn: Connection, present: set[str], data_dir: str | Path | None) -> None:
    """Delete what a restore that did not finish wrote: the tables' rows (in the restore's own
    transaction) and the data dir's agent session items."""
    for name in ("vector_pending", *reversed(TABLES)):  # the vectors before the memories they point to
        if name in present:
            conn.execute(text(f"DELETE FROM {name}"))
    if data_dir is not None:
        for user_id in {item.user_id for item in agent_sessions.stored_items(data_dir) or []}:
            agent_sessions.delete_user(data_dir, user_id)


def _load(conn: Connection, table: Table, rows: Iterator[dict[str, Any]]) -> int:
    """Insert the rows (columns this database does not have are left out) in batches; returns how many."""
    known = {c.name for c in table.columns}
    batch: list[dict[str, Any]] = []
    count = 0
    for row in rows:
        batch.append({k: v for k, v in row.items() if k in known})
        if len(batch) >= 500:
            conn.execute(table.insert(), batch)
            count += len(batch)
            batch = []
    if batch:
        conn.execute(table.insert(), batch)
        count += len(batch)
    return count


def restore(engine: Engine, path: str | Path, key: str | bytes | None,
            progress: Callable[[str, int], None] = lambda table, n: None, *,
            data_dir: str | Path | None = None, start_over: bool = False) -> dict[str, int]:
    """Load a backup into an empty database (migrated to the current schema first), and its agent
    session items into `data_dir` when given; returns row counts. The caller rebuilds full-text rows
    and vectors (the engine does on open). `start_over`: the target holds what a restore that did not
    finish wrote (`facade.maintenance.restore_into` knows by its marker): it is deleted instead of refused.
    Nothing of the tables is committed unless every row is in."""
    manifest = read_manifest(path)
    check_key(manifest, key)
    if start_over:
        upgrade(engine)
    else:
        ensure_empty(engine, data_dir)
    restored: dict[str, int] = {}
    metadata = MetaData()
    with tarfile.open(path, "r:gz") as tar, engine.begin() as conn:
        present = set(inspect(conn).get_table_names())
        if start_over:
            _wipe(conn, present, data_dir)
        for name in TABLES:
            if name not in manifest["counts"]:
                continue
            if name == "memory_vector" and name not in present:
                continue  # pgvector's vectors into a database without it: doctor re-embeds from the rows
            restored[name] = _load(conn, _reflect(name, metadata, conn), _rows(tar, name))
            progress(name, restored[name])
        if engine.dialect.name == "postgresql":  # serial ids continue after the restored ones
            for name in ("memory_history", "llm_usage"):
                if restored.get(name):
                    conn.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                      f"(SELECT max(id) FROM {name}))"))
        if data_dir is not None and SESSIONS in manifest["counts"]:  # last: a failure here rolls the tables back
            restored[SESSIONS] = _restore_sessions(tar, data_dir)
            progress(SESSIONS, restored[SESSIONS])
        if restored != {k: v for k, v in manifest["counts"].items() if k in restored}:  # rolls the tables back
            raise InvalidInput(f"backup is incomplete: expected {manifest['counts']}, restored {restored}")
    return restored
