"""Engines on one PostgreSQL database share one vector index: a new database whose server offers
pgvector gets the extension (auto), and embedded Chroma is held to the one data dir the database
records (`store/vector_layout.py`, `store/vector_home.py`)."""

from __future__ import annotations

import logging
import re
import os
import shutil
import uuid

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput

PGVECTOR_URL = os.environ.get("MIRIX_TEST_PGVECTOR_URL")
ELSEWHERE = "this database's vectors are kept in the embedded Chroma of the data dir"
COTTAGE = "My grandmother's cottage stands beside a windmill in Friesland."


@pytest.fixture(autouse=True)
def one_vault_key(monkeypatch):
    """Every engine here shares the vault key, as processes on one database must."""
    monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())


@pytest.fixture
def server_url() -> str:
    """The pgvector server's URL: a server that offers the `vector` extension."""
    if not PGVECTOR_URL:
        if os.environ.get("CI") == "true":
            pytest.fail("MIRIX_TEST_PGVECTOR_URL is not set in CI: scripts/services.sh must start it")
        pytest.skip("MIRIX_TEST_PGVECTOR_URL not set (run through scripts/test.sh)")
    return PGVECTOR_URL


def _admin(server_url: str):
    return create_engine(make_url(server_url).set(database="postgres"), isolation_level="AUTOCOMMIT")


@pytest.fixture
def new_database(new_pgvector_database):
    """A new database on the pgvector server: the extension is offered, not created."""
    return new_pgvector_database


@pytest.fixture
def unprivileged_database(server_url):
    """A new database on the pgvector server owned by a role that may not create the extension
    (pgvector is not a trusted extension): its URL, as that role."""
    name = "t_" + uuid.uuid4().hex[:12]
    admin = _admin(server_url)
    with admin.connect() as conn:
        conn.execute(text(f"CREATE ROLE {name} LOGIN"))
        conn.execute(text(f"CREATE DATABASE {name} OWNER {name}"))
    yield make_url(server_url).set(database=name, username=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE {name} WITH (FORCE)"))
        conn.execute(text(f"DROP ROLE {name}"))
    admin.dispose()


def _found(mx: Mirix, user_id: str) -> list[str]:
    return [h.memory.summary for h in mx.search("where is granny's house", user_id=user_id, method="embedding")
            if h.memory.memory_type.value == "episodic"]


def test_a_second_data_dir_on_one_database_with_embedded_chroma_is_refused(tmp_path, pg_schema_url, embedder,
                                                                            user_id):
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pg_schema_url) as first:
        assert first.describe()["vectors"] == "chroma-embedded"  # this server has no pgvector
        first.add(COTTAGE, user_id=user_id)
    with pytest.raises(InvalidInput, match=ELSEWHERE) as refused:
        Mirix(tmp_path / "b", embedder=embedder, database_url=pg_schema_url)
    message = str(refused.value)
    assert str((tmp_path / "a").resolve()) in message and str((tmp_path / "b").resolve()) in message
    assert "MIRIX_VECTOR_STORE=pgvector" in message and "MIRIX_CHROMA_URL" in message
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pg_schema_url) as again:  # the recorded data dir
        assert _found(again, user_id) == [COTTAGE]


def test_a_data_dir_that_moved_keeps_its_vectors_and_is_not_refused(tmp_path, pg_schema_url, embedder, user_id):
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pg_schema_url) as first:
        first.add(COTTAGE, user_id=user_id)
    shutil.move(tmp_path / "a", tmp_path / "moved")
    with Mirix(tmp_path / "moved", embedder=embedder, database_url=pg_schema_url) as moved:
        assert _found(moved, user_id) == [COTTAGE]
    with pytest.raises(InvalidInput, match=re.escape(str((tmp_path / "moved").resolve()))):  # the record follows the move
        Mirix(tmp_path / "other", embedder=embedder, database_url=pg_schema_url)
    assert (tmp_path / "moved" / "chroma.id").stat().st_mode & 0o777 == 0o600


def test_pgvector_takes_the_record_over_and_then_embedded_chroma_is_refused(tmp_path, pgvector_schema_url, embedder,
                                                                           user_id, caplog):
    """pgvector is where `mirix migrate-vectors` moves a database's vectors: it may open beside the recorded
    data dir, and from then on an engine keeping them in a data dir is refused, and `auto` keeps pgvector."""
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pgvector_schema_url, vector_store="chroma") as first:
        first.add(COTTAGE, user_id=user_id)
    with pytest.raises(InvalidInput, match=ELSEWHERE):
        Mirix(tmp_path / "b", embedder=embedder, database_url=pgvector_schema_url, vector_store="chroma")
    with caplog.at_level(logging.WARNING, logger="mirix_py.store"):
        with Mirix(tmp_path / "c", embedder=embedder, database_url=pgvector_schema_url,
                   vector_store="pgvector") as other:
            assert other.describe()["vectors"] == "pgvector"
    assert any("keeps them in pgvector" in r.getMessage() and "migrate-vectors" in r.getMessage() for r in caplog.records)
    with pytest.raises(InvalidInput, match=r"kept in this database \(pgvector\).*MIRIX_VECTOR_STORE=pgvector"):
        Mirix(tmp_path / "a", embedder=embedder, database_url=pgvector_schema_url, vector_store="chroma")
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pgvector_schema_url) as auto:
        assert auto.describe()["vectors"] == "pgvector"


