"""GET /v1/users/{user_id}/inputs against a live server: the input log newest first, a page at a time
with `limit` and the previous page's cursor (`before`), or `offset` as the memories list takes it,
back to the oldest input."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import base64
import json

import pytest

from mirix_py.boundary.inputs import normalize_add
from mirix_py.boundary.sizes import MAX_OFFSET
from mirix_py.client import MirixClient
from mirix_py.errors import InvalidInput
from mirix_py.records import InputStatus

START = datetime(2024, 3, 1, 8, tzinfo=timezone.utc)
NEXT = "X-Mirix-Next-Cursor"


def _log(mx, user_id, count, status=InputStatus.processed, first_minute=0, apart=1):
    """`count` inputs of `user_id` logged `apart` minutes apart (the oldest first; 0: all at one
    instant); their ids, oldest first."""
    records = [normalize_add(f"Input number {i}", user_id=user_id, occurred_at=None, source_id=None, kind="text",
                             max_chars=10_000).model_copy(
                                 update={"created_at": START + timedelta(minutes=first_minute + apart * i)})
               for i in range(count)]
    mx.inputs.append(records, claimed_by=mx.worker_id)
    mx.inputs.mark([r.id for r in records], status)
    return [r.id for r in records]


def _ids(response):
    assert response.status_code == 200, response.text
    return [i["id"] for i in response.json()]


def test_pages_of_the_input_log_reach_the_oldest(live):
    processed = _log(live.mx, "carol", 5)
    failed = _log(live.mx, "carol", 2, InputStatus.failed, first_minute=5)
    newest_first = list(reversed(processed + failed))
    c = live.client(live.bob)  # bob's key acts for carol

    pages = [_ids(c.get("/v1/users/carol/inputs", params={"limit": 3, "offset": offset})) for offset in (0, 3, 6)]
    assert pages == [newest_first[:3], newest_first[3:6], newest_first[6:]]
    assert _ids(c.get("/v1/users/carol/inputs", params={"offset": 7})) == []
    # the status filter pages the same way
    assert _ids(c.get("/v1/users/carol/inputs", params={"status": "processed", "limit": 2, "offset": 3})) == \
        list(reversed(processed))[3:5]
    # another user's key sees none of them
    assert live.client(live.alice).get("/v1/users/carol/inputs", params={"offset": 3}).status_code == 403


@pytest.mark.parametrize("offset, says", [("-1", "greater than or equal to 0"), ("ten", "valid integer"),
                                          (str(MAX_OFFSET + 1), f"less than or equal to {MAX_OFFSET}")])
def test_a_bad_offset_is_refused_with_what_is_wrong(live, offset, says):
    c = live.client(live.bob)
    _log(live.mx, "bob", 1)
    before = _ids(c.get("/v1/users/bob/inputs"))
    r = c.get("/v1/users/bob/inputs", params={"offset": offset})
    assert r.status_code == 422
    assert r.json()["error"] == "invalid_input" and r.json()["message"].startswith("query.offset: ")
    assert says in r.json()["message"]
    assert _ids(c.get("/v1/users/bob/inputs")) == before


def test_the_newest_come_first_past_a_thousand_inputs_of_one_status(live):
    """More inputs of one status than the log reads of a status in one go: the page still starts
    with the newest, and the last page ends with the oldest."""
    logged = _log(live.mx, "dave", 1005)
    c = live.client(live.admin)
    assert _ids(c.get("/v1/users/dave/inputs", params={"limit": 5})) == list(reversed(logged))[:5]
    assert _ids(c.get("/v1/users/dave/inputs", params={"limit": 5, "offset": 1000})) == list(reversed(logged))[1000:]


def test_pages_by_cursor_list_each_input_once_while_inputs_arrive(live):
    """Two inputs logged before each next page: by offset, the page would start two inputs back and
    list them again. Four inputs logged at one instant are ordered by id, across a page's end too."""
    older = _log(live.mx, "erin", 3)
    same_instant = _log(live.mx, "erin", 4, first_minute=3, apart=0)
    newest_first = sorted(same_instant, reverse=True) + list(reversed(older))
    c = live.client(live.admin)
    pages, cursor, arrived = [], None, []
    for arriving_at in (100, 200, 300):
        r = c.get("/v1/users/erin/inputs", params={"limit": 3, **({"before": cursor} if cursor else {})})
        pages.append(_ids(r))
        cursor = r.headers.get(NEXT)
        arrived += _log(live.mx, "erin", 2, first_minute=arriving_at)  # newer than every input listed
    assert pages == [newest_first[:3], newest_first[3:6], newest_first[6:]]
    assert cursor is None  # the last page ended with the oldest input: no cursor
    assert _ids(c.get("/v1/users/erin/inputs", params={"limit": 6})) == list(reversed(arrived))  # a fresh listing's


