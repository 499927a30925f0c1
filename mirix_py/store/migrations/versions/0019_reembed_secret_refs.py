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


def upgrade() -> None:
    from mirix_py.store.vector_outbox import mark_secret_refs

    mark_secret_refs(op.get_bind())


def downgrade() -> None:
    """The marks not replayed yet go: the earlier version embeds the text as it always did."""
    op.execute(sa.text("DELETE FROM vector_pending WHERE write_id LIKE 'reembed-%'"))
