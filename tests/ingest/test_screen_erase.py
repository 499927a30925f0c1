"""Erasing a screenshot's turn (`delete(..., erase=True)`) removes its kept thumbnail with its text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mirix_synth.screens import text_window
from mirix_py.engine import Mirix

USER = "ada"
T = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=1)  # inside the thumbnails' retention


@pytest.fixture
def mx(tmp_path, tesseract):
    engine = Mirix(tmp_path / "data", embedder=None)
    engine.configure_screenshots(workers=0, keep_thumbnails=True)
    yield engine
    engine.close()


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
