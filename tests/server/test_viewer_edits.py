"""Editing in the viewer: after a save or delete from the Results tab the results show what the
memories hold now; the fields box says clearly when it does not hold one JSON object, and that
taking a key out does not clear that field (and what to set instead)."""

from __future__ import annotations

import json

from test_viewer import _armed, _click, _connect, _texts, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)


def _status(driver):
    return driver.execute_script("const s = document.getElementById('status'); return [s.textContent, s.classList.contains('error')]")


def _open(driver, memory_id):
    from selenium.webdriver.common.by import By

    _click(driver, By.CSS_SELECTOR, f'#items .item[data-id="{memory_id}"]')
    _wait(driver, lambda d: memory_id in d.find_element(By.ID, "detail-title").text
          and d.find_elements(By.CSS_SELECTOR, "#history li"))


def _fields(driver, text):
    """Put `text` in the fields box, press Save, and return the status line it leads to."""
    from selenium.webdriver.common.by import By

    driver.execute_script("document.getElementById('edit-fields').value = arguments[0];"
                          "document.getElementById('status').textContent = '-';", text)
    _click(driver, By.ID, "save-btn")
    _wait(driver, lambda d: _status(d)[0] != "-")
    return _status(driver)


def test_results_show_the_edit_and_lose_the_deleted(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    oslo = next(c.memory_id for c in mx.add("Tom flies to Oslo every Tuesday.", user_id="alice").changes
                if c.memory_type.value == "episodic")
    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
    d.find_element(By.ID, "search-input").send_keys("Oslo")
    _click(d, By.ID, "search-btn")
    hit = f'#items .item[data-id="{oslo}"]'
    _wait(d, lambda d: "result(s)" in _status(d)[0] and d.find_elements(By.CSS_SELECTOR, hit))
    _open(d, oslo)
    fields = json.loads(d.find_element(By.ID, "edit-fields").get_attribute("value"))
    fields["summary"] = "Tom flies to Oslo on Fridays now"
    _fields(d, json.dumps(fields))
    _wait(d, lambda d: "Fridays" in d.find_element(By.CSS_SELECTOR, hit).text)  # the results, searched again
    assert "every Tuesday" not in d.find_element(By.CSS_SELECTOR, hit).text
    assert d.find_element(By.ID, "tab-search").get_attribute("aria-selected") == "true"
    assert _status(d) == [f"Saved summary of {oslo}.", False]

    _click(d, By.ID, "delete-btn")
    _wait(d, lambda d: _armed(d.find_element(By.ID, "delete-btn"), "Really delete?"))
    _click(d, By.ID, "delete-btn")
    _wait(d, lambda d: not d.find_elements(By.CSS_SELECTOR, hit))
    assert _status(d) == [f"Deleted {oslo}.", False]
    assert not any("Fridays" in t for t in _texts(d, "#items .item"))


def _memory_with_details(driver, live, text):
    """A memory with details and tags, open in the detail panel; its id and the fields shown."""
    from selenium.webdriver.common.by import By

    mx = live.mx
    memory = next(c.memory_id for c in mx.add(text, user_id="alice").changes if c.memory_type.value == "episodic")
    mx.update(memory, {"details": "We had fish soup.", "tags": ["food"]}, user_id="alice")
    _connect(driver, live, live.alice)
    _open(driver, memory)
    return memory, json.loads(driver.find_element(By.ID, "edit-fields").get_attribute("value"))


def test_fields_box_must_hold_one_json_object(browser, live_sqlite):  # noqa: F811
    memory, _ = _memory_with_details(browser, live_sqlite, "Dinner with Anna at the harbour.")
    for text, kind in (("null", "null"), ('"text"', "a string"), ("[1, 2]", "a list"), ("7", "a number")):
        assert _fields(browser, text) == [
            f'The fields must be one JSON object, like {{"summary": "…"}}, not {kind}.', True]
    assert _fields(browser, "{nope")[0].startswith("The fields are not valid JSON")
    assert len(live_sqlite.mx.history(memory, user_id="alice")) == 2  # nothing was sent


def test_a_key_taken_out_of_the_fields_is_not_silently_ignored(browser, live_sqlite):  # noqa: F811
    mx = live_sqlite.mx
    d = browser
    memory, shown = _memory_with_details(d, live_sqlite, "Lunch with Eva in the park.")

    taken_out = [k for k in shown if k in ("details", "tags")]  # in the order the box lists them
    hints = {"details": '"details" to ""', "tags": '"tags" to []'}
    without = {k: v for k, v in shown.items() if k not in taken_out}
    assert _fields(d, json.dumps(without)) == [
        f"Taking a key out does not clear it: set {', '.join(hints[k] for k in taken_out)} instead.", True]
    assert len(mx.history(memory, user_id="alice")) == 2  # nothing was sent
    stored = mx.get(memory, user_id="alice")
    assert (stored.details, stored.tags) == ("We had fish soup.", ["food"])

    # what the message says works: the fields are cleared
    cleared = {**shown, "details": "", "tags": []}
    assert _fields(d, json.dumps(cleared)) == [f"Saved {', '.join(taken_out)} of {memory}.", False]
    stored = mx.get(memory, user_id="alice")
    assert (stored.details, stored.tags) == ("", [])
