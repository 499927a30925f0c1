"""`Mirix`: the public facade wiring the store, the managers and the input log (awaitable:
`mirix_py.async_mirix.AsyncMirix`).

    mx = Mirix(data_dir="./mem")                       # embedded SQLite + Chroma, offline rules
    mx.add("My name is Ada and I love hiking", user_id="ada")
    mx.search("hobbies", user_id="ada")
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import os
import threading
import time
import weakref
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Literal, Sequence

from mirix_py.agents import core_blocks
from mirix_py.agents.chat import ChatFlow, offline_topics, unusable_answer
from mirix_py.agents.core_blocks import CORE_LABELS
from mirix_py.agents.definitions import load_definitions
from mirix_py.agents.flow import Flow, FlowResult
from mirix_py.agents.offline.flow import OfflineFlow
from mirix_py.agents.offline.parser import load_fact_parser
from mirix_py.secrets.detection import find_secrets
from mirix_py.background import BackgroundQueue
from mirix_py.errors import CoreMemoryFull, InvalidInput, MemoryNotFound
from mirix_py.inputs import normalize_add
from mirix_py.ops import DeleteOp, InsertOp, Op, UpdateOp
from mirix_py.llm.bounds import CallBounds
from mirix_py.llm.meter import Meter
from mirix_py.screenshot_methods import ScreenshotsMixin
from mirix_py.records import (
    AddResult, ChatResponse, CoreLabel, CoreMemory, HistoryEvent, InputRecord, InputStatus, LLMUsage, Memory,
    MemoryBase, MemoryChange, MemoryType, Mode, SearchHit, SearchMethod,
)
from mirix_py.settings import Settings
from mirix_py.store.crypto import Cipher, load_or_create_key
from mirix_py.store.db import create_schema, make_engine
from mirix_py.store.embeddings import Embedder, load_embedder
from mirix_py.store.fulltext import fulltext_for
from mirix_py.store.sessions import sessions_for
from mirix_py.secrets.redaction import guard_logs, scrub
from mirix_py.secrets.guard import SecretGuard
from mirix_py.store.inputs import InputLog, new_worker_id
from mirix_py.store.questions import exchange_ids
from mirix_py.timezones import display_zone

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient

    from mirix_py.doctor import DoctorReport
    from mirix_py.secrets.doctor import SecretReport
from mirix_py.agents.offline.flow import FALLBACK_SUFFIX
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher
from mirix_py.store.vector_layout import open_vector_index
from mirix_py.store import writer_lock
from mirix_py.store.private import open_private, private_dir

log = logging.getLogger("mirix_py")


class _Default(Enum):
    """`embedder` left out: the one the settings name is loaded (None is "no embedder")."""

    EMBEDDER = "default"


_DEFAULT = _Default.EMBEDDER


class Mirix(ScreenshotsMixin):
    """Synchronous memory engine. Every method is safe to call from several threads."""

    def __init__(self, data_dir: str | Path | None = None, *, settings: Settings | None = None,
                 embedder: Embedder | None | Literal[_Default.EMBEDDER] = _DEFAULT, database_url: str | None = None,
                 chroma_url: str | None = None, model_client: ChatCompletionClient | None = None,
                 agents_dir: str | Path | None = None, resume: bool = True, vector_store: str | None = None,
                 lock: bool = True) -> None:
        """`lock=False` opens an embedded store next to the process that writes it (for reading:
        no writer lock is taken and nothing left pending is resumed; see `store/writer_lock.py`)."""
        self.settings = settings or Settings.from_env(
            data_dir=Path(data_dir) if data_dir is not None else None, database_url=database_url,
            chroma_url=chroma_url, vector_store=vector_store,
        )
        data = self.settings.data_dir
        private_dir(data)  # owner-only, and so is everything the engine writes in it (`store/private.py`)
        sqlite = writer_lock.embedded_sql(self.settings.sql_url)
        self._release_writer_lock = self._writer_lock(lock and sqlite)  # before anything is written
        guard_logs()  # the package's log lines carry placeholders, not secrets
        self.engine = make_engine(self.settings.sql_url, self.settings.sqlite_driver)
        create_schema(self.engine)
        fulltext = fulltext_for(self.engine)
        cipher = Cipher(load_or_create_key(data, self.settings.vault_key))
        if embedder is _DEFAULT:
            embedder = load_embedder(self.settings.embedder)
        vectors = open_vector_index(self.engine, requested=self.settings.vector_store,
                                    chroma_url=self.settings.chroma_url, chroma_dir=data / "chroma",
                                    embedder=embedder)
        if lock and not sqlite and vectors.kind == "chroma-embedded":
            self._release_writer_lock = self._writer_lock(True)  # PostgreSQL rows, embedded Chroma vectors
        self.store = MemoryStore(self.engine, fulltext, cipher, vectors, embedder,
                                 guard=SecretGuard(find_secrets))
        self.inputs = InputLog(self.engine, cipher, redact=scrub)
        self.worker_id = new_worker_id()
        self.searcher = Searcher(self.store, session_leg=self.settings.session_leg)
        self.definitions = load_definitions(agents_dir)  # validated at start, in both modes
        if model_client is None and self.settings.llm_configured:
            from mirix_py.llm.clients import build_model_client  # autogen only when a model is configured

            model_client = build_model_client(self.settings)
        self.model_client = model_client
        self.offline_flow = OfflineFlow(self.store, self.searcher, parser=load_fact_parser(self.settings.fact_parser))
        self.flow: Flow = self.offline_flow
        bounds = CallBounds(self.settings.llm_max_tokens, self.settings.llm_timeout_s)  # every model call
        if self.model_client is not None:
            from mirix_py.agents.update_flow import UpdateFlow  # autogen is needed only with a model
            from mirix_py.llm.bounds import ServerFeatures

            self.flow = UpdateFlow(self.store, self.searcher, self.model_client, self.definitions,
                                   fallback=self.offline_flow, bounds=bounds,
                                   features=ServerFeatures(self.settings.llm_structured_output))
        self.chat_flow = ChatFlow(self.store, self.searcher, self.model_client, self.definitions["chat_agent"],
                                  bounds=bounds, zone=display_zone(self.settings.timezone),
                                  context=self.settings.search_context)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._recovering: set[str] = set()  # ids of inputs `resume` took over, until processed
        self._queue = BackgroundQueue(self._process_queued, batch_size=self.settings.batch_size,
                                      max_wait_s=self.settings.batch_seconds)
        if resume and lock and self.inputs.recoverable():
            self.resume(wait=False)  # inputs a crashed or killed process left behind

    def _writer_lock(self, take: bool) -> Callable[[], Any]:
        """This process's writer lock on the data dir (`StoreBusy` when another process holds it),
        released by `close()`, or when an engine that failed to open is collected."""
        if not take:
            return lambda: None
        held = writer_lock.acquire(self.settings.data_dir)
        return weakref.finalize(self, held.release)

    # ------------------------------------------------------------ status

    @property
    def mode(self) -> Mode:
        """'llm' with a model client, else 'offline' (deterministic rules, no generated prose)."""
        return "llm" if self.model_client is not None else "offline"

    def _run(self, coro):
        """Run a coroutine on the engine's own event loop thread (model clients stay on one loop)."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._loop_thread = threading.Thread(target=self._loop.run_forever, name="mirix-loop", daemon=True)
            self._loop_thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "database": self.engine.dialect.name,
            "sqlite": getattr(self.engine.dialect.dbapi, "sqlite_version", None) if self.engine.dialect.name == "sqlite" else None,
            "vectors": self.store.vectors.kind if self.store.vectors is not None else None,
            "embedder": self.store.embedder.name if self.store.embedder else None,
            "search": "hybrid" if self.searcher.vector_ready else "bm25-only",
            "data_dir": str(self.settings.data_dir),
            "llm": None if self.model_client is None else type(self.model_client).__name__,
            "fact_parser": "spacy" if self.offline_flow.parser is not None else None,
        }

    # ------------------------------------------------------------ add

    def add(self, content: str | Sequence[dict[str, Any]], *, user_id: str, occurred_at: datetime | str | None = None,
            source_id: str | None = None, kind: str = "text", wait: bool = True) -> AddResult:
        """Log the input, then extract memories from it. Bad input raises InvalidInput and writes nothing.

        `wait=False` returns as soon as the input is logged; it is processed in the background, in
        batches with other queued inputs of the same user (`flush()` waits for them).
        """
        record = normalize_add(content, user_id=user_id, occurred_at=occurred_at, source_id=source_id, kind=kind,
                               max_chars=self.settings.max_input_chars)
        if not wait:
            self.inputs.append([record])
            self._queue.submit(record)
            return AddResult(input_ids=[record.id], status=InputStatus.pending, mode=self.mode)
        self.inputs.append([record], claimed_by=self.worker_id)
        return self._process([record])

    def flush(self, timeout: float | None = None) -> None:
        """Process every queued input now and wait until done."""
        self._flush_screenshots()
        self._queue.flush(timeout)

    def _process_queued(self, records: Sequence[InputRecord]) -> None:
        claimed = self.inputs.claim(self.worker_id, input_ids=[r.id for r in records], limit=len(records),
                                    include_own=True)
        if claimed:  # another worker may have taken some already
            self._process(claimed)
        if self._recovering:
            self._recovering.difference_update(r.id for r in records)
            if not self._recovering:
                report = self.doctor(repair=True)  # writes on an index reopened after a kill can lose a node
                if report.repaired.get("indexes_rebuilt"):
                    log.warning("the vector index lost a node after the restart; rebuilt %d user index(es)",
                                report.repaired["indexes_rebuilt"])

    def resume(self, *, wait: bool = True, limit: int = 10_000) -> int:
        """Take over inputs left pending, or claimed by a worker that died, and process them once.
        Managers that had committed before the crash are skipped (the input's `done_actors`); a
        crash between a commit and its vector mirror is repaired from SQL, and the vector index is
        checked again (and rebuilt if it lost a node) once they are processed."""
        records = self.inputs.claim(self.worker_id, limit=limit)
        if records:
            self.doctor(repair=True)
            self._recovering.update(r.id for r in records)  # checked again once they are processed
        for record in records:
            self._queue.submit(record)
        if wait:
            self._queue.flush()
        return len(records)

    def _process(self, records: Sequence[InputRecord], *, images: dict[str, Any] | None = None) -> AddResult:
        """Run the flow over one batch of one user. `images` (input id -> downscaled frame) go to a
        vision-capable model with the batch; the offline rules read text only.

        Status: `processed` when the flow did everything; `degraded` when the offline rules stood in
        for a model's failed part (the reasons in `error`; `retry_failed()` tries the model again);
        `failed` when some part could not be done at all."""
        ids = [r.id for r in records]
        user_id = records[0].user_id
        single = ids[0] if len(ids) == 1 else None
        done = self.inputs.done_actors(ids)
        started = time.perf_counter()
        meter = Meter()
        try:
            flow = self._run(self.flow.run(user_id, records, meter, input_id=single, skip_actors=done, images=images))
        except Exception as exc:  # a bug or an infrastructure fault outside the flow's own handling
            log.exception("update flow failed")
            flow = FlowResult(failures=[f"update flow: {type(exc).__name__}: {exc}"])
        usage = LLMUsage(**meter.summary(), wall_seconds=round(time.perf_counter() - started, 4))
        if self.model_client is not None:
            self.store.record_usage(user_id, "update", usage.model_dump())
        if flow.failures:
            status, error = InputStatus.failed, "; ".join(flow.failures + flow.degraded)
        elif flow.degraded:
            status, error = InputStatus.degraded, "; ".join(flow.degraded)
        else:
            status, error = InputStatus.processed, None
        error = scrub(error) if error else error  # reasons quote model output and exceptions
        self.inputs.mark(ids, status, error, refused=[scrub(r) for r in flow.rejected])
        return AddResult(input_ids=ids, status=status, changes=flow.changes, mode=self.mode, error=error,
                         routed=flow.routed, usage=usage, rejected=[scrub(r) for r in flow.rejected])

    def work(self) -> int:
        """Claim inputs in batches (pending ones and those of dead workers) and process them until
        none are left; returns how many. Any number of processes may run this on one database."""
        total = 0
        while True:
            records = self.inputs.claim(self.worker_id, limit=self.settings.batch_size)
            if not records:
                return total
            by_user: dict[str, list[InputRecord]] = {}
            for record in records:
                by_user.setdefault(record.user_id, []).append(record)
            for batch in by_user.values():
                self._process(batch)
            total += len(records)

    def retry_failed(self, *, user_id: str | None = None) -> list[AddResult]:
        """Run failed and degraded inputs again, one at a time. What the offline rules wrote in place
        of the model for an input is removed first (as history events), so an upgrade leaves no
        duplicates; an input that degrades again keeps the rules' memories."""
        wanted = (InputStatus.failed, InputStatus.degraded)
        pending = [r.id for status in wanted for r in self.inputs.by_status(status, user_id=user_id)]
        claimed = self.inputs.claim(self.worker_id, input_ids=pending, limit=len(pending) or 1,
                                    statuses=wanted, include_stale=False) if pending else []
        results = []
        for record in claimed:
            if self.flow is not self.offline_flow:
                stale = self.store.inserted_by(record.user_id, FALLBACK_SUFFIX, [record.id])
                if stale:
                    self.store.apply([DeleteOp(memory_id=m) for m in stale], user_id=record.user_id,
                                     actor="retry", input_id=record.id)
                self.inputs.forget_actors([record.id], lambda actor: actor.endswith(FALLBACK_SUFFIX))
            results.append(self._process([record]))
        return results

    def input_status(self, input_id: str) -> InputRecord:
        record = self.inputs.get(input_id)
        if record is None:
            raise InvalidInput(f"no input with id {input_id!r}")
        return record

    # ------------------------------------------------------------ read

    def search(self, query: str, *, user_id: str, limit: int = 10,
               memory_types: Sequence[MemoryType | str] | None = None, start: datetime | None = None,
               end: datetime | None = None, method: SearchMethod | str = "hybrid",
               context: int | None = None) -> list[SearchHit]:
        """Memories for `query`; `context` N adds the turns around the first N matches (`Searcher.search`),
        by default `settings.search_context` (what every reader's path uses and `mirix eval locomo` measures);
        0 gives the matches only."""
        _check_user(user_id)
        try:
            types = [MemoryType(t) for t in memory_types] if memory_types else None
        except ValueError as exc:
            raise InvalidInput(f"unknown memory type: {exc}") from exc
        from mirix_py.inputs import parse_when

        return self.searcher.search(query, user_id=user_id, limit=limit, memory_types=types,
                                    start=parse_when(start, "start"), end=parse_when(end, "end"), method=method,
                                    context=self.settings.search_context if context is None else context)

    def get(self, memory_id: str, *, user_id: str, reveal: bool = False) -> MemoryBase:
        _check_user(user_id)
        return self.store.get(memory_id, user_id=user_id, reveal=reveal)

    def list(self, *, user_id: str, memory_types: Sequence[MemoryType | str] | None = None, limit: int = 100,
             offset: int = 0, start: datetime | None = None, end: datetime | None = None) -> list[Memory]:
        _check_user(user_id)
        if limit <= 0 or offset < 0:
            raise InvalidInput("limit must be positive and offset non-negative")
        return self.store.list(user_id=user_id, memory_types=memory_types, limit=limit, offset=offset,
                               start=start, end=end)

    def history(self, memory_id: str, *, user_id: str) -> builtins.list[HistoryEvent]:
        _check_user(user_id)
        return self.store.history(memory_id, user_id=user_id)

    # ------------------------------------------------------------ write

    def update(self, memory_id: str, fields: dict[str, Any] | None = None, *, user_id: str,
               actor: str = "api", **more: Any) -> MemoryBase:
        """Change fields of a memory in place (its id stays); returns the new record."""
        _check_user(user_id)
        fields = {**(fields or {}), **more}
        if not fields:
            raise InvalidInput("nothing to update")
        self.store.apply([UpdateOp(memory_id=memory_id, fields=fields)], user_id=user_id, actor=actor)
        return self.store.get(memory_id, user_id=user_id)

    def delete(self, memory_id: str, *, user_id: str, actor: str = "api") -> None:
        _check_user(user_id)
        self.store.apply([DeleteOp(memory_id=memory_id)], user_id=user_id, actor=actor)

    def undo(self, input_id: str, *, user_id: str, force: bool = False) -> builtins.list[MemoryChange]:
        """Revert every change one input caused: its inserts deleted, its updates and deletions
        restored (recorded as history events of actor `undo:<input id>`). A memory changed by a later
        input makes it refuse (InvalidInput naming it) unless `force`."""
        from mirix_py.store.undo import undo_input

        _check_user(user_id)
        self.flush()  # a queued input's changes must exist before they can be taken back
        changes = undo_input(self.store, input_id, user_id=user_id, force=force)
        self.inputs.forget_actors([input_id], lambda actor: True)  # a retry of it then runs every manager again
        return changes

    def delete_user(self, user_id: str) -> dict[str, int]:
        _check_user(user_id)
        self._delete_user_screenshots(user_id)
        return self.store.delete_user(user_id)

    # ------------------------------------------------------------ core memory

    def _core_block(self, user_id: str, label: str) -> CoreMemory | None:
        return core_blocks.find_block(self.store, user_id, label)

    def core_memory(self, *, user_id: str) -> dict[str, CoreMemory]:
        """Both blocks; a block never written is returned empty (and unsaved)."""
        _check_user(user_id)
        return {label: self._core_block(user_id, label) or CoreMemory(user_id=user_id, label=label)
                for label in CORE_LABELS}

    def core_append(self, label: str, text: str, *, user_id: str, actor: str = "api") -> CoreMemory:
        _check_user(user_id)
        label = _check_label(label)
        if not text or not text.strip():
            raise InvalidInput("nothing to append")
        block = self._core_block(user_id, label)
        return self._write_core(user_id, label, core_blocks.appended(block.value if block else "", text), block, actor)

    def core_rewrite(self, label: str, value: str, *, user_id: str, actor: str = "api") -> CoreMemory:
        _check_user(user_id)
        label = _check_label(label)
        return self._write_core(user_id, label, value.strip(), self._core_block(user_id, label), actor)

    def _write_core(self, user_id: str, label: CoreLabel, value: str, block: CoreMemory | None,
                    actor: str) -> CoreMemory:
        problem = core_blocks.over_limit(value, block)
        if problem:
            raise CoreMemoryFull(f"core block {label!r} {problem}; rewrite it shorter instead of appending")
        if block is None:
            op: Op = InsertOp(memory=CoreMemory(user_id=user_id, label=label, value=value))
        else:
            op = UpdateOp(memory_id=block.id, fields={"value": value})
        self.store.apply([op], user_id=user_id, actor=actor)
        block = self._core_block(user_id, label)
        assert block is not None
        return block

    # ------------------------------------------------------------ export / import

    def export(self, dest: str | Path | IO[str], *, user_id: str | None = None) -> int:
        """Write memories as JSON lines. Vault secrets travel only as ciphertext of this data dir's key."""
        from mirix_py.portability import export_lines

        if isinstance(dest, (str, Path)):
            with open_private(dest, "w", encoding="utf-8") as fh:  # every memory: owner-only
                return export_lines(self.store, fh, user_id=user_id)
        return export_lines(self.store, dest, user_id=user_id)

    def import_(self, src: str | Path | IO[str] | Iterable[str]) -> dict[str, int]:
        """Read JSON lines written by `export`. All lines are validated before any is written."""
        from mirix_py.portability import import_lines

        if isinstance(src, (str, Path)):
            with open(src, encoding="utf-8") as fh:
                return import_lines(self.store, fh)
        return import_lines(self.store, src)

    # ------------------------------------------------------------ consistency

    def doctor(self, *, repair: bool = False, progress=None) -> "DoctorReport":
        """Compare SQL and the vector index (and check the vault key and the data dir's modes);
        `repair=True` fixes what it can."""
        from mirix_py.doctor import diagnose, repair as do_repair

        data = self.settings.data_dir
        report = diagnose(self.store, data)
        if repair and (not report.clean or report.compactable_rows or report.tenants_without_index):
            report = (do_repair(self.store, report, progress, data_dir=data) if progress
                      else do_repair(self.store, report, data_dir=data))
        return report

    def doctor_secrets(self, *, repair: bool = False) -> "SecretReport":
        """Plaintext secrets an older version left in rows, history, full text, vector documents, the
        input log's plain columns and the database files (`store.secret_scan`); `repair=True` moves them
        into the vault, rewrites the rest with placeholders and compacts the files."""
        from mirix_py.store import secret_scan

        assert self.store.guard is not None
        report = secret_scan.scan(self.store, self.store.guard, self.settings.data_dir)
        if repair and not report.clean:
            report = secret_scan.repair(self.store, self.store.guard, self.settings.data_dir)
        return report

    # ------------------------------------------------------------ backup

    def backup(self, dest: str | Path) -> dict[str, Any]:
        """A consistent backup while the engine runs; the vault key is not in it (keep it safe)."""
        from mirix_py.backup import backup

        return backup(self.engine, self.store.cipher, dest,
                      embedder=self.store.embedder.name if self.store.embedder else None)

    @classmethod
    def restore(cls, src: str | Path, data_dir: str | Path | None = None, *, vault_key: str,
                database_url: str | None = None,
                embedder: Embedder | None | Literal[_Default.EMBEDDER] = _DEFAULT, progress=None,
                vector_store: str | None = None) -> "Mirix":
        """Restore a backup into an empty data directory (or empty database) and return the engine.
        The key is checked before anything is written and saved as the data dir's `vault.key`
        (0600); full-text and vector indexes are rebuilt from the restored rows."""
        from mirix_py.backup import check_key, read_manifest, restore

        check_key(read_manifest(src), vault_key)
        settings = Settings.from_env(data_dir=Path(data_dir) if data_dir is not None else None,
                                     database_url=database_url, vault_key=vault_key, vector_store=vector_store)
        private_dir(settings.data_dir)
        key_file = settings.data_dir / "vault.key"
        if key_file.exists() and key_file.read_text().strip() != vault_key.strip():
            raise InvalidInput(f"{key_file} holds another key: restore into an empty data directory")
        engine = make_engine(settings.sql_url, settings.sqlite_driver)
        try:
            restore(engine, src, vault_key)
            with engine.begin() as conn:
                sessions_for(engine).rebuild(conn)  # also sets `input_id` on rows of older backups,
                fulltext_for(engine).rebuild(conn)  # which the neighbours' words are found by
        finally:
            engine.dispose()
        if not key_file.exists():
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(vault_key)
        mx = cls(settings=settings, embedder=embedder)
        mx.doctor(repair=True, progress=progress)
        return mx

    # ------------------------------------------------------------ chat

    def chat(self, message: str, *, user_id: str, history: Sequence[dict[str, Any]] | None = None,
             remember: bool = True) -> ChatResponse:
        """Answer from memory: topics, coarse retrieval over all six types, targeted search, citations.
        The exchange is fed back into memory in the background (`remember=False` skips that)."""
        _check_user(user_id)
        if not isinstance(message, str) or not message.strip():
            raise InvalidInput("message is empty")
        history = list(history or [])
        if not all(isinstance(h, dict) and isinstance(h.get("content"), str) for h in history):
            raise InvalidInput("history must be a list of {'role', 'content'} dicts")
        started = time.perf_counter()
        meter = Meter()
        flow = self.chat_flow
        fallback: str | None = None
        # topics, retrieval and the model read the question with placeholders; the exchange fed back
        # below keeps it whole (the input log is encrypted and the vault rules take the secret)
        raw_message, message = message, scrub(message)
        history = [{**h, "content": scrub(h["content"])} for h in history]
        topics = offline_topics(message, datetime.now(timezone.utc))
        if self.model_client is not None:
            try:
                topics = self._run(flow.topics(message, history, meter))
            except Exception as exc:  # keyword topics stand in; the answer step may still work
                log.warning("topic step failed: %s: %s", type(exc).__name__, exc)
        retrieval = flow.retrieve(user_id, message, topics, self.core_memory(user_id=user_id))
        answer, cited = "", []
        if self.model_client is not None:
            try:
                answer, cited = self._run(flow.answer(user_id, message, history, retrieval, meter))
                fallback = unusable_answer(answer)
            except Exception as exc:  # whatever the model returned or did, chat answers
                fallback = f"the model failed: {type(exc).__name__}: {str(exc)[:200]}"
        if self.model_client is None or fallback:
            reason = f"No usable answer from the model ({fallback})" if fallback else "Offline mode (no LLM configured)"
            answer, cited = flow.offline_answer(retrieval, reason=reason)
        # the question and the answer carry ids that say which is which: a memory citing only chat
        # questions is weighed down in search, so asking twice never outranks the fact (store.questions)
        question_id, answer_id = exchange_ids()
        exchange = [{"role": "user", "content": raw_message, "id": question_id}]
        if self.model_client is not None and not fallback:  # an offline answer only echoes memories
            exchange.append({"role": "assistant", "content": answer, "id": answer_id})
        usage = LLMUsage(**meter.summary(), wall_seconds=round(time.perf_counter() - started, 4))
        if self.model_client is not None:
            self.store.record_usage(user_id, "chat", usage.model_dump())
        fed = self.add(exchange, user_id=user_id, wait=False).input_ids if remember else []
        return ChatResponse(answer=answer, topics=topics.keywords, start=topics.start, end=topics.end,
                            memory_ids=cited, retrieved_ids=retrieval.ids, mode=self.mode, usage=usage,
                            update_input_ids=fed, fallback=fallback)

    def user_ids(self) -> builtins.list[str]:
        """Every user that has memories or inputs, sorted."""
        return self.store.user_ids()

    def ping(self) -> str:
        """Ask the database for `SELECT 1` (raises when it does not answer); returns its dialect name."""
        from sqlalchemy import text

        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return self.engine.dialect.name

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        return {**self.describe(), "memories": self.store.count(user_id=user_id),
                "llm_usage": self.store.usage_totals(user_id=user_id)}

    def close(self) -> None:
        self._close_screenshots()
        self._queue.close()
        self.searcher.close()
        if self._loop is not None:
            if self.model_client is not None:
                try:
                    asyncio.run_coroutine_threadsafe(self.model_client.close(), self._loop).result(timeout=5)
                except Exception:  # closing is best effort
                    pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._loop_thread is not None:
                self._loop_thread.join(timeout=5)
            self._loop = None
        self.store.close()
        self.engine.dispose()
        self._release_writer_lock()  # after the last write

    def __enter__(self) -> "Mirix":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


setattr(Mirix, "import", Mirix.import_)


def _check_user(user_id: str) -> None:
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInput("user_id is required")
    if len(user_id) > 256:
        raise InvalidInput("user_id is longer than 256 characters")


def _check_label(label: str) -> CoreLabel:
    for known in CORE_LABELS:
        if label == known:
            return known
    raise InvalidInput(f"core block label must be one of {CORE_LABELS}, not {label!r}")


__all__ = ["Mirix", "InvalidInput", "MemoryNotFound", "CoreMemoryFull"]
