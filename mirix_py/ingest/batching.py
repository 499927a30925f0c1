"""Grouping frames into memory updates: per app, at most N frames or T seconds each, in time order.

Pure: items in, lists of items out; time is passed in, never read from a clock. A batch closes
when its group reaches `max_frames`, when a frame arrives whose capture time is `max_seconds`
or more after the group's first frame, or when the group has waited `max_seconds` of wall time
(`due(now)`, for a capture loop that goes quiet). Batches come out in the order of their first
frame, each sorted by capture time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Generic, Hashable, Iterable, TypeVar

from mirix_py.ingest.defaults import BATCH_FRAMES, BATCH_SECONDS

__all__ = ["BatchPolicy", "FrameBatcher", "plan_batches"]

T = TypeVar("T")


@dataclass(frozen=True)
class BatchPolicy:
    """max_frames: frames per update; max_seconds: span of capture time (and wall-clock wait) per
    update; group_by_app: one group per app (else one group for the screen)."""

    max_frames: int = BATCH_FRAMES
    max_seconds: float = BATCH_SECONDS
    group_by_app: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.max_frames, int) or self.max_frames < 1:
            raise ValueError("max_frames must be a positive integer")
        if not self.max_seconds > 0:
            raise ValueError("max_seconds must be positive")


@dataclass
class _Group(Generic[T]):
    items: list[T] = field(default_factory=list)
    first_time: datetime | None = None
    opened_at: float = 0.0  # caller's monotonic clock when the first item arrived


class FrameBatcher(Generic[T]):
    """Streaming grouper. `key(item)` names the group (the app), `when(item)` its capture time,
    `owner(item)` whose it is: items of two owners never share a batch, whatever the policy
    (`group_by_app=False` drops the app from the group, never the owner)."""

    def __init__(self, policy: BatchPolicy = BatchPolicy(), *, key: Callable[[T], Hashable] = lambda item: None,
                 when: Callable[[T], datetime], owner: Callable[[T], Hashable] = lambda item: None) -> None:
        self.policy = policy
        app = key if policy.group_by_app else (lambda item: None)
        self._key: Callable[[T], Hashable] = lambda item: (owner(item), app(item))
        self._when = when
        self._groups: dict[Hashable, _Group[T]] = {}

    def __len__(self) -> int:
        return sum(len(g.items) for g in self._groups.values())

    def _close(self, key: Hashable) -> list[T]:
        group = self._groups.pop(key)
        return sorted(group.items, key=self._when)

    def add(self, item: T, *, now: float = 0.0) -> list[list[T]]:
        """Add one frame; returns the batches this closed (possibly none)."""
        out: list[list[T]] = []
        key = self._key(item)
        t = self._when(item)
        group = self._groups.get(key)
        if group is not None and group.first_time is not None and \
                abs((t - group.first_time).total_seconds()) >= self.policy.max_seconds:
            out.append(self._close(key))
            group = None
        if group is None:
            group = self._groups[key] = _Group(first_time=t, opened_at=now)
        group.items.append(item)
        if group.first_time is None or t < group.first_time:
            group.first_time = t
        if len(group.items) >= self.policy.max_frames:
            out.append(self._close(key))
        return _ordered(out, self._when)

    def due(self, now: float) -> list[list[T]]:
        """Batches whose group has waited `max_seconds` of the caller's clock since its first frame."""
        keys = [k for k, g in self._groups.items() if now - g.opened_at >= self.policy.max_seconds]
        return _ordered([self._close(k) for k in keys], self._when)

    def drain(self) -> list[list[T]]:
        """Every pending group as a batch (flush)."""
        return _ordered([self._close(k) for k in list(self._groups)], self._when)


def _ordered(batches: list[list[T]], when: Callable[[T], datetime]) -> list[list[T]]:
    return sorted((b for b in batches if b), key=lambda b: when(b[0]))


def plan_batches(items: Iterable[T], policy: BatchPolicy = BatchPolicy(), *,
                 key: Callable[[T], Hashable] = lambda item: None, when: Callable[[T], datetime],
                 owner: Callable[[T], Hashable] = lambda item: None) -> list[list[T]]:
    """All batches for a finite set of frames (a directory): sorted by time, then grouped."""
    batcher: FrameBatcher[T] = FrameBatcher(policy, key=key, when=when, owner=owner)
    out: list[list[T]] = []
    for item in sorted(items, key=when):
        out.extend(batcher.add(item))
    out.extend(batcher.drain())
    return _ordered(out, when)
