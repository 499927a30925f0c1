"""Shared fixtures. Storage and search tests run on the three layouts (`layout`): SQLite + embedded
Chroma, PostgreSQL + a Chroma server, PostgreSQL + pgvector; scripts/test.sh starts the real servers
(MIRIX_TEST_PG_URL, MIRIX_TEST_CHROMA_URL, MIRIX_TEST_PGVECTOR_URL); under CI a missing server is a failure."""

from __future__ import annotations

import os
import uuid

import pytest
from sqlalchemy import create_engine, text

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

PG_URL = os.environ.get("MIRIX_TEST_PG_URL")
PGVECTOR_URL = os.environ.get("MIRIX_TEST_PGVECTOR_URL")
CHROMA_URL = os.environ.get("MIRIX_TEST_CHROMA_URL")
IN_CI = os.environ.get("CI") == "true"


def _require(value: str | None, what: str) -> None:
    if value:
        return
    if IN_CI:
        pytest.fail(f"{what} is not set in CI: scripts/services.sh must start it")
    pytest.skip(f"{what} not set (run through scripts/test.sh)")


@pytest.fixture(scope="session")
def embedder():
    from mirix_py.store.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def _schema_url(server_url: str, *, public: bool = False):
    """A URL of `server_url` whose search_path is a fresh schema (then `public`, where the `vector`
    extension's type and operators live), dropped afterwards."""
    schema = "t_" + uuid.uuid4().hex[:12]
    admin = create_engine(server_url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in server_url else "?"
    yield f"{server_url}{sep}options=-csearch_path%3D{schema}" + ("%2Cpublic" if public else "")
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture
def pg_schema_url():
    """A PostgreSQL URL whose search_path is a fresh schema, dropped afterwards."""
    _require(PG_URL, "MIRIX_TEST_PG_URL")
    yield from _schema_url(PG_URL)


@pytest.fixture
def pgvector_schema_url():
    """A fresh schema on the PostgreSQL server whose database has the `vector` extension."""
    _require(PGVECTOR_URL, "MIRIX_TEST_PGVECTOR_URL")
    yield from _schema_url(PGVECTOR_URL, public=True)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request):
    """The SQL URL for the backend under test (None means SQLite under the data dir)."""
    if request.param == "sqlite":
        yield None
    else:
        yield request.getfixturevalue("pg_schema_url")


@pytest.fixture
def more_pgvector_schemas():
    """Call it for another fresh schema on the pgvector server (a second database in one test)."""
    _require(PGVECTOR_URL, "MIRIX_TEST_PGVECTOR_URL")
    made = []

    def make() -> str:
        gen = _schema_url(PGVECTOR_URL, public=True)
        made.append(gen)
        return next(gen)

    yield make
    for gen in made:
        next(gen, None)


@pytest.fixture(params=["sqlite", "postgres", "pgvector"])
def layout(request) -> dict:
    """Engine arguments of one deployment layout: SQLite + embedded Chroma, PostgreSQL + a Chroma
    server, PostgreSQL + pgvector (vectors in the same database and transactions as the rows)."""
    if request.param == "sqlite":
        return {}
    if request.param == "postgres":
        return {"database_url": request.getfixturevalue("pg_schema_url"),  # a Chroma database per test
                "chroma_url": request.getfixturevalue("chroma_url").rstrip("/") + "/t_" + uuid.uuid4().hex[:12]}
    return {"database_url": request.getfixturevalue("pgvector_schema_url"), "vector_store": "pgvector"}


@pytest.fixture
def mx(tmp_path, embedder, layout):
    from mirix_py.engine import Mirix

    engine = Mirix(tmp_path / "data", embedder=embedder, **layout)
    yield engine
    engine.close()


@pytest.fixture
def mx_sqlite(tmp_path, embedder):
    from mirix_py.engine import Mirix

    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


@pytest.fixture
def chroma_url():
    _require(CHROMA_URL, "MIRIX_TEST_CHROMA_URL")
    return CHROMA_URL


@pytest.fixture
def user_id():
    return "user-" + uuid.uuid4().hex[:8]
