"""SQLite: the full-text table gains an indexed memory-type column, so type-filtered BM25 needs no
join with `memory` (the join dominated query time at 100k memories). Rebuilt from `memory`.

Revision ID: 0004_fts_memory_type
"""

from alembic import op

revision = "0004_fts_memory_type"
down_revision = "0003_api_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    from mirix_py.store.sqlite_fulltext import SQLiteFullText

    op.execute("DROP TABLE IF EXISTS memory_fts")
    op.execute("CREATE VIRTUAL TABLE memory_fts USING fts5("
               "text, ukey, mtype, memory_id UNINDEXED, tokenize='porter unicode61')")
    SQLiteFullText().rebuild(op.get_bind(), near=False)  # no `near` column yet


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    op.execute("DROP TABLE IF EXISTS memory_fts")
    op.execute("CREATE VIRTUAL TABLE memory_fts USING fts5("
               "text, ukey, memory_id UNINDEXED, tokenize='porter unicode61')")
