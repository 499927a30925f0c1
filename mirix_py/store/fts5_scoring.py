"""FTS5's `bm25()` recomputed in Python, for the terms a large user's search leaves out of its MATCH
(`sqlite_fulltext.left_out_terms`): they only add their score to the rows the other terms select,
so which of those rows hold them, the table's averages and each term's idf are read here, and each
term's part is added as bm25() would have.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from typing import Sequence

from mirix_py.text.words import FTS5_TOKENIZE


class TermHolders:
    """Which of a few texts hold a term as FTS5 matches it (same tokenizer, same stemming), in a
    small in-memory FTS5 table per thread. Asking the store instead (`text : "t" AND (...)`) walks
    the common term's whole posting list, which costs more than the rows it saves."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = sqlite3.connect(":memory:", isolation_level=None)
            db.execute(f"CREATE VIRTUAL TABLE held USING fts5(text, {FTS5_TOKENIZE}, detail=none)")
        return db

    def holding(self, terms: Sequence[str], texts: Sequence[tuple[int, str]]) -> list[set[int]]:
        """For each term, the ids of `texts` ((id, text)) that hold it."""
        db = self._db()
        db.execute("BEGIN")
        try:
            db.executemany("INSERT INTO held(rowid, text) VALUES (?, ?)", texts)
            return [{r[0] for r in db.execute("SELECT rowid FROM held WHERE held MATCH ?", (f'"{t}"',))}
                    for t in terms]
        finally:
            db.execute("ROLLBACK")


BM25_K1 = 1.2  # FTS5's bm25() constants
BM25_B = 0.75
DEFAULT_AVGDL = 12.0  # tokens per row assumed while FTS5's totals are not written yet


def fts5_idf(total_rows: int, rows: int) -> float:
    """bm25()'s idf: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6 as FTS5 does."""
    idf = math.log((total_rows - rows + 0.5) / (rows + 0.5)) if total_rows else 0.0
    return idf if idf > 0 else 1e-6


def fts5_term_score(idf: float, freq: float, size: float, avgdl: float) -> float:
    """One term's part of bm25()'s score for a row of `size` tokens (all columns) holding it `freq`
    times (weighted by column)."""
    return idf * freq * (BM25_K1 + 1) / (freq + BM25_K1 * (1 - BM25_B + BM25_B * size / avgdl))


def fts5_averages(blob: bytes) -> tuple[int, int]:
    """(rows, tokens in all columns) from an FTS5 table's averages record (`<table>_data`, id 1):
    SQLite varints, the row count then each column's token total."""
    values, i = [], 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i + j]
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        i += j + 1
        values.append(value)
    return (values[0], sum(values[1:])) if values else (0, 0)
