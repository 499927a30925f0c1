"""Keeping a data dir sound: the consistency doctor, the secrets doctor, inputs a dead process left
behind, backups and restores. `Mirix.maintenance` is one of these over the engine's store.

A restore writes into an empty data dir (or database) before any engine opens it
(`restore_into`); the engine then opens it and writes the vector index. The data dir's
vault key is written before any row, and a marker (`restore.unfinished`) from before the first row
until every row and full-text index is in: a restore that was interrupted is recognised by it, and
running it again into that dir starts over (`unfinished_restore`). The vectors are written from the
vector outbox's marks, set with the rows: a process stopped while embedding them leaves marks that
the next open finishes. Which vector index holds them is decided before the rows are in, as an open
decides it (`vector_layout.settle`): on pgvector the backup's vectors are restored with the rows and
only the memories without one are marked.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from pydantic import BaseModel
from sqlalchemy.engine import Engine, make_url

from mirix_py.facade.background import BackgroundQueue
from mirix_py.errors import InvalidInput
from mirix_py.records import InputRecord, utcnow
from mirix_py.settings import Settings
from mirix_py.store.db import make_engine
from mirix_py.store.inputs import ClaimKeeper, InputLog
from mirix_py.store.memories import MemoryStore
from mirix_py.store.opening import fulltext_for
from mirix_py.store.pgvectors import PgVectorIndex
from mirix_py.store.private import open_private, private_dir
from mirix_py.store.sessions import sessions_for
from mirix_py.store.vector_layout import settle
from mirix_py.store import vector_outbox
from mirix_py.tools.ops import DeleteOp

if TYPE_CHECKING:
    from mirix_py.upkeep.doctor import DoctorReport
    from mirix_py.secrets.doctor import SecretReport

log = logging.getLogger("mirix_py")

EXPIRY_ACTOR = "expiry"  # the history's actor of a memory deleted when it expired
RESTORE_MARKER = "restore.unfinished"  # in a data dir a restore is writing into, until it is done


class UnfinishedRestore(BaseModel):
    """What the marker of a restore in progress holds: which backup, into which database."""

    backup: str
    database: str  # its URL without the password
    started_at: datetime

    def advice(self, data_dir: Path) -> str:
        return (f"a restore of {self.backup} into {data_dir} did not finish (started {self.started_at:%Y-%m-%d %H:%M} "
                f"UTC): run `mirix restore {self.backup} -d {data_dir}` again, which starts it over, or remove the "
                "directory")


def unfinished_restore(data_dir: str | Path) -> UnfinishedRestore | None:
    """The marker of a restore into `data_dir` that did not finish, if there is one (one too damaged
    to read was cut short before any row was written: nothing to start over)."""
    marker = Path(data_dir) / RESTORE_MARKER
    try:
        return UnfinishedRestore.model_validate_json(marker.read_text())
    except (OSError, ValueError):  # a pydantic ValidationError is a ValueError
        return None


class Maintenance:
    """The doctors, `resume` and `backup` of one engine's store (`Mirix.maintenance`)."""

    def __init__(self, engine: Engine, store: MemoryStore, inputs: InputLog, queue: BackgroundQueue, *,
                 worker_id: str, data_dir: Path, left_after_s: float = 60.0) -> None:
        """`left_after_s`: an input pending this long is no longer waiting in some worker's queue (its
        batch failed, or the worker that queued it gave it up): the background worker's sweep takes it up."""
        self.engine = engine
        self.store = store
        self.inputs = inputs
        self.queue = queue
        self.worker_id = worker_id
        self.data_dir = data_dir
        self._recovering: set[str] = set()  # ids of inputs `resume` took over, until processed (or handed back)
        self._keepers: list[ClaimKeeper] = []  # renew the claims of what `resume` queued, until it is processed
        self._keepers_lock = threading.Lock()
        self.left_after_s = left_after_s

    def doctor(self, *, repair: bool = False, progress=None) -> DoctorReport:
        """Compare SQL and the vector index (and check the vault key and the data dir's modes);
        `repair=True` fixes what it can."""
        from mirix_py.upkeep.doctor import diagnose, repair as do_repair

        report = diagnose(self.store, self.data_dir)
        if repair and (not report.clean or report.compactable_rows or report.tenants_without_index
                       or report.lapsed_file_claims):
            report = (do_repair(self.store, report, progress, data_dir=self.data_dir) if progress
                      else do_repair(self.store, report, data_dir=self.data_dir))
        return report

    def doctor_secrets(self, *, repair: bool = False) -> SecretReport:
        """Plaintext secrets an older version left in rows, history, full text, vector documents, the
        input log's plain columns and the database files (`store.secret_scan`); `repair=True` moves
        them into the vault, rewrites the rest with placeholders and compacts the files."""
        from mirix_py.store import secret_scan

        assert self.store.guard is not None
        if self.data_dir is not None:
            # The files are read as the engine leaves them at rest: nothing of ours may be writing when
            # the scan releases an embedded Chroma and zeroes its graphs (`secret_scan.scan`).
            self.queue.flush()
        report = secret_scan.scan(self.store, self.store.guard, self.data_dir)
        if repair and not report.clean:
            report = secret_scan.repair(self.store, self.store.guard, self.data_dir)
        return report

    def resume(self, *, wait: bool = True, limit: int = 10_000) -> int:
        """Take over inputs left pending, or claimed by a worker that died, and process them once.
        Managers that had committed before the crash are skipped (the input's `done_actors`); a
        crash between a commit and its vector mirror is repaired from SQL, and the vector index is
        checked again (and rebuilt if it lost a node) once they are processed (`recovered`). Their claims
        are renewed while they wait in the queue (`keep_queued_claimed`)."""
        records = self.inputs.claim(self.worker_id, limit=limit)
        if records:
            with self._keepers_lock:
                self._recovering.update(r.id for r in records)
            self.keep_queued_claimed(records)  # from now: the repair may take a while
            self.doctor(repair=True)
        for record in records:
            self.queue.submit(record)
        if wait:
            self.queue.flush()
        return len(records)

    def keep_queued_claimed(self, records: Sequence[InputRecord]) -> None:
        """Renew this worker's claims on these queued inputs (`ClaimKeeper`) until each is processed
        (`recovered`) or handed back to the log (`handed_back`), or the engine closes (`stop_renewing`):
        batches ahead of theirs may take longer than the lease, and another worker would take them over meanwhile."""
        keeper = ClaimKeeper(self.inputs, [r.id for r in records], self.worker_id)
        keeper.start()
        with self._keepers_lock:
            self._keepers.append(keeper)

    def stop_renewing(self) -> None:
        """Renew the claims of resumed inputs no more: all are processed, or the engine closes (what it
        still holds then lapses after the lease, for the next start)."""
        with self._keepers_lock:
            keepers, self._keepers = self._keepers, []
        for keeper in keepers:
            keeper.stop()

    def finish_vector_writes(self, progress: Callable[[Iterable, int], Iterable] | None = None) -> None:
        """At open: put into the vector index what writes committed in SQL but a stopped process never
        mirrored, and a restore's vectors (`store.vector_outbox`). A failure is logged, not raised: the
        marks stay for the next open or `mirix doctor --repair`, and the engine opens."""
        try:
            vector_outbox.replay(self.store, progress=progress or (lambda items, total: items))
        except Exception as exc:
            log.warning("vector writes left pending were not replayed (%s); `mirix doctor --repair` replays them",
                        type(exc).__name__)

    def take_up_left(self, limit: int = 1000) -> int:
        """Queue again the inputs pending longer than `left_after_s` (the background worker's sweep,
        while it is idle). Held inputs are not taken: this worker's own may be waiting in a screenshot
        batch, and those of a worker that died are `resume`'s, which repairs first."""
        before = utcnow() - timedelta(seconds=self.left_after_s)
        records = self.inputs.claim(self.worker_id, limit=limit, include_stale=False, logged_before=before)
        if records:
            log.warning("taking up %d input(s) left pending", len(records))
        for record in records:
            self.queue.submit(record)
        return len(records)

    def delete_expired(self, *, batch: int = 1000) -> int:
        """Delete every memory past its expiry (`store.expiry`), one user's at a time; each deletion is a
        history event of actor `expiry`. Returns how many. The background worker's sweep calls it."""
        deleted = 0
        while True:
            found = self.store.expired(now=utcnow(), limit=batch)
            if not found:
                return deleted
            by_user: dict[str, list[str]] = {}
            for user_id, memory_id in found:
                by_user.setdefault(user_id, []).append(memory_id)
            for user_id, ids in by_user.items():
                deleted += len(self.store.apply([DeleteOp(memory_id=m) for m in ids], user_id=user_id,
                                                actor=EXPIRY_ACTOR))
            if len(found) < batch:
                return deleted

    def recovered(self, records: Sequence[InputRecord]) -> None:
        """These queued inputs are processed: their claims are renewed no more, and once every input `resume`
        took over is processed (or handed back), the vector index is checked again (writes on an index
        reopened after a kill can lose a node)."""
        if self._settled(records):
            self._check_after_recovery()

    def handed_back(self, records: Sequence[InputRecord]) -> None:
        """These queued inputs went back to the log as pending (their batch failed every try): their claims
        are renewed no more. Renewed, they went on until the engine closed, and moved the lease of any claim
        this worker took on them again (the idle sweep's) as if their old batch still held them."""
        if self._settled(records):
            self._check_after_recovery()

    def _settled(self, records: Sequence[InputRecord]) -> bool:
        """Drop these inputs from what `resume` took over and from its keepers (a keeper left with none
        stops); True when they were the last of it."""
        input_ids = {r.id for r in records}
        with self._keepers_lock:
            if not self._recovering & input_ids:
                return False
            self._recovering -= input_ids
            idle = [keeper for keeper in self._keepers if keeper.forget(input_ids) == 0]
            self._keepers = [keeper for keeper in self._keepers if keeper not in idle]
            last = not self._recovering
        for keeper in idle:
            keeper.stop()
        return last

    def _check_after_recovery(self) -> None:
        report = self.doctor(repair=True)
        if report.repaired.get("indexes_rebuilt"):
            log.warning("the vector index lost a node after the restart; rebuilt %d user index(es)",
                        report.repaired["indexes_rebuilt"])

    def backup(self, dest: str | Path) -> dict[str, Any]:
        """A consistent backup while the engine runs; the vault key is not in it (keep it safe)."""
        from mirix_py.upkeep.backup import backup

        return backup(self.engine, self.store.cipher, dest,
                      embedder=self.store.embedder.name if self.store.embedder else None, data_dir=self.data_dir)


