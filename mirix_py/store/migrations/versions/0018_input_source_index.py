"""An index on the input log by user, kind and source id, for `InputLog.by_source`: a folder's files
are looked up by name (500 at a time) on every run, and without it each lookup read all of the
user's inputs.

Revision ID: 0018_input_source_index
"""

import sqlalchemy as sa
from alembic import op

revision = "0018_input_source_index"
down_revision = "0017_memory_listing_index"
branch_labels = None
depends_on = None

INDEX = "ix_input_user_kind_source"


def upgrade() -> None:
    # a database made by `create_all` from the current models (stamped at an older revision) has it
    if INDEX not in {i["name"] for i in sa.inspect(op.get_bind()).get_indexes("input_log")}:
        op.create_index(INDEX, "input_log", ["user_id", "kind", "source_id"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="input_log")
