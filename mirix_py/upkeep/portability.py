"""Export and import of memories as JSON lines.

A line is `{"memory": <record, secret masked>, "secret_ciphertext": <Fernet token or null>,
"cited_inputs": [<the inputs it cites, without their text>]}`: secrets never leave in the clear, and
import restores them only under the same vault key; the inputs it lacks are logged without text
(`cited_inputs`), so the memories rank as in the store they came from.
An export holds what reads show: a memory past its expiry (not yet swept) is left out.
An id already in the store is skipped, also when another import (another engine, the same file)
writes it while this one runs: the write that finds it there drops it and goes on.
"""

from __future__ import annotations

import json
from functools import partial
from itertools import islice
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, TypeVar

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput
from mirix_py.tools.ops import InsertOp
from mirix_py.boundary.inputs import check_storable, check_user, parse_when
from mirix_py.records import MEMORY_ADAPTER, KnowledgeVaultMemory, Memory, MemoryChange, utcnow
from mirix_py.store.crypto import VaultKeyError
from mirix_py.store.expiry import unexpired
from mirix_py.store.input_tags import cited_inputs, logged_tags
from mirix_py.store.memories import MemoryStore
from mirix_py.store.private import open_private
from mirix_py.store.tables import MemoryRow
from mirix_py.upkeep.cited_inputs import CitedInput, inferred_inputs, inputs_of_lines, log_inputs

Numbered = list[tuple[int, InsertOp]]  # a user's lines to write: (line number, its insert)
T = TypeVar("T")


def export_lines(store: MemoryStore, out: IO[str], *, user_id: str | None = None, batch: int = 500) -> int:
    """Write the memories reads show now, one JSON line each with the inputs it cites; returns how
    many. One past its expiry is left out as reads leave it out: it is only waiting for the sweep to
    delete it."""
    query = (select(MemoryRow).where(unexpired(utcnow()))
             .order_by(col(MemoryRow.user_id), col(MemoryRow.created_at), col(MemoryRow.id)))
    if user_id is not None:
        query = query.where(col(MemoryRow.user_id) == user_id)
    count = 0
    with Session(store.engine) as session, Session(store.engine) as inputs_session:
        for rows in _chunks(session.execute(query.execution_options(yield_per=batch)).scalars(), batch):
            records = [store.to_record(row) for row in rows]
            for row, record, inputs in zip(rows, records, inputs_of_lines(inputs_session, records)):
                out.write(json.dumps({"memory": record.model_dump(mode="json"), "secret_ciphertext": row.secret,
                                      "cited_inputs": [i.model_dump(mode="json") for i in inputs]}) + "\n")
                count += 1
    return count


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def import_lines(store: MemoryStore, lines: Iterable[str]) -> dict[str, int]:
    """Insert the exported memories whose ids are not in the store yet, each as exported (its times
    included). Every line is checked first, as the store's write path would check it: one bad line
    raises InvalidInput naming it, and nothing is written. The inputs the lines cite that the store
    lacks are logged (without text) before the memories are written (`cited_inputs.log_inputs`)."""
    parsed: list[tuple[int, Memory]] = []
    line_of: dict[str, int] = {}
    cited_on: dict[int, list[CitedInput]] = {}  # line number -> the inputs it carries
    uncarried: list[Memory] = []  # lines of an export written before lines carried their inputs
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        memory, cited = _parse_line(store, number, line)
        if cited is None:
            uncarried.append(memory)
        else:
            cited_on[number] = cited
        if memory.id:
            if memory.id in line_of:
                raise InvalidInput(f"line {number}: memory id {memory.id!r} is on line {line_of[memory.id]} too")
            line_of[memory.id] = number
        parsed.append((number, memory))
    _check_inputs_owned(store, parsed, cited_on)
    existing = _existing_ids(store, list(line_of))
    by_user: dict[str, Numbered] = {}
    for number, memory in parsed:
        if memory.id not in existing:
            by_user.setdefault(memory.user_id, []).append((number, InsertOp(memory=memory)))
    for user_id, numbered in list(by_user.items()):
        _, by_user[user_id] = _skipping_taken(store, numbered, existing, partial(_check_user_lines, store, user_id))
    inputs: dict[str, tuple[str, CitedInput]] = {}  # input id -> (its user, the input), of the lines written
    for user_id, numbered in by_user.items():
        for number, _ in numbered:
            for cited_input in cited_on.get(number, ()):
                owner, _ = inputs.setdefault(cited_input.id, (user_id, cited_input))
                if owner != user_id:
                    raise InvalidInput(f"line {number}: cited input {cited_input.id!r} is cited by {owner!r}'s "
                                       f"lines too: an input is one user's")
    for user_id in dict.fromkeys(m.user_id for m in uncarried):
        for cited_input in inferred_inputs([m for m in uncarried if m.user_id == user_id]):
            inputs.setdefault(cited_input.id, (user_id, cited_input))
    log_inputs(store, inputs)
    imported = 0
    for user_id, numbered in by_user.items():
        written, _ = _skipping_taken(store, numbered, existing, partial(_write_user_lines, store, user_id))
        imported += len(written)
    return {"imported": imported, "skipped_existing": len(existing)}


def _write_user_lines(store: MemoryStore, user_id: str, numbered: Numbered) -> list[MemoryChange]:
    return store.apply([op for _, op in numbered], user_id=user_id, actor="import", keep_times=True)