@pytest.fixture
def chroma_database(chroma_url):
    """A database of its own on the test Chroma server: `(url, the same database under another host name)`."""
    name = "vh" + uuid.uuid4().hex[:12]
    other_host = chroma_url.replace("127.0.0.1", "localhost")
    assert other_host != chroma_url
    return f"{chroma_url}/{name}", f"{other_host}/{name}"


def test_a_chroma_server_beside_a_recorded_data_dir_is_refused(tmp_path, pg_schema_url, chroma_database, embedder,
                                                                user_id):
    """Each engine saw every row and only its own vectors: a search's vector leg missed the other's memories."""
    server, _ = chroma_database
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pg_schema_url) as first:
        first.add(COTTAGE, user_id=user_id)
    with pytest.raises(InvalidInput, match=ELSEWHERE + ".*the Chroma server"):
        Mirix(tmp_path / "b", embedder=embedder, database_url=pg_schema_url, chroma_url=server)


def test_a_data_dir_beside_a_recorded_chroma_server_is_refused(tmp_path, pg_schema_url, chroma_database, embedder,
                                                               user_id):
    server, _ = chroma_database
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pg_schema_url, chroma_url=server) as on_server:
        on_server.add(COTTAGE, user_id=user_id)
    with pytest.raises(InvalidInput, match="kept in the Chroma server .* its own data dir .*MIRIX_CHROMA_URL set to "
                                           "that server"):
        Mirix(tmp_path / "b", embedder=embedder, database_url=pg_schema_url)
    assert not (tmp_path / "b" / "chroma.id").exists()


def test_the_recorded_chroma_server_is_known_under_another_url_and_another_server_is_refused(
        tmp_path, pg_schema_url, chroma_database, chroma_url, embedder, user_id):
    server, same_server = chroma_database
    with Mirix(tmp_path / "a", embedder=embedder, database_url=pg_schema_url, chroma_url=server) as first:
        first.add(COTTAGE, user_id=user_id)
    with Mirix(tmp_path / "b", embedder=embedder, database_url=pg_schema_url, chroma_url=same_server) as again:
        assert _found(again, user_id) == [COTTAGE]
    another = f"{chroma_url}/vh{uuid.uuid4().hex[:12]}"  # another database of the server: other collections
    with pytest.raises(InvalidInput, match="kept in the Chroma server .*would keep them in the Chroma server"):
        Mirix(tmp_path / "c", embedder=embedder, database_url=pg_schema_url, chroma_url=another)


def test_auto_creates_the_extension_on_a_new_database_so_every_engine_shares_pgvector(tmp_path, new_database,
                                                                                      embedder, user_id):
    with Mirix(tmp_path / "a", embedder=embedder, database_url=new_database) as first:
        assert first.describe()["vectors"] == "pgvector"
        first.add(COTTAGE, user_id=user_id)
    with Mirix(tmp_path / "b", embedder=embedder, database_url=new_database) as second:
        assert second.describe()["vectors"] == "pgvector"
        assert _found(second, user_id) == [COTTAGE]
    assert not (tmp_path / "a" / "chroma").exists() and not (tmp_path / "b" / "chroma").exists()


def test_auto_keeps_embedded_chroma_where_its_memories_already_are(tmp_path, new_database, embedder, user_id):
    """A store written before the extension was created by auto: its vectors are in its data dir, so it
    stays there (an empty pgvector table would lose every search's vector leg)."""
    with Mirix(tmp_path / "a", embedder=embedder, database_url=new_database, vector_store="chroma") as first:
        first.add(COTTAGE, user_id=user_id)
    admin = create_engine(new_database)
    with admin.begin() as conn:
        conn.execute(text("COMMENT ON TABLE memory IS NULL"))  # as written before the record existed
        assert not conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).first()
    admin.dispose()
    with Mirix(tmp_path / "a", embedder=embedder, database_url=new_database) as again:
        assert again.describe()["vectors"] == "chroma-embedded"
        assert _found(again, user_id) == [COTTAGE]
    with pytest.raises(InvalidInput, match=ELSEWHERE):  # and it is recorded now
        Mirix(tmp_path / "b", embedder=embedder, database_url=new_database)


def test_auto_without_the_right_to_create_the_extension_says_why_and_holds_one_data_dir(
        tmp_path, unprivileged_database, embedder, user_id, caplog):
    with caplog.at_level(logging.WARNING, logger="mirix_py.store"):
        with Mirix(tmp_path / "a", embedder=embedder, database_url=unprivileged_database) as first:
            assert first.describe()["vectors"] == "chroma-embedded"
            first.add(COTTAGE, user_id=user_id)
    assert any("could not be created" in r.getMessage() and "permission denied" in r.getMessage()
               for r in caplog.records)
    with pytest.raises(InvalidInput, match=ELSEWHERE):  # the role owns the tables: the record is written
        Mirix(tmp_path / "b", embedder=embedder, database_url=unprivileged_database)
