"""Full-text index on PostgreSQL: the lexemes of a generated `tsvector` column as postings in a
table of their own (`store.pg_postings`), and Okapi BM25 summed over them in SQL (MIRIX ranks with
`ts_rank`, which is not BM25).
"""

from __future__ import annotations

import math
import time
from typing import Iterable, Sequence

from sqlalchemy import text as sql
from sqlalchemy.engine import Connection

from mirix_py.records import MemoryType
from mirix_py.store import pg_postings
from mirix_py.store.fulltext import STATS_TTL_S, TIE_ORDER_POSTGRES, TIES_WITHIN, Filters, Part, PartHit
from mirix_py.store.near import inputs_by_user, near_of_inputs
from mirix_py.store.pg_postings import doc_sql, key_sql
from mirix_py.text.words import query_terms


# A query's terms as the index holds words: the diacritics FTS5 folds taken off, parsed and stemmed
# by the index's configuration (`pg_postings.tsvector_sql`), no stop word dropped.
QUERY_TSVECTOR = f"to_tsvector('{pg_postings.CONFIG}', {pg_postings.UNACCENT_FUNCTION}(:q))"


def query_lexemes(conn: Connection, query: str) -> list[str]:
    """The query's content words as the index's configuration stems them (`QUERY_TSVECTOR`)."""
    terms = query_terms(query)
    if not terms:
        return []
    return [r[0] for r in conn.execute(
        sql(f"SELECT DISTINCT lexeme FROM unnest({QUERY_TSVECTOR})"), {"q": " ".join(terms)})]


def tsquery_of(lexemes: Iterable[str]) -> str:
    """A tsquery text matching any of these (already stemmed) lexemes."""
    return " | ".join("'" + lx.replace("'", "''") + "'" for lx in lexemes)


