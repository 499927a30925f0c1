"""Inputs accepted with `wait=False` are processed even when the database fails for a while: a batch
that raises is tried again, and inputs left pending are taken up again while the engine runs."""

from __future__ import annotations

import threading
import time

from sqlalchemy.exc import OperationalError

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.facade.background import BackgroundQueue
from mirix_py.records import InputStatus
from waiting import wait_for


def failing(times: int, real):
    """`real`, raising a database error on its first `times` calls."""
    calls = {"n": 0}

    def call(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] <= times:
            raise OperationalError("SELECT 1", {}, ConnectionRefusedError("the database restarted"))
        return real(*args, **kwargs)

    call.calls = calls  # type: ignore[attr-defined]
    return call


def note():
    return normalize_add("a note", user_id="ada", occurred_at=None, source_id=None, kind="text", max_chars=10_000)



def test_a_batch_that_raises_is_tried_again_until_it_is_processed(tmp_path, embedder, monkeypatch):
    with Mirix(tmp_path, embedder=embedder) as mx:
        monkeypatch.setattr(mx.inputs, "claim", failing(2, mx.inputs.claim))
        added = mx.add("I adopted a cat named Miso last spring.", user_id="ada", wait=False)
        mx.flush(timeout=120)
        assert mx.input_status(added.input_ids[0]).status.value == "processed"
        assert any("Miso" in h.text for h in mx.search("What is my cat called?", user_id="ada"))


def test_a_manager_whose_write_loses_the_database_is_tried_again_not_failed(tmp_path, embedder, monkeypatch):
    """A manager's write that raised for the database (a dropped connection) was caught as that
    manager's failure: the input ended `failed`, and nothing tried it again."""
    with Mirix(tmp_path, embedder=embedder) as mx:
        mx._queue.retry_base_s = 0.01
        monkeypatch.setattr(mx.store, "apply", failing(1, mx.store.apply))
        added = mx.add("I adopted a cat named Miso last spring.", user_id="ada", wait=False)
        mx.flush(timeout=120)
        assert mx.input_status(added.input_ids[0]).status.value == "processed"
        assert any("Miso" in h.text for h in mx.search("What is my cat called?", user_id="ada"))
        assert len(mx.list(user_id="ada", memory_types=["episodic"])) == 1  # no manager wrote twice


def test_a_worker_outlives_a_database_error_and_gives_its_batch_back(tmp_path, embedder, monkeypatch):
    from mirix_py.agents import batch_runner

    monkeypatch.setattr(batch_runner, "DATABASE_RETRY_S", 0.0)
    with Mirix(tmp_path, embedder=embedder, resume=False) as mx:
        mx.inputs.append([note()])
        monkeypatch.setattr(mx.runner, "process", failing(1, mx.runner.process))
        assert mx.work() == 1  # the batch met the error, went back to the log, and was claimed again
        assert [r.status for r in mx.inputs.by_status(InputStatus.processed, user_id="ada")] == [InputStatus.processed]


def test_retries_wait_longer_each_time_and_stop(monkeypatch):
    """After `retries` failed tries the batch leaves the queue (its inputs stay in the input log)."""
    tries: list[float] = []

    def process(batch):
        tries.append(time.monotonic())
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("down"))

    queue = BackgroundQueue(process, batch_size=1, max_wait_s=0.0, retries=3, retry_base_s=0.05)
    record = note()
    queue.submit(record)
    wait_for(lambda: len(tries) == 4 and queue.pending() == 0)
    gaps = [b - a for a, b in zip(tries, tries[1:])]
    assert all(g >= 0.05 * 2 ** i * 0.9 for i, g in enumerate(gaps)), gaps
    queue.close()
    assert len(tries) == 4


def test_inputs_left_pending_are_taken_up_while_the_engine_runs(tmp_path, embedder, monkeypatch):
    """A database down longer than the retries: the input stays pending in the log, and the worker
    takes it up again once the database answers, without a restart."""
    with Mirix(tmp_path, embedder=embedder) as mx:
        mx._queue.retries, mx._queue.retry_base_s = 1, 0.01
        mx._queue.sweep_every_s = 0.2
        mx.maintenance.left_after_s = 0.0
        claim = failing(2, mx.inputs.claim)
        monkeypatch.setattr(mx.inputs, "claim", claim)
        added = mx.add("I adopted a cat named Miso last spring.", user_id="ada", wait=False)
        wait_for(lambda: mx.input_status(added.input_ids[0]).status.value == "processed")
        assert claim.calls["n"] >= 3


def test_the_sweep_leaves_inputs_a_worker_holds(tmp_path, embedder):
    """A screenshot frame waits claimed for its batch, however long: the sweep must not take it."""
    from datetime import timedelta

    with Mirix(tmp_path, embedder=embedder) as mx:
        held = note()
        mx.inputs.append([held], claimed_by=mx.worker_id)
        mx.maintenance.left_after_s = 0.0
        mx.inputs.lease = timedelta(0)
        assert mx.maintenance.take_up_left() == 0
        assert mx.input_status(held.id).status.value == "processing"


