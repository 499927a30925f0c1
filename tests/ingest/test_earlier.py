"""A folder ingested again: files the user's input log holds are not read again (`ingest.earlier`), on
SQLite and PostgreSQL, and frames an earlier run left unfinished are taken up from the log, not lost."""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest
from PIL import PngImagePlugin

from mirix_py.boundary.inputs import normalize_add
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


TEXTS = ["Invoice 4417 is due on Friday", "Parking spot P3-17 this week", "Standup moved to 9:45 tomorrow",
         "Lisbon flight booking QX7734", "Dentist moved to Thursday 16:30", "Call Maria about the lease renewal",
         "Budget review meeting on Monday", "Order 5521 shipped via DHL", "Gym class cancelled Wednesday",
         "Pay the electricity bill before the 20th"]


def _shots(folder, texts) -> list[str]:
    """One file per text, a minute apart, each its own app: their names, in capture order."""
    folder.mkdir()
    for i, words in enumerate(texts):
        info = PngImagePlugin.PngInfo()
        info.add_text("mirix:captured_at", f"2024-06-03T10:{i:02d}:00+00:00")
        info.add_text("mirix:app", f"App{i}")
        text_window(words, width=1100).save(folder / f"shot_{i:02d}.png", pnginfo=info)
    return [f"shot_{i:02d}.png" for i in range(len(texts))]


# a process of its own: opens the engine, waits until every run has opened its engine, ingests the folder
RUN = """
import json, pathlib, sys, time
from mirix_py.engine import Mirix
data, url, folder, ready, me, runs = sys.argv[1:]
with Mirix(data, embedder=None, database_url=url) as engine:
    engine.configure_screenshots(workers=1)
    pathlib.Path(ready, me).touch()
    deadline = time.monotonic() + 120
    while len(list(pathlib.Path(ready).iterdir())) < int(runs):
        assert time.monotonic() < deadline, "the other run never opened its engine"
        time.sleep(0.01)
    report = engine.ingest_screenshots(folder, user_id="ada")
print(json.dumps({o.name: o.status for o in report.outcomes}))
"""


