"""Screenshots through the whole engine: real Tesseract, real store, the synthetic desktop's planted facts."""

from __future__ import annotations

import re
import io
import json
import time
from datetime import datetime, timedelta, timezone

import pytest
from PIL import Image

from mirix_py.engine import Mirix
from waiting import wait_for
from mirix_py.errors import InvalidInput
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.ingest.ocr import OcrConfig, TesseractMissing
from mirix_py.ingest.screenshots import (
    ProcessedFrame, ScreenshotConfig, ScreenshotIngestor, ScreenshotResult, frames_to_records,
)
from mirix_synth.screens import ScreenSynth, write_session
from mirix_py.screens.engine_methods import EngineScreenshotHost
from mirix_py.records import InputKind, InputStatus, KnowledgeVaultMemory, MemoryType
from mirix_py.secrets.redaction import scrub

USER = "ada"


@pytest.fixture(scope="module")
def desktop(tmp_path_factory, embedder, tesseract):
    """Two simulated days written to disk and ingested once: the facts the tests check."""
    root = tmp_path_factory.mktemp("desktop")
    synth = ScreenSynth(seed=11)
    frames = synth.session(days=2, dwell=(2, 4))
    write_session(frames, root / "shots", synth=synth)
    mx = Mirix(root / "data", embedder=embedder)
    report = mx.ingest_screenshots(root / "shots", user_id=USER)
    yield mx, report, frames, synth, root
    mx.close()


def _first_frame(frames, fact_id):
    return next(f for f in frames if fact_id in f.facts and f.change in ("new_window", "content"))


def test_the_run_reads_unique_frames_and_skips_the_repeats(desktop):
    mx, report, frames, synth, _ = desktop
    assert report.frames == len(frames) and report.invalid == report.failed == 0
    by_name = {o.name: o for o in report.outcomes}
    files = sorted(p.name for p in (desktop[4] / "shots").glob("*.png"))
    manifest = json.loads((desktop[4] / "shots" / "manifest.json").read_text())["frames"]
    assert sorted(e["file"] for e in manifest) == files
    for entry in manifest:
        outcome = by_name[entry["file"]]
        if entry["expect_duplicate"]:
            assert outcome.status == "duplicate", entry
        elif entry["day"] == 0:
            assert outcome.status == "processed", entry
        assert outcome.captured_at == datetime.fromisoformat(entry["captured_at"])
    assert report.duplicates >= sum(e["expect_duplicate"] for e in manifest) > 0
    assert report.batches >= len({f.app for f in frames})  # grouped by app
    assert report.png_bytes == sum((desktop[4] / "shots" / f).stat().st_size for f in files)
    assert 0 < report.stored_bytes < report.png_bytes * 0.01  # text, not images


def test_each_processed_frame_is_in_the_input_log_with_its_time_and_window(desktop):
    mx, report, *_ = desktop
    processed = [o for o in report.outcomes if o.status == "processed"]
    assert processed
    for outcome in processed[:5]:
        record = mx.input_status(outcome.input_id)
        assert record.kind is InputKind.screenshot and record.status is InputStatus.processed
        assert record.occurred_at == outcome.captured_at and record.source_id == outcome.name
        assert record.metadata["app"] == outcome.app and record.metadata["window_title"] == outcome.window_title
        # processed: the text lives on in the memories; the entry keeps its provenance and a hash
        assert record.messages == [] and len(record.metadata["text_sha256"]) == 32
        assert int(record.metadata["text_chars"]) > 50
        assert any(outcome.input_id in m.source_ids for m in mx.list(user_id=USER, memory_types=["episodic"],
                                                                      start=outcome.captured_at, limit=500))