def test_a_waited_add_whose_end_could_not_be_written_is_finished_in_the_background(tmp_path, embedder, monkeypatch):
    """The caller sees the error; the logged input is processed once the database answers again,
    not left held until the engine restarts."""
    import pytest

    with Mirix(tmp_path, embedder=embedder) as mx:
        monkeypatch.setattr(mx.inputs, "mark", failing(1, mx.inputs.mark))
        with pytest.raises(OperationalError):
            mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        mx.flush(timeout=60)
        (record,) = mx.inputs.by_status(InputStatus.processed, user_id="ada")
        texts = [m.search_text() for m in mx.list(user_id="ada")]
        assert any("Miso" in t for t in texts) and len(texts) == len(set(texts))  # written once
        assert mx.inputs.by_status(InputStatus.processing, user_id="ada") == []


def test_a_batch_given_up_gives_its_held_inputs_back_to_the_log(tmp_path, embedder, monkeypatch):
    """A waited add that failed is held by its worker; once the retries are spent it is given back as
    pending, so the sweep takes it up (it takes pending inputs only)."""
    import pytest

    with Mirix(tmp_path, embedder=embedder) as mx:
        mx._queue.retries, mx._queue.retry_base_s, mx._queue.sweep_every_s = 0, 0.01, 0.2
        mx.maintenance.left_after_s = 0.0
        monkeypatch.setattr(mx.inputs, "mark", failing(1, mx.inputs.mark))
        claim = failing(1, mx.inputs.claim)  # the queued try fails too: the batch is given up at once
        monkeypatch.setattr(mx.inputs, "claim", claim)
        with pytest.raises(OperationalError):
            mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        wait_for(lambda: [r.status.value for r in mx.inputs.by_status(InputStatus.processed, user_id="ada")]
                 == ["processed"])
        assert claim.calls["n"] >= 3  # the failed try, the sweep's claim, the queued batch's claim
        assert any("Miso" in h.text for h in mx.search("What is my cat called?", user_id="ada"))


def test_a_batch_that_cannot_be_given_back_stays_queued_until_it_can(monkeypatch):
    """The database still down when the retries are spent: the batch is kept and tried again later,
    not dropped with its inputs held until a restart."""
    tries: list[float] = []
    released: list[list[str]] = []

    def process(batch):
        tries.append(time.monotonic())
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("down"))

    release = failing(1, lambda batch: released.append([r.id for r in batch]))
    queue = BackgroundQueue(process, batch_size=1, max_wait_s=0.0, retries=1, retry_base_s=0.01,
                            sweep_every_s=0.05, release=release)
    record = note()
    queue.submit(record)
    # try, retry and give back (which fails: kept), try, retry and give back: the batch leaves the queue
    wait_for(lambda: len(released) == 1 and queue.pending() == 0)
    assert released == [[record.id]] and release.calls["n"] == 2 and len(tries) == 4
    queue.close()


def test_a_queue_being_closed_does_not_wait_for_a_batch_it_cannot_give_back():
    def process(batch):
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("down"))

    release = failing(100, lambda batch: None)
    queue = BackgroundQueue(process, batch_size=1, max_wait_s=10.0, retries=2, retry_base_s=0.01,
                            sweep_every_s=0.05, release=release)
    queue.submit(note())
    queue.close()  # flushes: tries, gives up, cannot give back, and returns
    assert queue.pending() == 0 and release.calls["n"] == 1


def test_forgetting_a_user_drops_their_queue_and_waits_for_their_running_batch():
    """What `delete_user` relies on: the user's queued inputs are dropped, another user's stay, and
    the call returns only once the user's batch already running has ended."""
    started, release, done = threading.Event(), threading.Event(), []

    def process(batch):
        if batch[0].user_id == "ada" and not started.is_set():
            started.set()
            release.wait(10)
        done.append((batch[0].user_id, len(batch)))

    queue = BackgroundQueue(process, batch_size=1, max_wait_s=0.0)
    queue.submit(note())
    assert started.wait(10)  # ada's first batch is running
    for _ in range(3):
        queue.submit(note())
    queue.submit(normalize_add("a note", user_id="bo", occurred_at=None, source_id=None, kind="text",
                               max_chars=10_000))
    forgetting = threading.Thread(target=lambda: done.append(("forgot", queue.forget_user("ada"))))
    forgetting.start()
    forgetting.join(0.3)
    assert forgetting.is_alive()  # waiting for the running batch
    release.set()
    forgetting.join(10)
    queue.flush(timeout=10)
    queue.close()
    assert done[0] == ("ada", 1) and ("forgot", 3) in done
    assert [d for d in done if d[0] == "ada"] == [("ada", 1)] and ("bo", 1) in done
