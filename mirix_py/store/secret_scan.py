"""`mirix doctor --secrets` on the store: find plaintext secrets an older version left in a data dir, and move them.

`scan` looks, with the current vault rules and the user's own vault values, at every place text is
kept: memory rows (search text and fields, vault captions), history events, the SQLite full-text
table, the session index's texts (`store.sessions`), the vector index's documents (older versions sent them to Chroma), the input log's plain
columns (`error`, `source_id`) and the raw bytes of the database files (`mirix.db`, its `-wal` and
`-shm`, Chroma's files: free pages and the write-ahead log keep text after rows change; Chroma's
binary graph files only for values long enough not to turn up by chance, `BINARY_MIN_CHARS`). History
events keep whole records: only the fields the guard cleans are looked at (a random hex id can hold
a Luhn-valid digit run). What a finding is, and the scan of the raw files, are `secrets.doctor`'s.

The input log's `payload` is not a finding: it keeps the raw text for retries, encrypted with the
vault key like the vault itself; `payload_secrets` counts the inputs whose text holds one.

`repair` moves each secret into the vault (or points at the entry already holding it), rewrites the
rows with `[vault:<id>]`, history events and the input log's plain columns with the same
placeholders, re-indexes full text and sessions, rebuilds a user's vector collection that held documents, then
(SQLite) vacuums the database files and truncates their write-ahead logs so that no old page keeps
a copy (embedded Chroma's in a process of its own: `chroma_files.vacuum`); a second scan is then clean. PostgreSQL keeps dead row versions until its own VACUUM.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select, text as sql
from sqlmodel import Session, col

from mirix_py.tools.ops import InsertOp
from mirix_py.records import KnowledgeVaultMemory
from mirix_py.secrets.doctor import Finding, SecretReport, clean_record, kinds, scan_files
from mirix_py.text.storable import strings
from mirix_py.secrets.guard import Known, SecretGuard, guarded_fields
from mirix_py.store.chroma_files import DATABASE, scrub, vacuum
from mirix_py.store.crypto import VaultKeyError
from mirix_py.store.memories import MemoryStore
from mirix_py.store.tables import HistoryRow, InputRow, MemoryRow

DOCTOR_ACTOR = "doctor_secrets"


def _owner(place: str, row_id: Any, user_id: str) -> Any:
    """What a vault entry made from a non-memory text is attributed to."""
    return SimpleNamespace(id=f"{place}/{row_id}", user_id=user_id, occurred_at=None, source_ids=[])


# ---------------------------------------------------------------- scan


def scan(store: MemoryStore, guard: SecretGuard, data_dir: Path | None) -> SecretReport:
    report = SecretReport()
    knowns: dict[str, Known] = {}
    values: set[str] = set()

    def known_for(session: Session, user_id: str) -> Known:
        if user_id not in knowns:
            knowns[user_id] = store.known_secrets(session, user_id)
            values.update(knowns[user_id].ids)
        return knowns[user_id]

    def note(place: str, row_id: Any, user_id: str | None, text: str, known: Known) -> None:
        for kind in kinds(guard, text, known):
            report.findings.append(Finding(place, str(row_id), kind, user_id))
        values.update(m.value for m in guard.matches(text))

    with Session(store.engine) as session:
        for row in session.execute(select(MemoryRow).execution_options(yield_per=1000)).scalars():
            known = known_for(session, row.user_id)  # a caption holding its own value is found too
            for place, value in (("memory.text", row.text), ("memory.fields", row.fields or {})):
                for text in strings(value):
                    note(place, row.id, row.user_id, text, known)
        for row in session.execute(select(HistoryRow).execution_options(yield_per=1000)).scalars():
            known = known_for(session, row.user_id)
            for place, value in (("memory_history.before", row.before), ("memory_history.after", row.after)):
                for text in strings(guarded_fields(value or {})):  # ids and timestamps are no place for one
                    note(place, row.id, row.user_id, text, known)
        for row in session.execute(select(InputRow)).scalars():
            known = known_for(session, row.user_id)
            for place, text in (("input_log.error", row.error), ("input_log.source_id", row.source_id)):
                if text:
                    note(place, row.id, row.user_id, text, known)
            try:
                payload = store.cipher.decrypt(row.payload)
            except VaultKeyError:
                continue
            if guard.matches(payload):
                report.payload_secrets += 1
        if store.engine.dialect.name == "postgresql":  # the neighbours' words (`store.near`)
            for memory_id, user_id, near in session.execute(sql(
                    "SELECT id, user_id, near FROM memory WHERE near IS NOT NULL")):
                note("memory.near", memory_id, user_id, near or "", known_for(session, user_id))
        if store.engine.dialect.name == "sqlite":
            every = Known(ids={v: "" for k in knowns.values() for v in k.ids})
            for rowid, memory_id, text, near in session.execute(sql("SELECT rowid, memory_id, text, near FROM memory_fts")):
                note("memory_fts.text", f"{rowid} ({memory_id})", None, text or "", every)
                note("memory_fts.near", f"{rowid} ({memory_id})", None, near or "", every)
        every = Known(ids={v: "" for k in knowns.values() for v in k.ids})
        for input_id, text in session.execute(sql("SELECT input_id, text FROM memory_session")):
            note("memory_session.text", input_id, None, text or "", every)
    _scan_documents(store, guard, report, values)
    if data_dir is not None:
        if store.vectors is not None:
            # The files as the engine leaves them at rest: an embedded Chroma released and its graphs
            # zeroed past the elements in use, as `close` does (till then they hold stale process
            # memory, and reading the documents above wrote them back: `store/chroma_files.py`); the
            # next use opens it again.
            store.vectors.close()
        report.findings += scan_files(data_dir, values)
    return report


def _scan_documents(store: MemoryStore, guard: SecretGuard, report: SecretReport, values: set[str]) -> None:
    """Documents in the vector index (this version sends none; older ones sent the text)."""
    collections = getattr(store.vectors, "documents", None)
    if collections is None:
        return
    for user_id, memory_id, document in collections():
        if document:
            for kind in kinds(guard, document, Known()):
                report.findings.append(Finding("vectors.documents", memory_id, kind, user_id))
            values.update(m.value for m in guard.matches(document))


# ---------------------------------------------------------------- repair


def repair(store: MemoryStore, guard: SecretGuard, data_dir: Path | None) -> SecretReport:
    """Move what `scan` finds into the vault, rewrite the rest with placeholders, scan again."""
    done: Counter = Counter()
    users: set[str] = set()
    with Session(store.engine) as session:
        users = set(session.execute(select(col(MemoryRow.user_id)).distinct()).scalars())
        users |= set(session.execute(select(col(HistoryRow.user_id)).distinct()).scalars())
        users |= set(session.execute(select(col(InputRow.user_id)).distinct()).scalars())
    for user_id in sorted(users):
        done += _repair_user(store, guard, user_id)
    rebuilt = _rebuild_documents(store, guard)
    done["vector_collections_rebuilt"] = rebuilt
    with store.engine.begin() as conn:  # each input's episodes, joined again from the rewritten rows
        done["session_rows"] = store.sessions.rebuild(conn)
    with store.engine.begin() as conn:  # full-text rows and the neighbours' words, from the rewritten rows
        done["fts_rows"] = store.fulltext.rebuild(conn)
    if store.engine.dialect.name == "sqlite":
        _compact_sqlite(store)
    if data_dir is not None:
        _compact_chroma(Path(data_dir))
    after = scan(store, guard, data_dir)
    after.repaired = dict(done)
    return after


def _repair_user(store: MemoryStore, guard: SecretGuard, user_id: str) -> Counter:
    done: Counter = Counter()
    new: list[KnowledgeVaultMemory] = []
    with Session(store.engine) as session:
        known = store.known_secrets(session, user_id)
        rewritten: list[tuple[MemoryRow, Any]] = []
        for row in session.execute(select(MemoryRow).where(col(MemoryRow.user_id) == user_id)).scalars():
            record = store.to_record(row, reveal=True)
            cleaned, vault = guard.clean(record, known)
            new += vault
            fresh = store.to_row(cleaned)
            if fresh.text != row.text or fresh.fields != row.fields or fresh.actor != row.actor:
                rewritten.append((row, fresh))
        # history and the input log's plain columns: the same placeholders, new vault entries as needed
        history = list(session.execute(select(HistoryRow).where(col(HistoryRow.user_id) == user_id)).scalars())
        for row in history:
            for name in ("before", "after"):
                value = getattr(row, name)
                if value is not None:
                    cleaned_value = clean_record(guard, value, _owner("history", row.id, user_id), known, new)
                    if cleaned_value != value:
                        setattr(row, name, cleaned_value)
                        done["history_events"] += 1
        for row in session.execute(select(InputRow).where(col(InputRow.user_id) == user_id)).scalars():
            for name in ("error", "source_id"):
                value = getattr(row, name)
                if value:
                    cleaned_text = guard.clean_text(value, _owner("input", row.id, user_id), name, known, new)
                    if cleaned_text != value:
                        setattr(row, name, cleaned_text)
                        done["input_log_fields"] += 1
        for row, fresh in rewritten:
            embedding_changed = store.to_record(row).embedding_text() != store.to_record(fresh).embedding_text()
            row.text, row.fields, row.actor = fresh.text, fresh.fields, fresh.actor
            if embedding_changed:
                row.embedding_model = None  # re-embedded below from the placeholder text
            done["memories"] += 1
        stale = [row.id for row, _ in rewritten if row.embedding_model is None]
        session.commit()
    if new:
        store.apply([InsertOp(memory=m) for m in new], user_id=user_id, actor=DOCTOR_ACTOR)
        done["vaulted"] += len(new)
    if stale and store.vectors is not None and store.embedder is not None:
        _reembed(store, user_id, stale)
    return done


def _reembed(store: MemoryStore, user_id: str, memory_ids: list[str]) -> None:
    from mirix_py.store.vectors import VectorItem

    assert store.vectors is not None and store.embedder is not None
    with Session(store.engine) as session:
        rows = list(session.execute(select(MemoryRow).where(col(MemoryRow.id).in_(memory_ids))).scalars())
        vectors = store.embedder.embed([store.to_record(r).embedding_text() for r in rows])
        store.vectors.upsert(user_id, [VectorItem(r.id, v, r.memory_type) for r, v in zip(rows, vectors)])
        for row in rows:
            row.embedding_model = store.embedder.name
        session.commit()


def _rebuild_documents(store: MemoryStore, guard: SecretGuard) -> int:
    """A user collection that holds documents is dropped and re-embedded from SQL: updating a
    document leaves the old one in Chroma's own log, dropping the collection purges it."""
    vectors = store.vectors
    documents = getattr(vectors, "documents", None)
    if vectors is None or documents is None or store.embedder is None:
        return 0
    users = sorted({user_id for user_id, _, document in documents() if document})
    for user_id in users:
        vectors.drop_user(user_id)
        with Session(store.engine) as session:
            ids = list(session.execute(select(col(MemoryRow.id)).where(col(MemoryRow.user_id) == user_id)).scalars())
        for start in range(0, len(ids), 256):
            _reembed(store, user_id, ids[start:start + 256])
    return len(users)


def _compact_sqlite(store: MemoryStore) -> None:
    """Rewrite the database without free pages and empty its write-ahead log."""
    with store.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.exec_driver_sql("INSERT INTO memory_fts(memory_fts) VALUES('optimize')")
        conn.exec_driver_sql("INSERT INTO memory_session(memory_session) VALUES('optimize')")
        conn.exec_driver_sql("VACUUM")
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def _compact_chroma(data_dir: Path) -> None:
    """Vacuum Chroma's database and zero the stale process memory in its graph files. The VACUUM runs
    in a process of its own (`chroma_files.vacuum`): the engine's embedded Chroma may be open here, and
    its SQLite does not see this process's other SQLite's locks."""
    scrub(data_dir / "chroma")
    path = data_dir / "chroma" / DATABASE
    if path.exists():
        vacuum(path)
