"""Sessions for hybrid search's session leg (`store.sessions`): `memory.input_id` (an episode's
input, indexed with the user) and the `memory_session` full-text index of each input's episodes
(SQLite FTS5 in the user's rowid range; PostgreSQL a table with a generated tsvector, its length
and a GIN index). Both are filled from the existing rows.

Revision ID: 0007_memory_sessions
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_memory_sessions"
down_revision = "0006_memory_vector"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from mirix_py.store.sessions import sessions_for

    conn = op.get_bind()
    inspector = sa.inspect(conn)
    # a database made by `create_all` from the current models (stamped at an older revision) has them
    if "input_id" not in {c["name"] for c in inspector.get_columns("memory")}:
        op.add_column("memory", sa.Column("input_id", sa.String(length=256), nullable=True))
    if "ix_memory_user_input" not in {i["name"] for i in inspector.get_indexes("memory")}:
        op.create_index("ix_memory_user_input", "memory", ["user_id", "input_id"])
    if conn.dialect.name == "postgresql":
        op.execute("CREATE TABLE memory_session (user_id varchar(256) NOT NULL, input_id varchar(256) NOT NULL, "
                   "text text NOT NULL, "
                   "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED, "
                   "dl integer GENERATED ALWAYS AS (length(to_tsvector('english', text))) STORED, "
                   "PRIMARY KEY (user_id, input_id))")
        op.execute("CREATE INDEX ix_memory_session_tsv ON memory_session USING gin(tsv)")
    else:
        op.execute("CREATE VIRTUAL TABLE memory_session USING fts5("
                   "text, ukey, input_id UNINDEXED, tokenize='porter unicode61')")
    sessions_for(conn.engine).rebuild(conn)


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS memory_session")
    op.drop_index("ix_memory_user_input", table_name="memory")
    op.drop_column("memory", "input_id")
