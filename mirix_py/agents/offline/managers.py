"""Offline memory managers: deterministic rules in the shape of the LLM flow.

`route()` plays the meta memory manager (which memory types does this batch touch?), and each
`*_ops()` function plays one memory manager, turning the batch into typed operations
(insert / update / merge / delete) that the store applies in one transaction per manager.
The vault runs first and its secrets are redacted from what every other manager sees.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, tzinfo
from difflib import SequenceMatcher
from typing import Any, Callable, Mapping, Sequence

from mirix_py.agents import core_blocks
from mirix_py.agents.offline.rules import classify_resource, extract_procedure
from mirix_py.agents.offline.rules.claim import Claim
from mirix_py.agents.offline.rules.claims import extract_claims, parse_fact, parse_self_line, parse_worthy
from mirix_py.agents.offline.rules.factset import Held
from mirix_py.agents.offline.rules.factset import apply as apply_claims
from mirix_py.agents.offline.rules.parsed import ClauseParser, PreParsed
from mirix_py.agents.offline.rules.people import forms, relation_subjects
from mirix_py.boundary.timezones import said_offset
from mirix_py.agents.offline.screens import (
    is_clock_line, line_key, new_lines, new_with_context, same_lines, seen_keys, shell_prompts,
)
from mirix_py.tools.ops import InsertOp, Op, UpdateOp
from mirix_py.records import (
    MEMORY_ADAPTER, CoreMemory, EpisodicMemory, InputKind, InputRecord, KnowledgeVaultMemory, Memory, MemoryType,
    ProceduralMemory, ResourceMemory, SemanticMemory, Sensitivity, at_offset,
)
from mirix_py.secrets.detection import find_secrets, redact
from mirix_py.store.said_keys import message_key
from mirix_py.store.summaries import TURN_EVENT

EPISODE_SUMMARY_CHARS = 600


@dataclass(frozen=True)
class BatchMessage:
    """One message of a batch, after redaction, with everything a manager needs."""

    input_id: str
    kind: InputKind
    role: str
    speaker: str
    text: str
    occurred_at: datetime  # in UTC
    source_ids: tuple[str, ...]
    metadata: dict[str, str] = field(default_factory=dict)
    said_offset_minutes: int | None = None  # the speaker's clock (`records.SaidOffset`); None: UTC
    message_id: str | None = None  # the caller's id of the message, when it gave one
    key: str | None = None  # one of several messages of its input, without an id: its input and time (`said_keys`)

    @property
    def said_key(self) -> str:
        """What names this message among those said (`CoreMemory.line_sources`): its own id, else its key
        among its input's messages (`store.said_keys`), else its input's id."""
        return self.message_id or self.key or self.input_id

    @property
    def local_at(self) -> datetime:
        """`occurred_at` on the speaker's clock: the times a screen shows and a model is shown."""
        return at_offset(self.occurred_at, self.said_offset_minutes)


@dataclass
class PreparedBatch:
    user_id: str
    messages: list[BatchMessage]
    vault_ops: list[Op] = field(default_factory=list)
    # screenshot windows of this batch: resource title -> that window's resource from earlier batches
    screens: dict[str, ResourceMemory | None] = field(default_factory=dict)
    # each message's claims, read once for the router and the core and semantic managers
    claims: dict[tuple, list[Claim]] = field(default_factory=dict)
    # (speaker, name, relation) the user's memory holds for the relation words the batch uses without a name
    people: tuple[tuple[str, str, str], ...] = ()
    parser: ClauseParser | None = None  # the dependency parser the claims are also read with

    def claims_of(self, m: BatchMessage) -> list[Claim]:
        key = (m.source_ids, m.role, m.kind, m.speaker, m.text)
        found = self.claims.get(key)
        if found is None:
            speaker = m.speaker or "user"
            held = [(name, relation) for owner, name, relation in self.people if owner == speaker]
            if self.parser is not None and not isinstance(self.parser, PreParsed):
                # every message's sentences in one call: the parser is several times faster on a batch
                self.parser = PreParsed(self.parser, [s for x in self.messages if _speaks_for_self(x)
                                                      for s in parse_worthy(x.text)])
            found = self.claims[key] = message_claims(m, held, parser=self.parser)
        return found


SecretLookup = Callable[[], Mapping[tuple[str, str], str]]  # (entry_type, value) -> vault memory id
PeopleLookup = Callable[[Sequence[str]], Sequence["SemanticMemory"]]  # relation words -> semantic memories holding them
ResourceLookup = Callable[[str], "ResourceMemory | None"]  # resource title -> resource


# the tag a framework's store keeps its record of an item in: "<framework>:" and the record as a JSON
# object ("langgraph:{...}" of `integrations.langgraph.MirixStore`, "crewai:{...}" of `integrations.crewai.MirixStorage`)
STORE_RECORD_TAG = re.compile(r"^[a-z][a-z0-9_-]*:\{")


