"""Core-block rules, in one place: the labels, a block's limit, appending a line, fitting a block.

Every writer of core memory (the API, the offline rules, the LLM tools) goes through these, so a
limit or a label means the same thing on every path.
"""

from __future__ import annotations

import re

from datetime import datetime, timezone, tzinfo
from typing import Any, Iterable, Mapping, Sequence

from mirix_py.boundary.timezones import said_offset
from mirix_py.errors import CoreMemoryFull, InvalidInput
from mirix_py.tools.ops import InsertOp, Op, UpdateOp
from mirix_py.records import CoreLabel, CoreMemory, MemoryType, at_offset, utc_offset_minutes

CORE_LABELS: tuple[CoreLabel, ...] = ("persona", "human")
DEFAULT_LIMIT: int = CoreMemory.model_fields["limit"].default


def checked_label(label: str) -> CoreLabel:
    """`label` as a core label, or InvalidInput naming the labels there are."""
    for known in CORE_LABELS:
        if label == known:
            return known
    raise InvalidInput(f"core block label must be one of {CORE_LABELS}, not {label!r}")


def block_limit(block: CoreMemory | None) -> int:
    """The block's own limit, or the records' default for a block not written yet."""
    return block.limit if block is not None else DEFAULT_LIMIT


def appended(value: str, line: str) -> str:
    """`value` with `line` as its last line."""
    line = line.strip()
    return f"{value}\n{line}" if value else line


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_SPEAKER = re.compile(r"^\s*[A-Z][\w'.-]*(?: [A-Z][\w'.-]*)?(?: \([^)]*\))?:\s*")
_WORD = re.compile(r"[^\W_]+")
_BRACKETED = re.compile(r"(\[[^\]]*\])")


def pieces(text: str) -> list[str]:
    """The lines of a text, each cut into its sentences, and a bracketed part ("[shares a photo: …]",
    how a message shows what it carries) set apart from the words around it: what a core block holds
    one per line, each judged on its own."""
    return [p.strip() for line in text.splitlines() for sentence in _SENTENCE_END.split(line)
            for p in _BRACKETED.split(sentence) if p.strip(" ,;")]


def words_after_speaker(text: str, *, strip_speaker: bool = True) -> list[str]:
    """A text's words in lower case, a leading speaker's label ("Tim (messages): ") left out."""
    if strip_speaker:
        text = _SPEAKER.sub("", text, count=1)
    return [w.lower() for w in _WORD.findall(text)]


def said_after(block: CoreMemory | None, value: str, when: datetime | None) -> dict[str, datetime]:
    """When each line of the block's new `value` was said, on the clock it was said by: a line it held
    keeps its time and clock, a new line gets `when` (the batch's time on its clock; now for a write
    through the API). A line no longer in `value` drops out."""
    held = block.said_local() if block is not None else {}
    when = when or datetime.now(timezone.utc)
    return {line: held.get(line, when) for line in dict.fromkeys(value.splitlines()) if line.strip()}


