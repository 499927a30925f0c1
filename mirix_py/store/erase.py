"""Erasing what a deletion took: `Mirix.delete(..., erase=True)`, a user's "forget that I said that".

A plain deletion is a history event, and the input log keeps what was said, so the words stay in the
store. An erasing write (`MemoryStore.apply(..., erase=Erasure())`) takes them out in its own
transaction, after its changes are written:

- every history event of a memory it deletes keeps who, when, which operation and which input; its
  states are emptied (`before` and `after` read as None, `HistoryEvent.erased`); so are those of the
  memories a merge folded into it and left folded (their states hold words it held), and so on;
- a memory it changes keeps its history, with what it took back left out of every state: a core
  block's taken-back lines (from `value`, `said`, `said_offsets`, `line_sources` and `line_cites`); for any other
  memory put back as it was (a fact a deleted turn had changed), the changed state is replaced by the
  one it was put back to. The events whose states changed read `erased`;
- what an earlier change restated from what the turn alone said (`said_only_in`: a rewrite of the turn
  took back its first words' core line and fact): those lines leave every state of the user's core
  blocks, and such a memory already deleted has its history emptied;
- a memory that stays, which a change of an input the erasure erases (below) made before a later one
  changed it (a window's resource a later frame updated, a fact a later turn changed again), keeps its
  history with the state that change made read as the one before it (none for an insert), in its
  event and as the next one's start: its last change is the memory as it stands (one the erasure did not
  put back holds what other inputs said too). Core blocks lose lines instead (above);
- an input no episode left cites (a turn or a screenshot frame still there) loses its text: its
  messages, its metadata (a window's title) and the model writes refused for it (they quote it) go,
  and neither the text's digest that `InputLog.compact` keeps (a short text's hash confirms a guess)
  nor its error stay; its id, kind, source, times and status stay. Its thumbnail's path is in
  `thumbnails`, for the caller to remove after the commit. A fact, a window's resource or a core line
  that stays still citing it does not keep it: a restatement holds its own copy of its words, and the
  input held the erased turn's whole message. An input another episode still cites keeps its text,
  but for the messages only deleted memories cited: by their ids, and a message without one by the time
  it was said, which its turn's episode was made at (`said_at`). Its other messages without a time of
  their own are given the one they were said at (their place in the list): no later erasure finds
  another message at a dropped one's place;
- the OpenAI Agents SDK session items that carried a message the input log lost (`store.agent_sessions`:
  found by the message's id, an item kept before ids were recorded by its text) have their text
  replaced, before the commit: a failure there erases nothing of the store.

The caller has SQLite's full-text index written again without the words before the commit and
truncates the write-ahead log (`store.sqlite_erase`); on PostgreSQL the rows are rewritten, and their
dead versions stay in the table files until PostgreSQL's own VACUUM reclaims them. The state rewrites
are pure functions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Callable, Collection, Iterable, Protocol, Sequence

from sqlalchemy import select
from sqlmodel import Session, col

from mirix_py.records import MemoryBase, MemoryType, Operation
from mirix_py.store.agent_sessions import SessionStore
from mirix_py.store.citations import citing
from mirix_py.store.crypto import Cipher, VaultKeyError
from mirix_py.store.history_keys import MERGED, MERGED_INTO, SECRET_TOKEN
from mirix_py.store.summaries import TURN_EVENT
from mirix_py.store.questions import INPUT_PREFIX
from mirix_py.store.said_keys import all_covered, covered, said_where
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
    maps = [key for key in ("said", "said_offsets", "line_sources", "line_cites") if isinstance(state.get(key), dict)]
    if lines.isdisjoint(value) and all(lines.isdisjoint(state[key]) for key in maps):
        return state
    out = {**state, "value": "\n".join(line for line in value if line not in lines)}
    for key in maps:
        out[key] = {line: held for line, held in state[key].items() if line not in lines}
    return out


def lines_said_only_in(state: State, alone: frozenset[str]) -> frozenset[str]:
    """A core block state's lines every message of which (`line_sources`) is among `alone`, an input
    standing for each of its messages without an id (`said_keys.covered`)."""
    sources = (state or {}).get("line_sources") or {}
    return frozenset(line for line, said_in in sources.items() if all_covered(said_in, alone))


def put_back(changed: dict[str, Any], restored: dict[str, Any]) -> Callable[[State], State]:
    """A rewrite of states that replaces the `changed` state by the one it was put back to."""
    def rewrite(state: State) -> State:
        return restored if state is not None and _content(state) == _content(changed) else state
    return rewrite


def _content(state: dict[str, Any]) -> dict[str, Any]:
    """A state as compared: not its `updated_at`, nor what undo keeps beside the fields (`$` keys)."""
    return {k: v for k, v in state.items() if k != "updated_at" and not k.startswith("$")}


def _fields(state: State) -> State:
    """A state without what undo keeps beside the fields (`$` keys: they belong to its event)."""
    return None if state is None else {k: v for k, v in state.items() if not k.startswith("$")}


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


def folded_in(rows: HistoryStates) -> list[str]:
    """The memories a merge folded into this one, as its merge events name them (`MERGED`)."""
    return list(dict.fromkeys(m for _, before, _ in rows for m in ((before or {}).get(MERGED) or ())))


def folded_into(rows: HistoryStates, survivor: str) -> bool:
    """Whether a memory's history ends in a merge's deletion of it into `survivor` (not brought back since)."""
    if not rows:
        return False
    last, before, _ = rows[-1]
    return last.operation == Operation.delete.value and (before or {}).get(MERGED_INTO) == survivor


def without_changes_of(rows: HistoryStates, inputs: Collection[str]) -> None:
    """The history of a memory that stays, with each state a change of one of `inputs` made read as the
    state before that change (None for an insert), in that event and as the next event's start; the
    events whose states change read erased. The last change is left: its state is the memory as it stands."""
    old = [(unmarked(before), unmarked(after)) for _, before, after in rows]
    new = list(old)
    for i in range(len(rows) - 1):
        before, after = new[i]
        if rows[i][0].input_id not in inputs or after is None:  # a deletion made no state
            continue
        new[i] = (before, _fields(before))
        following, its_after = new[i + 1]
        if following is not None and _content(following) == _content(after):  # the next change started from it
            new[i + 1] = (_carried(before, following), its_after)
    for (row, _, _), was, now in zip(rows, old, new):
        if now != was:
            row.before, row.after = now[0], {**(now[1] or {}), ERASED: True}


def _carried(state: State, replaced: dict[str, Any]) -> State:
    """`state` as the start of the change that started from `replaced`: that change's merge marks stay,
    and the earlier secret is the token `state` holds (the secret before the change taken out), else the
    one `replaced` holds (the change taken out kept the secret)."""
    if state is None:
        return None
    marks = {key: replaced[key] for key in (MERGED, MERGED_INTO) if key in replaced}
    token = state.get(SECRET_TOKEN, replaced.get(SECRET_TOKEN))
    return {**(_fields(state) or {}), **marks, **({SECRET_TOKEN: token} if token is not None else {})}


def said_at(rows: HistoryStates) -> tuple[str, datetime] | None:
    """The input and time of the message a turn's own episode was made of (its first state: the rules
    make one episode a message, at the time the message was said), for a message without an id."""
    first = unmarked(rows[0][2]) if rows else None
    if not first or first.get("event_type") != TURN_EVENT or not first.get("occurred_at"):
        return None
    inputs = [s for s in first.get("source_ids") or () if s.startswith(INPUT_PREFIX)]
    return (inputs[0], _moment(first["occurred_at"])) if len(inputs) == 1 else None


def said_times(occurred_at: datetime, messages: Sequence[dict[str, Any]]) -> list[datetime]:
    """When each message of an input was said: its own time, else the input's and its place in the list
    (a microsecond apiece, as `agents.offline.managers.prepare_batch` orders them)."""
    return [_moment(m["occurred_at"]) if m.get("occurred_at") else occurred_at + timedelta(microseconds=i)
            for i, m in enumerate(messages)]


def _moment(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


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
    sessions: SessionStore | None = None
    """The data dir's agent sessions (`agent_sessions.kept_in`), whose items lose the erased messages' words."""
    messages: list[dict[str, Any]] = field(default_factory=list, init=False, repr=False)
    """The messages whose text left the input log, as it held them (`content`, `id` when given)."""
    turns_said: dict[str, set[datetime]] = field(default_factory=dict, init=False, repr=False)
    """Input id -> when the turns whose histories it emptied were said (`said_at`): their messages without
    ids leave the input's text."""

    def run(self, store: Histories, session: Session, plans: Sequence[Planned], *, user_id: str) -> None:
        """In the write's transaction, its changes written: the history and the inputs (module doc)."""
        session.flush()
        for plan in plans:
            if plan.before is None:  # an insert: a vault entry the write's guard made
                continue
            rows = store.history_states(session, plan.memory_id, user_id=user_id)
            if plan.after is None:
                self._empty(store, session, plan.memory_id, user_id, rows)
            else:
                rewritten(rows, taken_out(store.history_dump(plan.before), store.history_dump(plan.after)))
        cited = {s for p in plans if p.before is not None and p.after is None for s in p.before.source_ids}
        for memory_id in sorted(self.emptied_ids):
            rows = store.history_states(session, memory_id, user_id=user_id)
            cited.update((unmarked(rows[-1][1]) or {}).get("source_ids") or () if rows else ())  # as it was deleted
            self._empty(store, session, memory_id, user_id, rows)
        if self.said_only_in:
            self._erase_earlier_restatements(store, session, user_id)
        erased = self._erase_inputs(session, store.cipher, user_id, cited | self.said_only_in)
        self._take_out_changes_of(store, session, user_id, erased)
        if self.sessions is not None and self.messages:
            self.sessions.erase_said(user_id, self.messages)

    def _empty(self, store: Histories, session: Session, memory_id: str, user_id: str,
               rows: HistoryStates | None = None) -> None:
        """Empty a memory's history, and that of each memory a merge folded into it and left folded (its
        states hold words the merge's text took in), theirs in turn; a turn's message is noted (`said_at`)."""
        pending = [(memory_id, rows if rows is not None else store.history_states(session, memory_id, user_id=user_id))]
        done = {memory_id}
        while pending:
            survivor, states = pending.pop()
            members = folded_in(states)
            turn = said_at(states)
            if turn is not None:
                self.turns_said.setdefault(turn[0], set()).add(turn[1])
            emptied(states)
            for member in members:
                if member in done:
                    continue
                member_states = store.history_states(session, member, user_id=user_id)
                if folded_into(member_states, survivor):
                    done.add(member)
                    pending.append((member, member_states))

    @staticmethod
    def _take_out_changes_of(store: Histories, session: Session, user_id: str, inputs: set[str]) -> None:
        """The states that changes of these erased inputs made in the histories of memories that stay
        (`without_changes_of`); a core block's lines are taken out line by line instead."""
        if not inputs:
            return
        changed = session.execute(select(col(HistoryRow.memory_id)).where(
            col(HistoryRow.user_id) == user_id, col(HistoryRow.input_id).in_(sorted(inputs)),
            col(HistoryRow.memory_type) != MemoryType.core.value).distinct()).scalars().all()
        for memory_id in sorted(changed):
            without_changes_of(store.history_states(session, memory_id, user_id=user_id), inputs)

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
            if first is not None and all(covered(s, alone) for s in said_where(first.get("source_ids") or (),
                                                                              first.get("said_in") or ())):
                self._empty(store, session, memory_id, user_id, rows)

    def _erase_inputs(self, session: Session, cipher: Cipher, user_id: str, cited: set[str]) -> set[str]:
        """The text of the cited inputs no episode cites any more, or of their messages only deleted
        memories cited; the ids of the inputs erased whole."""
        input_ids = sorted(s for s in cited if s.startswith(INPUT_PREFIX))
        if not input_ids:
            return set()
        rows = session.execute(select(InputRow).where(col(InputRow.id).in_(input_ids),
                                                      col(InputRow.user_id) == user_id)).scalars().all()
        payloads = {row.id: _payload(cipher, row) for row in rows}
        said = {m["id"] for p in payloads.values() for m in p["messages"] if m.get("id")}
        held = still_cited(session, user_id, {*input_ids, *said})
        erased: set[str] = set()
        for row in rows:
            payload = payloads[row.id]
            ids = {row.id, *(m["id"] for m in payload["messages"] if m.get("id"))}
            if ids.isdisjoint(held):
                self._erase_whole(row, payload, cipher)
                erased.add(row.id)
                continue
            messages = payload["messages"]
            times = said_times(row.occurred_at, messages)
            unnamed = [when for m, when in zip(messages, times) if not m.get("id")]
            turns = {when for when in self.turns_said.get(row.id, ()) if unnamed.count(when) == 1}  # else unknown
            kept = [(m, when) for m, when in zip(messages, times)
                    if not (m["id"] in cited and m["id"] not in held if m.get("id") else when in turns)]
            if len(kept) < len(messages):
                left = {id(m) for m, _ in kept}
                self.messages += [m for m in messages if id(m) not in left]
                pinned = [m if m.get("occurred_at") else {**m, "occurred_at": when.isoformat()} for m, when in kept]
                row.payload = cipher.encrypt(json.dumps({**payload, "messages": pinned}))
        return erased

    def _erase_whole(self, row: InputRow, payload: dict[str, Any], cipher: Cipher) -> None:
        thumbnail = (payload.get("metadata") or {}).get("thumbnail")
        if thumbnail:
            self.thumbnails.append(thumbnail)
        self.messages += payload["messages"]
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


__all__ = ["ERASED", "ERASED_INPUT", "Erasure", "folded_in", "folded_into", "is_erased", "put_back", "said_at",
           "said_times", "still_cited", "taken_out", "unmarked", "without_changes_of", "without_lines"]
