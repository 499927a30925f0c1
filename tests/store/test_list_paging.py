"""`list` pages: memories that share a time are each listed once across pages read with an offset,
in one order on SQLite and PostgreSQL (time, then when stored, then id; memories without a time
last newest first, first oldest first)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from sqlalchemy import text

from mirix_py.records import EpisodicMemory, Memory, SemanticMemory
from mirix_py.tools.ops import InsertOp

SAID_AT = datetime(2024, 2, 2, 10, 0, tzinfo=timezone.utc)
STORED_AT = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
TIED = 40  # episodes said at one time and stored at one time: only their ids tell them apart


@pytest.fixture
def listed(tmp_path, backend):
    """An engine whose user 'pat' has TIED episodes tied on both times, two facts of a later day and
    two core blocks (which have no time)."""
    from mirix_py.engine import Mirix

    mx = Mirix(tmp_path / "data", embedder=None, database_url=backend)
    ops = [InsertOp(memory=EpisodicMemory(user_id="pat", summary=f"The book is on shelf {i}.", occurred_at=SAID_AT))
           for i in range(TIED)]
    ops += [InsertOp(memory=SemanticMemory(user_id="pat", name=name, summary=f"{name} is a cat.",
                                           occurred_at=SAID_AT.replace(day=3)))
            for name in ("Miso", "Tofu")]
    mx.store.apply(ops, user_id="pat", actor="test")
    with mx.engine.begin() as conn:
        conn.execute(text("UPDATE memory SET created_at = :t WHERE memory_type = 'episodic'"), {"t": STORED_AT})
    mx.core_append("human", "Pat keeps books on shelves.", user_id="pat")
    mx.core_append("persona", "A patient librarian.", user_id="pat")
    yield mx
    mx.close()


def _pages(mx, size: int, **kw) -> list[str]:
    seen: list[str] = []
    while page := mx.store.list(user_id="pat", limit=size, offset=len(seen), **kw):
        seen += [m.id for m in page]
    return seen


def _expected(memories: list[Memory]) -> list[str]:
    """Newest first by time, then by when stored, then by id; memories without a time last."""
    dated = sorted((m for m in memories if m.occurred_at is not None),
                   key=lambda m: (m.occurred_at, m.created_at, m.id), reverse=True)
    undated = sorted((m for m in memories if m.occurred_at is None), key=lambda m: (m.created_at, m.id), reverse=True)
    return [m.id for m in dated + undated]


@pytest.mark.parametrize("size", [3, 7, 16])
def test_pages_list_each_memory_once_in_the_order_of_the_whole_list(listed, size):
    whole = listed.store.list(user_id="pat", limit=1000)
    assert len(whole) == TIED + 4
    assert _pages(listed, size) == [m.id for m in whole]


def test_the_order_is_time_then_stored_then_id_with_core_blocks_last(listed):
    whole = listed.store.list(user_id="pat", limit=1000)
    assert [m.id for m in whole] == _expected(whole)
    assert [m.memory_type.value for m in whole[-2:]] == ["core", "core"]


def test_oldest_first_lists_core_blocks_first_and_pages_alike(listed):
    whole = listed.store.list(user_id="pat", limit=1000, newest_first=False)
    assert [m.memory_type.value for m in whole[:2]] == ["core", "core"]
    assert [m.memory_type.value for m in whole[-2:]] == ["semantic", "semantic"]
    assert _pages(listed, 7, newest_first=False) == [m.id for m in whole]


def test_pages_of_one_type_list_each_memory_once(listed):
    whole = listed.store.list(user_id="pat", memory_types=["episodic"], limit=1000)
    assert len(whole) == TIED
    assert _pages(listed, 6, memory_types=["episodic"]) == [m.id for m in whole]
