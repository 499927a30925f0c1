"""Running the update flow over logged inputs: one batch and its status, claimed work, retries.

A batch's inputs are marked `processed` when the flow did everything, `degraded` when a model's
part failed (the reasons in `error`; the rules' memories, written first, stand), and `failed` when
some part could not be done at all. `retry_failed` runs failed and degraded inputs again; the
actors that committed for an input are skipped, so a retry writes nothing twice.

Claimed inputs stay this worker's while they wait for their turn and while they run: their claims
are renewed (`InputLog.keep_claimed`), so a batch slower than the lease (a slow or local model) is
not taken over by another worker and done twice.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any, Sequence

from sqlalchemy.exc import OperationalError

from mirix_py.agents.flow import Flow, FlowResult, RunCoroutine
from mirix_py.agents.user_locks import UserLocks
from mirix_py.agents.offline.flow import FALLBACK_SUFFIX
from mirix_py.llm.loop import EngineClosed
from mirix_py.llm.meter import Meter
from mirix_py.tools.ops import DeleteOp
from mirix_py.records import (
    INPUT_PREFIX, AddResult, InputRecord, InputStatus, LLMUsage, MemoryChange, MemoryType, Mode, Operation,
)
from mirix_py.store.expiry import EXPIRING_TYPES, after_batch
from mirix_py.secrets.redaction import scrub
from mirix_py.store.inputs import InputLog
from mirix_py.store.memories import MemoryStore
from mirix_py.store.undo import undo_input, undone_inputs

DATABASE_RETRY_S = 1.0  # a worker's pause after a database error, before it claims again
RETRY_CHUNK = 100  # failed inputs `retry_failed` claims and decrypts at a time

log = logging.getLogger("mirix_py")


class BatchRunner:
    """The update flow over batches of one user's logged inputs, claimed by `worker_id`. `flow` may
    be a model's flow; `fallback` is the offline rules' flow."""

    def __init__(self, store: MemoryStore, inputs: InputLog, flow: Flow, *, fallback: Flow, run: RunCoroutine,
                 worker_id: str, mode: Mode, user_locks: UserLocks | None = None) -> None:
        self.store = store
        self.user_locks = user_locks or UserLocks()  # one batch of a user at a time (`agents.user_locks`)
        self.inputs = inputs
        self.flow = flow
        self.fallback = fallback
        self.run = run
        self.worker_id = worker_id
        self.mode = mode

    def process(self, records: Sequence[InputRecord], *, images: dict[str, Any] | None = None) -> AddResult:
        """Run the flow over one batch of one user and mark its inputs, while no other batch of that
        user runs in this engine. `images` (input id -> downscaled frame) go to a vision-capable model
        with the batch; the offline rules read text only. This worker's claims on them are renewed
        meanwhile (`InputLog.keep_claimed`)."""
        with self.inputs.keep_claimed([r.id for r in records], self.worker_id):
            return self._process_each_user(records, images=images)

    def _process_each_user(self, records: Sequence[InputRecord], *, images: dict[str, Any] | None) -> AddResult:
        by_user = _grouped(records, {r.id: r.user_id for r in records})
        if len(by_user) > 1:  # a caller's grouping bug must never write one user's words as another's
            log.error("a batch held inputs of %d users: each user's inputs run as a batch of their own", len(by_user))
            return _combined([self._process_each_user(g, images=_images_of(g, images)) for g in by_user])
        with self.user_locks(records[0].user_id):
            done = self.inputs.done_actors_each([r.id for r in records])
            # resumed beside others: a manager done for one input must not run for it again, so inputs
            # with the same managers done run as a batch each
            results = [self._process(g, images=_images_of(g, images), done=done.get(g[0].id, frozenset()))
                       for g in _grouped(records, done)]
            return results[0] if len(results) == 1 else _combined(results)

    def _process(self, records: Sequence[InputRecord], *, images: dict[str, Any] | None,
                 done: frozenset[str] | None = None) -> AddResult:
        """`done`: the managers whose writes are committed for every one of `records` (read when not given)."""
        ids = [r.id for r in records]
        user_id = records[0].user_id
        single = ids[0] if len(ids) == 1 else None
        done = self.inputs.done_actors(ids) if done is None else done
        started = time.perf_counter()
        meter = Meter()
        try:
            flow = self.run(self.flow.run(user_id, records, meter, input_id=single, skip_actors=done, images=images))
        except (OperationalError, EngineClosed):  # the database went away or the engine closed: not the
            raise  # input's fault; the queue's or a worker's retry, or the next start, takes it
        except Exception as exc:  # a bug or an infrastructure fault outside the flow's own handling
            log.exception("update flow failed")
            flow = FlowResult(failures=[f"update flow: {type(exc).__name__}: {exc}"])
        usage = LLMUsage(**meter.summary(), wall_seconds=round(time.perf_counter() - started, 4))
        if self.mode == "llm":
            self.store.record_usage(user_id, "update", usage.model_dump())
        if flow.failures and len(records) > 1:
            return self._one_by_one(records, flow, usage, resumed=bool(done), images=images)
        if flow.failures:
            status, error = InputStatus.failed, "; ".join(flow.failures + flow.degraded)
        elif flow.degraded:
            status, error = InputStatus.degraded, "; ".join(flow.degraded)
        else:
            status, error = InputStatus.processed, None
        error = scrub(error) if error else error  # reasons quote model output and exceptions
        self.expire(user_id, records, flow.changes, resumed=bool(done))
        self.inputs.mark(ids, status, error, refused=[scrub(r) for r in flow.rejected])
        return AddResult(input_ids=ids, status=status, changes=flow.changes, mode=self.mode, error=error,
                         routed=flow.routed, left_out=flow.left_out, usage=usage, rejected=[scrub(r) for r in flow.rejected])

    def _one_by_one(self, records: Sequence[InputRecord], flow: FlowResult, usage: LLMUsage, *, resumed: bool,
                    images: dict[str, Any] | None) -> AddResult:
        """A manager failed on a batch of several inputs: what one input holds may be what it failed
        on, so each input runs again alone (the managers that wrote for the batch are done for each
        of them and are skipped), and only an input that fails alone is marked failed."""
        self.expire(records[0].user_id, records, flow.changes, resumed=resumed)
        alone = [self._process([r], images=_images_of([r], images)) for r in records]
        result = _combined(alone)
        return result.model_copy(update={
            "changes": [*flow.changes, *result.changes], "routed": flow.routed, "left_out": flow.left_out,
            "usage": usage, "rejected": [*(scrub(r) for r in flow.rejected), *result.rejected]})

    def expire(self, user_id: str, records: Sequence[InputRecord], changes: Sequence[MemoryChange], *,
               resumed: bool) -> None:
        """Give the memories this batch wrote the expiry of the inputs they came from (`store.expiry`).
        Before the inputs are marked: a batch cut short here runs again, and sets it then. A resumed
        batch finds what its earlier run wrote by provenance."""
        batch = {r.id: r.expires_at for r in records}
        expiring = [i for i, when in batch.items() if when is not None]
        inserted = {c.memory_id for c in changes if c.operation is Operation.insert}
        written = {c.memory_id for c in changes if c.operation is not Operation.delete
                   and c.memory_type is not MemoryType.core}
        if not expiring:  # only a memory that expires already can change: an update from these clears it
            written -= inserted
        earlier: set[str] = set()  # written by an earlier run of this batch, for all we know
        if resumed and expiring:
            made = self.store.made_from(user_id, expiring, EXPIRING_TYPES)
            earlier = {m for ids in made.values() for m in ids} - written
            written |= earlier
        if not written:
            return
        now_set: dict[str, datetime | None] = {}
        for memory_id, (current, sources) in self.store.expiry_of(sorted(written), user_id=user_id).items():
            cited = [batch[s] for s in sources if s in batch]
            # what an earlier run inserted cites no input outside this batch
            new = memory_id in inserted or (memory_id in earlier and not any(
                s.startswith(INPUT_PREFIX) and s not in batch for s in sources))
            when = after_batch(current, inserted=new, batch=cited)
            if when != current:
                now_set[memory_id] = when
        self.store.set_expiry(now_set, user_id=user_id)

    def process_queued(self, records: Sequence[InputRecord]) -> None:
        """Process a queued batch, as far as this worker can still claim its inputs (another worker
        may have taken some already)."""
        self.user_locks.check_open()
        claimed = self.inputs.claim(self.worker_id, input_ids=[r.id for r in records], limit=len(records),
                                    include_own=True)
        if claimed:
            self.process(claimed)

    def work(self, batch_size: int) -> int:
        """Claim inputs in batches (pending ones and those of dead workers) and process them, one
        batch per user, until none are left; returns how many were processed. A batch that meets a
        database error goes back to the log and is claimed again."""
        total = 0
        while True:
            self.user_locks.check_open()  # nothing claimed once the engine is closed
            records = self.inputs.claim(self.worker_id, limit=batch_size)
            if not records:
                return total
            with self.inputs.keep_claimed([r.id for r in records], self.worker_id):  # users wait their turn
                total += self._process_claimed(records)

    def _process_claimed(self, records: Sequence[InputRecord]) -> int:
        """`work`'s claimed inputs, one batch per user; returns how many were processed."""
        processed = 0
        by_user: dict[str, list[InputRecord]] = {}
        for record in records:
            by_user.setdefault(record.user_id, []).append(record)
        handled: set[str] = set()  # users whose batch ran or went back
        for user_id, batch in by_user.items():
            try:
                self.process(batch)
            except EngineClosed:  # closed meanwhile: what is claimed and not run goes back to the log
                self._give_back([r for r in records if r.user_id not in handled])
                raise
            except OperationalError as exc:  # a worker outlives a dropped connection; the batch waits
                log.warning("a batch of %d input(s) met a database error (%s); given back to the log",
                            len(batch), type(exc.orig).__name__ if exc.orig is not None else exc)
                self._give_back(batch)
                handled.add(user_id)
                time.sleep(DATABASE_RETRY_S)
                continue
            handled.add(user_id)
            processed += len(batch)
        return processed

    def _give_back(self, batch: Sequence[InputRecord]) -> None:
        try:
            self.inputs.release([r.id for r in batch], self.worker_id)
        except OperationalError:  # still down: the claims lapse after their lease, and any worker takes them
            pass

    def retry_failed(self, *, user_id: str | None = None) -> list[AddResult]:
        """Run failed and degraded inputs again, one at a time; not those undone (the user took
        back what they changed: running them again would bring it back)."""
        self.user_locks.check_open()
        wanted = (InputStatus.failed, InputStatus.degraded)
        every = self.inputs.ids_by_status(wanted, user_id=user_id)  # read once: one that fails again is not retried twice
        results = []
        for start in range(0, len(every), RETRY_CHUNK):  # claimed (and decrypted) a chunk at a time, however many failed
            pending = every[start:start + RETRY_CHUNK]
            undone = undone_inputs(self.store, pending)
            pending = [i for i in pending if i not in undone]
            claimed = self.inputs.claim(self.worker_id, input_ids=pending, limit=len(pending),
                                        statuses=wanted, include_stale=False) if pending else []
            with self.inputs.keep_claimed([r.id for r in claimed], self.worker_id):  # held while they wait their turn
                for record in claimed:
                    if self.flow is not self.fallback:
                        self.remove_stand_ins(record)
                    results.append(self.process([record]))
        return results

    def undo(self, input_id: str, *, user_id: str, force: bool = False) -> list[MemoryChange]:
        """Revert every change one input caused (`store.undo`). Its managers are forgotten as done,
        so nothing marks its memories as written; `retry_failed` leaves an undone input alone."""
        changes = undo_input(self.store, input_id, user_id=user_id, force=force)
        self.inputs.forget_actors([input_id], lambda actor: True)
        return changes

    def remove_stand_ins(self, record: InputRecord) -> None:
        """For an input degraded by an earlier version, where the rules stood in for a failed model
        part (actors ending in `FALLBACK_SUFFIX`): delete what they inserted and forget that they
        ran, so the rules' and the model's managers run for it again without duplicates."""
        stale = self.store.inserted_by(record.user_id, FALLBACK_SUFFIX, [record.id])
        if stale:
            self.store.apply([DeleteOp(memory_id=m) for m in stale], user_id=record.user_id,
                             actor="retry", input_id=record.id)
        self.inputs.forget_actors([record.id], lambda actor: actor.endswith(FALLBACK_SUFFIX))


