"""Screen activity over REST (GET .../screen-activity) and in the viewer's Screen tab: frame groups
by app and window with their time, frame count, the text read, kept thumbnails and the memories made
from them (which open in the detail panel), at desktop and phone width."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from test_viewer import _click, _connect, _texts, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)

from mirix_synth.screens import text_window
from mirix_py.client import MirixClient

T = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=30)  # inside the thumbnails' retention




def test_screen_tab_shows_frame_groups_with_text_thumbnails_and_memories(browser, live_sqlite, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By

    mx = live_sqlite.mx
    mx.configure_screenshots(keep_thumbnails=True, workers=0)
    frames = [("Firefox", "Trip notes", ["Ferry to Bergen leaves at nine"]),
              ("Firefox", "Trip notes", ["Ferry to Bergen leaves at nine", "Hotel Bryggen for two nights"]),
              ("Writer", "Invoices", ["Invoice for the garden shed"])]
    ids = []
    for k, (app, window, lines) in enumerate(frames):
        r = mx.add_screenshot(text_window(*lines), user_id="alice", captured_at=T + timedelta(seconds=30 * k), app=app,
                              window_title=window, wait=True)
        ids.append(r.input_ids[0])

    c = live_sqlite.client(live_sqlite.alice)
    groups = c.get("/v1/users/alice/screen-activity").json()
    assert [(g["app"], g["window_title"], g["input_ids"]) for g in groups] == [
        ("Writer", "Invoices", ids[2:]), ("Firefox", "Trip notes", ids[:2])]
    trip = groups[1]
    assert trip["frames"] == 2 and trip["thumbnail_ids"] == ids[:2] and trip["text_from"] == ["memories"]
    assert "Hotel Bryggen" in trip["text"] and trip["memory_ids"]
    since = (T + timedelta(seconds=45)).isoformat()
    assert [g["app"] for g in c.get("/v1/users/alice/screen-activity", params={"since": since}).json()] == ["Writer"]
    assert c.get("/v1/users/alice/screen-activity", params={"since": since, "until": T.isoformat()}).status_code == 422
    assert c.get("/v1/users/alice/screen-activity", params={"since": "2026-01-01T10:00:00"}).status_code == 422
    assert c.get("/v1/users/alice/screen-activity", params={"limit": 0}).status_code == 422
    assert live_sqlite.client(live_sqlite.bob).get("/v1/users/alice/screen-activity").status_code == 403
    with MirixClient(live_sqlite.url, api_key=live_sqlite.alice) as client:  # the same records over HTTP
        assert client.screen_activity(user_id="alice", since=T) == mx.screen_activity(user_id="alice", since=T)

    d = browser
    _connect(d, live_sqlite, live_sqlite.alice)
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
    _click(d, By.ID, "tab-screen")
    group = f'#screen-list .group[data-input="{ids[0]}"]'
    _wait(d, lambda d: len(_texts(d, "#screen-list .group")) == 2 and d.execute_script(
        "return document.querySelectorAll(arguments[0] + ' img.thumb.loaded').length", group) == 2)
    shown = d.execute_script("return document.querySelector(arguments[0]).innerText", group)
    assert "Firefox · Trip notes" in shown and "2 frames" in shown and "Hotel Bryggen" in shown
    assert "Invoice" not in shown and "Invoice" in _texts(d, "#screen-list .group")[0]  # newest first
    assert "screen group(s)" in d.find_element(By.ID, "status").text
    (tmp_path / "viewer-screen.png").write_bytes(d.get_screenshot_as_png())

    # a memory made from the frames opens in the detail panel
    memory_id = trip["memory_ids"][0]
    _click(d, By.CSS_SELECTOR, f'{group} .memlink[data-id="{memory_id}"]')
    _wait(d, lambda d: memory_id in d.find_element(By.ID, "detail-title").text)
    assert ids[0] in d.find_element(By.ID, "detail-meta").text  # its source_ids name the frame

    # phone width: the groups fit, nothing scrolls sideways
    d.set_window_size(420, 900)
    try:
        _click(d, By.ID, "close-btn")
        _wait(d, lambda d: d.execute_script(
            "return window.innerWidth <= 420 && document.documentElement.scrollWidth"
            " <= document.documentElement.clientWidth"))
        width = d.execute_script("return document.querySelector(arguments[0]).getBoundingClientRect().right", group)
        assert width <= d.execute_script("return window.innerWidth")
        (tmp_path / "viewer-screen-420.png").write_bytes(d.get_screenshot_as_png())
    finally:
        d.set_window_size(1400, 1000)
