"""Shared fixtures. Storage and search tests run on the three layouts (`layout`): SQLite + embedded
Chroma, PostgreSQL + a Chroma server, PostgreSQL + pgvector; scripts/test.sh starts the real servers
(MIRIX_TEST_PG_URL, MIRIX_TEST_CHROMA_URL, MIRIX_TEST_PGVECTOR_URL, and the pgvector server's streaming
replica MIRIX_TEST_PGVECTOR_REPLICA_URL); under CI a missing server is a failure."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

PG_URL = os.environ.get("MIRIX_TEST_PG_URL")
PGVECTOR_URL = os.environ.get("MIRIX_TEST_PGVECTOR_URL")
PGVECTOR_REPLICA_URL = os.environ.get("MIRIX_TEST_PGVECTOR_REPLICA_URL")
CHROMA_URL = os.environ.get("MIRIX_TEST_CHROMA_URL")
IN_CI = os.environ.get("CI") == "true"


# The real-model tier (tests marked `real_model`): the suite's longest chain of tests, and all of them
# wait on the two local model servers. Under pytest-xdist they are one unit of work, scheduled first, so
# one worker runs them one after another from the start while the other takes the rest file by file
# (the controller sees node ids only, not marks: `pytest_collection_modifyitems` checks the list).
REAL_MODEL_TESTS = (
    "tests/llm/test_real_model.py::",
    "tests/test_secret_leaks.py::test_no_planted_secret_in_any_byte_or_answer_with_the_local_model",
    "tests/test_secret_leaks.py::test_the_whole_session_with_the_local_model",
)


# Then the longest files, longest first, so that no long file starts last while the other worker has
# nothing left to do (their times are in docs/setup.md, "Where the suite's time goes"); the rest keep
# their order. A file missing here only runs in its collection place.
LONGEST_FILES = (
    "tests/benchmarks/test_tiny_runs.py",
    "tests/benchmarks/test_layout_benches.py",
    "tests/server/test_schemathesis.py",
    "tests/test_wheel.py",
    "tests/test_secret_leaks.py",
    "tests/ingest/test_screenshots.py",
    "tests/agents/offline/test_fact_regressions.py",
    "tests/durability/test_crash_recovery.py",
    "tests/agents/test_update_flow.py",
)


def _in_real_model_tier(nodeid: str) -> bool:
    return nodeid.startswith(REAL_MODEL_TESTS)


def _run_order(nodeid: str) -> int:
    """0 for the real-model tier, then each of LONGEST_FILES in its order, then everything else."""
    if _in_real_model_tier(nodeid):
        return 0
    path = nodeid.split("::", 1)[0]
    return 1 + LONGEST_FILES.index(path) if path in LONGEST_FILES else 1 + len(LONGEST_FILES)


def pytest_collection_modifyitems(config, items):
    """The real-model tier first, the longest files next (stable otherwise); a `real_model` test missing
    from REAL_MODEL_TESTS is an error, so the scheduler's list cannot drift from the marks."""
    unlisted = [i.nodeid for i in items if i.get_closest_marker("real_model") and not _in_real_model_tier(i.nodeid)]
    if unlisted:
        raise pytest.UsageError(f"real_model tests missing from REAL_MODEL_TESTS in tests/conftest.py: {unlisted}")
    gone = [f for f in LONGEST_FILES if not (config.rootpath / f).is_file()]
    if gone:
        raise pytest.UsageError(f"LONGEST_FILES in tests/conftest.py names files that are not there: {gone}")
    items.sort(key=lambda item: _run_order(item.nodeid))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (a file's tests on one worker, its module-scoped servers started once), with the
    real-model tier as one unit of its own."""
    from xdist.scheduler import LoadFileScheduling

    class RealModelTierFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "real-model tier" if _in_real_model_tier(nodeid) else super()._split_scope(nodeid)

    return RealModelTierFirst(config, log)


def _require(value: str | None, what: str) -> None:
    if value:
        return
    if IN_CI:
        pytest.fail(f"{what} is not set in CI: scripts/services.sh must start it")
    pytest.skip(f"{what} not set (run through scripts/test.sh)")


@pytest.fixture(scope="session")
def embedder():
    """The embedder users get by default (MiniLM on ONNX Runtime), one per test process."""
    from mirix_py.store.embeddings import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def torch_embedder():
    """sentence-transformers' embedder (MiniLM on torch), for the tests that hold it to `encode`'s numbers."""
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


@pytest.fixture
def new_pgvector_database():
    """A new database on the pgvector server: the extension is offered, not created. Dropped afterwards."""
    _require(PGVECTOR_URL, "MIRIX_TEST_PGVECTOR_URL")
    name = "t_" + uuid.uuid4().hex[:12]
    admin = create_engine(make_url(PGVECTOR_URL).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    yield make_url(PGVECTOR_URL).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE {name} WITH (FORCE)"))
    admin.dispose()


@pytest.fixture
def pgvector_replica(pgvector_schema_url) -> tuple[str, str]:
    """(primary, replica): a fresh schema's URL on the pgvector server and the same schema's URL on its
    streaming replica (the schema is made on the primary and replayed there)."""
    _require(PGVECTOR_REPLICA_URL, "MIRIX_TEST_PGVECTOR_REPLICA_URL")
    assert pgvector_schema_url.startswith(PGVECTOR_URL)
    return pgvector_schema_url, PGVECTOR_REPLICA_URL + pgvector_schema_url[len(PGVECTOR_URL):]


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


@pytest.fixture
def machine_zone(monkeypatch):
    """Call it with an IANA name to run the test as on a machine in that zone ($TZ, as the C library
    reads it too), whatever this one's; the old zone back afterwards."""
    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()  # TZ as it was, before the C library reads it again
    time.tzset()
