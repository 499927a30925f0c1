"""PATCH with bad fields: 422 whose message names the field in one line; the memory is unchanged."""

from __future__ import annotations


def test_patch_with_bad_fields_names_them_and_changes_nothing(live_sqlite):
    mx = live_sqlite.mx
    mx.add("I went sailing on Lake Geneva last weekend with Tom.", user_id="alice")
    memory = mx.list(user_id="alice", memory_types=["episodic"])[0]
    c = live_sqlite.client(live_sqlite.alice)
    url = f"/v1/users/alice/memories/{memory.id}"
    before, history = c.get(url).json(), c.get(url + "/history").json()

    r = c.patch(url, json={"fields": {"summary": "Sailing with Tom", "occurred_at": "last tuesday"}})
    assert r.status_code == 422 and r.json()["error"] == "invalid_input"
    message = r.json()["message"]
    assert message.startswith("invalid fields for episodic memory: occurred_at: should be a valid datetime")
    assert "'last tuesday'" in message and "\n" not in message and "pydantic" not in message
    r = c.patch(url, json={"fields": {"mood": "happy"}})
    assert r.status_code == 422 and "mood: not a field of an episodic memory (its fields:" in r.json()["message"]
    assert c.get(url).json() == before and c.get(url + "/history").json() == history

    ok = c.patch(url, json={"fields": {"summary": "Sailing on Lake Geneva with Tom"}})
    assert ok.status_code == 200 and ok.json()["summary"] == "Sailing on Lake Geneva with Tom"
