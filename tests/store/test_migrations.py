"""Schema migrations: an old database opens after an upgrade with its data intact, and a fresh
database migrated to head matches the models, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text
from sqlmodel import SQLModel

from mirix_py.engine import Mirix
from mirix_py.store.migrations import current_revision, head_revision, upgrade
from mirix_py.settings import Settings
from mirix_py.store.db import make_engine

FIXTURE = Path(__file__).parents[1] / "fixtures" / "schema_0001.db"
FIXTURE_KEY = "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg="


def test_database_of_the_first_schema_opens_with_its_data(tmp_path, embedder):
    data = tmp_path / "old"
    data.mkdir()
    shutil.copy(FIXTURE, data / "mirix.db")
    settings = Settings(data_dir=data, vault_key=FIXTURE_KEY)
    with Mirix(settings=settings, embedder=embedder) as mx:
        assert current_revision(mx.engine) == head_revision()
        mx.flush(timeout=60)
        episode = mx.get("epi_00000000000000000000000000000001", user_id="caroline")
        assert episode.actor == "Caroline" and episode.source_ids == ["in_0001", "D1:3"]
        assert "Caroline" in mx.store.actors(user_id="caroline")  # filled from the rows' fields
        assert mx.get("kv_00000000000000000000000000000003", user_id="caroline", reveal=True).secret_value == "Old-Pass-123"
        assert [e.operation.value for e in mx.history("sem_00000000000000000000000000000002", user_id="caroline")] == ["insert"]
        assert mx.input_status("in_0001").messages[0].content.startswith("I went to a LGBTQ")
        assert mx.input_status("in_0002").status.value == "processed"  # left pending by the old version
        assert mx.search("support group", user_id="caroline", method="bm25")[0].memory.id == episode.id
        # the old database came without its vector index: resuming its pending input repaired that
        assert mx.doctor().clean
        assert mx.search("support group meeting", user_id="caroline", method="embedding")[0].memory.id == episode.id
        assert any("sunrises" in h.text for h in mx.search("painting the sunrise", user_id="caroline"))


def _diff(engine) -> list:
    """Differences between the migrated database and the SQLModel tables. Left out: what the
    models do not describe (the FTS5 table, the tsvector column and its index, the REST key table
    of mirix_py.server.keys, which has its own metadata, pgvector's table of store.pgvectors,
    PostgreSQL's BM25 postings of store.pg_postings and the session index of store.sessions, and
    PostgreSQL's index in `list`'s order, revision 0017)."""
    def include(obj, name, type_, reflected, compare_to):
        if type_ == "table" and (name.startswith(("memory_fts", "memory_session"))
                                 or name in ("alembic_version", "api_key", "memory_vector", "memory_posting")):
            return False
        return not ((type_ == "column" and name in ("tsv", "near", "near_tsv")) or (type_ == "index" and name in ("ix_memory_tsv", "ix_memory_doc", "ix_memory_user_type_listing")))

    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": include, "compare_type": False})
        return compare_metadata(context, SQLModel.metadata)


def test_migrations_match_the_models_on_sqlite(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    upgrade(engine)
    assert _diff(engine) == []


def test_migrations_on_postgres(pg_schema_url, tmp_path, embedder):
    engine = make_engine(pg_schema_url)
    upgrade(engine, "0001_initial")
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO memory (id, user_id, memory_type, text, occurred_at, created_at, updated_at, source_ids, tags,"
            " fields) VALUES ('sem_00000000000000000000000000000009', 'ann', 'semantic', 'Rex: Rex is a dog', NULL,"
            " now(), now(), :s, '[]', :f)"),
            {"s": json.dumps(["x"]), "f": json.dumps({"name": "Rex", "summary": "Rex is a dog", "details": "", "source": ""})})
        conn.execute(text(
            "INSERT INTO memory (id, user_id, memory_type, text, occurred_at, created_at, updated_at, source_ids, tags,"
            " fields) VALUES ('epi_00000000000000000000000000000009', 'ann', 'episodic', 'Ann: Rex barked', NULL,"
            " now(), now(), '[]', '[]', :f)"),
            {"f": json.dumps({"event_type": "message", "summary": "Rex barked", "details": "", "actor": "Ann"})})
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    assert _diff(engine) == []
    engine.dispose()
    with Mirix(tmp_path / "pg", embedder=embedder, database_url=pg_schema_url) as mx:
        assert mx.get("sem_00000000000000000000000000000009", user_id="ann").name == "Rex"
        assert mx.search("dog", user_id="ann", method="bm25")[0].memory.name == "Rex"
        assert mx.store.actors(user_id="ann") == ["Ann"]  # filled by 0012 from the row's fields


def test_unversioned_database_is_recognised(tmp_path):
    """A database made by create_all before migrations existed is stamped, not re-created."""
    engine = create_engine(f"sqlite:///{tmp_path / 'legacy.db'}")
    import mirix_py.store.tables  # noqa: F401

    SQLModel.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(text("CREATE VIRTUAL TABLE memory_fts USING fts5(text, ukey, memory_id UNINDEXED)"))
    upgrade(engine)
    assert current_revision(engine) == head_revision()


def test_migrations_on_postgres_with_pgvector(pgvector_schema_url, tmp_path, embedder):
    """A database with the extension gets the vector table from the migration; a store opened on
    it afterwards fills it for the rows written before (doctor re-embeds them on resume)."""
    engine = make_engine(pgvector_schema_url)
    upgrade(engine, "0005_fts_user_rowids")
    with engine.connect() as conn:
        assert "memory_vector" not in inspect(conn).get_table_names()
    upgrade(engine)
    with engine.connect() as conn:
        assert "memory_vector" in inspect(conn).get_table_names()
    assert _diff(engine) == []
    engine.dispose()
    with Mirix(tmp_path / "pgv", embedder=embedder, database_url=pgvector_schema_url) as mx:
        assert mx.describe()["vectors"] == "pgvector"


def test_sessions_are_built_from_the_rows_already_there(backend, tmp_path):
    """0007 gives each episode its input (`memory.input_id`) and indexes each input's episodes as
    one document, from rows written before it."""
    engine = make_engine(backend or f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(engine, "0006_memory_vector")
    rows = [("epi_1", "episodic", "[1 May 2023] Ann: We went camping at the lake.", ["in_a", "D1:1"]),
            ("epi_2", "episodic", "[1 May 2023] Bob: Did you catch any trout?", ["in_a", "D1:2"]),
            ("epi_3", "episodic", "[9 May 2023] Ann: My sister opened a bakery.", ["in_b"]),
            ("sem_1", "semantic", "Ann: Ann likes camping", ["in_a"])]
    with engine.begin() as conn:
        for memory_id, mtype, body, sources in rows:
            conn.execute(text(
                "INSERT INTO memory (id, user_id, memory_type, text, occurred_at, created_at, updated_at, source_ids,"
                " tags, fields) VALUES (:id, 'ann', :t, :x, :at, :at, :at, :s, '[]', '{}')"),
                {"id": memory_id, "t": mtype, "x": body, "s": json.dumps(sources),
                 "at": f"2023-05-0{memory_id[-1]} 10:00:00"})
    upgrade(engine)
    from mirix_py.store.sessions import sessions_for

    with engine.connect() as conn:
        given = dict(conn.execute(text("SELECT id, input_id FROM memory")).all())
        assert given == {"epi_1": "in_a", "epi_2": "in_a", "epi_3": "in_b", "sem_1": None}
        texts = dict(conn.execute(text("SELECT input_id, text FROM memory_session")).all())
        assert texts == {"in_a": rows[0][2] + "\n" + rows[1][2], "in_b": rows[2][2]}
        assert [i for i, _ in sessions_for(engine).search(conn, "trout by the lake", "ann", 3)] == ["in_a"]
    engine.dispose()


def test_rows_indexed_before_0015_are_found_by_a_word_inside_cjk_text(backend, tmp_path):
    """0015 indexes again the memories written before it whose text the index now holds otherwise
    (a word inside a CJK run, İ), and their neighbours' words; the memories' text stays as written."""
    from mirix_py.store.fulltext import Filters
    from mirix_py.store.opening import fulltext_for
    from mirix_py.store.sqlite_fulltext import fts_rowid, type_token, user_token

    engine = make_engine(backend or f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(engine, "0014_vector_pending")
    postgres = engine.dialect.name == "postgresql"
    piano, pen = "我的女儿在上海学习钢琴。", "我买了一支新钢笔。"  # two turns of one input: each the other's neighbour
    rows = [("epi_1", "episodic", piano, "in_a", pen[:-1]), ("epi_2", "episodic", pen, "in_a", piano[:-1]),
            ("sem_1", "semantic", "Ann: Ann moved to İstanbul", None, None),
            ("sem_2", "semantic", "Ann: Ann likes tea", None, None)]
    with engine.begin() as conn:  # the rows as the earlier version wrote and indexed them: the texts as written
        for memory_id, mtype, body, input_id, near in rows:
            conn.execute(text(
                "INSERT INTO memory (id, user_id, memory_type, text, occurred_at, created_at, updated_at, source_ids,"
                " tags, fields, input_id" + (", near" if postgres else "") + ") VALUES (:id, 'ann', :t, :x, :at, :at, :at,"
                " '[]', '[]', '{}', :i" + (", :n" if postgres else "") + ")"),
                {"id": memory_id, "t": mtype, "x": body, "i": input_id, "n": near, "at": f"2023-05-0{memory_id[-1]} 10:00:00"})
            if not postgres:
                conn.execute(text("INSERT INTO memory_fts(rowid, text, near, ukey, mtype, memory_id) "
                                  "VALUES (:r, :x, :n, :u, :m, :id)"),
                             {"r": fts_rowid("ann", memory_id), "x": body, "n": near, "u": user_token("ann"),
                              "m": type_token(mtype), "id": memory_id})
    index = fulltext_for(engine)

    def found(query: str) -> list[str]:
        with engine.connect() as conn:
            return [i for i, _ in index.search(conn, query, Filters(user_id="ann"), 3)]

    if postgres:  # a search needs what 0016 makes: the tsvector itself is asked
        with engine.connect() as conn:
            assert not conn.execute(text("SELECT count(*) FROM memory WHERE tsv @@ CAST('钢琴' AS tsquery)")).scalar()
    else:
        assert found("钢琴") == []  # the index holds the sentence as one word
    upgrade(engine)
    assert found("钢琴")[0] == "epi_1"
    assert found("上海") == ["epi_1", "epi_2"]  # epi_2 by its neighbour's words, at their lower weight
    assert found("İstanbul") == ["sem_1"]
    with engine.connect() as conn:
        assert dict(conn.execute(text("SELECT id, text FROM memory")).all()) == {r[0]: r[2] for r in rows}
    engine.dispose()


def _lookups(engine, limit: int) -> tuple[Callable[[str], list[str]], Callable[[str], list[str]]]:
    """The user "ann"'s full-text lookups in memories (their first `limit` ids) and in sessions (first 3
    input ids), as the engine's index reads them."""
    from mirix_py.store.fulltext import Filters
    from mirix_py.store.opening import fulltext_for
    from mirix_py.store.sessions import sessions_for

    index, sessions = fulltext_for(engine), sessions_for(engine)

    def found(query: str) -> list[str]:
        with engine.connect() as conn:
            return [i for i, _ in index.search(conn, query, Filters(user_id="ann"), limit)]

    def sessions_found(query: str) -> list[str]:
        with engine.connect() as conn:
            return [i for i, _ in sessions.search(conn, query, "ann", 3)]

    return found, sessions_found


