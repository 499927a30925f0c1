"""Batching: N frames or T seconds per update, per app, in capture-time order. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.ingest.batching import BatchPolicy, FrameBatcher, plan_batches

T0 = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)


@dataclass(frozen=True, order=True)
class F:
    app: str
    t: float  # seconds after T0

    @property
    def when(self) -> datetime:
        return T0 + timedelta(seconds=self.t)


def _batcher(n=3, secs=10.0, by_app=True):
    return FrameBatcher(BatchPolicy(max_frames=n, max_seconds=secs, group_by_app=by_app), key=lambda f: f.app,
                        when=lambda f: f.when)


def test_a_batch_closes_at_n_frames_of_one_app():
    b = _batcher(n=3)
    assert b.add(F("a", 0)) == [] and b.add(F("b", 1)) == [] and b.add(F("a", 2)) == []
    (batch,) = b.add(F("a", 3))
    assert batch == [F("a", 0), F("a", 2), F("a", 3)] and len(b) == 1


def test_a_batch_closes_when_capture_time_spans_t_seconds():
    b = _batcher(n=100, secs=10)
    b.add(F("a", 0))
    b.add(F("a", 5))
    (batch,) = b.add(F("a", 10.5))  # the new frame starts the next batch
    assert batch == [F("a", 0), F("a", 5)] and b.drain() == [[F("a", 10.5)]]


def test_due_uses_the_callers_clock_for_quiet_groups():
    b = _batcher(n=100, secs=10)
    b.add(F("a", 0), now=100.0)
    b.add(F("b", 1), now=105.0)
    assert b.due(109.0) == []
    assert b.due(110.0) == [[F("a", 0)]]
    assert b.due(200.0) == [[F("b", 1)]] and len(b) == 0


def test_batches_are_time_ordered_even_when_frames_arrive_out_of_order():
    b = _batcher(n=3)
    b.add(F("a", 5))
    b.add(F("a", 1))
    (batch,) = b.add(F("a", 3))
    assert [f.t for f in batch] == [1, 3, 5]


def test_without_grouping_apps_share_batches():
    b = _batcher(n=2, by_app=False)
    b.add(F("a", 0))
    assert b.add(F("b", 1)) == [[F("a", 0), F("b", 1)]]


def test_plan_batches_for_a_directory():
    frames = [F("chat", t) for t in (0, 2, 4, 6, 8)] + [F("mail", t) for t in (1, 30)] + [F("chat", 70)]
    batches = plan_batches(reversed(frames), BatchPolicy(max_frames=3, max_seconds=60), key=lambda f: f.app,
                           when=lambda f: f.when)
    assert batches == [[F("chat", 0), F("chat", 2), F("chat", 4)], [F("mail", 1), F("mail", 30)],
                       [F("chat", 6), F("chat", 8)], [F("chat", 70)]]
    assert sorted(f for b in batches for f in b) == sorted(frames)


@pytest.mark.parametrize("kwargs", [{"max_frames": 0}, {"max_seconds": 0}, {"max_frames": 2.5}])
def test_policy_is_validated(kwargs):
    with pytest.raises(ValueError):
        BatchPolicy(**kwargs)


@dataclass(frozen=True, order=True)
class Owned:
    user: str
    app: str
    t: float

    @property
    def when(self) -> datetime:
        return T0 + timedelta(seconds=self.t)


@pytest.mark.parametrize("by_app", [True, False])
def test_frames_of_two_owners_never_share_a_batch(by_app):
    frames = [Owned("ada", "Notes", 0), Owned("bob", "Notes", 1), Owned("ada", "Mail", 2), Owned("bob", "Mail", 3)]
    batches = plan_batches(frames, BatchPolicy(max_frames=10, max_seconds=60, group_by_app=by_app),
                           key=lambda f: f.app, owner=lambda f: f.user, when=lambda f: f.when)
    assert all(len({f.user for f in batch}) == 1 for batch in batches)
    assert sorted(f for batch in batches for f in batch) == sorted(frames)
    assert len(batches) == (4 if by_app else 2)
