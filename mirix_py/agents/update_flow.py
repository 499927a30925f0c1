"""The LLM update flow (MIRIX: preliminary retrieval → routing → parallel update):

1. secrets found by the vault rules are stored and redacted before any model sees the batch;
2. one search fetches existing memories related to the batch;
3. the meta memory manager picks memory types (one call);
4. the chosen managers run concurrently (`asyncio.gather`), each an AssistantAgent whose tools
   collect validated operations; each manager's operations commit in one transaction;
5. a failing manager leaves the others' writes and no partial write of its own.

Two sequential LLM rounds on the critical path when every model call is valid.

Screenshot batches: with a vision-capable model (`model_info["vision"]`) and frames passed as
`images` (input id -> downscaled PIL image, held in memory for the batch only), the router and
every manager get an autogen `MultiModalMessage`: each input's line (time, app, window, OCR text
after secret redaction) followed by its frame. Without vision, or without frames (a batch resumed
after a crash: frames are never stored), they get the OCR text alone.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from autogen_agentchat.messages import MultiModalMessage
from autogen_core.models import ChatCompletionClient

from mirix_py.agents.definitions import AgentDefinition, manager_for
from mirix_py.agents.offline.managers import BatchMessage, PreparedBatch, prepare_batch
from mirix_py.agents.runner import AgentFailed, run_tool_agent
from mirix_py.agents.tools import OpCollector, RouteCollector, manager_tools
from mirix_py.llm.metering import Meter
from mirix_py.records import CoreMemory, InputRecord, MemoryChange, MemoryType, SearchHit
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher

VAULT_RULES_ACTOR = "knowledge_vault_rules"
RELATED_LIMIT = 30
BATCH_TEXT_CHARS = 2000
MAX_IMAGES = 8  # frames per model request; a longer batch sends evenly spaced ones


@dataclass
class FlowResult:
    changes: list[MemoryChange] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    routed: list[MemoryType] = field(default_factory=list)


def render_message(m: BatchMessage) -> str:
    ident = m.source_ids[-1] if m.source_ids else m.input_id
    where = ""
    if m.metadata.get("app"):
        where = f" [{m.metadata['app']}{' — ' + m.metadata['window_title'] if m.metadata.get('window_title') else ''}]"
    return f"[id={ident}] {m.occurred_at.isoformat(timespec='minutes')} {m.speaker}{where} ({m.kind.value}): {m.text}"


def render_batch(batch: PreparedBatch) -> str:
    lines = "\n".join(render_message(m) for m in batch.messages)
    return f"New inputs ({len(batch.messages)}):\n{lines}"


def pick_images(batch: PreparedBatch, images: Mapping[str, Any], limit: int = MAX_IMAGES) -> dict[str, Any]:
    """Input id -> image for at most `limit` inputs of the batch, evenly spaced in batch order."""
    ids = [i for i in dict.fromkeys(m.input_id for m in batch.messages) if images.get(i) is not None]
    if limit <= 0 or not ids:
        return {}
    if len(ids) > limit:
        step = (len(ids) - 1) / (limit - 1) if limit > 1 else 0
        ids = [ids[round(k * step)] for k in range(limit)]
    return {i: images[i] for i in ids}


def multimodal_task(batch: PreparedBatch, images: Mapping[str, Any], context: str | None = None,
                    *, source: str = "user") -> MultiModalMessage:
    """The batch as text and images: each input's line, then its frame (an autogen `Image`)."""
    from autogen_core import Image as AGImage

    parts: list[Any] = []
    text = [f"New inputs ({len(batch.messages)}), each screenshot followed by its frame:"]
    attached: set[str] = set()
    for m in batch.messages:
        text.append(render_message(m))
        image = images.get(m.input_id)
        if image is not None and m.input_id not in attached:
            attached.add(m.input_id)
            parts.append("\n".join(text))
            parts.append(AGImage.from_pil(image))
            text = []
    if context:
        text.append("\n" + context)
    if text:
        parts.append("\n".join(text))
    return MultiModalMessage(content=parts, source=source)


def render_related(memory_type: MemoryType, hits: Sequence[SearchHit]) -> str:
    rows = [f"[{h.memory.id}] {h.text}" for h in hits if h.memory.memory_type is memory_type]
    body = "\n".join(rows) if rows else "(none)"
    return f"Existing {memory_type.value} memories related to this batch (only these ids may be updated, merged or deleted):\n{body}"


