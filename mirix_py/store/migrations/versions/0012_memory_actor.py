"""Who said each episode, in a column of its own (`memory.actor`, indexed with the user): hybrid
search asks on every query which of the user's actors the question names (`MemoryStore.actors`).
Filled from the rows' fields.

Revision ID: 0012_memory_actor
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_memory_actor"
down_revision = "0011_near_from_turns"
branch_labels = None
depends_on = None

BATCH = 1000


def upgrade() -> None:
    from mirix_py.store.textrefs import from_refs

    conn = op.get_bind()
    inspector = sa.inspect(conn)
    # a database made by `create_all` from the current models (stamped at an older revision) has them
    if "actor" not in {c["name"] for c in inspector.get_columns("memory")}:
        op.add_column("memory", sa.Column("actor", sa.Text, nullable=True))
    if "ix_memory_user_actor" not in {i["name"] for i in inspector.get_indexes("memory")}:
        op.create_index("ix_memory_user_actor", "memory", ["user_id", "actor"])
    memory = sa.table("memory", sa.column("id", sa.String), sa.column("memory_type", sa.String),
                      sa.column("text", sa.Text), sa.column("fields", sa.JSON), sa.column("actor", sa.Text))
    update = sa.update(memory).where(memory.c.id == sa.bindparam("i")).values(actor=sa.bindparam("a"))
    after = ""
    while True:  # BATCH rows at a time in id order, so a large database is never read whole
        rows = conn.execute(sa.select(memory.c.id, memory.c.text, memory.c.fields).where(
            memory.c.memory_type == "episodic", memory.c.actor.is_(None), memory.c.id > after)
            .order_by(memory.c.id).limit(BATCH)).all()
        if not rows:
            return
        changes = []
        for i, text, fields in rows:
            try:
                actor = from_refs(fields or {}, text).get("actor")
            except ValueError:  # a row rewritten behind the store's back: `doctor` reports it
                continue
            if isinstance(actor, str):
                changes.append({"i": i, "a": actor})
        if changes:
            conn.execute(update, changes)
        after = rows[-1][0]


def downgrade() -> None:
    op.drop_index("ix_memory_user_actor", table_name="memory")
    op.drop_column("memory", "actor")
