"""Erasing what a deletion took: `Mirix.delete(..., erase=True)`, a user's "forget that I said that".

A plain deletion is a history event, and the input log keeps what was said, so the words stay in the
store. An erasing write (`MemoryStore.apply(..., erase=Erasure())`) takes them out in its own
transaction, after its changes are written:

- every history event of a memory it deletes keeps who, when, which operation and which input; its
  states are emptied (`before` and `after` read as None, `HistoryEvent.erased`);
- a memory it changes keeps its history, with what it took back left out of every state: a core
  block's taken-back lines (from `value`, `said`, `said_offsets` and `line_sources`); for any other
  memory put back as it was (a fact a deleted turn had changed), the changed state is replaced by the
  one it was put back to. The events whose states changed read `erased`;
- what an earlier change restated from what the turn alone said (`said_only_in`: a rewrite of the turn
  took back its first words' core line and fact): those lines leave every state of the user's core
  blocks, and such a memory already deleted has its history emptied;
- an input no episode left cites (a turn or a screenshot frame still there) loses its text: its
  messages, its metadata (a window's title) and the model writes refused for it (they quote it) go,
  and neither the text's digest that `InputLog.compact` keeps (a short text's hash confirms a guess)
  nor its error stay; its id, kind, source, times and status stay. Its thumbnail's path is in
  `thumbnails`, for the caller to remove after the commit. A fact, a window's resource or a core line
  that stays still citing it does not keep it: a restatement holds its own copy of its words, and the
  input held the erased turn's whole message. An input another episode still cites keeps its text,
  but for the messages (by their ids) only deleted memories cited: a multi-message input's other
  turns still hold it, and messages without ids cannot be told apart.

The caller has SQLite's full-text index written again without the words before the commit and
truncates the write-ahead log (`store.sqlite_erase`); on PostgreSQL the rows are rewritten, and their
dead versions stay in the table files until PostgreSQL's own VACUUM reclaims them. The state rewrites
are pure functions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

from sqlalchemy import select
from sqlmodel import Session, col

from mirix_py.records import MemoryBase, MemoryType
from mirix_py.store.citations import citing
from mirix_py.store.crypto import Cipher, VaultKeyError
from mirix_py.store.questions import INPUT_PREFIX
from mirix_py.store.tables import HistoryRow, InputRow, MemoryRow

ERASED = "$erased"  # in a history row's stored `after`: the event's states were erased
ERASED_INPUT = {"erased": "true"}  # an erased input's metadata

State = dict[str, Any] | None
HistoryStates = Sequence[tuple[HistoryRow, State, State]]  # rows with their full states (`history_states`)


class Planned(Protocol):
    """One change of the erasing write, as `MemoryStore.apply` planned it (None: none before, or deleted)."""

    @property
    def memory_id(self) -> str: ...
    @property
    def before(self) -> MemoryBase | None: ...
    @property
    def after(self) -> MemoryBase | None: ...


class Histories(Protocol):
    """What the erasure reads of the store (`MemoryStore`): history states in the write's session, a
    record as history keeps it, and the cipher of the input log."""

    cipher: Cipher

    def history_states(self, session: Session, memory_id: str, *, user_id: str | None = None) -> HistoryStates: ...
    def history_dump(self, memory: MemoryBase) -> dict[str, Any]: ...


def is_erased(stored_after: State) -> bool:
    """Whether a history row's stored `after` marks its event as erased."""
    return stored_after is not None and ERASED in stored_after


def unmarked(state: State) -> State:
    """A state without the erased mark; an erased event's emptied state is None."""
    if state is None or ERASED not in state:
        return state
    return {k: v for k, v in state.items() if k != ERASED} or None


def without_lines(state: State, lines: frozenset[str]) -> State:
    """A core block's state without these lines, in its value and in the maps kept by line."""
    if state is None or not lines:
        return state
    value = str(state.get("value") or "").splitlines()
    maps = [key for key in ("said", "said_offsets", "line_sources") if isinstance(state.get(key), dict)]
    if lines.isdisjoint(value) and all(lines.isdisjoint(state[key]) for key in maps):
        return state
    out = {**state, "value": "\n".join(line for line in value if line not in lines)}
    for key in maps:
        out[key] = {line: held for line, held in state[key].items() if line not in lines}
    return out


