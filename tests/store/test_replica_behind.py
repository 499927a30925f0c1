"""`replica_behind()` says 0 only once the read replica holds every commit made before the call: the
test primary commits asynchronously, so a commit's record can still be unwritten when the call
returns, and the primary's written position alone stops short of it."""

from __future__ import annotations

import time

from sqlalchemy import text

from mirix_py.engine import Mirix
from mirix_py.records import SemanticMemory
from mirix_py.settings import Settings
from mirix_py.tools.ops import InsertOp

PAGE = 8192  # PostgreSQL's default log page and segment sizes
SEGMENT = 16 * 1024 * 1024
ROUNDS = 12


def _caught_up(mx: Mirix, timeout_s: float = 60.0) -> None:
    """Poll `replica_behind()` until it says 0, as a caller waiting for the replica does."""
    deadline = time.monotonic() + timeout_s
    while mx.replica_behind() != 0:
        assert time.monotonic() < deadline, "the replica did not catch up"
        time.sleep(0.01)


def _on_replica(mx: Mirix, memory_id: str) -> bool:
    assert mx.read_engine is not None
    with mx.read_engine.connect() as conn:
        return conn.execute(text("SELECT 1 FROM memory WHERE id = :i"), {"i": memory_id}).first() is not None


def test_once_replica_behind_says_0_the_replica_holds_the_last_add_and_delete(tmp_path, pgvector_replica):
    primary, replica = pgvector_replica
    settings = Settings(data_dir=tmp_path / "data", database_url=primary, database_read_url=replica,
                        read_your_writes=False, vector_store="pgvector")
    with Mirix(settings=settings, embedder=None) as mx:
        for n in range(ROUNDS):
            (added,) = mx.store.apply([InsertOp(memory=SemanticMemory(
                user_id="lag", name=f"Quokka{n}", summary=f"Quokka{n} lives on Rottnest."))], user_id="lag", actor="test")
            _caught_up(mx)
            assert _on_replica(mx, added.memory_id), f"round {n}: 0 bytes behind, the add missing"
            mx.delete(added.memory_id, user_id="lag")
            _caught_up(mx)
            assert not _on_replica(mx, added.memory_id), f"round {n}: 0 bytes behind, the delete missing"


def test_an_insert_position_just_past_a_page_header_is_the_page_start():
    """Where the primary's last record ends at a page boundary, its insert position points past the
    next page's header while the replica's replay position stops at the boundary: the same place."""
    from mirix_py.store.write_marks import record_end

    segment = 7 * SEGMENT
    assert record_end(segment + 40, PAGE, SEGMENT) == segment  # a segment's first page: the long header
    assert record_end(segment + 3 * PAGE + 24, PAGE, SEGMENT) == segment + 3 * PAGE
    assert record_end(segment + 3 * PAGE + 40, PAGE, SEGMENT) == segment + 3 * PAGE + 40  # inside a page
    assert record_end(segment + 3 * PAGE + 4096, PAGE, SEGMENT) == segment + 3 * PAGE + 4096
