"""GET /v1/users/{user_id}/inputs against a live server: the input log newest first, a page at a time
with `limit` and `offset` (as the memories list takes them), back to the oldest input."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.boundary.inputs import normalize_add
from mirix_py.boundary.sizes import MAX_OFFSET
from mirix_py.records import InputStatus

START = datetime(2024, 3, 1, 8, tzinfo=timezone.utc)


def _log(mx, user_id, count, status=InputStatus.processed, first_minute=0):
    """`count` inputs of `user_id` logged a minute apart (the oldest first); their ids, oldest first."""
    records = [normalize_add(f"Input number {i}", user_id=user_id, occurred_at=None, source_id=None, kind="text",
                             max_chars=10_000).model_copy(update={"created_at": START + timedelta(minutes=first_minute + i)})
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
