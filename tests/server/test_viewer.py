"""The memory viewer page in Debian's headless Chromium (Selenium + /usr/bin/chromedriver), against a
live server: pick a user, the six types, search, the episodic timeline, history, edit, delete."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from datetime import datetime, timezone

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def _need_browser():
    if os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER):
        return
    if os.environ.get("CI") == "true":
        pytest.fail("chromium/chromium-driver missing in CI: scripts/setup.sh installs them")
    pytest.skip("Debian chromium + chromium-driver not installed (scripts/setup.sh installs them)")


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="mirix-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def seeded(live_sqlite):
    mx = live_sqlite.mx
    when = lambda d: datetime(2024, 5, d, 10, 0, tzinfo=timezone.utc)  # noqa: E731
    mx.add("My brother Tom is a pilot for a regional airline.", user_id="alice", occurred_at=when(1))
    mx.add("I went climbing at the Sunset crag with Tom.", user_id="alice", occurred_at=when(2))
    mx.add("How to deploy the site:\n1. Run the tests\n2. Build the image\n3. Push it to the registry",
           user_id="alice", occurred_at=when(3))
    mx.add("Today I read the Rust book chapter on lifetimes.", user_id="alice", occurred_at=when(3))
    mx.core_append("human", "Name: Alice. Likes climbing.", user_id="alice")
    mx.add("Bob's secret note: I like jazz.", user_id="bob")
    return live_sqlite


def _wait(driver, predicate, timeout=15):
    """Until `predicate(driver)` holds. The page re-renders lists as responses arrive, so an element
    found a moment ago may be gone: a stale or missing element means "not yet", never a failure."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
                         ).until(lambda d: predicate(d))


def _click(driver, by, value, timeout=15):
    """Click the element found now (found again if it was re-rendered between finding and clicking)."""
    def attempt(d):
        d.find_element(by, value).click()
        return True

    return _wait(driver, attempt, timeout)


def _connect(driver, live, key):
    """A fresh viewer session (no key kept from an earlier test) connected with `key`."""
    from selenium.webdriver.common.by import By

    driver.get(live.url + "/viewer")
    driver.execute_script("sessionStorage.clear()")
    driver.get(live.url + "/viewer")
    box = driver.find_element(By.ID, "api-key")
    box.clear()  # the first load's connect may have kept its key again after the clear, and filled it in here
    box.send_keys(key)
    _click(driver, By.ID, "connect")


