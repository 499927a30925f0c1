"""An index in `list`'s order on PostgreSQL: newest first, a memory without a time last, ties by
creation and id (`store.memories.listing_order`). `(user_id, memory_type, occurred_at)` read backwards
gives NULLs first, so a one-type listing of a large user sorted every row of the type. SQLite reads
NULLs as the smallest value, so its index already gives that order: nothing there.

Revision ID: 0017_memory_listing_index
"""

import sqlalchemy as sa
from alembic import op

revision = "0017_memory_listing_index"
down_revision = "0016_fulltext_like_sqlite"
branch_labels = None
depends_on = None

INDEX = "ix_memory_user_type_listing"


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    if INDEX not in {i["name"] for i in sa.inspect(conn).get_indexes("memory")}:
        op.execute(f"CREATE INDEX {INDEX} ON memory (user_id, memory_type, occurred_at DESC NULLS LAST, "
                   "created_at DESC, id DESC)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {INDEX}")