def store_item(memory: Memory) -> bool:
    """Whether `memory` is an item a framework's store keeps by key (its record in a `STORE_RECORD_TAG`):
    the app's, read back as it was put, so the rules never change it and hold what they read beside it.
    A mark on the record itself, so an item exported and imported elsewhere is still one."""
    return any(STORE_RECORD_TAG.match(tag) for tag in memory.tags)


def vault_id(input_id: str, message_index: int | str, offset: int) -> str:
    return f"kv_{uuid.uuid5(uuid.NAMESPACE_URL, f'{input_id}/{message_index}/{offset}').hex}"


def prepare_batch(user_id: str, inputs: Sequence[InputRecord], *, known_secrets: SecretLookup | None = None,
                  find_resource: ResourceLookup | None = None, find_people: PeopleLookup | None = None,
                  parser: ClauseParser | None = None, zone: tzinfo | None = None) -> PreparedBatch:
    """Flatten inputs into messages; move secrets into vault inserts and redact them everywhere else.

    Each message is said at its own time, else its input's (in UTC, so the microsecond that orders
    a list's turns is a real one), on the clock its time was given by, else `zone`'s (MIRIX_TIMEZONE),
    else UTC (`boundary.timezones.said_offset`).

    A secret seen twice in the batch is stored once; with `known_secrets` (called only when the
    batch holds secrets), one already in the vault is not stored again and the placeholder points
    at the existing entry. With `find_resource`, each screenshot window's earlier resource is
    looked up once, so only what is new on screen is memorised. With `find_people`, the people the
    user's memory holds under a relation word that a message uses without a name ("my brother",
    "Mum") are looked up once, so "My brother is a pilot now" updates the brother named before.
    """
    batch = PreparedBatch(user_id=user_id, messages=[], parser=parser)
    known: Mapping[tuple[str, str], str] | None = None
    stored: dict[tuple[str, str], str] = {}
    inserts: dict[str, InsertOp] = {}

    def vaulted(text: str, record: InputRecord, index: int | str, speaker: str, occurred_at: datetime,
                sources: tuple[str, ...]) -> str:
        """`text` with its secrets moved into vault inserts and `[vault:<id>]` in their place."""
        nonlocal known
        matches = find_secrets(text)
        if not matches:
            return text
        if known is None and known_secrets is not None:
            known = known_secrets()
        ids: dict = {}
        for match in matches:
            key = (match.entry_type, match.value)
            if key in stored:  # seen earlier in this batch: one entry, every source
                ids[match] = stored[key]
                op = inserts.get(stored[key])
                if op is not None:
                    op.memory.source_ids = list(dict.fromkeys([*op.memory.source_ids, *sources]))
                continue
            if known and key in known:  # already in the vault
                ids[match] = stored[key] = known[key]
                continue
            # ids derived from the input: processing the same input again yields the same ids
            memory_id = ids[match] = stored[key] = vault_id(record.id, index, match.start)
            op = inserts[memory_id] = InsertOp(memory=KnowledgeVaultMemory(
                id=memory_id, user_id=user_id, entry_type=match.entry_type, source=speaker,
                sensitivity=Sensitivity(match.sensitivity), secret_value=match.value, caption=match.caption,
                occurred_at=occurred_at, source_ids=list(sources),
            ))
            batch.vault_ops.append(op)
        return redact(text, matches, lambda m: f"[vault:{ids[m]}]")

    for record in inputs:
        metadata: dict[str, str] | None = None
        # messages without their own time are said in list order: a microsecond apiece keeps that order
        # wherever turns are ordered by time (their neighbours' words, search `context`)
        times = [m.occurred_at or record.occurred_at + timedelta(microseconds=i) for i, m in enumerate(record.messages)]
        unnamed = [when for m, when in zip(record.messages, times) if not m.id]
        for index, message in enumerate(record.messages):
            occurred_at = times[index]
            # one of several messages without an id is named by when it was said, unless another was said then too
            key = message_key(record.id, occurred_at) if len(record.messages) > 1 and not message.id \
                and unnamed.count(occurred_at) == 1 else None
            offset = said_offset(message.said_offset_minutes, occurred_at, zone)
            sources = tuple(s for s in (record.id, record.source_id, message.id) if s)
            text = vaulted(message.content, record, index, message.speaker, occurred_at, sources)
            if metadata is None:  # a window title or file name can show a secret too
                metadata = {key: vaulted(value, record, f"metadata/{key}", message.speaker, occurred_at, sources)
                            for key, value in record.metadata.items()}
            batch.messages.append(BatchMessage(
                input_id=record.id, kind=record.kind, role=message.role, speaker=message.speaker, text=text,
                occurred_at=occurred_at, source_ids=sources, metadata=dict(metadata), said_offset_minutes=offset,
                message_id=message.id or None, key=key,
            ))
            if record.kind is InputKind.screenshot:
                title = screen_title(batch.messages[-1])
                if title not in batch.screens:
                    batch.screens[title] = find_resource(title) if find_resource is not None else None
    words = sorted({w for m in batch.messages if _speaks_for_self(m) for w in relation_subjects(m.text)})
    if words and find_people is not None:
        batch.people = tuple(relations_held(find_people([f for w in words for f in forms(w)])))
    return batch


