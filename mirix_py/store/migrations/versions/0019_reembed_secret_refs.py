"""A memory's vector is made with each secret's reference written alike (`[vault:kv_…]` and
`[redacted:…]` become `[secret]`: `MemoryBase.embedding_text`). A store written before kept, for each
memory whose text holds one (the turns that held a secret, vault entries), a vector of the old text,
and `doctor` cannot see that (the embedder's name is the same): those memories are marked in the
vector outbox, so the next open (or `doctor --repair`) embeds their current text again, on Chroma and
pgvector alike. A store written after gets its few such memories embedded once more, to the same vector.

Revision ID: 0019_reembed_secret_refs
"""

import sqlalchemy as sa
from alembic import op

revision = "0019_reembed_secret_refs"
down_revision = "0018_input_source_index"
branch_labels = None
depends_on = None

# what `records.SECRET_REF` begins with; LIKE finds a superset of its matches on SQLite and PostgreSQL
# alike (`[` is no wildcard in either; SQLite's LIKE also ignores case), and a memory marked
# needlessly is only embedded to the vector it has
SECRET_REF_STARTS = ("[vault:", "[redacted:")


def upgrade() -> None:
    from mirix_py.store.vector_outbox import REEMBED, mark

    conn = op.get_bind()
    memory = sa.table("memory", sa.column("id"), sa.column("user_id"), sa.column("text"))
    holding = sa.or_(*(memory.c.text.like(f"%{start}%") for start in SECRET_REF_STARTS))
    by_user: dict[str, list[str]] = {}
    for user_id, memory_id in conn.execute(sa.select(memory.c.user_id, memory.c.id).where(holding)
                                           .order_by(memory.c.user_id, memory.c.id)):
        by_user.setdefault(user_id, []).append(memory_id)
    for user_id, ids in by_user.items():
        mark(conn, user_id, ids, prefix=REEMBED)


def downgrade() -> None:
    """The marks not replayed yet go: the earlier version embeds the text as it always did."""
    op.execute(sa.text("DELETE FROM vector_pending WHERE write_id LIKE 'reembed-%'"))
