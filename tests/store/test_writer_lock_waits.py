"""Opening one new data dir from a writer and a read-only process at once: the writer waits for a
reader upgrading the schema under the lock, and a reader waits for a holder that has the lock but has
not said who it is yet (`store/writer_lock.acquire`). Before, either was refused at once: the writer
with `StoreBusy`, the reader with `UpgradeBlocked` blaming "an older mirix-py"."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from mirix_py.engine import Mirix
from mirix_py.store import writer_lock
from mirix_py.store.migrations import head_revision

# holds the data dir's lock as a process of this version does, step by step, each step on a line of stdin:
# flock (the file still naming a process that is gone), then its stamp (`upgrading` as argv[2] says), release
HOLD = ("import fcntl, json, os, sys\n"
        "fd = os.open(os.path.join(sys.argv[1], 'writer.lock'), os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "print('locked', flush=True)\nsys.stdin.readline()\n"
        "stamp = {'pid': os.getpid(), 'process': 'python', 'schema': sys.argv[3]}\n"
        "stamp.update({'upgrading': True} if sys.argv[2] == 'upgrading' else {})\n"
        "os.ftruncate(fd, 0)\nos.pwrite(fd, json.dumps(stamp).encode(), 0)\n"
        "print('stamped', flush=True)\nsys.stdin.readline()\n")


def _hold(data: Path, how: str) -> subprocess.Popen:
    (data / writer_lock.LOCK_NAME).write_text(json.dumps({"pid": 2 ** 22 + 17, "process": "gone"}))  # a stale stamp
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(data), how, head_revision()], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def _next(proc: subprocess.Popen, expect: str | None) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("\n")
    proc.stdin.flush()
    if expect is not None:
        assert proc.stdout.readline().strip() == expect


def _seen_busy(monkeypatch) -> threading.Event:
    """Set once the lock was found held and its stamp read: the caller is deciding, so what the holder
    does next happens while it waits (or after it was refused)."""
    seen = threading.Event()
    read = writer_lock.read_holder

    def reading(data_dir):
        holder = read(data_dir)
        seen.set()
        return holder

    monkeypatch.setattr(writer_lock, "read_holder", reading)
    return seen


def _in_thread(call) -> tuple[threading.Thread, list]:
    outcome: list = []

    def run():
        try:
            outcome.append(call())
        except BaseException as exc:  # the assertion reads what happened
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_writer_waits_for_a_reader_upgrading_under_the_lock(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    reader = _hold(data, "upgrading")
    _next(reader, "stamped")
    seen = _seen_busy(monkeypatch)
    thread, outcome = _in_thread(lambda: writer_lock.acquire(data))
    assert seen.wait(timeout=120)
    _next(reader, None)  # the reader's upgrade is done: it lets go
    thread.join(timeout=120)
    assert reader.wait(timeout=60) == 0
    assert outcome and isinstance(outcome[0], writer_lock.WriterLock), outcome
    outcome[0].release()


def test_a_reader_waits_for_a_holder_to_say_who_it_is(tmp_path, monkeypatch):
    """A new data dir (no schema: behind) whose lock a writer of this version has just taken: the reader
    opens beside it once its stamp names this schema, instead of blaming the stale stamp's process."""
    data = tmp_path / "data"
    data.mkdir()
    writer = _hold(data, "writing")
    seen = _seen_busy(monkeypatch)
    thread, outcome = _in_thread(lambda: Mirix(data, embedder=None, lock=False))
    assert seen.wait(timeout=120)
    _next(writer, "stamped")
    thread.join(timeout=120)
    assert outcome and isinstance(outcome[0], Mirix), outcome
    outcome[0].close()
    _next(writer, None)
    assert writer.wait(timeout=60) == 0


def test_a_live_writer_is_still_refused_at_once(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    writer = _hold(data, "writing")
    _next(writer, "stamped")
    try:
        thread, outcome = _in_thread(lambda: writer_lock.acquire(data))
        thread.join(timeout=120)
        assert outcome and isinstance(outcome[0], writer_lock.StoreBusy), outcome
    finally:
        _next(writer, None)
        assert writer.wait(timeout=60) == 0
