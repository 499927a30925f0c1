"""The first schema: memories, their history, the input log, and the full-text index.

Revision ID: 0001_initial
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "memory",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(256), nullable=False),
        sa.Column("memory_type", sa.String(32), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("occurred_at", TS),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("source_ids", sa.JSON, nullable=False),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("fields", sa.JSON, nullable=False),
        sa.Column("secret", sa.Text),
        sa.Column("embedding_model", sa.String(128)),
    )
    op.create_index("ix_memory_user_id", "memory", ["user_id"])
    op.create_index("ix_memory_user_type_time", "memory", ["user_id", "memory_type", "occurred_at"])
    op.create_table(
        "memory_history",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("memory_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(256), nullable=False),
        sa.Column("memory_type", sa.String(32), nullable=False),
        sa.Column("operation", sa.String(16), nullable=False),
        sa.Column("before", sa.JSON),
        sa.Column("after", sa.JSON),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("input_id", sa.String(64)),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_memory_history_memory_id", "memory_history", ["memory_id"])
    op.create_index("ix_memory_history_user_id", "memory_history", ["user_id"])
    op.create_table(
        "input_log",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(256), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("source_id", sa.String(256)),
        sa.Column("occurred_at", TS, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("processed_at", TS),
    )
    op.create_index("ix_input_log_user_id", "input_log", ["user_id"])
    op.create_index("ix_input_status", "input_log", ["status", "created_at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE memory ADD COLUMN tsv tsvector "
                   "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED")
        op.execute("CREATE INDEX ix_memory_tsv ON memory USING gin(tsv)")
    else:
        op.execute("CREATE VIRTUAL TABLE memory_fts USING fts5("
                   "text, ukey, memory_id UNINDEXED, tokenize='porter unicode61')")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        op.execute("DROP TABLE memory_fts")
    op.drop_table("input_log")
    op.drop_table("memory_history")
    op.drop_table("memory")
