"""The viewer's undo button: an item's history names the input that made each change; "Undo input"
(clicked twice) takes back everything that input did, through the REST undo route."""

from __future__ import annotations

from test_viewer import _armed, _click, _connect, _texts, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)


def test_undo_an_input_from_the_history(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    mx.add("I keep bees on the roof of the garage.", user_id="alice")
    bad = mx.add("My neighbour Lars sells honey at the market.", user_id="alice")
    made = {c.memory_id for c in bad.changes}
    episode = next(c.memory_id for c in bad.changes if c.memory_type.value == "episodic")

    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _click(d, By.CSS_SELECTOR, f'#items .item[data-id="{episode}"]')
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, f'#history .undo-input[data-input="{bad.input_ids[0]}"]'))
    button = f'#history .undo-input[data-input="{bad.input_ids[0]}"]'
    _click(d, By.CSS_SELECTOR, button)
    _wait(d, lambda d: _armed(d.find_element(By.CSS_SELECTOR, button), "Really undo?"))
    _click(d, By.CSS_SELECTOR, button)
    _wait(d, lambda d: f"Undid input {bad.input_ids[0]}" in d.find_element(By.ID, "status").text)
    _wait(d, lambda d: not any("Lars" in t for t in _texts(d, "#items .item")))
    assert d.find_element(By.ID, "detail").get_attribute("hidden") is not None
    assert not made & {m.id for m in mx.list(user_id="alice", limit=100)}
    assert any("bees" in t for t in _texts(d, "#items .item"))