def test_rows_indexed_before_0022_are_found_by_words_with_marks(backend, tmp_path):
    """0022 indexes every memory and session again with a word's combining marks part of it and the
    accents unicode61 leaves folded: a Hindi word and "pho" written before it are found after it, an
    English word before and after, and the memories' text stays as written."""
    from mirix_py.store.sqlite_fulltext import fts_rowid, type_token, user_token
    from mirix_py.text.words import indexed_text

    engine = make_engine(backend or f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(engine, "0021_source_claims")
    postgres = engine.dialect.name == "postgresql"
    hindi, lake, pho = "मैं कल दिल्ली में अपने दोस्त से मिला।", "We had coffee at the lake.", "Ann ate phở in Hà Nội"
    rows = [("epi_1", "episodic", hindi, "in_a"), ("epi_2", "episodic", lake, "in_b"), ("epi_3", "episodic", pho, "in_c")]
    with engine.begin() as conn:  # the rows as the earlier version wrote and indexed them: the texts as written
        for memory_id, mtype, body, input_id in rows:
            conn.execute(text(
                "INSERT INTO memory (id, user_id, memory_type, text, occurred_at, created_at, updated_at, source_ids,"
                " tags, fields, input_id) VALUES (:id, 'ann', :t, :x, :at, :at, :at, :s, '[]', '{}', :i)"),
                {"id": memory_id, "t": mtype, "x": body, "i": input_id, "s": json.dumps([input_id]),
                 "at": f"2023-05-0{memory_id[-1]} 10:00:00"})
            if postgres:
                conn.execute(text("INSERT INTO memory_session (user_id, input_id, text) VALUES ('ann', :i, :x)"),
                             {"i": input_id, "x": body})
                continue
            conn.execute(text("INSERT INTO memory_fts(rowid, text, ukey, mtype, memory_id) VALUES (:r, :x, :u, :m, :id)"),
                         {"r": fts_rowid("ann", memory_id), "x": body, "u": user_token("ann"), "m": type_token(mtype),
                          "id": memory_id})
            conn.execute(text("INSERT INTO memory_session(rowid, text, ukey, input_id) VALUES (:r, :x, :u, :i)"),
                         {"r": fts_rowid("ann", input_id), "x": body, "u": user_token("ann"), "i": input_id})
    found, sessions_found = _lookups(engine, 3)

    assert found("lake") == ["epi_2"]
    assert found("pho") == sessions_found("pho") == []
    upgrade(engine)
    for query, memory_id in (("दिल्ली", "epi_1"), ("मिला", "epi_1"), ("lake", "epi_2"), ("pho", "epi_3"), ("phở", "epi_3")):
        assert found(query) == [memory_id], query
    assert sessions_found("दिल्ली") == ["in_a"] and sessions_found("lake") == ["in_b"] and sessions_found("pho") == ["in_c"]
    with engine.connect() as conn:
        assert dict(conn.execute(text("SELECT id, text FROM memory")).all()) == {r[0]: r[2] for r in rows}
        if not postgres:  # what `doctor` compares: each row holds its text as `indexed_text` renders it
            held = dict(conn.execute(text("SELECT memory_id, text FROM memory_fts")).all())
            assert held == {r[0]: indexed_text(r[2]) for r in rows} and held["epi_3"] == "Ann ate pho in Hà Noi"
    engine.dispose()


def _write_as_indexed(engine, rows: list[tuple[str, str, str]], indexed: dict[str, str]) -> None:
    """The user "ann"'s episodes (id, text, input id), one an input, as an earlier revision wrote them: each
    text as written, and on SQLite its memory and session rows as that revision indexed it (`indexed`);
    PostgreSQL's columns are generated from the text."""
    from mirix_py.store.sqlite_fulltext import fts_rowid, type_token, user_token

    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as conn:
        for memory_id, body, input_id in rows:
            conn.execute(text(
                "INSERT INTO memory (id, user_id, memory_type, text, occurred_at, created_at, updated_at, source_ids,"
                " tags, fields, input_id) VALUES (:id, 'ann', 'episodic', :x, :at, :at, :at, :s, '[]', '{}', :i)"),
                {"id": memory_id, "x": body, "i": input_id, "s": json.dumps([input_id]),
                 "at": f"2023-05-0{memory_id[-1]} 10:00:00"})
            if postgres:
                conn.execute(text("INSERT INTO memory_session (user_id, input_id, text) VALUES ('ann', :i, :x)"),
                             {"i": input_id, "x": body})
                continue
            conn.execute(text("INSERT INTO memory_session(rowid, text, ukey, input_id) VALUES (:r, :x, :u, :i)"),
                         {"r": fts_rowid("ann", input_id), "x": indexed[body], "u": user_token("ann"), "i": input_id})
            conn.execute(text("INSERT INTO memory_fts(rowid, text, ukey, mtype, memory_id) VALUES (:r, :x, :u, :m, :id)"),
                         {"r": fts_rowid("ann", memory_id), "x": indexed[body], "u": user_token("ann"),
                          "m": type_token("episodic"), "id": memory_id})


def test_rows_indexed_before_0023_are_found_by_a_word_inside_thai_or_khmer_text(backend, tmp_path):
    """0023 indexes again the memories and sessions holding Thai, Lao, Khmer or Myanmar letters, their
    clusters set apart and paired: a word inside a Thai or Khmer run written before it is found after
    it, English and Chinese words before and after, and the memories' text stays as written."""
    from mirix_py.text.words import indexed_text

    engine = make_engine(backend or f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(engine, "0022_fulltext_marks")
    postgres = engine.dialect.name == "postgresql"
    thai, khmer = "ฉันไปตลาดกับแม่เมื่อวานนี้", "ខ្ញុំទៅផ្សារជាមួយម្តាយ"
    lake, piano = "We had coffee at the lake.", "我的女儿在上海学习钢琴。"
    as_0022 = {thai: thai, khmer: khmer, lake: lake, piano: indexed_text(piano)}  # what 0022 indexed: runs whole
    rows = [("epi_1", thai, "in_a"), ("epi_2", khmer, "in_b"), ("epi_3", lake, "in_c"), ("epi_4", piano, "in_d")]
    _write_as_indexed(engine, rows, as_0022)  # the rows as revision 0022 wrote and indexed them
    found, sessions_found = _lookups(engine, 4)

    assert found("lake") == ["epi_3"] and found("钢琴") == ["epi_4"]
    assert found("ตลาด") == found("ផ្សារ") == sessions_found("ตลาด") == []
    upgrade(engine)
    for query, memory_id in (("ตลาด", "epi_1"), ("แม่", "epi_1"), ("ផ្សារ", "epi_2"), ("lake", "epi_3"), ("钢琴", "epi_4")):
        assert found(query) == [memory_id], query
    assert sessions_found("ตลาด") == ["in_a"] and sessions_found("ផ្សារ") == ["in_b"] and sessions_found("lake") == ["in_c"]
    with engine.connect() as conn:
        assert dict(conn.execute(text("SELECT id, text FROM memory")).all()) == {r[0]: r[1] for r in rows}
        if not postgres:  # what `doctor` compares: each row holds its text as `indexed_text` renders it
            held = dict(conn.execute(text("SELECT memory_id, text FROM memory_fts")).all())
            assert held == {r[0]: indexed_text(r[1]) for r in rows}
    engine.dispose()


def test_rows_indexed_before_0024_are_found_by_an_arabic_word_written_without_its_hamza(backend, tmp_path):
    """0024 indexes again the memories and sessions holding an alef with hamza or madda, folded to a
    bare alef: احمد finds أحمد written before it (and أحمد, folded as a query, too), English and Thai
    words are found before and after it, and the memories' text stays as written."""
    from mirix_py.text.words import indexed_text

    engine = make_engine(backend or f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(engine, "0023_fulltext_clusters")
    postgres = engine.dialect.name == "postgresql"
    ahmad, safe = "قابلت أحمد في المقهى", "البيت \u0627\u0653\u0645\u0646 الآن"  # the madda written apart
    lake, thai = "We had coffee at the lake.", "ฉันไปตลาดกับแม่เมื่อวานนี้"
    as_0023 = {ahmad: ahmad, safe: "البيت آمن الآن", lake: lake, thai: indexed_text(thai)}  # what 0023 indexed
    rows = [("epi_1", ahmad, "in_a"), ("epi_2", safe, "in_b"), ("epi_3", lake, "in_c"), ("epi_4", thai, "in_d")]
    _write_as_indexed(engine, rows, as_0023)  # the rows as revision 0023 wrote and indexed them
    found, sessions_found = _lookups(engine, 4)

    assert found("lake") == ["epi_3"] and found("ตลาด") == ["epi_4"]
    assert found("احمد") == found("امن") == sessions_found("احمد") == []
    upgrade(engine)
    for query, memory_id in (("احمد", "epi_1"), ("أحمد", "epi_1"), ("امن", "epi_2"), ("آمن", "epi_2"), ("lake", "epi_3"),
                             ("ตลาด", "epi_4")):
        assert found(query) == [memory_id], query
    assert sessions_found("احمد") == ["in_a"] and sessions_found("امن") == ["in_b"] and sessions_found("lake") == ["in_c"]
    with engine.connect() as conn:
        assert dict(conn.execute(text("SELECT id, text FROM memory")).all()) == {r[0]: r[1] for r in rows}
        if not postgres:  # what `doctor` compares: each row holds its text as `indexed_text` renders it
            held = dict(conn.execute(text("SELECT memory_id, text FROM memory_fts")).all())
            assert held == {r[0]: indexed_text(r[1]) for r in rows}
    engine.dispose()
