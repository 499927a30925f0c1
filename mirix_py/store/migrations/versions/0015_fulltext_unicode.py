"""Full-text search compares one Unicode form and finds a word inside CJK text (`text.words.indexed_text`):
the index holds each memory's text in NFC with a few letters folded (ß, İ, ё, Greek accents), its
Han, kana and Hangul letters set apart and followed by their adjacent pairs. SQLite: the FTS5 rows
of the memories whose text that changes are written again, with their inputs' neighbours' words;
the others are already as the index holds them. PostgreSQL: `memory.tsv` and `near_tsv` are
generated of `mirix_fts_text` (`store.pg_postings`), the SQL twin of `indexed_text`, and the
postings made again.

Revision ID: 0015_fulltext_unicode
"""

from alembic import op

revision = "0015_fulltext_unicode"
down_revision = "0014_vector_pending"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from mirix_py.store import pg_postings
    from mirix_py.store.sqlite_fulltext import SQLiteFullText

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg_postings.drop(conn)  # no trigger runs while the columns are made again
        pg_postings.index_columns(conn, like_sqlite=False)  # as this revision made them (0016 goes on)
        pg_postings.create(conn)
        return
    SQLiteFullText().index_folded(conn)


def downgrade() -> None:
    """PostgreSQL: the tsvectors of the text as written again. SQLite: nothing to undo (the earlier
    version searches these rows; a word inside a CJK run it did not find anyway)."""
    from mirix_py.store import pg_postings

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg_postings.drop(conn)
        pg_postings.index_columns(conn, folded=False)
        pg_postings.create(conn)
