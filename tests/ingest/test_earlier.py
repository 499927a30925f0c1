"""A folder ingested again: files the user's input log holds are not read again (`ingest.earlier`), on
SQLite and PostgreSQL, and frames an earlier run left unfinished are taken up from the log, not lost."""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys

import pytest
from PIL import PngImagePlugin

from mirix_py.engine import Mirix
from mirix_py.ingest.screenshots import ScreenshotConfig, ScreenshotIngestor
from mirix_py.records import InputKind, InputStatus
from mirix_py.screens.engine_methods import EngineScreenshotHost
from mirix_py.store.inputs import HOST
from mirix_synth.screens import text_window, write_session

USER = "ada"


def _engine(data, backend) -> Mirix:
    engine = Mirix(data, embedder=None, database_url=backend)
    engine.configure_screenshots(workers=1)
    return engine


def _ingest(data, backend, folder):
    with _engine(data, backend) as engine:
        return engine.ingest_screenshots(folder, user_id=USER)


def _logged(data, backend) -> collections.Counter:
    """How many screenshot inputs the log holds per file."""
    with Mirix(data, embedder=None, database_url=backend, resume=False) as engine:
        return collections.Counter(r.source_id for r in engine.inputs.by_kind(InputKind.screenshot, user_id=USER,
                                                                                limit=1000))


def _episodes(data, backend) -> list[str]:
    """The user's episodes, each store's vault ids left out."""
    with Mirix(data, embedder=None, database_url=backend, resume=False) as engine:
        return sorted(re.sub(r"\[vault:kv_\w+\]", "[vault]", m.search_text())
                      for m in engine.list(user_id=USER, memory_types=["episodic"], limit=500))


@pytest.fixture
def session(tmp_path, synth):
    """A session's files, in capture order; it is cut inside a window's visit whose next frame repeats it."""
    frames = synth.session(days=1, dwell=(3, 3), scenes=["chat", "editor", "calendar"])
    write_session(frames, tmp_path / "all", synth=synth)
    files = sorted((tmp_path / "all").glob("*.png"))
    cut = next(i for i, f in enumerate(frames) if i and f.change in ("none", "pointer"))
    return files, cut


def test_a_folder_that_grew_reads_only_its_new_files_as_one_run_would(tmp_path, backend, tesseract, session):
    files, cut = session
    folder = tmp_path / "shots"
    folder.mkdir()
    for path in files[:cut]:
        shutil.copy(path, folder)
    first = _ingest(tmp_path / "data", backend, folder)
    for path in files[cut:]:  # the folder grew; the engine was closed and opened again
        shutil.copy(path, folder)
    second = _ingest(tmp_path / "data", backend, folder)
    assert set(_logged(tmp_path / "data", backend).values()) == {1}  # no file logged twice

    read_before = {o.name for o in first.outcomes if o.status == "processed"}
    assert read_before and second.ingested == len(read_before) and second.frames == len(files)
    assert {o.name for o in second.outcomes if o.status == "ingested"} == read_before
    # the new files were read, or skipped as repeats, exactly as one run over the whole folder does them
    one_run = _ingest(tmp_path / "one", None, tmp_path / "all")  # its own store (SQLite) holds nothing before
    one = {o.name: o.status for o in one_run.outcomes}
    assert {o.name: o.status for o in second.outcomes if o.name not in read_before} == {
        name: status for name, status in one.items() if name not in read_before}
    assert one[files[cut].name] == "duplicate"  # the first new file repeats the last one of the first run
    assert _episodes(tmp_path / "data", backend) == _episodes(tmp_path / "one", None)

    again = _ingest(tmp_path / "data", backend, folder)
    assert again.processed == again.unique == 0 and again.ocr_seconds == 0
    assert again.ingested == len(_logged(tmp_path / "data", backend))
    assert again.to_dict()["ingested"] == again.ingested


def _shot(path, when: str) -> None:
    info = PngImagePlugin.PngInfo()
    info.add_text("mirix:captured_at", when)
    text_window("Dentist moved to Thursday 16:30").save(path, pnginfo=info)


