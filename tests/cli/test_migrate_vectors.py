"""`mirix migrate-vectors`: a PostgreSQL + Chroma deployment moves its vectors into pgvector without
re-embedding, and the result searches like before."""

from __future__ import annotations

from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.engine import Mirix
from mirix_py.tools.ops import InsertOp
from mirix_py.records import SemanticMemory
from mirix_py.store.vectors import ChromaVectorIndex, VectorItem
from mirix_py.cli.migrate_vectors import migrate


class CountingEmbedder:
    """The real embedder, counting the texts it is asked for."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.texts = inner, inner.name, inner.dim, []

    def embed(self, texts):
        self.texts += list(texts)
        return self.inner.embed(texts)


def test_chroma_index_moves_into_pgvector(tmp_path, pgvector_schema_url, embedder, user_id, monkeypatch):
    data = tmp_path / "d"
    with Mirix(data, embedder=embedder, database_url=pgvector_schema_url, vector_store="chroma") as mx:
        assert mx.describe()["vectors"] == "chroma-embedded"
        mx.add([{"role": "user", "content": "Our cat Miso sleeps on the radiator."},
                {"role": "user", "content": "I planted tulips in the front garden."}], user_id=user_id)
        mx.add("Tom lives in Rome.", user_id="someone-else")
        before = {u: mx.store.vectors.count(u) for u in (user_id, "someone-else")}
        expected = [h.memory.id for h in mx.search("where does the cat nap", user_id=user_id, method="embedding")]
        orphan_id = "sem_" + "e" * 32  # a vector whose row is gone: stays behind
        mx.store.vectors.upsert(user_id, [VectorItem(orphan_id, [0.1] * embedder.dim, "semantic")])

    monkeypatch.setenv("MIRIX_DATABASE_URL", pgvector_schema_url)
    monkeypatch.setenv("MIRIX_EMBEDDER", "minilm")
    out = CliRunner().invoke(app, ["migrate-vectors", "--data-dir", str(data)])
    assert out.exit_code == 0, out.output
    assert f"copied {sum(before.values())} vectors of 2 users" in out.output
    assert "1 Chroma vectors had no row" in out.output and "doctor: clean" in out.output

    counting = CountingEmbedder(embedder)
    with Mirix(data, embedder=counting, database_url=pgvector_schema_url) as mx:
        assert mx.describe()["vectors"] == "pgvector"  # the database has the extension: chosen by default
        assert {u: mx.store.vectors.count(u) for u in before} == before
        assert mx.doctor().clean
        assert [h.memory.id for h in mx.search("where does the cat nap", user_id=user_id, method="embedding")] == expected
    assert counting.texts == ["where does the cat nap"]  # only the query was embedded


def test_rows_without_chroma_vectors_are_left_to_doctor(tmp_path, pgvector_schema_url, embedder, user_id):
    with Mirix(tmp_path / "d", embedder=embedder, database_url=pgvector_schema_url, vector_store="chroma") as mx:
        (change,) = mx.store.apply([InsertOp(memory=SemanticMemory(user_id=user_id, name="Rex", summary="Rex is a dog"))],
                                   user_id=user_id, actor="t")
        mx.store.vectors.delete(user_id, [change.memory_id])
    source = ChromaVectorIndex.embedded(tmp_path / "d" / "chroma")
    with Mirix(tmp_path / "d", embedder=embedder, database_url=pgvector_schema_url, vector_store="pgvector") as mx:
        counts = migrate(mx.store, source)
        assert counts == {"users": 1, "copied": 0, "rows_without_vectors": 1, "vectors_without_rows": 0}
        assert mx.doctor().rows_without_vectors == [change.memory_id]
        assert mx.doctor(repair=True).clean


def test_migrate_vectors_on_sqlite_says_what_it_needs(tmp_path, monkeypatch):
    monkeypatch.delenv("MIRIX_DATABASE_URL", raising=False)
    monkeypatch.delenv("MIRIX_VECTOR_STORE", raising=False)
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    with Mirix(tmp_path / "d") as mx:
        mx.add("Tom lives in Rome.", user_id="ada")
    for chroma in ([], ["--chroma-url", "http://127.0.0.1:1"]):
        out = CliRunner().invoke(app, ["migrate-vectors", "--data-dir", str(tmp_path / "d"), *chroma])
        said = " ".join(out.output.split())
        assert out.exit_code == 2
        assert "a store kept in PostgreSQL" in said and f"SQLite ({tmp_path / 'd' / 'mirix.db'})" in said
        assert "MIRIX_VECTOR_STORE" not in said  # a setting the user never made
