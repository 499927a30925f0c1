"""Undo: take back every change one input caused, from the history table.

For each memory the input touched, the state before the input's first change to it is put back:
an inserted memory is deleted, an updated one gets its earlier fields (a vault entry its earlier
secret, kept encrypted in history for this), a deleted one (a merge's losers too) comes back under
its id. The reverts go through the store's one write path, so they are history events themselves
(actor `undo:<input id>`). A memory changed again by a later input is a conflict: undo refuses,
naming it, unless `force` (then the later change is overwritten too). A memory whose words a later
`delete(..., erase=True)` erased is named as erased; forced, the undo does what it still can: an
erased memory's states are gone, so it stays deleted, and a state put back holds no erased word.

Merges. A merge folds memories into its first one (the survivor; the others are deleted), and
history names the members (`MERGED` on the survivor's event, `MERGED_INTO` on each deletion). An
input whose memory a later merge folded away conflicts with that merge like with any later change.
Forced, the undo takes the whole merge back, since the survivor's text may hold the folded memory's
words and cites its input: the survivor returns to its state before the merge, the merge's other
members come back, and the input's own memories stay deleted. A merge of a memory the forced undo
overwrites anyway (its survivor put back to before the merge, one of its members deleted) is taken
back the same way, and so on. A merge recorded before history named its members is not found: its
survivor keeps the merged text (the input's folded memory still stays deleted, below).

Undone stays undone. The changes a revert took back (the input's own and, when forced, the later
ones up to the revert) no longer stand on that memory: undoing one of those later inputs afterwards
leaves the memory as it is, instead of putting back a state that still held what the first undo
took away. A memory whose insert is taken back stays deleted: when a later change had deleted it
already, the undo records a deletion with nothing before (`apply`'s `left_deleted`), so undoing that
later change (a merge too) does not bring it back.

`plan_undo` is pure: events in, operations out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from sqlalchemy import select
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput, LaterChanges, MemoryNotFound
from mirix_py.tools.ops import DeleteOp, InsertOp, Op, UpdateOp
from mirix_py.records import MASK, MEMORY_ADAPTER, HistoryEvent, MemoryChange, utcnow
from mirix_py.store.history_keys import MERGED, MERGED_INTO, SECRET_TOKEN, UNDO_KEYS
from mirix_py.store.tables import HistoryRow

UNDO_ACTOR_PREFIX = "undo:"
_NOT_RESTORED = frozenset({"id", "user_id", "memory_type", "created_at", "updated_at"})
_NOT_COMPARED = UNDO_KEYS | {"updated_at"}  # a revert takes a new `updated_at`; undo's keys are no fields


def undo_actor(input_id: str) -> str:
    return UNDO_ACTOR_PREFIX + input_id


@dataclass
class UndoPlan:
    ops: list[Op] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # "<memory id> (changed later by <input or actor>)"
    changed_later: bool = False  # the conflicts are later changes, which `force` overwrites
    already_undone: bool = False
    left_deleted: list[str] = field(default_factory=list)  # deleted already; recorded as staying deleted
    needs: set[str] = field(default_factory=set)  # members of merges to take back whose history is not given


def _restorable(state: dict[str, Any], decrypt) -> dict[str, Any]:
    """A history state as memory fields, with a vault entry's secret decrypted from its token."""
    data = {k: v for k, v in state.items() if k not in (MERGED, MERGED_INTO)}
    token = data.pop(SECRET_TOKEN, None)
    if token is not None:
        data["secret_value"] = decrypt(token)
    return data


def restored_fields(state: dict[str, Any], decrypt) -> dict[str, Any]:
    """A history state as the fields an update puts back (not its id, owner, type or times)."""
    return {k: v for k, v in _restorable(state, decrypt).items() if k not in _NOT_RESTORED}


def _is_undo(event: HistoryEvent) -> bool:
    return event.actor.startswith(UNDO_ACTOR_PREFIX)


