"""The LLM update flow (MIRIX: preliminary retrieval → routing → parallel update):

1. secrets found by the vault rules are stored and redacted before any model sees the batch;
2. one search fetches existing memories related to the batch;
3. the meta memory manager picks memory types (one call);
4. the chosen managers run concurrently (`asyncio.gather`), each a tool-calling agent whose tools
   collect validated operations; then each manager's operations commit in one transaction. The
   vault's manager, when chosen, goes first and alone: the others see what it found as placeholders;
5. a failing manager leaves the others' writes and no partial write of its own;
6. what the model could not do is done by the offline rules (`OfflineFlow`): the whole batch when
   routing failed, a failed manager's memory type, and an episode for every message that no memory
   the model wrote cites. A batch whose routing or manager failed is then `degraded`, with the
   reasons, and `retry_failed()` gives the model another go; messages the model's memories left
   uncited are listed in `kept_by_rules` (the model's work stood, so the batch is processed).

Two sequential LLM rounds on the critical path when every model call is valid. Every call is
bounded (`CallBounds`) and uses the protocol features the server takes (`ServerFeatures`).

Screenshot batches: with a vision-capable model (`model_info["vision"]`) and frames passed as
`images` (input id -> downscaled PIL image, held in memory for the batch only), the router and
every manager get an autogen `MultiModalMessage`: each input's line (time, app, window, OCR text
after secret redaction) followed by its frame. Without vision, or without frames (a batch resumed
after a crash: frames are never stored), they get the OCR text alone.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from autogen_agentchat.messages import MultiModalMessage
from autogen_core.models import ChatCompletionClient

from mirix_py.agents import core_blocks
from mirix_py.agents.definitions import AgentDefinition, manager_for
from mirix_py.agents.flow import FlowResult
from mirix_py.agents.offline.flow import FALLBACK_SUFFIX, OfflineFlow
from mirix_py.agents.offline.managers import BatchMessage, PreparedBatch, prepare_batch
from mirix_py.agents.runner import AgentFailed, run_tool_agent
from mirix_py.agents.grounding import offered_memory_types
from mirix_py.agents.tools import OpCollector, RouteCollector, manager_tools
from mirix_py.llm.bounds import CallBounds, ServerFeatures
from mirix_py.llm.metering import Meter
from mirix_py.ops import InsertOp, Op
from mirix_py.records import CoreMemory, InputRecord, KnowledgeVaultMemory, MemoryChange, MemoryType, SearchHit
from mirix_py.store.guard import known_pattern
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher

VAULT_RULES_ACTOR = "knowledge_vault_rules"
RELATED_LIMIT = 30
BATCH_TEXT_CHARS = 2000
MAX_IMAGES = 8  # frames per model request; a longer batch sends evenly spaced ones


@dataclass
class ManagerOutcome:
    actor: str
    ops: list[Op] = field(default_factory=list)  # validated, not yet applied
    changes: list[MemoryChange] = field(default_factory=list)

    @property
    def cited(self) -> set[str]:
        """Source ids the manager's writes cite."""
        return cited_sources(self.ops)


def redacted_batch(batch: PreparedBatch, found: Mapping[str, str]) -> PreparedBatch:
    """The batch with every value the vault manager found (value -> vault id) as its placeholder."""
    pattern = known_pattern(list(found))
    if pattern is None:
        return batch
    messages = [replace(m, text=pattern.sub(lambda v: f"[vault:{found[v.group()]}]", m.text)) for m in batch.messages]
    return replace(batch, messages=messages)


def cited_sources(ops: Sequence[Op]) -> set[str]:
    """Source ids of the memories a manager's operations insert. An update or merge adds the batch's
    ids to a memory as provenance but need not hold what the new messages said (the local model kept
    updating one episode batch after batch), so it keeps no message."""
    return {s for op in ops if isinstance(op, InsertOp) for s in op.memory.source_ids}


def uncited_messages(batch: PreparedBatch, cited: set[str]) -> set[str]:
    """The messages no written memory cites, each by the id the model is shown (`[id=...]`)."""
    return {m.source_ids[-1] for m in batch.messages if m.source_ids and not set(m.source_ids) & cited}


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
        limit = core_blocks.block_limit(block)
        parts.append(f"<{label} chars={len(value)}/{limit}>\n{value}\n</{label}>")
    return "Current core memory:\n" + "\n".join(parts)


