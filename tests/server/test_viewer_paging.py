"""More memories or inputs than one page: a type tab says how many of how many it shows and "Show more"
lists the rest (GET .../memories after the page's cursor); the Inputs tab shows the newest inputs and
"Show more" the older ones (GET .../inputs after the page's cursor), down to the oldest."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from test_viewer import _click, _connect, _texts, _wait, browser  # noqa: F401  (the viewer tests' Chromium fixture)

from mirix_py.boundary.inputs import normalize_add
from mirix_py.records import EpisodicMemory, InputStatus
from mirix_py.tools.ops import InsertOp

EPISODES = 205  # one page (200) and a few more
INPUTS = 201


def _status(driver):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, "status").text


def _log_inputs(mx, user_id, count, start):
    """`count` processed inputs logged a minute apart from `start`; their ids, the oldest first."""
    records = [normalize_add(f"Input number {i}", user_id=user_id, occurred_at=None, source_id=None, kind="text",
                             max_chars=10_000).model_copy(update={"created_at": start + timedelta(minutes=i)})
               for i in range(count)]
    mx.inputs.append(records, claimed_by=mx.worker_id)
    mx.inputs.mark([r.id for r in records], InputStatus.processed)
    return [r.id for r in records]


def _write_episodes(mx, user_id, count, start):
    """`count` episodes said an hour apart from `start`; their ids, the oldest first."""
    changes = mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary=f"Note number {i:03d}",
                                                             occurred_at=start + timedelta(hours=i)))
                              for i in range(count)], user_id=user_id, actor="test")
    return [c.memory_id for c in changes]


@pytest.fixture(scope="module")
def many(live_sqlite):
    mx = live_sqlite.mx
    start = datetime(2024, 1, 1, 9, tzinfo=timezone.utc)
    _write_episodes(mx, "alice", EPISODES, start)
    return SimpleNamespace(live=live_sqlite, input_ids=_log_inputs(mx, "alice", INPUTS, start))


def test_show_more_lists_every_memory_of_a_type(browser, many):  # noqa: F811
    from selenium.webdriver.common.by import By

    d = browser
    _connect(d, many.live, many.live.alice)
    _wait(d, lambda d: _status(d) == f"200 of {EPISODES} episodic memories of alice shown; "
                                     "Show more lists the next 200.")
    assert len(_texts(d, "#items .item")) == 200
    assert not any("Note number 000" in t for t in _texts(d, "#items .item"))  # the oldest, not on the first page
    _click(d, By.ID, "more-btn")
    _wait(d, lambda d: _status(d) == f"{EPISODES} episodic memories of alice.")
    shown = _texts(d, "#items .item")
    assert len(shown) == EPISODES and any("Note number 000" in t for t in shown)
    assert not d.find_element(By.ID, "more-btn").is_displayed()


def _listed_inputs(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#input-list .input')).map(e => e.dataset.id)")


def test_show_more_lists_the_oldest_inputs(browser, many):  # noqa: F811
    from selenium.webdriver.common.by import By

    newest_first = list(reversed(many.input_ids))
    d = browser
    _connect(d, many.live, many.live.alice)
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#items .item"))
    _click(d, By.ID, "tab-inputs")
    _wait(d, lambda d: _status(d) == "The newest 200 inputs of alice shown; Show more lists the next 200.")
    assert _listed_inputs(d) == newest_first[:200]  # the oldest is not on the first page
    _click(d, By.ID, "more-btn")
    _wait(d, lambda d: _status(d) == f"{INPUTS} input(s) of alice.")
    assert _listed_inputs(d) == newest_first  # down to the oldest, each once
    assert not d.find_element(By.ID, "more-btn").is_displayed()


def test_inputs_logged_after_the_first_page_stay_out_of_the_older_ones(browser, live_sqlite):  # noqa: F811
    """More inputs than a page arrive while the first page is shown: "Show more" lists the one input
    older than that page. Counted by offset, it listed one of the new inputs below the older ones and
    offered more still."""
    from selenium.webdriver.common.by import By

    start = datetime(2024, 2, 1, 9, tzinfo=timezone.utc)
    newest_first = list(reversed(_log_inputs(live_sqlite.mx, "erin", INPUTS, start)))
    d = browser
    _connect(d, live_sqlite, live_sqlite.keys.create(["erin"], name="erin").key)
    _wait(d, lambda d: _status(d).endswith("of erin."))  # connected: the open tab is listed
    _click(d, By.ID, "tab-inputs")
    _wait(d, lambda d: _status(d) == "The newest 200 inputs of erin shown; Show more lists the next 200.")
    _log_inputs(live_sqlite.mx, "erin", INPUTS, start + timedelta(days=1))  # newer than every input shown
    _click(d, By.ID, "more-btn")
    _wait(d, lambda d: _status(d) == f"{INPUTS} input(s) of erin.")
    assert _listed_inputs(d) == newest_first
    assert not d.find_element(By.ID, "more-btn").is_displayed()


def _listed_memories(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#items .item .id')).map(e => e.textContent)")


def test_memories_written_after_the_first_page_stay_out_of_the_older_ones(browser, live_sqlite):  # noqa: F811
    """More episodes than a page are written while the first page is shown: "Show more" lists the five
    older than that page. Counted by offset, it listed five of the new ones and left the oldest out."""
    from selenium.webdriver.common.by import By

    start = datetime(2024, 3, 1, 9, tzinfo=timezone.utc)
    newest_first = list(reversed(_write_episodes(live_sqlite.mx, "maya", EPISODES, start)))
    d = browser
    _connect(d, live_sqlite, live_sqlite.keys.create(["maya"], name="maya").key)
    _wait(d, lambda d: _status(d) == f"200 of {EPISODES} episodic memories of maya shown; "
                                     "Show more lists the next 200.")
    _write_episodes(live_sqlite.mx, "maya", EPISODES, start + timedelta(days=30))  # newer than every one shown
    _click(d, By.ID, "more-btn")
    _wait(d, lambda d: _status(d) == f"{EPISODES} episodic memories of maya.")
    assert _listed_memories(d) == newest_first
    assert not d.find_element(By.ID, "more-btn").is_displayed()
