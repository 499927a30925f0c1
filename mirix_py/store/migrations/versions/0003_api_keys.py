"""API keys of the REST server (stored hashed, bound to users).

Revision ID: 0003_api_keys
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_api_keys"
down_revision = "0002_claims_usage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_key",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("users", sa.JSON, nullable=False),
        sa.Column("admin", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
    )


def downgrade() -> None:
    op.drop_table("api_key")
