"""A worker's claims on inputs while it works: renewed, they stay its own past the lease; once it stops
renewing (it died), another worker takes them over after the lease, as before. Leaving does not wait for a
renewal stuck behind SQLite's write lock, and that renewal, ending later, changes nothing it should not."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from sqlalchemy import select, update
from sqlmodel import Session, col
from waiting import wait_for

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.records import InputStatus, utcnow
from mirix_py.store.inputs import ClaimKeeper, InputLog
from mirix_py.store.tables import InputRow

WHEN = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
LEASE_S = 2.0  # short, so a test outlives it; renewals come every third of it


def _note(text: str):
    return normalize_add(text, user_id="ada", occurred_at=WHEN, source_id=None, kind="text", max_chars=10_000)


def _claim_of(log: InputLog, input_id: str) -> tuple[str | None, datetime | None]:
    """(claimed_by, claimed_at) of one input, as the log holds them."""
    with Session(log.engine) as session:
        row = session.execute(select(col(InputRow.claimed_by), col(InputRow.claimed_at))
                              .where(col(InputRow.id) == input_id)).one()
        return row.claimed_by, row.claimed_at


def test_a_renewed_claim_outlives_the_lease_and_a_stopped_one_lapses(tmp_path, backend):
    with Mirix(tmp_path / "d", embedder=None, database_url=backend, resume=False) as mx:
        mine, theirs = (InputLog(mx.engine, mx.inputs.cipher, lease_s=LEASE_S) for _ in range(2))
        note = _note("Anna lives in Oslo.")
        mine.append([note])
        [claimed] = mine.claim("worker-a")
        _, first_claimed_at = _claim_of(mine, note.id)
        assert first_claimed_at is not None
        with mine.keep_claimed([claimed.id], "worker-a") as keeper:
            wait_for(lambda: _claim_of(mine, note.id)[1] - first_claimed_at >= mine.lease, timeout_s=10 * LEASE_S)
            assert theirs.claim("worker-b", include_stale=True) == []  # past the first lease, still worker-a's
            keeper.stop()  # as a worker that died: nothing renews its claim any more
            by, last_renewed = _claim_of(mine, note.id)
            assert by == "worker-a" and last_renewed is not None
            taken: list = []
            wait_for(lambda: taken.extend(theirs.claim("worker-b", include_stale=True)) or taken,
                     timeout_s=10 * LEASE_S)
            assert utcnow() - last_renewed >= mine.lease  # taken over only once the lease had lapsed
        assert [r.id for r in taken] == [note.id]
        assert mine.renew([note.id], "worker-a") == 0  # worker-a's keeper never takes it back
        assert _claim_of(mine, note.id)[0] == "worker-b"


def test_renewal_touches_only_what_the_worker_still_holds(tmp_path, backend):
    with Mirix(tmp_path / "d", embedder=None, database_url=backend, resume=False) as mx:
        log = mx.inputs
        held, released, finished, theirs = (_note(f"Note {i} about Oslo.") for i in range(4))
        log.append([held, released, finished], claimed_by="worker-a")
        log.append([theirs], claimed_by="worker-b")
        log.release([released.id], "worker-a")
        log.mark([finished.id], InputStatus.processed)
        before = {r.id: _claim_of(log, r.id) for r in (held, theirs)}
        wait_for(lambda: utcnow() > before[held.id][1])  # so that a renewal shows in claimed_at
        assert log.renew([held.id, released.id, finished.id, theirs.id], "worker-a") == 1
        assert _claim_of(log, held.id)[1] > before[held.id][1]
        assert _claim_of(log, theirs.id) == before[theirs.id]
        assert _claim_of(log, released.id) == (None, None) and log.get(released.id).status is InputStatus.pending
        assert _claim_of(log, finished.id) == (None, None) and log.get(finished.id).status is InputStatus.processed


def test_leaving_does_not_wait_for_a_renewal_stuck_behind_the_write_lock(tmp_path):
    with Mirix(tmp_path / "d", embedder=None, resume=False) as mx:
        log = InputLog(mx.engine, mx.inputs.cipher, lease_s=600.0)  # longer than SQLite's busy timeout
        finished, claimed_again = _note("Anna lives in Oslo."), _note("Tom flies to Denver.")
        log.append([finished, claimed_again], claimed_by="worker-a")
        renewing, renewed = threading.Event(), threading.Event()
        renew = log.renew

        def observed_renew(input_ids, worker_id):
            renewing.set()
            try:
                return renew(input_ids, worker_id)
            finally:
                renewed.set()

        log.renew = observed_renew  # type: ignore[method-assign]
        keeper = ClaimKeeper(log, [finished.id, claimed_again.id], "worker-a")
        keeper.every_s = 0.05  # a renewal soon, the lease still long
        with mx.engine.connect() as writer:  # another writer holds SQLite's write lock
            writer.exec_driver_sql("BEGIN IMMEDIATE")
            keeper.start()
            assert renewing.wait(60)
            keeper.stop()
            assert not renewed.is_set()  # left while the renewal still waits for the lock
            # meanwhile the batch ends: one input finished, the other claimed again (after the renewal began)
            reclaimed_at = utcnow() + timedelta(minutes=1)
            writer.execute(update(InputRow).where(col(InputRow.id) == finished.id).values(
                status=InputStatus.processed.value, claimed_by=None, claimed_at=None))
            writer.execute(update(InputRow).where(col(InputRow.id) == claimed_again.id).values(
                claimed_at=reclaimed_at))
            writer.commit()
        assert renewed.wait(60)  # the renewal ran once the lock was free
        assert log.get(finished.id).status is InputStatus.processed and _claim_of(log, finished.id) == (None, None)
        assert _claim_of(log, claimed_again.id) == ("worker-a", reclaimed_at)  # the later claim not moved back
