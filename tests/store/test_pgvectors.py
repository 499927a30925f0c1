"""pgvector index: chosen by settings or by the database, sized to the embedder, written in the
transaction of the rows, scoped by user (on the real PostgreSQL server with pgvector)."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.tools.ops import InsertOp
from mirix_py.records import EpisodicMemory, SemanticMemory
from mirix_py.store import vector_layout
from mirix_py.store.pgvectors import (
    HNSW_INDEX, QUERY_SETTINGS, PgVectorIndex, PgVectorUnavailable, column_dimension, parse_vector, vector_literal,
)


class TinyEmbedder:
    """Deterministic 3-d vectors: enough to check dimensions and ordering without a model."""

    name = "tiny"
    dim = 3

    def embed(self, texts):
        return [[1.0, float(len(t) % 7), float(sum(map(ord, t)) % 11)] for t in texts]


def test_choice_of_vector_store():
    choose = vector_layout.choose
    assert choose("auto", chroma_url=None, dialect="sqlite", has_extension=False) == "chroma-embedded"
    assert choose("auto", chroma_url=None, dialect="postgresql", has_extension=False) == "chroma-embedded"
    assert choose("auto", chroma_url=None, dialect="postgresql", has_extension=True) == "pgvector"
    assert choose("auto", chroma_url="http://x:1", dialect="postgresql", has_extension=True) == "chroma-server"
    assert choose("chroma", chroma_url=None, dialect="postgresql", has_extension=True) == "chroma-embedded"
    assert choose("pgvector", chroma_url="http://x:1", dialect="postgresql", has_extension=False) == "pgvector"
    with pytest.raises(InvalidInput, match="needs a PostgreSQL"):
        choose("pgvector", chroma_url=None, dialect="sqlite", has_extension=False)
    with pytest.raises(InvalidInput, match="unknown vector store"):
        choose("faiss", chroma_url=None, dialect="sqlite", has_extension=False)


def test_vector_text_form_round_trips():
    assert parse_vector(vector_literal([0.5, -1.0, 1e-7])) == [0.5, -1.0, 1e-7]


def test_sqlite_engine_refuses_pgvector(tmp_path):
    with pytest.raises(InvalidInput, match="needs a PostgreSQL"):
        Mirix(tmp_path / "d", embedder=None, vector_store="pgvector")


def test_a_server_without_pgvector_is_refused_clearly_and_auto_keeps_chroma(tmp_path, pg_schema_url):
    with pytest.raises(PgVectorUnavailable, match="no pgvector extension"):
        Mirix(tmp_path / "a", embedder=None, database_url=pg_schema_url, vector_store="pgvector")
    with Mirix(tmp_path / "b", embedder=None, database_url=pg_schema_url) as mx:
        assert mx.describe()["vectors"] == "chroma-embedded"


def test_database_with_the_extension_gets_pgvector_by_default(tmp_path, pgvector_schema_url, embedder, user_id):
    with Mirix(tmp_path / "d", embedder=embedder, database_url=pgvector_schema_url) as mx:
        assert mx.describe()["vectors"] == "pgvector"
        with mx.engine.connect() as conn:
            assert column_dimension(conn) == embedder.dim
            indexdef = conn.execute(text("SELECT indexdef FROM pg_indexes WHERE indexname = :i"),
                                    {"i": HNSW_INDEX}).scalar()
        assert "hnsw" in indexdef and "vector_cosine_ops" in indexdef
        mx.add("Our cat Miso sleeps on the radiator", user_id=user_id)
        assert mx.search("where does the cat nap", user_id=user_id, method="embedding")[0].memory.summary.startswith("Our cat")
        assert not (tmp_path / "d" / "chroma").exists()  # nothing written beside the database


def test_rows_and_vectors_commit_together(tmp_path, pgvector_schema_url, user_id, monkeypatch):
    with Mirix(tmp_path / "d", embedder=TinyEmbedder(), database_url=pgvector_schema_url) as mx:
        ok = mx.store.apply([InsertOp(memory=SemanticMemory(user_id=user_id, name="Rex", summary="Rex is a dog"))],
                            user_id=user_id, actor="t")
        assert mx.store.vectors.ids(user_id) == {ok[0].memory_id}

        def broken_write(conn, user, items, deletes=()):
            conn.execute(text("SELECT 1"))  # inside the transaction, then the vector write fails
            raise RuntimeError("vector write failed")

        monkeypatch.setattr(mx.store.vectors, "write", broken_write)
        with pytest.raises(RuntimeError, match="vector write failed"):
            mx.store.apply([InsertOp(memory=SemanticMemory(user_id=user_id, name="Tom", summary="Tom is a cat"))],
                           user_id=user_id, actor="t")
        assert [m.name for m in mx.list(user_id=user_id)] == ["Rex"]  # no row without its vector
        assert mx.history(ok[0].memory_id, user_id=user_id)
        monkeypatch.undo()
        mx.delete(ok[0].memory_id, user_id=user_id)
        assert mx.store.vectors.ids(user_id) == set()


def test_search_is_scoped_by_user_and_type(tmp_path, pgvector_schema_url, embedder, user_id):
    with Mirix(tmp_path / "d", embedder=embedder, database_url=pgvector_schema_url) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary="Went kayaking on the lake")),
                        InsertOp(memory=SemanticMemory(user_id=user_id, name="Kayak", summary="The kayak is red"))],
                       user_id=user_id, actor="t")
        mx.store.apply([InsertOp(memory=EpisodicMemory(user_id="other", summary="Went kayaking on the lake"))],
                       user_id="other", actor="t")
        hits = mx.search("kayaking", user_id=user_id, method="embedding")
        assert {h.memory.user_id for h in hits} == {user_id} and len(hits) == 2
        typed = mx.search("kayaking", user_id=user_id, method="embedding", memory_types=["semantic"])
        assert [h.memory.name for h in typed] == ["Kayak"]


def test_query_settings_hold_for_the_pooled_connection_and_follow_a_change(tmp_path, pgvector_schema_url, user_id):
    with Mirix(tmp_path / "d", embedder=TinyEmbedder(), database_url=pgvector_schema_url) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary="Went kayaking"))], user_id=user_id,
                       actor="t")
    engine = create_engine(pgvector_schema_url, pool_size=1, max_overflow=0)  # one connection: reused each time
    index = PgVectorIndex(engine)
    try:
        assert len(index.query(user_id, [1.0, 0.0, 0.0], 5)) == 1
        with engine.connect() as conn:  # the pool rolled the last checkout back: the settings stay
            shown = [conn.execute(text(f"SHOW {n}")).scalar() for n in ("hnsw.ef_search", "plan_cache_mode")]
        assert shown == [QUERY_SETTINGS["hnsw.ef_search"], "force_custom_plan"]
        index.settings = {"enable_seqscan": "off"}
        index.query(user_id, [1.0, 0.0, 0.0], 5)
        with engine.connect() as conn:
            shown = [conn.execute(text(f"SHOW {n}")).scalar() for n in ("hnsw.ef_search", "enable_seqscan")]
        assert shown == ["40", "off"]  # the setting no longer asked for is back at the server's default
    finally:
        engine.dispose()


def test_another_embedder_dimension_drops_old_vectors_for_doctor(tmp_path, pgvector_schema_url, embedder, user_id):
    with Mirix(tmp_path / "d", embedder=embedder, database_url=pgvector_schema_url) as mx:
        mx.add("I repaired the garden fence on Sunday", user_id=user_id)
        stored = mx.store.vectors.count(user_id)
        assert stored > 0
    with Mirix(tmp_path / "d", embedder=TinyEmbedder(), database_url=pgvector_schema_url) as mx:
        with mx.engine.connect() as conn:
            assert column_dimension(conn) == 3
        report = mx.doctor()
        assert len(report.rows_without_vectors) == stored
        assert mx.doctor(repair=True).clean
        assert mx.store.vectors.count(user_id) == stored


def test_every_stored_vector_is_reached_by_a_query_with_itself_and_survives_a_rebuild(tmp_path, pgvector_schema_url,
                                                                                      embedder, user_id):
    with Mirix(tmp_path / "d", embedder=embedder, database_url=pgvector_schema_url) as mx:
        mx.add([{"role": "user", "content": f"Note {i}: I planted {i} tulips in the front garden."} for i in range(12)],
               user_id=user_id)
        index = mx.store.vectors
        stored = index.ids(user_id)
        assert len(stored) >= 12 and index.unreachable(user_id) == []
        assert index.rebuild(user_id) == len(stored) and index.ids(user_id) == stored
        assert index.unreachable(user_id) == []
        assert index.unreachable(user_id, only=sorted(stored)[:3] + ["gone"]) == [] and index.unreachable(user_id, only=[]) == []
