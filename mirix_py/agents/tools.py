"""Typed tools of the memory managers, bound to one store, one user and one batch.

Tools do not write: each call is validated (schema, ids, types, limits) and turned into an
operation collected by `OpCollector`; the manager's operations are applied afterwards in one
transaction. A rejected call raises `ToolError`, whose message goes back to the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from typing import Annotated, Any, Callable, Literal, Mapping, NoReturn, Sequence, cast

from autogen_core.tools import FunctionTool
from pydantic import ValidationError

from mirix_py.boundary.inputs import parse_when
from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.tools.ops import DeleteOp, InsertOp, MergeOp, Op, UpdateOp
from mirix_py.records import (
    MEMORY_CLASSES, CoreMemory, KnowledgeVaultMemory, Memory, MemoryBase, MemoryType, ResourceMemory, Sensitivity,
    new_memory_id, utc_offset_minutes,
)
from mirix_py.tools import params as P
from mirix_py.agents import core_blocks, grounding
from mirix_py.agents.runner import ToolRefusal
from mirix_py.text import storable
from mirix_py.text.dates import parse_words
from mirix_py.text.words import content_words
from mirix_py.store.memories import IMMUTABLE_FIELDS, MemoryStore

MemoryTypeName = P.MemoryTypeName
CoreLabel = Literal["persona", "human"]
NOTHING_TOOL = "nothing_to_record"
CALLERS_FIELDS = frozenset({"expires_at", "said_offset_minutes"})  # set from the caller's input, never by a model
ENGINES_FIELDS = frozenset({"source_ids"})  # provenance: the engine adds the batch's ids to what a model edits
# what a vault entry is: a new value or kind is a new entry (an insert), never an old one's edited
VAULT_FIXED_FIELDS = ("secret_value", "entry_type")
SENSITIVITY_RANK = {Sensitivity.low: 0, Sensitivity.medium: 1, Sensitivity.high: 2}
REWRITE_TOOL = "core_memory_rewrite"
REWRITE_MAY_DROP = 2  # lines a rewrite may drop whatever the block's size (two merged into one, say)
CORE_LINE_CHARS = 200  # a core line is a short fact, not a message copied whole
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|[Mm]y|[Mm]e|[Ww]e|[Ww]e're|[Ww]e've|[Oo]ur|us)\b")  # a core line speaks of the user, not as them
SECOND_PERSON = re.compile(r"\b(?:[Yy]ou|[Yy]our|[Yy]ou're|[Yy]ou've)\b")  # nor to anyone
COPIED_WORDS = 3  # a piece whose words run in a message this long is that message, copied
# A model writes what the batch says: a value longer than the batch's own text by this much is a
# runaway (a phrase repeated until the server stopped), never a memory.
RUNAWAY_SLACK_CHARS = 1000


TIME_FORMATS = ("write the day the messages say as an ISO 8601 date or date-time (2024-05-01, 2024-05-01T14:30) "
                "or in words (1 May 2024), or omit occurred_at for the messages' time")
ISO_DAY = re.compile(r"\d{4}-?\d{2}-?\d{2}")  # a day alone, extended (2024-05-01) or basic (20240501)
YEAR_OR_MONTH = re.compile(r"\d{4}(?:-\d{1,2})?")  # "2024", "2024-05": no day named


def _said_day_and_clock(text: str) -> tuple[date, time | None] | None:
    """The day a memory was said on, as `text` names it, and its time of day (None for a day alone), in
    ISO 8601 or in words as the messages show days; None when it names no day. A search bound is read
    apart (`model_times._bound_day_and_clock`): an edge of a range, not a moment."""
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return parse_words(text)
    return (parsed.date(), None) if ISO_DAY.fullmatch(text) else (parsed.date(), parsed.timetz())


def _blank(value: Any) -> bool:
    """An `occurred_at` of "" or spaces: how a weak model writes "not given", read as omitted (the
    batch's time), as `model_times.model_when` reads a blank search bound."""
    return isinstance(value, str) and not value.strip()


def _time_problem(text: str) -> str:
    """Why a model's `occurred_at` is no time, and what to write instead."""
    if YEAR_OR_MONTH.fullmatch(text):
        return f"occurred_at {text!r} names no day: {TIME_FORMATS}"
    return f"occurred_at {text!r} is not a date: {TIME_FORMATS}"


class ToolError(ValueError):
    """A tool call the model must correct."""


def bound_enumerated_lists(node: Any) -> Any:
    """Give every list of enumerated values in a JSON schema `maxItems` (the number of values) and
    `uniqueItems`: a reply constrained by the schema then cannot repeat a value until its token
    bound cuts it (a router's list of memory types ran to 600 characters that way)."""
    if isinstance(node, dict):
        items = node.get("items")
        enum = items.get("enum") if isinstance(items, dict) else None
        if node.get("type") == "array" and isinstance(enum, list):
            node.setdefault("maxItems", len(enum))
            node.setdefault("uniqueItems", True)
        for value in node.values():
            bound_enumerated_lists(value)
    elif isinstance(node, list):
        for value in node:
            bound_enumerated_lists(value)
    return node


def drop_titles(node: Any, *, naming: bool = False) -> Any:
    """Remove pydantic's generated `title`s from a JSON schema (the parameter names say the same, and
    every prompt token is paid); `naming`: `node` maps parameter names, one may be called "title"."""
    if isinstance(node, dict):
        if not naming and isinstance(node.get("title"), str):
            del node["title"]
        for key, value in node.items():
            drop_titles(value, naming=key == "properties" and not naming)
    elif isinstance(node, list):
        for value in node:
            drop_titles(value)
    return node


class BoundedFunctionTool(FunctionTool):
    """A `FunctionTool` whose schema bounds its lists of enumerated values (`bound_enumerated_lists`)
    and carries no generated titles."""

    @property
    def schema(self) -> Any:
        schema = super().schema
        drop_titles(bound_enumerated_lists(schema.get("parameters")))
        return schema


def _validation_message(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


@dataclass
class OpCollector:
    """Collects the validated operations of one manager for one batch."""

    store: MemoryStore
    user_id: str
    memory_type: MemoryType
    batch_source_ids: Sequence[str]
    default_occurred_at: Any = None
    # grounding: the texts of the batch's messages (a vault value must be copied from one, not from
    # ids, times or names around them; a core line must not copy one whole), and the ids listed to
    # the model (None: any memory of this type and user may be edited)
    message_texts: Sequence[str] = ()
    listed_ids: set[str] | None = None
    shown_ids: Sequence[str] = ()  # the messages' ids as the model sees them ([id=...]); default: all
    # everything the model was shown (the batch as rendered, the listed memories): a memory it writes
    # must draw on these words (`grounding.ungrounded_problem`); empty: not checked
    shown_texts: Sequence[str] = ()
    # (id, text) of what a new memory must not repeat: the listed memories of this type, and for
    # episodes the batch's turns (kept word for word already); a near repeat writes nothing
    existing: Sequence[tuple[str, str]] = ()
    refused: list[str] = field(default_factory=list)  # near repeats, skipped without a correction round
    speakers: Mapping[str, str] = field(default_factory=dict)  # message id as shown -> who said it
    content_refusals: list[str] = field(default_factory=list)  # calls dropped for what they said
    # the descriptions of the tools' parameters (`manager_tools`): a weak model copies one as the value
    schema_texts: Sequence[str] = ()
    # (speaker, text) of the batch's messages: a memory about one of them must not file another's news
    turns: Sequence[tuple[str, str]] = ()
    # who a model writes as (the memory managers' names): a model edits only the memories one of them
    # inserted, never what the rules kept of the user's words or what a caller wrote; None: not checked
    model_actors: frozenset[str] | None = None
    # the texts of the batch's messages in which the user speaks (not a document, a screen or an
    # assistant): what a persona line must come from; None: not checked
    user_said: Sequence[str] | None = None
    ops: list[Op] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    nothing: bool = False
    _round_start: int = 0
    _core: dict[str, CoreMemory | None] = field(default_factory=dict)
    _shown: set[str] | None = None
    _existing_words: list[tuple[str, str, set[str]]] | None = None
    _first_writers: dict[str, str] | None = None  # memory id -> the actor that inserted it

    # ------------------------------------------------------------ rounds

    def begin_round(self) -> None:
        self._round_start = len(self.ops)
        self.errors = []
        self.nothing = False

    def rollback_round(self) -> None:
        """Drop what the failed round collected: the model resends the whole corrected set."""
        del self.ops[self._round_start:]
        self._core.clear()

    def speaker_of(self, source_ids: Sequence[str] | None) -> str:
        """Who said the first message cited (all of the batch when none is): an episode's actor."""
        for source in source_ids or list(self.speakers):
            if self.speakers.get(source):
                return self.speakers[source]
        return P.ACTOR_DEFAULT

    def _repeat_of(self, text: str) -> str | None:
        """The id of what this new text nearly repeats: an existing memory, a turn, or a write of
        this round."""
        this_round = [(f"this reply's write #{i + 1}", op.memory.search_text())
                      for i, op in enumerate(self.ops[self._round_start:]) if isinstance(op, InsertOp)]
        return grounding.near_duplicate(text, [*self.existing, *this_round])

    def _skip_repeat(self, text: str, said: str | None = None) -> str | None:
        """The tool's answer when `text` nearly repeats something held already (nothing is written);
        `said`: what the memory says without its name, a repeat too when it is one whole sentence of a
        message ("Speaking of which, here they go again!" filed as a fact about Nate), however short."""
        repeated = self._repeat_of(text) or (self._sentence_of(said) if said else None)
        if repeated is None:
            return None
        self.refused.append(f"near repeat of {repeated}: {' '.join(text.split())[:80]}")
        return f"skipped: {repeated} already holds this; nothing written"

    def fail(self, message: str) -> NoReturn:
        self.errors.append(message)
        raise ToolError(message)

    def refuse(self, message: str) -> None:
        """Drop this call for its content (the round goes on); counted in `content_refusals`."""
        self.content_refusals.append(message)
        raise ToolRefusal(message)

    # ------------------------------------------------------------ checks

    def _sources(self, source_ids: list[str] | None) -> list[str]:
        if not source_ids:
            return list(self.batch_source_ids)
        unknown = sorted(set(source_ids) - set(self.batch_source_ids))
        if unknown:
            self.fail(f"unknown source_ids {unknown}; use ids of this batch's messages: {list(self.batch_source_ids)}")
        return list(source_ids)

    def _owned(self, memory_id: str) -> Memory:
        if self.listed_ids is not None and memory_id not in self.listed_ids:
            listed = sorted(self.listed_ids)[:10]
            self.fail(f"memory id {memory_id!r} was not listed: use one of {listed}" if listed
                      else f"memory id {memory_id!r} was not listed, and no {self.memory_type.value} memory is")
        try:
            memory = cast(Memory, self.store.get(memory_id, user_id=self.user_id))
        except MemoryNotFound:
            self.fail(f"unknown memory id {memory_id!r}: use an id from the listed memories")
        if memory.memory_type is not self.memory_type:
            self.fail(f"{memory_id} is a {memory.memory_type.value} memory; this manager edits "
                      f"{self.memory_type.value} memories only")
        self._model_written(memory_id)
        return memory

    def _first_writer(self, memory_id: str) -> str | None:
        """The actor that inserted this memory: the listed memories' writers read in one query, on the
        first edit of the batch."""
        if self._first_writers is None:
            self._first_writers = self.store.inserted_as(sorted(self.listed_ids or ()), user_id=self.user_id)
        if memory_id not in self._first_writers and self.listed_ids is None:
            self._first_writers.update(self.store.inserted_as([memory_id], user_id=self.user_id))
        return self._first_writers.get(memory_id)

    def _model_written(self, memory_id: str) -> None:
        """A model edits only what a model wrote: what the rules kept of the user's own words, or what
        a caller wrote, stands (a model that deleted every fact it was shown emptied the store)."""
        if self.model_actors is None:
            return
        writer = self._first_writer(memory_id)
        if writer not in self.model_actors:
            self.refuse(f"{memory_id} was written by {writer or 'an unknown writer'}, not by a model: a model may "
                        f"not change or delete it; insert a new {self.memory_type.value} memory with what is "
                        "new instead")

    def _grounded(self, values: Any) -> None:
        """The texts a model wrote must come from what it was shown, not from the prompt's examples
        or the tools' own descriptions."""
        texts = [v for v in (values.values() if isinstance(values, dict) else [values])
                 for v in (v if isinstance(v, list) else [v]) if isinstance(v, str)]
        copied = grounding.copied_description(texts, self.schema_texts, self.message_texts)
        if copied:
            self.refuse(f"this {self.memory_type.value} memory copies a tool's description ({copied!r}): "
                        "write what the messages say, or call nothing_to_record")
        if not self.shown_texts:
            return
        if self._shown is None:
            self._shown = grounding.vocabulary(self.shown_texts)
        problem = grounding.ungrounded_problem(texts, self._shown)
        if problem:
            self.refuse(f"this {self.memory_type.value} memory is not grounded: {problem}")

    def _attributed(self, values: Mapping[str, Any]) -> None:
        """A fact named after a speaker, or an episode opening with one, must not take its words from
        what another speaker said of themself (`grounding.misattributed`)."""
        if not self.turns:
            return
        people = [speaker for speaker, _ in self.turns]
        summary = str(values.get("summary") or "")
        subject = values.get("name") if self.memory_type is MemoryType.semantic else grounding.lead_name(summary, people)
        if not isinstance(subject, str) or not subject:
            return
        text = " ".join(str(values.get(k) or "") for k in ("summary", "details"))
        self._refuse_misattributed(subject, text)

    def _refuse_misattributed(self, subject: str, text: str) -> None:
        found = grounding.misattributed(subject, text, self.turns)
        if found:
            who, words = found
            self.refuse(f"this says of {subject} what {who} said of themself ({', '.join(words[:5])}): "
                        f"write it about {who}, or call nothing_to_record")

    def _storable(self, values: dict[str, Any]) -> None:
        """A NUL or a lone surrogate in a value is refused here, where the model can write it again,
        not when the batch is written (`text.storable`)."""
        for name, value in values.items():
            found = storable.first_problem(value, name, controls=False)  # a model's controls are shown escaped
            if found:
                self.fail(f"invalid value: {found}")

    def _bounded(self, values: Mapping[str, Any], current: MemoryBase | None = None) -> None:
        """No value longer than the batch's text (and the value it replaces) allows: a runaway reply
        passes grounding, since it repeats the batch's own words."""
        if not self.message_texts:
            return
        batch = sum(len(t) for t in self.message_texts)
        for name, value in values.items():
            if not isinstance(value, str):
                continue
            before = getattr(current, name, "") if current is not None else ""
            allowed = batch + RUNAWAY_SLACK_CHARS + (len(before) if isinstance(before, str) else 0)
            if len(value) > allowed:
                self.refuse(f"{name} is {len(value):,} characters, more than the messages hold ({batch:,}): "
                            "write what they say, once")

    def _keeps_document(self, old: str, new: str, what: str) -> None:
        """A resource's content is a document's own words, kept nowhere else (its episode is a stub;
        the resource manager has no delete or merge tool): a model may add to it, not drop its lines."""
        kept = {line.strip() for line in new.splitlines()}
        dropped = [line for line in old.splitlines() if line.strip() and line.strip() not in kept]
        if dropped:
            self.refuse(f"{what} would drop {len(dropped)} line(s) of a document's content ({dropped[0].strip()[:60]!r}): "
                        "add to the content, or change its title or summary only")

    def _check_fields(self, current: MemoryBase, fields: dict[str, Any]) -> None:
        if not isinstance(fields, dict) or not fields:
            self.fail("fields must be a non-empty object of field names to new values")
        bad = sorted((IMMUTABLE_FIELDS | CALLERS_FIELDS | ENGINES_FIELDS) & set(fields))
        if bad:
            self.fail(f"cannot change {bad}: leave them out of fields")
        self._storable(fields)
        try:
            type(current).model_validate({**current.model_dump(), **fields})
        except ValidationError as exc:
            self.fail(f"invalid fields: {_validation_message(exc)}")

    # ------------------------------------------------------------ generic tools

    def insert(self, **values: Any) -> str:
        bad = sorted(CALLERS_FIELDS & set(values))
        if bad:
            self.fail(f"cannot set {bad}")
        self._storable(values)
        self._bounded(values)
        source_ids = values.pop("source_ids", None)
        values = {k: v for k, v in values.items() if v is not None and not (k == "occurred_at" and _blank(v))}
        if self.memory_type is MemoryType.knowledge_vault:
            self._ground_secret(str(values.get("secret_value") or ""), str(values.get("caption") or ""),
                                str(values.get("entry_type") or ""))
        else:
            said = {k: v for k, v in values.items() if k not in ("occurred_at", "event_type", "actor",
                                                                 "entry_type", "resource_type")}
            self._grounded(said)
            self._attributed(values)
            skipped = self._skip_repeat(" ".join(str(v) for v in said.values() if isinstance(v, str)),
                                        " ".join(str(values[k]) for k in ("summary", "details") if values.get(k)))
            if skipped:
                return skipped
            if self.memory_type is MemoryType.semantic and isinstance(values.get("name"), str):
                text = " ".join(str(values.get(k) or "") for k in ("summary", "details"))
                held = grounding.same_name_repeat(values["name"], text, self.existing)
                if held:
                    self.refused.append(f"near repeat of {held}: {values['name']}: {text[:80]}")
                    return f"skipped: {held} already holds this about {values['name']}; nothing written"
        values.setdefault("occurred_at", self.default_occurred_at)
        values["occurred_at"] = self._zoned(values["occurred_at"])
        cls = MEMORY_CLASSES[self.memory_type]
        if "said_offset_minutes" in cls.model_fields and isinstance(self.default_occurred_at, datetime):
            values["said_offset_minutes"] = utc_offset_minutes(self.default_occurred_at)  # the batch's clock
        try:
            memory = cast(Memory, cls(user_id=self.user_id, source_ids=self._sources(source_ids), **values))
        except ValidationError as exc:
            self.fail(f"invalid {self.memory_type.value} memory: {_validation_message(exc)}")
        if self.memory_type is MemoryType.knowledge_vault and not memory.id:
            # its id now: the other managers' prompts show the value as this entry's placeholder
            memory = memory.model_copy(update={"id": new_memory_id(self.memory_type)})
        self.ops.append(InsertOp(memory=memory))
        return f"ok: {self.memory_type.value} memory will be inserted"

    def _ground_secret(self, value: str, caption: str, entry_type: str | None = None) -> None:
        """A vault value must be copied from the batch (a model may not invent one) and have the shape
        of its entry type (a word from the chat is no password)."""
        problem = grounding.vault_value_problem(value, caption, self.message_texts, entry_type)
        if problem:
            self.refuse(problem)

    def _zoned_fields(self, fields: Any) -> Any:
        """An update's fields with its `occurred_at` read as `_zoned` says; a blank one left out, as an
        insert's is (the date stays)."""
        if not isinstance(fields, dict) or "occurred_at" not in fields:
            return fields
        if _blank(fields["occurred_at"]):
            return {k: v for k, v in fields.items() if k != "occurred_at"}
        return {**fields, "occurred_at": self._zoned(fields["occurred_at"])}

    def _zoned(self, value: Any) -> Any:
        """An ISO time without a zone (models drop the "+00:00" they were shown) in the batch's zone;
        a day alone ("2023-05-07", "7 May 2023") at the batch's time of day; inside the years the store
        takes (`boundary.inputs.STORED_YEARS`), or the model corrects it: a memory dated 9999 made the
        user's export one that no import takes."""
        zoned = self._as_time(value)
        if isinstance(zoned, datetime):
            try:
                parse_when(zoned, "occurred_at", stored=True)
            except InvalidInput as exc:
                self.fail(f"{exc}: give the date the messages say, or omit occurred_at")
        return zoned

    def _as_time(self, value: Any) -> datetime | None:
        """`value` read as `_zoned` says, whatever its year. What neither reader takes goes back to the
        model: left to the record, "2024" was read as 2,024 seconds after 1970."""
        if value is None or isinstance(value, datetime):
            return value
        if not isinstance(value, str):
            self.fail(f"occurred_at must be a date written as text, not {type(value).__name__} {value!r}: "
                      f"{TIME_FORMATS}")
        text = value.strip()
        said = _said_day_and_clock(text) if text else None
        if said is None:
            self.fail(_time_problem(text))
        day, clock = said
        default = self.default_occurred_at
        clock = clock or (default.timetz().replace(tzinfo=None) if isinstance(default, datetime) else None)
        parsed = datetime.combine(day, clock or time())
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=getattr(default, "tzinfo", None) or timezone.utc)
        return parsed

    def _keeps_vault_entry(self, current: KnowledgeVaultMemory, fields: Mapping[str, Any]) -> None:
        """A vault entry keeps its value, its kind and its sensitivity (a model's "low" put a bank PIN
        into every chat prompt); its caption changes only to the words of a message of this batch that
        names it (its value or its [vault:id])."""
        held = cast(KnowledgeVaultMemory, self.store.get(current.id, user_id=self.user_id, reveal=True))
        changed = [name for name in VAULT_FIXED_FIELDS if name in fields and fields[name] != getattr(held, name)]
        if changed:
            self.refuse(f"{current.id} keeps its {' and '.join(changed)}: a new value is a new entry, "
                        "call insert_knowledge_vault")
        if "sensitivity" in fields and \
                SENSITIVITY_RANK[Sensitivity(fields["sensitivity"])] < SENSITIVITY_RANK[held.sensitivity]:
            self.refuse(f"{current.id}'s sensitivity may not be lowered from {held.sensitivity.value}")
        caption = fields.get("caption")
        if isinstance(caption, str) and caption != held.caption:
            self._vault_caption(held, caption)

    def _vault_caption(self, held: KnowledgeVaultMemory, caption: str) -> None:
        """A new caption is what this batch says of the entry: "cabin wifi code" written over a github
        token's caption, in a batch that never named the token, made the token found as the wifi code."""
        about = [t for t in self.message_texts
                 if f"[vault:{held.id}]" in t or (held.secret_value and held.secret_value in t)]
        if not about:
            self.refuse(f"no message of this batch names {held.id} (its value or [vault:{held.id}]): "
                        "its caption stays")
        values = [v for v in [held.secret_value, *grounding.vault_value_candidates(about)] if v and v in caption]
        if values:
            self.refuse("the caption holds a value: describe what the entry is for without it")
        problem = grounding.ungrounded_problem([caption], grounding.vocabulary([*about, held.caption]))
        if problem:
            self.refuse(f"this caption is not what the messages naming {held.id} say: {problem}")

    def nothing_to_record(self, reason: str = "") -> str:
        """The model's explicit 'no write for this batch'."""
        self.nothing = True
        return "ok: nothing recorded"

    def update_memory(self, memory_id: str, fields: dict[str, Any]) -> str:
        """Change fields of a listed memory in place (its id stays)."""
        current = self._owned(memory_id)
        fields = self._zoned_fields(fields)
        self._check_fields(current, fields)
        self._bounded(fields, current)
        if isinstance(current, ResourceMemory) and "content" in fields:
            self._keeps_document(current.content, str(fields["content"]), f"updating {memory_id}")
        if self.memory_type is not MemoryType.knowledge_vault:
            self._grounded({k: v for k, v in fields.items() if k != "occurred_at"})
        if isinstance(current, KnowledgeVaultMemory):
            self._keeps_vault_entry(current, fields)
        self.ops.append(UpdateOp(memory_id=memory_id, fields=fields, add_source_ids=list(self.batch_source_ids)))
        return f"ok: {memory_id} will be updated"

    def merge_memories(self, memory_ids: list[str], fields: dict[str, Any] | None = None) -> str:
        """Fold duplicates into the first id; the others are deleted."""
        if len(memory_ids) < 2 or len(set(memory_ids)) != len(memory_ids):
            self.fail("merge needs at least two distinct memory ids")
        first = self._owned(memory_ids[0])
        for other in memory_ids[1:]:
            self._owned(other)
        fields = self._zoned_fields(fields)
        if fields:
            self._check_fields(first, fields)
            self._bounded(fields, first)
            if isinstance(first, KnowledgeVaultMemory):
                self._keeps_vault_entry(first, fields)
        self.ops.append(MergeOp(memory_ids=memory_ids, fields=fields or {}))
        return f"ok: {len(memory_ids)} memories will be merged into {memory_ids[0]}"

    def delete_memory(self, memory_id: str) -> str:
        """Delete a listed memory that is wrong or obsolete."""
        if self.memory_type is MemoryType.episodic:
            # episodes keep what was said: deleting one loses messages of earlier batches
            # (benchmarks/docs/local_model.md)
            self.fail("episodes are the record of what was said: update or merge them, never delete one")
        self._owned(memory_id)
        self.ops.append(DeleteOp(memory_id=memory_id))
        return f"ok: {memory_id} will be deleted"

    # ------------------------------------------------------------ core

    def core_block(self, label: str) -> CoreMemory | None:
        """The user's block as this batch's writes left it (read once, then kept with the round)."""
        if label not in self._core:
            block = None
            for memory in self.store.list(user_id=self.user_id, memory_types=[MemoryType.core], limit=10):
                if isinstance(memory, CoreMemory) and memory.label == label:
                    block = memory
            self._core[label] = block
        return self._core[label]

    def a_block_is_full(self) -> bool:
        """Whether a core block could not take another line of the longest length."""
        return any(block is not None and len(block.value) + 1 + CORE_LINE_CHARS > core_blocks.block_limit(block)
                   for block in (self.core_block(label) for label in core_blocks.CORE_LABELS))

    def _write_core(self, label: str, value: str) -> None:
        if label not in core_blocks.CORE_LABELS:
            self.fail(f"label must be one of {list(core_blocks.CORE_LABELS)}")
        block = self.core_block(label)
        problem = core_blocks.over_limit(value, block)
        if problem:
            self.fail(f"the {label} block {problem}: call core_memory_rewrite with a shorter, merged block")
        # a new line said at the batch's time, on its clock, in the batch's messages (which of them the
        # model does not say: each one's id as shown); when a rewrite drops a line the new ones may hold
        # its words too, said before: they get no messages
        old_lines = set(block.value.splitlines() if block is not None else ())
        new_lines = set(value.splitlines()) - old_lines
        said_in = list(self.shown_ids or self.batch_source_ids) if old_lines <= set(value.splitlines()) else []
        # a new line cites the batch, and what the lines it drops cited (it may restate them); none
        # recorded for one of those: the new lines have none either, so the block keeps what it cites
        restated = core_blocks.cited_by(block, old_lines - set(value.splitlines()))
        cites = core_blocks.cites_after(block, value, {line: [*self.batch_source_ids, *(restated or ())]
                                                       for line in new_lines})
        if restated is None:
            cites = {line: ids for line, ids in cites.items() if line not in new_lines}
        said = {**core_blocks.said_fields(core_blocks.said_after(block, value, self._zoned(self.default_occurred_at))),
                "line_sources": core_blocks.sources_after(block, value, {line: said_in for line in new_lines}),
                "line_cites": cites, "source_ids": core_blocks.cited_after(block, value, cites)}
        if block is None:
            said["source_ids"] = list(dict.fromkeys([*said["source_ids"], *self.batch_source_ids]))
            memory = CoreMemory(user_id=self.user_id, label=label, value=value, **said)
            self.ops.append(InsertOp(memory=memory))
            self._core[label] = memory
        else:
            self.ops.append(UpdateOp(memory_id=block.id, fields={"value": value, **said},
                                     add_source_ids=list(self.batch_source_ids)))
            self._core[label] = block.model_copy(update={"value": value, **said}) if block.id else block

    def core_memory_append(self, label: Literal["persona", "human"], text: str) -> str:
        """Append lines to a core block: each line or sentence of `text` judged on its own (a weak
        model writes a block line again, then a message copied, then a fact, in one text)."""
        text = (text or "").strip()
        self._storable({"text": text})
        if not text:  # where this tool is the one forced, an empty line is the model's "nothing here"
            return self.nothing_to_record("empty core line")
        # both blocks' lines: a fact of one block written to the other is a repeat too
        blocks = {name: self.core_block(name) for name in core_blocks.CORE_LABELS}
        block = blocks.get(label)
        held = [(f"the {name} block", line) for name, shown in blocks.items()
                for line in (shown.value.splitlines() if shown else [])]
        added: list[str] = []
        skipped: list[str] = []
        problems: list[str] = []
        for piece in core_blocks.pieces(text):
            # a repeat adds nothing whatever its shape (a message or a block line copied again): skipped
            repeated = grounding.near_duplicate(piece, [*held, *self.existing, *(("this call", a) for a in added)]) \
                or self._copied_from(piece) or grounding.held_together(piece, held, "the core blocks")
            if repeated:
                skipped.append(f"near repeat of {repeated}: {piece[:80]}")
                continue
            try:
                self._check_core_line(piece, label)
            except ToolRefusal as exc:
                problems.append(str(exc))
                continue
            added.append(piece)
        self.refused += skipped
        if not added:
            if problems:
                self.refuse(problems[0])
            return f"skipped: memory holds this already ({'; '.join(skipped)[:200]}); nothing written"
        self.refused += [f"core line not written: {p}" for p in problems]
        value = block.value if block else ""
        for line in added:
            value = core_blocks.appended(value, line)
        self._write_core(label, value)
        return f"ok: appended {len(added)} line(s) to {label}" + (f"; not written: {'; '.join(problems)}" if problems else "")

    def _sentence_of(self, text: str) -> str | None:
        """Which message (or listed memory) has `text` as one of its whole sentences, or None."""
        phrase = " ".join(core_blocks.words_after_speaker(text))
        return next((turn_id for turn_id, _, whole in self._message_words() if phrase in whole), None) \
            if phrase else None

    def _message_words(self) -> list[tuple[str, str, set[str]]]:
        """Each existing text's id, words and sentences' words, read once for every piece."""
        if self._existing_words is None:
            self._existing_words = [
                (turn_id, " ".join(core_blocks.words_after_speaker(text, strip_speaker=False)),
                 {" ".join(core_blocks.words_after_speaker(p)) for p in core_blocks.pieces(text)})
                for turn_id, text in self.existing]
        return self._existing_words

    def _copied_from(self, piece: str) -> str | None:
        """Which message a piece copies word for word (a speaker's label before it aside), or None:
        a run of COPIED_WORDS words or more, or a whole sentence of it however short ("Wow!")."""
        words = core_blocks.words_after_speaker(piece)
        if not words:
            return None
        if len(words) < COPIED_WORDS:
            return self._sentence_of(piece)
        phrase = " ".join(words)
        return next((turn_id for turn_id, said, _ in self._message_words() if phrase in said), None)

    def _check_core_line(self, line: str, label: str) -> None:
        """A core line is one short lasting fact about the user, in third person, from the batch; a
        persona line, from what the user said."""
        if len(line) > CORE_LINE_CHARS:
            self.refuse("a core line is one short fact in third person, without the subject, "
                        "not a message copied whole")
        if FIRST_PERSON.search(line):
            self.refuse(f"{line[:60]!r} speaks as the user: write the lasting fact in third person without the "
                        "subject (like 'works as a nurse'), or call nothing_to_record")
        if SECOND_PERSON.search(line) or line.rstrip().endswith("?"):
            self.refuse(f"{line[:60]!r} talks to someone: a core line states a lasting fact about the user, "
                        "or call nothing_to_record")
        names = {speaker.casefold() for speaker, _ in self.turns}
        if not any(w.casefold() not in names for w in content_words(line)):
            # "Melanie, thanks!" (the 0.5B model's persona line from "Caroline, thanks!"): names and
            # greetings alone say nothing lasting, yet every chat prompt would carry the line
            self.refuse(f"{line[:60]!r} states no fact: a core line says something lasting about the user, "
                        "or call nothing_to_record")
        self._grounded(line)
        if self.turns:  # "Nate: loves sci-fi" or "Nate loves sci-fi": said by Nate, or of him
            people = [speaker for speaker, _ in self.turns]
            head, _, rest = line.partition(":")
            subject = head.strip() if rest and head.strip() in people else grounding.lead_name(line, people)
            if subject:  # the subject's name is no content word of the line (`misattributed`)
                self._refuse_misattributed(subject, line)
        if label == "persona":
            self._said_by_user(line)

    def _said_by_user(self, line: str) -> None:
        """How the assistant behaves is the user's to say: a persona line drawn from a document, a
        screen or an assistant's turn is an instruction injected into every chat prompt."""
        if self.user_said is None:
            return
        said = grounding.vocabulary(self.user_said)
        # a short line ("recommends CropMax"), which the share of `ungrounded_problem` lets pass, word for word
        words = grounding.content_words(line)
        missing = [w for w in words if w not in said and w[:5] not in said]
        problem = ("this batch holds no message of the user" if not self.user_said
                   else grounding.ungrounded_problem([line], said)
                   or (f"the user did not say {', '.join(missing)}" if missing and len(words) < 3 else None))
        if problem:
            self.refuse(f"a persona line says what the user asked of the assistant, in the user's own messages "
                        f"(not a document's, a screen's or an assistant's): {problem}")

    def core_memory_rewrite(self, label: Literal["persona", "human"], value: str) -> str:
        """Replace a core block's whole value: its words come from the block and the batch (the local
        model wrote this tool's own description as the block)."""
        value = (value or "").strip()
        self._storable({"value": value})
        block = self.core_block(label) if label in core_blocks.CORE_LABELS else None
        if not value:
            self.refuse("a rewrite that empties the block: call nothing_to_record when nothing is new")
        held = set(block.value.splitlines()) if block else set()
        for line in (ln.strip() for ln in value.splitlines() if ln.strip() and ln not in held):
            # a new line is held to what an appended one is (the model rewrote a block as a copied message)
            repeated = grounding.near_duplicate(line, self.existing) or self._copied_from(line)
            if repeated:
                self.refuse(f"the new line {line[:60]!r} repeats {repeated}, which memory keeps already")
            self._check_core_line(line, label)
        if self.shown_texts:
            shown = grounding.vocabulary([*self.shown_texts, block.value if block else ""])
            problem = grounding.ungrounded_problem([value], shown)
            if problem:
                self.refuse(f"this core block is not grounded: {problem}")
        old = [ln.strip() for ln in held if ln.strip()]
        new_lines = {ln.strip() for ln in value.splitlines()}
        dropped = [ln for ln in old if ln not in new_lines]
        if len(dropped) > max(REWRITE_MAY_DROP, len(old) // 2):
            self.refuse(f"this rewrite drops {len(dropped)} of the block's {len(old)} lines ({dropped[0][:60]!r}): "
                        "a rewrite merges and updates lines, it does not empty the block; append instead")
        self._write_core(label, value)
        return f"ok: {label} rewritten"


# ---------------------------------------------------------------- tool factories
# Flat, typed signatures: weak models fill flat arguments far more reliably than nested objects.
# Every parameter is described (autogen reads `Annotated[T, "description"]`) and closed sets are
# enumerated; defaults are the records' own (`tools.params`).

SOURCE_IDS = "Ids of the messages it comes from, as in [id=...]; omit for all."
SECRET_VALUE = "The exact value, copied character for character from the batch."
SourceIds = Annotated[list[str] | None, SOURCE_IDS]
MAX_ENUMERATED_IDS = 64


def _batch_enums(fn: Callable[..., str], c: OpCollector) -> None:
    """The batch's own message ids and vault values as closed sets in the tool's schema: a server that
    constrains its output to the schema (function-calling grammars, JSON schema) cannot write an id or
    a secret that is not in the batch. The tools' grounding checks the same for the others."""
    ids = list(dict.fromkeys(c.shown_ids or c.batch_source_ids))
    if "source_ids" in fn.__annotations__ and 0 < len(ids) <= MAX_ENUMERATED_IDS:
        fn.__annotations__["source_ids"] = Annotated[list[Literal[tuple(ids)]] | None, SOURCE_IDS]  # type: ignore[misc, valid-type]
    if "secret_value" in fn.__annotations__:
        values = grounding.vault_value_candidates(c.message_texts)
        if 0 < len(values) <= grounding.MAX_ENUMERATED:
            fn.__annotations__["secret_value"] = Annotated[Literal[tuple(values)], SECRET_VALUE]  # type: ignore[misc, valid-type]
MemoryId = Annotated[str, "Id of a memory listed under 'Existing ... memories', copied exactly; no other id."]


def _insert_tool(c: OpCollector) -> FunctionTool:
    t = c.memory_type
    if t is MemoryType.episodic:
        def insert_episodic(
            summary: Annotated[str, "One sentence: who did what, in the words of the messages."],
            occurred_at: Annotated[str | None, "When it happened, ISO 8601; omit for the messages' time."] = None,
            source_ids: SourceIds = None,
        ) -> str:
            return c.insert(summary=summary, occurred_at=occurred_at, source_ids=source_ids,
                            event_type="summary", actor=c.speaker_of(source_ids))
        fn: Callable[..., str] = insert_episodic
        doc = "Summarise one event told across several messages."
    elif t is MemoryType.semantic:
        def insert_semantic(
            name: Annotated[str, "Who or what the fact is about, named as in the messages."],
            summary: Annotated[str, "The fact in one sentence, in the words of the messages."],
            details: Annotated[str, "More about the same name."] = "",
            source_ids: SourceIds = None,
        ) -> str:
            return c.insert(name=name, summary=summary, details=details, source_ids=source_ids)
        fn = insert_semantic
        doc = "Record a lasting fact about a named person, place, thing or concept."
    elif t is MemoryType.procedural:
        def insert_procedural(
            summary: Annotated[str, "The task in a few words, as the messages name it."],
            steps: Annotated[list[str], "The steps in order, each a short imperative."],
            entry_type: Annotated[P.ProcedureTypeName, "workflow: a sequence of actions; guide: advice; "
                                                        "script: commands to run."] = P.PROCEDURE_TYPE_DEFAULT,
            source_ids: SourceIds = None,
        ) -> str:
            return c.insert(summary=summary, steps=steps, entry_type=entry_type, source_ids=source_ids)
        fn = insert_procedural
        doc = "Record how to do something as ordered steps."
    elif t is MemoryType.resource:
        def insert_resource(
            title: Annotated[str, "The document's title or file name."],
            summary: Annotated[str, "Two sentences: what it is and what it is for."],
            content: Annotated[str, "The document's text, whole, copied from the batch."],
            resource_type: Annotated[str, "document, code, markdown, table, web_page, screenshot, email or "
                                          "text."] = P.RESOURCE_TYPE_DEFAULT,
            source_ids: SourceIds = None,
        ) -> str:
            return c.insert(title=title, summary=summary, content=content, resource_type=resource_type,
                            source_ids=source_ids)
        fn = insert_resource
        doc = "Keep a document, file, page or screen text whole."
    elif t is MemoryType.knowledge_vault:
        def insert_knowledge_vault(
            entry_type: Annotated[str, "password (also PINs and door codes), api_key, card_number, card_cvv, "
                                       "card_expiry, bank_account, recovery_code, id_number, address, phone, "
                                       "email or booking: the names the vault rules use."],
            caption: Annotated[str, "What the value is for (its kind and what it opens or belongs to), WITHOUT the value."],
            secret_value: Annotated[str, SECRET_VALUE],
            sensitivity: Annotated[P.SensitivityName, "high: grants access or moves money; medium: personal "
                                                       "contact details; low: public details."] = P.SENSITIVITY_DEFAULT,
            source: Annotated[str, "Who gave it."] = "",
            source_ids: SourceIds = None,
        ) -> str:
            return c.insert(entry_type=entry_type, caption=caption, secret_value=secret_value,
                            sensitivity=sensitivity, source=source, source_ids=source_ids)
        fn = insert_knowledge_vault
        doc = "Store an exact sensitive value that occurs in the batch; the caption must not contain it."
    else:
        raise InvalidInput("core memory has no insert tool")
    _batch_enums(fn, c)
    return BoundedFunctionTool(fn, description=doc, name=fn.__name__)


def _generic_tools(c: OpCollector) -> dict[str, Callable[[], FunctionTool]]:
    def update_memory(memory_id: MemoryId,
                      fields: Annotated[dict[str, Any], "Field names to new values, e.g. {\"details\": \"...\"}."]) -> str:
        return c.update_memory(memory_id, fields)

    def merge_memories(memory_ids: Annotated[list[str], "Two or more listed ids of duplicates; the first one stays."],
                       fields: Annotated[dict[str, Any] | None, "New values for the memory that stays."] = None) -> str:
        return c.merge_memories(memory_ids, fields)

    def delete_memory(memory_id: MemoryId) -> str:
        return c.delete_memory(memory_id)

    def core_memory_append(label: Annotated[CoreLabel, "human: who the user is; persona: how the assistant "
                                                       "should behave."],
                           text: Annotated[str, "A lasting fact about the user in third person, without the "
                                                "subject, in the words of the messages; never a reply. "
                                                "Empty when the batch holds none."]) -> str:
        return c.core_memory_append(label, text)

    def core_memory_rewrite(label: Annotated[CoreLabel, "human: who the user is; persona: how the assistant "
                                                        "should behave."],
                            value: Annotated[str, "The whole block rewritten: merged, deduplicated, newest facts "
                                                  "winning, under the limit."]) -> str:
        return c.core_memory_rewrite(label, value)

    def nothing_to_record(reason: Annotated[str, "Why this batch holds nothing for this memory type."] = "") -> str:
        return c.nothing_to_record(reason)

    update_doc = "Change fields of a listed memory in place (its id stays)."
    if c.memory_type is MemoryType.knowledge_vault:
        update_doc += (" A vault entry keeps its secret_value and entry_type (a new value is a new entry: insert "
                       "it) and its sensitivity is never lowered; its caption changes only to the words of a "
                       "message of this batch that holds its value or its [vault:id].")
    described: dict[str, tuple[Callable[..., str], str]] = {
        "update_memory": (update_memory, update_doc),
        "merge_memories": (merge_memories, "Fold listed duplicates into the first id; the others are deleted."),
        "delete_memory": (delete_memory, "Delete a listed memory that is wrong or obsolete."),
        "core_memory_append": (core_memory_append, "Append one line to a core block."),
        "core_memory_rewrite": (core_memory_rewrite, "Replace a core block's whole value."),
        NOTHING_TOOL: (nothing_to_record, "Say that this batch holds nothing to record here; call it alone."),
    }
    def factory(fn: Callable[..., str], doc: str, name: str) -> Callable[[], FunctionTool]:
        return lambda: BoundedFunctionTool(fn, description=doc, name=name)

    return {name: factory(fn, doc, name) for name, (fn, doc) in described.items()}


ROUTE_TYPES = "Every memory type with something new in this batch; an empty list when there is nothing."
EDIT_TOOLS = frozenset({"update_memory", "merge_memories", "delete_memory"})


def manager_tools(collector: OpCollector, names: Sequence[str], *, every_tool: bool = False) -> list[FunctionTool]:
    """The FunctionTools named by an agent definition, bound to one collector, and `nothing_to_record`.

    Tools that edit listed memories are left out when the collector lists none, and the core
    rewrite while both blocks can take another line: a model is not offered a tool it cannot use
    right (weak models call an edit tool with ids copied from anywhere, and rewrote a block as a
    message, dropping the lines it held). `every_tool`: all of them, to list their schemas."""
    c = collector
    factories = {f"insert_{c.memory_type.value}": lambda: _insert_tool(c), **_generic_tools(c)}
    tools = []
    for name in [*names, NOTHING_TOOL] if NOTHING_TOOL not in names else names:
        if name not in factories:
            raise InvalidInput(f"tool {name!r} is not available to the {c.memory_type.value} manager")
        if name in EDIT_TOOLS and c.listed_ids is not None and not c.listed_ids:
            continue
        if name == REWRITE_TOOL and not every_tool and not c.a_block_is_full():
            continue
        tools.append(factories[name]())
    c.schema_texts = [d for tool in tools for d in parameter_descriptions(tool)]
    return tools


def parameter_descriptions(tool: FunctionTool) -> list[str]:
    """The descriptions of a tool's parameters, as its schema gives them to the model."""
    parameters: dict[str, Any] = dict(tool.schema.get("parameters") or {})
    properties: dict[str, Any] = parameters.get("properties") or {}
    return [str(p["description"]) for p in properties.values() if isinstance(p, dict) and p.get("description")]


@dataclass
class RouteCollector:
    """The meta memory manager's single tool. `offered`: the memory types the batch can give anything
    to (`grounding.offered_memory_types`); the tool's enum lists only those."""

    offered: Sequence[MemoryType] = tuple(MemoryType)
    chosen: list[MemoryType] | None = None
    errors: list[str] = field(default_factory=list)

    def trigger_memory_managers(self, memory_types: list[str]) -> str:
        valid = {t.value for t in self.offered}
        if isinstance(memory_types, str):
            memory_types = [memory_types]
        unknown = sorted({t for t in memory_types if t not in valid})
        if unknown:
            message = f"memory type(s) {unknown} not offered for this batch; choose from {sorted(valid)}"
            self.errors.append(message)
            raise ToolError(message)
        self.chosen = list(dict.fromkeys(MemoryType(t) for t in memory_types))
        return "ok: " + ", ".join(t.value for t in self.chosen)

    def tool(self) -> FunctionTool:
        def trigger_memory_managers(memory_types: list[str]) -> str:
            return self.trigger_memory_managers(memory_types)

        names = tuple(t.value for t in MemoryType if t in self.offered)
        trigger_memory_managers.__annotations__["memory_types"] = Annotated[
            list[Literal[names]], ROUTE_TYPES]  # type: ignore[misc, valid-type]
        return BoundedFunctionTool(trigger_memory_managers, name="trigger_memory_managers",
                            description="Start the memory managers of these memory types for this batch.")
