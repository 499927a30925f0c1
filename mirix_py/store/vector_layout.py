"""Which vector index an engine uses: Chroma (embedded or a server) or pgvector in its own database.

`MIRIX_VECTOR_STORE` says it outright (`chroma` or `pgvector`); with `auto` (the default) a Chroma
URL means a Chroma server, a PostgreSQL database that has the `vector` extension means pgvector
(one system to run and back up), and anything else means embedded Chroma under the data dir. A
new PostgreSQL database (no memories yet) whose server offers the extension gets it created, so
every engine on it shares pgvector rather than each keeping vectors in its own data dir; where
creating it is not allowed, the engine says why and keeps embedded Chroma.

On PostgreSQL the database records where its vectors are (a data dir's embedded Chroma, a Chroma
server, pgvector): `auto` keeps them there, and an engine that would keep them elsewhere is refused
(`store.vector_home`); pgvector takes the record over (`mirix migrate-vectors`).
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


def check_choice(requested: str) -> None:
    """Refuse a vector store that is none of `CHOICES`, before anything is opened."""
    if requested not in CHOICES:
        raise InvalidInput(f"unknown vector store {requested!r}: use one of {list(CHOICES)}")


def choose(requested: str, *, chroma_url: str | None, dialect: str, has_extension: bool) -> str:
    """'chroma-server', 'chroma-embedded' or 'pgvector' for these settings and this database."""
    check_choice(requested)
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
        url = chroma_url or ""
        server = ChromaVectorIndex.server(url)
        if engine.dialect.name == "postgresql":  # held to the server the database records
            try:
                with engine.begin() as conn:
                    vector_home.hold_server(conn, vector_home.shown_url(url), server.has_marker, server.make_marker)
            except BaseException:
                server.close()
                raise
        return server
    if kind == "chroma-embedded":
        return ChromaVectorIndex.embedded(data_dir / "chroma")
    index = PgVectorIndex(engine)
    if embedder is not None:
        index.ensure(embedder.dim)
    with engine.begin() as conn:  # recorded once the index works: a failed open records nothing
        vector_home.hold_pgvector(conn)
    return index


def settle(engine: Engine, *, requested: str, chroma_url: str | None, data_dir: Path) -> str:
    """The index kind an engine with these settings uses on this database, deciding it as its open
    does (a restore decides before its rows are in, while a new database is still new). On PostgreSQL
    the database's record of where its vectors are decides `auto` and refuses another place
    (`vector_home`); a Chroma server is checked against the record once it is reached
    (`open_vector_index`)."""
    if engine.dialect.name != "postgresql":
        return choose(requested, chroma_url=chroma_url, dialect=engine.dialect.name, has_extension=False)
    check_choice(requested)
    with engine.begin() as conn:
        conn.execute(vector_home.RECORD_LOCK)
        if requested == "pgvector":  # recorded by the open, once its index works
            return "pgvector"
        if chroma_url:
            known = vector_home.recorded(conn)
            if known is not None and not isinstance(known, vector_home.ChromaServer):
                mine = vector_home.ChromaServer(id="", url=vector_home.shown_url(chroma_url))
                raise vector_home.VectorsElsewhere(known, mine)
            return "chroma-server"
        return settle_on_postgres(conn, requested, data_dir)


def settle_on_postgres(conn: Connection, requested: str, data_dir: Path) -> str:
    """'pgvector' or 'chroma-embedded' for an engine without a Chroma server on this PostgreSQL
    database: where the database records its vectors, `auto` keeps them there; else, with `auto`, the
    extension is created first where the database is new; embedded Chroma is held to the data dir the
    database records. One decision at a time (`vector_home`'s lock)."""
    from mirix_py.store.pgvectors import has_extension

    conn.execute(vector_home.RECORD_LOCK)
    known = vector_home.recorded(conn)
    if isinstance(known, vector_home.ChromaServer):
        raise vector_home.VectorsElsewhere(known, vector_home.this_data_dir(data_dir, make_id=False))
    if requested == "auto" and isinstance(known, vector_home.PgVector):
        kind = "pgvector"
    elif requested == "auto" and isinstance(known, vector_home.EmbeddedChroma):
        kind = "chroma-embedded"
    else:
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
