"""pgvector: a large user gets an HNSW graph of their own (a partial index in half precision), which
their queries walk instead of the shared graph and which ranks as an exact scan does; built by
`doctor --repair`, gone with the user."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import text

from mirix_py.engine import Mirix
from mirix_py.tools.ops import InsertOp
from mirix_py.records import SemanticMemory
from mirix_py.store import pgvectors
from mirix_py.store.pgvectors import TABLE, sql_literal, tenant_index_name


class RandomEmbedder:
    """Deterministic 8-d vectors from the text, spread enough for nearest neighbours to differ."""

    name = "random8"
    dim = 8

    def embed(self, texts):
        return [self._one(random.Random(t)) for t in texts]

    @staticmethod
    def _one(rng: random.Random) -> list[float]:
        return [rng.uniform(-1, 1) for _ in range(8)]


BIG, SMALL = "tenant-big", "tenant-o'small"  # a quote in a user id reaches the index predicate


def _fill(mx, user: str, n: int) -> None:
    mx.store.apply([InsertOp(memory=SemanticMemory(user_id=user, name=f"item {i}", summary=f"fact number {i} of {user}"))
                    for i in range(n)], user_id=user, actor="seed")


def _indexes(mx) -> set[str]:
    with mx.store.engine.connect() as conn:
        return set(conn.execute(text("SELECT indexname FROM pg_indexes WHERE tablename = :t AND schemaname = current_schema()"),
                                {"t": TABLE}).scalars())


def _exact(mx, user: str, query: str, k: int) -> list[str]:
    vec = pgvectors.vector_literal(mx.store.embedder.embed([query])[0])
    with mx.store.engine.connect() as conn:
        return list(conn.execute(text(f"SELECT memory_id FROM {TABLE} WHERE user_id = :u "
                                      "ORDER BY embedding <=> CAST(:q AS vector), memory_id LIMIT :k"),
                                 {"u": user, "q": vec, "k": k}).scalars())


@pytest.fixture
def mx(tmp_path, pgvector_schema_url, monkeypatch):
    monkeypatch.setattr(pgvectors, "TENANT_INDEX_MIN", 50)
    with Mirix(tmp_path / "d", embedder=RandomEmbedder(), database_url=pgvector_schema_url, vector_store="pgvector") as m:
        _fill(m, BIG, 120)
        _fill(m, SMALL, 20)
        yield m


def test_doctor_builds_the_graph_of_a_large_user_only(mx):
    before = mx.doctor()
    assert before.clean and before.tenants_without_index == [BIG]  # reported, not a fault
    after = mx.doctor(repair=True)
    assert after.repaired["tenant_indexes"] == 1 and after.tenants_without_index == []
    assert tenant_index_name(BIG) in _indexes(mx) and tenant_index_name(SMALL) not in _indexes(mx)
    assert mx.store.vectors.index_tenant(BIG) == tenant_index_name(BIG)  # building again changes nothing
    assert mx.store.vectors.unreachable(BIG) == []  # checked through the graph the user's queries walk
    assert mx.doctor().clean


def test_a_query_through_the_users_own_graph_finds_the_exact_neighbours(mx):
    mx.store.vectors.index_tenant(BIG)
    mx.store.vectors.index_tenant(SMALL)
    with mx.store.engine.begin() as conn:
        conn.execute(text("ANALYZE"))
    for q in ("fact number 7", "item 99", "something else entirely"):
        for user in (BIG, SMALL):  # fetched four times over, as the search leg does, then cut
            got = [i for i, _ in mx.store.vectors.query(user, mx.store.embedder.embed([q])[0], 40)][:10]
            assert got == _exact(mx, user, q, 10)
    with mx.store.engine.connect() as conn:  # the user's queries can only be served by their own graph
        conn.execute(text("SET enable_sort = off"))  # a tiny table: without this, a scan and a sort win
        plan = "\n".join(conn.execute(text(
            f"EXPLAIN SELECT memory_id FROM {TABLE} WHERE user_id = {sql_literal(BIG)} "
            f"ORDER BY CAST(embedding AS halfvec(8)) <=> CAST(:q AS halfvec(8)) LIMIT 10"),
            {"q": pgvectors.vector_literal([0.1] * 8)}).scalars())
    assert tenant_index_name(BIG) in plan and "ix_memory_vector_hnsw" not in plan


def test_the_graph_goes_with_the_user(mx):
    mx.store.vectors.index_tenant(SMALL)
    assert tenant_index_name(SMALL) in _indexes(mx)
    mx.delete_user(SMALL)
    assert tenant_index_name(SMALL) not in _indexes(mx)
    assert mx.search("fact number 3", user_id=BIG, method="embedding")


def test_a_user_id_that_cannot_be_stored_is_refused():
    with pytest.raises(ValueError, match="NUL"):
        sql_literal("a\x00b")


def test_a_new_embedder_dimension_drops_the_users_graphs(mx):
    mx.store.vectors.index_tenant(BIG)
    mx.store.vectors.ensure(4)  # another embedder: the graphs cast to the old dimension cannot stay
    assert tenant_index_name(BIG) not in _indexes(mx)
    assert mx.store.vectors.tenants_without_index() == []  # no vectors of the new dimension yet
