"""The viewer at phone width (420 px): the detail panel opens under the list, never over it; a
typed user id is what the picker then shows."""

from __future__ import annotations

from test_viewer import _click, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)


def test_phone_width_detail_does_not_cover_the_list(browser, live_sqlite, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    mx.add("My brother Tom is a pilot for a regional airline.", user_id="alice")
    mx.add("Bob's note: I like jazz.", user_id="bob")
    d = browser
    d.set_window_size(420, 900)
    try:
        d.get(live_sqlite.url + "/viewer")
        d.execute_script("sessionStorage.clear()")
        d.get(live_sqlite.url + "/viewer")
        d.find_element(By.ID, "api-key").send_keys(live_sqlite.admin)
        _click(d, By.ID, "connect")
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
        first = d.execute_script("return document.querySelector('#items .item').dataset.id")
        _click(d, By.CSS_SELECTOR, f'#items .item[data-id="{first}"]')
        _wait(d, lambda d: d.find_element(By.ID, "detail").get_attribute("hidden") is None)
        rects = d.execute_script(
            "const r = (id) => document.getElementById(id).getBoundingClientRect();"
            "const a = r('left'), b = r('detail');"
            "return {leftBottom: a.bottom, detailTop: b.top, detailWidth: b.width, page: window.innerWidth};")
        assert rects["detailTop"] >= rects["leftBottom"] - 1, rects  # under the list, not over it
        assert rects["detailWidth"] <= rects["page"], rects
        assert d.execute_script("return document.documentElement.scrollWidth <= document.documentElement.clientWidth")  # no sideways scroll
        (tmp_path / "viewer-420.png").write_bytes(d.get_screenshot_as_png())

        box = d.find_element(By.ID, "user-input")
        box.clear()
        box.send_keys("bob")
        _click(d, By.ID, "user-open")
        _wait(d, lambda d: d.execute_script("return document.getElementById('user-select').value") == "bob")
        _wait(d, lambda d: "jazz" in d.find_element(By.ID, "items").text)
    finally:
        d.set_window_size(1400, 1000)
