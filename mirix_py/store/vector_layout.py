"""Which vector index an engine uses: Chroma (embedded or a server) or pgvector in its own database.

`MIRIX_VECTOR_STORE` says it outright (`chroma` or `pgvector`); with `auto` (the default) a Chroma
URL means a Chroma server, a PostgreSQL database that has the `vector` extension means pgvector
(one system to run and back up), and anything else means embedded Chroma under the data dir.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Engine

from mirix_py.errors import InvalidInput
from mirix_py.store.embeddings import Embedder
from mirix_py.store.vectors import ChromaVectorIndex, VectorIndex

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


def open_vector_index(engine: Engine, *, requested: str, chroma_url: str | None, chroma_dir: Path,
                      embedder: Embedder | None) -> VectorIndex:
    from mirix_py.store.pgvectors import PgVectorIndex, has_extension

    found = False
    if engine.dialect.name == "postgresql" and requested == "auto" and not chroma_url:
        with engine.connect() as conn:
            found = has_extension(conn)
    kind = choose(requested, chroma_url=chroma_url, dialect=engine.dialect.name, has_extension=found)
    if kind == "chroma-server":
        return ChromaVectorIndex.server(chroma_url)  # type: ignore[arg-type]
    if kind == "chroma-embedded":
        return ChromaVectorIndex.embedded(chroma_dir)
    index = PgVectorIndex(engine)
    if embedder is not None:
        index.ensure(embedder.dim)
    return index
