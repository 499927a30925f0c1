"""Switching users while a request for the previous one is in flight: the viewer drops the late
reply (a memory's detail, search results, core blocks, the timeline), so nothing of the previous
user ever shows under the new one, and the Results tab stays hidden."""

from __future__ import annotations

import pytest

from test_viewer import _click, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)

SECRET = "ADA-SECRET"

# Requests for ada are held while `window.holdAda` is set, until `window.releaseAda()`; `window.pending`
# counts released ones not answered yet. `window.leaks` records every moment the page, showing bob,
# shows ada's text, a detail panel for one of her memories, or the Results tab.
HOLD_AND_WATCH = """
const secret = arguments[0], episode = arguments[1];
window.held = []; window.pending = 0; window.leaks = []; window.holdAda = false;
const realFetch = window.fetch;
window.fetch = (url, opts) => {
  if (!window.holdAda || !String(url).startsWith("/v1/users/ada/")) return realFetch(url, opts);
  return new Promise((resolve, reject) => window.held.push(() => {
    window.pending += 1;
    realFetch(url, opts).then(resolve, reject).finally(() => { window.pending -= 1; });
  }));
};
window.releaseAda = () => { window.holdAda = false; window.held.splice(0).forEach((go) => go()); };
const $ = (id) => document.getElementById(id);
new MutationObserver(() => {
  if ($("user-select").value !== "bob") return;
  const shown = document.body.innerText;
  if (shown.includes(secret) || !$("tab-search").hidden || (!$("detail").hidden && shown.includes(episode)))
    window.leaks.push(shown.slice(0, 300));
}).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
"""


def _status(driver):
    return driver.execute_script("return document.getElementById('status').textContent")


def _pick(driver, user):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, "user-select")).select_by_value(user)


@pytest.fixture(scope="module")
def two_users(live_sqlite):
    mx = live_sqlite.mx
    ada = mx.add(f"{SECRET}: my brother Tom is a pilot.", user_id="ada")
    mx.core_append("human", f"{SECRET}: Ada likes climbing.", user_id="ada")
    mx.add("Bob likes jazz.", user_id="bob")
    return live_sqlite, next(c.memory_id for c in ada.changes if c.memory_type.value == "episodic")


def _open_ada(driver, live):
    from selenium.webdriver.common.by import By

    driver.get(live.url + "/viewer")
    driver.execute_script("sessionStorage.clear()")
    driver.get(live.url + "/viewer")
    box = driver.find_element(By.ID, "api-key")
    box.clear()
    box.send_keys(live.admin)
    _click(driver, By.ID, "connect")
    _wait(driver, lambda d: "episodic memories of ada" in _status(d))


def _switch_to_bob_while_ada_waits(driver, start_request, bob_shown):
    """Start a request for ada (held), open bob and wait for `bob_shown(driver)`, let ada's reply
    arrive late; then one more round trip for bob, so the late reply has been handled before the
    page is checked."""
    from selenium.webdriver.common.by import By

    driver.execute_script("window.holdAda = true;")
    start_request()
    _wait(driver, lambda d: d.execute_script("return window.held.length") > 0)
    _pick(driver, "bob")
    _wait(driver, bob_shown)
    driver.execute_script("window.leaks = []; window.releaseAda()")
    _wait(driver, lambda d: d.execute_script("return window.pending") == 0)
    _click(driver, By.ID, "tab-semantic")
    _wait(driver, lambda d: "semantic memories of bob" in _status(d))
    assert driver.execute_script("return window.leaks") == []
    assert SECRET not in driver.find_element(By.TAG_NAME, "body").text


@pytest.mark.parametrize("late", ["detail", "search", "core", "timeline"])
def test_a_late_reply_for_the_previous_user_is_dropped(browser, two_users, late):  # noqa: F811
    from selenium.webdriver.common.by import By

    live, ada_episode = two_users
    d = browser
    _open_ada(d, live)
    d.execute_script(HOLD_AND_WATCH, SECRET, ada_episode)
    bobs_list = lambda d: "episodic memories of bob" in _status(d)  # noqa: E731
    if late == "detail":
        _switch_to_bob_while_ada_waits(d, lambda: _click(d, By.CSS_SELECTOR, f'.item[data-id="{ada_episode}"]'),
                                       bobs_list)
        assert d.find_element(By.ID, "detail").get_attribute("hidden") is not None
    elif late == "search":
        def search():
            d.find_element(By.ID, "search-input").send_keys("pilot")
            _click(d, By.ID, "search-btn")

        _switch_to_bob_while_ada_waits(d, search, bobs_list)
        assert not d.find_element(By.ID, "tab-search").is_displayed()
    elif late == "core":
        _switch_to_bob_while_ada_waits(d, lambda: _click(d, By.ID, "tab-core"),
                                       lambda d: "Core memory of bob" in _status(d))
    else:
        _switch_to_bob_while_ada_waits(d, lambda: _click(d, By.ID, "tab-timeline"),
                                       lambda d: "Bob likes jazz" in d.find_element(By.ID, "timeline").text)