def _existing_ids(store: MemoryStore, ids: list[str]) -> set[str]:
    existing: set[str] = set()
    with Session(store.engine) as session:
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            existing.update(session.execute(select(col(MemoryRow.id)).where(col(MemoryRow.id).in_(chunk))).scalars())
    return existing


def _skipping_taken(store: MemoryStore, numbered: Numbered, existing: set[str],
                    step: Callable[[Numbered], T]) -> tuple[T, Numbered]:
    """`step(numbered)` and the lines it took. When it is refused because another writer (an import
    of the same file at once) stored some of these ids since they were looked up, those join
    `existing` and the step runs again without them, as if they had been there from the start (each
    run has fewer lines). Refused for any other reason: raised."""
    while True:
        try:
            return step(numbered), numbered
        except (InvalidInput, IntegrityError):
            taken = _existing_ids(store, [op.memory.id for _, op in numbered if op.memory.id])
            if not taken:
                raise
            existing.update(taken)
            numbered = [(n, op) for n, op in numbered if op.memory.id not in taken]


def _parse_line(store: MemoryStore, number: int, line: str) -> tuple[Memory, list[CitedInput] | None]:
    """The line's memory (its vault secret decrypted) and the inputs it cites (None: a line written
    before lines carried them)."""
    try:
        data = json.loads(line)
        memory: Memory = MEMORY_ADAPTER.validate_python(data["memory"])
        cited = None if "cited_inputs" not in data else [CitedInput.model_validate(i) for i in data["cited_inputs"]]
    except (json.JSONDecodeError, KeyError, TypeError, ValidationError) as exc:
        raise InvalidInput(f"line {number} is not an exported memory: {exc}") from exc
    try:
        check_user(memory.user_id)
        for field in ("occurred_at", "created_at", "updated_at"):  # the years `add` takes: lists sort by
            parse_when(getattr(memory, field), field, stored=True)  # these, and inferred inputs take them
        _check_cited(memory, cited or [])
    except InvalidInput as exc:
        raise InvalidInput(f"line {number}: {exc}") from exc
    token = data.get("secret_ciphertext")
    if isinstance(memory, KnowledgeVaultMemory):
        try:
            secret = store.cipher.decrypt(token) if token else ""
        except VaultKeyError as exc:
            raise InvalidInput(f"line {number}: vault secret was exported under another vault key") from exc
        memory = memory.model_copy(update={"secret_value": secret})
    return memory, cited


def _check_cited(memory: Memory, cited: list[CitedInput]) -> None:
    """A line's inputs are inputs its memory cites, each storable."""
    for cited_input in cited:
        if cited_input.id not in memory.source_ids:
            raise InvalidInput(f"cited input {cited_input.id!r} is not among the memory's source ids")
        check_storable(cited_input.source_id, "cited input's source_id")
        parse_when(cited_input.occurred_at, "cited input's occurred_at", stored=True)  # the years `add` takes
        parse_when(cited_input.created_at, "cited input's created_at", stored=True)


def _check_inputs_owned(store: MemoryStore, parsed: list[tuple[int, Memory]],
                        cited_on: dict[int, list[CitedInput]]) -> None:
    """InvalidInput naming the first line whose memory cites an input this store logs for another user,
    whether its line carries inputs or not (an older export's does not): the memory would cite that
    user's input. One the file carries on that user's lines is the file's own (an export of a store
    where a memory cited it); one logged nowhere here is an input of the store the file came from."""
    carried = {(i.id, memory.user_id) for number, memory in parsed for i in cited_on.get(number, ())}
    with store.engine.connect() as conn:
        logged = logged_tags(conn, cited_inputs(memory.source_ids for _, memory in parsed))
    for number, memory in parsed:
        for source_id in memory.source_ids:
            owner = logged[source_id].user_id if source_id in logged else memory.user_id
            if owner != memory.user_id and (source_id, owner) not in carried:
                raise InvalidInput(f"line {number}: source_ids cite {source_id!r}, another user's input in this "
                                   f"store: a memory may cite its own user's inputs only")


def _check_user_lines(store: MemoryStore, user_id: str, numbered: Numbered) -> None:
    """The user's lines as one write; when refused, the first line refused on its own is named."""
    try:
        store.check([op for _, op in numbered], user_id=user_id, keep_times=True)
    except InvalidInput as whole:
        for number, op in numbered:
            try:
                store.check([op], user_id=user_id, keep_times=True)
            except InvalidInput as exc:
                raise InvalidInput(f"line {number}: {exc}") from exc
        raise InvalidInput(f"user {user_id!r}'s lines: {whole}") from whole


def export_to(store: MemoryStore, dest: str | Path | IO[str], *, user_id: str | None = None) -> int:
    """`export_lines` into an open file, or a path (written owner-only: it holds every memory)."""
    if isinstance(dest, (str, Path)):
        with open_private(dest, "w", encoding="utf-8") as fh:
            return export_lines(store, fh, user_id=user_id)
    return export_lines(store, dest, user_id=user_id)


def import_from(store: MemoryStore, src: str | Path | IO[str] | Iterable[str]) -> dict[str, int]:
    """`import_lines` from an open file, lines, or a path."""
    if isinstance(src, (str, Path)):
        with open(src, encoding="utf-8") as fh:
            return import_lines(store, fh)
    return import_lines(store, src)