def test_the_input_log_keeps_the_text_until_processed_or_when_asked(tmp_path, embedder, tesseract, synth):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    try:
        def fail(records, frames):
            raise RuntimeError("managers down")

        host = EngineScreenshotHost(engine)
        host.queue_again = lambda records: False  # as when the engine is closing: the frame is marked failed
        failing = ScreenshotIngestor(host, ScreenshotConfig(workers=1), process=fail)
        result = failing.add(synth.frame("chat"), user_id=USER, captured_at=None, app="Slack")
        failing.close()
        assert result.status is InputStatus.failed and result.frame.status == "failed"
        record = engine.inputs.get(result.input_ids[0])
        assert record.status is InputStatus.failed and scrub(record.messages[0].content) == result.text.strip()
        engine.configure_screenshots(workers=1, keep_ocr_text=True)
        kept = engine.add_screenshot(synth.frame("editor"), user_id=USER, captured_at=None, app="Code")
        record = engine.inputs.get(kept.input_ids[0])
        # the log keeps the raw text (encrypted); the caller gets it with the secrets as placeholders
        assert record.status is InputStatus.processed and scrub(record.messages[0].content) == kept.text.strip()
        assert "sk_live_" in record.messages[0].content and "sk_live_" not in kept.text
        # a retry of the failed frame works from its logged text
        (retried,) = engine.retry_failed(user_id=USER)
        assert retried.status is InputStatus.processed
    finally:
        engine.close()


def test_a_batch_that_raises_is_tried_again_in_the_background_from_its_logged_text(tmp_path, embedder, tesseract,
                                                                                    synth):
    """The database failing under a batch, say: the frame is reported pending with the error, and the
    engine's background worker makes its memories from the logged OCR text, without a `retry_failed`."""
    with Mirix(tmp_path / "data", embedder=embedder) as engine:
        def fail(records, frames):
            raise RuntimeError("managers down")

        failing = ScreenshotIngestor(EngineScreenshotHost(engine), ScreenshotConfig(workers=1), process=fail)
        result = failing.add(synth.frame("chat"), user_id=USER, captured_at=None, app="Slack")
        failing.close()
        assert result.status is InputStatus.pending and "managers down" in (result.error or "")
        assert result.frame.status == "pending" and result.frame.input_id == result.input_ids[0]
        engine.flush(timeout=120)
        record = engine.inputs.get(result.input_ids[0])
        assert record.status is InputStatus.processed and record.kind is InputKind.screenshot
        made = [m for m in engine.list(user_id=USER, memory_types=["episodic"]) if record.id in m.source_ids]
        assert made and engine.inputs.by_status(InputStatus.failed, user_id=USER) == []


def test_a_frame_whose_text_could_not_be_logged_is_logged_again_with_its_batch(tmp_path, embedder, tesseract, synth,
                                                                              monkeypatch):
    """The log write after OCR fails (the database away for a moment): the frame does not count as logged,
    so its batch writes it again, and its memories cite an input the log holds."""
    from sqlalchemy.exc import OperationalError

    with Mirix(tmp_path / "data", embedder=embedder) as engine:
        engine.configure_screenshots(workers=1)
        append, calls = engine.inputs.append, {"n": 0}

        def flaky(records, **kwargs):
            calls["n"] += 1
            if calls["n"] == 1:
                raise OperationalError("INSERT", {}, ConnectionRefusedError("the database restarted"))
            return append(records, **kwargs)

        monkeypatch.setattr(engine.inputs, "append", flaky)
        queued = engine.add_screenshot(synth.frame("chat"), user_id=USER, captured_at=None, app="Slack", wait=False)
        wait_for(lambda: calls["n"] == 1, 60.0)  # its OCR is done and the write after it failed
        engine.flush(timeout=120)
        (input_id,) = queued.input_ids
        assert calls["n"] == 2 and engine.inputs.get(input_id).status is InputStatus.processed
        assert any(input_id in m.source_ids for m in engine.list(user_id=USER, memory_types=["episodic"]))


def test_an_email_address_on_screen_lands_in_the_vault_at_the_frames_time(desktop):
    mx, _, frames, synth, _ = desktop
    fact = synth.facts["mail-address"]
    frame = _first_frame(frames, fact.id)
    vault = [m for m in mx.list(user_id=USER, memory_types=["knowledge_vault"], limit=100)]
    revealed = {mx.get(m.id, user_id=USER, reveal=True).secret_value: m for m in vault}
    assert fact.secret in revealed
    entry = revealed[fact.secret]
    assert isinstance(entry, KnowledgeVaultMemory) and entry.entry_type == "email" and entry.occurred_at == frame.captured_at
    # seen on many frames and both days: stored once
    assert sum(1 for m in vault if mx.get(m.id, user_id=USER, reveal=True).secret_value == fact.secret) == 1
    phone = synth.facts["mail-phone"]
    assert phone.secret in revealed and revealed[phone.secret].entry_type == "phone"
    # never in plain text anywhere else
    for memory in mx.list(user_id=USER, memory_types=["episodic", "resource", "semantic"], limit=500):
        assert fact.secret not in memory.search_text()