def _content(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """A state as reverts are compared (`_NOT_COMPARED` left out)."""
    return None if state is None else {k: v for k, v in state.items() if k not in _NOT_COMPARED}


def overwritten(events: Sequence[HistoryEvent]) -> set[int]:
    """Indices of `events` (one memory's, oldest first) that no longer stand: an undo's own reverts,
    and what each revert took back, from the first standing change of the input it undid (or the
    latest change whose `before` it put back: a merge taken back) to the revert, a forced undo's
    later changes in between too."""
    gone: set[int] = set()
    for r, revert in enumerate(events):
        if not _is_undo(revert):
            continue
        undone_input = revert.actor.removeprefix(UNDO_ACTOR_PREFIX)
        own = next((i for i in range(r) if i not in gone and events[i].input_id == undone_input), r)
        restored = _content(revert.after)
        put_back = next((i for i in reversed(range(r)) if i not in gone and not _is_undo(events[i])
                         and _content(events[i].before) == restored), r)
        gone.update(range(min(own, put_back), r + 1))
    return gone


def _merge_partners(event: HistoryEvent) -> Iterable[tuple[str, str]]:
    """(other member, what its history holds of this merge) for a merge event or a merge's deletion:
    a survivor's members each have a deletion `MERGED_INTO` it, a member's survivor an event `MERGED` it."""
    before = event.before or {}
    for member in before.get(MERGED) or ():
        yield member, "deletion"
    if before.get(MERGED_INTO):
        yield before[MERGED_INTO], "merge"


def _partner_event(events: Sequence[HistoryEvent], gone: set[int], of: HistoryEvent, memory_id: str,
                   kind: str) -> int | None:
    """Index in a merge partner's `events` of its side of the merge `of` (an event of `memory_id`),
    unless taken back already."""
    if kind == "deletion":  # the first deletion into `memory_id` after the merge event
        found = [i for i, e in enumerate(events) if e.id > of.id and (e.before or {}).get(MERGED_INTO) == memory_id]
        index = found[0] if found else None
    else:  # the survivor's latest merge event naming `memory_id` before its deletion
        found = [i for i, e in enumerate(events) if e.id < of.id and memory_id in ((e.before or {}).get(MERGED) or ())]
        index = found[-1] if found else None
    return None if index is None or index in gone else index


def _take_back_merges(histories: Mapping[str, Sequence[HistoryEvent]], gone: dict[str, set[int]],
                      starts: dict[str, int], needs: set[str]) -> None:
    """Extend `starts` (memory id -> index of the first event to take back) over every merge an
    event to take back belongs to, until none is left; partners not in `histories` go into `needs`."""
    pending = list(starts)
    while pending:
        memory_id = pending.pop()
        events = histories[memory_id]
        for i in range(starts[memory_id], len(events)):
            if i in gone[memory_id]:
                continue
            for partner, kind in _merge_partners(events[i]):
                if partner not in histories:
                    needs.add(partner)
                    continue
                index = _partner_event(histories[partner], gone[partner], events[i], memory_id, kind)
                if index is not None and index < starts.get(partner, len(histories[partner])):
                    starts[partner] = index
                    pending.append(partner)


def _revert(memory_id: str, events: Sequence[HistoryEvent], start: int, overwrites: bool, plan: UndoPlan,
            decrypt) -> Op | None:
    """The operation that puts a memory back as it was before `events[start]` (or records that it
    stays deleted, when it `overwrites` a later deletion); a conflict in `plan` where it cannot."""
    target = events[start].before
    current = events[-1].after
    if target is None:
        if current is not None:
            return DeleteOp(memory_id=memory_id)
        if overwrites:
            plan.left_deleted.append(memory_id)
        return None
    data = _restorable(target, decrypt)
    if current is None:
        if data.get("secret_value") == MASK:
            plan.conflicts.append(f"{memory_id} (a deleted vault entry whose secret history does not hold)")
            return None
        data["updated_at"] = utcnow()  # restored now; created when it first was (apply keeps both)
        return InsertOp(memory=MEMORY_ADAPTER.validate_python(data))
    return UpdateOp(memory_id=memory_id, fields={k: v for k, v in data.items() if k not in _NOT_RESTORED})


def plan_undo(input_id: str, histories: Mapping[str, Sequence[HistoryEvent]], *, decrypt, force: bool = False) -> UndoPlan:
    """The operations that put back each memory in `histories` (memory id -> its events, oldest
    first) as it was before `input_id`'s first standing change to it; forced, before each merge
    taken back too (whose members not in `histories` are the plan's `needs`)."""
    plan = UndoPlan()
    gone = {memory_id: overwritten(events) for memory_id, events in histories.items()}
    starts: dict[str, int] = {}
    undone = 0
    for memory_id, events in histories.items():
        ever = [i for i, e in enumerate(events) if e.input_id == input_id]
        mine = [i for i in ever if i not in gone[memory_id]]
        if ever and not mine:
            undone += 1
            continue
        if not mine:
            continue
        others = [events[i] for i in range(mine[-1] + 1, len(events)) if i not in gone[memory_id]]
        if others and not force:
            erased = next((e for e in others if e.erased), None)
            plan.conflicts.append(f"{memory_id} (erased later by {erased.actor}: its words are gone)" if erased
                                  else f"{memory_id} (changed later by {others[0].input_id or others[0].actor})")
            plan.changed_later = True
            continue
        starts[memory_id] = mine[0]
    if plan.conflicts:
        return plan
    if force:
        _take_back_merges(histories, gone, starts, plan.needs)
        if plan.needs:
            return plan
    reverts: list[Op] = []
    for memory_id, start in starts.items():
        events = histories[memory_id]
        overwrites = any(i not in gone[memory_id] and events[i].input_id != input_id
                         for i in range(start, len(events)))
        op = _revert(memory_id, events, start, overwrites, plan, decrypt)
        if op is not None:
            reverts.append(op)
    plan.already_undone = undone > 0 and not reverts and not plan.conflicts and not plan.left_deleted
    # deletions first: a restored memory may reuse nothing, but a deleted insert frees its vault value
    plan.ops = [op for op in reverts if isinstance(op, DeleteOp)] + [op for op in reverts if not isinstance(op, DeleteOp)]
    return plan


def touched_by(store, user_id: str, input_id: str) -> list[str]:
    """Ids of the memories whose history names `input_id`, in the order first touched."""
    with Session(store.engine) as session:
        ids = session.execute(select(col(HistoryRow.memory_id)).where(
            col(HistoryRow.user_id) == user_id, col(HistoryRow.input_id) == input_id).order_by(col(HistoryRow.id))
        ).scalars().all()
    return list(dict.fromkeys(ids))


def undone_inputs(store, input_ids: Sequence[str]) -> set[str]:
    """Those of `input_ids` an undo has reverted (a history event of actor `undo:<id>` exists)."""
    found: set[str] = set()
    with Session(store.engine) as session:
        for i in range(0, len(input_ids), 500):
            actors = [undo_actor(input_id) for input_id in input_ids[i:i + 500]]
            found.update(a.removeprefix(UNDO_ACTOR_PREFIX) for a in session.execute(
                select(col(HistoryRow.actor)).where(col(HistoryRow.actor).in_(actors)).distinct()).scalars())
    return found


def _histories(store, memory_ids: Iterable[str], user_id: str) -> dict[str, list[HistoryEvent]]:
    """Each memory's events with what undo keeps (`secrets=True`); none for one the user has no history of."""
    out: dict[str, list[HistoryEvent]] = {}
    for memory_id in memory_ids:
        try:
            out[memory_id] = store.history(memory_id, user_id=user_id, secrets=True)
        except MemoryNotFound:
            out[memory_id] = []
    return out


def undo_input(store, input_id: str, *, user_id: str, force: bool = False) -> list[MemoryChange]:
    """Revert every change `input_id` caused for `user_id`, in one transaction; the changes made.
    InvalidInput (and nothing written) when the input changed nothing, was undone already, or a
    memory it touched was changed since (without `force`; forced, merges are taken back: module doc)."""
    ids = touched_by(store, user_id, input_id)
    if not ids:
        raise InvalidInput(f"input {input_id!r} changed no memory of user {user_id!r} (or was processed in a "
                           "batch of several inputs, and none of its changes cites it alone)")
    histories = _histories(store, ids, user_id)
    plan = plan_undo(input_id, histories, decrypt=store.cipher.decrypt, force=force)
    while plan.needs:  # a forced undo taking merges back reads their members' histories too
        histories.update(_histories(store, plan.needs, user_id))
        plan = plan_undo(input_id, histories, decrypt=store.cipher.decrypt, force=force)
    if plan.conflicts:
        refusal = LaterChanges if plan.changed_later else InvalidInput
        raise refusal("cannot undo input {}: {}; undo the later changes first or force".format(
            input_id, "; ".join(plan.conflicts)))
    if plan.already_undone:
        raise InvalidInput(f"input {input_id!r} was already undone (or a forced undo took back what it changed)")
    # input_id stays None: the revert must not add the undone input to the memories' provenance
    return store.apply(plan.ops, user_id=user_id, actor=undo_actor(input_id), keep_times=True,
                       left_deleted=plan.left_deleted)
