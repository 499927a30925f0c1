"""The outbox of vector writes to an index outside the SQL transaction (`vector_pending`,
`store.vector_outbox`): which memories a committed write has yet to mirror into Chroma.

Revision ID: 0014_vector_pending
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_vector_pending"
down_revision = "0013_memory_expiry"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "vector_pending" in sa.inspect(op.get_bind()).get_table_names():  # made by `create_all` from the models
        return
    op.create_table(
        "vector_pending",
        sa.Column("write_id", sa.String(32), primary_key=True),
        sa.Column("memory_id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(256), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("vector_pending")