def _texts(driver, css):
    """The texts of the elements matching `css`, read in one script call (no element handle to go stale)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.innerText)", css)


def _armed(button, question):
    """The button asks `question` and takes the confirming click (it ignores clicks for a moment
    after arming, so a double-click cannot confirm)."""
    return button.text == question and button.get_attribute("aria-disabled") is None


def test_viewer_end_to_end(browser, seeded, tmp_path):
    from PIL import Image, ImageStat
    from selenium.webdriver.common.by import By

    d = browser
    d.get(seeded.url + "/viewer")
    assert d.title.startswith("mirix-py")
    d.find_element(By.ID, "api-key").send_keys(seeded.alice)
    _click(d, By.ID, "connect")

    # the key is bound to alice only: the picker offers alice, not bob
    _wait(d, lambda d: _texts(d, "#user-select option") == ["alice"])

    # the six memory types are tabs with counts; episodic is listed first
    counts = seeded.mx.stats(user_id="alice")["memories"]
    types = ("core", "episodic", "semantic", "procedural", "resource", "knowledge_vault")
    _wait(d, lambda d: all(f"({counts.get(t, 0)})" in d.find_element(By.ID, f"tab-{t}").text for t in types))
    _wait(d, lambda d: len(_texts(d, "#items .item")) == counts["episodic"]
          and "climbing" in d.find_element(By.ID, "items").text)

    _click(d, By.ID, "tab-semantic")
    _wait(d, lambda d: "Tom" in d.find_element(By.ID, "items").text)
    _click(d, By.ID, "tab-procedural")
    _wait(d, lambda d: "deploy" in d.find_element(By.ID, "items").text.lower())
    _click(d, By.ID, "tab-core")
    _wait(d, lambda d: "Likes climbing" in d.find_element(By.ID, "core").text)

    # the episodic timeline groups episodes by day
    _click(d, By.ID, "tab-timeline")
    day_list = "return Array.from(document.querySelectorAll('#timeline .day')).map(e => e.dataset.day)"
    _wait(d, lambda d: d.execute_script(day_list) == ["2024-05-03", "2024-05-02", "2024-05-01"])

    # search
    box = d.find_element(By.ID, "search-input")
    box.send_keys("who flies airplanes")
    _click(d, By.ID, "search-btn")
    _wait(d, lambda d: "result(s)" in d.find_element(By.ID, "status").text)
    _wait(d, lambda d: (_texts(d, "#items .item") or [""])[0].count("Tom") > 0
          and "score" in _texts(d, "#items .item")[0])

    # an item's history, then edit it in place
    semantic_id = next(m.id for m in seeded.mx.list(user_id="alice", memory_types=["semantic"]) if m.name == "Tom")
    _click(d, By.ID, "tab-semantic")
    _click(d, By.CSS_SELECTOR, f'#items .item[data-id="{semantic_id}"]')
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#history li"))
    assert "insert" in d.find_element(By.ID, "history").text
    area = d.find_element(By.ID, "edit-fields")
    fields = __import__("json").loads(area.get_attribute("value"))
    fields["summary"] = "Tom is Alice's brother and flies for a regional airline"
    area.clear()
    area.send_keys(__import__("json").dumps(fields))
    _click(d, By.ID, "save-btn")
    _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#history li")) == 2)
    assert "flies for a regional airline" in d.find_element(By.ID, "history").text
    assert seeded.mx.get(semantic_id, user_id="alice").summary.endswith("flies for a regional airline")

    # screenshot of the page with the detail panel open: not blank
    png = d.get_screenshot_as_png()
    (tmp_path / "viewer.png").write_bytes(png)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size[0] >= 1000 and image.size[1] >= 600
    colors = image.getcolors(maxcolors=1 << 20)
    assert colors is None or len(colors) > 50, "the page rendered almost a single colour"
    assert max(ImageStat.Stat(image.convert("L")).stddev) > 20, "the page looks blank"

    # delete (two clicks: arm, then confirm once the button takes a confirmation)
    _click(d, By.ID, "delete-btn")
    _wait(d, lambda d: _armed(d.find_element(By.ID, "delete-btn"), "Really delete?"))
    _click(d, By.ID, "delete-btn")
    _wait(d, lambda d: not d.find_elements(By.CSS_SELECTOR, f'#items .item[data-id="{semantic_id}"]'))
    assert d.find_element(By.ID, "detail").get_attribute("hidden") is not None
    assert all(m.id != semantic_id for m in seeded.mx.list(user_id="alice", memory_types=["semantic"]))


def test_viewer_rejects_a_bad_key_and_escapes_content(browser, seeded):
    from selenium.webdriver.common.by import By

    seeded.mx.add("<img src=x onerror=\"document.title='pwned'\"> <b>bold?</b>", user_id="alice")
    d = browser
    d.get(seeded.url + "/viewer")
    d.execute_script("sessionStorage.clear()")
    d.get(seeded.url + "/viewer")

    def connect_with(value):
        key = d.find_element(By.ID, "api-key")
        key.clear()
        key.send_keys(value)
        d.find_element(By.ID, "connect").click()

    # an open page, then a rejected key: the page locks, shows nothing and forgets the stored key
    connect_with(seeded.alice)
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
    connect_with("mxk_0000.nope")
    _wait(d, lambda d: "not valid" in d.find_element(By.ID, "status").text)
    for control in ("user-select", "user-input", "user-open", "search-input", "search-btn"):
        assert d.find_element(By.ID, control).get_attribute("disabled") is not None, control
    assert not d.find_elements(By.CSS_SELECTOR, "#items .item, #user-select option")
    assert d.execute_script("return sessionStorage.getItem('mirix.key')") is None

    key = d.find_element(By.ID, "api-key")
    key.clear()
    key.send_keys(seeded.alice)
    d.find_element(By.ID, "connect").click()
    _wait(d, lambda d: "<img" in d.find_element(By.ID, "items").text)
    assert d.title.startswith("mirix-py")  # shown as text, never run
    assert not d.find_elements(By.CSS_SELECTOR, "#items img, #items b")
