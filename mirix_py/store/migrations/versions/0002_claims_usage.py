"""Worker claims and the per-input manager ledger on the input log; LLM usage accounting.

Revision ID: 0002_claims_usage
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_claims_usage"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("input_log") as batch:
        batch.add_column(sa.Column("claimed_by", sa.String(128)))
        batch.add_column(sa.Column("claimed_at", TS))
        batch.add_column(sa.Column("done_actors", sa.JSON, nullable=False, server_default=sa.text("'[]'")))
    op.create_table(
        "llm_usage",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(256), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("llm_calls", sa.Integer, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("sequential_rounds", sa.Integer, nullable=False),
        sa.Column("wall_seconds", sa.Float, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_llm_usage_user_id", "llm_usage", ["user_id"])


def downgrade() -> None:
    op.drop_table("llm_usage")
    with op.batch_alter_table("input_log") as batch:
        batch.drop_column("done_actors")
        batch.drop_column("claimed_at")
        batch.drop_column("claimed_by")
