"""Neighbours' words come from the turns only: an episode that sums up several turns of an input (a
model's) is no neighbour, and a turn added with a caller's id (`add(source_id=...)`) is a turn. Stores
written before held a summary's words in the turns' full-text rows (the turns ranked otherwise than
in a store without a model), or no neighbours' words for tagged turns; every input's rows are
written again where they differ and the summaries' own cleared (`near.renew`).

Revision ID: 0011_near_from_turns
"""

from alembic import op

revision = "0011_near_from_turns"
down_revision = "0010_input_refused"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from mirix_py.store.near import renew
    from mirix_py.store.pg_fulltext import PostgresFullText
    from mirix_py.store.sqlite_fulltext import SQLiteFullText

    conn = op.get_bind()
    renew(conn, PostgresFullText() if conn.dialect.name == "postgresql" else SQLiteFullText())


def downgrade() -> None:
    """Nothing to undo: the rows as the earlier version wrote them only ranked turns otherwise."""