_RELATION_FACT = re.compile(r"^(?P<name>.+?) is (?P<owner>[^']+?)'s (?P<relation>[\w -]+)$")


def relations_held(memories: Sequence[SemanticMemory]) -> list[tuple[str, str, str]]:
    """(speaker, name, relation) for each relation a semantic memory holds in the rules' form ("Tom is
    user's brother"), an ended one ("ex-") left out."""
    out = []
    for memory in memories:
        for fact in _held_facts(memory):
            m = _RELATION_FACT.match(fact.text.strip().rstrip("."))
            if fact.attribute == "relation" and m and m.group("name") == memory.name and not fact.value.startswith("ex"):
                out.append((m.group("owner"), memory.name, fact.value))
    return list(dict.fromkeys(out))


def route(batch: PreparedBatch) -> list[MemoryType]:
    """The offline meta memory manager: which managers have something to do."""
    chosen: list[MemoryType] = []
    if batch.vault_ops:
        chosen.append(MemoryType.knowledge_vault)
    if batch.messages:
        chosen.append(MemoryType.episodic)
    checks = [
        # text on a screen is not the user speaking: no self-statements from screenshots
        (MemoryType.core, lambda m: any(c.about_speaker for c in batch.claims_of(m))),
        (MemoryType.semantic, lambda m: any(not c.about_speaker for c in batch.claims_of(m))),
        (MemoryType.procedural, lambda m: extract_procedure(_procedure_text(m)) is not None),
        (MemoryType.resource, lambda m: classify_resource(m.text, kind=m.kind.value) is not None),
    ]
    for memory_type, fires in checks:
        if any(fires(m) for m in batch.messages):
            chosen.append(memory_type)
    return chosen


def _procedure_text(m: BatchMessage) -> str:
    """A terminal on screen: its commands, one "$ command" per line."""
    return shell_prompts(m.text) if m.kind is InputKind.screenshot else m.text


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _screen_label(m: BatchMessage) -> str:
    app = m.metadata.get("app") or "screen"
    window = m.metadata.get("window_title")
    return f"{app} — {window}" if window else app


