"""The input log over REST (GET .../inputs, POST .../inputs/retry) and in the viewer's Inputs tab:
status, why an input failed, and a retry button that runs it again."""

from __future__ import annotations

from test_viewer import _click, _connect, _texts, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)

from types import SimpleNamespace

from mirix_py.boundary.inputs import normalize_add
from mirix_py.records import InputStatus


def test_input_log_lists_failures_and_retries_them(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    ok = mx.add("I keep bees on the roof of the garage.", user_id="alice")
    record = normalize_add("My neighbour Lars sells honey at the market.", user_id="alice", occurred_at=None,
                           source_id=None, kind="text", max_chars=10_000)
    mx.inputs.append([record], claimed_by=mx.worker_id)  # logged, nothing written for it ...
    mx.inputs.mark([record.id], InputStatus.failed, "update flow: the model timed out")  # ... and it failed
    broken = SimpleNamespace(input_ids=[record.id])

    c = live_sqlite.client(live_sqlite.alice)
    listed = c.get("/v1/users/alice/inputs").json()
    assert [i["id"] for i in listed][:2] == [broken.input_ids[0], ok.input_ids[0]]  # newest first
    assert listed[0]["status"] == "failed" and "timed out" in listed[0]["error"] and "messages" not in listed[0]
    assert [i["id"] for i in c.get("/v1/users/alice/inputs", params={"status": "failed"}).json()] == broken.input_ids
    assert live_sqlite.client(live_sqlite.bob).get("/v1/users/alice/inputs").status_code == 403

    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
    _click(d, By.ID, "tab-inputs")
    _wait(d, lambda d: any("timed out" in t for t in _texts(d, "#input-list .s-failed")))
    _click(d, By.ID, "retry-btn")
    _wait(d, lambda d: "Retried 1 input(s): processed" in d.find_element(By.ID, "status").text)
    _wait(d, lambda d: not _texts(d, "#input-list .s-failed"))
    assert mx.input_status(broken.input_ids[0]).status is InputStatus.processed
    assert any("Lars" in m.search_text() for m in mx.list(user_id="alice", limit=100))
