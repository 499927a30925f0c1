"""A word's combining marks are part of it, and format characters no longer hide a word
(`text.words.MARKS`, `searchable`): an Indic vowel sign or virama split दिल्ली into letters no query
found; "pho" did not find phở (unicode61 folds one accent, not two), nor Arabic written without
harakat the same words written with them; a word inside bidi isolates was indexed with them.

SQLite: `memory_fts` and `memory_session` are made again with FTS5's tokenizer taking marks as word
characters (`words.FTS5_TOKENIZE`) and filled from `memory`, as `indexed_text` renders the texts (a
session's text too, held as written before). PostgreSQL: `mirix_fts_text` is made again with the same
folding, `memory.tsv`, `near_tsv` and `memory_session`'s columns generated again and the postings made
again (its parser takes every non-ASCII character of a C-locale database as a letter already). Text
of ASCII only is indexed as before.

Revision ID: 0022_fulltext_marks
"""

from alembic import op

revision = "0022_fulltext_marks"
down_revision = "0021_source_claims"
branch_labels = None
depends_on = None

MEMORY_FTS = "CREATE VIRTUAL TABLE memory_fts USING fts5(text, near, ukey, mtype, memory_id UNINDEXED, {})"
SESSION_FTS = "CREATE VIRTUAL TABLE memory_session USING fts5(text, ukey, input_id UNINDEXED, {})"
BEFORE = "tokenize='porter unicode61'"  # revisions 0009 and 0007


def upgrade() -> None:
    from mirix_py.text.words import FTS5_TOKENIZE

    _index(FTS5_TOKENIZE, marks=True)


def downgrade() -> None:
    """The tables and columns as revision 0021 had them: SQLite's tokenizer splitting words at marks
    (its rows keep the text as this version renders it), PostgreSQL's text function without the new
    folding."""
    _index(BEFORE, marks=False)


def _index(tokenize: str, *, marks: bool) -> None:
    from mirix_py.store import pg_postings
    from mirix_py.store.sessions import pg_session_columns, sessions_for
    from mirix_py.store.sqlite_fulltext import SQLiteFullText

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg_postings.drop(conn)  # no trigger runs while the columns are made again
        pg_postings.index_columns(conn, marks=marks, clusters=False)  # as this revision made them (0023 goes on)
        pg_session_columns(conn)
        pg_postings.create(conn)
        return
    for table, create in (("memory_fts", MEMORY_FTS), ("memory_session", SESSION_FTS)):
        op.execute(f"DROP TABLE IF EXISTS {table}")
        op.execute(create.format(tokenize))
    SQLiteFullText().rebuild(conn)
    sessions_for(conn.engine).rebuild(conn)
