"""Bytes kept per user, by part."""

from __future__ import annotations

from mirix_py.store.footprint import stored_bytes


def test_stored_bytes_counts_each_part_for_one_user_only(mx, user_id, embedder):
    assert stored_bytes(mx.store, user_id) == {"input_log": 0, "memories": 0, "history": 0, "vectors": 0}
    mx.add([{"role": "user", "content": "I planted tulips in the front garden."},
            {"role": "user", "content": "My password is Tulip-77-Garden"}], user_id=user_id)
    got = stored_bytes(mx.store, user_id)
    assert got["input_log"] > 0 and got["memories"] > 0 and got["history"] > 0
    embedded = [m for m in mx.list(user_id=user_id) if m.memory_type.value != "knowledge_vault"]
    assert got["vectors"] == len(embedded) * embedder.dim * 4  # float32 per embedded memory; the vault has none
    assert stored_bytes(mx.store, "someone-else") == {"input_log": 0, "memories": 0, "history": 0, "vectors": 0}
