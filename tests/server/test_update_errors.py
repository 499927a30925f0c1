"""PATCH with bad fields: 422 whose message names the field in one line, shown so in the viewer;
the memory is unchanged. An add whose source id poses as an input id: 422, nothing written."""

from __future__ import annotations

from test_viewer import _click, _connect, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)


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


def test_patch_citing_another_users_input_is_refused_and_changes_nothing(live_sqlite):
    mx = live_sqlite.mx
    theirs = mx.add("My sister is a nurse in Porto.", user_id="bob", source_id="ward-7/patient-bob").input_ids[0]
    mx.add("I went sailing on Lake Geneva with Tom.", user_id="alice")
    memory = next(m for m in mx.list(user_id="alice", memory_types=["episodic"]) if "Geneva" in m.summary)
    c = live_sqlite.client(live_sqlite.alice)
    url = f"/v1/users/alice/memories/{memory.id}"
    before, history = c.get(url).json(), c.get(url + "/history").json()

    r = c.patch(url, json={"fields": {"source_ids": [*memory.source_ids, theirs]}})
    assert r.status_code == 422 and r.json()["error"] == "invalid_input"
    assert f"source_ids cite ['{theirs}'], which user 'alice' has no input of" in r.json()["message"]
    assert c.get(url).json() == before and c.get(url + "/history").json() == history



def test_an_add_whose_source_id_poses_as_another_users_input_is_refused_and_writes_nothing(live_sqlite):
    theirs = live_sqlite.mx.add("My sister is a nurse in Porto.", user_id="bob", source_id="ward-7").input_ids[0]
    c = live_sqlite.client(live_sqlite.alice)
    before = c.get("/v1/users/alice/inputs").json(), c.get("/v1/users/alice/memories").json()

    for body in ({"content": "I went sailing with Tom.", "source_id": theirs, "wait": True},
                 {"content": [{"role": "user", "content": "I went sailing with Tom.", "id": theirs}]}):
        r = c.post("/v1/users/alice/memories", json=body)
        assert r.status_code == 422 and r.json()["error"] == "invalid_input", r.text
        assert f"{theirs!r} has the form of the engine's input ids" in r.json()["message"]

    assert (c.get("/v1/users/alice/inputs").json(), c.get("/v1/users/alice/memories").json()) == before

def test_viewer_shows_the_field_error_and_keeps_the_memory(browser, live_sqlite, tmp_path):  # noqa: F811
    import json

    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    mx.add("My sister Ines teaches chemistry in Porto.", user_id="alice")
    memory = next(m for m in mx.list(user_id="alice", memory_types=["episodic"]) if "Ines" in m.summary)
    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _click(d, By.CSS_SELECTOR, f'#items .item[data-id="{memory.id}"]')
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#history li"))
    area = d.find_element(By.ID, "edit-fields")
    fields = json.loads(area.get_attribute("value"))
    fields["summary"] = 5
    area.clear()
    area.send_keys(json.dumps(fields))
    _click(d, By.ID, "save-btn")
    _wait(d, lambda d: "summary: should be a valid string (got 5)" in d.find_element(By.ID, "status").text)
    status = d.find_element(By.ID, "status")
    assert "error" in status.get_attribute("class") and "pydantic" not in status.text
    (tmp_path / "viewer-edit-error.png").write_bytes(d.get_screenshot_as_png())
    assert mx.get(memory.id, user_id="alice") == memory