def test_a_password_that_arrives_in_chat_is_a_vault_secret(desktop):
    mx, _, frames, synth, _ = desktop
    fact = synth.facts["chat-password"]
    frame = _first_frame(frames, fact.id)
    secrets = {mx.get(m.id, user_id=USER, reveal=True).secret_value: m
               for m in mx.list(user_id=USER, memory_types=["knowledge_vault"], limit=100)}
    assert fact.secret in secrets and secrets[fact.secret].entry_type == "password"
    assert secrets[fact.secret].occurred_at == frame.captured_at


@pytest.mark.parametrize("fact_id", ["doc-project", "mail-works"])
def test_statements_about_named_things_become_semantic_memories(desktop, fact_id):
    mx, _, frames, synth, _ = desktop
    fact = synth.facts[fact_id]
    hits = mx.search(fact.query, user_id=USER, memory_types=["semantic"], limit=5)
    names = {h.memory.name: h.memory for h in hits}
    assert fact.needle in names, (fact.needle, list(names))
    assert names[fact.needle].occurred_at == _first_frame(frames, fact_id).captured_at


def test_the_days_article_becomes_a_semantic_memory(desktop):
    mx, _, frames, synth, _ = desktop
    for day in (0, 1):
        fact = next(synth.facts[f] for f in synth.day_state(day)["browser"]["facts"])
        hits = mx.search(fact.query, user_id=USER, memory_types=["semantic"], limit=3)
        assert hits and hits[0].memory.name == fact.needle and fact.text.rstrip(".") in hits[0].memory.summary


def test_a_calendar_entry_is_found_by_search_in_the_time_it_was_on_screen(desktop):
    mx, _, frames, synth, _ = desktop
    for fact_id in ("cal-dentist-0604", "cal-dentist-0606"):  # the appointment, then moved on day 1
        frame = _first_frame(frames, fact_id)
        when = frame.captured_at
        hits = mx.search("dentist appointment", user_id=USER, memory_types=["episodic"],
                         start=when - timedelta(seconds=1), end=when + timedelta(seconds=1))
        assert hits, fact_id
        memory = hits[0].memory
        assert memory.occurred_at == when and "Dentist appointment" in memory.search_text()
        assert synth.facts[fact_id].text.split()[0] in memory.search_text()  # 15:00, then 16:30
    # nothing about the dentist outside the calendar's frames
    day0 = _first_frame(frames, "cal-dentist-0604").captured_at
    quiet = mx.search("dentist appointment", user_id=USER, memory_types=["episodic"],
                      start=day0 - timedelta(hours=5), end=day0 - timedelta(hours=4))
    assert quiet == []


def test_the_terminal_session_becomes_a_script(desktop):
    mx, _, frames, synth, _ = desktop
    first = next(f for f in frames if f.scene == "terminal")
    commands = ["$ " + ln.split("$ ", 1)[1] for ln in first.lines if "$ " in ln]
    assert len(commands) >= 4  # ls, git log, git status, git pull, ...
    procedures = mx.list(user_id=USER, memory_types=["procedural"], limit=20)
    scripts = [p for p in procedures if p.entry_type == "script" and p.occurred_at == first.captured_at]
    assert scripts, [p.search_text() for p in procedures]
    assert scripts[0].steps[: len(commands)] == commands
    assert scripts[0].summary == f"Commands run in Terminal — {first.window_title}"


