"""Bytes the engine keeps for one user, by part: what the screenshot benchmark and eval report.

Counts payload bytes, not pages: input-log ciphertext, memory rows (search text, typed fields,
encrypted secret), history states, and a float32 vector per embedded memory (vault entries have none).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text


def stored_bytes(store: Any, user_id: str) -> dict[str, int]:
    """{"input_log", "memories", "history", "vectors"} -> bytes, for `user_id` in `store` (a MemoryStore)."""
    with store.engine.connect() as conn:
        def one(sql: str) -> int:
            return int(conn.execute(text(sql), {"u": user_id}).scalar() or 0)

        inputs = one("SELECT SUM(LENGTH(payload)) FROM input_log WHERE user_id = :u")
        memories = one("SELECT SUM(LENGTH(text) + LENGTH(CAST(fields AS TEXT)) + COALESCE(LENGTH(secret), 0)) "
                       "FROM memory WHERE user_id = :u")
        history = one("SELECT SUM(COALESCE(LENGTH(CAST(before AS TEXT)), 0) + COALESCE(LENGTH(CAST(after AS TEXT)), 0)) "
                      "FROM memory_history WHERE user_id = :u")
        vectors = one("SELECT COUNT(*) FROM memory WHERE user_id = :u AND memory_type != 'knowledge_vault'")
    dim = getattr(store.embedder, "dim", 384) if store.embedder else 0
    return {"input_log": inputs, "memories": memories, "history": history, "vectors": vectors * dim * 4}
