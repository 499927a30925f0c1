"""Deliberate clicks in the viewer's detail panel: Delete and "Undo input" ask "really?" and only a
separate, later click confirms, so a double-click never deletes or undoes; Save and Delete are off
while their request runs (a double-click on Save writes one change) and then say what they did."""

from __future__ import annotations

import json

from test_viewer import _armed, _click, _connect, _texts, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)

# Every request the page sends, as "METHOD path", recorded when it is sent (the page calls the
# global fetch, so a wrapper sees each call the moment a click handler makes it).
RECORD_REQUESTS = """
window.sent = [];
const realFetch = window.fetch;
window.fetch = (url, opts) => { window.sent.push(((opts && opts.method) || "GET") + " " + url); return realFetch(url, opts); };
"""


def _sent(driver, method):
    return [r for r in driver.execute_script("return window.sent") if r.startswith(method + " ")]


def _open(driver, memory_id):
    from selenium.webdriver.common.by import By

    _click(driver, By.CSS_SELECTOR, f'#items .item[data-id="{memory_id}"]')
    _wait(driver, lambda d: memory_id in d.find_element(By.ID, "detail-title").text
          and d.find_elements(By.CSS_SELECTOR, "#history li"))


def _episode(result):
    return next(c.memory_id for c in result.changes if c.memory_type.value == "episodic")


def test_a_double_click_on_delete_does_not_delete(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    bees = _episode(mx.add("I keep bees on the roof of the garage. I live in Lisbon.", user_id="alice"))
    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _open(d, bees)
    d.execute_script(RECORD_REQUESTS)

    delete = d.find_element(By.ID, "delete-btn")
    ActionChains(d).double_click(delete).perform()
    assert delete.text == "Really delete?" and not _sent(d, "DELETE")  # armed, not fired
    _wait(d, lambda d: _armed(d.find_element(By.ID, "delete-btn"), "Really delete?"))
    assert mx.get(bees, user_id="alice")
    _click(d, By.ID, "delete-btn")  # a separate click, once the button takes it: deletes
    # the core line restated from the turn goes with it, and the status says so
    _wait(d, lambda d: f"Deleted {bees}; took back 1 memory said only in it." in d.find_element(By.ID, "status").text)
    assert _sent(d, "DELETE") == [f"DELETE /v1/users/alice/memories/{bees}"]
    assert bees not in {m.id for m in mx.list(user_id="alice", limit=100)}


def test_a_double_click_on_undo_input_does_not_undo(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    honey = mx.add("My neighbour Lars sells honey at the market.", user_id="alice")
    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _open(d, _episode(honey))
    d.execute_script(RECORD_REQUESTS)

    undo = f'#history .undo-input[data-input="{honey.input_ids[0]}"]'
    ActionChains(d).double_click(d.find_element(By.CSS_SELECTOR, undo)).perform()
    assert d.find_element(By.CSS_SELECTOR, undo).text == "Really undo?" and not _sent(d, "POST")
    _wait(d, lambda d: _armed(d.find_element(By.CSS_SELECTOR, undo), "Really undo?"))
    assert mx.get(_episode(honey), user_id="alice")
    _click(d, By.CSS_SELECTOR, undo)
    _wait(d, lambda d: f"Undid input {honey.input_ids[0]}" in d.find_element(By.ID, "status").text)
    assert len(_sent(d, "POST")) == 1
    assert not any("Lars" in m.search_text() for m in mx.list(user_id="alice", limit=100))


def _edit_details(driver, text):
    driver.execute_script("const t = document.getElementById('edit-fields'); const f = JSON.parse(t.value);"
                          "f.details = arguments[0]; t.value = JSON.stringify(f, null, 2);", text)


def test_a_double_click_on_save_saves_once(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    walk = _episode(mx.add("A long walk along the river with Tom.", user_id="alice"))
    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _open(d, walk)
    d.execute_script(RECORD_REQUESTS)
    _edit_details(d, "It rained the whole way.")

    ActionChains(d).double_click(d.find_element(By.ID, "save-btn")).perform()
    assert len(_sent(d, "PATCH")) == 1  # the second click met a disabled button
    _wait(d, lambda d: f"Saved details of {walk}." in d.find_element(By.ID, "status").text)
    assert [e.operation.value for e in mx.history(walk, user_id="alice")] == ["insert", "update"]


def test_save_and_delete_on_a_type_tab_say_what_they_did(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    dinner = _episode(mx.add("Dinner with Anna at the harbour.", user_id="alice"))
    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _open(d, dinner)
    _edit_details(d, "We had fish soup.")

    _click(d, By.ID, "save-btn")
    # the list is reloaded with the change, and the status line still says what was saved
    item = f'#items .item[data-id="{dinner}"]'
    _wait(d, lambda d: "fish soup" in d.find_element(By.CSS_SELECTOR, item).text)
    assert d.find_element(By.ID, "status").text == f"Saved details of {dinner}."
    assert json.loads(d.find_element(By.ID, "edit-fields").get_attribute("value"))["details"] == "We had fish soup."

    _click(d, By.ID, "delete-btn")
    _wait(d, lambda d: _armed(d.find_element(By.ID, "delete-btn"), "Really delete?"))
    _click(d, By.ID, "delete-btn")
    _wait(d, lambda d: not d.find_elements(By.CSS_SELECTOR, item))
    assert d.find_element(By.ID, "status").text == f"Deleted {dinner}."
    assert not any("fish soup" in t for t in _texts(d, "#items .item"))
