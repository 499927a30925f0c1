"""Runs over one folder at once read (OCR) each file once: a run claims a file before its OCR and the other
skips it (`InputLog.claim_source`); a claim lives while its run does and lapses once it is gone, so a file is
not lost with a run that died. On SQLite (two engines of one process: an embedded store takes one writer
process) and PostgreSQL. A stand-in Tesseract writes a line per frame it reads."""

from __future__ import annotations

import collections
import os
import shutil
import stat
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone

import pytest
from PIL import PngImagePlugin
from sqlalchemy import select, update
from sqlmodel import Session, col
from waiting import wait_for

from mirix_py.engine import Mirix
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.records import InputKind, utcnow
from mirix_py.store.inputs import HOST, InputLog
from mirix_synth.screens import text_window

USER = "ada"
LEASE_S = 2.0  # short, so a test outlives it; renewals come every third of it

# stands in for tesseract: a line per frame read (in any process), then a few words read with confidence
FAKE_TESSERACT = """\
#!/bin/sh
if [ "$1" = "--version" ]; then echo "tesseract 5.3.0"; exit 0; fi
if [ "$1" = "--list-langs" ]; then printf 'List of available languages (2):\\neng\\nosd\\n'; exit 0; fi
md5sum | cut -c1-16 >> "%(calls)s"
sleep 0.3
printf 'level\\tpage_num\\tblock_num\\tpar_num\\tline_num\\tword_num\\tleft\\ttop\\twidth\\theight\\tconf\\ttext\\n'
printf '5\\t1\\t1\\t1\\t1\\t1\\t10\\t10\\t60\\t12\\t95\\tQuarterly\\n'
printf '5\\t1\\t1\\t1\\t1\\t2\\t80\\t10\\t40\\t12\\t95\\tplan\\n'
printf '5\\t1\\t1\\t1\\t1\\t3\\t130\\t10\\t60\\t12\\t95\\treview\\n'
"""


@pytest.fixture
def ocr_calls(tmp_path, monkeypatch):
    """The stand-in Tesseract put in place for the engines opened in the test; returns what it read so far."""
    calls = tmp_path / "ocr_calls.log"
    script = tmp_path / "tesseract"
    script.write_text(FAKE_TESSERACT % {"calls": calls})
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("MIRIX_TESSERACT_CMD", str(script))
    return lambda: collections.Counter(calls.read_text().split()) if calls.exists() else collections.Counter()


def _shots(folder, count: int) -> list[str]:
    """One file per minute, each its own app and text: their names, in capture order."""
    folder.mkdir()
    for i in range(count):
        info = PngImagePlugin.PngInfo()
        info.add_text("mirix:captured_at", f"2024-06-03T10:{i:02d}:00+00:00")
        info.add_text("mirix:app", f"App{i}")
        text_window(f"Note {i} about the quarterly plan", width=900).save(folder / f"shot_{i:02d}.png", pnginfo=info)
    return [f"shot_{i:02d}.png" for i in range(count)]


def _captured(i: int) -> datetime:
    return datetime(2024, 6, 3, 10, i, tzinfo=timezone.utc)


def _engine(data, backend, **screenshots) -> Mirix:
    engine = Mirix(data, embedder=None, database_url=backend)
    engine.configure_screenshots(workers=1, **screenshots)
    return engine


def _logged(engine: Mirix) -> dict[str, str]:
    """The input id of each file the log holds (each once)."""
    rows = engine.inputs.by_kind(InputKind.screenshot, user_id=USER, limit=1000)
    assert len({r.source_id for r in rows}) == len(rows), "a file logged twice"
    return {r.source_id or "": r.id for r in rows}


def _claims(engine: Mirix) -> list:
    """The claims on files the store holds (imported here: the tests of what runs read run on versions before)."""
    from mirix_py.store.tables import SourceClaimRow

    with Session(engine.engine) as session:
        return list(session.execute(select(SourceClaimRow)).scalars())


def _claimed_at(engine: Mirix, name: str, captured_at: datetime) -> datetime | None:
    """When the claim on a file was taken or last renewed; None when there is none."""
    from mirix_py.store.inputs import source_claim_id
    from mirix_py.store.tables import SourceClaimRow

    with Session(engine.engine) as session:
        row = session.get(SourceClaimRow, source_claim_id(USER, InputKind.screenshot, name, captured_at))
        return None if row is None else row.claimed_at


def _lapse(engine: Mirix, name: str, captured_at: datetime) -> None:
    """The claim on a file as its worker left it when it stopped renewing it a lease ago."""
    from mirix_py.store.inputs import source_claim_id
    from mirix_py.store.tables import SourceClaimRow

    with Session(engine.engine) as session:
        session.execute(update(SourceClaimRow)
                        .where(col(SourceClaimRow.id) == source_claim_id(USER, InputKind.screenshot, name, captured_at))
                        .values(claimed_at=utcnow() - engine.inputs.lease - timedelta(seconds=1)))
        session.commit()