def test_a_file_is_known_by_its_name_and_capture_time_for_its_user(tmp_path, backend, tesseract):
    folder = tmp_path / "shots"
    folder.mkdir()
    _shot(folder / "shot.png", "2024-06-03T16:10:00+02:00")
    assert _ingest(tmp_path / "data", backend, folder).processed == 1
    same = _ingest(tmp_path / "data", backend, folder)
    assert same.processed == 0 and same.ingested == 1
    with _engine(tmp_path / "data", backend) as engine:
        other_user = engine.ingest_screenshots(folder, user_id="bob")
    assert (other_user.ingested, other_user.processed) == (0, 1)
    _shot(folder / "shot.png", "2024-06-03T17:10:00+02:00")  # the name taken again by a later capture
    later = _ingest(tmp_path / "data", backend, folder)
    assert (later.ingested, later.processed) == (0, 1)


def _failing_run(engine: Mirix, paths, *, failed: bool) -> list[str]:
    """Frames logged by a run whose managers failed: marked failed, or left pending in the log."""
    def fail(records, frames):
        raise RuntimeError("managers down")

    host = EngineScreenshotHost(engine)
    host.queue_again = lambda records: False
    if not failed:  # as a process that stopped before its batch ran: its inputs wait in the log
        host.mark_failed = lambda ids, error: engine.inputs.release(ids, engine.worker_id)
    ingestor = ScreenshotIngestor(host, ScreenshotConfig(workers=1, dedup=False), process=fail)
    try:
        report = ingestor.ingest_paths(paths, user_id=USER)
    finally:
        ingestor.close()
    return [o.input_id for o in report.outcomes]


def _dead_worker() -> str:
    """A worker id of this host whose process has exited."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return f"{HOST}:{int(child.stdout)}:dead0000"


def test_frames_an_earlier_run_left_unfinished_are_taken_up_from_the_log_not_read_again(tmp_path, backend, tesseract):
    folder = tmp_path / "shots"
    folder.mkdir()
    texts = ["Invoice 4417 is due on Friday", "Parking spot P3-17 this week", "Standup moved to 9:45 tomorrow",
             "Lisbon flight booking QX7734"]
    for i, text in enumerate(texts):
        text_window(text, width=1100).save(folder / f"Screenshot_2024060{i + 1}-101500.png")
    paths = sorted(folder.glob("*.png"))
    with _engine(tmp_path / "data", backend) as engine:
        failed_id, stale_id, left_id, held_id = (_failing_run(engine, [paths[0]], failed=True)
                                                 + _failing_run(engine, paths[1:], failed=False))
        engine.inputs.claim(_dead_worker(), input_ids=[stale_id])  # a process killed while its batch ran
        engine.inputs.claim(f"{HOST}:{os.getpid()}:busy0000", input_ids=[held_id])  # a worker still at it
        report = engine.ingest_screenshots(folder, user_id=USER)
        logged = collections.Counter(r.source_id for r in engine.inputs.by_kind(InputKind.screenshot, user_id=USER))
        assert logged == {path.name: 1 for path in paths}  # none read and logged again

        by_name = {o.name: o for o in report.outcomes}
        for path, input_id in zip(paths[:3], (failed_id, stale_id, left_id)):
            outcome = by_name[path.name]
            assert (outcome.status, outcome.input_id, outcome.resumed) == ("processed", input_id, True)
            assert engine.inputs.get(input_id).status is InputStatus.processed
        held = by_name[paths[3].name]  # its worker finishes it
        assert (held.status, held.input_id, held.resumed) == ("ingested", held_id, False)
        assert engine.inputs.get(held_id).status is InputStatus.processing
        assert (report.resumed, report.ingested) == (3, 1)
        assert report.unique == 0 and report.ocr_seconds == 0  # nothing read again
        made = {s for m in engine.list(user_id=USER, memory_types=["episodic"], limit=100) for s in m.source_ids}
        assert {failed_id, stale_id, left_id} <= made and held_id not in made
