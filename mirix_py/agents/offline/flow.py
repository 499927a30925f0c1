"""`OfflineFlow`: the update flow without a model, in the shape of the LLM flow.

The rules in `managers` play the meta memory manager (`route`) and the six memory managers (the
`*_ops` functions); this class gives them the store lookups they need and applies each manager's
operations in one transaction. It is the zero-configuration default, and the rules as an
`Extractor` (`extract`, `extract_types`), which a model's flow runs before the model.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Mapping, Sequence

from sqlalchemy.exc import OperationalError

from mirix_py.agents import core_blocks
from mirix_py.agents.extractor import Extraction
from mirix_py.agents.flow import FlowResult
from mirix_py.agents.offline import managers as rules
from mirix_py.agents.offline.rules.parsed import ClauseParser
from mirix_py.llm.meter import Meter
from mirix_py.tools.ops import InsertOp, Op
from mirix_py.records import (
    InputRecord, KnowledgeVaultMemory, Memory, MemoryType, ResourceMemory, SearchHit, SearchMethod, SemanticMemory,
)
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher

log = logging.getLogger("mirix_py")

FALLBACK_SUFFIX = " (offline fallback)"  # stores before rules-first: the rules stood in for a failed model part


def offline_actor(memory_type: MemoryType) -> str:
    return f"{memory_type.value}_memory_manager"


def routed(batch: rules.PreparedBatch, types: Sequence[MemoryType] | None = None) -> list[MemoryType]:
    """The types the rules route this batch to, only those in `types` when given."""
    return [t for t in rules.route(batch) if types is None or t in set(types)]


class OfflineFlow:
    """The offline update flow, and the rules as an `Extractor` (`extract`) for the LLM flow."""

    mode = "offline"
    name = "rules"

    def __init__(self, store: MemoryStore, searcher: Searcher, *, parser: ClauseParser | None = None,
                 zone: tzinfo | None = None) -> None:
        self.store = store
        self.searcher = searcher
        self.parser = parser  # what the fact rules also read sentences with (`rules.parsed`); None: patterns only
        self.zone = zone  # MIRIX_TIMEZONE: the clock of what is said at a time given in UTC, or at none (`prepare_batch`)

    # ------------------------------------------------------------ Flow

    async def run(self, user_id: str, records: Sequence[InputRecord], meter: Meter, *,
                  input_id: str | None = None, skip_actors: frozenset[str] = frozenset(),
                  images: Mapping[str, Any] | None = None) -> FlowResult:
        """The rules read text only: `images` are ignored; `meter` records no call."""
        return await asyncio.to_thread(self.process, user_id, records, input_id=input_id, skip_actors=skip_actors)

    def process(self, user_id: str, records: Sequence[InputRecord], *, input_id: str | None = None,
                skip_actors: frozenset[str] = frozenset()) -> FlowResult:
        """The new episodes' embeddings start first, in the background, and the other managers' rules
        run meanwhile (`MemoryStore.embed_ahead`): embedding is most of an input's cost."""
        batch = self.prepare(user_id, records)
        ready: dict[MemoryType, list[Op]] = {}
        if batch.messages and offline_actor(MemoryType.episodic) not in skip_actors:
            try:
                ready[MemoryType.episodic] = self.ops(MemoryType.episodic, batch)
            except Exception:  # `_apply` asks again, and records the failure as that manager's
                log.debug("episodic rules failed ahead of the write", exc_info=True)
        started = self.store.embed_ahead([op.memory.embedding_text() for op in ready.get(MemoryType.episodic, [])
                                          if isinstance(op, InsertOp)])
        try:
            return self._apply(batch, rules.route(batch), records, input_id=input_id, skip_actors=skip_actors,
                               ready=ready)
        finally:
            self.store.drop_ahead(started)

    # ------------------------------------------------------------ parts

    def prepare(self, user_id: str, records: Sequence[InputRecord]) -> rules.PreparedBatch:
        return rules.prepare_batch(user_id, records, known_secrets=lambda: self.known_secrets(user_id),
                                   find_resource=lambda title: self.resource_by_title(user_id, title),
                                   find_people=lambda words: self.semantic_matching(user_id, words),
                                   parser=self.parser, zone=self.zone)

    def ops(self, memory_type: MemoryType, batch: rules.PreparedBatch) -> list[Op]:
        user_id = batch.user_id
        if memory_type is MemoryType.knowledge_vault:
            return batch.vault_ops
        if memory_type is MemoryType.episodic:
            return rules.episodic_ops(batch, self.recent(batch, memory_type))
        if memory_type is MemoryType.core:
            return rules.core_ops(batch, lambda label: core_blocks.find_block(self.store, user_id, label))
        if memory_type is MemoryType.semantic:
            return rules.semantic_ops(batch, lambda name: self.semantic_by_name(user_id, name))
        if memory_type is MemoryType.procedural:
            return rules.procedural_ops(batch, self.recent(batch, memory_type))
        return rules.resource_ops(batch, self.recent(batch, memory_type))

    async def extract(self, batch: rules.PreparedBatch, *, related: Sequence[SearchHit] = (),
                      meter: Meter | None = None, types: Sequence[MemoryType] | None = None,
                      images: Mapping[str, Any] | None = None) -> Extraction:
        """The `Extractor` protocol: the rules route (then keep only `types`, if given) and extract.
        `related`, `meter` and `images` are not used: the rules look memories up themselves."""
        return await asyncio.to_thread(self.extract_types, batch, routed(batch, types))

    def extract_types(self, batch: rules.PreparedBatch, types: Sequence[MemoryType],
                      ready: Mapping[MemoryType, list[Op]] | None = None) -> Extraction:
        """The rules' operations for these types (those in `ready` as given); a type whose rules
        raise is `failed`, the others stand."""
        out = Extraction(routed=list(types))
        for memory_type in types:
            try:
                ops = (ready or {}).get(memory_type)
                out.ops[memory_type] = self.ops(memory_type, batch) if ops is None else ops
            except Exception as exc:
                log.exception("%s failed", offline_actor(memory_type))
                out.failed[memory_type] = f"{offline_actor(memory_type)}: {type(exc).__name__}: {exc}"
        return out

    def apply_extraction(self, batch: rules.PreparedBatch, extraction: Extraction, records: Sequence[InputRecord], *,
                         input_id: str | None, skip_actors: frozenset[str] = frozenset(),
                         actors: Mapping[MemoryType, str] | None = None) -> FlowResult:
        """Each type's operations in one transaction, in routing order, under its actor (`actors`, else
        the offline manager's name); a type that fails leaves the others' writes."""
        result = FlowResult(routed=list(extraction.routed))
        result.failures += list(extraction.failed.values())
        ledger = [r.id for r in records]
        for memory_type in extraction.routed:
            actor = (actors or {}).get(memory_type) or offline_actor(memory_type)
            if actor in skip_actors or memory_type not in extraction.ops:
                continue
            try:
                result.changes += self.store.apply(extraction.ops[memory_type], user_id=batch.user_id, actor=actor,
                                                   input_id=input_id, ledger=ledger)
            except OperationalError:  # the database, not this input: the batch is tried again (managers done skip)
                raise
            except Exception as exc:  # one manager failing leaves the others' writes intact
                log.exception("%s failed", actor)
                result.failures.append(f"{actor}: {type(exc).__name__}: {exc}")
        return result

    def _apply(self, batch: rules.PreparedBatch, types: Sequence[MemoryType], records: Sequence[InputRecord], *,
               input_id: str | None, skip_actors: frozenset[str],
               ready: Mapping[MemoryType, list[Op]] | None = None) -> FlowResult:
        """Each routed manager's ops (those in `ready` as given) applied in turn."""
        wanted = [t for t in types if offline_actor(t) not in skip_actors]
        extraction = self.extract_types(batch, wanted, ready)
        extraction.routed = list(types)
        return self.apply_extraction(batch, extraction, records, input_id=input_id, skip_actors=skip_actors)

    # ------------------------------------------------------------ lookups

    def recent(self, batch: rules.PreparedBatch, memory_type: MemoryType) -> rules.RepeatLookup:
        """What the memories a manager would insert could be repeats of: the user's memories of this
        type from around the batch's time (`REPEAT_WINDOW` either side), every one of them however busy
        the day. Each row of the window is read light and tested by its keys (`rules.repeat_keys`);
        only those sharing a key with a new memory are loaded, in the window's order."""

        def lookup(memories: Sequence[Memory]) -> list[Memory]:
            wanted = frozenset().union(*(rules.repeat_keys(m) for m in memories))
            if not wanted or not batch.messages:
                return []
            times = [m.occurred_at for m in batch.messages]
            rows = self.store.fields_between(user_id=batch.user_id, memory_type=memory_type,
                                             start=_shifted(min(times), -rules.REPEAT_WINDOW),
                                             end=_shifted(max(times), rules.REPEAT_WINDOW))
            ids = [memory_id for memory_id, fields in rows
                   if not wanted.isdisjoint(rules.stored_repeat_keys(batch.user_id, memory_type, fields))]
            found = self.store.get_many(ids, user_id=batch.user_id)
            return [found[memory_id] for memory_id in ids if memory_id in found]

        return lookup

    def known_secrets(self, user_id: str) -> dict[tuple[str, str], str]:
        """(entry type, value) -> vault id: a secret already stored is not stored again."""
        vault = self.store.list(user_id=user_id, memory_types=[MemoryType.knowledge_vault.value],
                                limit=100_000, reveal=True)
        return {(m.entry_type, m.secret_value): m.id for m in vault
                if isinstance(m, KnowledgeVaultMemory) and m.secret_value}

    def resource_by_title(self, user_id: str, title: str) -> ResourceMemory | None:
        """A screenshot window's resource from earlier batches: only what is new on screen is memorised.
        A framework store's item of that title is the app's (`rules.store_item`), not the window's."""
        hits = self.searcher.search(f"{title} (", user_id=user_id, limit=10,
                                    memory_types=[MemoryType.resource], method="string")
        for hit in hits:
            if isinstance(hit.memory, ResourceMemory) and hit.memory.title == title and not rules.store_item(hit.memory):
                return hit.memory
        return None

    def semantic_matching(self, user_id: str, words: Sequence[str]) -> list[SemanticMemory]:
        """The semantic memories that hold any of `words` (relation words: "brother", "mum mother")."""
        hits = self.searcher.search(" ".join(words), user_id=user_id, limit=20, memory_types=[MemoryType.semantic],
                                    method=SearchMethod.bm25)
        return [hit.memory for hit in hits if isinstance(hit.memory, SemanticMemory)]

    def semantic_by_name(self, user_id: str, name: str) -> SemanticMemory | None:
        """The memory the rules hold a name's facts in. A framework store's item of that name is the
        app's (`rules.store_item`): the rules keep their own memory of the name beside it."""
        hits = self.searcher.search(name, user_id=user_id, limit=20, memory_types=[MemoryType.semantic],
                                    method=SearchMethod.bm25)
        for hit in hits:
            memory = hit.memory
            if isinstance(memory, SemanticMemory) and memory.name.casefold() == name.casefold() \
                    and not rules.store_item(memory):
                return memory
        return None


def _shifted(when: datetime, delta: timedelta) -> datetime:
    """`when + delta`, held at the calendar's edge (a memory an API update dated year 1 still has a
    window to be looked up in)."""
    try:
        return when + delta
    except OverflowError:
        edge = datetime.min if delta < timedelta(0) else datetime.max
        return edge.replace(tzinfo=timezone.utc)