def _dead_worker() -> str:
    """A worker id of this host whose process has exited."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return f"{HOST}:{int(child.stdout)}:dead0000"


def test_two_runs_over_one_folder_at_once_read_each_file_once(tmp_path, backend, ocr_calls):
    names = _shots(tmp_path / "shots", 8)
    engines = [_engine(tmp_path / "data", backend) for _ in range(2)]
    try:
        start, reports = threading.Barrier(2), [None, None]

        def run(n: int) -> None:
            start.wait()
            reports[n] = engines[n].ingest_screenshots(tmp_path / "shots", user_id=USER)

        runs = [threading.Thread(target=run, args=(n,)) for n in range(2)]
        for thread in runs:
            thread.start()
        for thread in runs:
            thread.join(120)
        assert all(report is not None for report in reports)
        read = ocr_calls()
        assert sum(read.values()) == len(names) and set(read.values()) == {1}  # each frame read by one run
        logged = _logged(engines[0])
        assert sorted(logged) == names
        outcomes = [{o.name: o for o in report.outcomes} for report in reports]
        for name in names:  # read by one run; the other skipped it: `ingested` once it was logged, else `claimed`
            assert sorted(run[name].status for run in outcomes) in (["ingested", "processed"], ["claimed", "processed"])
        for run in outcomes:
            for name, outcome in run.items():
                # the input the log held for the file when the run ended: the other run's, none yet when claimed
                assert outcome.input_id == (None if outcome.status == "claimed" else logged[name])
        assert _claims(engines[0]) == []  # each claim ended once its file was logged
    finally:
        for engine in engines:
            engine.close()


def test_a_file_another_live_run_claimed_is_skipped_and_one_a_dead_run_claimed_is_read(tmp_path, backend, ocr_calls):
    names = _shots(tmp_path / "shots", 4)
    with _engine(tmp_path / "data", backend) as engine:
        other_host = "elsewhere.example:4242:run00000"  # a run on another machine: alive for all this host knows
        for i, worker in ((0, f"{HOST}:{os.getpid()}:busy0000"), (1, _dead_worker()), (2, other_host),
                          (3, other_host)):
            assert engine.inputs.claim_source(InputKind.screenshot, USER, names[i], _captured(i), worker).taken
        _lapse(engine, names[3], _captured(3))
        report = engine.ingest_screenshots(tmp_path / "shots", user_id=USER)
        statuses = {o.name: (o.status, o.input_id) for o in report.outcomes}
        logged = _logged(engine)
    # claimed by live runs (this host's, another host's within the lease): theirs to read, not logged yet
    assert statuses[names[0]] == statuses[names[2]] == ("claimed", None)
    # claimed by a run that died, or one whose lease lapsed: read here, not lost
    assert statuses[names[1]] == ("processed", logged[names[1]])
    assert statuses[names[3]] == ("processed", logged[names[3]])
    assert sorted(logged) == [names[1], names[3]] and sum(ocr_calls().values()) == 2
    assert report.claimed == 2 and report.ingested == 0 and report.unique == 2


def test_a_file_read_with_nothing_to_remember_is_not_skipped_by_the_next_run(tmp_path, backend, ocr_calls):
    names = _shots(tmp_path / "shots", 2)
    # no frame says enough; not compared with the first run's frames, which its ingestor remembers
    with _engine(tmp_path / "data", backend, min_text_chars=1000, dedup=False) as engine:
        first = engine.ingest_screenshots(tmp_path / "shots", user_id=USER)
        second = engine.ingest_screenshots(tmp_path / "shots", user_id=USER)
        assert _claims(engine) == []
    assert [o.status for o in first.outcomes] == [o.status for o in second.outcomes] == ["no_text"] * len(names)
    assert sum(ocr_calls().values()) == 2 * len(names)  # read by each run: the first one's claims ended with it


def test_a_run_whose_batches_wait_keeps_its_claims_past_the_lease(tmp_path, backend, ocr_calls):
    names = _shots(tmp_path / "shots", 2)
    with _engine(tmp_path / "data", backend, batch=BatchPolicy(max_frames=1)) as engine:
        engine.inputs.lease = timedelta(seconds=LEASE_S)
        other = InputLog(engine.engine, engine.inputs.cipher, lease_s=LEASE_S)
        first_batch, go_on = threading.Event(), threading.Event()
        process = engine.runner.process

        def first_held_up(records, **kwargs):  # the first file's batch runs longer than the lease (a slow model)
            if not first_batch.is_set():
                first_batch.set()
                go_on.wait(60)
            return process(records, **kwargs)

        engine.runner.process = first_held_up  # type: ignore[method-assign]
        reports = []
        run = threading.Thread(target=lambda: reports.append(engine.ingest_screenshots(tmp_path / "shots",
                                                                                       user_id=USER)))
        run.start()
        try:
            assert first_batch.wait(60)

            def claimed_at() -> datetime | None:  # the second file's, read and waiting behind the first batch
                return _claimed_at(engine, names[1], _captured(1))

            wait_for(lambda: claimed_at() is not None, timeout_s=60)
            taken_at = claimed_at()
            assert taken_at is not None
            wait_for(lambda: (claimed_at() or taken_at) - taken_at >= engine.inputs.lease, timeout_s=10 * LEASE_S)
            # past the lease it was taken with, still this run's: another run would skip the file
            claim = other.claim_source(InputKind.screenshot, USER, names[1], _captured(1), "elsewhere.example:1:b")
            assert not claim.taken and claim.logged is None
        finally:
            go_on.set()
            run.join(120)
        assert [o.status for o in reports[0].outcomes] == ["processed"] * len(names)
        assert sum(ocr_calls().values()) == len(names) and _claims(engine) == []


@pytest.mark.parametrize("listing", ["same path", "symlink", "copy"])
def test_a_file_listed_twice_in_one_run_is_read_once(tmp_path, backend, ocr_calls, listing):
    """The same path twice, or another path to a file of the same name and capture time (one file to the log)."""
    [name] = _shots(tmp_path / "shots", 1)
    path, other = tmp_path / "shots" / name, tmp_path / "elsewhere" / name
    other.parent.mkdir()
    if listing == "symlink":
        other.symlink_to(path)
    elif listing == "copy":
        shutil.copy2(path, other)  # its metadata (and capture time) with it
    paths = [path, path] if listing == "same path" else [path, other]
    with _engine(tmp_path / "data", backend, dedup=False) as engine:  # not compared with the first: read unless known
        report = engine.ingest_screenshots(paths, user_id=USER)
        logged = _logged(engine)
        assert _claims(engine) == []
    assert sum(ocr_calls().values()) == 1
    assert sorted((o.status, o.input_id) for o in report.outcomes) == [("ingested", logged[name]),
                                                                      ("processed", logged[name])]
    assert report.frames == 2 and report.unique == 1


def test_a_file_skipped_for_a_run_that_died_before_logging_it_is_reported_claimed_not_ingested(
        tmp_path, backend, ocr_calls):
    names = _shots(tmp_path / "shots", 2)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # another run, alive
    try:
        with _engine(tmp_path / "data", backend) as engine:
            claimer = f"{HOST}:{other.pid}:run00000"
            assert engine.inputs.claim_source(InputKind.screenshot, USER, names[1], _captured(1), claimer).taken
            report = engine.ingest_screenshots(tmp_path / "shots", user_id=USER)
            other.kill()  # that run dies before it logs the file
            other.wait()
            logged = _logged(engine)
            assert names[1] not in logged
            statuses = {o.name: (o.status, o.input_id) for o in report.outcomes}
            # not `ingested`: no input holds it
            assert statuses == {names[0]: ("processed", logged[names[0]]), names[1]: ("claimed", None)}
            assert report.claimed == 1 and report.ingested == 0 and report.to_dict()["claimed"] == 1
            again = engine.ingest_screenshots(tmp_path / "shots", user_id=USER)  # the next run reads it
            logged = _logged(engine)
        assert {o.name: (o.status, o.input_id) for o in again.outcomes} == {
            names[0]: ("ingested", logged[names[0]]), names[1]: ("processed", logged[names[1]])}
        assert sum(ocr_calls().values()) == 2
    finally:
        other.kill()
        other.wait()


def test_doctor_reports_the_claims_of_killed_runs_and_repair_clears_only_those(tmp_path, backend):
    with _engine(tmp_path / "data", backend) as engine:
        live, remote = f"{HOST}:{os.getpid()}:busy0000", "elsewhere.example:4242:run00000"
        for i, worker in enumerate((live, _dead_worker(), remote, remote)):
            assert engine.inputs.claim_source(InputKind.screenshot, USER, f"shot_{i:02d}.png", _captured(i),
                                              worker).taken
        _lapse(engine, "shot_03.png", _captured(3))  # another host's run that stopped renewing a lease ago
        found = engine.doctor()
        assert found.clean and found.summary()["lapsed_file_claims"] == 2  # the dead run's, the lapsed one: not a fault
        fixed = engine.doctor(repair=True)
        assert fixed.clean and fixed.repaired["file_claims_cleared"] == 2
        kept = sorted(row.claimed_by for row in _claims(engine))
        assert kept == sorted([live, remote])  # claims of runs that may be reading their files stay