def bm25_idf(n_docs: int, df: int) -> float:
    """Okapi BM25's idf, as the PostgreSQL query computes it."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


class PostgresFullText:
    """Okapi BM25 (k1=1.2, b=0.75) over the postings of `store.pg_postings`: per query, the user's
    postings of each query lexeme (of each memory type searched) are summed per memory in one
    index-only scan each, with no memory row or tsvector read until the best are named.

    A lexeme's document frequency is counted among the memories searched (the user's, of the types
    asked for, in the time window), as the tsvector search did. Without a time window it is a
    count per posting key, cached like the user's counts for `STATS_TTL_S` and dropped for the user
    on a write through this index; with one it is counted in the query itself."""

    K1 = 1.2
    B = 0.75
    STATS_TTL_S = STATS_TTL_S
    KEYS_CACHED = 50_000  # a user's key counts kept before their expired ones are dropped
    # memories whose tokens the average length is taken over: counting a tsvector's tokens unnests it, so
    # the exact average of a large user cost a tenth of a second after every write; an estimate from
    # this many is exact for users up to their number
    LENGTH_SAMPLE = 1000

    def __init__(self) -> None:
        self._stats: dict[str, tuple[float, int, float]] = {}
        self._df: dict[str, dict[int, tuple[float, int]]] = {}  # user -> key -> (when counted, count)

    def upsert(self, conn: Connection, rows: Iterable[tuple[str, str, str, str]]) -> None:
        for _, user_id, _, _ in rows:  # the triggers write the postings; the counts change
            self.forget(user_id)

    def rebuild(self, conn: Connection, *, near: bool = True) -> int:
        """The neighbours' words of every episode again (`near`), then every posting."""
        self._stats.clear()
        self._df.clear()
        if near:
            self.fill_near(conn)
        return pg_postings.rebuild(conn)

    def fill_near(self, conn: Connection) -> None:
        for user_id, input_ids in inputs_by_user(conn).items():
            self.refresh_near(conn, user_id, input_ids)

    def delete(self, conn: Connection, items: Iterable[tuple[str, str]]) -> None:
        for user_id, _ in items:
            self.forget(user_id)

    def delete_user(self, conn: Connection, user_id: str) -> None:
        self.forget(user_id)  # the postings go with the user's memory rows (triggers)

    def refresh_near(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None:
        """Set `memory.near` of these inputs' episodes where it changed, in one statement (the
        triggers write the postings)."""
        near = near_of_inputs(conn, user_id, input_ids)
        if not near:
            return
        conn.execute(sql(
            "UPDATE memory m SET near = v.n FROM unnest(CAST(:ids AS text[]), CAST(:nears AS text[])) AS v(i, n) "
            "WHERE m.id = v.i AND m.near IS DISTINCT FROM v.n"),
            {"ids": list(near), "nears": [v or None for v in near.values()]})
        self.forget(user_id)

    def clear_near(self, conn: Connection, user_id: str, memory_ids: Iterable[str]) -> None:
        """Empty `memory.near` of these memories (the triggers write the postings)."""
        ids = list(memory_ids)
        if ids:
            conn.execute(sql("UPDATE memory SET near = NULL WHERE user_id = :u AND id = ANY(CAST(:ids AS text[])) "
                             "AND near IS NOT NULL"), {"u": user_id, "ids": ids})
            self.forget(user_id)

    def forget(self, user_id: str) -> None:
        """Drop this process's cached counts of a user (after a write)."""
        self._stats.pop(user_id, None)
        self._df.pop(user_id, None)

    def _user_stats(self, conn: Connection, user_id: str) -> tuple[int, float]:
        cached = self._stats.get(user_id)
        now = time.monotonic()
        if cached and now - cached[0] < self.STATS_TTL_S:
            return cached[1], cached[2]
        n, avgdl = conn.execute(  # tokens per memory, as the postings' `dl` counts them, over a sample
            sql("SELECT (SELECT count(*) FROM memory WHERE user_id = :u), "
                f"(SELECT coalesce(avg(s.t), 1) FROM (SELECT {pg_postings.row_tokens_sql('m')} AS t FROM memory m "
                "WHERE m.user_id = :u LIMIT :sample) s)"),
            {"u": user_id, "sample": self.LENGTH_SAMPLE}
        ).one()
        self._stats[user_id] = (now, int(n), float(avgdl) or 1.0)
        return int(n), float(avgdl) or 1.0

    def _keys(self, conn: Connection, query: str, filters: Filters) -> tuple[list[int], list[int], int]:
        """The posting keys of the query's lexemes in the types searched, each with the index of
        its lexeme, and how many lexemes there are."""
        terms = query_terms(query)
        if not terms:
            return [], [], 0
        types = list(filters.memory_types or [t.value for t in MemoryType])
        rows = conn.execute(sql(  # the lexemes as `query_lexemes` finds them, in the same round trip
            f"SELECT {key_sql(':u', 't', 'l.lexeme')}, l.i FROM (SELECT lexeme, "
            "CAST(row_number() OVER (ORDER BY lexeme) AS int) - 1 AS i FROM (SELECT DISTINCT lexeme "
            f"FROM unnest({QUERY_TSVECTOR})) d) l CROSS JOIN unnest(CAST(:types AS text[])) AS t ORDER BY l.i"),
            {"u": filters.user_id, "q": " ".join(terms), "types": types}).all()
        return [int(r[0]) for r in rows], [int(r[1]) for r in rows], (int(rows[-1][1]) + 1 if rows else 0)

    def _key_df(self, conn: Connection, user_id: str, keys: Sequence[int]) -> dict[int, int]:
        """How many of the user's memories each posting key holds (cached)."""
        now = time.monotonic()
        known = self._df.setdefault(user_id, {})
        out: dict[int, int] = {}
        missing = []
        for key in keys:
            cached = known.get(key)
            if cached and now - cached[0] < self.STATS_TTL_S:
                out[key] = cached[1]
            else:
                missing.append(key)
        if missing:
            counted: dict[int, int] = dict(conn.execute(sql(
                f"SELECT key, count(*) FROM {pg_postings.TABLE} WHERE key = ANY(CAST(:keys AS bigint[])) GROUP BY key"),
                {"keys": missing}).all())
            if len(known) > self.KEYS_CACHED:  # entries past their time go, so it cannot grow without end
                known = self._df[user_id] = {k: v for k, v in known.items() if now - v[0] < self.STATS_TTL_S}
            for key in missing:
                out[key] = int(counted.get(key, 0))
                known[key] = (now, out[key])
        return out

    def search(self, conn: Connection, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        keys, lexeme_of, n_lexemes = self._keys(conn, query, filters)
        if not keys:
            return []
        n_docs, avgdl = self._user_stats(conn, filters.user_id)
        n = max(n_docs, 1)
        # BM25 term: idf * (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl)), with the constants folded
        params: dict = {"u": filters.user_id, "keys": keys, "c1": self.K1 * (1 - self.B),
                        "c2": self.K1 * self.B / avgdl, "wide": k * TIES_WITHIN, "k": k, "kth": k - 1}
        window = []
        for name, op in (("start", ">="), ("end", "<")):
            if getattr(filters, name) is not None:
                window.append(f"p.occurred_at {op} :{name}")
                params[name] = getattr(filters, name)
        if window:  # document frequencies within the window: counted here
            params.update({"lexeme": lexeme_of, "n": n, "k1p": self.K1 + 1})
            weighed = (
                f"p AS MATERIALIZED (SELECT w.lexeme, p.doc, p.tf, p.dl FROM unnest(CAST(:keys AS bigint[]), "
                f"  CAST(:lexeme AS int[])) AS w(key, lexeme) JOIN {pg_postings.TABLE} p ON p.key = w.key "
                f"  WHERE {' AND '.join(window)}), "
                "df AS (SELECT lexeme, CAST(:k1p AS float8) * ln(1 + (CAST(:n AS float8) - count(*) + 0.5) "
                "  / (count(*) + 0.5)) AS idf FROM p GROUP BY lexeme), "
                "scored AS (SELECT p.doc, df.idf, p.tf, p.dl FROM p JOIN df USING (lexeme)), ")
        else:
            per_key = self._key_df(conn, filters.user_id, keys)
            df = [0] * n_lexemes
            for key, lexeme in zip(keys, lexeme_of):
                df[lexeme] += per_key[key]
            params["idf"] = [(self.K1 + 1) * bm25_idf(n, df[lexeme]) for lexeme in lexeme_of]
            weighed = (
                f"scored AS (SELECT p.doc, w.idf, p.tf, p.dl FROM unnest(CAST(:keys AS bigint[]), "
                f"  CAST(:idf AS float8[])) AS w(key, idf) JOIN {pg_postings.TABLE} p ON p.key = w.key), ")
        rows = conn.execute(sql(
            "WITH " + weighed +
            "top AS (SELECT doc, sum(idf * tf / (tf + CAST(:c1 AS float8) + CAST(:c2 AS float8) * dl)) AS s "
            "  FROM scored GROUP BY doc ORDER BY s DESC LIMIT :wide) "
            # the tied group at the k-th's score is ordered by its memories' time and text
            f"SELECT m.id, top.s FROM top JOIN memory m ON {doc_sql('m.id')} = top.doc AND m.user_id = :u "
            "WHERE top.s >= coalesce((SELECT s FROM top ORDER BY s DESC OFFSET :kth LIMIT 1), "
            f"  CAST('-Infinity' AS float8)) ORDER BY top.s DESC, {TIE_ORDER_POSTGRES}, m.id COLLATE \"C\" LIMIT :k"),
            params).all()
        return [(r[0], float(r[1])) for r in rows]

    def parts(self, conn: Connection, query: str, filters: Filters) -> int:
        """One: PostgreSQL plans a search itself (and a parallel plan is the server's to choose)."""
        return 1

    def search_named(self, conn: Connection, query: str, rest: str, filters: Filters,
                     k: int) -> tuple[list[tuple[str, float]], list[tuple[str, float]]] | None:
        """None: each is searched (no shared query here)."""
        return None

    def search_part(self, conn: Connection, query: str, filters: Filters, k: int, part: Part) -> list[PartHit]:
        if part != (0, 1):
            raise ValueError("PostgreSQL searches whole: parts() is 1")
        return [(i, score, ()) for i, score in self.search(conn, query, filters, k)]
