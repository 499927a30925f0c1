"""Sessions: each input's episodes as one full-text document, for hybrid search's session leg.

An episode belongs to the input it was made from (`input_of`), kept in `memory.input_id` (indexed
with the user), so a session's episodes are an index seek. A session's text is its episodes'
search texts, joined; it is BM25-ranked like single memories are (`store.fulltext`): SQLite, an
FTS5 table `memory_session` whose rows sit in the user's rowid range; PostgreSQL, a table
`memory_session` with a generated tsvector and Okapi BM25 computed in SQL.

`MemoryStore.apply` refreshes the sessions its episodes belong to (before and after the change) in
the same transaction as the rows, so deletes, merges, undo and imports keep them exact;
`rebuild` makes the whole index (and `memory.input_id`) again from the rows (migration, restore,
the secrets doctor).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Protocol, Sequence

from sqlalchemy import select, text as sql
from sqlalchemy.engine import Connection, Engine
from sqlmodel import col

from mirix_py.records import MemoryType, utcnow
from mirix_py.store.expiry import unexpired
from mirix_py.store import pg_postings
from mirix_py.store.sqlite_fulltext import PROBE_SLOTS, fts_rowid, user_rowid_range, user_token
from mirix_py.store.pg_fulltext import query_lexemes, tsquery_of
from mirix_py.store.near import input_turns, inputs_by_user
from mirix_py.store.tables import MemoryRow
from mirix_py.text.words import indexed_text, query_terms

INPUT_PREFIX = "in_"  # `records.new_input_id`
MAX_INPUT_ID = 256  # the column's width; a longer caller id names no session
EPISODIC = MemoryType.episodic.value


def input_of(memory_type: str, source_ids: Sequence[str]) -> str | None:
    """The input an episode came from: its first source id that is an input id, else its first
    source id. The offline rules list the input first; a model-written episode names the messages
    it cites first and the input last (when the batch had one input). Other memory types, and
    episodes without sources, belong to no session."""
    if memory_type != EPISODIC or not source_ids:
        return None
    found = next((s for s in source_ids if s.startswith(INPUT_PREFIX)), source_ids[0])
    return found if found and len(found) <= MAX_INPUT_ID else None


@dataclass(frozen=True)
class Member:
    """An episode of a session, as the session leg orders it."""

    memory_id: str
    input_id: str
    occurred_at: datetime | None
    text: str


class SessionIndex(Protocol):
    """How sessions enter, leave and are found; the tables come from the migrations."""
    def refresh(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None: ...
    def delete_user(self, conn: Connection, user_id: str) -> None: ...
    def rebuild(self, conn: Connection) -> int: ...
    def search(self, conn: Connection, query: str, user_id: str, k: int) -> list[tuple[str, float]]: ...


def session_texts(conn: Connection, user_id: str, input_ids: Sequence[str]) -> dict[str, str]:
    """Input id -> its episodes' texts joined in time order (inputs without episodes left out)."""
    return {i: "\n".join(text for _, text in turns) for i, turns in input_turns(conn, user_id, input_ids).items()}


def members(conn: Connection, user_id: str, input_id: str, *, start: datetime | None = None,
            end: datetime | None = None, limit: int = 200) -> list[Member]:
    """The first `limit` episodes of one session in time order (then by text: ids are random),
    within [start, end) when given."""
    at = col(MemoryRow.occurred_at)
    query = select(col(MemoryRow.id), at, col(MemoryRow.text)).where(
        col(MemoryRow.user_id) == user_id, col(MemoryRow.input_id) == input_id,
        col(MemoryRow.memory_type) == EPISODIC, unexpired(utcnow()))
    if start is not None:
        query = query.where(at >= start)
    if end is not None:
        query = query.where(at < end)
    rows = conn.execute(query.order_by(at, col(MemoryRow.text), col(MemoryRow.id)).limit(limit)).all()
    return [Member(memory_id, input_id, when, text) for memory_id, when, text in rows]


def backfill_input_ids(conn: Connection) -> None:
    """Set `memory.input_id` from each row's type and sources (rows written before the column, or
    restored from a backup without it)."""
    rows = conn.execute(select(col(MemoryRow.id), col(MemoryRow.memory_type), col(MemoryRow.source_ids),
                               col(MemoryRow.input_id))).all()
    changed = [{"i": memory_id, "v": input_of(mtype, sources or [])} for memory_id, mtype, sources, current in rows
               if input_of(mtype, sources or []) != current]
    if changed:
        conn.execute(sql("UPDATE memory SET input_id = :v WHERE id = :i"), changed)


