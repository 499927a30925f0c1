"""Full-text index on SQLite: an FTS5 table ranked by its `bm25()`, scoped to a user by rowid.

Each user's rows sit in a rowid range of their own (`user_rowid_range`), so a query seeks the
terms' postings into that range and scores only that user's matches (matching a per-user token
instead made bm25() walk all of the user's postings for its statistics: ~6 ms at 100k memories).
The per-user token column stays, for the rare users whose ranges coincide. An episode's row also
holds its neighbours' words in a column of its own, weighed at `near.NEAR_WEIGHT` (`store.near`). A
large user's very common query words only score the rows its rarer ones select (`left_out_terms`,
`SQLiteFullText._ranked_rescored`, scored as bm25() would by `store.fts5_scoring`).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable, Protocol, Sequence

from sqlalchemy import text as sql
from sqlalchemy.engine import Connection

from mirix_py.store.fts5_scoring import DEFAULT_AVGDL, TermHolders, fts5_averages, fts5_idf, fts5_term_score
from mirix_py.store.fulltext import STATS_TTL_S, TIE_ORDER_SQLITE, TIES_WITHIN, Filters, Part, PartHit
from mirix_py.store.near import NEAR_WEIGHT, inputs_by_user, near_of_inputs
from mirix_py.text.words import indexed_text, query_terms, tokens


def user_token(user_id: str) -> str:
    return "u" + hashlib.sha1(user_id.encode()).hexdigest()[:20]


USER_BITS = 31
SLOT_BITS = 32
PROBE_SLOTS = 16  # a memory's row takes the first free slot of these, from its home slot on


def user_rowid_range(user_id: str) -> tuple[int, int]:
    """Inclusive rowid range of a user's full-text rows: the top 31 of 63 bits are a hash of the user."""
    bucket = int(hashlib.sha1(user_id.encode()).hexdigest()[:8], 16) >> (32 - USER_BITS)
    low = bucket << SLOT_BITS
    return low, low + (1 << SLOT_BITS) - 1


def fts_rowid(user_id: str, memory_id: str) -> int:
    """Home slot of a memory's full-text row, inside its user's range. Explicit and stable (SQLite
    may renumber implicit rowids on VACUUM); two memories can share a home slot, so rows are
    written to the first free slot from there (`SQLiteFullText.upsert`)."""
    low, _ = user_rowid_range(user_id)
    return low + int(hashlib.sha1(memory_id.encode()).hexdigest()[:8], 16) % ((1 << SLOT_BITS) - PROBE_SLOTS)


def sqlite_time(value: datetime) -> str:
    """A time as SQLAlchemy's DateTime stores it in SQLite (UTC, four-digit year), so that text order
    is time order; strftime('%Y') leaves years before 1000 unpadded ('500-01-01' sorts after '1900')."""
    utc = value.astimezone(timezone.utc)
    return f"{utc.year:04d}-{utc:%m-%d %H:%M:%S.%f}"


PARALLEL_MIN_DOCS = 20_000  # SQLite: a user this large is searched in two parts side by side
# SQLite, a user of PARALLEL_MIN_DOCS memories or more: a query term held by more than this share of
# them matches the memories' own words only. bm25() scores every row a term matches, and the
# neighbours' words (`store.near`) multiply a common term's rows; a common word weighs little anyway.
NEAR_COMMON_SHARE = 0.01
# SQLite, a user of PARALLEL_MIN_DOCS memories or more: a query term in the own words of more than
# this share of them selects no rows when the query holds a rarer term, and only scores the rows
# that term selects. bm25() costs about the same for every row it scores, so such a word set the
# search's time (benchmarks/docs/search_latency.md, "Very common words of a large user").
LEFT_OUT_SHARE = 0.05
TERMS_CACHED = 50_000  # a user's term counts kept before their expired ones are dropped


