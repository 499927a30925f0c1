"""The viewer from the keyboard and to assistive technology: list entries are reached with Tab and
opened with Enter or Space, they are buttons named by what they hold, the search method has a
name, and the tabs say which one is selected."""

from __future__ import annotations

from test_viewer import _click, _connect, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)


def _focused(driver):
    return driver.execute_script("const e = document.activeElement; return e.dataset.id || e.id || e.tagName")


def test_memories_open_from_the_keyboard(browser, live_sqlite):  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    mx = live_sqlite.mx
    mx.add("My brother Tom is a pilot for a regional airline.", user_id="alice")
    mx.add("Dinner with Anna at the harbour.", user_id="alice")
    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#items .item")) == 2)
    first, second = d.execute_script("return [...document.querySelectorAll('#items .item')].map(e => e.dataset.id)")

    entry = d.find_element(By.CSS_SELECTOR, f'#items .item[data-id="{first}"]')
    assert entry.aria_role == "button"
    assert entry.accessible_name.startswith("episodic, ") and "Anna" in entry.accessible_name

    d.execute_script("document.getElementById('tab-inputs').focus()")  # the last tab, then the list
    ActionChains(d).send_keys(Keys.TAB).perform()
    assert _focused(d) == first
    ActionChains(d).send_keys(Keys.ENTER).perform()
    _wait(d, lambda d: first in d.find_element(By.ID, "detail-title").text)
    d.execute_script("document.getElementById('tab-inputs').focus()")
    ActionChains(d).send_keys(Keys.TAB, Keys.TAB, Keys.SPACE).perform()
    _wait(d, lambda d: second in d.find_element(By.ID, "detail-title").text)

    assert d.find_element(By.ID, "search-method").accessible_name == "Search method"
    selected = "return [...document.querySelectorAll('#tabs [role=tab]')].map(b => [b.id, b.getAttribute('aria-selected')])"
    assert [t for t, s in d.execute_script(selected) if s == "true"] == ["tab-episodic"]
    assert all(s == "false" for t, s in d.execute_script(selected) if t != "tab-episodic")
    _click(d, By.ID, "tab-semantic")
    _wait(d, lambda d: [t for t, s in d.execute_script(selected) if s == "true"] == ["tab-semantic"])
