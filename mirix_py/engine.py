"""`Mirix`: the public facade wiring the store, the managers and the input log (awaitable:
`mirix_py.facade.async_mirix.AsyncMirix`).

    mx = Mirix(data_dir="./mem")                       # embedded SQLite + Chroma, offline rules
    mx.add("My name is Ada and I love hiking", user_id="ada")
    mx.search("hobbies", user_id="ada")
"""

from __future__ import annotations

import builtins
import logging
import time
from contextlib import nullcontext
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Coroutine, Iterable, Literal, Sequence

from mirix_py.agents import core_blocks, derived
from mirix_py.agents.user_locks import UserLocks, engine_call
from mirix_py.agents.batch_runner import BatchRunner
from mirix_py.agents.chat_turn import chat_turn
from mirix_py.agents.definitions import load_definitions
from mirix_py.agents.flows import build_flows
from mirix_py.llm.loop import LoopThread
from mirix_py.secrets.detection import find_secrets
from mirix_py.facade.background import BackgroundQueue
from mirix_py.facade.readers import Readers, ReadSide
from mirix_py.errors import CoreMemoryFull, InvalidInput, MemoryNotFound
from mirix_py.boundary.timezones import user_zone
from mirix_py.boundary.inputs import (
    check_storable, check_user, check_whole, normalize_add, parse_expiry, parse_memory_types, parse_range,
)
from mirix_py.tools.ops import DeleteOp, UpdateOp
from mirix_py.screens.engine_methods import ScreenshotsMixin
from mirix_py.records import (
    AddResult, ChatResponse, CloseReport, CoreMemory, HistoryEvent, InputRecord, InputStatus, Memory,
    MemoryBase, MemoryChange, MemoryType, Mode, Operation, SearchHit, SearchMethod,
)
from mirix_py.settings import Settings
from mirix_py.facade.maintenance import Maintenance, restore_into, unfinished_restore
from mirix_py.store import agent_sessions
from mirix_py.store.db import database_info, ping
from mirix_py.store.embeddings import Embedder, load_embedder
from mirix_py.store.erase import Erasure
from mirix_py.ingest.thumbnails import remove_thumbnails
from mirix_py.store.opening import open_store
from mirix_py.store.write_marks import replica_behind
from mirix_py.upkeep.doctor import warn_if_embedded_by_another
from mirix_py.secrets.redaction import guard_logs, scrub
from mirix_py.secrets.guard import SecretGuard
from mirix_py.store.inputs import new_worker_id
from mirix_py.store.memories import MemoryStore

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient

    from mirix_py.upkeep.doctor import DoctorReport
    from mirix_py.secrets.doctor import SecretReport
from mirix_py.store.search import Searcher
from mirix_py.store import writer_lock
from mirix_py.store.private import private_dir

log = logging.getLogger("mirix_py")

CLOSE_GRACE_S = 30.0  # close(timeout=T)'s waits end at T plus this: the rules and writes of what T cut


class _Default(Enum):
    """`embedder` left out: the one the settings name is loaded (None is "no embedder")."""

    EMBEDDER = "default"


_DEFAULT = _Default.EMBEDDER


def _check_actor(actor: str) -> None:
    """InvalidInput unless `actor` (who a history event says made the change, which `mirix show
    --history` prints) is text as any other a caller writes (`text.storable`)."""
    if not isinstance(actor, str):
        raise InvalidInput(f"actor must be a string, not {type(actor).__name__}")
    check_storable(actor, "actor")