class SQLiteSessions:
    """FTS5 rows in the user's rowid range (as `sqlite_fulltext.SQLiteFullText`): a query seeks its terms'
    postings in that range; the user's token settles the rare users whose ranges coincide. A row holds
    its session's text as `indexed_text` renders it (since revision 0022; as written before)."""

    def _rowids(self, conn: Connection, user_id: str, input_id: str) -> list[int]:
        home = fts_rowid(user_id, input_id)
        return [int(r[0]) for r in conn.execute(sql(
            "SELECT rowid FROM memory_session WHERE rowid BETWEEN :lo AND :hi AND input_id = :i AND ukey = :u"),
            {"lo": home, "hi": home + PROBE_SLOTS - 1, "i": input_id, "u": user_token(user_id)}).all()]

    def _free_slot(self, conn: Connection, user_id: str, input_id: str) -> int:
        home = fts_rowid(user_id, input_id)
        used = {int(r[0]) for r in conn.execute(sql(
            "SELECT rowid FROM memory_session WHERE rowid BETWEEN :lo AND :hi"),
            {"lo": home, "hi": home + PROBE_SLOTS - 1}).all()}
        for rowid in range(home, home + PROBE_SLOTS):
            if rowid not in used:
                return rowid
        raise RuntimeError(f"session slots {home}..{home + PROBE_SLOTS - 1} are all taken")  # ~never

    def _write(self, conn: Connection, user_id: str, texts: dict[str, str], input_ids: Iterable[str]) -> None:
        for input_id in input_ids:
            gone = self._rowids(conn, user_id, input_id)
            if gone:
                conn.execute(sql("DELETE FROM memory_session WHERE rowid = :r"), [{"r": r} for r in gone])
            if input_id in texts:
                conn.execute(sql("INSERT INTO memory_session(rowid, text, ukey, input_id) VALUES (:r, :t, :u, :i)"),
                             {"r": self._free_slot(conn, user_id, input_id), "t": indexed_text(texts[input_id]),
                              "u": user_token(user_id), "i": input_id})

    def refresh(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None:
        wanted = sorted(set(input_ids))
        if wanted:
            self._write(conn, user_id, session_texts(conn, user_id, wanted), wanted)

    def delete_user(self, conn: Connection, user_id: str) -> None:
        low, high = user_rowid_range(user_id)
        conn.execute(sql("DELETE FROM memory_session WHERE rowid BETWEEN :lo AND :hi AND ukey = :u"),
                     {"lo": low, "hi": high, "u": user_token(user_id)})

    def rebuild(self, conn: Connection) -> int:
        backfill_input_ids(conn)
        conn.execute(sql("DELETE FROM memory_session"))
        by_user = inputs_by_user(conn)
        for user_id, input_ids in by_user.items():
            self._write(conn, user_id, session_texts(conn, user_id, input_ids), input_ids)
        return sum(len(v) for v in by_user.values())

    def search(self, conn: Connection, query: str, user_id: str, k: int) -> list[tuple[str, float]]:
        terms = query_terms(query)
        if not terms:
            return []
        low, high = user_rowid_range(user_id)
        words = "text : (" + " OR ".join(f'"{t}"' for t in terms) + ")"
        token = user_token(user_id)

        def ranked(match: str) -> Sequence[Any]:
            return conn.execute(sql(
                "SELECT input_id, ukey, bm25(memory_session, 1.0, 0.0, 0.0) AS s FROM memory_session "
                "WHERE memory_session MATCH :match AND rowid BETWEEN :lo AND :hi ORDER BY s LIMIT :k"),
                {"match": match, "lo": low, "hi": high, "k": k}).all()

        rows = ranked(words)
        if any(r[1] != token for r in rows):  # another user shares the range: match the user too
            rows = ranked(f'ukey : "{token}" AND {words}')
        return [(r[0], -float(r[2])) for r in rows]


class PostgresSessions:
    """A row per (user, input) with a generated tsvector (GIN) and its length, made as the memory
    index makes its own (`pg_session_columns`); Okapi BM25 as `pg_fulltext.PostgresFullText`
    computes it, over the user's sessions."""

    K1 = 1.2
    B = 0.75

    def refresh(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None:
        wanted = sorted(set(input_ids))
        if not wanted:
            return
        conn.execute(sql("DELETE FROM memory_session WHERE user_id = :u AND input_id = ANY(:ids)"),
                     {"u": user_id, "ids": wanted})
        texts = session_texts(conn, user_id, wanted)
        if texts:
            conn.execute(sql("INSERT INTO memory_session (user_id, input_id, text) VALUES (:u, :i, :t)"),
                         [{"u": user_id, "i": i, "t": t} for i, t in texts.items()])

    def delete_user(self, conn: Connection, user_id: str) -> None:
        conn.execute(sql("DELETE FROM memory_session WHERE user_id = :u"), {"u": user_id})

    def rebuild(self, conn: Connection) -> int:
        backfill_input_ids(conn)
        conn.execute(sql("DELETE FROM memory_session"))
        conn.execute(sql(
            "INSERT INTO memory_session (user_id, input_id, text) "
            "SELECT user_id, input_id, string_agg(text, E'\\n' ORDER BY occurred_at, created_at, id) FROM memory "
            "WHERE input_id IS NOT NULL AND memory_type = :t GROUP BY user_id, input_id"), {"t": EPISODIC})
        return int(conn.execute(sql("SELECT count(*) FROM memory_session")).scalar_one())

    def search(self, conn: Connection, query: str, user_id: str, k: int) -> list[tuple[str, float]]:
        lexemes = query_lexemes(conn, query)
        if not lexemes:
            return []
        tsquery = tsquery_of(lexemes)
        rows = conn.execute(sql(
            "WITH stats AS (SELECT count(*) AS n, coalesce(nullif(CAST(avg(dl) AS float8), 0), 1) AS avgdl FROM memory_session "
            "  WHERE user_id = :u), "
            "cand AS (SELECT s.input_id, s.tsv, s.dl FROM memory_session s "
            "  WHERE s.user_id = :u AND s.tsv @@ CAST(:tsq AS tsquery)), "
            "tf AS (SELECT c.input_id, c.dl, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf "
            "  FROM cand c, unnest(ts_filter(setweight(c.tsv, 'A', CAST(:lexemes AS text[])), '{a}')) u), "
            "df AS (SELECT lexeme, ln(1 + (CAST((SELECT n FROM stats) AS float8) - count(*) + 0.5) / (count(*) + 0.5)) AS idf "
            "  FROM tf GROUP BY lexeme) "
            "SELECT tf.input_id, sum(df.idf * tf.tf * (CAST(:k1 AS float8) + 1) / (tf.tf + CAST(:k1 AS float8) "
            "  * (1 - CAST(:b AS float8) + CAST(:b AS float8) * tf.dl / (SELECT avgdl FROM stats)))) AS s "
            "FROM tf JOIN df USING (lexeme) GROUP BY tf.input_id ORDER BY s DESC LIMIT :k"),
            {"u": user_id, "tsq": tsquery, "lexemes": lexemes, "k1": self.K1, "b": self.B, "k": k}).all()
        return [(r[0], float(r[1])) for r in rows]


SESSION_TSV_INDEX = "ix_memory_session_tsv"


def pg_session_columns(conn: Connection, *, like_sqlite: bool = True) -> None:
    """PostgreSQL's `memory_session.tsv` and `dl` generated again: as the memory index makes its
    tsvectors (`pg_postings.tsvector_sql`: accents folded, stop words kept, as FTS5 tokenizes the
    SQLite session table) with `dl` its tokens, repeats included, as FTS5's bm25() measures a row
    (`pg_postings.TOKENS_FUNCTION`); or of the text as written by english with `dl` its distinct
    lexemes (`like_sqlite=False`, as revision 0007 made them); their GIN index with them.
    `pg_postings.create_functions` must have run. The table is written again."""
    tsv = pg_postings.tsvector_sql("text", folded=like_sqlite, like_sqlite=like_sqlite)
    length = f"{pg_postings.TOKENS_FUNCTION}({tsv})" if like_sqlite else f"length({tsv})"
    conn.execute(sql("ALTER TABLE memory_session DROP COLUMN IF EXISTS tsv, DROP COLUMN IF EXISTS dl"))
    conn.execute(sql(f"ALTER TABLE memory_session ADD COLUMN tsv tsvector GENERATED ALWAYS AS ({tsv}) STORED, "
                     f"ADD COLUMN dl integer GENERATED ALWAYS AS ({length}) STORED"))
    conn.execute(sql(f"CREATE INDEX IF NOT EXISTS {SESSION_TSV_INDEX} ON memory_session USING gin(tsv)"))


def sessions_for(engine: Engine) -> SessionIndex:
    return PostgresSessions() if engine.dialect.name == "postgresql" else SQLiteSessions()
