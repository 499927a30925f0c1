"""The synthetic desktop: deterministic, realistic sizes, facts that change over days, a truthful manifest."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from PIL import Image

from mirix_synth.screens import APPS, SCENES, ScreenSynth, find_font, load_manifest, write_session


def _digest(image: Image.Image) -> str:
    return hashlib.sha256(image.tobytes()).hexdigest()


def test_a_truetype_font_is_found():
    # Debian's fonts-dejavu-core (scripts/setup.sh installs it); text must be OCR-able
    assert find_font() is not None and find_font(mono=True) is not None


@pytest.mark.parametrize("scene", SCENES)
def test_every_scene_renders_at_1080p_with_its_planted_text(synth, scene):
    image = synth.frame(scene)
    assert image.size == (1920, 1080) and image.mode == "RGB"
    colours = image.resize((64, 36)).getcolors(64 * 36)
    assert colours is None or len(colours) > 8  # not a blank canvas
    day = synth.day_state(0)[scene]
    for fid in day["facts"]:
        assert synth.facts[fid].scene == scene


def test_same_seed_same_pixels_and_different_seed_different_world():
    a, b, c = ScreenSynth(seed=3), ScreenSynth(seed=3), ScreenSynth(seed=4)
    assert _digest(a.frame("email")) == _digest(b.frame("email"))
    assert [f.manifest_entry() for f in a.session(days=2)] == [f.manifest_entry() for f in b.session(days=2)]
    assert (a.world.user, a.world.project) != (c.world.user, c.world.project) or \
        _digest(a.frame("email")) != _digest(c.frame("email"))


def test_larger_screens_scale_the_layout():
    big = ScreenSynth(seed=3, size=(2560, 1440))
    image = big.frame("document")
    assert image.size == (2560, 1440)
    with pytest.raises(ValueError):
        ScreenSynth(size=(800, 600))


def test_facts_change_over_days(synth):
    synth.session(days=3)
    moved = [f for f in synth.facts.values() if f.supersedes]
    assert {f.scene for f in moved} >= {"calendar", "document"}
    for fact in moved:
        old = synth.facts[fact.supersedes]
        assert old.text != fact.text and old.day < fact.day
    # the day-0 calendar shows the old appointment, day 1 the new one
    d0 = " ".join(synth._frame("calendar", 0, synth.world.start, 0, (0, 0), dry=True)[1])
    d1 = " ".join(synth._frame("calendar", 1, synth.world.start + timedelta(days=1), 0, (0, 0), dry=True)[1])
    assert "15:00 Dentist" in d0 and "16:30 Dentist" in d1 and "15:00 Dentist" not in d1


def test_session_manifest_describes_each_frame(synth):
    frames = synth.session(days=2)
    assert len({f.scene for f in frames}) == len(SCENES)
    times = [f.captured_at for f in frames]
    assert times == sorted(times)
    gaps = [(b.captured_at - a.captured_at).total_seconds() for a, b in zip(frames, frames[1:])
            if a.scene == b.scene and b.change != "new_window"]
    assert gaps and min(gaps) >= 1.5 and max(gaps) <= 3.0  # MIRIX's capture interval
    for f in frames:
        assert f.app == APPS[f.scene]
        if f.expect_duplicate:
            assert f.duplicate_of is not None and frames[f.duplicate_of].window_title == f.window_title
        for fid in f.facts:
            assert synth.facts[fid].text in " ".join(f.lines)
    assert any(f.expect_duplicate for f in frames) and any(f.change == "content" for f in frames)
    first_seen = {}
    for f in frames:
        for fid in f.new_facts:
            first_seen.setdefault((f.day, fid), f.index)
    assert first_seen  # every planted fact has the frame where it first appears


def test_write_session_writes_pngs_metadata_and_manifest(tmp_path, synth):
    frames = synth.session(days=1, dwell=(2, 2))[:4]
    path = write_session(frames, tmp_path, synth=synth)
    manifest = load_manifest(path)
    assert len(manifest["frames"]) == 4 and manifest["seed"] == 7
    entry = manifest["frames"][0]
    with Image.open(tmp_path / entry["file"]) as png:
        assert png.format == "PNG" and png.size == (1920, 1080)
        assert png.info["mirix:app"] == entry["app"]
        assert png.info["mirix:captured_at"] == entry["captured_at"]
    assert entry["file"].startswith("screenshot_") and "T" in entry["file"]
    assert json.loads(path.read_text())["facts"]


def test_every_planted_fact_carries_its_values_as_drawn(synth):
    frames = synth.session(days=3)
    for fact in synth.facts.values():
        assert fact.values, fact.id
        screens = [" ".join(f.lines) for f in frames if fact.id in f.facts]
        assert screens, fact.id
        for name, value in fact.values.items():
            if fact.scene == "calendar" and name == "weekday":
                continue  # the calendar draws it as a column head ("Tue 4 Jun")
            assert all(value in screen for screen in screens), (fact.id, name, value)
    launch = sorted((f for f in synth.facts.values() if f.id.startswith("doc-launch-")), key=lambda f: f.day)
    assert [(f.value("weekday"), f.value("date")) for f in launch] == [("Friday", "14 June"), ("Friday", "21 June")]
    assert [f.value("time") for f in synth.facts.values() if f.id.startswith("cal-dentist-")] == ["15:00", "16:30"]
    assert synth.facts["mail-phone"].value("phone") == synth.facts["mail-phone"].secret
    with pytest.raises(KeyError, match="mail-phone.*no value 'fax'"):
        synth.facts["mail-phone"].value("fax")


def test_frames_list_the_events_and_senders_they_draw(synth):
    frames = synth.session(days=2)
    calendar = [f for f in frames if f.scene == "calendar"]
    email = [f for f in frames if f.scene == "email"]
    assert calendar and email
    for f in calendar:
        events = [i for i in f.items if i["kind"] == "event"]
        assert len(events) == 6  # five meetings and the dentist, Monday to Friday
        for event in events:
            assert f"{event['time']} {event['shown']}" in f.lines and event["title"].startswith(event["shown"])
    boss = synth.world.colleagues[0][0]
    assert any(i["title"] == f"1:1 with {boss}" for f in calendar for i in f.items)
    for f in email:
        senders = [i for i in f.items if i["kind"] == "sender"]
        assert senders
        for sender in senders:
            assert f"From: {sender['name']} <{sender['email']}>" in f.lines
    assert all(not f.items for f in frames if f.scene not in ("calendar", "email"))
