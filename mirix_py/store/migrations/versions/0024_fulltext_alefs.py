"""An Arabic word written with or without the hamza or madda on its alef is one word
(`text.words.ALEF_FORMS`, `searchable`): احمد finds أحمد, اسلام إسلام, امن آمن (and the other way), as a
word with and without harakat already met (revision 0022). Hamza on waw and yeh (ؤ ئ) is kept.

SQLite: the FTS5 rows of the memories holding such an alef (after NFC: a decomposed one too) are
written again, as `indexed_text` renders them, with their inputs' neighbours' words and sessions
(`memory_session`); the other rows are already as the index holds them. PostgreSQL: `mirix_fts_text`
is made again with the alefs folded, `memory.tsv`, `near_tsv` and `memory_session`'s columns generated
again and the postings made again. Text without these letters is indexed as before.

Revision ID: 0024_fulltext_alefs
"""

from alembic import op

revision = "0024_fulltext_alefs"
down_revision = "0023_fulltext_clusters"
branch_labels = None
depends_on = None


def upgrade() -> None:
    _index(alefs=True)


def downgrade() -> None:
    """PostgreSQL's text function, columns and postings as revision 0023 made them; SQLite's rows are
    left as this version writes them (revision 0023's tokenizer reads them, and احمد did not find
    أحمد anyway)."""
    _index(alefs=False)


def _index(*, alefs: bool) -> None:
    import unicodedata

    from mirix_py.store import pg_postings
    from mirix_py.store.sessions import pg_session_columns, sessions_for
    from mirix_py.store.sqlite_fulltext import SQLiteFullText
    from mirix_py.text.words import ALEF_FORM

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg_postings.drop(conn)  # no trigger runs while the columns are made again
        pg_postings.index_columns(conn, alefs=alefs)
        pg_session_columns(conn)
        pg_postings.create(conn)
        return
    if not alefs:
        return
    SQLiteFullText().index_again(
        conn, lambda written: not written.isascii() and bool(ALEF_FORM.search(unicodedata.normalize("NFC", written))),
        sessions_for(conn.engine))