def lines_said_only_in(state: State, alone: frozenset[str]) -> frozenset[str]:
    """A core block state's lines every message of which (`line_sources`) is among `alone`."""
    sources = (state or {}).get("line_sources") or {}
    return frozenset(line for line, said_in in sources.items() if said_in and set(said_in) <= alone)


def put_back(changed: dict[str, Any], restored: dict[str, Any]) -> Callable[[State], State]:
    """A rewrite of states that replaces the `changed` state by the one it was put back to."""
    def rewrite(state: State) -> State:
        return restored if state is not None and _content(state) == _content(changed) else state
    return rewrite


def _content(state: dict[str, Any]) -> dict[str, Any]:
    """A state as compared: not its `updated_at`, nor what undo keeps beside the fields (`$` keys)."""
    return {k: v for k, v in state.items() if k != "updated_at" and not k.startswith("$")}


def taken_out(before: dict[str, Any], after: dict[str, Any]) -> Callable[[State], State]:
    """How the states of a memory an erasing write changed from `before` to `after` are rewritten:
    a core block loses the lines it lost; any other memory, put back, loses the state it had."""
    if before.get("memory_type") == MemoryType.core.value:
        gone = frozenset(str(before.get("value") or "").splitlines()) - set(str(after.get("value") or "").splitlines())
        return lambda state: without_lines(state, gone)
    return put_back(before, after)


def emptied(rows: HistoryStates) -> None:
    """Every event of a deleted memory: states gone, the rest kept."""
    for row, _, _ in rows:
        row.before, row.after = None, {ERASED: True}


def rewritten(rows: HistoryStates, rewrite: Callable[[State], State]) -> None:
    """Every event whose states `rewrite` changes keeps them whole (no patch: the state it was read
    against may have changed) and marked erased; the others stay as stored."""
    for row, before, after in rows:
        before, after = unmarked(before), unmarked(after)
        new_before, new_after = rewrite(before), rewrite(after)
        if (new_before, new_after) != (before, after):
            row.before, row.after = new_before, {**(new_after or {}), ERASED: True}


