"""`ModelExtractor`: the meta memory manager and the memory managers as an `Extractor`.

1. the meta memory manager picks memory types (one call), from the types the batch can feed
   (`grounding.offered_memory_types`): its tool's schema enumerates only those, at most once each;
2. the chosen managers, at most `max_managers` of them (`within_limit`), run concurrently
   (`asyncio.gather`), each a tool-calling agent whose tools collect validated operations
   (`OpCollector`); nothing is written here. The vault's manager, when chosen, goes first and
   alone: the others see what it found as placeholders.

Every prompt lists only what the agent can use, and its order follows `prompt_order`
(`Settings.llm_prompt_order`): `batch_first` puts the batch at the start of every agent's prompt, so
a server that keeps only its previous prompt's state (llama-cpp-python, Ollama) reads the batch once
for the router and reuses it for each manager; `instructions_first` puts each agent's instructions and
tools first, for a server whose prefix cache holds many prompts (vLLM) and reuses them across batches.

Screenshot batches: with a vision-capable model (`model_info["vision"]`) and frames passed as
`images` (input id -> downscaled PIL image, held in memory for the batch only), the router and
every manager get an autogen `MultiModalMessage`: each input's line (time, app, window, OCR text
after secret redaction) followed by its frame. Without vision, or without frames, the OCR text alone.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Mapping, Sequence

from autogen_agentchat.messages import MultiModalMessage
from autogen_core.models import ChatCompletionClient

from mirix_py.agents import core_blocks
from mirix_py.agents.definitions import AgentDefinition, manager_for
from mirix_py.agents.extractor import Extraction
from mirix_py.agents.grounding import offered_memory_types
from mirix_py.agents.offline.managers import BatchMessage, PreparedBatch
from mirix_py.agents.runner import AgentFailed, run_tool_agent
from mirix_py.agents.tools import OpCollector, RouteCollector, manager_tools
from mirix_py.llm.bounds import CallBounds, ServerFeatures
from mirix_py.llm.metering import Meter
from mirix_py.tools.ops import InsertOp, Op
from mirix_py.records import CoreMemory, InputKind, KnowledgeVaultMemory, MemoryType, SearchHit
from mirix_py.secrets.guard import known_pattern
from mirix_py.settings import PromptOrder, Settings
from mirix_py.store.memories import MemoryStore

MAX_IMAGES = 8  # frames per model request; a longer batch sends evenly spaced ones
RELATED_PER_TYPE = 5  # existing memories a manager is shown
RELATED_LINE_CHARS = 160  # of each, on one line
WHOLE_COPIES = frozenset({MemoryType.resource, MemoryType.knowledge_vault})  # these copy from the batch by design
PREFERRED_TOOL = {MemoryType.core: "core_memory_append"}  # else insert_<type>: what a routed manager is for
# Which managers a batch keeps when its router picks more than it may run: the types only the batch's
# form offers (`grounding.offered_memory_types`) first, core last. A weak router picks every type it is
# offered, and core's lines are the ones the checks refuse most; the rules' memories of a type whose
# manager does not run stand, as when the router leaves it out.
MANAGER_PRIORITY = (MemoryType.knowledge_vault, MemoryType.procedural, MemoryType.resource,
                    MemoryType.episodic, MemoryType.semantic, MemoryType.core)
DEFAULT_MAX_MANAGERS: int = Settings.model_fields["llm_max_managers"].default
DEFAULT_PROMPT_ORDER: PromptOrder = Settings.model_fields["llm_prompt_order"].default
# The task's last line when the batch leads: no words a weak model would copy into a memory (asked
# to "record what the new inputs add", a 0.5B model wrote "New inputs added to memory: ..." episodes)
ROUTE_ASK = "Your call:"
RECORD_ASK = "Your tool calls:"


def within_limit(chosen: Sequence[MemoryType], limit: int) -> tuple[list[MemoryType], list[MemoryType]]:
    """(run, left out): at most `limit` of the chosen types, the first by `MANAGER_PRIORITY`; each list
    in the order chosen."""
    keep = set(sorted(dict.fromkeys(chosen), key=MANAGER_PRIORITY.index)[:max(limit, 0)])
    run = [t for t in dict.fromkeys(chosen) if t in keep]
    return run, [t for t in dict.fromkeys(chosen) if t not in keep]


def with_placeholders(text: str, found: Mapping[str, str]) -> str:
    """`text` with every value of `found` (value -> vault id) as its `[vault:id]` placeholder."""
    pattern = known_pattern(list(found))
    return text if pattern is None else pattern.sub(lambda v: f"[vault:{found[v.group()]}]", text)


def redacted_batch(batch: PreparedBatch, found: Mapping[str, str]) -> PreparedBatch:
    """The batch with every value the vault manager found as its placeholder."""
    if not found:
        return batch
    return replace(batch, messages=[replace(m, text=with_placeholders(m.text, found)) for m in batch.messages])


def render_message(m: BatchMessage) -> str:
    ident = m.source_ids[-1] if m.source_ids else m.input_id
    where = ""
    if m.metadata.get("app"):
        where = f" [{m.metadata['app']}{' — ' + m.metadata['window_title'] if m.metadata.get('window_title') else ''}]"
    kind = "" if m.kind.value == "text" else f" ({m.kind.value})"
    return f"[id={ident}] {m.local_at.isoformat(timespec='minutes')} {m.speaker}{where}{kind}: {m.text}"


def render_batch(batch: PreparedBatch) -> str:
    lines = "\n".join(render_message(m) for m in batch.messages)
    return f"New inputs ({len(batch.messages)}), to remember, not to answer:\n{lines}"


def batch_prompt(batch_text: str, context: str, ask: str, order: PromptOrder) -> tuple[str | None, str]:
    """(lead, task) of one agent's prompt. `batch_first`: the batch leads the system prompt, the same
    text for every agent of the batch, and the task is the agent's own context and `ask`.
    `instructions_first`: the task is the context, then the batch."""
    if order == "batch_first":
        return batch_text, f"{context}\n\n{ask}" if context else ask
    return None, f"{context}\n\n{batch_text}" if context else batch_text


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
    """The batch as text and images: the context first, then each input's line and its frame."""
    from autogen_core import Image as AGImage

    parts: list[Any] = []
    text = [context + "\n"] if context else []
    text.append(f"New inputs ({len(batch.messages)}), each screenshot followed by its frame:")
    attached: set[str] = set()
    for m in batch.messages:
        text.append(render_message(m))
        image = images.get(m.input_id)
        if image is not None and m.input_id not in attached:
            attached.add(m.input_id)
            parts.append("\n".join(text))
            parts.append(AGImage.from_pil(image))
            text = []
    if text:
        parts.append("\n".join(text))
    return MultiModalMessage(content=parts, source=source)


