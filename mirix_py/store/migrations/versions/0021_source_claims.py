"""Claims on sources being read before the input log holds them (`InputLog.claim_source`): two runs over one
folder of screenshots each OCR'd the files neither had logged; now a run claims a file before its OCR and
the other skips it while the claim lives (its lease, as an input's claim).

Revision ID: 0021_source_claims
"""

import sqlalchemy as sa
from alembic import op

revision = "0021_source_claims"
down_revision = "0020_delete_lookups"
branch_labels = None
depends_on = None

TABLE = "source_claim"


def upgrade() -> None:
    # a database made by `create_all` from the current models (stamped at an older revision) has it
    if TABLE not in sa.inspect(op.get_bind()).get_table_names():
        op.create_table(
            TABLE,
            sa.Column("id", sa.String(64), primary_key=True),
            sa.Column("claimed_by", sa.String(128), nullable=False),
            sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        )


def downgrade() -> None:
    op.drop_table(TABLE)
