"""Neighbours' words come from the turns only: an episode that sums up several turns of an input (a
model's) is no neighbour. Stores written before held its words in the turns' full-text rows, so the
turns ranked otherwise than in a store without a model; the inputs holding such an episode have
their rows written again and the summaries' own neighbours' words cleared (`near.renew_summarised`).

Revision ID: 0011_near_from_turns
"""

from alembic import op

revision = "0011_near_from_turns"
down_revision = "0010_input_refused"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from mirix_py.store.near import renew_summarised
    from mirix_py.store.pg_fulltext import PostgresFullText
    from mirix_py.store.sqlite_fulltext import SQLiteFullText

    conn = op.get_bind()
    renew_summarised(conn, PostgresFullText() if conn.dialect.name == "postgresql" else SQLiteFullText())


def downgrade() -> None:
    """Nothing to undo: the rows as the earlier version wrote them only ranked turns otherwise."""