class UpdateFlow:
    mode = "llm"

    def __init__(self, store: MemoryStore, searcher: Searcher, client: ChatCompletionClient,
                 definitions: dict[str, AgentDefinition], *, parallel: bool = True,
                 fallback: OfflineFlow | None = None, bounds: CallBounds | None = None,
                 features: ServerFeatures | None = None) -> None:
        self.store = store
        self.parallel = parallel  # False only to measure the sequential baseline
        self.searcher = searcher
        self.client = client
        self.definitions = definitions
        self.fallback = fallback  # None: a failed part fails the batch instead of degrading it
        self.bounds = bounds or CallBounds()
        self.features = features or ServerFeatures()

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

        router = RouteCollector(offered=offered_memory_types([m.text for m in batch.messages]))
        reason = None
        try:
            await run_tool_agent(self.definitions["meta_memory_manager"], self.client, [router.tool()],
                                 multimodal_task(batch, frames) if frames else batch_text, meter,
                                 begin_round=router.errors.clear, force="trigger_memory_managers",
                                 bounds=self.bounds, structured=self.features, rejected=result.rejected)
        except AgentFailed as exc:
            reason = str(exc)
        if reason is None and router.chosen is None:
            reason = "meta_memory_manager: made no routing call"
        if reason is not None:
            return await self._stand_in(result, reason, user_id, records, input_id, skip_actors, types=None)
        result.routed = list(router.chosen or [])
        chosen = [t for t in result.routed if manager_for(self.definitions, t).name not in skip_actors]
        async def settle(types: Sequence[MemoryType], batch: PreparedBatch, text: str) -> list[Any]:
            """Run these managers (concurrently unless `parallel` is off), then commit each one's writes."""
            runs = [self._manager(t, user_id, batch, text, related, meter, frames, result.rejected) for t in types]
            if self.parallel:
                outcomes: list[Any] = list(await asyncio.gather(*runs, return_exceptions=True))
            else:
                outcomes = []
                for run in runs:
                    try:
                        outcomes.append(await run)
                    except Exception as exc:  # same shape as gather(return_exceptions=True)
                        outcomes.append(exc)
            for index, outcome in enumerate(outcomes):
                if isinstance(outcome, ManagerOutcome):
                    try:
                        outcome.changes = await asyncio.to_thread(self.store.apply, outcome.ops, user_id=user_id,
                                                                  actor=outcome.actor, input_id=input_id,
                                                                  ledger=ledger)
                    except Exception as exc:  # this manager's writes failed; the others' stand
                        outcomes[index] = exc
            return outcomes

        # the vault's manager goes first, alone: a value only the model found is then a placeholder in
        # every other manager's prompt, and the store's secret guard redacts any copy they still write
        first: list[MemoryType] = [t for t in chosen if t is MemoryType.knowledge_vault]
        rest: list[MemoryType] = [t for t in chosen if t is not MemoryType.knowledge_vault]
        outcomes = await settle(first, batch, batch_text) if first else []
        found = await asyncio.to_thread(self._vaulted, user_id, outcomes)
        if found and rest:
            batch = redacted_batch(batch, found)
            batch_text = render_batch(batch)
        outcomes += await settle(rest, batch, batch_text) if rest else []
        chosen = first + rest
        failed: list[MemoryType] = []
        reasons: list[str] = []
        cited: set[str] = set()
        for memory_type, outcome in zip(chosen, outcomes):
            if isinstance(outcome, ManagerOutcome):
                result.changes += outcome.changes
                cited |= outcome.cited
                continue
            failed.append(memory_type)
            if isinstance(outcome, AgentFailed):
                reasons.append(str(outcome))
            else:
                name = manager_for(self.definitions, memory_type).name
                reasons.append(f"{name}: {type(outcome).__name__}: {outcome}")
        if failed:
            await self._stand_in(result, "; ".join(reasons), user_id, records, input_id, skip_actors, types=failed)
        # every message must be searchable with its id, whatever the model wrote
        uncited = uncited_messages(batch, cited | self._fallback_cited(result, user_id))
        if uncited and self.fallback is not None:
            extra = await asyncio.to_thread(self.fallback.episodes_for, user_id, records, uncited, input_id=input_id)
            result.absorb(extra)
            result.kept_by_rules = sorted(uncited)
        return result

    def _vaulted(self, user_id: str, outcomes: Sequence[Any]) -> dict[str, str]:
        """Value -> vault id of the entries the vault manager's committed writes inserted."""
        ids = [c.memory_id for o in outcomes if isinstance(o, ManagerOutcome) for c in o.changes
               if c.operation.value == "insert"]
        entries = [self.store.get(i, user_id=user_id, reveal=True) for i in ids]
        return {e.secret_value: e.id for e in entries if isinstance(e, KnowledgeVaultMemory) and e.secret_value}

    def _fallback_cited(self, result: FlowResult, user_id: str) -> set[str]:
        """Source ids of the memories the offline stand-in wrote for this batch."""
        ids = [c.memory_id for c in result.changes if c.actor.endswith(FALLBACK_SUFFIX) and c.operation.value != "delete"]
        if not ids:
            return set()
        return {s for m in self.store.get_many(ids, user_id=user_id).values() for s in m.source_ids}

    async def _stand_in(self, result: FlowResult, reason: str, user_id: str, records: Sequence[InputRecord],
                        input_id: str | None, skip_actors: frozenset[str],
                        types: Sequence[MemoryType] | None) -> FlowResult:
        """The offline rules do what the model could not: every type (`types=None`) or the failed ones."""
        if self.fallback is None:
            result.failures.append(reason)
            return result
        if types is None:
            extra = await asyncio.to_thread(self.fallback.process, user_id, records, input_id=input_id,
                                            skip_actors=skip_actors, suffix=FALLBACK_SUFFIX)
            result.routed = extra.routed
        else:
            extra = await asyncio.to_thread(self.fallback.run_types, user_id, records, types, input_id=input_id,
                                            skip_actors=skip_actors)
        result.absorb(extra)
        result.degraded.append(reason)
        return result

    def _related(self, user_id: str, batch: PreparedBatch) -> list[SearchHit]:
        query = " ".join(m.text for m in batch.messages)[:BATCH_TEXT_CHARS]
        if not query.strip():
            return []
        return self.searcher.search(query, user_id=user_id, limit=RELATED_LIMIT)

    async def _manager(self, memory_type: MemoryType, user_id: str, batch: PreparedBatch, batch_text: str,
                       related: list[SearchHit], meter: Meter, frames: Mapping[str, Any],
                       rejected: list[str]) -> ManagerOutcome:
        definition = manager_for(self.definitions, memory_type)
        sources = list(dict.fromkeys(s for m in batch.messages for s in m.source_ids))
        listed = {h.memory.id for h in related if h.memory.memory_type is memory_type}
        collector = OpCollector(self.store, user_id, memory_type, sources,
                                default_occurred_at=batch.messages[0].occurred_at if batch.messages else None,
                                message_texts=[m.text for m in batch.messages],
                                listed_ids=None if memory_type is MemoryType.core else listed,
                                shown_ids=[m.source_ids[-1] for m in batch.messages if m.source_ids],
                                shown_texts=[batch_text, *(h.text for h in related)])
        if memory_type is MemoryType.core:
            context = render_core({label: collector._core_block(label) for label in ("human", "persona")})
        else:
            context = render_related(memory_type, related)
        tools = manager_tools(collector, definition.tools)
        task = multimodal_task(batch, frames, context) if frames else f"{batch_text}\n\n{context}"

        def uncited_in_round() -> list[str]:
            """Episodes must cite every message: the ones left out, for the correction round."""
            if memory_type is not MemoryType.episodic or collector.nothing:
                return []
            left = sorted(uncited_messages(batch, cited_sources(collector.ops)))
            return [f"no episode cites the message(s) {left}: put their ids in the source_ids of the episode they "
                    "belong to, or insert an episode for them"] if left else []

        await run_tool_agent(definition, self.client, tools, task, meter,
                             begin_round=collector.begin_round, rollback_round=collector.rollback_round,
                             bounds=self.bounds, structured=self.features, rejected=rejected,
                             check_first_round=uncited_in_round)
        return ManagerOutcome(actor=definition.name, ops=list(collector.ops))
