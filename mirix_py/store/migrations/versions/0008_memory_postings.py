"""PostgreSQL: BM25 postings (`memory_posting`, kept by triggers on `memory`; `store.pg_postings`),
filled from the rows already there; the tsvector's GIN index, which only the former search used,
goes. SQLite: nothing (FTS5 is its postings).

Revision ID: 0008_memory_postings
"""

from alembic import op

revision = "0008_memory_postings"
down_revision = "0007_memory_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from mirix_py.store import pg_postings

    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    pg_postings.add_near_columns(conn)  # the postings count them (filled by 0009_fts_near)
    pg_postings.create(conn)
    op.execute(f"DROP INDEX IF EXISTS {pg_postings.TSV_INDEX}")


def downgrade() -> None:
    from mirix_py.store import pg_postings

    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    pg_postings.drop(conn)
    op.execute(f"CREATE INDEX IF NOT EXISTS {pg_postings.TSV_INDEX} ON memory USING gin(tsv)")
