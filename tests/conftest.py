"""Shared fixtures. Storage and search tests run on SQLite and, when MIRIX_TEST_PG_URL is set
(scripts/test.sh starts a real server), on PostgreSQL; under CI a missing server is a failure."""

from __future__ import annotations

import os
import uuid

import pytest
from sqlalchemy import create_engine, text

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

PG_URL = os.environ.get("MIRIX_TEST_PG_URL")
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


@pytest.fixture
def pg_schema_url():
    """A PostgreSQL URL whose search_path is a fresh schema, dropped afterwards."""
    _require(PG_URL, "MIRIX_TEST_PG_URL")
    schema = "t_" + uuid.uuid4().hex[:12]
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in PG_URL else "?"
    yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request):
    """The SQL URL for the backend under test (None means SQLite under the data dir)."""
    if request.param == "sqlite":
        yield None
    else:
        yield request.getfixturevalue("pg_schema_url")


@pytest.fixture
def mx(tmp_path, embedder, backend):
    from mirix_py.engine import Mirix

    engine = Mirix(tmp_path / "data", embedder=embedder, database_url=backend)
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
