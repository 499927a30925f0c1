"""What deleting a turn looks up, found by index seeks instead of reading all of the user's rows:

- `memory_source`, a row per (memory, id it cites), kept by triggers on `memory` (`store.citations`)
  and filled from the rows already there: the episodes citing a turn's messages;
- `ix_memory_user_input` also on type and time: SQLite, without statistics, read an input's episodes
  (its session, its neighbours' words) through the (user, type, time) index, every episode of the user;
- `ix_memory_history_user_input`: the changes an input made (erase, undo).

Revision ID: 0020_delete_lookups
"""

import sqlalchemy as sa
from alembic import op

revision = "0020_delete_lookups"
down_revision = "0019_reembed_secret_refs"
branch_labels = None
depends_on = None

SOURCE_INDEX = "ix_memory_source_cited"
INPUT_INDEX = "ix_memory_user_input"
INPUT_COLUMNS = ["user_id", "input_id", "memory_type", "occurred_at"]
HISTORY_INDEX = "ix_memory_history_user_input"


def _indexes(table: str) -> dict[str, list[str]]:
    """The table's indexes by name, each with its columns."""
    return {str(i["name"]): [str(c) for c in i["column_names"]] for i in sa.inspect(op.get_bind()).get_indexes(table)}


def upgrade() -> None:
    from mirix_py.store import citations

    conn = op.get_bind()
    # a database made by `create_all` from the current models (stamped at an older revision) has them
    if citations.TABLE not in sa.inspect(conn).get_table_names():
        op.create_table(
            citations.TABLE,
            sa.Column("memory_id", sa.String(64), primary_key=True),
            sa.Column("source_id", sa.String(256), primary_key=True),
            sa.Column("user_id", sa.String(256), nullable=False),
            sa.Column("memory_type", sa.String(32), nullable=False),
        )
        op.create_index(SOURCE_INDEX, citations.TABLE, ["user_id", "source_id", "memory_type", "memory_id"])
    citations.create_triggers(conn)
    citations.rebuild(conn)
    if _indexes("memory").get(INPUT_INDEX) != INPUT_COLUMNS:
        op.drop_index(INPUT_INDEX, table_name="memory")
        op.create_index(INPUT_INDEX, "memory", INPUT_COLUMNS)
    if HISTORY_INDEX not in _indexes("memory_history"):
        op.create_index(HISTORY_INDEX, "memory_history", ["user_id", "input_id"])


def downgrade() -> None:
    from mirix_py.store import citations

    op.drop_index(HISTORY_INDEX, table_name="memory_history")
    op.drop_index(INPUT_INDEX, table_name="memory")
    op.create_index(INPUT_INDEX, "memory", ["user_id", "input_id"])
    citations.drop_triggers(op.get_bind())
    op.drop_index(SOURCE_INDEX, table_name=citations.TABLE)
    op.drop_table(citations.TABLE)
