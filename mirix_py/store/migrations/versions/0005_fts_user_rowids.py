"""SQLite: full-text rows move to per-user rowid ranges (`sqlite_fulltext.user_rowid_range`), so BM25 is
scoped by rowid instead of by matching a per-user token (whose postings bm25() walked in full on
every query). Same table, new rowids: rebuilt from `memory`.

Revision ID: 0005_fts_user_rowids
"""

from alembic import op

revision = "0005_fts_user_rowids"
down_revision = "0004_fts_memory_type"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    from mirix_py.store.sqlite_fulltext import SQLiteFullText

    SQLiteFullText().rebuild(op.get_bind(), near=False)  # no `near` column yet


def downgrade() -> None:
    return None  # the old code finds rows by token, whatever their rowids