def related_of_type(memory_type: MemoryType, hits: Sequence[SearchHit], limit: int = RELATED_PER_TYPE) -> list[SearchHit]:
    return [h for h in hits if h.memory.memory_type is memory_type][:limit]


def render_related(memory_type: MemoryType, hits: Sequence[SearchHit]) -> str:
    """One short line per listed memory: its id and the start of its text."""
    rows = [f"[{h.memory.id}] {' '.join(h.text.split())[:RELATED_LINE_CHARS]}" for h in hits]
    body = "\n".join(rows) if rows else "(none)"
    return f"Existing {memory_type.value} memories (only these ids may be edited):\n{body}"


def render_core(blocks: dict[str, CoreMemory | None]) -> str:
    parts = []
    for label in ("human", "persona"):
        block = blocks.get(label)
        value = block.value if block else ""
        limit = core_blocks.block_limit(block)
        parts.append(f"<{label} chars={len(value)}/{limit}>\n{value}\n</{label}>")
    return "Current core memory:\n" + "\n".join(parts)


def earlier_turns(hits: Sequence[SearchHit]) -> list[tuple[str, str]]:
    """(id, text) of the related episodes: what a core line copied from an earlier message repeats."""
    return [(h.memory.id, h.memory.search_text()) for h in hits if h.memory.memory_type is MemoryType.episodic]