def render_core(blocks: dict[str, CoreMemory | None]) -> str:
    parts = []
    for label in ("human", "persona"):
        block = blocks.get(label)
        value = block.value if block else ""
        limit = block.limit if block else CoreMemory.model_fields["limit"].default
        parts.append(f"<{label} chars={len(value)}/{limit}>\n{value}\n</{label}>")
    return "Current core memory:\n" + "\n".join(parts)


class UpdateFlow:
    def __init__(self, store: MemoryStore, searcher: Searcher, client: ChatCompletionClient,
                 definitions: dict[str, AgentDefinition], *, parallel: bool = True) -> None:
        self.store = store
        self.parallel = parallel  # False only to measure the sequential baseline
        self.searcher = searcher
        self.client = client
        self.definitions = definitions

    def vision(self) -> bool:
        """Whether the model takes images (`model_info["vision"]`)."""
        try:
            return bool(self.client.model_info["vision"])
        except (KeyError, TypeError):
            return False

    async def run(self, user_id: str, records: Sequence[InputRecord], meter: Meter, *,
                  input_id: str | None = None, skip_actors: frozenset[str] = frozenset(),
                  images: Mapping[str, Any] | None = None) -> FlowResult:
        """`images`: input id -> downscaled frame, sent along only when the model has vision."""
        ledger = [r.id for r in records]
        result = FlowResult()
        batch = prepare_batch(user_id, records)
        if batch.vault_ops and VAULT_RULES_ACTOR not in skip_actors:
            result.changes += await asyncio.to_thread(self.store.apply, batch.vault_ops, user_id=user_id,
                                                      actor=VAULT_RULES_ACTOR, input_id=input_id, ledger=ledger)
        batch_text = render_batch(batch)
        frames = pick_images(batch, images) if images and self.vision() else {}
        related = await asyncio.to_thread(self._related, user_id, batch)

        router = RouteCollector()
        try:
            await run_tool_agent(self.definitions["meta_memory_manager"], self.client, [router.tool()],
                                 multimodal_task(batch, frames) if frames else batch_text, meter,
                                 begin_round=router.errors.clear)
        except AgentFailed as exc:
            result.failures.append(str(exc))
            return result
        if router.chosen is None:
            result.failures.append("meta_memory_manager: made no routing call")
            return result
        result.routed = list(router.chosen)
        chosen = [t for t in router.chosen if manager_for(self.definitions, t).name not in skip_actors]
        runs = [self._manager(t, user_id, batch, batch_text, related, meter, input_id, ledger, frames)
                for t in chosen]
        if self.parallel:
            outcomes = await asyncio.gather(*runs, return_exceptions=True)
        else:
            outcomes = []
            for run in runs:
                try:
                    outcomes.append(await run)
                except Exception as exc:  # same shape as gather(return_exceptions=True)
                    outcomes.append(exc)
        for memory_type, outcome in zip(chosen, outcomes):
            if isinstance(outcome, AgentFailed):
                result.failures.append(str(outcome))
            elif isinstance(outcome, BaseException):
                name = manager_for(self.definitions, memory_type).name
                result.failures.append(f"{name}: {type(outcome).__name__}: {outcome}")
            else:
                result.changes += outcome
        return result

    def _related(self, user_id: str, batch: PreparedBatch) -> list[SearchHit]:
        query = " ".join(m.text for m in batch.messages)[:BATCH_TEXT_CHARS]
        if not query.strip():
            return []
        return self.searcher.search(query, user_id=user_id, limit=RELATED_LIMIT)

    async def _manager(self, memory_type: MemoryType, user_id: str, batch: PreparedBatch, batch_text: str,
                       related: list[SearchHit], meter: Meter, input_id: str | None,
                       ledger: Sequence[str], frames: Mapping[str, Any]) -> list[MemoryChange]:
        definition = manager_for(self.definitions, memory_type)
        sources = list(dict.fromkeys(s for m in batch.messages for s in m.source_ids))
        collector = OpCollector(self.store, user_id, memory_type, sources,
                                default_occurred_at=batch.messages[0].occurred_at if batch.messages else None)
        if memory_type is MemoryType.core:
            context = render_core({label: collector._core_block(label) for label in ("human", "persona")})
        else:
            context = render_related(memory_type, related)
        tools = manager_tools(collector, definition.tools)
        task = multimodal_task(batch, frames, context) if frames else f"{batch_text}\n\n{context}"
        await run_tool_agent(definition, self.client, tools, task, meter,
                             begin_round=collector.begin_round, rollback_round=collector.rollback_round)
        return await asyncio.to_thread(self.store.apply, collector.ops, user_id=user_id, actor=definition.name,
                                       input_id=input_id, ledger=ledger)
