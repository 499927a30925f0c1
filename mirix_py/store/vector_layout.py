"""Which vector index an engine uses: Chroma (embedded or a server) or pgvector in its own database.

`MIRIX_VECTOR_STORE` says it outright (`chroma` or `pgvector`); with `auto` (the default) a Chroma
URL means a Chroma server, a PostgreSQL database that has the `vector` extension means pgvector
(one system to run and back up), and anything else means embedded Chroma under the data dir. A
new PostgreSQL database (no memories yet) whose server offers the extension gets it created, so
every engine on it shares pgvector rather than each keeping vectors in its own data dir; where
creating it is not allowed, the engine says why and keeps embedded Chroma.

Embedded Chroma on PostgreSQL holds vectors only the engines of one data dir see: the database
records which data dir that is, and an engine of another is refused (`store.vector_home`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from mirix_py.errors import InvalidInput
from mirix_py.store import vector_home
from mirix_py.store.embeddings import Embedder
from mirix_py.store.vectors import ChromaVectorIndex, VectorIndex

log = logging.getLogger("mirix_py.store")

CHOICES = ("auto", "chroma", "pgvector")


def choose(requested: str, *, chroma_url: str | None, dialect: str, has_extension: bool) -> str:
    """'chroma-server', 'chroma-embedded' or 'pgvector' for these settings and this database."""
    if requested not in CHOICES:
        raise InvalidInput(f"unknown vector store {requested!r}: use one of {list(CHOICES)}")
    if requested == "pgvector":
        if dialect != "postgresql":
            raise InvalidInput("MIRIX_VECTOR_STORE=pgvector needs a PostgreSQL database (MIRIX_DATABASE_URL)")
        return "pgvector"
    if chroma_url:
        return "chroma-server"
    if requested == "auto" and dialect == "postgresql" and has_extension:
        return "pgvector"
    return "chroma-embedded"


def open_vector_index(engine: Engine, *, requested: str, chroma_url: str | None, data_dir: Path,
                      embedder: Embedder | None) -> VectorIndex:
    """The index these settings choose on this database; embedded Chroma lives in `data_dir/chroma`."""
    from mirix_py.store.pgvectors import PgVectorIndex

    kind = settle(engine, requested=requested, chroma_url=chroma_url, data_dir=data_dir)
    if kind == "chroma-server":
        return ChromaVectorIndex.server(chroma_url)  # type: ignore[arg-type]
    if kind == "chroma-embedded":
        return ChromaVectorIndex.embedded(data_dir / "chroma")
    index = PgVectorIndex(engine)
    if embedder is not None:
        index.ensure(embedder.dim)
    return index


def settle(engine: Engine, *, requested: str, chroma_url: str | None, data_dir: Path) -> str:
    """The index kind an engine with these settings uses on this database, deciding it as its open
    does (a restore decides before its rows are in, while a new database is still new)."""
    if engine.dialect.name == "postgresql" and requested != "pgvector" and not chroma_url:
        with engine.begin() as conn:
            return settle_on_postgres(conn, requested, data_dir)
    return choose(requested, chroma_url=chroma_url, dialect=engine.dialect.name, has_extension=False)


def settle_on_postgres(conn: Connection, requested: str, data_dir: Path) -> str:
    """'pgvector' or 'chroma-embedded' for an engine without a Chroma server on this PostgreSQL
    database: with `auto`, the extension is created first where the database is new; embedded Chroma
    is held to the data dir the database records. One decision at a time (`vector_home`'s lock)."""
    from mirix_py.store.pgvectors import has_extension

    conn.execute(vector_home.RECORD_LOCK)
    found = has_extension(conn)
    if requested == "auto" and not found and _is_new(conn) and _extension_offered(conn):
        found = _create_extension(conn)
    kind = choose(requested, chroma_url=None, dialect="postgresql", has_extension=found)
    if kind == "chroma-embedded":
        vector_home.hold_vectors(conn, vector_home.this_data_dir(data_dir))
    return kind


def _is_new(conn: Connection) -> bool:
    """No memories and no embedded Chroma recorded: no vectors are kept anywhere yet (a store that
    has them in embedded Chroma keeps them there until `mirix migrate-vectors` moves them)."""
    return conn.execute(text("SELECT 1 FROM memory LIMIT 1")).first() is None and vector_home.recorded(conn) is None


def _extension_offered(conn: Connection) -> bool:
    """The server has pgvector installed, so the database can have the extension."""
    return conn.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first() is not None


def _create_extension(conn: Connection) -> bool:
    """Create the `vector` extension; False (with the reason in a warning) when not allowed: pgvector is
    not a trusted extension, so it takes a superuser unless an administrator made it trusted."""
    try:
        with conn.begin_nested():
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
    except DBAPIError as exc:
        from mirix_py.store.pgvectors import has_extension

        if has_extension(conn):  # another engine (`PgVectorIndex`) created it at the same moment
            return True
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        log.warning("the server offers pgvector but the `vector` extension could not be created (%s): vectors are "
                    "kept in embedded Chroma under the data dir, which only engines of this data dir see. Run "
                    "`CREATE EXTENSION vector` in this database as an administrator, or set MIRIX_CHROMA_URL",
                    reason)
        return False
    log.info("created the `vector` extension: vectors are kept in this database (pgvector)")
    return True
