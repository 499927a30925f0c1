"""Erasing a screenshot's turn (`delete(..., erase=True)`) removes its kept thumbnail with its text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from mirix_synth.screens import text_window

USER = "ada"
T = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=1)  # inside the thumbnails' retention


@pytest.fixture
def mx(thumbnails_engine):
    return thumbnails_engine


def test_erasing_a_frame_turn_removes_its_thumbnail_and_window_title(mx, tmp_path):
    shot = mx.add_screenshot(text_window("Ferry to Quixhaven leaves at nine"), user_id=USER, captured_at=T,
                             app="Maps", window_title="Quixhaven harbour")
    frame = shot.input_ids[0]
    kept = mx.screenshot_thumbnail(frame, user_id=USER)
    assert kept is not None and kept.is_file()
    made = mx.store.made_from(USER, [frame], ["episodic"])[frame]

    mx.delete(made[0], user_id=USER, erase=True)

    assert not kept.exists() and mx.screenshot_thumbnail(frame, user_id=USER) is None
    record = mx.inputs.get(frame)
    assert record is not None and record.metadata == {"erased": "true"} and record.messages == []
    assert "Quixhaven" not in str([g.model_dump() for g in mx.screen_activity(user_id=USER)])


def test_erasing_the_middle_frame_of_a_window_erases_its_input_though_the_windows_resource_cites_it(mx):
    """The window's resource cites every frame and stays: the erased frame's input kept its text's
    digest, window title and thumbnail (which shows the text) while it was counted as citing it."""
    texts = ["Ferry timetable harbour departures nine", "Invoice Zorblatt Quixhaven account 88213 due",
             "Weather sunny tomorrow harbour"]
    frames = [mx.add_screenshot(text_window(t), user_id=USER, captured_at=T + timedelta(minutes=i), app="Notes",
                                window_title="Harbour notes").input_ids[0] for i, t in enumerate(texts)]
    (resource,) = mx.list(user_id=USER, memory_types=["resource"])
    assert set(frames) <= set(resource.source_ids)
    kept = mx.screenshot_thumbnail(frames[1], user_id=USER)
    assert kept is not None and kept.is_file()
    (episode,) = mx.store.made_from(USER, [frames[1]], ["episodic"])[frames[1]]

    mx.delete(episode, user_id=USER, erase=True)

    assert not kept.exists() and mx.screenshot_thumbnail(frames[1], user_id=USER) is None
    record = mx.inputs.get(frames[1])
    assert record is not None and record.metadata == {"erased": "true"} and record.messages == []
    assert mx.get(resource.id, user_id=USER) is not None
    for other in (frames[0], frames[2]):  # the frames whose turns stay keep theirs
        assert mx.inputs.get(other).metadata["window_title"] == "Harbour notes"


def test_erasing_the_first_frame_of_a_window_takes_its_text_out_of_the_resource_a_later_frame_updated(mx):
    """The window's resource was made from the erased frame and updated in place by the next one: its
    history kept the erased frame's text as its first state, which an undo of the later frame put back."""
    texts = ["Invoice Zorblatt Quixhaven account 88213 due", "Weather sunny tomorrow harbour"]
    frames = [mx.add_screenshot(text_window(t), user_id=USER, captured_at=T + timedelta(minutes=i), app="Notes",
                                window_title="Harbour notes").input_ids[0] for i, t in enumerate(texts)]
    (resource,) = mx.list(user_id=USER, memory_types=["resource"])
    assert [e.operation.value for e in mx.history(resource.id, user_id=USER)] == ["insert", "update"]
    (episode,) = mx.store.made_from(USER, [frames[0]], ["episodic"])[frames[0]]

    mx.delete(episode, user_id=USER, erase=True)

    events = mx.history(resource.id, user_id=USER)
    assert [(e.operation.value, e.erased) for e in events] == [("insert", True), ("update", True)]
    assert "Weather" in mx.get(resource.id, user_id=USER).content
    with mx.engine.connect() as conn:
        history = repr(conn.execute(text("SELECT * FROM memory_history")).all())
    assert "zorblatt" not in history.lower() and "88213" not in history
    mx.undo(frames[1], user_id=USER)  # before the later frame, the resource held only the erased one's text
    assert "Zorblatt" not in str([m.model_dump() for m in mx.list(user_id=USER)])
