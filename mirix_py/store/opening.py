"""Opening a data dir's store: the database with its schema migrated (by an engine without the
writer lock only when it can take that lock for the upgrade), the vault key (refused when
the database's values were encrypted under another), the vector index the settings choose
(`store.vector_layout`), and the memory store and input log over them; with a read URL, a second
memory store over the replica for what only searches."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import col

from mirix_py.store import writer_lock
from mirix_py.store.crypto import Cipher, VaultKeyMismatch, load_or_create_key
from mirix_py.store.db import create_schema, make_engine
from mirix_py.store.migrations import behind, current_revision, head_revision
from mirix_py.store.embeddings import Embedder
from mirix_py.secrets.guard import SecretGuard
from mirix_py.store.fulltext import FullTextIndex
from mirix_py.store.inputs import InputLog
from mirix_py.store.memories import MemoryStore
from mirix_py.store.pg_fulltext import PostgresFullText
from mirix_py.store.sqlite_fulltext import SQLiteFullText
from mirix_py.store.tables import InputRow, MemoryRow
from mirix_py.store.vector_layout import open_vector_index
from mirix_py.store.write_marks import WriteMarks


@dataclass
class OpenStore:
    engine: Engine
    memories: MemoryStore
    inputs: InputLog
    reading: MemoryStore  # searches read here: `memories` itself, or the same over a replica


def fulltext_for(engine: Engine) -> FullTextIndex:
    """The full-text index of this engine's database."""
    return PostgresFullText() if engine.dialect.name == "postgresql" else SQLiteFullText()


def open_store(sql_url: str, data_dir: Path, *, sqlite_driver: str, vault_key: str | None, embedder: Embedder | None,
               vector_store: str, chroma_url: str | None, guard: SecretGuard,
               redact: Callable[[str], str], read_url: str | None = None,
               read_your_writes: bool = True) -> OpenStore:
    """`guard` keeps secrets out of every memory written; `redact` out of the input log's plain columns;
    `read_url`: a streaming replica's URL (`Settings.database_read_url`); `read_your_writes`: a user's
    searches read the primary until the replica has replayed that user's last write (`store.write_marks`)."""
    engine = make_engine(sql_url, sqlite_driver)
    try:
        bring_schema_up(engine, sql_url, data_dir)
        cipher = Cipher(load_or_create_key(data_dir, vault_key))
        refuse_another_key(engine, cipher)
        vectors = open_vector_index(engine, requested=vector_store, chroma_url=chroma_url, data_dir=data_dir,
                                    embedder=embedder)
    except Exception:  # refused: nothing stays connected
        engine.dispose()
        raise
    read_engine = make_engine(read_url) if read_url else None
    marks = WriteMarks(read_engine) if read_engine is not None and read_your_writes else None
    memories = MemoryStore(engine, fulltext_for(engine), cipher, vectors, embedder, guard=guard, write_marks=marks)
    inputs = InputLog(engine, cipher, redact=redact)
    if read_engine is None:
        return OpenStore(engine, memories, inputs, memories)
    return OpenStore(engine, memories, inputs, replica_store(memories, read_engine))


def bring_schema_up(engine: Engine, sql_url: str, data_dir: Path) -> None:
    """Create or upgrade the schema. An engine on an embedded store without the data dir's writer
    lock (`lock=False`: a read command beside `mirix serve`) leaves a current schema as it is, and
    upgrades one that is behind only under that lock, or beside a holder of this version (its lock
    stamp names this schema): an upgrade beside an older mirix-py holding it left that process
    writing rows in its older layout, which this version's searches miss (`UpgradeBlocked` instead).
    PostgreSQL has no writer lock: engines share a database, and its upgrade waits on an advisory
    lock (`migrations.upgrade`)."""
    if not writer_lock.embedded_sql(sql_url) or writer_lock.held_here(data_dir):
        create_schema(engine)
        return
    if not behind(engine):
        return
    try:
        held = writer_lock.acquire(data_dir, upgrading=True)
    except writer_lock.StoreBusy as busy:
        holder = busy.holder or writer_lock.read_holder(data_dir)  # a holder that had not stamped it yet
        if holder.get("schema") == head_revision():  # this version's writer: it writes this layout, upgrades too
            create_schema(engine)
            return
        if not behind(engine):  # upgraded meanwhile
            return
        message = writer_lock.upgrade_blocked_message(data_dir, holder, current_revision(engine), head_revision())
        raise writer_lock.UpgradeBlocked(message, holder) from None
    try:
        create_schema(engine)
    finally:
        held.release()


KEY_SAMPLE = 3  # encrypted values tried at open: one damaged value must not refuse the right key


def refuse_another_key(engine: Engine, cipher: Cipher) -> None:
    """Refuse the engine when its vault key opens none of a few of the database's encrypted values
    (input payloads, else vault secrets): every process on one database must share the key, or it
    could read none of the others' inputs and secrets and write its own under a key they lack."""
    with engine.connect() as conn:
        tokens = conn.execute(select(col(InputRow.payload)).limit(KEY_SAMPLE)).scalars().all() or \
            conn.execute(select(col(MemoryRow.secret)).where(col(MemoryRow.secret).is_not(None))
                         .limit(KEY_SAMPLE)).scalars().all()
    if tokens and not any(cipher.opens(token) for token in tokens if token):
        raise VaultKeyMismatch(
            "this database's vault key differs from this engine's: every process must use the same "
            "MIRIX_VAULT_KEY (none of its encrypted values opens with this key; set MIRIX_VAULT_KEY, or the "
            "data dir's vault.key, to the key of the engines that wrote it)")


def replica_store(primary: MemoryStore, read_engine: Engine) -> MemoryStore:
    """A memory store over a streaming replica of `primary`'s database, for searches: its rows, full
    text and pgvector vectors are read there (a Chroma server's vectors are the primary's index, which
    has no replica). The full-text index object is the primary's, so a write through the primary drops
    the statistics it cached for the user. Nothing is created on the replica: its schema is the
    primary's, replayed."""
    from mirix_py.store.pgvectors import PgVectorIndex

    vectors = primary.vectors
    if isinstance(vectors, PgVectorIndex):
        read_vectors = PgVectorIndex(read_engine, vectors.settings, read_only=True)
        read_vectors.dimension = vectors.dimension  # the primary's, which the replica may not have replayed yet
        vectors = read_vectors
    return MemoryStore(read_engine, primary.fulltext, primary.cipher, vectors, primary.embedder, guard=primary.guard)
