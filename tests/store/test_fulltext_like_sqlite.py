"""PostgreSQL's full-text search finds what SQLite's FTS5 (`porter unicode61`) finds: a word written
without its accents finds the accented word, a query made only of common words (the, who, it, is)
searches for them, and English stemming still joins a word's forms; memories written before
revision 0016 too, once it ran."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import text

from mirix_py.engine import Mirix
from mirix_py.store.db import make_engine, sqlite_dbapi
from mirix_py.store.fulltext import Filters
from mirix_py.store.migrations import alembic_config, upgrade
from mirix_py.store.opening import fulltext_for
from mirix_py.store.sessions import sessions_for
from mirix_py.text.words import unaccented

CAFE = "We had coffee at the Café Zürich near the lake."
DESSERT = "Dessert was crème brûlée at the Hôtel de Ville."
COUSIN = "My cousin lives in São Paulo and speaks Português."
WHO = "The Who played their best concert in 1969."
IT_IS = "It is what it is."
HOUSES = "Die Häuser in München sind schön und groß."
PUPIL = "L'élève a réussi l'examen à Montréal."
TRIP = "We visited Ålesund and Tromsø in Norway."
MEETING = "Meeting with Zoë and Chloé on Friday."
DOGS = "The dogs were running happily through the fields."
JOG = "I run every morning before work."
SAID = [CAFE, DESSERT, COUSIN, WHO, IT_IS, HOUSES, PUPIL, TRIP, MEETING, DOGS, JOG]

ACCENTS = {"cafe zurich": CAFE, "Café": CAFE, "hotel": DESSERT, "creme brulee": DESSERT, "munchen": HOUSES,
           "schon": HOUSES, "montreal": PUPIL, "eleve": PUPIL, "zoe": MEETING, "chloe": MEETING, "alesund": TRIP,
           "Ålesund": TRIP, "portugues": COUSIN}
COMMON_WORDS = {"the who": WHO, "it is what it is": IT_IS, "who": WHO}


@pytest.fixture(params=["postgres", "pgvector"])
def server_url(request) -> str:
    """A fresh schema on the plain PostgreSQL server, or on the one with pgvector."""
    return request.getfixturevalue("pg_schema_url" if request.param == "postgres" else "pgvector_schema_url")


def _answers(data_dir, database_url: str | None, queries: list[str]) -> dict[str, list[str]]:
    """Each query's bm25 answers (the memories' texts) once SAID is said, one message each."""
    with Mirix(data_dir, embedder=None, database_url=database_url) as mx:
        for said in SAID:
            mx.add([{"role": "user", "content": said}], user_id="ann")
        return {q: [h.memory.summary for h in mx.search(q, user_id="ann", method="bm25", limit=5)] for q in queries}


@pytest.fixture
def both(tmp_path, server_url) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(SQLite's answers, PostgreSQL's answers) to every query of these tests."""
    queries = [*ACCENTS, *COMMON_WORDS, "run", "running", "dog", "tromso"]
    return _answers(tmp_path / "lite", None, queries), _answers(tmp_path / "pg", server_url, queries)


def test_a_word_written_without_its_accents_finds_the_accented_memory(both):
    sqlite, postgres = both
    for query, said in ACCENTS.items():
        assert postgres[query][:1] == [said], query
        assert postgres[query] == sqlite[query], query
    assert postgres["tromso"] == sqlite["tromso"] == []  # ø is a letter of its own to FTS5 too


def test_a_query_of_common_words_only_searches_for_them(both):
    sqlite, postgres = both
    for query, said in COMMON_WORDS.items():
        assert postgres[query][:1] == [said], query
        assert postgres[query] == sqlite[query], query


def test_english_stemming_still_joins_a_words_forms(both):
    sqlite, postgres = both
    assert set(postgres["running"]) == set(postgres["run"]) == {JOG, DOGS}
    assert postgres["dog"] == [DOGS]
    for query in ("run", "running", "dog"):
        assert postgres[query] == sqlite[query], query


def test_the_unaccented_text_is_what_fts5_unicode61_tokenizes():
    """`unaccented` (which PostgreSQL's index and queries apply, `store.pg_postings`) folds what
    FTS5's unicode61 folds as it tokenizes, for every character: compared with SQLite's own, which
    also lowers letters (so lowered here first)."""
    db = sqlite_dbapi().connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    codes = [c for c in range(0x80, 0x30000) if not 0xD800 <= c < 0xE000]
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(c, f"q{chr(c)}q") for c in codes])
    folded = dict(db.execute("SELECT doc, term FROM v"))
    raw = sqlite_dbapi().connect(":memory:")  # the same without the folding: which characters it changed
    raw.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 0')")
    raw.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    raw.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(c, f"q{chr(c)}q") for c in codes])
    kept = dict(raw.execute("SELECT doc, term FROM v"))
    changed = {c for c in codes if folded.get(c) != kept.get(c)}
    assert len(changed) > 300  # é, Å, ẛ, combining accents ...
    assert {c for c in codes if unaccented(chr(c)) != chr(c)} == changed
    for c in changed:
        assert f"q{unaccented(chr(c))}q".lower() == folded[c], hex(c)