class Mirix(ScreenshotsMixin):
    """Synchronous memory engine. Every method is safe to call from several threads."""

    _close_report: CloseReport | None = None  # set by `close`; `still_running` in it: not finished yet

    def __init__(self, data_dir: str | Path | None = None, *, settings: Settings | None = None,
                 embedder: Embedder | None | Literal[_Default.EMBEDDER] = _DEFAULT, database_url: str | None = None,
                 chroma_url: str | None = None, model_client: ChatCompletionClient | None = None,
                 agents_dir: str | Path | None = None, resume: bool = True, vector_store: str | None = None,
                 lock: bool = True, progress: Callable[[Iterable, int], Iterable] | None = None) -> None:
        """`lock=False` opens an embedded store next to the process that writes it (for reading:
        no writer lock is taken and nothing left pending is resumed; see `store/writer_lock.py`).
        `progress` (a tqdm-like `(iterable, total) -> iterable`) shows the vectors written at open: a
        restore's, or those a stopped process left."""
        self.settings = settings or Settings.from_env(
            data_dir=Path(data_dir) if data_dir is not None else None, database_url=database_url,
            chroma_url=chroma_url, vector_store=vector_store,
        )
        data = self.settings.data_dir
        if (unfinished := unfinished_restore(data)) is not None:  # half a backup's rows would read as a store
            raise InvalidInput(unfinished.advice(data))
        private_dir(data)  # owner-only, and so is everything the engine writes in it (`store/private.py`)
        sqlite = writer_lock.embedded_sql(self.settings.sql_url)
        self._release_writer_lock: Callable[[], Any] = (writer_lock.held_by(self, data) if lock and sqlite
                                                        else lambda: None)  # before anything is written
        guard_logs()  # the package's log lines carry placeholders, not secrets
        # the embedder this engine made (not one the caller passed, which other engines may share): let go on close
        self._own_embedder = load_embedder(self.settings.embedder) if embedder is _DEFAULT else None
        opened = open_store(self.settings.sql_url, data, sqlite_driver=self.settings.sqlite_driver,
                            vault_key=self.settings.vault_key, vector_store=self.settings.vector_store,
                            chroma_url=self.settings.chroma_url, guard=SecretGuard(find_secrets), redact=scrub,
                            embedder=self._own_embedder if embedder is _DEFAULT else embedder,
                            read_url=self.settings.database_read_url,
                            read_your_writes=self.settings.read_your_writes)
        self.engine, self.store, self.inputs = opened.engine, opened.memories, opened.inputs
        self.reading = opened.reading
        self.read_engine = None if self.reading is self.store else self.reading.engine  # a replica's
        warn_if_embedded_by_another(self.store, data)
        if lock and not sqlite and self.store.vectors is not None and self.store.vectors.kind == "chroma-embedded":
            self._release_writer_lock = writer_lock.held_by(self, data)  # PostgreSQL rows, embedded Chroma vectors
        embedded_vectors = self.store.vectors is not None and self.store.vectors.kind == "chroma-embedded"
        if not lock and (sqlite or embedded_vectors):  # the writer's vector index would not see this one's writes
            self.store.read_only = self.inputs.read_only = (
                "this engine was opened for reading (lock=False) beside the process that writes this data "
                "dir: write through that process (or its `mirix serve`)")
        self.worker_id = new_worker_id()
        # ingestion's own searches (repeats, supersessions) read what was just written: the primary;
        # `search`, chat and /context read `self.reading` (a replica when `database_read_url` is set)
        def searcher_of(store: MemoryStore) -> Searcher:
            return Searcher(store, session_leg=self.settings.session_leg, name_legs=self.settings.name_legs,
                            whole_hits=self.settings.whole_hits)

        self.searcher = searcher_of(self.store)
        self.read_searcher = self.searcher if self.reading is self.store else searcher_of(self.reading)
        self.definitions = load_definitions(agents_dir)  # validated at start, in both modes
        flows = build_flows(self.store, self.searcher, self.settings, self.definitions, model_client,
                            reading=(self.reading, self.read_searcher))
        self.model_client, self.offline_flow, self.chat_flow = flows.client, flows.offline, flows.chat
        # a user's searches, chats and /context: on the replica, or on the primary until it has the user's writes
        self.readers = Readers(ReadSide(self.searcher, flows.chat_on_primary),
                               None if self.read_engine is None else ReadSide(self.read_searcher, self.chat_flow),
                               self.store.write_marks)
        # numpy before this engine's threads start: a package imported for the first time by two threads at
        # once can come out half-initialised in one of them ("partially initialized module 'numpy._typing'",
        # seen with a user deleted while the first batch embedded ahead)
        import numpy  # noqa: F401
        self._loop = LoopThread()  # model clients stay on one event loop
        self.user_locks = UserLocks(self.engine)  # one writer of a user at a time (across engines on PostgreSQL)
        self.runner = BatchRunner(self.store, self.inputs, flows.update, fallback=flows.offline,
                                  run=self.run_on_model_loop, worker_id=self.worker_id, mode=self.mode,
                                  user_locks=self.user_locks)
        self._queue = BackgroundQueue(self._process_queued, batch_size=self.settings.batch_size,
                                      max_wait_s=self.settings.batch_seconds,
                                      sweep=self._sweep if resume and lock else None,
                                      release=self._release_held)
        # an input pending longer than `left_after_s` is in no engine's queue: any batch is due long before
        self.maintenance = Maintenance(self.engine, self.store, self.inputs, self._queue, worker_id=self.worker_id,
                                       data_dir=data, left_after_s=max(60.0, 2 * self.settings.batch_seconds))
        if resume and lock:
            self.maintenance.finish_vector_writes(progress)  # a restore's, a stopped process's (`store.vector_outbox`)
            self._queue.start()  # its idle sweep: inputs left pending, expired memories
            if self.inputs.recoverable():
                self.resume(wait=False)  # inputs a crashed or killed process left behind

    # ------------------------------------------------------------ status

    @property
    def mode(self) -> Mode:
        """'llm' with a model client, else 'offline' (deterministic rules, no generated prose)."""
        return "llm" if self.model_client is not None else "offline"

    def run_on_model_loop(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the engine's own event loop thread and return its result: model clients
        stay on one loop, so a caller driving the engine's model client (an evaluation's judge) runs here."""
        return self._loop.run(coro)

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            **database_info(self.engine),
            "searches_read": "replica" if self.read_engine is not None else "primary",
            # with a replica: a user's searches read the primary until the replica has the user's writes
            "read_your_writes": self.readers.marks is not None,
            "vectors": self.store.vectors.kind if self.store.vectors is not None else None,
            "embedder": self.store.embedder.name if self.store.embedder else None,
            "search": "hybrid" if self.searcher.vector_ready else "bm25-only",
            "whole_hits": self.searcher.whole_hits,
            "data_dir": str(self.settings.data_dir),
            "llm": None if self.model_client is None else type(self.model_client).__name__,
            "fact_parser": "spacy" if self.offline_flow.parser is not None else None,
        }

    # ------------------------------------------------------------ add

    @engine_call
    def add(self, content: str | Sequence[dict[str, Any]], *, user_id: str, occurred_at: datetime | str | None = None,
            source_id: str | None = None, kind: str = "text", wait: bool = True,
            expires_at: datetime | str | None = None) -> AddResult:
        """Log the input, then extract memories from it. Bad input raises InvalidInput and writes nothing.

        `wait=False` returns as soon as the input is logged; it is processed in the background, in
        batches with other queued inputs of the same user (`flush()` waits for them).
        `expires_at` (in the future): the memories made from this input are not read past it and are
        then deleted, except core blocks and what other inputs also said (`store.expiry`).
        """
        record = normalize_add(content, user_id=user_id, occurred_at=occurred_at, source_id=source_id, kind=kind,
                               max_chars=self.settings.max_input_chars, expires_at=expires_at)
        if not wait:
            self.inputs.append([record])
            self._queue.submit(record)
            return AddResult(input_ids=[record.id], status=InputStatus.pending, mode=self.mode)
        self.inputs.append([record], claimed_by=self.worker_id)
        try:
            result = self.runner.process([record])
        except Exception:  # logged, but its end could not be written (the database failing): finish it later
            if not self._queue_again([record]):  # the engine is closing: the next start, in any process, takes it
                self._give_back([record])
            raise
        result.write_position = self.write_position(user_id)
        return result

    def write_position(self, user_id: str) -> str | None:
        """With searches on a replica: where the primary's log stood after `user_id`'s last write through
        this engine, while the replica may not have replayed it (None when it has, or without a replica).
        Another process's `search`, `chat` or `/context` given it as `read_after` reads the primary until
        the replica has it."""
        check_user(user_id)
        marks = self.readers.marks
        return None if marks is None else marks.position(user_id)

    def flush(self, timeout: float | None = None) -> None:
        """Process every queued input now and wait until done."""
        self._flush_screenshots()
        self._queue.flush(timeout)

    def _queue_again(self, records: Sequence[InputRecord]) -> bool:
        """Hand logged inputs whose processing raised to the background worker, which tries them again;
        False when the engine is closing (they wait in the log for the next start)."""
        try:
            for record in records:
                self._queue.submit(record)
        except RuntimeError:
            return False
        return True

    def _release_held(self, records: Sequence[InputRecord]) -> None:
        self.inputs.release([r.id for r in records], self.worker_id)
        self.maintenance.handed_back(records)  # what `resume` queued: its claims renewed no more

    def _give_back(self, records: Sequence[InputRecord]) -> None:
        """Give held inputs back to the log as pending: held, a start in this process would wait for
        their lease to lapse (this worker is alive). Best effort: a database that fails here lets the
        lease lapse instead."""
        try:
            self._release_held(records)
        except Exception:  # the database is what failed: the claim lapses after its lease
            log.warning("could not give back %d input(s) to the log; their claim lapses after its lease",
                        len(records))

    def _sweep(self) -> None:
        """The background worker's idle sweep: inputs left pending, then memories and thumbnails past
        their expiry."""
        self.maintenance.take_up_left()
        self.maintenance.delete_expired()
        self.purge_thumbnails()

    @engine_call
    def delete_expired(self) -> int:
        """Delete the memories past their expiry now (the background worker does it every minute
        while idle; reads leave them out meanwhile). Returns how many."""
        return self.maintenance.delete_expired()

    def _process_queued(self, records: Sequence[InputRecord]) -> None:
        self.runner.process_queued(records)
        self.maintenance.recovered(records)

    @engine_call
    def resume(self, *, wait: bool = True, limit: int = 10_000) -> int:
        """`Maintenance.resume`: take over inputs left pending or claimed by a dead worker."""
        return self.maintenance.resume(wait=wait, limit=limit)

    @engine_call
    def work(self) -> int:
        """Claim inputs in batches (pending ones and those of dead workers) and process them until
        none are left; returns how many. Any number of processes may run this on one database."""
        return self.runner.work(self.settings.batch_size)

    @engine_call
    def retry_failed(self, *, user_id: str | None = None) -> list[AddResult]:
        """Run failed and degraded inputs again, one at a time. What the offline rules wrote in place
        of the model for an input is removed first (as history events), so an upgrade leaves no
        duplicates; an input that degrades again keeps the rules' memories. An input the user undid
        is left alone (add it again to have it remembered)."""
        return self.runner.retry_failed(user_id=user_id)

    def input_status(self, input_id: str, *, user_id: str | None = None) -> InputRecord:
        """Where a logged input stands. With `user_id`, another user's input reads as no input, as
        REST answers a key of other users."""
        record = self.inputs.get(input_id, user_id=user_id)
        if record is None:
            raise InvalidInput(f"no input with id {input_id!r}" + ("" if user_id is None else f" for user {user_id!r}"))
        return record

    # ------------------------------------------------------------ read

    def search(self, query: str, *, user_id: str, limit: int = 10,
               memory_types: Sequence[MemoryType | str] | None = None, start: datetime | None = None,
               end: datetime | None = None, method: SearchMethod | str = "hybrid",
               context: int | None = None, read_after: str | None = None) -> list[SearchHit]:
        """Memories for `query`; `context` N adds the turns around the first N matches (`Searcher.search`),
        by default `settings.search_context` (what every reader's path uses and `mirix eval locomo` measures);
        0 gives the matches only. `read_after`: a write position (`write_position`) the search must see."""
        check_user(user_id)
        since, until = parse_range(start, end)
        context = self.settings.search_context if context is None else check_whole(context, "context")
        # the replica's, or the primary's for a user's own writes and for a position the replica lacks
        searcher = self.readers.side(user_id, after=read_after).searcher
        return searcher.search(query, user_id=user_id, limit=check_whole(limit, "limit"),
                               memory_types=parse_memory_types(memory_types), start=since, end=until,
                               method=method, context=context)

    def get(self, memory_id: str, *, user_id: str, reveal: bool = False) -> MemoryBase:
        check_user(user_id)
        return self.store.get(memory_id, user_id=user_id, reveal=reveal)

    def list(self, *, user_id: str, memory_types: Sequence[MemoryType | str] | None = None, limit: int = 100,
             offset: int = 0, start: datetime | None = None, end: datetime | None = None,
             before: str | None = None) -> list[Memory]:
        """The user's memories, newest first (`store.memories.listing_order`), `limit` of them. `before`:
        the previous page's cursor (`MemoryPosition.of(page[-1]).cursor()`, REST's X-Mirix-Next-Cursor):
        the memories after that page's last one, none listed twice or left out while memories are
        written or deleted between pages (one whose `occurred_at` is edited meanwhile can move across
        the cursor: listed twice or not at all). `offset` (not with `before`) skips that many of the
        newest: kept for older callers, as pages counted so shift when the list changes."""
        check_user(user_id)
        if check_whole(limit, "limit") <= 0 or check_whole(offset, "offset") < 0:
            raise InvalidInput("limit must be positive and offset non-negative")
        if before is not None and not isinstance(before, str):
            raise InvalidInput(f"before must be a cursor (text), not {type(before).__name__}")
        since, until = parse_range(start, end)
        return self.store.list(user_id=user_id, memory_types=parse_memory_types(memory_types), limit=limit, offset=offset,
                               start=since, end=until, before=before)

    def history(self, memory_id: str, *, user_id: str) -> builtins.list[HistoryEvent]:
        check_user(user_id)
        return self.store.history(memory_id, user_id=user_id)

    # ------------------------------------------------------------ write

    @engine_call
    def update(self, memory_id: str, fields: dict[str, Any] | None = None, *, user_id: str,
               actor: str = "api", **more: Any) -> MemoryBase:
        """Change fields of a memory in place (its id stays); returns the new record. `expires_at`
        (a datetime or ISO string in the future, or None for never) sets when it expires. A new
        `summary` of an episode (the turn's words) takes back the core lines and facts restated from
        it alone, as `delete` does (each a history event of `actor`); nothing is derived from the new
        words."""
        check_user(user_id)
        _check_actor(actor)
        if fields is not None and not isinstance(fields, dict):
            raise InvalidInput(f"fields must be a dict of field names to new values, not {type(fields).__name__}")
        fields = {**(fields or {}), **more}
        if not fields:
            raise InvalidInput("nothing to update")
        check_storable(fields, "fields")  # what the caller sends; the store checks only what backends refuse
        if fields.get("expires_at") is not None:
            fields["expires_at"] = parse_expiry(fields["expires_at"])
        with self.user_locks(user_id):  # the checks and the write in one turn of the user (an undo's too)
            current = self.store.get(memory_id, user_id=user_id)  # MemoryNotFound past its expiry, as get says
            limit, held = fields.get("limit"), len(fields.get("value", getattr(current, "value", "")))
            if isinstance(current, CoreMemory) and isinstance(limit, int) and held > limit:
                raise InvalidInput(f"limit {limit} is below the {held} characters the block holds: shorten its value "
                                   "first")
            if isinstance(current, CoreMemory):
                for name in ("line_sources", "line_cites"):
                    if name in fields:
                        core_blocks.check_line_sources(fields[name], str(fields.get("value", current.value)), name)
            if isinstance(current, CoreMemory) and isinstance(fields.get("value"), str):
                fields.setdefault("line_sources", core_blocks.sources_after(current, fields["value"]))
                fields.setdefault("line_cites", core_blocks.cites_after(current, fields["value"]))
            if isinstance(current, CoreMemory) and "source_ids" not in fields \
                    and ("value" in fields or "line_cites" in fields):  # the block cites what its lines came from
                fields["source_ids"] = core_blocks.cited_after(current, str(fields.get("value", current.value)),
                                                               fields.get("line_cites", current.line_cites))
            rewrite = derived.rewrites_text(current, fields)
            restated = derived.taken_back(self.store, current) if rewrite else []
            self.store.apply([UpdateOp(memory_id=memory_id, fields=fields), *restated], user_id=user_id, actor=actor)
            if rewrite:
                self._say_anew(self.store.get(memory_id, user_id=user_id), actor)
        return self.store.get(memory_id, user_id=user_id)

    def _say_anew(self, episode: MemoryBase, actor: str) -> None:
        """The core lines and facts of a rewritten turn's new words (`derived.said_anew`), each type in its
        own transaction as ingestion writes them; rules that fail leave the rewrite as it stands."""
        try:
            input_id, made = derived.said_anew(self.offline_flow, self.inputs, episode)
            for ops in made.values():
                if ops:
                    self.store.apply(ops, user_id=episode.user_id, actor=actor, input_id=input_id)
        except Exception:  # the rewrite is written: a caller told it failed would write it again
            log.exception("the rules could not read the rewritten turn %s again", episode.id)

    @engine_call
    def delete(self, memory_id: str, *, user_id: str, actor: str = "api",
               erase: bool = False) -> builtins.list[MemoryChange]:
        """Delete a memory; deleting an episode also takes back the core lines, facts, procedures,
        resources and vault entries restated from it alone (`agents.derived`), each a history event of
        `actor`. Returns every change: the deletion first, then what was taken back with it.
        `erase=True` also takes the words of all of it out of the store, in the same transaction
        (`store.erase`): the history states of what it deleted are emptied and those of what it changed
        rewritten without them, and an input no turn or frame cites any more loses its text (and its
        thumbnail); an input still cited (a multi-message input's other turns) keeps its text but the
        erased turn's message (by its id, else by the time it was said), and so do the OpenAI Agents SDK
        session items that carried it (their text replaced); an embedded Chroma's files lose the erased
        vectors (`VectorIndex.purge`)."""
        check_user(user_id)
        _check_actor(actor)
        if not isinstance(erase, bool):
            raise InvalidInput(f"erase must be true or false, not {erase!r}")
        with self.user_locks(user_id):
            try:
                current = self.store.get(memory_id, user_id=user_id)  # MemoryNotFound past its expiry, as get says
            except MemoryNotFound:
                if not erase or (erasure := self._erasure_of_deleted(memory_id, user_id)) is None:
                    raise
                self.store.apply([], user_id=user_id, actor=actor, erase=erasure)
                changes: builtins.list[MemoryChange] = []
            else:
                erasure = Erasure(said_only_in=derived.held_alone(self.store, current),
                                  sessions=self._agent_sessions()) if erase else None
                changes = self._delete_now(current, actor, erasure)
            if erasure is not None and self.store.vectors is not None:
                self.store.vectors.purge(user_id)  # the erased vectors out of the index's files too
        if erasure is not None:
            remove_thumbnails(Path(self.settings.data_dir) / "thumbnails", user_id, erasure.thumbnails)
        return changes

    def _delete_now(self, current: MemoryBase, actor: str, erasure: Erasure | None) -> builtins.list[MemoryChange]:
        ops = [DeleteOp(memory_id=current.id), *derived.taken_back(self.store, current, deleting=True)]
        if erasure is not None:
            ops += derived.captions_unquoted(self.store, current.user_id, ops, erasure.said_only_in)
        return self.store.apply(ops, user_id=current.user_id, actor=actor, erase=erasure)

    def _erasure_of_deleted(self, memory_id: str, user_id: str) -> Erasure | None:
        """The erasure of a memory deleted before without `erase` (its history ends in its deletion): its
        history emptied, and for a turn, what it alone said, as its erasing deletion would have. None
        for a memory the user never had."""
        events = self.store.history(memory_id, user_id=user_id)  # MemoryNotFound: never had it
        last = events[-1]
        if last.operation is not Operation.delete or not last.before:
            return None
        alone = derived.cited_alone(self.store, user_id, memory_id, last.before.get("source_ids") or []) \
            if last.memory_type is MemoryType.episodic else frozenset()
        return Erasure(said_only_in=alone, emptied_ids=frozenset({memory_id}), sessions=self._agent_sessions())

    def _agent_sessions(self) -> agent_sessions.SessionStore | None:
        """The data dir's OpenAI Agents SDK sessions, whose items an erasure takes the erased messages out of."""
        return agent_sessions.kept_in(self.settings.data_dir, self.store.cipher)

    @engine_call
    def undo(self, input_id: str, *, user_id: str, force: bool = False) -> builtins.list[MemoryChange]:
        """Revert every change one input caused: its inserts deleted, its updates and deletions
        restored (recorded as history events of actor `undo:<input id>`). A memory changed by a later
        input makes it refuse (InvalidInput naming it) unless `force`; forced, a merge that folded one
        of its memories away is taken back whole (`store.undo`), and what an undo took back stays gone."""
        check_user(user_id)
        if not isinstance(input_id, str) or not input_id.strip():
            raise InvalidInput(f"input_id must be an input's id, not {input_id!r}")
        self.flush()  # a queued input's changes must exist before they can be taken back
        with self.user_locks(user_id):  # the history read and the reverts written in one turn of the user
            return self.runner.undo(input_id, user_id=user_id, force=force)

    @engine_call
    def delete_user(self, user_id: str) -> dict[str, int]:
        """Delete every memory, input, history event and usage row of the user, and what the vector
        index's files kept of their vectors (`VectorIndex.purge`). What this engine still
        had queued for them is dropped first (queued screenshots are written first, as frames whose text
        is logged), and a batch already running ends before the rows go, so nothing of theirs is
        written after: the deletion takes the user's turn (`agents.user_locks`) as each of their writes
        does, across engines on PostgreSQL; a batch another process runs on SQLite for their deleted
        inputs writes nothing (`InputsGone`)."""
        check_user(user_id)
        self._flush_screenshots()
        self._queue.forget_user(user_id)  # outside the user's turn: the batches it waits for take it
        with self.user_locks(user_id):  # a waited add, an update, another engine's batch of theirs ends first
            self._delete_user_screenshots(user_id)
            agent_sessions.delete_user(self.settings.data_dir, user_id)  # their agent sessions' items
            deleted = self.store.delete_user(user_id)
            if self.store.vectors is not None:
                self.store.vectors.purge(user_id)  # what the index's files kept of their vectors
            return deleted

    # ------------------------------------------------------------ core memory

    def core_memory(self, *, user_id: str) -> dict[str, CoreMemory]:
        """Both blocks; a block never written is returned empty (and unsaved)."""
        check_user(user_id)
        return core_blocks.core_memory(self.store, user_id)

    @engine_call
    def core_append(self, label: str, text: str, *, user_id: str, actor: str = "api") -> CoreMemory:
        check_user(user_id)
        _check_actor(actor)
        check_storable(text, "value")  # the new line only: a block written before controls were refused takes it
        with self.user_locks(user_id):  # the block read and rewritten whole: no other writer of the user meanwhile
            return core_blocks.append_line(self.store, user_id, core_blocks.checked_label(label), text, actor=actor,
                                           zone=user_zone(self.settings.timezone))

    @engine_call
    def core_rewrite(self, label: str, value: str, *, user_id: str, actor: str = "api") -> CoreMemory:
        check_user(user_id)
        _check_actor(actor)
        if not isinstance(value, str):
            raise InvalidInput(f"value must be a string, not {type(value).__name__}")
        check_storable(value, "value")
        with self.user_locks(user_id):
            return core_blocks.write_block(self.store, user_id, core_blocks.checked_label(label), value.strip(),
                                           actor=actor, zone=user_zone(self.settings.timezone))

    # ------------------------------------------------------------ export / import

    def export(self, dest: str | Path | IO[str], *, user_id: str | None = None) -> int:
        """Write memories as JSON lines. Vault secrets travel only as ciphertext of this data dir's key."""
        from mirix_py.upkeep.portability import export_to

        return export_to(self.store, dest, user_id=user_id)

    @engine_call
    def import_(self, src: str | Path | IO[str] | Iterable[str]) -> dict[str, int]:
        """Read JSON lines written by `export`. All lines are validated before any is written."""
        from mirix_py.upkeep.portability import import_from

        return import_from(self.store, src)

    # ------------------------------------------------------------ consistency

    def doctor(self, *, repair: bool = False, progress=None) -> "DoctorReport":
        """`Maintenance.doctor`: SQL against the vector index; `repair=True` fixes what it can."""
        with self.user_locks.call("doctor(repair=True)") if repair else nullcontext():
            return self.maintenance.doctor(repair=repair, progress=progress)

    def doctor_secrets(self, *, repair: bool = False) -> "SecretReport":
        """`Maintenance.doctor_secrets`: plaintext secrets an older version left; `repair=True` moves them."""
        with self.user_locks.call("doctor_secrets(repair=True)") if repair else nullcontext():
            return self.maintenance.doctor_secrets(repair=repair)

    def backup(self, dest: str | Path) -> dict[str, Any]:
        """A consistent backup while the engine runs; the vault key is not in it (keep it safe)."""
        return self.maintenance.backup(dest)

    @classmethod
    def restore(cls, src: str | Path, data_dir: str | Path | None = None, *, vault_key: str,
                database_url: str | None = None,
                embedder: Embedder | None | Literal[_Default.EMBEDDER] = _DEFAULT, progress=None,
                vector_store: str | None = None) -> "Mirix":
        """Restore a backup into an empty data directory (or empty database) and return the engine
        (`facade.maintenance.restore_into`); the vector index is written from the restored rows as the
        engine opens (a process stopped meanwhile leaves it to the next open)."""
        settings = restore_into(src, data_dir, vault_key=vault_key, database_url=database_url,
                                vector_store=vector_store)
        mx = cls(settings=settings, embedder=embedder, progress=progress)
        # not redundant with the open's replay of the restore's marks: it re-embeds pgvector vectors the
        # open dropped or kept from another embedder, and re-renders an older version's search texts
        mx.maintenance.doctor(repair=True, progress=progress)
        return mx

    # ------------------------------------------------------------ chat

    def chat(self, message: str, *, user_id: str, history: Sequence[dict[str, Any]] | None = None,
             remember: bool = True, read_after: str | None = None) -> ChatResponse:
        """Answer from memory (`agents.chat_turn`): topics, coarse retrieval over all six types, targeted
        search, citations. The exchange is fed back into memory in the background (`remember=False` skips that).
        `read_after`: as `search`'s."""
        check_user(user_id)
        limit = self.settings.max_input_chars
        if remember and isinstance(message, str) and len(message) > limit:  # refused before any work, not after
            raise InvalidInput(f"message is {len(message)} characters, over the limit of {limit} of what memory "
                               "keeps (settings.max_input_chars); remember=False asks without keeping it")

        def feed(exchange: builtins.list[dict[str, Any]]) -> builtins.list[str]:
            if sum(len(turn["content"]) for turn in exchange) > limit:
                exchange = exchange[:1]  # the question is kept; an answer too long to keep with it is not
            return self.add(exchange, user_id=user_id, wait=False).input_ids

        flow = self.readers.side(user_id, after=read_after).chat
        writes = remember or self.model_client is not None  # the exchange, a model's usage: close waits for it
        with self.user_locks.call(f"chat(user_id={user_id!r})") if writes else nullcontext():
            return chat_turn(flow, message, user_id=user_id, history=history, run=self.run_on_model_loop,
                             remember=feed if remember else None, ledger=self.store)

    def user_ids(self) -> builtins.list[str]:
        """Every user that has memories or inputs, sorted."""
        return self.store.user_ids()

    def ping(self) -> str:
        """Ask the database (and the read replica, when set) for `SELECT 1` (raises when one does not
        answer); returns its dialect name."""
        if self.read_engine is not None:  # searches fail without it: a health check asks both
            ping(self.read_engine)
        return ping(self.engine)

    def replica_behind(self) -> int | None:
        """Bytes of the primary's log the read replica has not replayed yet (0: caught up); None
        without a replica (or one not in recovery)."""
        return None if self.read_engine is None else replica_behind(self.engine, self.read_engine)

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        replica = {} if self.read_engine is None else {"replica_behind_bytes": self.replica_behind()}
        if self.readers.marks is not None:
            replica["searches_kept_on_primary"] = self.readers.marks.kept_on_primary
        expired = self.store.count(user_id=user_id, expired=True)  # deleted by the next sweep
        return {**self.describe(), **replica, "memories": self.store.count(user_id=user_id, expired=False),
                **({"expired_not_yet_deleted": expired} if expired else {}),
                "llm_usage": self.store.usage_totals(user_id=user_id)}

    def close(self, timeout: float | None = None, *, grace: float = CLOSE_GRACE_S) -> CloseReport:
        """Stop the engine, within about `timeout` seconds when given, and say what was left.

        From the moment it is called, every call that would write or call the model raises
        EngineClosed ("the engine is closed"); reads still answer until it returns.
        `timeout=None`: process everything queued (`add(wait=False)`, queued screenshots), then wait up
        to `settings.llm_timeout_s` (one model call's time) for the writes and model calls other threads
        have running, cut those still running at their model calls, and wait for all the rest to end.
        `timeout=T`: process what is queued for T seconds at most; what is still queued then is not
        processed here but stays pending in the input log (durable; a queued screenshot once its text
        is read and logged), and the next engine opened on this data dir, in any process, takes it up
        (`CloseReport.left_pending`). At T, what still runs is cut at its model calls (EngineClosed; its
        input stays logged for the next start), and close waits for the rest of it: the background
        batches' rules and writes (`waited_for`), the rules and writes a cut call handed to the engine's
        threads, and the calls in flight in other threads (`add`, `update`, an import...: each gives its
        input back from its own thread; `calls_waited_for`), so that none of them writes to the data dir
        after it returns. Those waits end at T + `grace` seconds at most: what still runs then (a rules
        pass that hangs, a batch waiting for a PostgreSQL lock another engine holds) is named in
        `CloseReport.still_running`, and the engine is not closed yet: it keeps the data dir's writer
        lock and its database open while they may write. Treat the data dir as in use: call `close()`
        again (it waits for them, then finishes closing) or end the process (what was cut stays pending
        in the input log for the next start)."""
        if self._close_report is not None and not self._close_report.still_running:
            return self._close_report  # closed already
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        cap = None if deadline is None else deadline + max(0.0, grace)

        def remaining() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        def capped() -> float | None:
            return None if cap is None else max(0.0, cap - time.monotonic())

        calls: builtins.list[str] = []
        if self._close_report is None:  # the first close; a later one waits for what this one left running
            calls = self.user_locks.refuse_calls()
            self._stop_screenshots(remaining())
            self._queue.close(timeout=remaining())
            self.maintenance.stop_renewing()  # after the queue: what `resume` queued is processed, or lapses from now
            if deadline is None:
                deadline = time.monotonic() + self.settings.llm_timeout_s
            if not self.user_locks.close(timeout=remaining()):
                log.warning("closing: writes of other threads still ran after the wait; their model calls are cut short")
            # model calls still running are cut here; the rules and writes they handed to threads are waited for
            self._loop.close(self.model_client, wait_s=remaining() or 0.0, stop_s=capped())
        still = self._wait_for_running(capped())
        screens_left, screens_waited, screens_still = self._close_screenshots(capped())  # no model call is left
        text_left, text_waited, text_still = self._queue.join(capped())
        if not self.user_locks.wait(capped()):
            still += self.user_locks.in_flight() or ["a write holding a user's turn"]
        still += [*screens_still, *text_still]
        before = self._close_report or CloseReport()
        report = self._close_report = CloseReport(
            left_pending=list(dict.fromkeys([*before.left_pending, *screens_left, *text_left])),
            waited_for=list(dict.fromkeys([*before.waited_for, *screens_waited, *text_waited])),
            calls_waited_for=[*before.calls_waited_for, *calls], still_running=still)
        if still:
            log.warning("closing: gave up waiting after timeout + grace; still running, and may write to the data "
                        "dir: %s. The engine keeps its writer lock and database until close() is called again",
                        "; ".join(still))
            return report
        self.searcher.close()
        if self.read_engine is not None:
            self.read_searcher.close()
            self.reading.close()  # its vector index is the primary's or a replica's pgvector: closing twice is safe
            self.read_engine.dispose()
        self.store.close()
        self.engine.dispose()
        if (unload := getattr(self._own_embedder, "unload", None)) is not None:
            unload()  # its model goes now, not when a full collection finds this engine unreachable
        self._release_writer_lock()  # after the last write
        if report.left_pending:
            log.info("closed: %d input(s) left pending in the input log for the next start", len(report.left_pending))
        return report

    def _wait_for_running(self, timeout: float | None) -> builtins.list[str]:
        """Closing, once model calls are cut: wait up to `timeout` seconds (None: for good) for the
        rules and writes the cut coroutines handed to the event loop's threads; what still runs then."""
        jobs = self._loop.join(timeout)
        return [f"{jobs} job(s) of rules or writes that cut batches or calls handed to the engine's threads"] if jobs else []

    def __enter__(self) -> "Mirix":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


setattr(Mirix, "import", Mirix.import_)


__all__ = ["Mirix", "InvalidInput", "MemoryNotFound", "CoreMemoryFull"]
