"""The viewer's chat panel and add box in headless Chromium: ask, see the answer with its cited
memories (clickable, opening the memory), told it is offline; add a memory from the page."""

from __future__ import annotations

from test_viewer import _click, _texts, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)


def test_chat_panel_and_add_box(browser, live_sqlite, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    mx.add("My brother Tom is a pilot for a regional airline.", user_id="alice")
    mx.add("I keep bees on the roof of the garage.", user_id="alice")
    d = browser
    d.get(live_sqlite.url + "/viewer")
    d.execute_script("sessionStorage.clear()")
    d.get(live_sqlite.url + "/viewer")
    assert d.find_element(By.ID, "chat-send").get_attribute("disabled") is not None  # no user open yet
    d.find_element(By.ID, "api-key").send_keys(live_sqlite.alice)
    _click(d, By.ID, "connect")
    _wait(d, lambda d: d.find_element(By.ID, "chat-send").get_attribute("disabled") is None)

    d.find_element(By.ID, "chat-input").send_keys("what does Tom do?")
    _click(d, By.ID, "chat-send")
    _wait(d, lambda d: _texts(d, "#chat-cited .item"))
    assert "pilot" in _texts(d, "#chat-cited .item")[0]
    assert "Offline" in d.find_element(By.ID, "chat-mode").text
    assert "pilot" in d.find_element(By.ID, "chat-text").text
    (tmp_path / "viewer-chat.png").write_bytes(d.get_screenshot_as_png())
    cited = d.execute_script("return document.querySelector('#chat-cited .item').dataset.id")
    _click(d, By.CSS_SELECTOR, "#chat-cited .item")
    _wait(d, lambda d: cited in d.find_element(By.ID, "detail-title").text)

    d.find_element(By.ID, "add-input").send_keys("The spare key is under the blue flowerpot.")
    _click(d, By.ID, "add-btn")
    _wait(d, lambda d: "Remembered (processed" in d.find_element(By.ID, "status").text)
    assert any("flowerpot" in m.search_text() for m in mx.list(user_id="alice", limit=100))
    assert d.find_element(By.ID, "add-input").get_attribute("value") == ""
