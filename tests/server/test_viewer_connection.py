"""The viewer and its server: a --no-auth server is opened without a key (a server with keys still
asks for one), and a server that stops answering is named as unreachable, with the tab that was
shown still marked as shown."""

from __future__ import annotations

import pytest

from test_viewer import _click, _connect, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)


def _status(driver):
    return driver.execute_script("const s = document.getElementById('status'); return [s.textContent, s.classList.contains('error')]")


def _active_tabs(driver):
    return driver.execute_script("return [...document.querySelectorAll('#tabs [role=tab]')]"
                                 ".filter(b => b.getAttribute('aria-selected') === 'true' || b.classList.contains('active'))"
                                 ".map(b => b.id)")


@pytest.fixture
def server(tmp_path, embedder, live_server_factory, request):
    """A live server of this test's own (`auth` from the test's parameter), stopped by the test or at its end."""
    thread, live = live_server_factory(tmp_path, embedder, auth=getattr(request, "param", True))
    yield thread, live
    thread.__exit__()
    live.mx.close()


@pytest.mark.parametrize("server", [False], indirect=True, ids=["no-auth"])
def test_a_no_auth_server_opens_without_a_key(browser, server):  # noqa: F811
    from selenium.webdriver.common.by import By

    _, live = server
    live.mx.add("My brother Tom is a pilot.", user_id="ada")
    d = browser
    d.get(live.url + "/viewer")
    d.execute_script("sessionStorage.clear()")
    d.get(live.url + "/viewer")
    _wait(d, lambda d: "pilot" in d.find_element(By.ID, "items").text)  # opened on load, no key typed
    assert _status(d) == ["1 episodic memories of ada.", False]
    d.execute_script("document.getElementById('items').replaceChildren()")
    _click(d, By.ID, "connect")  # Connect with the key box empty: connected again, not "enter a key"
    _wait(d, lambda d: "pilot" in d.find_element(By.ID, "items").text)
    assert _status(d) == ["1 episodic memories of ada.", False]
    assert d.find_element(By.ID, "user-select").get_attribute("value") == "ada"


def test_a_server_with_keys_still_asks_for_one(browser, server):  # noqa: F811
    from selenium.webdriver.common.by import By

    _, live = server
    d = browser
    d.get(live.url + "/viewer")
    d.execute_script("sessionStorage.clear()")
    d.get(live.url + "/viewer")
    _wait(d, lambda d: _status(d) == ["Enter an API key to start.", False])
    _click(d, By.ID, "connect")
    _wait(d, lambda d: _status(d) == ["This server needs an API key: enter one.", True])
    assert d.find_element(By.ID, "search-input").get_attribute("disabled") is not None


def test_an_unreachable_server_is_named_and_the_shown_tab_stays_marked(browser, server):  # noqa: F811
    from selenium.webdriver.common.by import By

    thread, live = server
    live.mx.add("My brother Tom is a pilot.", user_id="alice")
    d = browser
    _connect(d, live, live.alice)
    _wait(d, lambda d: "episodic memories of alice" in _status(d)[0])
    thread.stop()
    _click(d, By.ID, "tab-semantic")
    _wait(d, lambda d: _status(d)[1])
    message = _status(d)[0]
    assert message.startswith(f"The server at {live.url.split('//')[1]} cannot be reached"), message
    assert _active_tabs(d) == ["tab-episodic"]  # its list is what the panel still shows
    assert "pilot" in d.find_element(By.ID, "items").text and d.find_element(By.ID, "items").is_displayed()