def left_out_terms(counts: dict[str, tuple[int, int]], n: int, share: float) -> frozenset[str]:
    """The query terms a search of a large user leaves out: those in the own words of more than
    `share` of its `n` memories, as long as a rarer term that matches something stays (otherwise
    all stay). `counts`: term -> (memories holding it in any column, in their own words)."""
    common = frozenset(t for t, (_, own) in counts.items() if own > share * n)
    rarer_found = any(rows > 0 for t, (rows, _) in counts.items() if t not in common)
    return common if rarer_found else frozenset()


def driver_rows(conn: Connection, statement: str, params: dict | tuple) -> list[tuple]:
    """A read's rows from the driver's own cursor: SQLAlchemy's result handling adds to each of the
    full-text leg's reads of a few hundred rows, holding Python's lock while the other legs wait on it
    (benchmarks/docs/search_latency.md, "Full-text reads on the driver's cursor")."""
    driver = conn.connection.driver_connection
    assert driver is not None, "a connection checked out of the pool has its driver's connection"
    cursor = driver.cursor()
    try:
        return cursor.execute(statement, params).fetchall()
    finally:
        cursor.close()


def tie_key_sqlite(memory_id: str, occurred_at: str | None, text: str | None) -> tuple:
    """A memory's key in TIE_ORDER_SQLITE, from its row as SQLite stores it; a memory row gone (NULL
    text) orders first, as a NULL does in SQL."""
    return (occurred_at is None, occurred_at or "", text is not None, text or "", memory_id)


RESCORE_WITHIN = 8  # a search with scoring-only terms rescores the best this many times k rows


@dataclass(frozen=True)
class FtsQuery:
    """A query as FTS5 runs it: `match` selects and scores the rows; `scoring_only` terms add their
    score where a selected row holds them; `whole` selects by every term."""
    match: str
    whole: str
    scoring_only: tuple[str, ...] = ()


def type_token(memory_type: str) -> str:
    return "t" + memory_type.replace("_", "")


# FTS5's bm25() with a weight per column: text, near (the neighbours' words), ukey, mtype, memory_id.
BM25_SQLITE = f"bm25(memory_fts, 1.0, {NEAR_WEIGHT}, 0.0, 0.0, 0.0)"


