"""What a turn's restatements are, so deleting or rewriting the turn takes them back.

The offline rules (and a model's tools) restate what a turn said elsewhere: a core line ("Kim: lives in
Lisbon"), a semantic fact, a procedure, a resource (a long text, a screen's words), a vault entry (a PIN
said in the turn). `undo` of the input takes all of them back; deleting the turn's episode must not leave
them serving words it no longer holds, nor giving it a new summary its core lines and facts (`taken_back`).
A restatement is taken back when everything it was said in is held by the episode alone: each message it
cites (a core line's `line_sources`; for any other memory, per input it cites, the messages cited after
it, else a fact's messages without ids (`SemanticMemory.said_in`), or the input when it names none of
its messages; `store.said_keys`) is cited by that episode and by no other. One that also cites
other messages holds more than the episode did and stays: a core line then keeps only those others
(deleting them too takes it back), any other memory keeps its sources (provenance), and a change the
episode made to it is put back when it is its last (a window's resource grown by a deleted frame); a
core line the turn replaced comes back while an episode left says it (`_replaced_put_back`). A block
then cites what its lines left cite (`core_blocks.cited_after`). A vault
entry a memory left still points at (`[vault:<id>]`) stays. A core line without recorded sources
(written through the API, or before they were recorded) is never taken back. Structural only: no text
is compared. A rewritten chat turn's new words are read again by the offline rules for core lines and
facts (`said_anew`), so a corrected turn ("I live in Lisbn" → "… Lisbon") keeps what it says.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple, Sequence

from mirix_py.agents import core_blocks
from mirix_py.records import (
    CoreMemory, EpisodicMemory, InputKind, InputRecord, MemoryBase, MemoryType, Message, Operation, SemanticMemory,
)
from mirix_py.secrets.detection import CAPTION_QUOTES
from mirix_py.store.memories import MemoryStore
from mirix_py.store.questions import INPUT_PREFIX
from mirix_py.store.said_keys import all_covered, covered, key_input, message_key, of_input, turn_key
from mirix_py.store.undo import restored_fields
from mirix_py.tools.ops import DeleteOp, Op, UpdateOp

if TYPE_CHECKING:
    from mirix_py.agents.offline.flow import OfflineFlow
    from mirix_py.store.inputs import InputLog



def rewrites_text(current: MemoryBase, fields: dict) -> bool:
    """Whether `update(fields)` changes what the episode `current` says: its summary (a turn's words).
    Its details are a note beside them (a longer text kept as a resource, a screen's context, "Lars
    moved away" added later): changing them, or when it expires, leaves the words it says as they were."""
    return isinstance(current, EpisodicMemory) and "summary" in fields \
        and _spaced(str(fields["summary"])) != _spaced(current.summary)


def _spaced(text: str) -> str:
    """The words as said, spacing aside: a trailing space is no new statement."""
    return " ".join(text.split())


def taken_back(store: MemoryStore, episode: MemoryBase, *, deleting: bool = False) -> list[Op]:
    """The operations that take back what only `episode` said: core lines left out of their block;
    facts, procedures, resources and vault entries deleted (or their last change put back). None for
    a memory that is not an episode (deleting one restatement leaves the others of its turn). A rewrite
    (`deleting` false) takes back core lines and facts only: a procedure, a resource or a vault entry
    holds more than the words it was made from (steps, a document, a secret's value the words only
    point at), and a corrected turn still stands for it."""
    if not isinstance(episode, EpisodicMemory) or not episode.source_ids:
        return []
    alone = _held_alone(store, episode)
    if not alone:
        return []
    types = RESTATED if deleting else FACTS
    return [*_core_ops(store, episode, alone), *_restatement_ops(store, episode, alone, types)]


def held_alone(store: MemoryStore, episode: MemoryBase) -> frozenset[str]:
    """The ids an episode alone cites (`cited_alone`); none for another memory."""
    return _held_alone(store, episode) if isinstance(episode, EpisodicMemory) and episode.source_ids else frozenset()


def _held_alone(store: MemoryStore, episode: EpisodicMemory) -> frozenset[str]:
    return cited_alone(store, episode.user_id, episode.id, episode.source_ids)


def cited_alone(store: MemoryStore, user_id: str, episode_id: str, source_ids: Sequence[str]) -> frozenset[str]:
    """The ids an episode cites that no other episode of the user cites: the messages (or inputs)
    whose words it alone holds (or held: a deleted episode's). Episodes are looked up among those of
    the inputs it cites. A turn's message without an id is there by its key (`said_keys.turn_key`:
    its input and the time it was said), which core lines said in it name."""
    cited = list(dict.fromkeys(source_ids))
    inputs = [s for s in cited if s.startswith(INPUT_PREFIX)]
    citing = store.made_from(user_id, inputs, [MemoryType.episodic.value], within=inputs) if inputs else {}
    messages = [s for s in cited if not s.startswith(INPUT_PREFIX)]
    if messages:  # a message id comes again in another input: a chat app sends its window again
        citing.update(store.made_from(user_id, messages, [MemoryType.episodic.value]))
    alone = {s for s in cited if set(citing.get(s, [])) <= {episode_id}}
    key = _turn_key(store, user_id, episode_id) if inputs else None
    if key is not None and key_input(key) in cited:
        alone.add(key)
    return frozenset(alone)


def _turn_key(store: MemoryStore, user_id: str, episode_id: str) -> str | None:
    """The key of the message a turn's episode was made of, read from its first state as the erasure reads
    it (`store.erase.said_at`): its time then, whatever `update` made of it since."""
    events = store.history(episode_id, user_id=user_id)
    return turn_key(events[0].after) if events else None


def _core_ops(store: MemoryStore, episode: EpisodicMemory, alone: frozenset[str]) -> list[Op]:
    ops: list[Op] = []
    for block in core_blocks.written_blocks(store, episode.user_id).values():
        fields = _without(block, alone)
        if fields:
            fields = _replaced_put_back(store, block, fields, episode)
            ops.append(UpdateOp(memory_id=block.id, fields=fields))
    return ops


def _replaced_put_back(store: MemoryStore, block: CoreMemory, fields: dict, episode: EpisodicMemory) -> dict:
    """`fields` with the lines the episode's turn replaced put back ("lives in Paris" when the deleted
    "I moved to Berlin" had made "lives in Berlin" of it): a change of the block by the turn's input
    whose every new line is taken back now returns the lines it removed, with their times and sources,
    when each of those is still said by an episode left, the block holds none of them, and they fit."""
    lines = fields["value"].splitlines()
    gone = set(block.value.splitlines()) - set(lines)
    inputs = {s for s in episode.source_ids if s.startswith(INPUT_PREFIX)}
    put_back: dict[str, _Held] = {}
    for event in store.history(block.id, user_id=block.user_id):
        if event.input_id not in inputs or event.operation is not Operation.update or not event.before \
                or not event.after:
            continue
        before, after = (str(state.get("value") or "").splitlines() for state in (event.before, event.after))
        added = set(after) - set(before)
        if not added or not added <= gone:
            continue
        for line in before:
            if line not in after and line not in lines:
                cites = event.before.get("line_cites") or {}
                put_back[line] = _Held((event.before.get("said") or {}).get(line),
                                       (event.before.get("said_offsets") or {}).get(line),
                                       list((event.before.get("line_sources") or {}).get(line) or []),
                                       list(cites[line]) if line in cites else None,
                                       list(event.before.get("source_ids") or []))
    kept = {line: held for line, held in put_back.items() if _still_said(store, episode, held.sources)}
    value = "\n".join([*lines, *kept])
    if not kept or len(value) > block.limit:
        return fields
    cites = {**fields["line_cites"], **{line: h.cites for line, h in kept.items() if h.cites is not None}}
    # a line put back without its ids recorded: the block cites again all it cited when it held the line
    unknown = [i for h in kept.values() if h.cites is None for i in h.block_cited]
    return {"value": value,
            "said": {**fields["said"], **{line: h.said for line, h in kept.items() if h.said is not None}},
            "said_offsets": {**fields["said_offsets"],
                             **{line: h.offset for line, h in kept.items() if h.offset is not None}},
            "line_sources": {**fields["line_sources"], **{line: h.sources for line, h in kept.items()}},
            "line_cites": cites,
            "source_ids": list(dict.fromkeys([*core_blocks.cited_after(block, value, cites), *unknown]))}


class _Held(NamedTuple):
    """What a block state held for one line: when it was said, on which clock, in which messages, the ids
    it cited (None: not recorded), and every id the block cited then."""
    said: Any
    offset: Any
    sources: list[str]
    cites: list[str] | None
    block_cited: list[str]


def _still_said(store: MemoryStore, episode: EpisodicMemory, said_in: Sequence[str]) -> bool:
    """Whether an episode other than `episode`, with its words as said, cites every message (or input) a
    line was said in: a rewritten episode cites them still but may no longer say the line."""
    if not said_in:
        return False
    cited = list(dict.fromkeys(key_input(s) or s for s in said_in))  # a message key: its input's episodes
    citing = store.made_from(episode.user_id, cited, [MemoryType.episodic.value])
    return all(any(not _rewritten(store, i, episode.user_id) and _says(store, i, episode.user_id, s)
                   for i in set(citing.get(key_input(s) or s, [])) - {episode.id})
               for s in said_in)


def _says(store: MemoryStore, episode_id: str, user_id: str, said_in: str) -> bool:
    """Whether the episode is the turn of `said_in`: for a message key, the one made of that message
    (`_turn_key`); any episode citing another id."""
    return key_input(said_in) is None or _turn_key(store, user_id, episode_id) == said_in


def _rewritten(store: MemoryStore, memory_id: str, user_id: str) -> bool:
    """Whether the episode's words were ever changed (or erased) after it was made."""
    return any(e.erased or (e.operation is Operation.update and e.before is not None and e.after is not None
                            and _spaced(str(e.before.get("summary", ""))) != _spaced(str(e.after.get("summary", ""))))
               for e in store.history(memory_id, user_id=user_id))


def _without(block: CoreMemory, alone: frozenset[str]) -> dict:
    """The block's fields without what was said only in `alone`: a line every message of which is there
    is left out (its time and sources too); a line also said elsewhere keeps only those other messages,
    so deleting them later takes it back. Empty when the block holds nothing of `alone`."""
    lines = block.value.splitlines()
    gone = {line for line in lines if _within(block.line_sources.get(line, []), alone)}
    sources = {line: [s for s in said_in if not covered(s, alone)] for line, said_in in block.line_sources.items()
               if line not in gone}
    if not gone and sources == block.line_sources:
        return {}
    value = "\n".join(line for line in lines if line not in gone)
    # a line said in the turn too no longer cites it; the block cites what its lines left cite
    cites = {line: [i for i in ids if i not in alone] if sources.get(line) != block.line_sources.get(line) else ids
             for line, ids in block.line_cites.items() if line not in gone}
    return {"value": value,
            "said": {line: when for line, when in block.said.items() if line not in gone},
            "said_offsets": {line: m for line, m in block.said_offsets.items() if line not in gone},
            "line_sources": sources, "line_cites": cites,
            "source_ids": core_blocks.cited_after(block, value, cites)}


RESTATED = (MemoryType.semantic, MemoryType.procedural, MemoryType.resource, MemoryType.knowledge_vault)
"""The memory types a turn's words are restated in beside core: each is one memory, deleted whole."""
FACTS = (MemoryType.semantic,)


def _restatement_ops(store: MemoryStore, episode: EpisodicMemory, alone: frozenset[str],
                     types: tuple[MemoryType, ...]) -> list[Op]:
    inputs = [s for s in episode.source_ids if s.startswith(INPUT_PREFIX)]
    if not inputs:
        return []
    made = store.made_from(episode.user_id, inputs, [t.value for t in types])
    ids = list(dict.fromkeys(i for found in made.values() for i in found))
    restated = [m for m in store.get_many(ids, user_id=episode.user_id).values() if m.memory_type in types]
    tags = store.input_tags.cited((m.source_ids for m in restated), user_id=episode.user_id)
    ops: list[Op] = []
    for memory in restated:
        keys = _keys(memory)
        if _within(_said_in(memory.source_ids, tags, keys), alone):
            ops.append(DeleteOp(memory_id=memory.id))
        elif (revert := _last_change_taken_back(store, memory, inputs, alone, tags)) is not None:
            ops.append(revert)
    vault = {m.id for m in restated if m.memory_type is MemoryType.knowledge_vault}
    gone = {episode.id, *(op.memory_id for op in ops if isinstance(op, DeleteOp))}
    return [op for op in ops if not (isinstance(op, DeleteOp) and op.memory_id in vault
                                     and store.one_mentioning(f"[vault:{op.memory_id}]", user_id=episode.user_id,
                                                              besides=gone) is not None)]


def _last_change_taken_back(store: MemoryStore, memory: MemoryBase, inputs: Sequence[str], alone: frozenset[str],
                            tags: Iterable[str]) -> Op | None:
    """A memory said before the episode and changed by it ("Tobias is a plumber now" after "… a
    carpenter") put back as it was, when that change is its last and what it added was said in the
    episode alone; one changed again since is left as it is (undo of the input says why)."""
    events = store.history(memory.id, user_id=memory.user_id)
    last = events[-1] if events else None
    if last is None or last.operation is not Operation.update or last.input_id not in inputs \
            or last.before is None or last.after is None:
        return None
    had = set(last.before.get("source_ids") or [])
    gained = [s for s in last.after.get("source_ids") or [] if s not in had]
    keys = [k for k in last.after.get("said_in") or [] if k not in set(last.before.get("said_in") or [])]
    if not _within(_said_in(gained, tags, keys), alone):
        return None
    return UpdateOp(memory_id=memory.id, fields=restored_fields(last.before, store.cipher.decrypt))


def _within(said_in: Sequence[str], alone: frozenset[str]) -> bool:
    """Whether something said in `said_in` was said only where `alone` holds, an input standing for each of
    its messages (`said_keys.covered`; never when nothing is known)."""
    return all_covered(said_in, alone)


def _said_in(source_ids: Sequence[str], tags: Iterable[str], keys: Sequence[str] = ()) -> list[str]:
    """What a memory was said in: per input it cites, the messages cited after it (a memory cites [input,
    caller's id, message ids, ...] for each input), else the keys of its messages without ids among `keys`
    (`SemanticMemory.said_in`), or the input itself when it names none of its messages: a fact said again
    in an input without message ids is said there too."""
    known = frozenset(tags)
    said: list[str] = []
    group: tuple[str, list[str]] | None = None
    for cited in source_ids:
        if cited.startswith(INPUT_PREFIX):
            if group is not None:
                said += group[1] or of_input(group[0], keys) or [group[0]]
            group = (cited, [])
        elif cited not in known:
            (group[1] if group is not None else said).append(cited)
    if group is not None:
        said += group[1] or of_input(group[0], keys) or [group[0]]
    return said


def _keys(memory: MemoryBase) -> list[str]:
    """The keys of the messages without ids a memory was said in (`SemanticMemory.said_in`)."""
    return list(memory.said_in) if isinstance(memory, SemanticMemory) else []


SAID_ANEW = (MemoryType.core, MemoryType.semantic)
"""What a rewrite takes back and the rules make again from the new words, in this order."""


def said_anew(flow: OfflineFlow, inputs: InputLog,
              episode: MemoryBase) -> tuple[str | None, dict[MemoryType, list[Op]]]:
    """The core lines and facts the offline rules make of a rewritten chat turn's words (`episode` as
    stored after the rewrite: secrets already in the vault), as if its message had just been said, at
    its time, by its speaker, with the input they are said in (written as that input's changes, so
    deleting the turn later puts back what they replaced). Nothing when the turn is no chat message of
    the input log, or its message is not known (an input of several messages without ids)."""
    found = _turn_as_said(inputs, episode) if isinstance(episode, EpisodicMemory) else None
    if found is None:
        return None, {}
    record, key = found
    batch = flow.prepare(episode.user_id, [record])
    if key is not None:  # one of several messages without an id: its lines name it as the rules did
        batch.messages = [replace(m, key=key) for m in batch.messages]
    return record.id, {memory_type: flow.ops(memory_type, batch) for memory_type in SAID_ANEW}


def _turn_as_said(inputs: InputLog, episode: EpisodicMemory) -> tuple[InputRecord, str | None] | None:
    """The first of the episode's inputs that holds its message (a turn sent again, or said again in
    the same words, cites several), with only that message, which says the episode's summary now, and
    the message's key when it is one of several without an id (`said_keys`). Only the episode's user's
    inputs: another user's is none of theirs to read, whatever the episode cites."""
    for input_id in dict.fromkeys(s for s in episode.source_ids if s.startswith(INPUT_PREFIX)):
        record = inputs.get(input_id, user_id=episode.user_id)
        if record is None:
            continue
        said = _message_of(record, episode)
        if said is not None:
            when = said.messages[0].occurred_at
            keyed = len(record.messages) > 1 and not said.messages[0].id and when is not None
            return said, message_key(record.id, when) if keyed and when is not None else None
    return None


def _message_of(record: InputRecord, episode: EpisodicMemory) -> InputRecord | None:
    """`record` with only the episode's message, saying its summary. An input logged without its
    messages (imported: an export carries no input text) is said by the episode's actor."""
    if record.kind not in (InputKind.text, InputKind.messages):
        return None
    if not record.messages:
        name = episode.actor if episode.actor not in ("", "user", "assistant") else None
        said = Message(role="assistant" if episode.actor == "assistant" else "user", name=name, content=episode.summary)
        return record.model_copy(update={"messages": [said]})
    cited = set(episode.source_ids)
    own = [m for m in record.messages if m.id and m.id in cited]
    message = own[0] if len(own) == 1 else record.messages[0] if len(record.messages) == 1 \
        else None if own else _said_then(record, episode)
    if message is None:
        return None
    return record.model_copy(update={"messages": [message.model_copy(update={"content": episode.summary})]})


def _said_then(record: InputRecord, episode: EpisodicMemory) -> Message | None:
    """The message without an id the episode was made of, by the time it was said (its own, else its
    place in the list, as the rules time it), kept with that time; None when another message without an
    id was said then too, or none was."""
    times = [m.occurred_at or record.occurred_at + timedelta(microseconds=i) for i, m in enumerate(record.messages)]
    said = [(m, when) for m, when in zip(record.messages, times) if not m.id and when == episode.occurred_at]
    return said[0][0].model_copy(update={"occurred_at": said[0][1]}) if len(said) == 1 else None




def captions_unquoted(store: MemoryStore, user_id: str, ops: Sequence[Op], alone: frozenset[str]) -> list[Op]:
    """For an erasure: a vault entry first said in the erased turn that stays (another memory points at
    it) keeps its kind in its caption but not the turn's words it quoted ("password mentioned: 'My bank
    PIN is [secret], at the …'" becomes "password mentioned")."""
    inputs = sorted(s for s in alone if s.startswith(INPUT_PREFIX))
    if not inputs:
        return []
    deleted = {op.memory_id for op in ops if isinstance(op, DeleteOp)}
    made = store.made_from(user_id, inputs, [MemoryType.knowledge_vault.value])
    ids = sorted({i for found in made.values() for i in found} - deleted)
    out: list[Op] = []
    for entry in store.get_many(ids, user_id=user_id).values():
        first = next((s for s in entry.source_ids if s.startswith(INPUT_PREFIX)), None)
        caption = getattr(entry, "caption", "")
        if first in alone and CAPTION_QUOTES in caption:
            out.append(UpdateOp(memory_id=entry.id, fields={"caption": caption.split(CAPTION_QUOTES, 1)[0] + " mentioned"}))
    return out

