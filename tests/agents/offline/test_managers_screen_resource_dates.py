"""A window's screen resource, updated when the window's text changes on a later day, carries the
day it showed its new text; its history keeps the earlier text and day. A later look at the
unchanged window moves nothing: it is an episode of its own."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix

USER = "ada"
MONDAY = datetime(2024, 6, 3, 9, 14, 5, tzinfo=timezone.utc)
THURSDAY = datetime(2024, 6, 6, 10, 20, tzinfo=timezone.utc)
FRIDAY = datetime(2024, 6, 7, 11, 42, tzinfo=timezone.utc)


@pytest.fixture
def mx(tmp_path, backend):
    engine = Mirix(tmp_path / "data", embedder=None, database_url=backend)
    yield engine
    engine.close()


def _look(mx: Mirix, at: datetime, *lines: str) -> str:
    """A frame of the calendar's "Dentist" window captured `at`, logged and processed as the
    screenshot ingestor does; its input id."""
    frame = normalize_add("\n".join(lines), user_id=USER, occurred_at=at, source_id=f"{at:%a}.png",
                          kind="screenshot", max_chars=10_000, metadata={"app": "Calendar", "window_title": "Dentist"})
    mx.inputs.append([frame], claimed_by=mx.worker_id)
    mx.runner.process([frame])
    return frame.id


def _window(mx: Mirix):
    (resource,) = mx.list(user_id=USER, memory_types=["resource"])
    return resource


def test_a_changed_window_carries_the_day_it_showed_the_new_text(mx):
    monday = _look(mx, MONDAY, "Thursday 6 June", "Dentist at 15:00", "Synced 09:14")
    first = _window(mx)
    thursday = _look(mx, THURSDAY, "Thursday 6 June", "Dentist at 16:30", "Synced 10:20")

    moved = _window(mx)
    assert moved.id == first.id and "Dentist at 16:30" in moved.content and "15:00" not in moved.content
    assert moved.occurred_at == THURSDAY  # was Monday's: Thursday's text under Monday's date
    assert {monday, thursday} <= set(moved.source_ids)
    inserted, updated = mx.history(moved.id, user_id=USER)
    assert updated.before is not None and "Dentist at 15:00" in updated.before["content"]
    assert datetime.fromisoformat(updated.before["occurred_at"]) == MONDAY
    assert inserted.after == updated.before
    # a search of Thursday finds the new text; one of Monday no longer offers it as Monday's
    thursday_hits = mx.search("dentist", user_id=USER, memory_types=["resource"], context=0,
                              start=datetime(2024, 6, 6, tzinfo=timezone.utc), end=datetime(2024, 6, 7, tzinfo=timezone.utc))
    assert [h.memory.id for h in thursday_hits] == [moved.id]
    assert mx.search("dentist", user_id=USER, memory_types=["resource"], context=0,
                     start=datetime(2024, 6, 3, tzinfo=timezone.utc), end=datetime(2024, 6, 4, tzinfo=timezone.utc)) == []


def test_the_unchanged_window_seen_again_keeps_its_resource_and_is_an_episode(mx):
    _look(mx, MONDAY, "Thursday 6 June", "Dentist at 15:00", "Synced 09:14")
    _look(mx, THURSDAY, "Thursday 6 June", "Dentist at 16:30", "Synced 10:20")
    before = _window(mx)
    friday = _look(mx, FRIDAY, "Thursday 6 June", "Dentist at 16:30", "Synced 11:42")  # only the live clock ticked

    after = _window(mx)
    assert (after.occurred_at, after.content) == (THURSDAY, before.content)
    assert len(mx.history(after.id, user_id=USER)) == 2  # the insert and Thursday's change, no more
    (visit,) = [m for m in mx.list(user_id=USER, memory_types=["episodic"]) if friday in m.source_ids]
    assert visit.summary == "Viewed Calendar — Dentist again" and visit.occurred_at == FRIDAY


def test_a_changed_window_says_what_it_now_holds(mx):
    _look(mx, MONDAY, "Dentist at 15:00", "Synced 09:14")
    _look(mx, THURSDAY, "Dentist at 16:30", "Bring the insurance card", "Call to confirm", "Synced 10:20")
    window = _window(mx)
    assert "Bring the insurance card" in window.content
    assert window.summary != mx.history(window.id, user_id=USER)[0].after["summary"]  # not the first sighting's
