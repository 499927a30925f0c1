"""The inputs exported memories cite, carried beside them without their text.

Every memory of an input added with a caller's id (`add(source_id="sess-1")`) cites that id beside
the input's id and its message's, and search tells the caller's id from what was said by the input
log (`store.input_tags`). The log itself is not exported: it holds the inputs' text, encrypted. So
an export line carries, for each input its memory cites, what the log keeps of it besides the text
(id, kind, caller's id, times), and an import logs the inputs the store lacks as processed inputs
without text, as `InputLog.compact` leaves them. Without them every turn of a tagged input would
count as two things said, be taken for a summary (`summaries.sums_up`) and rank below the rest.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from pydantic import AwareDatetime, BaseModel, Field
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput
from mirix_py.records import InputKind, InputRecord, InputStatus, Memory
from mirix_py.store.input_tags import cited_inputs
from mirix_py.store.inputs import InputLog
from mirix_py.store.memories import MemoryStore
from mirix_py.store.questions import ANSWER_PREFIX, INPUT_PREFIX, QUESTION_PREFIX
from mirix_py.store.tables import InputRow

_CHUNK = 500  # ids per IN (...)


class CitedInput(BaseModel):
    """An input as an export line carries it: what the input log keeps of it besides its text."""

    id: str = Field(max_length=64, pattern=f"^{INPUT_PREFIX}[0-9A-Za-z_-]+$",
                    description="The input's id, as the memory cites it among its source ids.")
    kind: InputKind = Field(description="What was added: text, messages, a document or a screenshot.")
    source_id: str | None = Field(default=None, max_length=256, description="The caller's id of the input "
                                  "(`add(source_id=...)`), None when it had none.")
    occurred_at: AwareDatetime = Field(description="When what the input holds was said or seen.")
    created_at: AwareDatetime = Field(description="When the input was logged.")


def _logged(session: Session, input_ids: Iterable[str]) -> dict[str, tuple[str, CitedInput]]:
    """Input id -> (its user, the input as an export carries it), for the logged ones among these ids."""
    ids = sorted(set(input_ids))
    found: dict[str, tuple[str, CitedInput]] = {}
    for n in range(0, len(ids), _CHUNK):
        rows = session.execute(select(col(InputRow.id), col(InputRow.user_id), col(InputRow.kind),
                                      col(InputRow.source_id), col(InputRow.occurred_at), col(InputRow.created_at))
                               .where(col(InputRow.id).in_(ids[n:n + _CHUNK]))).all()
        found.update({i: (user, CitedInput(id=i, kind=InputKind(kind), source_id=tag, occurred_at=at, created_at=logged))
                      for i, user, kind, tag, at, logged in rows})
    return found


def inputs_of_lines(session: Session, memories: Sequence[Memory]) -> list[list[CitedInput]]:
    """For each memory, the inputs of its user's log it cites (what its export line carries). Another
    user's input is left out, whatever the memory cites (a caller's id may be any string): its caller's
    id and times are that user's."""
    known = _logged(session, cited_inputs(m.source_ids for m in memories))
    return [[known[i][1] for i in dict.fromkeys(m.source_ids) if i in known and known[i][0] == m.user_id]
            for m in memories]


def inferred_inputs(memories: Sequence[Memory]) -> list[CitedInput]:
    """The tagged inputs these memories cite, read from their source ids alone: an export written
    before exports carried inputs. A memory of an input cites [input, caller's id, message id, ...]
    (`agents.offline.managers`), so an id that every one of these memories citing the input cites
    right after it, with a message cited after that by one of them, is taken for the caller's id; ids
    of inputs and of chat exchanges never are. An input without one needs no log entry to rank:
    nothing it cites is taken for something said."""
    following: dict[str, set[str]] = {}
    before_a_message: set[str] = set()
    for memory in memories:
        cited = memory.source_ids
        for n, input_id in enumerate(cited):
            if input_id.startswith(INPUT_PREFIX):
                following.setdefault(input_id, set()).add(cited[n + 1] if n + 1 < len(cited) else "")
                if n + 2 < len(cited) and not cited[n + 2].startswith(INPUT_PREFIX):
                    before_a_message.add(input_id)
    tags = {i: next(iter(after)) for i, after in following.items() if len(after) == 1 and i in before_a_message}
    return [_inferred(input_id, tag, memories) for input_id, tag in sorted(tags.items())
            if tag and not tag.startswith((INPUT_PREFIX, QUESTION_PREFIX, ANSWER_PREFIX))]


def _inferred(input_id: str, tag: str, memories: Sequence[Memory]) -> CitedInput:
    """A tagged input known only from the memories citing it: its times are theirs (the earliest)."""
    citing = [m for m in memories if input_id in m.source_ids]
    return CitedInput(id=input_id, kind=InputKind.messages, source_id=tag,  # only messages carry message ids
                      occurred_at=min(m.occurred_at or m.created_at for m in citing),
                      created_at=min(m.created_at for m in citing))


def log_inputs(store: MemoryStore, owned: dict[str, tuple[str, CitedInput]]) -> int:
    """Log the inputs the store lacks (input id -> (user id, input)) as processed inputs without
    text, so search reads their caller's ids as it does in the store they came from; returns how
    many. One another import logs meanwhile is left to it."""
    log = InputLog(store.engine, store.cipher)
    log.read_only = store.read_only
    with Session(store.engine) as session:
        logged = _logged(session, owned)
    _no_other_users(logged, owned)
    wanted = [i for i in owned if i not in logged]
    while wanted:
        try:
            log.append([_record(owned[i][0], owned[i][1]) for i in wanted])
            break
        except IntegrityError:
            with Session(store.engine) as session:
                taken = _logged(session, wanted)
            if not taken:
                raise
            _no_other_users(taken, owned)  # another import logged it meanwhile: for the same user only
            wanted = [i for i in wanted if i not in taken]
    store.input_tags.forget(owned)
    return len(wanted)


def _no_other_users(logged: dict[str, tuple[str, CitedInput]], owned: dict[str, tuple[str, CitedInput]]) -> None:
    """InvalidInput when an input the lines cite is logged for another user than theirs: its caller's id
    would rank their memories, and their export would carry its times."""
    for input_id, (user_id, _) in logged.items():
        if user_id != owned[input_id][0]:
            raise InvalidInput(f"cited input {input_id!r} is another user's input in this store")


def _record(user_id: str, cited: CitedInput) -> InputRecord:
    """A processed input whose text is not kept: the form `InputLog.compact` leaves an input in."""
    return InputRecord(id=cited.id, user_id=user_id, kind=cited.kind, messages=[], source_id=cited.source_id,
                       occurred_at=cited.occurred_at, status=InputStatus.processed, created_at=cited.created_at,
                       processed_at=cited.created_at)
