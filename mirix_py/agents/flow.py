"""The one interface of the update flows: a batch of inputs in, typed writes and a result out.

`OfflineFlow` (deterministic rules) and `UpdateFlow` (a model's agents) both implement `Flow`;
the engine holds one and calls `run`. Both extract through the `Extractor` protocol
(`agents.extractor`); `UpdateFlow` runs the rules before the model, so a model's failure never
costs an input and the model can only add.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Coroutine, Mapping, Protocol, Sequence

from mirix_py.llm.meter import Meter
from mirix_py.records import InputRecord, MemoryChange, MemoryType

RunCoroutine = Callable[[Coroutine[Any, Any, Any]], Any]  # waits for a coroutine on the engine's loop


@dataclass
class FlowResult:
    """What one batch did. `failures` are inputs' work that nobody could do (the batch is failed);
    `degraded` are the reasons a model's part failed (the batch is degraded; the rules' memories stand);
    `rejected` are model writes refused by validation or grounding (with their reasons)."""

    changes: list[MemoryChange] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    routed: list[MemoryType] = field(default_factory=list)
    left_out: list[MemoryType] = field(default_factory=list)  # routed past the managers a batch may run
    degraded: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    def absorb(self, other: "FlowResult") -> None:
        self.changes += other.changes
        self.failures += other.failures
        self.degraded += other.degraded
        self.rejected += other.rejected


class Flow(Protocol):
    """Turns one batch of one user's inputs into memory writes."""

    mode: str  # "offline" | "llm"

    async def run(self, user_id: str, records: Sequence[InputRecord], meter: Meter, *,
                  input_id: str | None = None, skip_actors: frozenset[str] = frozenset(),
                  images: Mapping[str, Any] | None = None) -> FlowResult:
        """`input_id`: the single input of the batch (for history events); `skip_actors`: managers
        whose writes for these inputs already committed (crash recovery); `images`: input id ->
        downscaled frame, for a model with vision."""
        ...