def _save_key(key_file: Path, vault_key: str) -> None:
    """The data dir's `vault.key` (0600), written whole or not at all, before any restored row: a
    data dir a restore stopped in is never opened with a fresh key its rows do not open."""
    if key_file.exists():  # the same key: checked before
        return
    tmp = key_file.with_name(key_file.name + ".partial")
    try:
        with open_private(tmp, "w") as fh:
            fh.write(vault_key.strip())
        os.replace(tmp, key_file)
    except BaseException:  # KeyboardInterrupt too: no stray copy of the key
        tmp.unlink(missing_ok=True)
        raise


def _start_marker(marker: Path, src: str | Path, database: str) -> None:
    record = UnfinishedRestore(backup=str(Path(src).resolve()), database=database, started_at=utcnow())
    with open_private(marker, "w") as fh:
        fh.write(record.model_dump_json())


def _settle_vectors(engine: Engine, settings: Settings) -> bool:
    """Decide the vector index as the engine's open will (`vector_layout.settle`), before the rows are
    in: a new database whose server offers pgvector gets the extension only while it holds no memory.
    On pgvector its table is made here, so the backup's `memory_vector` rows are restored with the
    memories; returns whether the vectors are kept in this database."""
    kind = settle(engine, requested=settings.vector_store, chroma_url=settings.chroma_url,
                  data_dir=settings.data_dir)
    if kind != "pgvector":
        return False
    PgVectorIndex(engine)  # the extension (when pgvector is asked for outright) and `memory_vector`
    return True