def test_each_window_is_one_resource_updated_in_place(desktop):
    mx, _, frames, *_ = desktop
    resources = mx.list(user_id=USER, memory_types=["resource"], limit=200)
    titles = [r.title for r in resources]
    assert len(titles) == len(set(titles))
    # a secret in a window title (an address in a mail client's) is a vault placeholder in the title
    titles = [re.sub(r"\[vault:[^\]]+\]", "[secret]", t) for t in titles]
    windows = {re.sub(r"\[(?:vault|redacted):[^\]]*\]", "[secret]", scrub(f"Screenshot of {f.app} — {f.window_title}"))
               for f in frames}
    assert set(titles) <= windows and len(titles) >= len(windows) - 2
    calendar = next(r for r in resources if r.title.startswith("Screenshot of Calendar"))
    history = mx.history(calendar.id, user_id=USER)
    assert [e.operation.value for e in history][:1] == ["insert"] and "16:30" in calendar.content


# ---------------------------------------------------------------- add_screenshot


@pytest.fixture
def mx(tmp_path, embedder, tesseract):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    engine.configure_screenshots(workers=2)
    yield engine
    engine.close()


def _count(engine, user=USER):
    return sum(engine.store.count(user_id=user).values())


def test_add_screenshot_waits_and_is_searchable_then_repeats_are_skipped(mx, synth):
    image = synth.frame("chat")
    when = datetime(2024, 6, 3, 10, 0, tzinfo=timezone.utc)
    first = mx.add_screenshot(image, user_id=USER, captured_at=when, app="Slack", window_title="#team")
    assert isinstance(first, ScreenshotResult) and first.status is InputStatus.processed
    assert first.frame.status == "processed" and first.input_ids == [first.frame.input_id]
    assert "standup notes" in first.text and {c.memory_type for c in first.changes} >= {MemoryType.episodic,
                                                                                       MemoryType.resource}
    hits = mx.search("standup notes", user_id=USER, memory_types=["episodic"])
    assert hits and hits[0].memory.occurred_at == when
    before = _count(mx)
    for k in (1, 2):
        again = mx.add_screenshot(image, user_id=USER, captured_at=when + timedelta(seconds=2 * k), app="Slack",
                                  window_title="#team")
        assert again.frame.status == "duplicate" and again.input_ids == [] and again.frame.similarity == 1.0
    assert _count(mx) == before
    totals = mx.screenshots.totals
    assert (totals.frames, totals.duplicates, totals.processed) == (3, 2, 1)
    # an in-memory frame is PNG-encoded once, when kept; its repeats count the same size
    assert first.frame.png_bytes > 10_000 and totals.png_bytes == 3 * first.frame.png_bytes
    assert 0 < totals.stored_share < 0.05


def test_paths_and_bytes_work_too(mx, synth, tmp_path):
    buf = io.BytesIO()
    synth.frame("document").save(buf, format="PNG")
    r = mx.add_screenshot(buf.getvalue(), user_id=USER, captured_at="2024-06-03T11:00:00+00:00", app="Writer")
    assert r.frame.status == "processed" and r.frame.png_bytes == len(buf.getvalue())
    path = tmp_path / "shot.jpg"
    synth.frame("browser").save(path, format="JPEG", quality=90)
    assert mx.add_screenshot(path, user_id=USER, captured_at=None, app="Firefox").frame.status == "processed"


BAD_INPUTS = {
    "corrupt": b"\x89PNG\r\n\x1a\n" + b"garbage" * 20,
    "empty": b"",
    "zero-size": Image.new("RGB", (0, 0)),
    "text": b"just some text",
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_images_raise_and_write_nothing(mx, case):
    before_inputs = len(mx.inputs.by_status(InputStatus.processed, user_id=USER))
    with pytest.raises(InvalidInput):
        mx.add_screenshot(BAD_INPUTS[case], user_id=USER, captured_at="2024-06-03T10:00:00+00:00")
    assert _count(mx) == 0 and len(mx.inputs.by_status(InputStatus.processed, user_id=USER)) == before_inputs


def test_absurd_truncated_and_unsupported_files_raise(mx, tmp_path):
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    huge = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 20000, 20000, 8, 2, 0, 0, 0)) + chunk(b"IEND", b"")
    buf = io.BytesIO()
    Image.effect_noise((800, 600), 50).convert("RGB").save(buf, format="PNG")
    truncated = buf.getvalue()[:20000]
    ico = io.BytesIO()
    Image.new("RGB", (32, 32)).save(ico, format="ICO")
    for data, reason in ((huge, "larger than any screen"), (truncated, "truncated"), (ico.getvalue(), "ICO")):
        with pytest.raises(InvalidInput, match=reason):
            mx.add_screenshot(data, user_id=USER, captured_at=None)
    with pytest.raises(InvalidInput, match="time zone"):
        mx.add_screenshot(Image.new("RGB", (64, 64)), user_id=USER, captured_at=datetime(2024, 6, 3))
    with pytest.raises(InvalidInput, match="user_id"):
        mx.add_screenshot(Image.new("RGB", (64, 64)), user_id="", captured_at=None)
    assert _count(mx) == 0


