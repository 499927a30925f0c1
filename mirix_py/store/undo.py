"""Undo: take back every change one input caused, from the history table.

For each memory the input touched, the state before the input's first change to it is put back:
an inserted memory is deleted, an updated one gets its earlier fields (a vault entry its earlier
secret, kept encrypted in history for this), a deleted one (a merge's losers too) comes back under
its id. The reverts go through the store's one write path, so they are history events themselves
(actor `undo:<input id>`). A memory changed again by a later input is a conflict: undo refuses,
naming it, unless `force` (then the later change is overwritten too).

`plan_undo` is pure: events in, operations out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from sqlalchemy import select
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput
from mirix_py.tools.ops import DeleteOp, InsertOp, Op, UpdateOp
from mirix_py.records import MASK, MEMORY_ADAPTER, HistoryEvent, MemoryChange, utcnow
from mirix_py.store.tables import HistoryRow

UNDO_ACTOR_PREFIX = "undo:"
_NOT_RESTORED = frozenset({"id", "user_id", "memory_type", "created_at", "updated_at"})


def undo_actor(input_id: str) -> str:
    return UNDO_ACTOR_PREFIX + input_id


@dataclass
class UndoPlan:
    ops: list[Op] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # "<memory id> (changed later by <input or actor>)"
    already_undone: bool = False


def _restorable(state: dict[str, Any], decrypt) -> dict[str, Any]:
    """A history state as memory fields, with a vault entry's secret decrypted from its token."""
    from mirix_py.store.memories import SECRET_TOKEN

    data = dict(state)
    token = data.pop(SECRET_TOKEN, None)
    if token is not None:
        data["secret_value"] = decrypt(token)
    return data


def standing(events: Sequence[HistoryEvent]) -> list[HistoryEvent]:
    """The changes among `events` (oldest first) that still stand: an undo's own reverts are not
    changes, nor is a change of an input undone after it (the later inputs taken back first, as
    the refusal asks, leave the earlier one free to be undone)."""
    out: list[HistoryEvent] = []
    for i, event in enumerate(events):
        if event.actor.startswith(UNDO_ACTOR_PREFIX):
            continue
        if event.input_id and any(e.actor == undo_actor(event.input_id) for e in events[i + 1:]):
            continue
        out.append(event)
    return out


def plan_undo(input_id: str, histories: dict[str, Sequence[HistoryEvent]], *, decrypt, force: bool = False) -> UndoPlan:
    """The operations that put back each memory in `histories` (memory id -> its events, oldest
    first) as it was before `input_id`'s first change to it."""
    plan = UndoPlan()
    undo_by = undo_actor(input_id)
    reverts: list[Op] = []
    undone = 0
    for memory_id, events in histories.items():
        mine = [i for i, e in enumerate(events) if e.input_id == input_id and e.actor != undo_by]
        if not mine:
            continue
        later = events[mine[-1] + 1:]
        reverted = [i for i, e in enumerate(later) if e.actor == undo_by]
        if reverted and not standing(later[reverted[-1] + 1:]):
            undone += 1
            continue
        others = standing(later)
        if others and not force:
            who = others[0].input_id or others[0].actor
            plan.conflicts.append(f"{memory_id} (changed later by {who})")
            continue
        target = events[mine[0]].before
        current = events[-1].after
        if target is None:
            if current is not None:
                reverts.append(DeleteOp(memory_id=memory_id))
        elif current is None:
            data = _restorable(target, decrypt)
            if data.get("secret_value") == MASK:
                plan.conflicts.append(f"{memory_id} (a deleted vault entry whose secret history does not hold)")
                continue
            data["updated_at"] = utcnow()  # restored now; created when it first was (apply keeps both)
            reverts.append(InsertOp(memory=MEMORY_ADAPTER.validate_python(data)))
        else:
            data = _restorable(target, decrypt)
            fields = {k: v for k, v in data.items() if k not in _NOT_RESTORED}
            reverts.append(UpdateOp(memory_id=memory_id, fields=fields))
    plan.already_undone = undone > 0 and not reverts and not plan.conflicts
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


def undo_input(store, input_id: str, *, user_id: str, force: bool = False) -> list[MemoryChange]:
    """Revert every change `input_id` caused for `user_id`, in one transaction; the changes made.
    InvalidInput (and nothing written) when the input changed nothing, was undone already, or a
    memory it touched was changed since (without `force`)."""
    ids = touched_by(store, user_id, input_id)
    if not ids:
        raise InvalidInput(f"input {input_id!r} changed no memory of user {user_id!r} (or was processed in a "
                           "batch of several inputs, and none of its changes cites it alone)")
    histories = {mid: store.history(mid, user_id=user_id, secrets=True) for mid in ids}
    plan = plan_undo(input_id, histories, decrypt=store.cipher.decrypt, force=force)
    if plan.conflicts:
        raise InvalidInput("cannot undo input {}: {}; undo the later changes first or force".format(
            input_id, "; ".join(plan.conflicts)))
    if plan.already_undone:
        raise InvalidInput(f"input {input_id!r} was already undone")
    # input_id stays None: the revert must not add the undone input to the memories' provenance
    return store.apply(plan.ops, user_id=user_id, actor=undo_actor(input_id), keep_times=True)
