"""The input log keeps the model writes refused for an input (`InputRecord.refused`): a batch whose
writes were refused for what they said can be processed, and the refusals stay visible with it.

Revision ID: 0010_input_refused
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_input_refused"
down_revision = "0009_fts_near"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("input_log") as batch:
        batch.add_column(sa.Column("refused", sa.JSON, nullable=False, server_default=sa.text("'[]'")))


def downgrade() -> None:
    with op.batch_alter_table("input_log") as batch:
        batch.drop_column("refused")