def _combined(results: Sequence[AddResult]) -> AddResult:
    """Several batches' results as one: every input, the worst status, each error named by its inputs."""
    statuses = {r.status for r in results}
    status = next((s for s in (InputStatus.failed, InputStatus.degraded) if s in statuses), InputStatus.processed)
    errors = [f"{', '.join(r.input_ids)}: {r.error}" for r in results if r.error]
    return AddResult(input_ids=[i for r in results for i in r.input_ids], status=status,
                     changes=[c for r in results for c in r.changes], mode=results[0].mode,
                     error="; ".join(errors) or None, routed=list(dict.fromkeys(t for r in results for t in r.routed)),
                     left_out=list(dict.fromkeys(t for r in results for t in r.left_out)), usage=results[0].usage,
                     rejected=[x for r in results for x in r.rejected])


def _images_of(records: Sequence[InputRecord], images: dict[str, Any] | None) -> dict[str, Any] | None:
    """The frames of these inputs among `images`."""
    if not images:
        return None
    return {r.id: images[r.id] for r in records if r.id in images} or None


def _grouped(records: Sequence[InputRecord], key: dict[str, Any]) -> list[list[InputRecord]]:
    """`records` split by `key[record id]`, in order of first appearance (one group when all agree)."""
    groups: dict[Any, list[InputRecord]] = {}
    for r in records:
        groups.setdefault(key.get(r.id), []).append(r)
    return list(groups.values())
