"""SQLite: each full-text row gains a `near` column, the words of the turns said around an episode
in the same input (`fulltext.near_texts`), weighed at `fulltext.NEAR_WEIGHT` in bm25(). FTS5 tables
take no new column, so the table is made again and filled from `memory`. PostgreSQL: nothing.

Revision ID: 0009_fts_near
"""

from alembic import op

revision = "0009_fts_near"
down_revision = "0008_memory_postings"
branch_labels = None
depends_on = None

WITH_NEAR = ("CREATE VIRTUAL TABLE memory_fts USING fts5("
             "text, near, ukey, mtype, memory_id UNINDEXED, tokenize='porter unicode61')")
WITHOUT_NEAR = ("CREATE VIRTUAL TABLE memory_fts USING fts5("
                "text, ukey, mtype, memory_id UNINDEXED, tokenize='porter unicode61')")


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    from mirix_py.store.fulltext import SQLiteFullText

    op.execute("DROP TABLE IF EXISTS memory_fts")
    op.execute(WITH_NEAR)
    SQLiteFullText().rebuild(op.get_bind())


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    from mirix_py.store.fulltext import SQLiteFullText

    op.execute("DROP TABLE IF EXISTS memory_fts")
    op.execute(WITHOUT_NEAR)
    SQLiteFullText().rebuild(op.get_bind(), near=False)
