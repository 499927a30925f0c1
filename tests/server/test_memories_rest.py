"""GET /v1/users/{user_id}/memories against a live server, a page at a time: the previous page's
X-Mirix-Next-Cursor passed as `before` lists the memories after it, none twice or left out while
memories are written or deleted between pages (by `offset`, each shifts the next page), with the type
and time filters; a cursor the listing did not give, or one with an offset, is refused."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.client import MirixClient
from mirix_py.errors import InvalidInput
from mirix_py.records import EpisodicMemory, SemanticMemory
from mirix_py.tools.ops import InsertOp

SAID_AT = datetime(2024, 4, 1, 9, tzinfo=timezone.utc)
STORED_AT = datetime(2024, 4, 2, 9, tzinfo=timezone.utc)
NEXT = "X-Mirix-Next-Cursor"


def _write(mx, user_id, count, *, first_hour=0, apart=1, fact=False):
    """`count` episodes (or facts) of `user_id` said `apart` hours from each other (0: all at one
    instant, stored at one instant too, so only their ids order them); their ids, the oldest first."""
    def memory(i):
        said = SAID_AT + timedelta(hours=first_hour + apart * i)
        if fact:
            return SemanticMemory(user_id=user_id, name=f"Cat {first_hour}-{i}", summary="A cat.", occurred_at=said,
                                  created_at=STORED_AT, updated_at=STORED_AT)
        return EpisodicMemory(user_id=user_id, summary=f"Note {first_hour}-{i}", occurred_at=said,
                              created_at=STORED_AT, updated_at=STORED_AT)

    changes = mx.store.apply([InsertOp(memory=memory(i)) for i in range(count)], user_id=user_id, actor="test",
                             keep_times=True)
    return [c.memory_id for c in changes]


def _ids(response):
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()]


def _pages(c, user_id, size, between=lambda page: None, **params):
    """Pages of `size` read by each page's cursor until one comes without; `between(page ids)` runs
    after each page that has a cursor."""
    pages, cursor = [], None
    while True:
        r = c.get(f"/v1/users/{user_id}/memories", params={"limit": size, **params,
                                                           **({"before": cursor} if cursor else {})})
        pages.append(_ids(r))
        cursor = r.headers.get(NEXT)
        if cursor is None:
            return pages
        between(pages[-1])


def test_pages_by_cursor_list_each_memory_once_while_memories_are_written(live):
    """Two memories newer than every listed one are written before each next page: by offset, the page
    would start two memories back and list them again. Four memories said and stored at one instant
    are ordered by id, across a page's end too."""
    older = _write(live.mx, "erin", 3)
    same_instant = _write(live.mx, "erin", 4, first_hour=3, apart=0)
    c = live.client(live.admin)
    whole = _ids(c.get("/v1/users/erin/memories", params={"limit": 100}))
    assert set(whole[:4]) == set(same_instant) and whole[4:] == list(reversed(older))
    arrived: list[str] = []

    def two_newer(page):
        arrived.extend(_write(live.mx, "erin", 2, first_hour=100 + len(arrived)))

    pages = _pages(c, "erin", 3, between=two_newer)
    assert pages == [whole[:3], whole[3:6], whole[6:]]
    assert _ids(c.get("/v1/users/erin/memories", params={"limit": 4})) == list(reversed(arrived))


def test_a_page_by_cursor_misses_no_memory_when_listed_ones_are_deleted(live):
    """The first page's newest and last memories are deleted before the next page is read: by offset,
    that page would skip the two memories after it."""
    newest_first = list(reversed(_write(live.mx, "frank", 7)))
    c = live.client(live.admin)

    def delete_two(page):
        for memory_id in (page[0], page[-1]):
            assert c.delete(f"/v1/users/frank/memories/{memory_id}").status_code == 200

    pages = _pages(c, "frank", 3, between=delete_two)
    assert pages == [newest_first[:3], newest_first[3:6], newest_first[6:]]


@pytest.mark.parametrize("user_id, params", [("gus", {"memory_type": "semantic"}),
                                             ("gwen", {"start": (SAID_AT + timedelta(hours=2)).isoformat(),
                                                       "end": (SAID_AT + timedelta(hours=5)).isoformat()})],
                         ids=["type", "time"])