def test_metadata_no_backend_can_store_is_refused_before_the_frame_is_seen(mx, synth):
    """A NUL or a lone surrogate in the app, the window title, the source or the user is refused before
    the frame counts as seen: the same frame sent again with clean metadata is processed, not a repeat."""
    frame = synth.frame("email")
    bad = [({"app": "Mail\x00"}, "app holds a NUL"), ({"window_title": "Inbox \ud800"}, "window_title is not valid"),
           ({"source_id": "cam\x00"}, "source_id holds a NUL"), ({"user_id": "ada\x00"}, "user_id holds control")]
    for extra, match in bad:
        with pytest.raises(InvalidInput, match=match):
            mx.add_screenshot(frame, **{"user_id": USER, "captured_at": "2024-06-03T10:00:00+00:00", "app": "Mail",
                                        **extra})
    assert _count(mx) == 0
    r = mx.add_screenshot(frame, user_id=USER, captured_at="2024-06-03T10:00:00+00:00", app="Mail")
    assert r.frame.status == "processed"


def test_a_folder_with_bad_files_processes_the_rest(mx, synth, tmp_path):
    folder = tmp_path / "mixed"
    frames = synth.session(days=1, dwell=(1, 1), scenes=["email", "calendar"])
    write_session(frames, folder, synth=synth)
    (folder / "broken_2024-06-03T09-00-01Z.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    (folder / "empty.png").write_bytes(b"")
    (folder / "notes.jpg").write_bytes(b"hello")
    report = mx.ingest_screenshots(folder, user_id=USER)
    assert report.invalid == 3 and report.processed == 2
    assert {name for name, _ in report.errors} == {"broken_2024-06-03T09-00-01Z.png", "empty.png", "notes.jpg"}
    assert all(reason for _, reason in report.errors)
    assert mx.search("Dentist", user_id=USER, memory_types=["episodic"])


def test_tesseract_missing_names_the_package_and_writes_nothing(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("MIRIX_TESSERACT_CMD", str(tmp_path / "nowhere" / "tesseract"))
    with Mirix(tmp_path / "data", embedder=embedder) as engine:
        with pytest.raises(TesseractMissing, match="tesseract-ocr"):
            engine.add_screenshot(Image.new("RGB", (640, 480), "white"), user_id=USER, captured_at=None)
        with pytest.raises(TesseractMissing):
            engine.ingest_screenshots(tmp_path, user_id=USER)
        assert _count(engine) == 0 and engine.inputs.by_status(InputStatus.pending) == []


def test_wait_false_batches_by_app_and_flush_processes_them(tmp_path, embedder, tesseract, synth):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    engine.configure_screenshots(workers=2, batch=BatchPolicy(max_frames=2, max_seconds=300))
    t0 = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
    try:
        results = []
        for i, (scene, progress) in enumerate([("chat", 0), ("email", 0), ("chat", 1), ("terminal", 0)]):
            results.append(engine.add_screenshot(synth.frame(scene, 1, progress=progress), user_id=USER,
                                                 captured_at=t0 + timedelta(seconds=2 * i),
                                                 app=scene.title(), window_title=scene, wait=False))
        assert all(r.status is InputStatus.pending and r.input_ids for r in results)
        # the two chat frames filled a batch of 2: it is processed without a flush
        deadline = time.monotonic() + 60
        chat_ids = {results[0].input_ids[0], results[2].input_ids[0]}
        while time.monotonic() < deadline:
            records = [engine.inputs.get(i) for i in chat_ids]
            if all(r is not None and r.status is InputStatus.processed for r in records):
                break
            time.sleep(0.2)
        else:
            pytest.fail("the full chat batch was not processed")
        waiting = engine.inputs.get(results[1].input_ids[0])
        assert waiting is None or waiting.status is not InputStatus.processed
        if waiting is not None:  # logged, not yet processed: the text is there for a crash recovery
            assert waiting.messages and len(waiting.messages[0].content) > 20
        engine.flush()
        for r, i in zip(results, range(4)):
            record = engine.inputs.get(r.input_ids[0])
            assert record.status is InputStatus.processed and record.occurred_at == t0 + timedelta(seconds=2 * i)
        totals = engine.screenshots.totals
        assert totals.pending == 0 and totals.processed == 4 and totals.batches == 3
        assert engine.search("password", user_id=USER, memory_types=["knowledge_vault"])
    finally:
        engine.close()


def test_thumbnails_are_optional_small_and_expire(tmp_path, embedder, tesseract, synth):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    engine.configure_screenshots(workers=1, keep_thumbnails=True, thumbnail_retention=timedelta(days=1))
    try:
        now = datetime.now(timezone.utc)
        first = engine.add_screenshot(synth.frame("email"), user_id=USER, captured_at=now - timedelta(hours=12),
                                      app="Mail")
        record = engine.input_status(first.input_ids[0])
        thumb = engine.screenshots.thumbnail_path(record.metadata["thumbnail"])
        assert thumb.exists() and thumb.stat().st_size < 40_000
        with Image.open(thumb) as im:
            assert max(im.size) == 320
        second = engine.add_screenshot(synth.frame("calendar"), user_id=USER, captured_at=now, app="Calendar")
        newer = engine.screenshots.thumbnail_path(engine.input_status(second.input_ids[0]).metadata["thumbnail"])
        # a frame already older than the retention period gets no thumbnail at all
        stale = engine.add_screenshot(synth.frame("terminal"), user_id=USER, captured_at=now - timedelta(days=3),
                                      app="Terminal")
        assert "thumbnail" not in engine.input_status(stale.input_ids[0]).metadata
        # 18 hours later the first one has expired, the second not yet
        assert engine.screenshots.purge_thumbnails(now=now + timedelta(hours=18)) == 1
        assert not thumb.exists() and newer.exists()
        assert not list((tmp_path / "data").rglob("*.png"))  # raw frames are never written
        engine.delete_user(USER)
        assert not newer.exists()
    finally:
        engine.close()


@pytest.fixture
def aged_thumbnail(tmp_path, embedder, tesseract, synth):
    """(engine, input id, thumbnail path) of a frame taken 20 hours ago under a retention of a day."""
    engine = Mirix(tmp_path / "data", embedder=embedder)
    engine.configure_screenshots(workers=1, keep_thumbnails=True, thumbnail_retention=timedelta(days=1))
    try:
        shot = engine.add_screenshot(synth.frame("email"), user_id=USER,
                                     captured_at=datetime.now(timezone.utc) - timedelta(hours=20), app="Mail")
        thumb = engine.screenshot_thumbnail(shot.input_ids[0], user_id=USER)
        assert thumb is not None and thumb.exists()
        yield engine, shot.input_ids[0], thumb
    finally:
        engine.close()


def test_a_thumbnail_past_its_retention_is_not_served_nor_kept(aged_thumbnail):
    """Written thumbnails were purged only when another was written: one past its retention stayed
    on disk and was served."""
    engine, input_id, thumb = aged_thumbnail
    engine.configure_screenshots(thumbnail_retention=timedelta(hours=1))  # now past it, no other write
    assert engine.screenshot_thumbnail(input_id, user_id=USER) is None
    assert not thumb.exists()
    (group,) = engine.screen_activity(user_id=USER)
    assert group.thumbnail_ids == []


def test_the_idle_sweep_purges_thumbnails_past_their_retention(aged_thumbnail):
    engine, _, thumb = aged_thumbnail
    engine.configure_screenshots(thumbnail_retention=timedelta(hours=1))  # now past it
    engine._sweep()
    assert not thumb.exists()


@pytest.mark.parametrize("setting, says", [
    ({"keep_thumbnails": "false"}, "keep_thumbnails must be true or false"),
    ({"batch": None}, "batch must be a BatchPolicy"),
    ({"ocr": None}, "ocr must be an OcrConfig"),
    ({"vision_max_side": 0}, "vision_max_side must be at least 64"),
    ({"min_text_chars": -5}, "min_text_chars must be >= 0"),
])
def test_screenshot_settings_of_the_wrong_type_are_refused_when_set(mx, setting, says):
    before = mx.configure_screenshots()
    with pytest.raises(InvalidInput, match=says):
        mx.configure_screenshots(**setting)
    assert mx.configure_screenshots() == before


def test_without_thumbnails_no_image_is_stored(mx, synth, tmp_path):
    mx.add_screenshot(synth.frame("editor"), user_id=USER, captured_at=None, app="Code")
    data = tmp_path / "data"
    assert not list(data.rglob("*.png")) and not list(data.rglob("*.webp"))


def test_a_vision_engine_gets_downscaled_frames_with_their_records(tmp_path, embedder, tesseract, synth):
    seen = []

    def process(records, frames):
        seen.append(([r.kind for r in records], [(f.vision_image.size if f.vision_image else None) for f in frames],
                     [f.text[:20] for f in frames]))
        return engine.runner.process(records)

    engine = Mirix(tmp_path / "data", embedder=embedder)
    try:
        ingestor = ScreenshotIngestor(EngineScreenshotHost(engine), ScreenshotConfig(vision=True, workers=1),
                                      process=process)
        result = ingestor.add(synth.frame("browser"), user_id=USER, captured_at=None, app="Firefox")
        assert result.status is InputStatus.processed
        ((kinds, sizes, texts),) = seen
        assert kinds == [InputKind.screenshot] and sizes == [(1280, 720)] and texts[0]
        ingestor.close()
    finally:
        engine.close()


def _route_episodic(req):
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": ["episodic"]})]
    return [("insert_episodic", {"summary": "Read mail", "actor": "user"})]


@pytest.mark.parametrize("vision", [True, False])
def test_an_llm_engine_sends_frames_with_their_text_only_to_vision_models(tmp_path, embedder, tesseract, synth,
                                                                         vision):
    from autogen_core import Image as AGImage

    from mirix_py.llm.scripted import ScriptedChatCompletionClient

    client = ScriptedChatCompletionClient(_route_episodic, vision=vision)
    engine = Mirix(tmp_path / "data", embedder=embedder, model_client=client)
    try:
        engine.configure_screenshots(workers=1, vision_max_side=1024)
        assert engine.supports_vision is vision and engine.screenshots.vision is vision
        result = engine.add_screenshot(synth.frame("email"), user_id=USER, captured_at=None, app="Thunderbird")
        assert result.status is InputStatus.processed, result.error
        assert {r.agent for r in client.requests} == {"meta_memory_manager", "episodic_memory_manager"}
        line = next(ln for ln in result.text.splitlines() if len(ln) > 20 and "@" not in ln)
        for req in client.requests:
            parts = req.messages[-1].content
            parts = [parts] if isinstance(parts, str) else parts
            images = [p for p in parts if isinstance(p, AGImage)]
            # the OCR text goes along: beside the frames, or leading the system prompt without vision
            assert line in "\n".join([req.lead, *(p for p in parts if isinstance(p, str))])
            if vision:
                (image,) = images
                assert image.image.size == (1024, 576)
                # the sender's address went to the vault: redacted in the text, blacked out on the frame
                assert "[vault:" in parts[0] and image.image.convert("L").histogram()[0] > 50
            else:
                assert images == []
    finally:
        engine.close()


def test_frames_to_records_is_the_seam_for_the_llm_path():
    when = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
    from mirix_py.ingest.ocr import OcrBlock, OcrLine, OcrResult, OcrWord

    ocr = OcrResult(blocks=(OcrBlock((OcrLine((OcrWord("Hello", 95, (0, 0, 10, 10)),)),)),))
    frames = [ProcessedFrame(user_id=USER, captured_at=when, app="Slack", window_title="#team", name="a.png",
                             ocr=ocr, source_id="a.png", input_id="in_x"),
              ProcessedFrame(user_id=USER, captured_at=when, app=None, window_title=None, name="b.png")]
    (record,) = frames_to_records(frames, USER)
    assert record.kind is InputKind.screenshot and record.id == "in_x" and record.occurred_at == when
    assert record.metadata == {"app": "Slack", "window_title": "#team"} and record.messages[0].content == "Hello"
    assert record.source_id == "a.png"


def test_config_is_validated(mx):
    with pytest.raises(InvalidInput):
        mx.configure_screenshots(similarity_threshold=0)
    with pytest.raises(InvalidInput):
        mx.configure_screenshots(not_a_setting=1)
    with pytest.raises(InvalidInput):
        OcrConfig(lang="")


@pytest.mark.parametrize("user_id", ["", "..", "ada\x00", None])
def test_a_bad_user_id_is_the_calls_error_not_each_files(mx, synth, tmp_path, user_id):
    folder = tmp_path / "shots"
    write_session(synth.session(days=1, dwell=(1, 1), scenes=["email"]), folder, synth=synth)
    with pytest.raises(InvalidInput, match="user"):
        mx.ingest_screenshots(folder, user_id=user_id)
    assert _count(mx) == 0


def test_queued_frames_of_two_users_stay_each_users_when_apps_are_not_grouped(tmp_path, embedder, tesseract, synth):
    """`group_by_app=False` groups one screen's frames whatever the app: never two users' frames."""
    t0 = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
    with Mirix(tmp_path / "data", embedder=embedder) as engine:
        engine.configure_screenshots(workers=1, batch=BatchPolicy(max_frames=20, max_seconds=300, group_by_app=False))
        for i, (user, scene) in enumerate([("ada", "email"), ("bob", "terminal")]):
            engine.add_screenshot(synth.frame(scene, 1), user_id=user, captured_at=t0 + timedelta(seconds=i),
                                  app=scene.title(), window_title=scene, wait=False)
        engine.flush()
        for user, own, other in (("ada", "Email", "Terminal"), ("bob", "Terminal", "Email")):
            texts = " ".join(m.search_text() for m in engine.list(user_id=user))
            assert own in texts and other not in texts


def test_a_file_names_time_without_a_zone_is_read_in_the_zone_given_else_mirix_timezone_else_the_machines(
        tmp_path, tesseract, machine_zone, monkeypatch):
    """Each with the offset in force on the stamp's date: summer time for June, winter time for December."""
    from zoneinfo import ZoneInfo

    from mirix_synth.screens import text_window

    machine_zone("America/Los_Angeles")
    folder = tmp_path / "shots"
    folder.mkdir()
    stamps = {"Screenshot 2024-06-03 at 3.14.05 PM.png": datetime(2024, 6, 3, 15, 14, 5),
              "Screenshot_20241215-161000.png": datetime(2024, 12, 15, 16, 10)}
    for i, name in enumerate(stamps):
        text_window(f"Booking reference QX77{i}4 for the Lisbon flight", width=1300).save(folder / name)

    def read(data: str, **kwargs) -> dict:
        with Mirix(tmp_path / data, embedder=None) as engine:
            engine.configure_screenshots(workers=1)
            report = engine.ingest_screenshots(folder, user_id=USER, **kwargs)
        return {o.name: o.captured_at for o in report.outcomes}

    monkeypatch.setenv("MIRIX_TIMEZONE", "Europe/Berlin")
    runs = {"Asia/Tokyo": read("given", default_tz=ZoneInfo("Asia/Tokyo")), "Europe/Berlin": read("setting")}
    monkeypatch.delenv("MIRIX_TIMEZONE")
    runs["America/Los_Angeles"] = read("machine")
    for zone, times in runs.items():
        for name, naive in stamps.items():
            expected = naive.replace(tzinfo=ZoneInfo(zone))
            assert (times[name], times[name].utcoffset()) == (expected, expected.utcoffset()), (zone, name)
