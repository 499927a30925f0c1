"""The LLM update flow (MIRIX: preliminary retrieval → routing → parallel update), rules first:

1. before any model call, the offline rules write what they write without a model: every turn as
   its own episode (the same record, neighbours' words and provenance), the secrets the vault rules
   find (redacted from everything after), and their core lines, facts, procedures and resources,
   each type under its own actor (`rules_actor`); so the model's store holds the offline store and
   what the model writes can only add;
2. one search fetches existing memories related to the batch, the rules' new ones included, so the
   model is shown them and a repeat of one is skipped;
3. the model's agents extract typed operations (`ModelExtractor`: routing, then the chosen managers
   in parallel, every write grounded in the batch or the listed memories);
4. each memory type's operations commit in one transaction; a failing type leaves no partial write;
5. a batch whose routing or any chosen manager failed is `degraded`, with the reasons: nothing of it
   is lost (the rules' memories stand) and `retry_failed()` gives the model's failed parts another go.

Two sequential model rounds on the critical path when every call is valid.
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

from autogen_core.models import ChatCompletionClient

from sqlalchemy.exc import OperationalError

from mirix_py.agents.definitions import AgentDefinition, manager_for
from mirix_py.agents.extractor import Extraction
from mirix_py.agents.flow import FlowResult
from mirix_py.agents.model_extractor import (
    DEFAULT_MAX_MANAGERS, DEFAULT_PROMPT_ORDER, MAX_IMAGES, ModelExtractor, found_secrets, pick_images,
    with_placeholders,
)
from mirix_py.agents.offline.flow import OfflineFlow, routed as rules_routed
from mirix_py.agents.offline.managers import PreparedBatch
from mirix_py.llm.bounds import CallBounds, ServerFeatures
from mirix_py.llm.metering import Meter
from mirix_py.settings import PromptOrder
from mirix_py.tools.ops import Op, UpdateOp
from mirix_py.records import InputRecord, MemoryChange, MemoryType, Operation, SearchHit
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher

VERBATIM_ACTOR = "verbatim_turns"  # the rules' episode of every turn, written before the model runs
RULES_ACTOR_SUFFIX = "_rules"


def rules_actor(memory_type: MemoryType) -> str:
    """Who wrote the rules' memories of a type in a model's flow ("semantic_rules")."""
    return memory_type.value + RULES_ACTOR_SUFFIX


VAULT_RULES_ACTOR = rules_actor(MemoryType.knowledge_vault)
RELATED_LIMIT = 30
TEXT_FIELDS = ("summary", "details", "content")  # where a rules' memory may hold a value
BATCH_TEXT_CHARS = 2000


class UpdateFlow:
    mode = "llm"

    def __init__(self, store: MemoryStore, searcher: Searcher, client: ChatCompletionClient,
                 definitions: dict[str, AgentDefinition], *, parallel: bool = True,
                 fallback: OfflineFlow | None = None, bounds: CallBounds | None = None,
                 features: ServerFeatures | None = None, max_managers: int = DEFAULT_MAX_MANAGERS,
                 prompt_order: PromptOrder = DEFAULT_PROMPT_ORDER) -> None:
        self.store = store
        self.searcher = searcher
        self.definitions = definitions
        self.extractor = ModelExtractor(store, client, definitions, parallel=parallel, bounds=bounds,
                                        features=features, max_managers=max_managers, prompt_order=prompt_order)
        self.fallback = fallback or OfflineFlow(store, searcher)  # the rules, which write first

    async def run(self, user_id: str, records: Sequence[InputRecord], meter: Meter, *,
                  input_id: str | None = None, skip_actors: frozenset[str] = frozenset(),
                  images: Mapping[str, Any] | None = None) -> FlowResult:
        """`images`: input id -> downscaled frame, sent along only when the model has vision."""
        ledger = [r.id for r in records]
        result = FlowResult()
        batch = await asyncio.to_thread(self.fallback.prepare, user_id, records)
        if batch.vault_ops and VAULT_RULES_ACTOR not in skip_actors:
            result.changes += await asyncio.to_thread(self.store.apply, batch.vault_ops, user_id=user_id,
                                                      actor=VAULT_RULES_ACTOR, input_id=input_id, ledger=ledger)
        if batch.messages and VERBATIM_ACTOR not in skip_actors:
            turns = await asyncio.to_thread(self._verbatim, batch, records, input_id)
            result.absorb(turns)
            if turns.failures:  # without the turns the batch fails, to be retried
                return result
        rules = await asyncio.to_thread(self._rules_first, batch, records, input_id, skip_actors)
        result.absorb(rules)
        related = await asyncio.to_thread(self._related, user_id, batch)
        done = {t for t in MemoryType if manager_for(self.definitions, t).name in skip_actors}
        extraction = await self.extractor.extract(batch, related=related, meter=meter, images=images)
        result.rejected += extraction.refused
        if extraction.routing_failed is not None:  # the rules' memories stand for the whole batch
            result.routed = rules_routed(batch)
            result.degraded.append(extraction.routing_failed)
            return result
        result.routed = list(extraction.routed)
        result.left_out = list(extraction.left_out)
        failed = dict(extraction.failed)
        # the vault's writes first: the store's secret guard then redacts any copy the others wrote
        order = sorted(extraction.routed, key=lambda t: t is not MemoryType.knowledge_vault)
        for memory_type in order:
            if memory_type in done or memory_type not in extraction.ops:
                continue
            actor = manager_for(self.definitions, memory_type).name
            try:
                result.changes += await asyncio.to_thread(self.store.apply, extraction.ops[memory_type],
                                                          user_id=user_id, actor=actor, input_id=input_id,
                                                          ledger=ledger)
            except OperationalError:  # the database, not this input: the batch is tried again (managers done skip)
                raise
            except Exception as exc:  # this type's writes failed; the others stand
                failed[memory_type] = f"{actor}: {type(exc).__name__}: {exc}"
        if failed:
            result.degraded.append("; ".join(failed.values()))
        found = found_secrets(extraction.ops.get(MemoryType.knowledge_vault, [])) \
            if MemoryType.knowledge_vault not in failed else {}
        if found:  # a value the model vaulted leaves no copy in what the rules kept before it ran
            result.changes += await asyncio.to_thread(self._redact_rules_writes, user_id, result.changes, found,
                                                      input_id)
        return result

    def _redact_rules_writes(self, user_id: str, changes: Sequence[MemoryChange], found: Mapping[str, str],
                             input_id: str | None) -> list[MemoryChange]:
        """Placeholders for `found` (value -> vault id) in the memories the rules inserted for this
        batch (the turns' episodes, facts, procedures, resources)."""
        ids = [c.memory_id for c in changes if c.operation is Operation.insert
               and c.actor != VAULT_RULES_ACTOR and (c.actor == VERBATIM_ACTOR or c.actor.endswith(RULES_ACTOR_SUFFIX))]
        ops: list[Op] = []
        for memory in self.store.get_many(ids, user_id=user_id).values() if ids else []:
            texts = {name: text for name in TEXT_FIELDS if isinstance(text := getattr(memory, name, None), str)}
            fields = {name: new for name, text in texts.items() if (new := with_placeholders(text, found)) != text}
            if fields:
                ops.append(UpdateOp(memory_id=memory.id, fields=fields))
        return self.store.apply(ops, user_id=user_id, actor=manager_for(self.definitions, MemoryType.knowledge_vault).name,
                                input_id=input_id) if ops else []

    def _verbatim(self, batch: PreparedBatch, records: Sequence[InputRecord], input_id: str | None) -> FlowResult:
        """Every turn as its own episode, exactly as the offline flow keeps it."""
        turns = Extraction(ops={MemoryType.episodic: self.fallback.ops(MemoryType.episodic, batch)},
                           routed=[MemoryType.episodic])
        return self.fallback.apply_extraction(batch, turns, records, input_id=input_id,
                                              actors={MemoryType.episodic: VERBATIM_ACTOR})

    def _rules_first(self, batch: PreparedBatch, records: Sequence[InputRecord], input_id: str | None,
                     skip_actors: frozenset[str]) -> FlowResult:
        """The rules' core lines, facts, procedures and resources, each type under `rules_actor`
        (the turns and the vault's secrets are written already)."""
        types: list[MemoryType] = [t for t in rules_routed(batch)
                                   if t not in (MemoryType.episodic, MemoryType.knowledge_vault)]
        wanted = [t for t in types if rules_actor(t) not in skip_actors]
        extraction = self.fallback.extract_types(batch, wanted)
        extraction.routed = types
        return self.fallback.apply_extraction(batch, extraction, records, input_id=input_id, skip_actors=skip_actors,
                                              actors={t: rules_actor(t) for t in types})

    def _related(self, user_id: str, batch: PreparedBatch) -> list[SearchHit]:
        query = " ".join(m.text for m in batch.messages)[:BATCH_TEXT_CHARS]
        if not query.strip():
            return []
        return self.searcher.search(query, user_id=user_id, limit=RELATED_LIMIT)


__all__ = ["MAX_IMAGES", "UpdateFlow", "VAULT_RULES_ACTOR", "VERBATIM_ACTOR", "pick_images", "rules_actor"]