def test_pages_by_cursor_keep_the_type_and_time_filters(live, user_id, params):
    episodes = _write(live.mx, user_id, 6)
    facts = _write(live.mx, user_id, 6, fact=True)  # said at the episodes' times
    c = live.client(live.admin)
    whole = _ids(c.get(f"/v1/users/{user_id}/memories", params={"limit": 100, **params}))
    assert set(whole) < set(episodes + facts) and len(whole) == 6
    assert sum(_pages(c, user_id, 2, **params), []) == whole


def _encoded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _position(**fields):
    return _encoded(json.dumps({"occurred_at": "2024-04-01T09:00:00Z", "created_at": "2024-04-02T09:00:00Z",
                                "id": "epi_1", "newest_first": True, **fields}).encode())


@pytest.mark.parametrize("cursor, says", [
    ("not a cursor", "is not a cursor of the memory list"),
    ("", "is not a cursor of the memory list"),
    (_encoded(b"{}"), "is not a cursor of the memory list"),
    (_position(created_at="2024-04-02T09:00:00"), "is not a cursor"),  # no zone
    (_position(id="epi_\u0000"), "is not a cursor"),
    (_position(occurred_at="0001-01-01T00:00:00+05:00"), "is not a cursor"),
    (_position(newest_first=False), "the cursor is of a list oldest first"),
    ("e" * 513, "at most 512 characters"),
])
def test_a_malformed_cursor_is_refused_with_what_is_wrong(live, cursor, says):
    c = live.client(live.admin)
    _write(live.mx, "hana", 2)
    before = _ids(c.get("/v1/users/hana/memories"))
    r = c.get("/v1/users/hana/memories", params={"before": cursor})
    assert r.status_code == 422
    assert r.json()["error"] == "invalid_input" and r.json()["message"].startswith("query.before: ")
    assert says in r.json()["message"]
    assert _ids(c.get("/v1/users/hana/memories")) == before


def test_a_cursor_and_an_offset_together_are_refused(live):
    c = live.client(live.admin)
    _write(live.mx, "ivan", 3)
    cursor = c.get("/v1/users/ivan/memories", params={"limit": 1}).headers[NEXT]
    r = c.get("/v1/users/ivan/memories", params={"before": cursor, "offset": 1})
    assert r.status_code == 422 and r.json()["message"] == \
        "query.before: a cursor and an offset cannot be combined: page by one of them"


def test_a_page_that_ends_the_list_has_no_cursor(live):
    newest_first = list(reversed(_write(live.mx, "jay", 4)))
    c = live.client(live.admin)
    first = c.get("/v1/users/jay/memories", params={"limit": 2})
    last = c.get("/v1/users/jay/memories", params={"limit": 2, "before": first.headers[NEXT]})
    assert [_ids(first), _ids(last)] == [newest_first[:2], newest_first[2:]]
    assert NEXT not in last.headers
    assert NEXT not in c.get("/v1/users/jay/memories", params={"limit": 4}).headers  # exactly all of them
    assert NEXT not in c.get("/v1/users/nobody-here/memories").headers


def test_the_client_pages_by_cursor_and_list_still_returns_the_records(live):
    newest_first = list(reversed(_write(live.mx, "kim", 5)))
    with MirixClient(live.url, api_key=live.admin) as client:
        first = client.memories(user_id="kim", limit=2)
        _write(live.mx, "kim", 1, first_hour=50)  # written between the pages
        second = client.memories(user_id="kim", limit=2, before=first.next)
        third = client.memories(user_id="kim", limit=2, before=second.next)
        assert [[m.id for m in page.memories] for page in (first, second, third)] == \
            [newest_first[:2], newest_first[2:4], newest_first[4:]]
        assert third.next is None
        assert [m.id for m in client.list(user_id="kim", limit=2, offset=1)] == \
            [newest_first[0], newest_first[1]]  # by offset, the memory written meanwhile shifts the page
        assert client.memories(user_id="kim", memory_types=["semantic"]).memories == []
        with pytest.raises(InvalidInput, match="is not a cursor of the memory list"):
            client.memories(user_id="kim", before="nope")
