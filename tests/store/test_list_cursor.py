"""`list` pages by cursor (`before`): the page after a memory is exactly what follows it in the
listing's order, newest first or oldest first, with a type or time filter, across memories tied on
their time, on when they were stored, or without a time; and pages read one after another hold each
memory once while memories are written or deleted between them, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.errors import InvalidInput
from mirix_py.records import CoreMemory, EpisodicMemory, Memory, SemanticMemory
from mirix_py.store.memories import MemoryPosition
from mirix_py.tools.ops import DeleteOp, InsertOp

SAID_AT = datetime(2024, 2, 2, 10, 0, tzinfo=timezone.utc)
STORED_AT = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
LATER = timedelta(hours=1)
FILTERS = [{}, {"memory_types": ["episodic"]}, {"memory_types": ["semantic", "core"]},
           {"start": SAID_AT, "end": SAID_AT + LATER}, {"start": SAID_AT - LATER}]


def _episode(summary: str, said: datetime, stored: datetime) -> EpisodicMemory:
    return EpisodicMemory(user_id="pat", summary=summary, occurred_at=said, created_at=stored, updated_at=stored)


def _fact(name: str, said: datetime | None, stored: datetime) -> SemanticMemory:
    return SemanticMemory(user_id="pat", name=name, summary=f"{name} is a cat.", occurred_at=said,
                          created_at=stored, updated_at=stored)


@pytest.fixture
def listed(tmp_path, backend):
    """An engine whose user 'pat' has memories tied every way the order can tie: six episodes said and
    stored at one time (their ids alone order them), three said then and stored later, three facts
    said and stored with the six, episodes of an earlier and a later time, and memories without a time
    (three facts stored at one time, two core blocks)."""
    from mirix_py.engine import Mirix

    mx = Mirix(tmp_path / "data", embedder=None, database_url=backend)
    memories: list[Memory] = [_episode(f"Shelf {i} holds books.", SAID_AT, STORED_AT) for i in range(6)]
    memories += [_episode(f"Box {i} holds tapes.", SAID_AT, STORED_AT + LATER) for i in range(3)]
    memories += [_fact(name, SAID_AT, STORED_AT) for name in ("Miso", "Tofu", "Yuzu")]
    memories += [_episode(f"Drawer {i} holds pens.", SAID_AT - LATER * (i + 1), STORED_AT + LATER * i)
                 for i in range(4)]
    memories += [_episode(f"Crate {i} holds maps.", SAID_AT + LATER / 2, STORED_AT) for i in range(2)]
    memories += [_fact(name, None, STORED_AT) for name in ("Kiwi", "Lime", "Plum")]
    memories += [CoreMemory(user_id="pat", label=label, value=f"The {label} block.", created_at=STORED_AT,
                            updated_at=STORED_AT) for label in ("human", "persona")]
    mx.store.apply([InsertOp(memory=m) for m in memories], user_id="pat", actor="test", keep_times=True)
    yield mx
    mx.close()


def _ids(memories: list[Memory]) -> list[str]:
    return [m.id for m in memories]


def _cursor(memory: Memory, newest_first: bool) -> str:
    return MemoryPosition.of(memory, newest_first=newest_first).cursor()


def _pages(mx, size: int, newest_first: bool, between=lambda page: None, **kw) -> list[list[str]]:
    """Pages of `size` read by cursor until a short one; `between(page)` runs after each page."""
    pages: list[list[str]] = []
    before = None
    while True:
        page = mx.store.list(user_id="pat", limit=size, newest_first=newest_first, before=before, **kw)
        pages.append(_ids(page))
        if len(page) < size:
            return pages
        between(page)
        before = _cursor(page[-1], newest_first)


@pytest.mark.parametrize("newest_first", [True, False])
@pytest.mark.parametrize("filters", FILTERS, ids=["all", "episodic", "semantic+core", "one-hour", "since"])
def test_the_page_after_a_memory_is_what_follows_it_in_the_whole_list(listed, newest_first, filters):
    whole = listed.store.list(user_id="pat", limit=1000, newest_first=newest_first, **filters)
    assert len(whole) >= 5  # each filter keeps ties of some kind
    for k, memory in enumerate(whole):
        after = listed.store.list(user_id="pat", limit=1000, newest_first=newest_first,
                                  before=_cursor(memory, newest_first), **filters)
        assert _ids(after) == _ids(whole[k + 1:]), f"after #{k} ({memory.memory_type.value} {memory.occurred_at})"


@pytest.mark.parametrize("newest_first", [True, False])
@pytest.mark.parametrize("size", [1, 4, 7])
def test_pages_by_cursor_list_each_memory_once_in_the_order_of_the_whole_list(listed, newest_first, size):
    whole = listed.store.list(user_id="pat", limit=1000, newest_first=newest_first)
    assert len(whole) == 23
    assert sum(_pages(listed, size, newest_first), []) == _ids(whole)


@pytest.mark.parametrize("newest_first", [True, False])
def test_memories_written_or_deleted_between_pages_shift_no_page(listed, newest_first):
    """After each page, a memory is written where the pages already went (the newest; oldest first,
    an undated one stored last, which leads the undated) and the page's first memory is deleted: by
    offset, the next page would repeat or skip a memory each time."""
    whole = _ids(listed.store.list(user_id="pat", limit=1000, newest_first=newest_first))
    deleted: list[str] = []
    arrived = _fact("Nori", None if not newest_first else SAID_AT + timedelta(days=30), STORED_AT + timedelta(days=30))

    def write_and_delete(page: list[Memory]) -> None:
        listed.store.apply([InsertOp(memory=arrived.model_copy(update={"id": ""}))], user_id="pat", actor="test",
                           keep_times=True)
        listed.store.apply([DeleteOp(memory_id=page[0].id)], user_id="pat", actor="test")
        deleted.append(page[0].id)

    listed_ids = sum(_pages(listed, 5, newest_first, between=write_and_delete), [])
    assert len(deleted) == 4
    assert listed_ids == whole  # each once, in order: none of the new ones, none skipped


def test_a_cursor_that_is_not_one_is_refused(listed):
    newest = listed.store.list(user_id="pat", limit=1)[0]
    for before, says in (("not a cursor", "is not a cursor of the memory list"),
                         (_cursor(newest, newest_first=False), "the cursor is of a list oldest first"),
                         (_cursor(newest, newest_first=True)[:-4], "is not a cursor of the memory list")):
        with pytest.raises(InvalidInput, match=says):
            listed.store.list(user_id="pat", before=before)
    with pytest.raises(InvalidInput, match="the cursor is of a list newest first"):
        listed.store.list(user_id="pat", newest_first=False, before=_cursor(newest, newest_first=True))
    with pytest.raises(InvalidInput, match="a cursor and an offset cannot be combined"):
        listed.store.list(user_id="pat", offset=1, before=_cursor(newest, newest_first=True))