def _clip_lines(text: str, limit: int) -> str:
    """Text cut at a line boundary to at most `limit` characters (line breaks kept)."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit("\n", 1)[0] + "\n…"


def screen_title(m: BatchMessage) -> str:
    return f"Screenshot of {_screen_label(m)}"


SCREEN_DETAILS_CHARS = 4000


REPEAT_WINDOW = timedelta(days=1)  # an input said again within a day of its first telling is a repeat
REPEATABLE_EVENTS = frozenset({TURN_EVENT, "document"})
_REPEAT_WORDS = re.compile(r"[^\W_]+")


def _word_list(text: str) -> list[str]:
    return _REPEAT_WORDS.findall(text.casefold())


MISREAD_SIMILARITY = 0.8  # a changed word must keep this share of its letters (difflib's ratio) to be a misread


def same_content(a: str, b: str) -> bool:
    """The same words in the same order (case and punctuation aside), or a near-duplicate: at least 8
    words, of which at most a tenth changed, each in its place into a like-spelled word without a digit
    (a typo, a misread letter). A word added or dropped ("not"), names swapped or a number changed is
    another statement, kept as one: taking it for a repeat would lose it."""
    wa, wb = _word_list(a), _word_list(b)
    if not wa or not wb:
        return a.strip() == b.strip()
    if wa == wb:
        return True
    if min(len(wa), len(wb)) < 8 or len(wa) != len(wb):
        return False
    changed = [(x, y) for x, y in zip(wa, wb) if x != y]
    if len(changed) > len(wa) // 10:
        return False
    return all(not any(ch.isdigit() for ch in x + y)
               and SequenceMatcher(None, x, y, autojunk=False).ratio() >= MISREAD_SIMILARITY for x, y in changed)


def _repeat_of(memory: Memory, candidates: Sequence[Memory]) -> Memory | None:
    """The memory in `candidates` that already holds what `memory` would (same type and content,
    within `REPEAT_WINDOW`), or None."""
    for other in candidates:
        if other.memory_type is not memory.memory_type:
            continue
        if memory.occurred_at and other.occurred_at and abs(memory.occurred_at - other.occurred_at) > REPEAT_WINDOW:
            continue
        if isinstance(memory, EpisodicMemory) and isinstance(other, EpisodicMemory):
            if memory.event_type not in REPEATABLE_EVENTS:
                return None  # screen visits have their own rules (what is new on a window)
            if (memory.actor == other.actor and memory.event_type == other.event_type
                    and same_content(memory.summary, other.summary) and same_content(memory.details, other.details)):
                return other
        elif isinstance(memory, ProceduralMemory) and isinstance(other, ProceduralMemory):
            if same_content(memory.search_text(), other.search_text()):
                return other
        elif isinstance(memory, ResourceMemory) and isinstance(other, ResourceMemory):
            if memory.title.startswith("Screenshot of "):
                return None  # a window's resource is updated in place by `resource_ops`
            if memory.title == other.title and same_content(memory.content, other.content):
                return other
    return None


def _has_digit(word: str) -> bool:
    """What `same_content` asks of a changed word's characters; a word of letters is asked no further
    (no character is both a letter and a digit)."""
    return not word.isalpha() and any(ch.isdigit() for ch in word)


RepeatLookup = Callable[[Sequence[Memory]], Sequence[Memory]]  # memories to insert -> stored ones they could repeat


def content_keys(text: str) -> frozenset[tuple]:
    """Keys `text` shares with every text `same_content` takes for the same: a text without words is
    itself, stripped; else each key holds the word count, the words with a digit in their places
    (a near-duplicate changes none of them), and one of a tenth-plus-one runs of the words with its
    place (it changes at most a tenth of them, in place, so one run is left whole). A cheap index in
    front of `same_content`, never a test of its own."""
    words = _word_list(text)
    if not words:
        return frozenset({("blank", text.strip())})
    numbers = tuple([(i, w) for i, w in enumerate(words) if _has_digit(w)])
    runs = len(words) // 10 + 1
    bounds = [len(words) * i // runs for i in range(runs + 1)]
    return frozenset((len(words), numbers, i, tuple(words[bounds[i]:bounds[i + 1]])) for i in range(runs))


def repeat_keys(memory: Memory) -> frozenset[tuple]:
    """Keys `memory` shares with every memory `_repeat_of` could pair it with (either way round): what
    must be equal, with the `content_keys` of the text compared; none for a memory never a repeat."""
    if isinstance(memory, EpisodicMemory):
        if memory.event_type not in REPEATABLE_EVENTS:
            return frozenset()
        head: tuple = (memory.memory_type, memory.actor, memory.event_type)
        text = memory.summary
    elif isinstance(memory, ProceduralMemory):
        head, text = (memory.memory_type,), memory.search_text()
    elif isinstance(memory, ResourceMemory):
        if memory.title.startswith("Screenshot of "):
            return frozenset()
        head, text = (memory.memory_type, memory.title), memory.content
    else:
        return frozenset()
    return frozenset((*head, *key) for key in content_keys(text))


def stored_repeat_keys(user_id: str, memory_type: MemoryType, fields: Mapping[str, Any]) -> frozenset[tuple]:
    """`repeat_keys` of a stored memory from the type fields its row holds (`records.type_fields`): a
    record of those alone, without the row's common columns, is cheap enough to make for every memory
    of a busy day, and holds what `_repeat_of` compares as the full record does."""
    return repeat_keys(MEMORY_ADAPTER.validate_python({**fields, "memory_type": memory_type, "user_id": user_id}))


class RepeatIndex:
    """Memories by their `repeat_keys`, in the order added: `repeat_of` compares a memory only with
    those sharing a key, the first of which `_repeat_of` would find in the whole list. Comparing each
    new memory with every one before it made one input of thousands of turns quadratic (2,000 turns:
    two million text comparisons)."""

    def __init__(self, memories: Sequence[Memory] = ()) -> None:
        self._memories: list[Memory] = []
        self._places: dict[tuple, list[int]] = {}
        for memory in memories:
            self.add(memory)

    def add(self, memory: Memory, keys: frozenset[tuple] | None = None) -> None:
        for key in repeat_keys(memory) if keys is None else keys:
            self._places.setdefault(key, []).append(len(self._memories))
        self._memories.append(memory)

    def repeat_of(self, memory: Memory, keys: frozenset[tuple] | None = None) -> Memory | None:
        places = {i for key in (repeat_keys(memory) if keys is None else keys) for i in self._places.get(key, ())}
        return _repeat_of(memory, [self._memories[i] for i in sorted(places)])


def without_repeats(ops: list[Op], recent: Sequence[Memory] | RepeatLookup, *,
                    index: Callable[[Sequence[Memory]], RepeatIndex] = RepeatIndex) -> list[Op]:
    """Inserts whose content the user already has (stored within the window, or inserted earlier in
    the same list) become provenance on that memory: an input added twice makes no copies.

    `recent`: the stored memories a repeat could be of, or a lookup of them given the memories to
    insert (the flow's: it loads only those that could be). `index`: how memories are looked up
    (a test compares `RepeatIndex` with one that compares every pair)."""
    if callable(recent):
        recent = recent([op.memory for op in ops if isinstance(op, InsertOp)])
    stored_index = index(recent)
    pending = index(())  # what this list inserts so far
    out: list[Op] = []
    stored_ops: dict[str, UpdateOp] = {}
    for op in ops:
        if not isinstance(op, InsertOp):
            out.append(op)
            continue
        keys = repeat_keys(op.memory)
        earlier = pending.repeat_of(op.memory, keys)
        if earlier is not None:
            earlier.source_ids = list(dict.fromkeys([*earlier.source_ids, *op.memory.source_ids]))
            continue
        stored = stored_index.repeat_of(op.memory, keys)
        if stored is not None:
            update = stored_ops.get(stored.id)
            if update is None:
                update = stored_ops[stored.id] = UpdateOp(memory_id=stored.id)
                out.append(update)
            update.add_source_ids = list(dict.fromkeys([*update.add_source_ids, *op.memory.source_ids]))
            continue
        pending.add(op.memory, keys)
        out.append(op)
    return out


def episodic_ops(batch: PreparedBatch, recent: Sequence[Memory] | RepeatLookup = ()) -> list[Op]:
    """One event per message; a document or screenshot is one event that points at its resource.
    An event the user has already (`without_repeats`, against `recent`) adds provenance instead.

    Screenshots make one event per visit to a window: consecutive frames of one window in the
    batch. It holds the lines new on that window during the visit (against earlier frames and the
    window's resource from earlier batches), with their neighbouring lines as details, at the time
    of the visit's first frame that showed something new; when the visit lasted longer than a
    second, the summary names its span. A visit with nothing new makes no event, unless the user
    came back to the window from another one ("Viewed ... again").
    """
    ops: list[Op] = []
    seen = {title: seen_keys(res.content) for title, res in batch.screens.items() if res is not None}
    visit: _Visit | None = None

    def close() -> None:
        if visit is not None and (visit.fresh or visit.returning):
            ops.append(visit.event(batch.user_id))

    last_window: str | None = None
    for m in batch.messages:
        if m.kind is InputKind.screenshot:
            title = screen_title(m)
            if visit is None or visit.title != title:
                close()
                visit = _Visit(title=title, first=m, returning=title != last_window)
            last_window = title
            new, around = new_with_context(m.text, seen.setdefault(title, set()), m.local_at)
            visit.add(m, new, around)
            continue
        close()
        visit, last_window = None, None
        details = ""
        if m.kind is InputKind.document:
            draft = classify_resource(m.text, kind="document")
            title = draft.title if draft else _short(m.text, 80)
            event_type, summary = "document", f"Added document: {title}"
        else:
            event_type, summary = TURN_EVENT, _short(m.text, EPISODE_SUMMARY_CHARS)
            if summary.endswith("…"):
                # cut short: the rest lives on in a resource only when the resource rules keep one;
                # otherwise the event keeps the whole message, so nothing said is lost
                if classify_resource(m.text, kind=m.kind.value) is not None:
                    details = "full text kept as a resource"
                else:
                    summary = " ".join(m.text.split())
        ops.append(InsertOp(memory=EpisodicMemory(
            user_id=batch.user_id, event_type=event_type, summary=summary, details=details,
            actor=m.speaker, occurred_at=m.occurred_at, source_ids=list(m.source_ids),
            said_offset_minutes=m.said_offset_minutes,
        )))
    close()
    return without_repeats(ops, recent)


def _leading_lines(lines: list[str], shown: str) -> list[str]:
    """The first `lines` that `shown` (their `_short` rendering) holds in full."""
    out: list[str] = []
    used = 0
    for line in lines:
        flat = " ".join(line.split())
        used += len(flat) + (1 if out else 0)
        if used > len(shown) or (shown.endswith("…") and used >= len(shown)):
            break
        out.append(line)
    return out


@dataclass
class _Visit:
    """Consecutive frames of one window: what becomes one screen_activity event."""

    title: str
    first: BatchMessage
    returning: bool
    fresh: list[str] = field(default_factory=list)
    hunk: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    in_hunk: set[str] = field(default_factory=set)
    at: datetime | None = None  # the first frame that showed something new
    last: datetime | None = None

    def add(self, m: BatchMessage, new: list[str], around: list[str]) -> None:
        self.sources.extend(m.source_ids)
        self.last = m.occurred_at
        if new:
            if self.at is None:
                self.at = m.occurred_at
            self.fresh.extend(new)
            around = [line for line in around if line not in self.in_hunk]  # context shown already
            if self.hunk and around:
                self.hunk.append("…")
            self.hunk.extend(around)
            self.in_hunk.update(around)

    def event(self, user_id: str) -> InsertOp:
        m = self.first
        start = self.at or m.occurred_at
        span = ""
        if self.last is not None and (self.last - start).total_seconds() >= 1:
            first, last = (at_offset(t, m.said_offset_minutes) for t in (start, self.last))  # the screen's clock
            span = f" ({first.strftime('%H:%M:%S')}–{last.strftime('%H:%M:%S')})"
        fresh = "\n".join(self.fresh)
        label = _screen_label(m)
        short = _short(fresh, 300)
        summary = f"Viewed {label}{span}: {short}" if fresh else f"Viewed {label} again{span}"
        # details: the hunk (new lines with their neighbours), when it says more than the summary;
        # when the summary is cut short, without the new lines it already holds in full (the bulk
        # of a window seen for the first time is then stored once in this memory, not twice)
        hunk = list(self.hunk)
        if len(fresh) > 300:
            in_summary = set(_leading_lines(self.fresh, short))
            hunk = [line for line in hunk if line not in in_summary]
            while hunk and hunk[0] == "…":
                hunk.pop(0)
        text = "\n".join(hunk)
        details = _clip_lines(text, SCREEN_DETAILS_CHARS) if text.strip("…\n") and text != fresh else ""
        return InsertOp(memory=EpisodicMemory(
            user_id=user_id, event_type="screen_activity", summary=summary, details=details, actor=m.speaker,
            occurred_at=start, source_ids=list(dict.fromkeys(self.sources)), said_offset_minutes=m.said_offset_minutes,
        ))


CoreLookup = Callable[[str], CoreMemory | None]


def _speaks_for_self(m: BatchMessage) -> bool:
    """Text on a screen or an assistant's words are not the user speaking about themself."""
    return m.role == "user" and m.kind is not InputKind.screenshot


def _states_facts(m: BatchMessage) -> bool:
    """The user's words and text on a screen state facts; an assistant's, a system's or a tool's do
    not: a model's made-up answer, fed back as the assistant's turn, must not overwrite what the user said."""
    return m.role == "user" or m.kind is InputKind.screenshot


def message_claims(m: BatchMessage, people: Sequence[tuple[str, str]] = (), *,
                   parser: ClauseParser | None = None) -> list[Claim]:
    """The facts a message states: about its speaker (core) only when the user speaks; `people` are the
    (name, relation) pairs the speaker stated before, for "my brother" said without the name. Text on a
    screen is read by the patterns only: it is not sentences someone said. Words not the user's state none
    (`_states_facts`)."""
    if not _states_facts(m):
        return []
    speaks = _speaks_for_self(m)
    return extract_claims(m.text, m.speaker or "user", self_statements=speaks, people=people if speaks else (),
                          parser=parser if speaks else None)


def _line_prefix(speaker: str) -> str:
    return "" if speaker in ("user", "") else f"{speaker}: "


def _held_lines(lines: Sequence[str], speaker: str) -> list[Held]:
    """A speaker's lines of the human block as facts ("Ada: likes chess"); lines the rules cannot
    read (written by a model or the API) are held without an attribute, so nothing replaces them."""
    prefix = _line_prefix(speaker)
    held = []
    for line in lines:
        if prefix and not line.startswith(prefix):
            continue
        body = line[len(prefix):]
        if not prefix and re.match(r"^[A-Z][\w .'’-]{0,40}: ", body) and not parse_self_line(body):
            continue  # another speaker's line
        parsed = parse_self_line(body)
        held.append(Held(text=line, attribute=parsed[0] if parsed else None, value=parsed[1] if parsed else ""))
    return held


def core_ops(batch: PreparedBatch, current_block: CoreLookup) -> list[Op]:
    """Self-statements into the `human` block: a new value of a one-value attribute replaces the
    line holding the old one ("switched to green tea" replaces "prefers dark roast coffee"), a
    negated one removes it, a fact held already only adds provenance; when the block would
    overflow, the oldest lines make room."""
    by_speaker: dict[str, list[Claim]] = {}
    said: dict[str, int] = {}  # each line's first telling in the batch
    said_at: dict[str, datetime | None] = {}  # and its time, on its speaker's clock
    said_in: dict[str, list[str]] = {}  # and every message of the batch it was said in
    cites: dict[str, list[str]] = {}  # and the ids those messages cite (the block's `source_ids` for it)
    sources: list[str] = []
    for m in batch.messages:
        if not _speaks_for_self(m):
            continue
        claims = [c for c in batch.claims_of(m) if c.about_speaker]
        if claims:
            by_speaker.setdefault(m.speaker or "user", []).extend(claims)
            sources.extend(m.source_ids)
            for c in claims:
                said.setdefault(_line_prefix(m.speaker or "user") + c.text, len(said))
                said_at.setdefault(_line_prefix(m.speaker or "user") + c.text, m.local_at)
                said_in.setdefault(_line_prefix(m.speaker or "user") + c.text, []).append(m.said_key)
                cites.setdefault(_line_prefix(m.speaker or "user") + c.text, []).extend(m.source_ids)
    if not by_speaker:
        return []
    block = current_block("human")
    old_lines = [ln for ln in (block.value.splitlines() if block else []) if ln.strip()]
    gone: set[str] = set()
    added: list[str] = []
    for speaker, claims in by_speaker.items():
        prefix = _line_prefix(speaker)
        outcome = apply_claims(_held_lines(old_lines, speaker),
                               [replace(c, phrase=prefix + c.text) for c in claims])
        gone.update(f.text for f in outcome.superseded)
        added.extend(f.text for f in outcome.added)
    added.sort(key=lambda line: said.get(line, len(said)))  # in the order they were said, whoever said them
    lines = list(dict.fromkeys([*(ln for ln in old_lines if ln not in gone), *added]))
    sources = list(dict.fromkeys(sources))
    first_told = next((m.local_at for m in batch.messages if m.occurred_at), None)

    def dates(value: str) -> dict[str, Any]:  # a line held keeps its day and clock; a new one gets its message's
        held = block.said_local() if block is not None else {}
        return {**core_blocks.said_fields({line: held.get(line) or said_at.get(line) or when
                                           for line, when in core_blocks.said_after(block, value, first_told).items()}),
                **provenance(value)}

    def provenance(value: str) -> dict[str, Any]:
        """Each line's messages and cited ids, and the block citing what its lines came from: the ids of a
        line dropped or replaced go unless a line left cites them (this batch's messages are added to them
        by the write, so the change is the batch's: `undo`)."""
        line_cites = core_blocks.cites_after(block, value, cites)
        return {"line_sources": core_blocks.sources_after(block, value, said_in), "line_cites": line_cites,
                "source_ids": core_blocks.cited_after(block, value, line_cites)}

    if block is None:
        if not lines:
            return []
        value = core_blocks.keep_newest(lines, block)
        fields = dates(value)
        fields["source_ids"] = list(dict.fromkeys([*fields["source_ids"], *sources]))
        return [InsertOp(memory=CoreMemory(user_id=batch.user_id, label="human", value=value, **fields))]
    if lines == old_lines:  # every fact held already: the input is provenance for the block (and its lines)
        fields = {k: v for k, v in provenance(block.value).items() if v != getattr(block, k)}
        return [UpdateOp(memory_id=block.id, fields=fields, add_source_ids=sources)]
    value = core_blocks.keep_newest(lines, block)  # rewrite: the oldest facts make room for the newest
    return [UpdateOp(memory_id=block.id, fields={"value": value, **dates(value)}, add_source_ids=sources)]


SemanticLookup = Callable[[str], SemanticMemory | None]


def _held_facts(memory: SemanticMemory) -> list[Held]:
    texts = [memory.summary, *filter(None, (d.strip() for d in memory.details.split("; ")))]
    held = []
    for text in texts:
        parsed = parse_fact(memory.name, text)
        held.append(Held(text=text, attribute=parsed[0] if parsed else None, value=parsed[1] if parsed else ""))
    return held


def semantic_ops(batch: PreparedBatch, find_by_name: SemanticLookup) -> list[Op]:
    """One semantic memory per named thing, holding its facts as sentences (summary, then details).

    A new fact about a known name updates it in place (same id; the store keeps the old text in its
    history): a new job, home or employer replaces the old one, "no longer" removes it, and a fact
    held already adds the input's provenance and nothing else."""
    claims: dict[str, list[Claim]] = {}  # casefolded name -> claims, in order
    names: dict[str, str] = {}
    firsts: dict[str, BatchMessage] = {}
    sources: dict[str, list[str]] = {}
    keyed: dict[str, list[str]] = {}  # the messages without ids of inputs of several (`BatchMessage.key`)
    for m in batch.messages:
        for claim in batch.claims_of(m):
            if claim.about_speaker:
                continue
            key = claim.entity.casefold()
            names.setdefault(key, claim.entity)
            firsts.setdefault(key, m)
            claims.setdefault(key, []).append(claim)
            sources.setdefault(key, []).extend(m.source_ids)
            keyed.setdefault(key, []).extend([m.key] if m.key else [])
    ops: list[Op] = []
    for key, found in claims.items():
        name = names[key]
        existing = find_by_name(name)
        outcome = apply_claims(_held_facts(existing) if existing else [], found)
        provenance = list(dict.fromkeys(sources[key]))
        held = existing.said_in if existing is not None else []
        said_in = {"said_in": list(dict.fromkeys([*held, *keyed[key]]))} if set(keyed[key]) - set(held) else {}
        if existing is None:
            if not outcome.facts:
                continue  # only "no longer" about someone never met: nothing to hold
            first = firsts[key]
            summary, *rest = [f.text for f in outcome.facts]
            ops.append(InsertOp(memory=SemanticMemory(
                user_id=batch.user_id, name=name, summary=summary, details="; ".join(rest),
                source=first.speaker, occurred_at=first.occurred_at, source_ids=provenance,
                said_offset_minutes=first.said_offset_minutes, said_in=list(dict.fromkeys(keyed[key])),
            )))
        elif not outcome.changed:
            ops.append(UpdateOp(memory_id=existing.id, add_source_ids=provenance, fields=said_in))
        elif outcome.facts:
            summary, *rest = [f.text for f in outcome.facts]
            ops.append(UpdateOp(memory_id=existing.id, fields={"summary": summary, "details": "; ".join(rest),
                                                               **said_in}, add_source_ids=provenance))
        else:  # every fact it held is withdrawn: the name stays, saying so
            ops.append(UpdateOp(memory_id=existing.id, fields={
                "summary": f"{name}: " + "; ".join(f"no longer {f.text}" for f in outcome.superseded)[:300],
                "details": "", **said_in}, add_source_ids=provenance))
    return ops


def procedural_ops(batch: PreparedBatch, recent: Sequence[Memory] | RepeatLookup = ()) -> list[Op]:
    ops: list[Op] = []
    for m in _screen_merged(batch):
        screen = m.kind is InputKind.screenshot
        draft = extract_procedure(_procedure_text(m))
        if draft is not None:
            summary = f"Commands run in {_screen_label(m)}" if screen and draft.entry_type == "script" else draft.summary
            ops.append(InsertOp(memory=ProceduralMemory(
                user_id=batch.user_id, entry_type=draft.entry_type, summary=summary, steps=list(draft.steps),
                occurred_at=m.occurred_at, source_ids=list(m.source_ids),
            )))
    return without_repeats(ops, recent)


def _screen_merged(batch: PreparedBatch) -> list[BatchMessage]:
    """The batch with each screenshot window's frames merged into one message (first frame's
    time, every frame's sources) holding the window's lines not memorised before."""
    out: list[BatchMessage] = []
    windows: dict[str, tuple[int, list[str], set[str], list[str]]] = {}
    for m in batch.messages:
        if m.kind is not InputKind.screenshot:
            out.append(m)
            continue
        title = screen_title(m)
        if title not in windows:
            existing = batch.screens.get(title)
            windows[title] = (len(out), [], seen_keys(existing.content) if existing else set(), [])
            out.append(m)
        _, lines, seen, sources = windows[title]
        lines.extend(new_lines(m.text, seen, m.local_at))
        sources.extend(m.source_ids)
    for title, (at, lines, _, sources) in windows.items():
        first = out[at]
        out[at] = replace(first, text="\n".join(lines), source_ids=tuple(dict.fromkeys(sources)))
    return out


def _screen_snapshots(batch: PreparedBatch) -> list[BatchMessage]:
    """Non-screenshot messages as they are; per screenshot window, its last frame in the batch
    (the window as last seen) carrying every frame's sources, at the first frame's time."""
    out: list[BatchMessage] = []
    windows: dict[str, tuple[int, BatchMessage, list[str]]] = {}
    for m in batch.messages:
        if m.kind is not InputKind.screenshot:
            out.append(m)
            continue
        title = screen_title(m)
        if title not in windows:
            windows[title] = (len(out), m, [])
            out.append(m)
        at, first, sources = windows[title]
        sources.extend(m.source_ids)
        out[at] = replace(m, occurred_at=first.occurred_at, said_offset_minutes=first.said_offset_minutes,
                          source_ids=tuple(dict.fromkeys(sources)))
    return out


def _without_clocks(m: BatchMessage) -> str:
    """The screen's text without its live clock, blank lines between blocks kept once."""
    lines = [ln for ln in m.text.splitlines() if not is_clock_line(line_key(ln, m.local_at))]
    return "\n".join(ln for i, ln in enumerate(lines) if ln.strip() or (i and lines[i - 1].strip())).strip("\n")


def _shown_since(frames: Sequence[BatchMessage]) -> datetime:
    """Capture time of the first frame of the last run of one window's `frames` showing the lines
    its last frame shows: when the window began to show the text its resource takes."""
    since = frames[0]
    for before, frame in zip(frames, frames[1:]):
        if not same_lines(_without_clocks(before), _without_clocks(frame), frame.local_at):
            since = frame
    return since.occurred_at


def resource_ops(batch: PreparedBatch, recent: Sequence[Memory] | RepeatLookup = ()) -> list[Op]:
    """Documents and pasted content become resources. Each screenshot window is one resource
    holding the window as last seen: created on first sight, updated in place (same id, the
    earlier text and time in its history) when a later batch shows it changed.

    A resource is dated (on creation and on update) to when the window was first seen showing the
    text it holds (`_shown_since`), and an update redrafts its summary from that text, so a reader is not told Thursday's text was on screen on Monday. A later
    frame with the same lines (a live clock ticking on) moves neither text nor time: the
    resource's time dates what it says, and the sighting itself is an episode ("Viewed ... again")."""
    ops: list[Op] = []
    for m in _screen_snapshots(batch):
        at = m.occurred_at
        if m.kind is InputKind.screenshot:
            title = screen_title(m)
            at = _shown_since([f for f in batch.messages if f.kind is InputKind.screenshot and screen_title(f) == title])
            existing = batch.screens.get(title)
            if existing is not None:
                text = _without_clocks(m)
                if not same_lines(existing.content, text, m.local_at):
                    fields: dict[str, Any] = {"content": text, "occurred_at": at}
                    redrafted = classify_resource(text, kind=m.kind.value)
                    if redrafted is not None:
                        fields["summary"] = redrafted.summary
                    ops.append(UpdateOp(memory_id=existing.id, add_source_ids=list(m.source_ids), fields=fields))
                continue
        draft = classify_resource(_without_clocks(m) if m.kind is InputKind.screenshot else m.text, kind=m.kind.value)
        if draft is not None:
            title = f"Screenshot of {_screen_label(m)}" if m.kind is InputKind.screenshot else draft.title
            ops.append(InsertOp(memory=ResourceMemory(
                user_id=batch.user_id, title=title, summary=draft.summary, resource_type=draft.resource_type,
                content=draft.content, occurred_at=at, source_ids=list(m.source_ids),
            )))
    return without_repeats(ops, recent)
