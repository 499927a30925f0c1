"""`Mirix.screen_activity` on frames read by the real OCR: grouped by app and window, split after a
gap, with the text read (the input log's while kept, else the memories') and the kept thumbnails."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from mirix_synth.screens import text_window
from mirix_py.errors import InvalidInput
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.ingest.screenshots import user_thumbnail_dir
from mirix_py.screens.activity import SCREEN_GAP

USER = "ada"
T = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=1)  # inside the thumbnails' retention




@pytest.fixture
def mx(thumbnails_engine):
    return thumbnails_engine


def shot(mx, at: timedelta, app: str, window: str, *lines: str, wait: bool = True) -> str:
    result = mx.add_screenshot(text_window(*lines), user_id=USER, captured_at=T + at, app=app, window_title=window,
                               wait=wait)
    assert result.frame.status in ("processed", "pending"), result.frame
    return result.input_ids[0]


def test_frames_group_by_window_and_gap_with_the_text_their_memories_hold(mx):
    s = timedelta(seconds=1)
    f1 = shot(mx, 0 * s, "Firefox", "Trip notes", "Ferry to Bergen leaves at nine")
    f2 = shot(mx, 30 * s, "Firefox", "Trip notes", "Ferry to Bergen leaves at nine", "Hotel Bryggen for two nights")
    f3 = shot(mx, 60 * s, "Writer", "Invoices", "Invoice for the garden shed")
    f4 = shot(mx, 60 * s + SCREEN_GAP + 60 * s, "Writer", "Invoices", "Reminder to the roofing company")

    groups = mx.screen_activity(user_id=USER)
    assert [(g.app, g.window_title, g.input_ids) for g in groups] == [
        ("Writer", "Invoices", [f4]), ("Writer", "Invoices", [f3]), ("Firefox", "Trip notes", [f1, f2])]
    trip = groups[-1]
    assert (trip.frames, trip.first_at, trip.last_at) == (2, T, T + 30 * s)
    assert mx.inputs.get(f1).messages == []  # processed frames' text is compacted in the log ...
    assert trip.text_from == ["memories"]  # ... so what was read comes from the memories they made
    assert "Ferry to Bergen" in trip.text and "Hotel Bryggen" in trip.text and "Invoice" not in trip.text
    assert trip.thumbnail_ids == [f1, f2]
    for memory_id in trip.memory_ids:
        memory = mx.get(memory_id, user_id=USER)
        assert memory.memory_type.value in ("episodic", "resource") and {f1, f2} & set(memory.source_ids)
    later, earlier = groups[0], groups[1]
    assert "roofing" in later.text and "shed" not in later.text  # each visit its own words
    assert "shed" in earlier.text and "roofing" not in earlier.text

    # bounds and limits
    assert [g.input_ids for g in mx.screen_activity(user_id=USER, since=T + 45 * s)] == [[f4], [f3]]
    assert [g.input_ids for g in mx.screen_activity(user_id=USER, until=(T + 45 * s).isoformat())] == [[f1, f2]]
    assert [g.input_ids for g in mx.screen_activity(user_id=USER, limit=1)] == [[f4]]
    assert mx.screen_activity(user_id="someone-else") == []

    # thumbnails that expired are no longer offered
    for f in user_thumbnail_dir(mx.settings.data_dir / "thumbnails", USER).rglob("*.webp"):
        f.unlink()
    assert all(g.thumbnail_ids == [] for g in mx.screen_activity(user_id=USER))


def test_pending_and_kept_frames_show_their_own_text_with_secrets_masked(mx, synth):
    # an OCR worker logs a queued frame's text as soon as it is read; its batch waits (an hour, 100 frames)
    mx.configure_screenshots(workers=1, batch=BatchPolicy(max_frames=100, max_seconds=3600))
    pending = shot(mx, timedelta(0), "Firefox", "Trip notes", "Ferry to Bergen leaves at nine", wait=False)
    deadline = time.monotonic() + 60
    while mx.inputs.get(pending) is None:  # until the worker has logged it
        assert time.monotonic() < deadline, "the queued frame was never logged"
        time.sleep(0.05)
    [group] = mx.screen_activity(user_id=USER)
    assert (group.input_ids, group.text_from, group.memory_ids) == ([pending], ["input_log"], [])
    assert "Ferry to Bergen" in group.text
    mx.flush()
    [group] = mx.screen_activity(user_id=USER)
    assert group.text_from == ["memories"] and group.memory_ids and "Ferry to Bergen" in group.text

    mx.configure_screenshots(workers=0, keep_ocr_text=True)
    editor = mx.add_screenshot(synth.frame("editor"), user_id=USER, captured_at=T + timedelta(minutes=1),
                               app="Code", window_title="deploy.py")
    assert "sk_live_" in mx.inputs.get(editor.input_ids[0]).messages[0].content  # kept raw, encrypted
    group = mx.screen_activity(user_id=USER)[0]
    assert group.input_ids == editor.input_ids and group.text_from == ["input_log"]
    assert "sk_live_" not in group.text and "[redacted:" in group.text  # shown through the vault rules


@pytest.mark.parametrize("kwargs", [
    {"limit": 0}, {"limit": 501}, {"limit": True}, {"since": "2026-03-02T09:00:00"},  # no zone
    {"since": "yesterday"}, {"since": T, "until": T}, {"user_id": " "},
])
def test_bad_arguments_are_refused(mx, kwargs):
    with pytest.raises(InvalidInput):
        mx.screen_activity(**{"user_id": USER, **kwargs})