def user_speaks(m: BatchMessage) -> bool:
    """Whether a message is the user's own words: not a document, a screen's text, nor another role's turn."""
    return m.role == "user" and m.kind in (InputKind.text, InputKind.messages)


def found_secrets(ops: Sequence[Op]) -> dict[str, str]:
    """Value -> placeholder id of the vault entries these operations insert."""
    return {op.memory.secret_value: op.memory.id for op in ops
            if isinstance(op, InsertOp) and isinstance(op.memory, KnowledgeVaultMemory) and op.memory.secret_value}


class ModelExtractor:
    """A model's agents as an `Extractor`: routing, then the chosen managers in parallel."""

    name = "model"

    def __init__(self, store: MemoryStore, client: ChatCompletionClient, definitions: dict[str, AgentDefinition], *,
                 parallel: bool = True, bounds: CallBounds | None = None,
                 features: ServerFeatures | None = None, max_managers: int = DEFAULT_MAX_MANAGERS,
                 prompt_order: PromptOrder = DEFAULT_PROMPT_ORDER) -> None:
        self.store = store  # read only: the tools check ids and core blocks against it
        self.client = client
        self.definitions = definitions
        self.parallel = parallel  # False only to measure the sequential baseline
        self.bounds = bounds or CallBounds()
        self.features = features or ServerFeatures()
        self.max_managers = max_managers  # a routed batch runs at most this many (`within_limit`)
        self.prompt_order = prompt_order  # where the batch sits in each agent's prompt (`batch_prompt`)

    def model_actors(self) -> frozenset[str]:
        """The memory managers' names: who a model's writes are recorded as."""
        return frozenset(d.name for d in self.definitions.values() if d.role == "memory_manager")

    def vision(self) -> bool:
        """Whether the model takes images (`model_info["vision"]`)."""
        try:
            return bool(self.client.model_info["vision"])
        except (KeyError, TypeError):
            return False

    async def extract(self, batch: PreparedBatch, *, related: Sequence[SearchHit], meter: Meter,
                      types: Sequence[MemoryType] | None = None,
                      images: Mapping[str, Any] | None = None) -> Extraction:
        out = Extraction()
        frames = pick_images(batch, images) if images and self.vision() else {}
        if types is None:
            chosen = await self._route(batch, frames, meter, out)
            if chosen is None:
                return out
            chosen, out.left_out = within_limit(chosen, self.max_managers)
        else:
            chosen = list(types)
        out.routed = list(chosen)
        # the vault's manager goes first, alone: a value only the model found is then a placeholder in
        # every other manager's prompt, and the store's secret guard redacts any copy they still write
        first = [t for t in chosen if t is MemoryType.knowledge_vault]
        rest = [t for t in chosen if t is not MemoryType.knowledge_vault]
        await self._managers(first, batch, related, meter, frames, out)
        found = found_secrets(out.ops.get(MemoryType.knowledge_vault, []))
        if found and rest:
            batch = redacted_batch(batch, found)
        await self._managers(rest, batch, related, meter, frames, out)
        return out

    async def _route(self, batch: PreparedBatch, frames: Mapping[str, Any], meter: Meter,
                     out: Extraction) -> list[MemoryType] | None:
        router = RouteCollector(offered=offered_memory_types([m.text for m in batch.messages],
                                                             [m.kind.value for m in batch.messages]))
        task: Any
        if frames:
            lead, task = None, multimodal_task(batch, frames)
        else:
            lead, task = batch_prompt(render_batch(batch), "", ROUTE_ASK, self.prompt_order)
        try:
            await run_tool_agent(self.definitions["meta_memory_manager"], self.client, [router.tool()], task, meter,
                                 begin_round=router.errors.clear, force="trigger_memory_managers",
                                 bounds=self.bounds, structured=self.features, rejected=out.refused, lead=lead)
        except AgentFailed as exc:
            out.routing_failed = str(exc)
            return None
        if router.chosen is None:
            out.routing_failed = "meta_memory_manager: made no routing call"
            return None
        return list(router.chosen)

    async def _managers(self, types: Sequence[MemoryType], batch: PreparedBatch, related: Sequence[SearchHit],
                        meter: Meter, frames: Mapping[str, Any], out: Extraction) -> None:
        """Run these managers (concurrently unless `parallel` is off); collect each one's ops or failure."""
        runs = [self._manager(t, batch, related, meter, frames, out.refused) for t in types]
        if self.parallel:
            outcomes: list[Any] = list(await asyncio.gather(*runs, return_exceptions=True))
        else:
            outcomes = []
            for run in runs:
                try:
                    outcomes.append(await run)
                except Exception as exc:  # same shape as gather(return_exceptions=True)
                    outcomes.append(exc)
        for memory_type, outcome in zip(types, outcomes):
            if isinstance(outcome, list):
                out.ops[memory_type] = outcome
            elif isinstance(outcome, AgentFailed):
                out.failed[memory_type] = str(outcome)
            else:
                name = manager_for(self.definitions, memory_type).name
                out.failed[memory_type] = f"{name}: {type(outcome).__name__}: {outcome}"

    async def _manager(self, memory_type: MemoryType, batch: PreparedBatch, related: Sequence[SearchHit],
                       meter: Meter, frames: Mapping[str, Any], refused: list[str]) -> list[Op]:
        definition = manager_for(self.definitions, memory_type)
        sources = list(dict.fromkeys(s for m in batch.messages for s in m.source_ids))
        listed = related_of_type(memory_type, related)
        batch_text = render_batch(batch)
        # the turns are kept word for word already: a memory that repeats one is skipped as a duplicate;
        # a turn as its episode says it, speaker first, so a fact named after who said it ("Joanna: Later,
        # take care!") is that turn again, not a short text with one new word
        turns = [(m.source_ids[-1] if m.source_ids else m.input_id, f"{m.speaker}: {m.text}")
                 for m in batch.messages]
        collector = OpCollector(self.store, batch.user_id, memory_type, sources,
                                default_occurred_at=batch.messages[0].local_at if batch.messages else None,
                                message_texts=[m.text for m in batch.messages],
                                listed_ids=None if memory_type is MemoryType.core else {h.memory.id for h in listed},
                                shown_ids=[m.source_ids[-1] for m in batch.messages if m.source_ids],
                                shown_texts=[batch_text, *(h.text for h in listed)],
                                speakers={m.source_ids[-1]: m.speaker for m in batch.messages if m.source_ids},
                                turns=[(m.speaker, m.text) for m in batch.messages],
                                existing=[(h.memory.id, h.text) for h in listed]
                                + (turns if memory_type not in WHOLE_COPIES else [])
                                + (earlier_turns(related) if memory_type is MemoryType.core else []),
                                model_actors=self.model_actors(),
                                user_said=[m.text for m in batch.messages if user_speaks(m)])
        if memory_type is MemoryType.core:
            context = render_core({label: collector.core_block(label) for label in ("human", "persona")})
            collector.shown_texts = [*collector.shown_texts, context]  # the blocks were shown too
        elif memory_type is MemoryType.episodic:
            context = ""  # summaries only insert: no existing episode to list
        else:
            context = render_related(memory_type, listed)
        tools = manager_tools(collector, definition.tools)
        task: Any
        if frames:
            lead, task = None, multimodal_task(batch, frames, context)
        else:
            lead, task = batch_prompt(batch_text, context, RECORD_ASK, self.prompt_order)
        await run_tool_agent(definition, self.client, tools, task, meter,
                             begin_round=collector.begin_round, rollback_round=collector.rollback_round,
                             bounds=self.bounds, structured=self.features, rejected=refused,
                             prefer=PREFERRED_TOOL.get(memory_type, f"insert_{memory_type.value}"), lead=lead)
        # a write refused for what it said is the check working, not a failed manager: the rules wrote
        # this type before the model ran, the refusals are kept with the input, and a retry would send
        # the same prompt for the same reply
        refused += [f"{definition.name}: {r}" for r in collector.refused]
        return list(collector.ops)


__all__ = ["ModelExtractor", "found_secrets", "pick_images", "redacted_batch", "render_batch", "render_related",
           "with_placeholders", "MAX_IMAGES"]