def test_two_runs_over_one_folder_at_once_log_and_remember_each_file_once(tmp_path, pgvector_schema_url, tesseract):
    """Two processes (`mirix ingest-screenshots DIR` twice) on one PostgreSQL store with its vectors in it:
    an embedded store (SQLite or embedded Chroma) takes one writer process."""
    url = pgvector_schema_url
    names = _shots(tmp_path / "shots", TEXTS)
    (tmp_path / "ready").mkdir()
    runs = [subprocess.Popen([sys.executable, "-c", RUN, str(tmp_path / "data"), url, str(tmp_path / "shots"),
                              str(tmp_path / "ready"), str(n), "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path) for n in range(2)]
    try:
        finished = [run.communicate(timeout=300) for run in runs]
    finally:
        for run in runs:
            run.kill()
    assert [run.returncode for run in runs] == [0, 0], [err[-2000:] for _, err in finished]
    outcomes = [json.loads(out.strip().splitlines()[-1]) for out, _ in finished]
    # each file read and remembered by one run; the other found it logged
    assert {name: sorted(run[name] for run in outcomes) for name in names} == {
        name: ["ingested", "processed"] for name in names}
    assert _logged(tmp_path / "data", url) == {name: 1 for name in names}
    with Mirix(tmp_path / "data", embedder=None, database_url=url, resume=False) as engine:
        inputs = {r.id for r in engine.inputs.by_kind(InputKind.screenshot, user_id=USER)}
        episodes = engine.list(user_id=USER, memory_types=["episodic"], limit=100)
    made_from = collections.Counter(s for m in episodes for s in m.source_ids if s in inputs)
    assert made_from == {input_id: 1 for input_id in inputs}  # one episode per file


def test_a_file_another_run_logs_while_this_one_reads_it_is_not_logged_again(tmp_path, backend, tesseract):
    names = _shots(tmp_path / "shots", TEXTS[:2])
    with _engine(tmp_path / "data", backend) as engine:
        host = EngineScreenshotHost(engine)
        look_up = host.logged_frames
        other = normalize_add(TEXTS[0], user_id=USER, occurred_at=datetime(2024, 6, 3, 10, 0, tzinfo=timezone.utc),
                              source_id=names[0], kind="screenshot", max_chars=10_000)

        def looked_up_before_the_other_run_logged(user_id, files):
            found = look_up(user_id, files)
            engine.inputs.append([other], claimed_by=f"{HOST}:{os.getpid()}:other000")  # a live run reading it too
            return found

        host.logged_frames = looked_up_before_the_other_run_logged
        ingestor = ScreenshotIngestor(host, ScreenshotConfig(workers=1, dedup=False))
        try:
            report = ingestor.ingest_paths(sorted((tmp_path / "shots").glob("*.png")), user_id=USER)
        finally:
            ingestor.close()
    by_name = {o.name: o for o in report.outcomes}
    assert (by_name[names[0]].status, by_name[names[0]].input_id) == ("ingested", other.id)
    assert by_name[names[1]].status == "processed" and (report.ingested, report.processed) == (1, 1)
    assert _logged(tmp_path / "data", backend) == {name: 1 for name in names}


def _thumbnails(data) -> list[str]:
    """The thumbnail files under the data dir, as inputs name them."""
    root = data / "thumbnails"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.webp")) if root.exists() else []


def _named_thumbnails(engine: Mirix) -> list[str]:
    """The thumbnails the user's screenshot inputs name."""
    return sorted(r.metadata["thumbnail"] for r in engine.inputs.by_kind(InputKind.screenshot, user_id=USER)
                  if r.metadata.get("thumbnail"))


def test_the_thumbnail_of_a_file_another_run_logged_first_goes_at_once(tmp_path, backend, tesseract):
    names = _shots(tmp_path / "shots", TEXTS[:2])
    with _engine(tmp_path / "data", backend) as engine:
        host = EngineScreenshotHost(engine)
        look_up = host.logged_frames
        other = normalize_add(TEXTS[0], user_id=USER, occurred_at=datetime(2024, 6, 3, 10, 0, tzinfo=timezone.utc),
                              source_id=names[0], kind="screenshot", max_chars=10_000)

        def looked_up_before_the_other_run_logged(user_id, files):
            found = look_up(user_id, files)
            engine.inputs.append([other], claimed_by=f"{HOST}:{os.getpid()}:other000")  # a live run reading it too
            return found

        host.logged_frames = looked_up_before_the_other_run_logged
        ingestor = ScreenshotIngestor(host, ScreenshotConfig(workers=1, dedup=False, keep_thumbnails=True,
                                                             thumbnail_retention=None))
        try:
            report = ingestor.ingest_paths(sorted((tmp_path / "shots").glob("*.png")), user_id=USER)
        finally:
            ingestor.close()
        assert {o.name: o.status for o in report.outcomes} == {names[0]: "ingested", names[1]: "processed"}
        kept = _named_thumbnails(engine)
    assert len(kept) == 1 and _thumbnails(tmp_path / "data") == kept  # the lost file's thumbnail is gone


def test_a_file_listed_twice_is_logged_and_remembered_once(tmp_path, backend, tesseract):
    [name] = _shots(tmp_path / "shots", TEXTS[:1])
    path = tmp_path / "shots" / name
    with _engine(tmp_path / "data", backend) as engine:
        engine.configure_screenshots(dedup=False, keep_thumbnails=True, thumbnail_retention=None)
        report = engine.ingest_screenshots([path, path], user_id=USER)  # a listing that names the file twice
        [logged] = engine.inputs.by_kind(InputKind.screenshot, user_id=USER)
        assert sorted((o.status, o.input_id) for o in report.outcomes) == [
            ("ingested", logged.id), ("processed", logged.id)]
        made_from = collections.Counter(s for m in engine.list(user_id=USER, memory_types=["episodic"], limit=100)
                                        for s in m.source_ids)
        assert made_from[logged.id] == 1
        kept = _named_thumbnails(engine)
    assert len(kept) == 1 and _thumbnails(tmp_path / "data") == kept


# a process of its own whose first batch never finishes: it says so, and is killed there
STALLED = """
import pathlib, sys, time
from mirix_py.engine import Mirix
data, url, folder, flag = sys.argv[1:]
with Mirix(data, embedder=None, database_url=url or None) as engine:
    engine.configure_screenshots(workers=1)
    def stall(records, images=None):
        pathlib.Path(flag).touch()
        time.sleep(600)
    engine.runner.process = stall
    engine.ingest_screenshots(folder, user_id="ada")
"""


def test_a_run_killed_mid_way_leaves_its_files_to_the_next_run(tmp_path, backend, tesseract):
    names = _shots(tmp_path / "shots", TEXTS[:4])
    flag = tmp_path / "first batch logged"
    run = subprocess.Popen([sys.executable, "-c", STALLED, str(tmp_path / "data"), backend or "",
                            str(tmp_path / "shots"), str(flag)], stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not flag.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists(), run.stderr.read() if run.poll() is not None else "the run never logged a batch"
    finally:
        run.kill()
        run.wait()
    left = _logged(tmp_path / "data", backend)
    assert 1 <= sum(left.values()) < len(names)  # killed with its first files logged, held, unfinished

    report = _ingest(tmp_path / "data", backend, tmp_path / "shots")
    by_name = {o.name: o for o in report.outcomes}
    # the killed run's files are taken up from the log, by this run or by the engine's resume at open
    # (then `ingested`: a live worker holds them), not read again; the others are read
    assert {name: (o.status, o.resumed) for name, o in by_name.items() if name in left} in (
        {name: ("processed", True) for name in left}, {name: ("ingested", False) for name in left})
    assert {name: o.status for name, o in by_name.items() if name not in left} == {
        name: "processed" for name in names if name not in left}
    assert _logged(tmp_path / "data", backend) == {name: 1 for name in names}
    with Mirix(tmp_path / "data", embedder=None, database_url=backend, resume=False) as engine:
        logged = engine.inputs.by_kind(InputKind.screenshot, user_id=USER)
        made_from = collections.Counter(s for m in engine.list(user_id=USER, memory_types=["episodic"], limit=100)
                                        for s in m.source_ids)
    assert {r.status for r in logged} == {InputStatus.processed}
    assert all(made_from[r.id] == 1 for r in logged)  # each file remembered once
