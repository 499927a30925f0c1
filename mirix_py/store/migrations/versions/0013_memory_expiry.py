"""When a memory expires (`memory.expires_at`, indexed for the sweep that deletes expired memories);
every existing memory is kept until deleted (NULL).

Revision ID: 0013_memory_expiry
"""

import sqlalchemy as sa
from alembic import op

from mirix_py.store.tables import UTCDateTime

revision = "0013_memory_expiry"
down_revision = "0012_memory_actor"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    # a database made by `create_all` from the current models (stamped at an older revision) has them
    if "expires_at" not in {c["name"] for c in inspector.get_columns("memory")}:
        op.add_column("memory", sa.Column("expires_at", UTCDateTime(), nullable=True))
    if "ix_memory_expires_at" not in {i["name"] for i in inspector.get_indexes("memory")}:
        op.create_index("ix_memory_expires_at", "memory", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_memory_expires_at", table_name="memory")
    op.drop_column("memory", "expires_at")
