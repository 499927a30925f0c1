"""A word inside Thai, Lao, Khmer or Burmese text is found (`text.words.CLUSTER`, `indexed_text`):
these scripts are written without spaces between words, and a run of their letters was indexed as one
word, so ตลาด (market) inside ฉันไปตลาดกับแม่เมื่อวานนี้ was not found. The index now holds each
cluster of such a run (a letter with the vowel signs and tone marks written after it) set apart and
each two adjacent clusters, as it holds a CJK run's letters and letter pairs.

SQLite: the FTS5 rows of the memories holding such letters are written again, as `indexed_text`
renders them, with their inputs' neighbours' words and sessions (`memory_session`); the tokenizer is
the one revision 0022 made, and the other rows are already as the index holds them. PostgreSQL:
`mirix_fts_text` is made again with the same split, `memory.tsv`, `near_tsv` and `memory_session`'s
columns generated again and the postings made again. Text without these letters is indexed as before.

Revision ID: 0023_fulltext_clusters
"""

from alembic import op

revision = "0023_fulltext_clusters"
down_revision = "0022_fulltext_marks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _index(clusters=True)


def downgrade() -> None:
    """PostgreSQL's text function, columns and postings as revision 0022 made them; SQLite's rows are
    left as this version writes them (revision 0022's tokenizer reads them, and a word inside a
    Thai run it did not find anyway)."""
    _index(clusters=False)


def _index(*, clusters: bool) -> None:
    from mirix_py.store import pg_postings
    from mirix_py.store.sessions import pg_session_columns, sessions_for
    from mirix_py.store.sqlite_fulltext import SQLiteFullText
    from mirix_py.text.words import UNSPACED

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg_postings.drop(conn)  # no trigger runs while the columns are made again
        pg_postings.index_columns(conn, clusters=clusters, alefs=False)  # as this revision made them (0024 goes on)
        pg_session_columns(conn)
        pg_postings.create(conn)
        return
    if not clusters:
        return
    SQLiteFullText().index_again(conn, lambda written: bool(UNSPACED.search(written)), sessions_for(conn.engine))