@dataclass
class Erasure:
    """An erasing write's work in its transaction (`run`), and what it leaves its caller: the thumbnails
    (paths relative to the data dir's thumbnails folder, `ingest.thumbnails`) of the inputs it erased,
    to remove once the write is committed."""

    thumbnails: list[str] = field(default_factory=list)
    said_only_in: frozenset[str] = frozenset()
    """The ids (inputs, messages, caller's ids) the erased turn alone cites (`agents.derived.held_alone`):
    what earlier changes restated from them alone is erased too (a core line or fact an earlier rewrite of
    the turn took back, whose words stay in history)."""
    emptied_ids: frozenset[str] = frozenset()
    """Memories deleted before without erasure whose history is emptied (`Mirix.delete` of one again)."""

    def run(self, store: Histories, session: Session, plans: Sequence[Planned], *, user_id: str) -> None:
        """In the write's transaction, its changes written: the history and the inputs (module doc)."""
        session.flush()
        for plan in plans:
            if plan.before is None:  # an insert: a vault entry the write's guard made
                continue
            rows = store.history_states(session, plan.memory_id, user_id=user_id)
            if plan.after is None:
                emptied(rows)
            else:
                rewritten(rows, taken_out(store.history_dump(plan.before), store.history_dump(plan.after)))
        for memory_id in sorted(self.emptied_ids):
            emptied(store.history_states(session, memory_id, user_id=user_id))
        if self.said_only_in:
            self._erase_earlier_restatements(store, session, user_id)
        cited = {s for p in plans if p.before is not None and p.after is None for s in p.before.source_ids}
        self._erase_inputs(session, store.cipher, user_id, cited | self.said_only_in)

    def _erase_earlier_restatements(self, store: Histories, session: Session, user_id: str) -> None:
        """Core lines said only where the turn alone did leave every state of the user's blocks; a memory
        already deleted that was made from what the turn alone said has its history emptied."""
        alone = self.said_only_in
        blocks = session.execute(select(col(MemoryRow.id)).where(
            col(MemoryRow.user_id) == user_id, col(MemoryRow.memory_type) == MemoryType.core.value)).scalars().all()
        for block_id in blocks:
            rewritten(store.history_states(session, block_id, user_id=user_id),
                      lambda state: without_lines(state, lines_said_only_in(state, alone)))
        inputs = sorted(s for s in alone if s.startswith(INPUT_PREFIX))
        if not inputs:
            return
        made = set(session.execute(select(col(HistoryRow.memory_id)).where(
            col(HistoryRow.user_id) == user_id, col(HistoryRow.input_id).in_(inputs),
            col(HistoryRow.operation) == "insert")).scalars())
        present = set(session.execute(select(col(MemoryRow.id)).where(col(MemoryRow.id).in_(sorted(made)))).scalars())
        for memory_id in sorted(made - present):
            rows = store.history_states(session, memory_id, user_id=user_id)
            first = unmarked(rows[0][2]) if rows else None
            if first is not None and set(first.get("source_ids") or ()) <= alone:
                emptied(rows)

    def _erase_inputs(self, session: Session, cipher: Cipher, user_id: str, cited: set[str]) -> None:
        input_ids = sorted(s for s in cited if s.startswith(INPUT_PREFIX))
        if not input_ids:
            return
        rows = session.execute(select(InputRow).where(col(InputRow.id).in_(input_ids),
                                                      col(InputRow.user_id) == user_id)).scalars().all()
        payloads = {row.id: _payload(cipher, row) for row in rows}
        said = {m["id"] for p in payloads.values() for m in p["messages"] if m.get("id")}
        held = still_cited(session, user_id, {*input_ids, *said})
        for row in rows:
            payload = payloads[row.id]
            ids = {row.id, *(m["id"] for m in payload["messages"] if m.get("id"))}
            if ids.isdisjoint(held):
                self._erase_whole(row, payload, cipher)
                continue
            kept = [m for m in payload["messages"] if not m.get("id") or m["id"] not in cited or m["id"] in held]
            if len(kept) < len(payload["messages"]):
                row.payload = cipher.encrypt(json.dumps({**payload, "messages": kept}))

    def _erase_whole(self, row: InputRow, payload: dict[str, Any], cipher: Cipher) -> None:
        thumbnail = (payload.get("metadata") or {}).get("thumbnail")
        if thumbnail:
            self.thumbnails.append(thumbnail)
        kept = {"messages": [], "metadata": dict(ERASED_INPUT),
                **({"expires_at": payload["expires_at"]} if payload.get("expires_at") else {})}
        row.payload = cipher.encrypt(json.dumps(kept, separators=(",", ":")))
        row.refused, row.error = [], None


def _payload(cipher: Cipher, row: InputRow) -> dict[str, Any]:
    """An input row's decrypted payload (schema 0001 logged the bare list of messages); one another
    vault key wrote reads as holding no message (erased whole when no episode cites it, else left)."""
    try:
        payload = json.loads(cipher.decrypt(row.payload))
    except VaultKeyError:
        return {"messages": [], "metadata": {}}
    return {"messages": payload, "metadata": {}} if isinstance(payload, list) else payload


def still_cited(session: Session, user_id: str, ids: Iterable[str]) -> set[str]:
    """Those of `ids` an episode of the user (a turn or a frame) cites, read in the erasing write's
    transaction (`store.citations`: its deletions already out). Only episodes count: what other
    memories restate they hold in their own words."""
    return set(citing(session.connection(), user_id, ids, [MemoryType.episodic.value]))


__all__ = ["ERASED", "ERASED_INPUT", "Erasure", "is_erased", "put_back", "still_cited", "taken_out",
           "unmarked", "without_lines"]
