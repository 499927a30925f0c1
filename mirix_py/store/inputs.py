"""The input log: every input is written (encrypted) before it is processed, and ends processed
or failed with its reason, so nothing acknowledged is lost and failed work can be retried.

Workers claim inputs before processing them, so several processes (or machines, on PostgreSQL)
can drain one log without doing an input twice: `FOR UPDATE SKIP LOCKED` on PostgreSQL, the
database write lock (`BEGIN IMMEDIATE`) on SQLite. A claim held by a dead worker is taken over:
at once when the worker was a process on this host that no longer exists, after `lease_s` otherwise.
A worker renews its claims while it processes them (`keep_claimed`), so a batch that runs longer
than the lease (a slow model) stays its own; one that died stops renewing, and its claims lapse.
`append_new` logs an input only when the log does not hold its source yet (a screenshot file, by
name and capture time), in the same step, so two runs over one folder log each file once. Before that,
a run claims the file it is about to read (`claim_source`: its OCR is the expensive part), in the same
step as it looks the file up in the log, so the other run skips it instead of reading it too; the claim
has the lease of an input's claim (renewed while the run works, taken over once its worker is gone) and
ends when the file is logged or given back; one a killed run left is cleared by `mirix doctor --repair`
(`clear_lapsed_source_claims`) if no run comes to its file again.

`compact()` drops the text of processed inputs whose memories hold what mattered (screenshots:
the OCR text of every frame would otherwise be most of what is stored). The row keeps its id,
kind, source, times and status, and its payload keeps the metadata (app, window) plus the text's
SHA-256 (first 128 bits) and length: provenance without the text. Pending and failed inputs are
never compacted, so nothing that still has to be processed loses its text.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import threading
import uuid
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Callable, ClassVar, Iterable, Iterator, Sequence

from pydantic import AwareDatetime, BaseModel, Field, field_validator
from sqlalchemy import ColumnElement, and_, delete, or_, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.engine import CursorResult, Engine
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput
from mirix_py.records import InputKind, InputRecord, InputStatus, Message, utcnow
from mirix_py.store.crypto import Cipher, VaultKeyError
from mirix_py.store.cursors import ListingPosition, in_utc, storable_id
from mirix_py.store.writer_lock import pid_alive
from mirix_py.store.tables import InputRow, SourceClaimRow

log = logging.getLogger("mirix_py.store")

HOST = socket.gethostname()


def new_worker_id() -> str:
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def worker_alive(worker_id: str) -> bool:
    """False only when the worker was a process of this host that has exited."""
    host, _, rest = worker_id.partition(":")
    pid_text = rest.split(":", 1)[0]
    if host != HOST or not pid_text.isdigit():
        return True
    return pid_alive(int(pid_text))


def compact_digest(texts: Iterable[str]) -> dict[str, str]:
    """What a compacted input keeps of its text: {"text_sha256": first 128 bits, hex; "text_chars"}."""
    text = "\n".join(texts)
    return {"text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()[:32], "text_chars": str(len(text))}


class LoggedSource(BaseModel):
    """An input found by its source id (a screenshot's file name): where it stands, without its text."""

    id: str
    source_id: str
    occurred_at: datetime
    status: InputStatus
    error: str | None = None
    held: bool = Field(default=False, description="Claimed by a worker that is alive and within its lease: "
                                                  "that worker finishes it.")


SOURCES_PER_QUERY = 500  # source ids in one IN (...) list


def source_claim_id(user_id: str, kind: InputKind, source_id: str, occurred_at: datetime) -> str:
    """The id of a claim on a source (`InputLog.claim_source`): the same for every worker that comes to the
    source (user, kind, source id and `occurred_at`, as `append_new` tells sources apart); a hash, so
    neither the user nor the file's name is kept outside the input log (what `delete_user` and the secrets
    doctor go through)."""
    key = json.dumps([user_id, InputKind(kind).value, source_id, occurred_at.astimezone(timezone.utc).isoformat()])
    return "sc_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


class SourceClaim(BaseModel):
    """What a worker found when it came to claim a source before reading it (`InputLog.claim_source`)."""

    id: str = Field(description="The claim's id (`source_claim_id`).")
    taken: bool = Field(description="This worker holds the claim now: it reads the source, then logs it "
                                    "(`append_new` ends the claim) or gives it back (`release_source_claims`).")
    logged: LoggedSource | None = Field(default=None, description="Not taken: the input the log holds for the "
                                                                  "source. None: another worker is reading it.")


class InputPosition(ListingPosition):
    """Where an input stands in the log's listing (`InputLog.newest`: newest `created_at` first, ties
    by id, so the order is total). A page ends at its last input's position and the next page starts
    strictly after it, so no input is listed twice or left out while others arrive or leave between
    pages, as they are when pages are counted by offset. Clients see it only as an opaque cursor."""

    LISTING: ClassVar[str] = "the input log"

    created_at: AwareDatetime = Field(description="When the input was logged (in UTC once read).")
    id: str = Field(min_length=1, max_length=64, description="The input's id, which orders inputs logged at "
                                                             "the same instant.")

    _utc = field_validator("created_at")(in_utc)
    _id = field_validator("id")(storable_id)

    @classmethod
    def of(cls, record: InputRecord) -> "InputPosition":
        return cls(created_at=record.created_at, id=record.id)


def _listed_after(position: InputPosition) -> ColumnElement[bool]:
    """The inputs after `position` in the listing's order: logged earlier, or at the same instant with a
    lower id (row values would say it in one comparison, which not every SQLite takes)."""
    created_at, input_id = col(InputRow.created_at), col(InputRow.id)
    return or_(created_at < position.created_at, and_(created_at == position.created_at, input_id < position.id))


class InputLog:
    def __init__(self, engine: Engine, cipher: Cipher, *, lease_s: float = 300.0,
                 redact: Callable[[str], str] = lambda text: text) -> None:
        """`redact`: applied to every `error` before it is stored in plain text (the engine gives
        it the vault rules' `secrets.redaction.scrub`: a reason may quote the input or a model's output)."""
        self.engine = engine
        self.cipher = cipher
        self.lease = timedelta(seconds=lease_s)
        self.redact = redact
        self.read_only: str | None = None  # why no input may be logged (as `MemoryStore.read_only`)
        self.unreadable: set[str] = set()  # inputs `claim` found this key cannot decrypt: left for the key's engines

    def _to_row(self, record: InputRecord) -> InputRow:
        content: dict = {"messages": [m.model_dump(mode="json") for m in record.messages], "metadata": record.metadata}
        if record.expires_at is not None:
            content["expires_at"] = record.expires_at.isoformat()
        payload = json.dumps(content)
        return InputRow(
            id=record.id, user_id=record.user_id, kind=record.kind.value, payload=self.cipher.encrypt(payload),
            source_id=record.source_id, occurred_at=record.occurred_at, status=record.status.value,
            error=self.redact(record.error) if record.error else None, attempts=record.attempts,
            created_at=record.created_at,
            processed_at=record.processed_at,
        )

    def _to_record(self, row: InputRow) -> InputRecord:
        return self._record(row, self._payload(row))

    def _payload(self, row: InputRow) -> dict:
        payload = json.loads(self.cipher.decrypt(row.payload))
        if isinstance(payload, list):  # schema 0001 logged the bare list of messages
            payload = {"messages": payload, "metadata": {}}
        return payload

    def _record(self, row: InputRow, payload: dict) -> InputRecord:
        messages = [Message.model_validate(m) for m in payload["messages"]]
        return InputRecord(
            id=row.id, user_id=row.user_id, kind=InputKind(row.kind), messages=messages, source_id=row.source_id,
            metadata=payload.get("metadata") or {},
            expires_at=datetime.fromisoformat(payload["expires_at"]) if payload.get("expires_at") else None,
            occurred_at=row.occurred_at, status=InputStatus(row.status), error=row.error,
            refused=list(row.refused or []), attempts=row.attempts,
            created_at=row.created_at, processed_at=row.processed_at,
        )

    def append(self, records: Sequence[InputRecord], *, claimed_by: str | None = None) -> None:
        """Log inputs; with `claimed_by` they are logged already claimed by that worker (no other
        worker can take them between logging and processing)."""
        if self.read_only is not None:
            raise InvalidInput(self.read_only)
        with Session(self.engine) as session:
            self._add(session, records, claimed_by)
            session.commit()

    def append_new(self, records: Sequence[InputRecord], *,
                   claimed_by: str | None = None) -> dict[str, LoggedSource]:
        """`append` for the records whose source (kind, source id and `occurred_at`: a screenshot file)
        the user's log does not hold yet; returns, by the id of each record left out, the input the log
        holds for it. Looking and writing are one step (the database write lock on SQLite, a lock per
        user on PostgreSQL), so two workers logging one file (two runs over a folder) log it once. A
        source the batch holds twice (one file listed twice) is logged once too, as its first record."""
        if self.read_only is not None:
            raise InvalidInput(self.read_only)
        with Session(self.engine) as session:
            self._lock_sources(session, {record.user_id for record in records})
            logged_before = self._logged_before(session, records)
            fresh = [r for r in records if r.id not in logged_before]
            repeated = self._repeated_sources(fresh, claimed_by)
            self._add(session, [r for r in fresh if r.id not in repeated], claimed_by)
            logged = [source_claim_id(r.user_id, r.kind, r.source_id, r.occurred_at) for r in fresh if r.source_id]
            if logged:  # the log holds these sources now: no claim on them is needed (`claim_source`)
                session.execute(delete(SourceClaimRow).where(col(SourceClaimRow.id).in_(logged)))
            session.commit()
        return logged_before | repeated

    def claim_source(self, kind: InputKind, user_id: str, source_id: str, occurred_at: datetime,
                     worker_id: str) -> SourceClaim:
        """Claim a source `worker_id` is about to read (a screenshot file, before its OCR), unless the log
        holds it already or another worker's claim on it is alive (`_alive`: its worker there and within
        the lease). One step with `append_new`'s (the same lock), so of two workers coming to one file one
        reads it and the other skips it. The claim lapses as an input's claim does, so a file whose worker
        died is read by the next; `renew_source_claims` keeps it while the worker works, and `append_new`
        (the file logged) or `release_source_claims` (nothing to log) ends it."""
        claim_id = source_claim_id(user_id, kind, source_id, occurred_at)
        with Session(self.engine) as session:
            self._lock_sources(session, [user_id])
            now = utcnow()
            logged = [entry for entry in self._sources(session, kind, user_id, [source_id], now)
                      if entry.occurred_at == occurred_at]
            # the row locked on PostgreSQL: a claim `clear_lapsed_source_claims` deletes meanwhile is not updated
            row = None if logged else session.get(SourceClaimRow, claim_id, with_for_update=True)
            taken = not logged and (row is None or row.claimed_by == worker_id
                                    or not self._alive(row.claimed_by, row.claimed_at, now))
            if taken and row is None:
                session.add(SourceClaimRow(id=claim_id, claimed_by=worker_id, claimed_at=now))
            elif taken and row is not None:
                row.claimed_by, row.claimed_at = worker_id, now
            session.commit()
        return SourceClaim(id=claim_id, taken=taken, logged=logged[0] if logged else None)

    def renew_source_claims(self, claim_ids: Sequence[str], worker_id: str) -> int:
        """Restart the lease of these claims on sources that `worker_id` still holds (as `renew`); how many."""
        if not claim_ids:
            return 0
        now = utcnow()
        with Session(self.engine) as session:
            result = session.execute(update(SourceClaimRow).where(
                col(SourceClaimRow.id).in_(list(claim_ids)), col(SourceClaimRow.claimed_by) == worker_id,
                col(SourceClaimRow.claimed_at) < now).values(claimed_at=now))
            assert isinstance(result, CursorResult)  # what SQLAlchemy returns for DML
            session.commit()
        return result.rowcount

    def release_source_claims(self, claim_ids: Sequence[str], worker_id: str) -> int:
        """End `worker_id`'s claims on these sources (read, and nothing of them to log; or not read after
        all): another worker may read them now. Claims taken over by another worker are left; how many."""
        if not claim_ids:
            return 0
        with Session(self.engine) as session:
            result = session.execute(delete(SourceClaimRow).where(
                col(SourceClaimRow.id).in_(list(claim_ids)), col(SourceClaimRow.claimed_by) == worker_id))
            assert isinstance(result, CursorResult)
            session.commit()
        return result.rowcount

    def lapsed_source_claims(self) -> list[str]:
        """The ids of claims on sources no worker holds any more (`_alive`: its process of this host gone, or
        its lease lapsed unrenewed): left by a run that was killed before it logged or gave back the file.
        Harmless (the next run to come to the file takes the claim over), but kept until then."""
        now = utcnow()
        with Session(self.engine) as session:
            rows = session.execute(select(col(SourceClaimRow.id), col(SourceClaimRow.claimed_by),
                                          col(SourceClaimRow.claimed_at))).all()
        return sorted(claim_id for claim_id, by, at in rows if not self._alive(by, at, now))

    def clear_lapsed_source_claims(self) -> int:
        """Delete the claims `lapsed_source_claims` finds, as they stand when deleted: one a worker took over
        or renewed meanwhile is kept (the rows are locked: the write lock on SQLite, the rows on PostgreSQL,
        so `claim_source` waits and then makes a claim of its own). How many went."""
        with Session(self.engine) as session:
            if self.engine.dialect.name == "sqlite":
                session.connection().exec_driver_sql("BEGIN IMMEDIATE")
            now = utcnow()
            rows = session.execute(select(SourceClaimRow).with_for_update()).scalars().all()
            lapsed = [row.id for row in rows if not self._alive(row.claimed_by, row.claimed_at, now)]
            for start in range(0, len(lapsed), SOURCES_PER_QUERY):
                session.execute(delete(SourceClaimRow).where(
                    col(SourceClaimRow.id).in_(lapsed[start:start + SOURCES_PER_QUERY])))
            session.commit()
        return len(lapsed)

    def _repeated_sources(self, records: Sequence[InputRecord], claimed_by: str | None) -> dict[str, LoggedSource]:
        """By record id, the input of the first of `records` with the same source (user, kind, source id,
        `occurred_at`), as it is about to be logged: the later ones are not logged beside it."""
        first: dict[tuple, InputRecord] = {}
        repeated: dict[str, LoggedSource] = {}
        now = utcnow()
        for record in records:
            if not record.source_id:
                continue
            key = (record.user_id, record.kind, record.source_id, record.occurred_at)
            logged = first.setdefault(key, record)
            if logged.id != record.id:
                repeated[record.id] = LoggedSource(
                    id=logged.id, source_id=record.source_id, occurred_at=logged.occurred_at,
                    status=InputStatus.processing if claimed_by else logged.status, error=logged.error,
                    held=bool(claimed_by) and self._alive(claimed_by, now, now))
        return repeated

    def _logged_before(self, session: Session, records: Sequence[InputRecord]) -> dict[str, LoggedSource]:
        """By record id, the input the log holds for the record's source (kind, source id, `occurred_at`)."""
        found: dict[str, LoggedSource] = {}
        now = utcnow()
        for user_id, kind in dict.fromkeys((r.user_id, r.kind) for r in records):
            sourced = [r for r in records if (r.user_id, r.kind) == (user_id, kind) and r.source_id]
            logged = {(e.source_id, e.occurred_at): e
                      for e in self._sources(session, kind, user_id, [r.source_id or "" for r in sourced], now)}
            found |= {r.id: logged[(r.source_id or "", r.occurred_at)] for r in sourced
                      if (r.source_id, r.occurred_at) in logged}
        return found

    def _add(self, session: Session, records: Sequence[InputRecord], claimed_by: str | None) -> None:
        now = utcnow()
        for record in records:
            row = self._to_row(record)
            if claimed_by:
                row.status, row.claimed_by, row.claimed_at, row.attempts = (
                    InputStatus.processing.value, claimed_by, now, row.attempts + 1)
            session.add(row)

    def _lock_sources(self, session: Session, user_ids: Iterable[str]) -> None:
        """Until the transaction ends no other `append_new` logs for these users: SQLite's write lock,
        or PostgreSQL advisory locks per user, taken in one order so two writers never wait on each other."""
        if self.engine.dialect.name == "sqlite":
            session.connection().exec_driver_sql("BEGIN IMMEDIATE")
            return
        for user_id in sorted(user_ids):
            session.execute(sql_text("SELECT pg_advisory_xact_lock(hashtext(:key))"),
                            {"key": f"mirix input sources {user_id}"})

    def compact(self, input_ids: Sequence[str]) -> int:
        """Replace the messages of these inputs by a hash once they are processed; returns how
        many rows changed (inputs not yet processed, or already compact, are left as they are)."""
        if not input_ids:
            return 0
        changed = 0
        with Session(self.engine) as session:
            rows = session.execute(select(InputRow).where(
                col(InputRow.id).in_(list(input_ids)), col(InputRow.status) == InputStatus.processed.value)).scalars()
            for row in rows:
                payload = json.loads(self.cipher.decrypt(row.payload))
                if isinstance(payload, list):
                    payload = {"messages": payload, "metadata": {}}
                if not payload.get("messages"):
                    continue
                metadata = dict(payload.get("metadata") or {})
                metadata.update(compact_digest(m["content"] for m in payload["messages"]))
                kept = {"messages": [], "metadata": metadata,
                        **({"expires_at": payload["expires_at"]} if payload.get("expires_at") else {})}
                row.payload = self.cipher.encrypt(json.dumps(kept, separators=(",", ":")))
                changed += 1
            session.commit()
        return changed

    def get(self, input_id: str, *, user_id: str | None = None) -> InputRecord | None:
        """The logged input. With `user_id`, another user's input reads as none (its text not decrypted):
        what a path acting for a user passes, whatever id it was handed or a memory cites."""
        with Session(self.engine) as session:
            row = session.get(InputRow, input_id)
            if row is None or (user_id is not None and row.user_id != user_id):
                return None
            return self._to_record(row)

    def mark(self, input_ids: Sequence[str], status: InputStatus, error: str | None = None,
             refused: Sequence[str] = ()) -> None:
        """`refused`: the model writes refused while processing them (replaced on every attempt)."""
        if not input_ids:
            return
        values: dict = {"status": status.value, "error": self.redact(error) if error else error,
                        "refused": [self.redact(r) for r in refused]}
        if status in (InputStatus.processed, InputStatus.degraded, InputStatus.failed):
            values.update(processed_at=utcnow(), claimed_by=None, claimed_at=None)
        with Session(self.engine) as session:
            session.execute(update(InputRow).where(col(InputRow.id).in_(list(input_ids))).values(**values))
            session.commit()

    def release(self, input_ids: Sequence[str], worker_id: str) -> int:
        """Give back inputs `worker_id` holds (`processing`) as `pending`, so any worker's `claim`
        (the background sweep, `work`, `resume`) takes them up; returns how many."""
        return self._set_held(input_ids, worker_id, status=InputStatus.pending.value, claimed_by=None, claimed_at=None)

    def renew(self, input_ids: Sequence[str], worker_id: str) -> int:
        """Restart the lease of the inputs `worker_id` still holds (`processing`, claimed by it), so no
        other worker takes them over while it works; a released or finished input is left as it is, and
        so is a claim taken after this renewal began (one that waited for a lock never moves it back).
        Returns how many were renewed."""
        now = utcnow()
        return self._set_held(input_ids, worker_id, col(InputRow.claimed_at) < now, claimed_at=now)

    def _set_held(self, input_ids: Sequence[str], worker_id: str, *also: ColumnElement[bool],
                  **values: object) -> int:
        """Set `values` on those of these inputs `worker_id` holds (`processing`, claimed by it) that meet
        `also`; how many."""
        if not input_ids:
            return 0
        with Session(self.engine) as session:
            result = session.execute(
                update(InputRow).where(col(InputRow.id).in_(list(input_ids)),
                                       col(InputRow.status) == InputStatus.processing.value,
                                       col(InputRow.claimed_by) == worker_id, *also).values(**values))
            assert isinstance(result, CursorResult)  # what SQLAlchemy returns for DML
            session.commit()
        return result.rowcount

    @contextmanager
    def keep_claimed(self, input_ids: Sequence[str], worker_id: str) -> Iterator[ClaimKeeper]:
        """Renew `worker_id`'s claims on these inputs every third of the lease while the block runs
        (`ClaimKeeper`): a batch that takes longer than the lease is not taken over, and done a second
        time, by another worker."""
        keeper = ClaimKeeper(self, input_ids, worker_id)
        keeper.start()
        try:
            yield keeper
        finally:
            keeper.stop()

    def by_status(self, status: InputStatus, *, user_id: str | None = None, limit: int = 1000) -> list[InputRecord]:
        query = select(InputRow).where(col(InputRow.status) == InputStatus(status).value)
        if user_id is not None:
            query = query.where(col(InputRow.user_id) == user_id)
        with Session(self.engine) as session:
            rows = session.execute(query.order_by(col(InputRow.created_at)).limit(limit)).scalars().all()
            return [self._to_record(r) for r in rows]

    def ids_by_status(self, statuses: Iterable[InputStatus], *, user_id: str | None = None) -> list[str]:
        """Every input id in these statuses, oldest first: plain columns, nothing decrypted, no cap (a
        caller working through them claims a chunk at a time)."""
        query = select(col(InputRow.id)).where(col(InputRow.status).in_([InputStatus(s).value for s in statuses]))
        if user_id is not None:
            query = query.where(col(InputRow.user_id) == user_id)
        with Session(self.engine) as session:
            return list(session.execute(query.order_by(col(InputRow.created_at), col(InputRow.id))).scalars())

    def newest(self, *, user_id: str, statuses: Iterable[InputStatus], limit: int, offset: int = 0,
               before: str | None = None) -> list[InputRecord]:
        """A page of one user's log (inputs of these statuses, newest first, ties by id), so a reader
        pages back to the oldest however many inputs each status holds. `before`: the cursor of the
        previous page's last input (`InputPosition.of(record).cursor()`): the inputs after it in this
        order, none listed twice or left out while inputs arrive or leave between pages. `offset`
        (not with `before`) skips that many of the newest: kept for older callers, as a page counted
        so repeats inputs when newer ones arrive. InvalidInput for a cursor `cursor()` did not write."""
        query = select(InputRow).where(col(InputRow.user_id) == user_id,
                                       col(InputRow.status).in_([InputStatus(s).value for s in statuses]))
        if before is not None:
            if offset:
                raise InvalidInput("a cursor and an offset cannot be combined: page by one of them")
            query = query.where(_listed_after(InputPosition.from_cursor(before)))
        query = query.order_by(col(InputRow.created_at).desc(), col(InputRow.id).desc()).offset(offset).limit(limit)
        with Session(self.engine) as session:
            return [self._to_record(r) for r in session.execute(query).scalars().all()]

    def by_kind(self, kind: InputKind, *, user_id: str, start: datetime | None = None, end: datetime | None = None,
                limit: int = 500, offset: int = 0) -> list[InputRecord]:
        """One user's inputs of one kind, newest `occurred_at` first, within [start, end)."""
        query = select(InputRow).where(col(InputRow.user_id) == user_id, col(InputRow.kind) == InputKind(kind).value)
        if start is not None:
            query = query.where(col(InputRow.occurred_at) >= start)
        if end is not None:
            query = query.where(col(InputRow.occurred_at) < end)
        query = query.order_by(col(InputRow.occurred_at).desc(), col(InputRow.id).desc()).offset(offset).limit(limit)
        with Session(self.engine) as session:
            return [self._to_record(r) for r in session.execute(query).scalars().all()]

    def by_source(self, kind: InputKind, *, user_id: str, source_ids: Iterable[str]) -> list[LoggedSource]:
        """One user's inputs of one kind logged under these source ids, any status. Reads plain columns
        only (nothing is decrypted), so a folder of frames is looked up at the cost of its names."""
        with Session(self.engine) as session:
            return self._sources(session, kind, user_id, source_ids, utcnow())

    def _sources(self, session: Session, kind: InputKind, user_id: str, source_ids: Iterable[str],
                 now: datetime) -> list[LoggedSource]:
        names = list(dict.fromkeys(source_ids))
        columns = (col(InputRow.id), col(InputRow.source_id), col(InputRow.occurred_at), col(InputRow.status),
                   col(InputRow.error), col(InputRow.claimed_by), col(InputRow.claimed_at))
        found: list[LoggedSource] = []
        for start in range(0, len(names), SOURCES_PER_QUERY):
            rows = session.execute(select(*columns).where(
                col(InputRow.user_id) == user_id, col(InputRow.kind) == InputKind(kind).value,
                col(InputRow.source_id).in_(names[start:start + SOURCES_PER_QUERY]))).all()
            found += [LoggedSource(id=i, source_id=source, occurred_at=at, status=InputStatus(status), error=error,
                                   held=status == InputStatus.processing.value and self._alive(by, since, now))
                      for i, source, at, status, error, by, since in rows]
        return found

    def _alive(self, claimed_by: str | None, claimed_at: datetime | None, now: datetime) -> bool:
        """A claim its worker still holds: the worker alive (`worker_alive`) and the lease not lapsed
        (a worker at work renews it: `keep_claimed`)."""
        return bool(claimed_by) and worker_alive(claimed_by or "") and claimed_at is not None \
            and now - claimed_at < self.lease

    def forget_actors(self, input_ids: Sequence[str], which: Callable[[str], bool]) -> None:
        """Drop actors from these inputs' `done_actors` (their writes were removed)."""
        if not input_ids:
            return
        with Session(self.engine) as session:
            for row in session.execute(select(InputRow).where(col(InputRow.id).in_(list(input_ids)))).scalars():
                row.done_actors = [a for a in (row.done_actors or []) if not which(a)]
            session.commit()

    def done_actors_each(self, input_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        """Each input's managers whose writes are committed for it."""
        if not input_ids:
            return {}
        with Session(self.engine) as session:
            rows = session.execute(select(col(InputRow.id), col(InputRow.done_actors))
                                   .where(col(InputRow.id).in_(list(input_ids)))).all()
        return {input_id: frozenset(done or []) for input_id, done in rows}

    def done_actors(self, input_ids: Sequence[str]) -> frozenset[str]:
        """Managers whose writes are committed for every one of these inputs."""
        if not input_ids:
            return frozenset()
        with Session(self.engine) as session:
            rows = session.execute(select(col(InputRow.done_actors))
                                   .where(col(InputRow.id).in_(list(input_ids)))).scalars().all()
        sets = [set(r or []) for r in rows]
        return frozenset(set.intersection(*sets)) if sets else frozenset()

    # ------------------------------------------------------------ claiming

    def claim(self, worker_id: str, *, limit: int = 100, input_ids: Iterable[str] | None = None,
              statuses: Sequence[InputStatus] = (InputStatus.pending,), include_stale: bool = True,
              include_own: bool = False, logged_before: datetime | None = None) -> list[InputRecord]:
        """Atomically take up to `limit` inputs for `worker_id`, oldest first: those in `statuses`
        (logged before `logged_before`, when given), those held by dead workers (`include_stale`) and,
        with `include_own`, those it already holds."""
        now = utcnow()
        wanted = [s.value for s in statuses]
        scope = [] if input_ids is None else [col(InputRow.id).in_(list(input_ids))]
        since = [] if logged_before is None else [col(InputRow.created_at) < logged_before]
        with Session(self.engine) as session:
            if self.engine.dialect.name == "sqlite":
                session.connection().exec_driver_sql("BEGIN IMMEDIATE")
                lock = lambda q: q  # noqa: E731 - the write lock is database-wide
            else:
                lock = lambda q: q.with_for_update(skip_locked=True)  # noqa: E731
            while True:  # again without inputs found undecryptable, so they never fill a claim's `limit`
                known_unreadable = len(self.unreadable)
                readable = [col(InputRow.id).not_in(self.unreadable)] if self.unreadable else []
                fresh_query = select(InputRow).where(col(InputRow.status).in_(wanted), *scope, *since, *readable) \
                    .order_by(col(InputRow.created_at)).limit(limit)
                taken = self._opened(session.execute(lock(fresh_query)).scalars().all())
                if len(self.unreadable) == known_unreadable:
                    break
            if include_stale or include_own:
                held_query = select(InputRow).where(col(InputRow.status) == InputStatus.processing.value, *scope,
                                                    *readable).order_by(col(InputRow.claimed_at)).limit(max(limit * 4, 64))
                for row, payload in self._opened(session.execute(lock(held_query)).scalars().all()):
                    own = row.claimed_by == worker_id
                    alive = self._alive(row.claimed_by, row.claimed_at, now)
                    if (own and include_own) or (not own and include_stale and not alive):
                        taken.append((row, payload))
            # oldest first, whatever state they were in: memories are built in the order inputs came
            taken = sorted(taken, key=lambda pair: (pair[0].created_at, pair[0].id))[:limit]
            for row, _ in taken:
                row.status, row.claimed_by, row.claimed_at = InputStatus.processing.value, worker_id, now
                row.attempts += 1
            records = [self._record(row, payload) for row, payload in taken]
            session.commit()
        return records

    def _opened(self, rows: Sequence[InputRow]) -> list[tuple[InputRow, dict]]:
        """The rows with their decrypted payloads. One this engine's vault key cannot decrypt (logged by
        an engine with another key) is left as it is, for an engine with that key, and said once."""
        opened = []
        for row in rows:
            try:
                opened.append((row, self._payload(row)))
            except VaultKeyError:
                if row.id not in self.unreadable:
                    log.warning("input %s cannot be decrypted with this engine's vault key: left %s for an engine "
                                "with the key it was logged under (every process on one database must use the "
                                "same MIRIX_VAULT_KEY)", row.id, row.status)
                self.unreadable.add(row.id)
        return opened

    def recoverable(self) -> int:
        """How many inputs are pending, or claimed by a worker that is gone."""
        with Session(self.engine) as session:
            rows = session.execute(select(col(InputRow.status), col(InputRow.claimed_by),
                                          col(InputRow.claimed_at)).where(
                col(InputRow.status).in_([InputStatus.pending.value, InputStatus.processing.value]))).all()
        now = utcnow()
        return sum(1 for status, by, at in rows if status == InputStatus.pending.value
                   or not by or not worker_alive(by) or at is None or now - at >= self.lease)


KEEPER_STOP_WAIT_S = 1.0  # how long `ClaimKeeper.stop` waits for a renewal under way


class ClaimKeeper:
    """Renews one worker's claims on some inputs from a daemon thread, every third of the lease, until
    `stop`. A thread of its own, because the worker's own thread may be blocked for minutes (a model's
    reply); a daemon, because a process that exits must stop renewing, so that its claims lapse.
    `renew`: how (`InputLog.renew` by default; `InputLog.renew_source_claims` for claims on sources being
    read). What it renews can change: `hold` adds claims, `forget` drops those whose work ended (inputs
    processed or handed back to the log), so a claim given back is not renewed while others still are."""

    def __init__(self, inputs: InputLog, input_ids: Sequence[str], worker_id: str, *,
                 renew: Callable[[Sequence[str], str], int] | None = None) -> None:
        self.inputs = inputs
        self.worker_id = worker_id
        self.renew = renew or inputs.renew
        self.every_s = inputs.lease.total_seconds() / 3
        self._ids = dict.fromkeys(input_ids)  # in order, once each
        self._lock = threading.Lock()
        self._started = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._renew_until_stopped, name="mirix-claim-keeper", daemon=True)

    @property
    def input_ids(self) -> list[str]:
        """The claims it renews now."""
        with self._lock:
            return list(self._ids)

    def start(self) -> None:
        if self.input_ids:
            self._start()

    def hold(self, input_ids: Sequence[str]) -> None:
        """Renew these claims too (started now, when it renewed none yet)."""
        with self._lock:
            self._ids.update(dict.fromkeys(input_ids))
        self._start()

    def forget(self, input_ids: Iterable[str]) -> int:
        """Renew these claims no more; returns how many it still renews."""
        with self._lock:
            for input_id in input_ids:
                self._ids.pop(input_id, None)
            return len(self._ids)

    def _start(self) -> None:
        with self._lock:
            if self._started or self._stopped.is_set():
                return
            self._started = True
        self._thread.start()

    def stop(self) -> None:
        """Renew no more; waits briefly for a renewal under way, not for one stuck behind a lock (SQLite's
        write lock, held by another writer): the batch goes on, and the renewal, when it ends, touches only
        what this worker still holds, never moving a later claim back (`InputLog.renew`)."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout=min(KEEPER_STOP_WAIT_S, self.inputs.lease.total_seconds()))

    def _renew_until_stopped(self) -> None:
        while not self._stopped.wait(self.every_s):
            input_ids = self.input_ids
            if not input_ids:
                continue
            try:
                self.renew(input_ids, self.worker_id)
            except Exception as exc:  # the database failing: tried again next time; meanwhile the lease runs
                log.warning("could not renew the claims on %d input(s) (%s)", len(input_ids), type(exc).__name__)
