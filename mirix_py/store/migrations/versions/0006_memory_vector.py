"""PostgreSQL with the `vector` extension: the `memory_vector` table (pgvector index in the same
database and transactions as the rows). Its dimension and HNSW index come with the first embedder
(`store.pgvectors.PgVectorIndex.ensure`). Other databases: nothing (vectors live in Chroma); the
table is created when pgvector is chosen later (`MIRIX_VECTOR_STORE=pgvector`), by the same function.

Revision ID: 0006_memory_vector
"""

from alembic import op

revision = "0006_memory_vector"
down_revision = "0005_fts_user_rowids"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from mirix_py.store.pgvectors import create_table, has_extension

    conn = op.get_bind()
    if has_extension(conn):
        create_table(conn)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TABLE IF EXISTS memory_vector")
