"""What names a message without an id of its own among those a core line was said in (`CoreMemory.line_sources`).

A message with an id is named by it, and the one message of an input by the input's id. A message of an
input of several, without an id, is named by its input and the time it was said (`message_key`): the
same two things an erasure finds it by in the input log (`store.erase.said_at`, `said_times`), so
deleting or erasing its turn takes back the core lines it alone said, and not those of the input's other
messages. The input stands for each of its messages (`covered`): a turn that alone cites its input (the
input's only turn left) takes back the lines said in any of its messages. Blocks written before keys were
recorded name the input, which its other turns still cite, so their lines stay. A fact cites the input in
`source_ids` (which ranking reads: a memory citing several messages sums them up) and keeps the keys of
such messages apart, in `SemanticMemory.said_in`. Pure functions.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Collection, Iterable, Mapping

from mirix_py.store.questions import INPUT_PREFIX
from mirix_py.store.summaries import TURN_EVENT

SEPARATOR = "@"


def message_key(input_id: str, said_at: datetime | str) -> str:
    """The key of the message of `input_id` said at `said_at` (in UTC, as stored): "in_…@2026-09-01T09:00:00.000001+00:00"."""
    when = said_at if isinstance(said_at, datetime) else datetime.fromisoformat(said_at)
    return f"{input_id}{SEPARATOR}{when.astimezone(timezone.utc).isoformat()}"


def key_input(said_in: str) -> str | None:
    """The input a message key names, or None for another id (a message's, an input's)."""
    input_id, sep, when = said_in.partition(SEPARATOR)
    if not sep or not input_id.startswith(INPUT_PREFIX):
        return None
    try:
        datetime.fromisoformat(when)
    except ValueError:
        return None
    return input_id


def key_time(said_in: str) -> datetime | None:
    """When the message a key names was said (None for another id)."""
    return datetime.fromisoformat(said_in.partition(SEPARATOR)[2]) if key_input(said_in) else None


def covered(said_in: str, alone: Collection[str]) -> bool:
    """Whether what was said in `said_in` was said only where `alone` holds: it is there, or it is a message
    key whose input is."""
    return said_in in alone or key_input(said_in) in alone


def all_covered(said_in: Iterable[str], alone: Collection[str]) -> bool:
    """Whether every message of `said_in` is `covered` by `alone` (never when there is none)."""
    said = list(said_in)
    return bool(said) and all(covered(s, alone) for s in said)


def of_input(input_id: str, keys: Iterable[str]) -> list[str]:
    """The keys among `keys` that name messages of `input_id`."""
    return [k for k in keys if key_input(k) == input_id]


def said_where(source_ids: Iterable[str], keys: Collection[str]) -> list[str]:
    """Where a memory citing `source_ids` was said: each input it cites by the keys of its messages among
    `keys` (`SemanticMemory.said_in`) when it has some, else the input itself; any other id as it is."""
    return [k for s in source_ids for k in (of_input(s, keys) if s.startswith(INPUT_PREFIX) else []) or [s]]


def turn_key(state: Mapping[str, Any] | None) -> str | None:
    """The key of the message a turn's own episode was made of, from its first state (the rules make one
    episode a message, at the time it was said, citing its one input); None for another memory."""
    if not state or state.get("event_type") != TURN_EVENT or not state.get("occurred_at"):
        return None
    inputs = [s for s in state.get("source_ids") or () if s.startswith(INPUT_PREFIX)]
    return message_key(inputs[0], state["occurred_at"]) if len(inputs) == 1 else None


__all__ = ["all_covered", "covered", "key_input", "key_time", "message_key", "of_input", "said_where", "turn_key"]