def restore_into(src: str | Path, data_dir: str | Path | None, *, vault_key: str, database_url: str | None,
                 vector_store: str | None) -> Settings:
    """Restore a backup into an empty data dir (or empty database), and return the settings to open
    it with. The key is checked before anything is written and saved as the data dir's `vault.key`
    (0600) before any row; the full-text and session indexes are rebuilt from the restored rows. A data
    dir whose restore (into the same database) did not finish is wiped and restored again."""
    from mirix_py.upkeep.backup import check_key, ensure_empty, read_manifest, restore

    check_key(read_manifest(src), vault_key)
    settings = Settings.from_env(data_dir=Path(data_dir) if data_dir is not None else None,
                                 database_url=database_url, vault_key=vault_key, vector_store=vector_store)
    if settings.data_dir.exists() and not settings.data_dir.is_dir():
        raise InvalidInput(f"{settings.data_dir} is a file: restore into an empty (or new) data directory")
    private_dir(settings.data_dir)
    database = make_url(settings.sql_url).render_as_string(hide_password=True)
    unfinished = unfinished_restore(settings.data_dir)
    start_over = unfinished is not None and unfinished.database == database
    key_file = settings.data_dir / "vault.key"
    if key_file.exists() and key_file.read_text().strip() != vault_key.strip():
        raise InvalidInput(f"{key_file} holds another key: restore into an empty data directory"
                           + (f" ({unfinished.advice(settings.data_dir)})" if start_over and unfinished else ""))
    engine = make_engine(settings.sql_url, settings.sqlite_driver)
    try:
        if not start_over:
            ensure_empty(engine, settings.data_dir)
        _save_key(key_file, vault_key)
        _start_marker(settings.data_dir / RESTORE_MARKER, src, database)
        vectors_in_sql = _settle_vectors(engine, settings)
        restore(engine, src, vault_key, data_dir=settings.data_dir, start_over=start_over)  # agent sessions too
        with engine.begin() as conn:
            sessions_for(engine).rebuild(conn)  # also sets `input_id` on rows of older backups,
            fulltext_for(engine).rebuild(conn)  # which the neighbours' words are found by
            # the vectors are written at open, from these marks: a process stopped while embedding
            # them leaves marks the next open finishes, not a store whose vector leg finds nothing
            vector_outbox.mark_restored(conn, embedded_in_sql=vectors_in_sql)
            if vectors_in_sql:  # pgvector's vectors load as backed up: one of an older version may be of older text
                vector_outbox.mark_secret_refs(conn)
    finally:
        engine.dispose()
    (settings.data_dir / RESTORE_MARKER).unlink()
    return settings
