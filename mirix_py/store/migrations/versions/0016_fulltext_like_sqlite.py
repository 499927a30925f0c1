"""PostgreSQL's full text treats words as SQLite's FTS5 (`porter unicode61`) does: the diacritics
unicode61 folds are taken off (`mirix_fts_text` does it last, `mirix_fts_unaccent` for a query's
terms; `text.words.unaccented`) and no stop word is dropped (the text search configuration
`mirix_english`: english with a stemmer of no stop word list). `memory.tsv`, `near_tsv` and
`memory_session`'s tsvector and length are generated again with them and the postings made again,
a document's length now its tokens with repeats (`pg_postings.tokens_sql`), as FTS5's bm25() counts
it, not its distinct lexemes: each table is written again under an exclusive lock
(`store.pg_postings`). SQLite: nothing.

Revision ID: 0016_fulltext_like_sqlite
"""

from alembic import op

revision = "0016_fulltext_like_sqlite"
down_revision = "0015_fulltext_unicode"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _index(like_sqlite=True)


def downgrade() -> None:
    """The tsvectors as revision 0015 made them, and the configuration and function gone."""
    from mirix_py.store import pg_postings

    if op.get_bind().dialect.name == "postgresql":
        _index(like_sqlite=False)
        pg_postings.drop_config(op.get_bind())


def _index(*, like_sqlite: bool) -> None:
    from mirix_py.store import pg_postings
    from mirix_py.store.sessions import pg_session_columns

    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    pg_postings.drop(conn)  # no trigger runs while the columns are made again
    pg_postings.index_columns(conn, like_sqlite=like_sqlite, marks=False)  # as this revision made them (0022 goes on)
    pg_session_columns(conn, like_sqlite=like_sqlite)
    pg_postings.create(conn)
