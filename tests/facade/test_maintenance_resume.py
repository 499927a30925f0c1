"""Inputs `resume` took over stay this worker's while they wait in its queue behind slower batches: their
claims are renewed, so no other worker takes them over past the lease (`Maintenance.resume`)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from sqlalchemy import select
from sqlmodel import Session, col
from waiting import wait_for

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.records import InputStatus
from mirix_py.store.inputs import InputLog
from mirix_py.store.tables import InputRow

WHEN = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
LEASE_S = 2.0  # short, so a test outlives it; renewals come every third of it


def _note(text: str, user_id: str):
    return normalize_add(text, user_id=user_id, occurred_at=WHEN, source_id=None, kind="text", max_chars=10_000)


def _claimed_at(log: InputLog, input_id: str) -> datetime | None:
    with Session(log.engine) as session:
        return session.execute(select(col(InputRow.claimed_at)).where(col(InputRow.id) == input_id)).scalar_one()


def test_inputs_resume_queued_stay_its_own_while_they_wait_past_the_lease(tmp_path, backend):
    with Mirix(tmp_path / "d", embedder=None, database_url=backend, resume=False) as mx:
        mx.inputs.lease = timedelta(seconds=LEASE_S)
        notes = [_note("Anna lives in Oslo.", "ada"), _note("Tom flies to Denver.", "bob")]  # a batch each
        mx.inputs.append(notes)  # left pending, as by a process that was killed
        first_batch: list[str] = []
        running, go_on = threading.Event(), threading.Event()
        process = mx.runner.process

        def first_held_up(records, **kwargs):  # the first batch runs longer than the lease
            if not running.is_set():
                first_batch.extend(r.id for r in records)
                running.set()
                go_on.wait(60)
            return process(records, **kwargs)

        mx.runner.process = first_held_up  # type: ignore[method-assign]
        other = InputLog(mx.engine, mx.inputs.cipher, lease_s=LEASE_S)
        try:
            assert mx.resume(wait=False) == 2
            assert running.wait(60)
            [waiting] = [n.id for n in notes if n.id not in first_batch]
            resumed_at = _claimed_at(mx.inputs, waiting)
            assert resumed_at is not None
            wait_for(lambda: _claimed_at(mx.inputs, waiting) - resumed_at >= mx.inputs.lease, timeout_s=10 * LEASE_S)
            assert other.claim("worker-b") == []  # past the lease it was taken with, still this engine's
        finally:
            go_on.set()
        mx.flush()
        assert [mx.input_status(n.id).status for n in notes] == [InputStatus.processed] * 2


def test_an_input_handed_back_to_the_log_is_renewed_no_more(tmp_path, backend):
    """A batch `resume` queued that fails every try goes back to the log as pending: its claim is renewed no
    more, while what still waits keeps being renewed. Seen once this worker holds the input again (its idle
    sweep takes it up): a renewal for the old batch moves that claim's lease too."""
    with Mirix(tmp_path / "d", embedder=None, database_url=backend, resume=False) as mx:
        mx.inputs.lease = timedelta(seconds=LEASE_S)
        mx._queue.retries = 0  # a batch that fails goes back to the log at once
        mx.maintenance.left_after_s = 0  # and the sweep takes up what is pending at once
        failing = _note("Anna lives in Oslo.", "ada")
        failing = failing.model_copy(update={"created_at": failing.created_at - timedelta(seconds=1)})  # queued first
        waiting = _note("Tom flies to Denver.", "bob")
        mx.inputs.append([failing, waiting])  # left pending, as by a process that was killed
        handed_back, go_on = threading.Event(), threading.Event()
        process = mx.runner.process_queued

        def scripted(records):
            if records[0].id == failing.id and not handed_back.is_set():
                raise RuntimeError("database restarting")
            handed_back.set()  # the waiting batch runs once the failing one went back to the log
            go_on.wait(60)
            return process(records)

        mx.runner.process_queued = scripted  # type: ignore[method-assign]
        try:
            assert mx.resume(wait=False) == 2
            assert handed_back.wait(60)
            assert mx.input_status(failing.id).status is InputStatus.pending
            assert mx.maintenance.take_up_left() == 1  # held by this worker again, queued behind the waiting batch
            taken_up_at = _claimed_at(mx.inputs, failing.id)
            assert taken_up_at is not None
            wait_for(lambda: _claimed_at(mx.inputs, waiting.id) > taken_up_at, timeout_s=10 * LEASE_S)  # renewed since
            assert _claimed_at(mx.inputs, failing.id) == taken_up_at  # not by a keeper of the batch handed back
        finally:
            go_on.set()
        mx.flush()
        assert [mx.input_status(n.id).status for n in (failing, waiting)] == [InputStatus.processed] * 2
