"""Long unbroken words (a window title on the Inputs tab, a chat answer, an input's error) wrap in
the viewer instead of pushing the page sideways, at desktop and at phone width."""

from __future__ import annotations

import pytest

from test_viewer import _click, _connect, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)

from mirix_py.boundary.inputs import normalize_add
from mirix_py.records import InputStatus

LONG = "W" * 3000


def _fits(driver):
    """The page is no wider than the window: nothing to scroll sideways."""
    return driver.execute_script("const de = document.documentElement; return [de.scrollWidth, de.clientWidth]")


@pytest.fixture(scope="module")
def long_words(live_sqlite):
    mx = live_sqlite.mx
    mx.add("Long word: " + LONG, user_id="alice")
    record = normalize_add("I looked at the build log.", user_id="alice", occurred_at=None, source_id=None,
                           kind="text", max_chars=10_000, metadata={"app": "Editor", "window_title": "Win " + "T" * 900})
    mx.inputs.append([record], claimed_by=mx.worker_id)
    mx.inputs.mark([record.id], InputStatus.failed, "update flow: " + "E" * 900)
    return live_sqlite


def _show_inputs(d):
    from selenium.webdriver.common.by import By

    _click(d, By.ID, "tab-inputs")
    _wait(d, lambda d: "TTTT" in d.find_element(By.ID, "input-list").text)


def _ask(d):
    from selenium.webdriver.common.by import By

    d.find_element(By.ID, "chat-remember").click()  # not remembered: the question changes nothing
    d.find_element(By.ID, "chat-input").send_keys("Long word")
    _click(d, By.ID, "chat-send")
    _wait(d, lambda d: LONG[:50] in d.find_element(By.ID, "chat-text").text)


@pytest.mark.parametrize("width", [1400, 420])
@pytest.mark.parametrize("show", [_show_inputs, _ask], ids=["inputs", "chat"])
def test_long_words_wrap_instead_of_widening_the_page(browser, long_words, width, show):  # noqa: F811
    from selenium.webdriver.common.by import By

    d = browser
    d.set_window_size(width, 1000)
    try:
        _connect(d, long_words, long_words.alice)
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
        show(d)
        scroll, client = _fits(d)
        assert scroll <= client, f"the page is {scroll} px wide in a {client} px window"
    finally:
        d.set_window_size(1400, 1000)
