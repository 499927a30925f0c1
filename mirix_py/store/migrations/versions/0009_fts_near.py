"""The neighbours' words (`store.near`) enter the full-text index. SQLite: each FTS5 row gains a
`near` column, weighed at `near.NEAR_WEIGHT` in bm25(); FTS5 tables take no new column, so the
table is made again and filled from `memory`. PostgreSQL: `memory.near` is filled (the column and
its tsvector came with 0008) and the postings are made again, their `tf` now a weighed count.

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
    from mirix_py.store import pg_postings
    from mirix_py.store.sqlite_fulltext import SQLiteFullText
    from mirix_py.store.pg_fulltext import PostgresFullText

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        pg_postings.drop(conn)  # no trigger runs while `near` is filled; the postings are made after
        pg_postings.add_near_columns(conn)
        PostgresFullText().fill_near(conn)
        pg_postings.create(conn)
        return
    op.execute("DROP TABLE IF EXISTS memory_fts")
    op.execute(WITH_NEAR)
    SQLiteFullText().rebuild(conn)


def downgrade() -> None:
    from mirix_py.store import pg_postings
    from mirix_py.store.sqlite_fulltext import SQLiteFullText

    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        op.execute("UPDATE memory SET near = NULL WHERE near IS NOT NULL")
        pg_postings.rebuild(conn)
        return
    op.execute("DROP TABLE IF EXISTS memory_fts")
    op.execute(WITHOUT_NEAR)
    SQLiteFullText().rebuild(conn, near=False)