def sources_after(block: CoreMemory | None, value: str,
                  said_in: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """The messages each line of the block's new `value` was said in (`CoreMemory.line_sources`): a line
    it held keeps its messages, with those of `said_in` (this write's, by line) added; a new line gets
    those of `said_in`. A line with none (held from before they were recorded, or written with none)
    stays without: it may restate anything, so no deletion takes it back. A line gone drops out."""
    held = block.line_sources if block is not None else {}
    said_in = said_in or {}
    out: dict[str, list[str]] = {}
    for line in dict.fromkeys(value.splitlines()):
        before = held.get(line)
        if block is not None and line in block.value.splitlines() and not before:
            continue  # held without sources
        now = list(dict.fromkeys([*(before or []), *said_in.get(line, [])]))
        if line.strip() and now:
            out[line] = now
    return out


def cites_after(block: CoreMemory | None, value: str,
                said_in: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """The ids each line of the block's new `value` cites (`CoreMemory.line_cites`): a line it held keeps
    its own, with those of `said_in` (this write's, by line) added; a new line gets those of `said_in`,
    or none (a line written through the API cites nothing). A line held from before they were recorded
    stays without an entry. A line gone drops out, and with it what only it cited (`cited_after`)."""
    held = block.line_cites if block is not None else {}
    old = set(block.value.splitlines()) if block is not None else set()
    said_in = said_in or {}
    out: dict[str, list[str]] = {}
    for line in dict.fromkeys(value.splitlines()):
        if not line.strip() or (line in old and line not in held):
            continue
        out[line] = list(dict.fromkeys([*held.get(line, []), *said_in.get(line, [])]))
    return out


def cited_by(block: CoreMemory | None, lines: Iterable[str]) -> list[str] | None:
    """The ids these lines of the block cite, or None when one of them has none recorded (`line_cites`)."""
    held = block.line_cites if block is not None else {}
    lines = [line for line in lines if line.strip()]
    if any(line not in held for line in lines):
        return None
    return list(dict.fromkeys(i for line in lines for i in held[line]))


def cited_after(block: CoreMemory | None, value: str, line_cites: Mapping[str, Sequence[str]]) -> list[str]:
    """The block's `source_ids` once it holds `value` with `line_cites`: the ids its lines cite, in the
    order it cited them, new ones last; an id only lines it no longer holds cited is gone. While it holds
    a line without an entry (kept from before they were recorded), every id it cited stays: which of
    them that line came from is not known."""
    lines = [line for line in dict.fromkeys(value.splitlines()) if line.strip()]
    cited = dict.fromkeys(i for line in lines for i in line_cites.get(line, ()))
    held = list(block.source_ids) if block is not None else []
    if any(line not in line_cites for line in lines):
        return list(dict.fromkeys([*held, *cited]))
    return list(dict.fromkeys([*(i for i in held if i in cited), *cited]))


def check_line_sources(line_sources: Any, value: str, name: str = "line_sources") -> None:
    """A caller's `line_sources` (or `line_cites`, `name`) for a block that will hold `value`: each key
    one of its lines, each value a list of ids. Refused (`InvalidInput`) otherwise: a source named for a
    line the block does not hold, or one that is no list of ids, would make a later deletion take back
    the wrong line, or the block cite what it does not hold."""
    if not isinstance(line_sources, dict):
        raise InvalidInput(f"{name} must map lines of the block to the ids of the messages they were said in")
    lines = set(value.splitlines())
    stray = [line for line in line_sources if line not in lines]
    if stray:
        raise InvalidInput(f"{name} names {len(stray)} line(s) the block does not hold, e.g. {stray[0][:60]!r}")
    if not all(isinstance(ids, list) and all(isinstance(i, str) and i for i in ids) for ids in line_sources.values()):
        raise InvalidInput(f"{name}: each line's sources must be a list of message ids")


def said_fields(said: Mapping[str, datetime]) -> dict[str, Any]:
    """A block's `said` (in UTC) and `said_offsets` from when each line was said on its speaker's clock,
    so the day a reader is told is the speaker's; a line said in UTC gets no offset."""
    offsets = {line: utc_offset_minutes(when) for line, when in said.items()}
    return {"said": {line: when.astimezone(timezone.utc) for line, when in said.items()},
            "said_offsets": {line: minutes for line, minutes in offsets.items() if minutes is not None}}


def said_now(zone: tzinfo | None) -> datetime:
    """Now on the user's clock (MIRIX_TIMEZONE's offset; UTC without one): when an API write says a line."""
    now = datetime.now(timezone.utc)
    return at_offset(now, said_offset(None, now, zone))


def over_limit(value: str, block: CoreMemory | None) -> str | None:
    """Why `value` cannot be the block's value, or None when it fits."""
    limit = block_limit(block)
    if len(value) > limit:
        return f"would hold {len(value)} characters, over its limit of {limit}"
    return None


def keep_newest(lines: Sequence[str], block: CoreMemory | None) -> str:
    """The lines joined, dropping the oldest until the block fits (the offline rewrite)."""
    kept = list(lines)
    limit = block_limit(block)
    while kept and len("\n".join(kept)) > limit:
        kept.pop(0)
    return "\n".join(kept)


def written_blocks(store, user_id: str) -> dict[str, CoreMemory]:
    """The user's blocks by label, the newest of a label when there are more (one read)."""
    blocks: dict[str, CoreMemory] = {}
    for memory in store.list(user_id=user_id, memory_types=[MemoryType.core], limit=10):
        if isinstance(memory, CoreMemory):
            blocks.setdefault(memory.label, memory)
    return blocks


def find_block(store, user_id: str, label: str) -> CoreMemory | None:
    """The user's block with this label, or None when it was never written."""
    return written_blocks(store, user_id).get(label)


def core_memory(store, user_id: str) -> dict[str, CoreMemory]:
    """Both blocks of the user; a block never written is returned empty (and unsaved)."""
    written = written_blocks(store, user_id)
    return {label: written.get(label) or CoreMemory(user_id=user_id, label=label) for label in CORE_LABELS}



def write_block(store, user_id: str, label: CoreLabel, value: str, *, actor: str,
                zone: tzinfo | None = None) -> CoreMemory:
    """Set the block's value (CoreMemoryFull when it does not fit); returns the block as saved. A new
    line is said now on `zone`'s clock (MIRIX_TIMEZONE; UTC when None)."""
    return _write(store, user_id, label, value, find_block(store, user_id, label), actor, zone)


def append_line(store, user_id: str, label: CoreLabel, text: str, *, actor: str,
                zone: tzinfo | None = None) -> CoreMemory:
    """Add `text` as the block's last line (InvalidInput when blank, CoreMemoryFull when it does not fit),
    said now on `zone`'s clock (MIRIX_TIMEZONE; UTC when None)."""
    if not text or not text.strip():
        raise InvalidInput("nothing to append")
    block = find_block(store, user_id, label)
    return _write(store, user_id, label, appended(block.value if block else "", text), block, actor, zone)


def _write(store, user_id: str, label: CoreLabel, value: str, block: CoreMemory | None, actor: str,
           zone: tzinfo | None) -> CoreMemory:
    problem = over_limit(value, block)
    if problem:
        raise CoreMemoryFull(f"core block {label!r} {problem}; rewrite it shorter instead of appending")
    # a line written here has no known messages and cites nothing: a line held keeps its own
    cites = cites_after(block, value)
    said = {**said_fields(said_after(block, value, said_now(zone))), "line_sources": sources_after(block, value),
            "line_cites": cites, "source_ids": cited_after(block, value, cites)}
    if block is None:
        op: Op = InsertOp(memory=CoreMemory(user_id=user_id, label=label, value=value, **said))
    else:
        op = UpdateOp(memory_id=block.id, fields={"value": value, **said})
    store.apply([op], user_id=user_id, actor=actor)
    saved = find_block(store, user_id, label)
    assert saved is not None
    return saved