def test_a_page_by_cursor_misses_no_input_when_one_leaves_the_listing(live):
    """The previous page's last failed input is retried (it leaves the failed listing) before the next
    page is read: by offset, that page would skip the input after it."""
    newest_first = list(reversed(_log(live.mx, "frank", 6, InputStatus.failed)))
    c = live.client(live.admin)
    first = c.get("/v1/users/frank/inputs", params={"status": "failed", "limit": 3})
    live.mx.inputs.mark([newest_first[2]], InputStatus.processed)  # as a retry that worked leaves it
    second = c.get("/v1/users/frank/inputs", params={"status": "failed", "limit": 3, "before": first.headers[NEXT]})
    assert _ids(first) == newest_first[:3]
    assert _ids(second) == newest_first[3:]
    assert NEXT not in second.headers


def _encoded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@pytest.mark.parametrize("cursor, says", [
    ("not a cursor", "is not a cursor of the input log"),
    ("", "is not a cursor of the input log"),
    (_encoded(b"{}"), "is not a cursor of the input log"),
    (_encoded(json.dumps({"created_at": "2024-03-01T08:00:00", "id": "in_1"}).encode()), "not a cursor"),  # no zone
    (_encoded(json.dumps({"created_at": "2024-03-01T08:00:00Z", "id": "in_\u0000"}).encode()), "not a cursor"),
    (_encoded(json.dumps({"created_at": "0001-01-01T00:00:00+05:00", "id": "in_1"}).encode()), "not a cursor"),
    ("e" * 257, "at most 256 characters"),
])
def test_a_malformed_cursor_is_refused_with_what_is_wrong(live, cursor, says):
    c = live.client(live.admin)
    _log(live.mx, "gina", 2)
    before = _ids(c.get("/v1/users/gina/inputs"))
    r = c.get("/v1/users/gina/inputs", params={"before": cursor})
    assert r.status_code == 422
    assert r.json()["error"] == "invalid_input" and r.json()["message"].startswith("query.before: ")
    assert says in r.json()["message"]
    assert _ids(c.get("/v1/users/gina/inputs")) == before


def test_a_cursor_and_an_offset_together_are_refused(live):
    c = live.client(live.admin)
    _log(live.mx, "hugo", 3)
    cursor = c.get("/v1/users/hugo/inputs", params={"limit": 1}).headers[NEXT]
    r = c.get("/v1/users/hugo/inputs", params={"before": cursor, "offset": 1})
    assert r.status_code == 422 and r.json()["message"] == \
        "query.before: a cursor and an offset cannot be combined: page by one of them"


def test_the_client_pages_by_cursor_to_the_oldest_input(live):
    newest_first = list(reversed(_log(live.mx, "ines", 5)))
    with MirixClient(live.url, api_key=live.admin) as client:
        first = client.inputs(user_id="ines", limit=2)
        _log(live.mx, "ines", 1, first_minute=50)  # arrives between the pages
        second = client.inputs(user_id="ines", limit=2, before=first.next)
        third = client.inputs(user_id="ines", limit=2, before=second.next)
        assert [[i["id"] for i in page.inputs] for page in (first, second, third)] == \
            [newest_first[:2], newest_first[2:4], newest_first[4:]]
        assert third.next is None
        assert [i["id"] for i in client.inputs(user_id="ines", statuses=["failed"]).inputs] == []
        with pytest.raises(InvalidInput, match="is not a cursor of the input log"):
            client.inputs(user_id="ines", before="nope")
