"""Extraction behind one protocol: a prepared batch in, typed operations out, per memory type.

Two implementations: the offline rules (`OfflineFlow.extract`) and a model's meta memory manager
with its memory managers (`ModelExtractor`). Neither writes; the update flows apply what they
return, one memory type per transaction, so the flows, not the extractors, decide what stands in
for what (`agents.update_flow`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from mirix_py.agents.offline.managers import PreparedBatch
from mirix_py.llm.meter import Meter
from mirix_py.tools.ops import Op
from mirix_py.records import MemoryType, SearchHit


@dataclass
class Extraction:
    """What an extractor made of one batch.

    `ops`: validated, not yet applied operations per memory type, in the order to apply them;
    `routed`: the memory types chosen for the batch; `left_out`: types the router also chose, past
    the number of managers a batch may run (not run: the rules' memories of them stand); `failed`:
    memory type -> why its part could not be done; `routing_failed`: why no type could be chosen
    (nothing else was tried); `refused`: single writes refused by validation or grounding, with their
    reasons (the rest of the type stands)."""

    ops: dict[MemoryType, list[Op]] = field(default_factory=dict)
    routed: list[MemoryType] = field(default_factory=list)
    left_out: list[MemoryType] = field(default_factory=list)
    failed: dict[MemoryType, str] = field(default_factory=dict)
    routing_failed: str | None = None
    refused: list[str] = field(default_factory=list)


class Extractor(Protocol):
    """Turns one prepared batch into typed operations; writes nothing."""

    name: str  # "rules" | "model"

    async def extract(self, batch: PreparedBatch, *, related: Sequence[SearchHit], meter: Meter,
                      types: Sequence[MemoryType] | None = None,
                      images: Mapping[str, Any] | None = None) -> Extraction:
        """`related`: existing memories the batch may update; `types`: only these memory types
        (None: the extractor routes); `images`: input id -> frame, for a model with vision."""
        ...


__all__ = ["Extraction", "Extractor"]