class Refreshing(Protocol):
    """What `index_again` asks of a session index (`store.sessions.SessionIndex`, which imports this module)."""

    def refresh(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None: ...


class SQLiteFullText:
    """FTS5 with porter stemming. A user's rows sit in the user's rowid range; memory type is an
    indexed token column of the FTS table itself, so a query never joins `memory` unless it filters
    on time."""

    TIME_OVERFETCH = 5

    def __init__(self) -> None:
        self._counts: dict[str, tuple[float, int]] = {}  # user -> (when counted, memories)
        self._term_rows: dict[str, dict[str, tuple[float, tuple[int, int]]]] = {}  # user -> term -> (when, counts)
        self._term_table_rows: dict[str, tuple[float, int]] = {}  # term -> (when, rows of the whole table)
        self._averages: tuple[float, int, float] | None = None  # (when, rows, average tokens per row)
        self._holders = TermHolders()

    def upsert(self, conn: Connection, rows: Iterable[tuple[str, str, str, str]]) -> None:
        """rows: (memory_id, user_id, memory_type, text); the row holds the text as `indexed_text`
        renders it (CJK letters set apart, one Unicode form), the memory keeps its own."""
        rows = list(rows)
        if not rows:
            return
        self.delete(conn, [(r[1], r[0]) for r in rows])
        taken: set[int] = set()
        params = []
        for mid, uid, mtype, text in rows:
            rowid = self._free_slot(conn, fts_rowid(uid, mid), taken)
            taken.add(rowid)
            params.append({"rowid": rowid, "text": indexed_text(text), "ukey": user_token(uid), "mtype": type_token(mtype),
                           "id": mid})
        conn.execute(
            sql("INSERT INTO memory_fts(rowid, text, ukey, mtype, memory_id) VALUES (:rowid, :text, :ukey, :mtype, :id)"),
            params,
        )

    @staticmethod
    def _slots(conn: Connection, home: int) -> dict[int, str]:
        rows = conn.execute(sql("SELECT rowid, memory_id FROM memory_fts WHERE rowid BETWEEN :lo AND :hi"),
                            {"lo": home, "hi": home + PROBE_SLOTS - 1}).all()
        return {int(r[0]): r[1] for r in rows}

    def _free_slot(self, conn: Connection, home: int, taken: set[int]) -> int:
        used = self._slots(conn, home)
        for rowid in range(home, home + PROBE_SLOTS):
            if rowid not in used and rowid not in taken:
                return rowid
        raise RuntimeError(f"full-text slots {home}..{home + PROBE_SLOTS - 1} are all taken")  # ~never: 2^32 per user

    def rebuild(self, conn: Connection, *, near: bool = True) -> int:
        """Index every memory row again (after a restore or a migration). `near`: also the
        neighbours' words, from `memory.input_id` (migrations from before that column pass False)."""
        conn.execute(sql("DELETE FROM memory_fts"))
        rows = conn.execute(sql("SELECT id, user_id, memory_type, text FROM memory")).all()
        if rows:
            self.upsert(conn, [(r[0], r[1], r[2], r[3]) for r in rows])
        if near:
            for user_id, input_ids in inputs_by_user(conn).items():
                self.refresh_near(conn, user_id, input_ids)
        return len(rows)

    def index_folded(self, conn: Connection) -> int:
        """Index again the memories whose text `indexed_text` renders otherwise than as written (CJK,
        decomposed accents, the folded letters), and the neighbours' words of their inputs: rows
        indexed before it held the text as written. Returns how many memories were indexed again."""
        return self.index_again(conn, lambda text: indexed_text(text) != text)

    def index_again(self, conn: Connection, which: Callable[[str], bool],
                    sessions: Refreshing | None = None) -> int:
        """Index again the memories whose text `which` picks, and the neighbours' words of their inputs
        (with `sessions`, their inputs' sessions too): a revision that renders some texts
        otherwise leaves every other row as it is. Returns how many memories were indexed again."""
        rows = [r for r in conn.execute(sql("SELECT id, user_id, memory_type, text, input_id FROM memory")).all()
                if which(r[3])]
        self.upsert(conn, [(r[0], r[1], r[2], r[3]) for r in rows])
        inputs: dict[str, set[str]] = {}
        for _, user_id, _, _, input_id in rows:
            if input_id:
                inputs.setdefault(user_id, set()).add(input_id)
        for user_id, input_ids in inputs.items():
            self.refresh_near(conn, user_id, input_ids)
            if sessions is not None:
                sessions.refresh(conn, user_id, input_ids)
        return len(rows)

    def refresh_near(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None:
        """Write the neighbours' words (as `indexed_text` renders them) of every episode of these
        inputs whose row holds other ones."""
        changed = []
        for memory_id, words in near_of_inputs(conn, user_id, input_ids).items():
            near = indexed_text(words)
            home = fts_rowid(user_id, memory_id)
            row = conn.execute(sql("SELECT rowid, near FROM memory_fts WHERE rowid BETWEEN :lo AND :hi "
                                   "AND memory_id = :id"),
                               {"lo": home, "hi": home + PROBE_SLOTS - 1, "id": memory_id}).first()
            if row is not None and (row[1] or "") != near:
                changed.append({"r": int(row[0]), "n": near})
        if changed:
            conn.execute(sql("UPDATE memory_fts SET near = :n WHERE rowid = :r"), changed)

    def clear_near(self, conn: Connection, user_id: str, memory_ids: Iterable[str]) -> None:
        """Empty the neighbours' words of these memories' rows."""
        params = [{"lo": home, "hi": home + PROBE_SLOTS - 1, "id": memory_id}
                  for home, memory_id in ((fts_rowid(user_id, m), m) for m in memory_ids)]
        if params:
            conn.execute(sql("UPDATE memory_fts SET near = NULL WHERE rowid BETWEEN :lo AND :hi "
                             "AND memory_id = :id AND near IS NOT NULL"), params)

    def delete(self, conn: Connection, items: Iterable[tuple[str, str]]) -> None:
        """items: (user_id, memory_id)"""
        params = [{"lo": home, "hi": home + PROBE_SLOTS - 1, "id": memory_id}
                  for home, memory_id in ((fts_rowid(u, m), m) for u, m in items)]
        if params:
            conn.execute(sql("DELETE FROM memory_fts WHERE rowid BETWEEN :lo AND :hi AND memory_id = :id"), params)

    def delete_user(self, conn: Connection, user_id: str) -> None:
        """Every full-text row of a user in one statement: the user's rowid range, and the user's
        token (another user may hash to the same range)."""
        low, high = user_rowid_range(user_id)
        conn.execute(sql("DELETE FROM memory_fts WHERE rowid IN (SELECT rowid FROM memory_fts "
                         "WHERE memory_fts MATCH :match AND rowid BETWEEN :lo AND :hi)"),
                     {"match": f'ukey : "{user_token(user_id)}"', "lo": low, "hi": high})

    def parts(self, conn: Connection, query: str, filters: Filters) -> int:
        """Two for a user of PARALLEL_MIN_DOCS memories or more on a machine of two cores or more,
        without a time window: FTS5 scores every match in one thread, and a large user's common
        words match thousands of memories (benchmarks/docs/fts_ranking.md). One when the
        query leaves words out (`left_out_terms`): its rows are already few, and each part's
        rescoring, in Python, would wait on the other's."""
        if filters.start is not None or filters.end is not None or (os.cpu_count() or 1) < 2:
            return 1
        if self._user_count(conn, filters.user_id) < PARALLEL_MIN_DOCS:
            return 1
        found = self._match(conn, query, filters)
        return 1 if found is None or found.scoring_only else 2

    def _user_count(self, conn: Connection, user_id: str) -> int:
        cached = self._counts.get(user_id)
        now = time.monotonic()
        if cached and now - cached[0] < STATS_TTL_S:
            return cached[1]
        n = int(conn.execute(sql("SELECT count(*) FROM memory WHERE user_id = :u"), {"u": user_id}).scalar_one())
        self._counts[user_id] = (now, n)
        return n

    def search(self, conn: Connection, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        found = self._match(conn, query, filters)
        if found is None:
            return []
        timed = filters.start is not None or filters.end is not None
        if not timed:
            return [(i, score) for i, score, _ in self._ranked_query(conn, found, filters.user_id, k)]
        n = k * self.TIME_OVERFETCH
        ranked = [(i, score) for i, score, _ in self._ranked_query(conn, found, filters.user_id, n)]
        if not ranked:
            return ranked
        allowed = self._within_time(conn, [i for i, _ in ranked], filters)
        kept = [hit for hit in ranked if hit[0] in allowed]
        if len(kept) >= k or len(ranked) < n:  # the first n in the settled order, filtered: its first k
            return kept[:k]
        # a narrow window: let SQL filter all matches (with every term: the window bounds the rows)
        return self._ranked_in_time(conn, found.whole, filters, k)

    def search_part(self, conn: Connection, query: str, filters: Filters, k: int, part: Part) -> list[PartHit]:
        if filters.start is not None or filters.end is not None:
            raise ValueError("a search with a time window runs whole")
        found = self._match(conn, query, filters)
        return [] if found is None else self._ranked_query(conn, found, filters.user_id, k, part)

    def _match(self, conn: Connection, query: str, filters: Filters) -> FtsQuery | None:
        """`match_expression`, where for a user of PARALLEL_MIN_DOCS memories or more the terms held
        by over NEAR_COMMON_SHARE of them match their own words only, and those in the own words of
        over LEFT_OUT_SHARE of them only score the rows the others select (`left_out_terms`)."""
        terms = query_terms(query)
        if not terms:
            return None
        n = self._user_count(conn, filters.user_id)
        if n < PARALLEL_MIN_DOCS:
            whole = self.match_expression(query, filters)
            return None if whole is None else FtsQuery(whole, whole)
        counts = {t: self._term_counts(conn, filters.user_id, t) for t in terms}
        common = frozenset(t for t, (rows, _) in counts.items() if rows > NEAR_COMMON_SHARE * n)
        left_out = left_out_terms(counts, n, LEFT_OUT_SHARE)
        whole = self.match_expression(query, filters, own_words_only=common)
        match = self.match_expression(query, filters, own_words_only=common, left_out=left_out)
        if whole is None or match is None:
            return None
        return FtsQuery(match, whole, tuple(t for t in terms if t in left_out))

    def _ranked_query(self, conn: Connection, found: FtsQuery, user_id: str, k: int,
                      part: Part = (0, 1)) -> list[PartHit]:
        if not found.scoring_only:
            return self._ranked(conn, found.match, user_id, k, part)
        return self._ranked_rescored(conn, found, user_id, k, part)

    # The best `wide` rows by the selecting terms, with what rescoring them needs.
    _CANDIDATES = ("WITH r AS MATERIALIZED (SELECT rowid AS id, " + BM25_SQLITE + " AS s FROM memory_fts "
                   "WHERE memory_fts MATCH :match AND rowid BETWEEN :lo AND :hi ORDER BY s LIMIT :wide) "
                   "SELECT r.id, r.s, f.memory_id, f.ukey, f.text, f.near FROM r JOIN memory_fts f ON f.rowid = r.id")

    def _ranked_rescored(self, conn: Connection, found: FtsQuery, user_id: str, k: int, part: Part) -> list[PartHit]:
        """The best `k` of the rows `found.match` selects, each scored as bm25() scores the whole
        query, the `scoring_only` terms counted once where a row holds them in its own words: the
        best RESCORE_WITHIN times k rows by the selecting terms are rescored (a row further down would
        need the scoring-only terms to outweigh that gap; their weight is small, as they are common)."""
        rows = self._candidates(conn, found.match, user_id, k * RESCORE_WITHIN, part)
        if not rows:
            return []
        scores = self._rescored(rows, self._term_parts(conn, rows, found.scoring_only), found.scoring_only)
        return self._best(scores, k, self._tie_keys(conn, self._leading(scores, k)))

    def _candidates(self, conn: Connection, match: str, user_id: str, wide: int, part: Part) -> list:
        """The best `wide` rows `match` selects in `part` of the user's range: (rowid, bm25, memory id,
        ukey, text, near)."""
        low, high = self._part_range(user_id, part)
        token = user_token(user_id)
        params = {"lo": low, "hi": high, "wide": wide}
        rows = driver_rows(conn, self._CANDIDATES, {**params, "match": match})
        if any(r[3] != token for r in rows):  # another user's rows in this range: match the user token too
            rows = driver_rows(conn, self._CANDIDATES, {**params, "match": f'ukey : "{token}" AND {match}'})
        return rows

    @staticmethod
    def _tie_keys(conn: Connection, memory_ids: Sequence[str]) -> dict[str, tuple]:
        """Each memory's key in TIE_ORDER_SQLITE (`tie_key_sqlite`)."""
        marks = ", ".join("?" * len(memory_ids))  # the driver's own placeholders: a tied group can be long
        found = {r[0]: (r[1], r[2]) for r in driver_rows(
            conn, f"SELECT id, occurred_at, text FROM memory WHERE id IN ({marks})", tuple(memory_ids))}
        return {memory_id: tie_key_sqlite(memory_id, *found.get(memory_id, (None, None))) for memory_id in memory_ids}

    def _term_parts(self, conn: Connection, rows: Sequence, terms: Sequence[str]) -> dict[str, dict[str, float]]:
        """For each term, what it adds to bm25() for each candidate row holding it in its own words
        (by memory id), counted once."""
        if not terms:
            return {}
        total_rows, avgdl = self._table_stats(conn)
        by_rowid = {r[0]: r for r in rows}  # the driver's rows: FTS5 rowids are ints already
        holders = self._holders.holding(terms, [(rowid, r[4] or "") for rowid, r in by_rowid.items()])
        # FTS5's row size: its words, the neighbours' words (one token each, space-separated), ukey, mtype
        sizes = {rowid: len(tokens(by_rowid[rowid][4] or "")) + len((by_rowid[rowid][5] or "").split()) + 2
                 for rowid in set().union(*holders)}
        parts: dict[str, dict[str, float]] = {}
        for term, held in zip(terms, holders):
            idf = fts5_idf(total_rows, self._table_rows(conn, term))
            parts[term] = {by_rowid[rowid][2]: fts5_term_score(idf, 1.0, sizes[rowid], avgdl) for rowid in held}
        return parts

    @staticmethod
    def _rescored(rows: Sequence, parts: dict[str, dict[str, float]], terms: Sequence[str]) -> dict[str, float]:
        """Each candidate's bm25() score (higher is better) with what `terms` add where it holds them."""
        return {memory_id: -float(s) + sum(parts[t].get(memory_id, 0.0) for t in terms)
                for _, s, memory_id, *_ in rows}

    @staticmethod
    def _leading(scores: dict[str, float], k: int) -> list[str]:
        """The first `k` of `scores`, and any tied with the k-th."""
        kth = sorted(scores.values(), reverse=True)[:k][-1]
        return [i for i, score in scores.items() if score >= kth]

    @staticmethod
    def _best(scores: dict[str, float], k: int, keys: dict[str, tuple]) -> list[PartHit]:
        """The best `k` of `scores`, equal scores in tie order (`keys` holds the `_leading` ones)."""
        leading = SQLiteFullText._leading(scores, k)
        return sorted(((i, scores[i], keys[i]) for i in leading), key=lambda hit: (-hit[1], hit[2]))[:k]

    def search_named(self, conn: Connection, query: str, rest: str, filters: Filters,
                     k: int) -> tuple[list[tuple[str, float]], list[tuple[str, float]]] | None:
        """For a user of PARALLEL_MIN_DOCS memories or more, without a time window, when the names
        `query` holds are words the user's memories hold so often that `query`'s search leaves them
        out (`left_out_terms`: the speakers of a conversation are): the best `k` for `query` and for
        `rest` (the query without the names) from one FTS5 query. Both select the same rows then, and
        `query` only rescores them with the names, so each ranks exactly as `search` ranks it. None:
        search each (a small user, a time window, names that select rows of their own)."""
        if filters.start is not None or filters.end is not None:
            return None
        if self._user_count(conn, filters.user_id) < PARALLEL_MIN_DOCS:
            return None
        found, found_rest = self._match(conn, query, filters), self._match(conn, rest, filters)
        if found is None or found_rest is None or found.match != found_rest.match:
            return None
        wide = k * RESCORE_WITHIN
        rows = self._candidates(conn, found.match, filters.user_id, wide, (0, 1))
        if not rows:
            return [], []
        scored_with = tuple(dict.fromkeys([*found.scoring_only, *found_rest.scoring_only]))
        parts = self._term_parts(conn, rows, scored_with)
        scores, rest_scores = (self._rescored(rows, parts, f.scoring_only) for f in (found, found_rest))
        keys = self._tie_keys(conn, list(dict.fromkeys([*self._leading(scores, k), *self._leading(rest_scores, k)])))

        def ranked(leg: FtsQuery, leg_scores: dict[str, float]) -> list[tuple[str, float]]:
            kth = sorted(leg_scores.values(), reverse=True)[:k][-1]
            if not leg.scoring_only and len(rows) == wide and -float(rows[-1][1]) >= kth:
                hits = self._ranked(conn, leg.match, filters.user_id, k)  # a tied group runs past the rows read
            else:
                hits = self._best(leg_scores, k, keys)
            return [(i, score) for i, score, _ in hits]

        return ranked(found, scores), ranked(found_rest, rest_scores)

    def _table_rows(self, conn: Connection, term: str) -> int:
        """Rows of the whole table holding `term` in their own words (bm25()'s count for its idf),
        cached for STATS_TTL_S."""
        now = time.monotonic()
        cached = self._term_table_rows.get(term)
        if cached is None or now - cached[0] >= STATS_TTL_S:
            if len(self._term_table_rows) > TERMS_CACHED:
                self._term_table_rows = {t: v for t, v in self._term_table_rows.items() if now - v[0] < STATS_TTL_S}
            rows = int(conn.execute(sql("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH :m"),
                                    {"m": f'text : "{term}"'}).scalar_one())
            cached = self._term_table_rows[term] = (now, rows)
        return cached[1]

    def _table_stats(self, conn: Connection) -> tuple[int, float]:
        """The table's rows and average row length in tokens, from FTS5's own averages record."""
        now = time.monotonic()
        if self._averages is None or now - self._averages[0] >= STATS_TTL_S:
            blob = conn.execute(sql("SELECT block FROM memory_fts_data WHERE id = 1")).scalar_one_or_none()
            rows, tokens = fts5_averages(bytes(blob)) if blob else (0, 0)
            if not rows:  # written in a transaction not committed yet: FTS5 writes its totals on commit
                rows = int(conn.execute(sql("SELECT count(*) FROM memory_fts")).scalar_one())
                return rows, DEFAULT_AVGDL
            self._averages = (now, rows, tokens / rows)
        return self._averages[1], self._averages[2]

    def _term_counts(self, conn: Connection, user_id: str, term: str) -> tuple[int, int]:
        """How many of the user's memories hold `term` (own or neighbours' words), and how many in
        their own words, cached for STATS_TTL_S."""
        now = time.monotonic()
        counts = self._term_rows.setdefault(user_id, {})
        if len(counts) > TERMS_CACHED:  # entries past their time go, so it cannot grow without end
            counts = self._term_rows[user_id] = {t: v for t, v in counts.items() if now - v[0] < STATS_TTL_S}
        cached = counts.get(term)
        if cached is None or now - cached[0] >= STATS_TTL_S:
            low, high = user_rowid_range(user_id)
            count = sql("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH :m AND rowid BETWEEN :lo AND :hi")
            rows = int(conn.execute(count, {"m": f'"{term}"', "lo": low, "hi": high}).scalar_one())
            own = int(conn.execute(count, {"m": f'text : "{term}"', "lo": low, "hi": high}).scalar_one())
            cached = counts[term] = (now, (rows, own))
        return cached[1]

    @staticmethod
    def match_expression(query: str, filters: Filters, own_words_only: frozenset[str] = frozenset(),
                         left_out: frozenset[str] = frozenset()) -> str | None:
        """The FTS5 MATCH of a query: any of its terms but those `left_out`, within the filter's
        memory types; the terms in `own_words_only` in the memory's own text only, not its
        neighbours' words."""
        terms = [t for t in query_terms(query) if t not in left_out]
        if not terms:
            return None
        match = "(" + " OR ".join(f'text : "{t}"' if t in own_words_only else f'"{t}"' for t in terms) + ")"
        if filters.memory_types:
            match = "mtype : (" + " OR ".join(f'"{type_token(t)}"' for t in filters.memory_types) + ") AND " + match
        return match

    # The best `wide` matches are scored once; those down to the k-th's score are joined to their
    # memories and the tied group at the cut is ordered there (`TIE_ORDER_SQLITE`). Finding the group by
    # asking again with a larger LIMIT scored every match again each time, and settling it in Python
    # read each tied memory's time and text in a query of its own (benchmarks/docs/search_latency.md,
    # "Ties at the cut"). `foreign_rows` counts rows of another user whose range coincides with this
    # user's.
    _TOP = ("WITH r AS MATERIALIZED (SELECT rowid AS id, " + BM25_SQLITE + " AS s FROM memory_fts "
            "WHERE memory_fts MATCH :match AND rowid BETWEEN :lo AND :hi ORDER BY s LIMIT :wide), "
            "c AS (SELECT id, s FROM r WHERE s <= coalesce((SELECT s FROM r ORDER BY s LIMIT 1 OFFSET :kth), 1e308)) "
            "SELECT f.memory_id, c.s, sum(f.ukey != :token) OVER () AS foreign_rows, m.occurred_at, m.text "
            "FROM c JOIN memory_fts f ON f.rowid = c.id LEFT JOIN memory m ON m.id = f.memory_id "
            "ORDER BY c.s, " + TIE_ORDER_SQLITE + ", f.memory_id LIMIT :k")

    @classmethod
    def _ranked(cls, conn: Connection, match: str, user_id: str, k: int, part: Part = (0, 1)) -> list[PartHit]:
        """The user's best `k` matches (in `part` of the user's rowid range), equal scores in tie
        order (a tied group at the cut is looked for among the best TIES_WITHIN times k)."""
        low, high = cls._part_range(user_id, part)
        token = user_token(user_id)
        params = {"lo": low, "hi": high, "wide": k * TIES_WITHIN, "kth": k - 1, "k": k, "token": token}
        rows = driver_rows(conn, cls._TOP, {**params, "match": match})
        if rows and rows[0][2]:
            # another user hashes to the same range and took some of the best: match the user token too
            rows = driver_rows(conn, cls._TOP, {**params, "match": f'ukey : "{token}" AND {match}'})
        return [(r[0], -float(r[1]), tie_key_sqlite(r[0], r[3], r[4])) for r in rows]

    @staticmethod
    def _part_range(user_id: str, part: Part) -> tuple[int, int]:
        low, high = user_rowid_range(user_id)
        index, count = part
        size = (high - low + 1) // count
        return low + index * size, (high if index == count - 1 else low + (index + 1) * size - 1)

    @staticmethod
    def _time_params(filters: Filters) -> tuple[list[str], dict]:
        clauses, params = [], {}
        for key, op in (("start", ">="), ("end", "<")):
            value = getattr(filters, key)
            if value is not None:
                clauses.append(f"m.occurred_at {op} :{key}")
                params[key] = sqlite_time(value)
        return clauses, params

    def _within_time(self, conn: Connection, ids: list[str], filters: Filters) -> set[str]:
        clauses, params = self._time_params(filters)
        names = ", ".join(f":i{n}" for n in range(len(ids)))
        params.update({f"i{n}": v for n, v in enumerate(ids)})
        rows = conn.execute(sql(f"SELECT m.id FROM memory m WHERE m.id IN ({names}) AND " + " AND ".join(clauses)),
                            params).all()
        return {r[0] for r in rows}

    def _ranked_in_time(self, conn: Connection, match: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        clauses, params = self._time_params(filters)
        rows = conn.execute(
            sql(f"SELECT m.id, {BM25_SQLITE} AS s FROM memory_fts "
                "JOIN memory m ON m.id = memory_fts.memory_id "
                f"WHERE memory_fts MATCH :match AND {' AND '.join(clauses)} ORDER BY s, {TIE_ORDER_SQLITE}, m.id LIMIT :k"),
            {**params, "match": f'ukey : "{user_token(filters.user_id)}" AND {match}', "k": k}).all()
        return [(r[0], -float(r[1])) for r in rows]
