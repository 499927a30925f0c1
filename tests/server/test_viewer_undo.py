"""The viewer's undo button: an item's history names the input that made each change; "Undo input"
(clicked twice) takes back everything that input did, through the REST undo route; refused because
its memories were edited later, it says why and offers "Undo anyway" (the undo with force=true)."""

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


# Every undo request the page sends, recorded when it is sent (the page calls the global fetch).
RECORD_UNDOS = """
window.undos = [];
const realFetch = window.fetch;
window.fetch = (url, opts) => { if (String(url).includes("/undo")) window.undos.push(url); return realFetch(url, opts); };
"""


def test_undo_anyway_over_a_later_edit(browser, live_sqlite):  # noqa: F811
    """The episode was edited after its input: the undo is refused with the server's reason, and
    "Undo anyway" (armed, then a separate click) sends the same undo with force=true."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    honey = mx.add("My neighbour Lars sells honey at the market.", user_id="alice")
    episode = next(c.memory_id for c in honey.changes if c.memory_type.value == "episodic")
    mx.update(episode, {"details": "Lars moved to Porto."}, user_id="alice")
    input_id = honey.input_ids[0]
    undo_path = f"/v1/users/alice/inputs/{input_id}/undo"

    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _click(d, By.CSS_SELECTOR, f'#items .item[data-id="{episode}"]')
    button = f'#history .undo-input[data-input="{input_id}"]'
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, button))
    d.execute_script(RECORD_UNDOS)
    _click(d, By.CSS_SELECTOR, button)
    _wait(d, lambda d: _armed(d.find_element(By.CSS_SELECTOR, button), "Really undo?"))
    _click(d, By.CSS_SELECTOR, button)

    # refused: the status says why and what "Undo anyway" does; nothing was undone
    _wait(d, lambda d: d.find_element(By.CSS_SELECTOR, button).text == "Undo anyway")
    status = d.find_element(By.ID, "status")
    assert f"cannot undo input {input_id}: {episode} (changed later by api)" in status.text
    assert "“Undo anyway” overwrites those later changes too." in status.text and "error" in status.get_attribute("class")
    assert mx.get(episode, user_id="alice").details == "Lars moved to Porto."

    # a double-click only arms it
    ActionChains(d).double_click(d.find_element(By.CSS_SELECTOR, button)).perform()
    assert d.find_element(By.CSS_SELECTOR, button).text == "Really undo anyway?"
    assert d.execute_script("return window.undos") == [undo_path]  # the refused one only
    _wait(d, lambda d: _armed(d.find_element(By.CSS_SELECTOR, button), "Really undo anyway?"))
    assert mx.get(episode, user_id="alice")

    _click(d, By.CSS_SELECTOR, button)  # a separate click: the forced undo
    _wait(d, lambda d: f"Undid input {input_id} over the later changes: " in d.find_element(By.ID, "status").text)
    assert d.execute_script("return window.undos") == [undo_path, undo_path + "?force=true"]
    assert not {c.memory_id for c in honey.changes} & {m.id for m in mx.list(user_id="alice", limit=100)}
    _wait(d, lambda d: d.find_element(By.ID, "detail").get_attribute("hidden") is not None)  # its memory is gone
    assert not any("Lars" in t for t in _texts(d, "#items .item"))
