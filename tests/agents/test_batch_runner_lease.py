"""A batch that runs longer than the claim lease (a slow model) stays its worker's: no other worker
takes its inputs over meanwhile, and each is processed once."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime, timezone
from typing import Any, Sequence

from sqlalchemy import select
from sqlmodel import Session, col
from waiting import wait_for

from mirix_py.agents.batch_runner import BatchRunner
from mirix_py.agents.flow import Flow, FlowResult
from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.llm.meter import Meter
from mirix_py.records import InputKind, InputRecord, InputStatus
from mirix_py.store.inputs import InputLog
from mirix_py.store.tables import InputRow

WHEN = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
LEASE_S = 2.0  # short, so the batch outlives it; renewals come every third of it


class GatedFlow:
    """The offline flow, run only once the test opens `go`: a batch as slow as the test wants."""

    def __init__(self, inner: Flow) -> None:
        self.inner = inner
        self.mode = inner.mode
        self.go = threading.Event()
        self.started = threading.Event()
        self.runs: list[list[str]] = []  # the input ids of each run

    async def run(self, user_id: str, records: Sequence[InputRecord], meter: Meter, **kwargs: Any) -> FlowResult:
        self.runs.append([r.id for r in records])
        self.started.set()
        assert await asyncio.to_thread(self.go.wait, 60), "the test never let the batch go on"
        return await self.inner.run(user_id, records, meter, **kwargs)


def _claimed_at(log: InputLog, input_id: str) -> datetime | None:
    with Session(log.engine) as session:
        return session.execute(select(col(InputRow.claimed_at)).where(col(InputRow.id) == input_id)).scalar_one()


def test_a_batch_longer_than_the_lease_is_not_taken_over_and_runs_once(tmp_path, backend):
    with Mirix(tmp_path / "d", embedder=None, database_url=backend, resume=False) as mx:
        log = InputLog(mx.engine, mx.inputs.cipher, lease_s=LEASE_S)
        flow = GatedFlow(mx.offline_flow)
        runner = BatchRunner(mx.store, log, flow, fallback=mx.offline_flow, run=mx.run_on_model_loop,
                             worker_id=mx.worker_id, mode="offline", user_locks=mx.user_locks)
        frame = normalize_add("Zephyr budget review with Ines at 3pm", user_id="ada", occurred_at=WHEN,
                              source_id="frame0.png", kind="screenshot", max_chars=10_000,
                              metadata={"app": "Notes", "window_title": "Budget"})
        log.append([frame])
        processed: list[int] = []
        worker = threading.Thread(target=lambda: processed.append(runner.work(8)))
        worker.start()
        try:
            assert flow.started.wait(60)
            first_claimed_at = _claimed_at(log, frame.id)
            assert first_claimed_at is not None
            wait_for(lambda: _claimed_at(log, frame.id) - first_claimed_at >= log.lease, timeout_s=10 * LEASE_S)
            other = InputLog(mx.engine, mx.inputs.cipher, lease_s=LEASE_S)  # another process on the database
            assert other.claim("another-worker", include_stale=True) == []
            [seen] = other.by_source(InputKind.screenshot, user_id="ada", source_ids=["frame0.png"])
            assert seen.held  # what the screenshot re-ingestion's take-up reads
        finally:
            flow.go.set()
            worker.join(60)
        assert processed == [1] and flow.runs == [[frame.id]]
        assert log.get(frame.id).status is InputStatus.processed
        assert other.claim("another-worker", include_stale=True) == []
        episodes = [m for m in mx.list(user_id="ada", memory_types=["episodic"]) if frame.id in m.source_ids]
        assert len(episodes) == 1