def _insert(conn, memory_id: str, said: str, input_id: str) -> None:
    conn.execute(text(
        "INSERT INTO memory (id, user_id, memory_type, text, occurred_at, created_at, updated_at, source_ids, tags,"
        " fields, input_id) VALUES (:id, 'ann', 'episodic', :x, now(), now(), now(), '[]', '[]', '{}', :i)"),
        {"id": memory_id, "x": said, "i": input_id})
    conn.execute(text("INSERT INTO memory_session (user_id, input_id, text) VALUES ('ann', :i, :x)"),
                 {"i": input_id, "x": said})


def test_memories_written_before_0016_are_found_after_it(server_url):
    """0016 makes the tsvectors (memories' and sessions') and the postings of rows already there
    again; its downgrade gives back what 0015 made."""
    engine = make_engine(server_url)
    upgrade(engine, "0015_fulltext_unicode")
    rows = {"epi_1": (CAFE, "in_a"), "epi_2": (WHO, "in_b"), "epi_3": (JOG, "in_c")}
    with engine.begin() as conn:  # as the earlier version wrote them
        for memory_id, (said, input_id) in rows.items():
            _insert(conn, memory_id, said, input_id)

    def lexemes() -> set[str]:
        with engine.connect() as conn:
            return set(conn.execute(text("SELECT u.lexeme FROM memory, unnest(tsv) u UNION "
                                         "SELECT u.lexeme FROM memory_session, unnest(tsv) u")).scalars())

    assert {"café", "zürich"} <= lexemes() and not {"cafe", "the", "who"} & lexemes()
    upgrade(engine)
    assert {"cafe", "zurich", "the", "who"} <= lexemes() and not {"café", "zürich"} & lexemes()
    index, sessions = fulltext_for(engine), sessions_for(engine)
    with engine.connect() as conn:
        def found(query: str) -> list[str]:
            return [i for i, _ in index.search(conn, query, Filters(user_id="ann"), 3)]

        assert found("cafe zurich") == found("Café") == ["epi_1"]
        assert found("the who")[0] == found("who")[0] == "epi_2"
        assert found("running") == ["epi_3"]
        assert [i for i, _ in sessions.search(conn, "cafe", "ann", 3)] == ["in_a"]
        assert [i for i, _ in sessions.search(conn, "the who", "ann", 3)][0] == "in_b"
        assert dict(conn.execute(text("SELECT id, text FROM memory")).all()) == {k: v[0] for k, v in rows.items()}
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0015_fulltext_unicode")
        assert not conn.execute(text("SELECT count(*) FROM pg_ts_config WHERE cfgname = 'mirix_english' "
                                     "AND cfgnamespace = CAST(current_schema() AS regnamespace)")).scalar()
    assert {"café", "zürich"} <= lexemes() and not {"cafe", "the", "who"} & lexemes()
    engine.dispose()


REPEATED = {"epi_r1": "kayak lake kayak lake Sam", "epi_r2": "Sam and I paddled the kayak across the lake at dawn",
            "epi_r3": IT_IS, "epi_r4": "Café au lait, café noir, café crème: café café!", "epi_r5": CAFE}


def _fts5_tokens(texts: dict[str, str]) -> dict[str, int]:
    """Each text's length as FTS5's bm25() counts it: its tokens, repeats included."""
    db = sqlite_dbapi().connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    ids = list(texts)
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(i, texts[k]) for i, k in enumerate(ids)])
    return {ids[doc]: n for doc, n in db.execute("SELECT doc, count(*) FROM v GROUP BY doc")}


def test_a_memory_and_a_session_are_as_long_as_fts5_counts_them(server_url):
    """BM25's document length on PostgreSQL (a posting's, a session's) is the text's tokens with its
    repeated words, as SQLite's: a short text that says a word again is not made shorter than a
    sentence of as many words. Rows written before revision 0016 are measured again by it."""
    engine = make_engine(server_url)
    upgrade(engine, "0015_fulltext_unicode")
    ids = list(REPEATED)
    with engine.begin() as conn:  # as the earlier version wrote them
        for memory_id in ids[:3]:
            _insert(conn, memory_id, REPEATED[memory_id], f"in_{memory_id}")
    upgrade(engine)
    with engine.begin() as conn:
        for memory_id in ids[3:]:
            _insert(conn, memory_id, REPEATED[memory_id], f"in_{memory_id}")
    with engine.connect() as conn:
        postings = dict(conn.execute(text(
            "SELECT DISTINCT m.id, p.dl FROM memory m JOIN memory_posting p ON p.doc = hashtextextended(m.id, 0)")).all())
        sessions = {i.removeprefix("in_"): dl for i, dl in conn.execute(text("SELECT input_id, dl FROM memory_session"))}
    engine.dispose()
    want = _fts5_tokens(REPEATED)
    assert want["epi_r1"] == 5 and want["epi_r4"] == 9
    assert postings == want
    assert sessions == want
