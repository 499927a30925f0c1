"""Public records: the single source of truth for every memory, input, hit and result.

Each of the six memory types is a pydantic model sharing `MemoryBase`; `Memory` is their
discriminated union on `memory_type`. Storage, search, the CLI, REST and the JSON Schema files in
`schemas/` are all derived from these classes.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationInfo, computed_field, field_validator

from mirix_py.text.by_day import day_lines
from mirix_py.text.dates import annotate, day_words, when_words
from mirix_py.text.passages import focus
from mirix_py.text.small_talk import WHOLE_HITS

# how a memory's text refers to a secret taken out of it: its vault entry ("[vault:kv_…]"), or its
# kind when it was not kept ("[redacted:password]")
SECRET_REF = re.compile(r"\[(?:vault|redacted):[^\]\s]{1,80}\]")
SECRET_WORD = "[secret]"  # what stands for one where the reference's id means nothing (a vector, a caption)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class MemoryType(str, Enum):
    core = "core"
    episodic = "episodic"
    semantic = "semantic"
    procedural = "procedural"
    resource = "resource"
    knowledge_vault = "knowledge_vault"


ID_PREFIX: dict[MemoryType, str] = {
    MemoryType.core: "core",
    MemoryType.episodic: "epi",
    MemoryType.semantic: "sem",
    MemoryType.procedural: "proc",
    MemoryType.resource: "res",
    MemoryType.knowledge_vault: "kv",
}


def new_memory_id(memory_type: MemoryType) -> str:
    return f"{ID_PREFIX[MemoryType(memory_type)]}_{uuid.uuid4().hex}"


MEMORY_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")


def memory_id_problem(memory_id: str) -> str | None:
    """Why a memory id given by a caller (an import, an adapter's derived id) cannot be one: the
    engine's ids are a type prefix and hex, and every id must travel in a URL path and a vector
    store's id field unchanged."""
    if not MEMORY_ID_PATTERN.fullmatch(memory_id):
        return "is not an id: letters, digits, '_', '.', ':' and '-', starting with a letter or digit, at most 200"
    return None


INPUT_PREFIX = "in_"


def new_input_id() -> str:
    return f"{INPUT_PREFIX}{uuid.uuid4().hex}"


_INPUT_ID = re.compile(rf"{INPUT_PREFIX}[0-9a-f]{{32}}")


def is_input_id(value: str) -> bool:
    """Whether `value` has the form `new_input_id` gives: a caller's id of that form would pass for an
    input's (another user's even) in a memory's `source_ids`; "in_progress" or "in_frame" do not."""
    return _INPUT_ID.fullmatch(value) is not None


def _require_aware(value: datetime | None) -> datetime | None:
    """An aware datetime, in UTC: records keep one zone, so the text a record renders is the same
    before it is stored and after it is read back (people see their own zone: `mirix_py.boundary.timezones`;
    a memory's own text the speaker's: `SaidOffset`)."""
    return None if value is None else _in_utc(value)


def _in_utc(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("datetime must be timezone-aware (e.g. 2024-05-01T10:00:00+00:00)")
    try:
        return value.astimezone(timezone.utc)
    except OverflowError as exc:  # year 1 east of UTC, 9999 west of it
        raise ValueError("datetime is out of range once converted to UTC") from exc


MAX_OFFSET_MINUTES = 16 * 60  # the farthest from UTC any zone of the tz database has kept (local mean times)


def utc_offset_minutes(moment: datetime) -> int | None:
    """The UTC offset an aware `moment` is given in, in whole minutes east of UTC; None for UTC itself
    (an offset of seconds, a local mean time's, is rounded)."""
    offset = moment.utcoffset()
    minutes = round(offset.total_seconds() / 60) if offset is not None else 0
    return minutes or None


def at_offset(moment: datetime, minutes: int | None) -> datetime:
    """`moment` on the clock `minutes` east of UTC (a fixed offset: arithmetic on it is exact, as on
    UTC); `moment` itself for None."""
    return moment if minutes is None else moment.astimezone(timezone(timedelta(minutes=minutes)))


def offset_problem(minutes: int | None) -> str | None:
    """Why `minutes` cannot be the offset a time was said at, or None."""
    if minutes is not None and abs(minutes) > MAX_OFFSET_MINUTES:
        return f"UTC offset of {minutes} minutes is farther from UTC than any zone ({MAX_OFFSET_MINUTES // 60} hours)"
    return None


SaidOffset = Annotated[int | None, Field(ge=-MAX_OFFSET_MINUTES, le=MAX_OFFSET_MINUTES, description=(
    "The UTC offset, in minutes east of UTC, of the clock it was said by (-480: Los Angeles in winter): the day "
    "and time its text states, and the day a 'yesterday' in it names, are the speaker's. Set from the offset the "
    "input's time was given with (other than +00:00), else MIRIX_TIMEZONE's; None: UTC."))]


def _on_the_calendar(occurred_at: datetime | None, minutes: int | None) -> int | None:
    """`minutes`, or ValueError when `occurred_at` read at `minutes` east of UTC falls off the calendar
    (year 1 west of UTC, 9999 east of it): its text could not be written."""
    if occurred_at is not None and minutes is not None:
        try:
            at_offset(occurred_at, minutes)
        except OverflowError as exc:
            raise ValueError(f"occurred_at {occurred_at.isoformat()} is off the calendar at {minutes} minutes "
                             "from UTC") from exc
    return minutes


class MemoryBase(BaseModel):
    """Fields every memory keeps, whatever its type."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = ""
    user_id: str = Field(min_length=1, max_length=256)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    occurred_at: datetime | None = None
    source_ids: list[str] = Field(default_factory=list, description="Input ids and caller ids this memory came from.")
    tags: list[str] = Field(default_factory=list)
    expires_at: datetime | None = Field(
        default=None, description="When the memory stops being read and is deleted (None: kept until deleted).")

    @field_validator("created_at", "updated_at", "occurred_at", "expires_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return _require_aware(value)

    def search_text(self) -> str:
        """Text as it would be put into a prompt (and indexed for search)."""
        raise NotImplementedError

    def embedding_text(self) -> str:
        """Text the vector is made from (`_embedded`), each secret's reference written alike: a vault id
        comes from its input's, so the same words would embed a little differently every time.
        A change to what is embedded needs a migration that marks the memories it changes for their
        vectors to be made again (as 0019 does): `doctor` cannot see a vector made from older text."""
        return SECRET_REF.sub(SECRET_WORD, self._embedded())

    def _embedded(self) -> str:
        """The search text, unless a type has a reason to differ."""
        return self.search_text()


CoreLabel = Literal["persona", "human"]


class CoreMemory(MemoryBase):
    """A core block (`persona` or `human`): always in the chat prompt, bounded in size."""

    memory_type: Literal[MemoryType.core] = MemoryType.core
    label: CoreLabel
    value: str = ""
    limit: int = Field(default=5000, gt=0)
    said: dict[str, datetime] = Field(default_factory=dict, description=(
        "When each line of `value` was said, by line: a reader sees a change the rules cannot read "
        "(\"moved to Berlin\" after \"lives in Paris\") as the newer line. Lines kept before dates were "
        "recorded have none."))
    said_offsets: dict[str, Annotated[int, Field(ge=-MAX_OFFSET_MINUTES, le=MAX_OFFSET_MINUTES)]] = Field(
        default_factory=dict, description=(
            "The UTC offset, in minutes east of UTC, of the clock each line of `said` was said by (-480: Los "
            "Angeles in winter): the day a reader is told is the speaker's, as for episodes and facts "
            "(`said_offset_minutes`). A line without one: UTC."))
    line_sources: dict[str, list[str]] = Field(default_factory=dict, description=(
        "The messages each line of `value` was said in, by line: each message's own id, else, for one of "
        "several messages of its input, its input's id and the time it was said (`store.said_keys`), else its "
        "input's id. Deleting the turn that alone said a line, or rewriting its words, takes the line "
        "back (`agents.derived`); a line said in other turns too stays. A line written through the API, or "
        "before sources were recorded, has none and is left alone."))
    line_cites: dict[str, list[str]] = Field(default_factory=dict, description=(
        "The ids of `source_ids` each line of `value` came from, by line (its messages' input ids, the "
        "caller's source and message ids; none for a line written through the API): the block cites what "
        "its lines came from, so a line dropped to make room, replaced or taken back takes the ids no line "
        "left cites out of `source_ids`. A line kept from before these were recorded has no entry: while "
        "the block holds one, it keeps every id it cites."))

    @field_validator("said")
    @classmethod
    def _said_aware(cls, value: dict[str, datetime]) -> dict[str, datetime]:
        """Each time aware and in UTC, as every other time a record keeps: a naive one is refused here, not
        left to break `dated_lines` (which orders them) on every read."""
        out: dict[str, datetime] = {}
        for line, when in value.items():
            try:
                out[line] = _in_utc(when)
            except ValueError as exc:
                raise ValueError(f"said[{line[:60]!r}]: {exc}") from exc
        return out

    @field_validator("said_offsets")
    @classmethod
    def _offsets_on_the_calendar(cls, value: dict[str, int], info: ValidationInfo) -> dict[str, int]:
        """Each line's time readable on its clock: `dated_lines` writes its day on every read."""
        said = info.data.get("said") or {}
        for line, minutes in value.items():
            if line not in said:
                continue
            try:
                at_offset(said[line], minutes)
            except OverflowError as exc:
                raise ValueError(f"said_offsets[{line[:60]!r}]: {said[line].isoformat()} is off the calendar at "
                                 f"{minutes} minutes from UTC") from exc
        return value

    def search_text(self) -> str:
        return f"[core:{self.label}] {self.value}"

    def said_local(self) -> dict[str, datetime]:
        """When each dated line was said, on the clock it was said by (`said_offsets`; UTC without one)."""
        return {line: at_offset(when, self.said_offsets.get(line)) for line, when in self.said.items()}

    def dated_lines(self) -> list[str]:
        """The block's lines as a reader gets them: newest first, each with the day it was said on the
        speaker's clock ("lives in Berlin (said 2 May 2024)"); undated lines last, in block order."""
        lines = [line for line in self.value.splitlines() if line.strip()]
        said = self.said_local()
        dated = sorted((ln for ln in lines if ln in said), key=lambda ln: said[ln], reverse=True)
        return [f"{ln} (said {day_words(said[ln].date())})" for ln in dated] + [ln for ln in lines if ln not in said]


class EpisodicMemory(MemoryBase):
    """Something that happened: when, who, what."""

    memory_type: Literal[MemoryType.episodic] = MemoryType.episodic
    event_type: str = "message"
    summary: str = Field(min_length=1)
    details: str = ""
    actor: str = "user"
    said_offset_minutes: SaidOffset = None

    @field_validator("said_offset_minutes")
    @classmethod
    def _said_on_the_calendar(cls, value: int | None, info: ValidationInfo) -> int | None:
        return _on_the_calendar(info.data.get("occurred_at"), value)

    def search_text(self) -> str:
        """"[8 May 2023, 13:56] Ada: I went to the support group yesterday (7 May 2023)": the date in
        words and each relative time phrase resolved against it (`mirix_py.text.dates`), as answers name
        them (against ISO dates: benchmarks/docs/locomo_recall.md), on the speaker's clock
        (`said_offset_minutes`; UTC without one). Rows written before are re-rendered by
        `doctor(repair=True)` (their text is stale)."""
        if self.occurred_at is None:
            return f"[undated] {self._said()}"
        said_at = at_offset(self.occurred_at, self.said_offset_minutes)
        return f"[{when_words(said_at)}] {annotate(self._said(), said_at)}"

    def _embedded(self) -> str:
        """What was said, without the date: the date is in the search text (BM25) and `occurred_at`
        (time filters); dated vectors read lower on LoCoMo (benchmarks/docs/locomo_recall.md)."""
        return self._said()

    def _said(self) -> str:
        body = self.summary if not self.details or self.details == self.summary else f"{self.summary} — {self.details}"
        return f"{self.actor}: {body}"


class SemanticMemory(MemoryBase):
    """A fact about a person, thing or concept, keyed by its name."""

    memory_type: Literal[MemoryType.semantic] = MemoryType.semantic
    name: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    details: str = ""
    source: str = ""
    said_offset_minutes: SaidOffset = None
    said_in: list[str] = Field(default_factory=list, description=(
        "The messages without ids, of inputs of several, its facts were said in: each its input's id and the "
        "time it was said (`store.said_keys`), which `source_ids` cannot tell apart (it cites the input). "
        "Deleting the turns that alone said them, or rewriting their words, takes the memory back "
        "(`agents.derived`). Empty for a memory of other messages, or made before these were recorded."))

    @field_validator("said_offset_minutes")
    @classmethod
    def _said_on_the_calendar(cls, value: int | None, info: ValidationInfo) -> int | None:
        return _on_the_calendar(info.data.get("occurred_at"), value)

    def search_text(self) -> str:
        tail = f" {self.details}" if self.details else ""
        return f"{self.name}: {self.summary}{tail}"


class ProceduralMemory(MemoryBase):
    """How to do something: a workflow, guide or script with ordered steps."""

    memory_type: Literal[MemoryType.procedural] = MemoryType.procedural
    entry_type: Literal["workflow", "guide", "script"] = "workflow"
    summary: str = Field(min_length=1)
    steps: list[str] = Field(default_factory=list)

    def search_text(self) -> str:
        steps = " ".join(f"{i}. {s}" for i, s in enumerate(self.steps, 1))
        return f"{self.summary}: {steps}" if steps else self.summary


RESOURCE_EXCERPT_CHARS = 1000


class ResourceMemory(MemoryBase):
    """A document, file, page or screenshot's text."""

    memory_type: Literal[MemoryType.resource] = MemoryType.resource
    title: str = Field(min_length=1)
    summary: str = ""
    resource_type: str = "text"
    content: str = ""

    def search_text(self) -> str:
        """Title, summary and the whole content as it is: all of it is indexed for full-text
        search, so a passage deep in a long document is found; prompts cut it to the lines about
        the question (`text.passages.focus`). Verbatim, so the row keeps the content once
        (`store.textrefs`)."""
        return self._with_head(self.content if self.content.strip() else "")

    def _embedded(self) -> str:
        """Title, summary and the opening of the content: MiniLM reads 256 word pieces at most."""
        return self._with_head(" ".join(self.content.split())[:RESOURCE_EXCERPT_CHARS])

    def _with_head(self, body: str) -> str:
        head = f"{self.title} ({self.resource_type}): {self.summary}".strip()
        return f"{head}\n{body}" if body and body not in head else head


class Sensitivity(str, Enum):
    low = "low"
    medium = "medium"
    high = "high"


MASK = "••••••"


class KnowledgeVaultMemory(MemoryBase):
    """A credential, address or number. `secret_value` is encrypted at rest and masked on read."""

    memory_type: Literal[MemoryType.knowledge_vault] = MemoryType.knowledge_vault
    entry_type: str = "credential"
    source: str = ""
    sensitivity: Sensitivity = Sensitivity.medium
    secret_value: str = Field(default="", description="Masked unless read with reveal=True.")
    caption: str = Field(min_length=1)

    def search_text(self) -> str:
        # The secret never enters indexed or prompt text; only the caption does.
        return f"[vault:{self.entry_type}] {self.caption}"

    def masked(self) -> "KnowledgeVaultMemory":
        return self.model_copy(update={"secret_value": MASK if self.secret_value else ""})


Memory = Annotated[
    Union[CoreMemory, EpisodicMemory, SemanticMemory, ProceduralMemory, ResourceMemory, KnowledgeVaultMemory],
    Field(discriminator="memory_type"),
]
MEMORY_ADAPTER: TypeAdapter[Memory] = TypeAdapter(Memory)

MEMORY_CLASSES: dict[MemoryType, type[MemoryBase]] = {
    MemoryType.core: CoreMemory,
    MemoryType.episodic: EpisodicMemory,
    MemoryType.semantic: SemanticMemory,
    MemoryType.procedural: ProceduralMemory,
    MemoryType.resource: ResourceMemory,
    MemoryType.knowledge_vault: KnowledgeVaultMemory,
}

COMMON_FIELDS = frozenset(MemoryBase.model_fields) | {"memory_type"}


def type_fields(memory: MemoryBase) -> dict[str, Any]:
    """The type-specific fields of a memory (everything but the common ones)."""
    return memory.model_dump(mode="json", exclude=set(COMMON_FIELDS))


def to_jsonable(obj: Any) -> Any:
    """Records (and lists/dicts of them) as plain JSON values, for the CLI's --json and MCP."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, list):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


# ---------------------------------------------------------------- inputs


class Message(BaseModel):
    """One chat message as callers pass it to `add`."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(min_length=1)
    name: str | None = Field(default=None, description="Speaker name.")
    id: str | None = Field(default=None, description="Caller id; lands in source_ids of derived memories. Not of the engine's input ids' form ('in_' and 32 hex digits).")
    occurred_at: datetime | None = None
    said_offset_minutes: SaidOffset = Field(default=None, description=(
        "The UTC offset, in minutes east of UTC, of the clock the message was said by: that of `occurred_at` "
        "when it is given with one other than +00:00 (it is then kept in UTC), else of the input's time; "
        "None: MIRIX_TIMEZONE's when set, else UTC."))

    @field_validator("occurred_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        """Aware, convertible to UTC, and at an offset some zone keeps; as given, until `model_post_init`."""
        if value is not None:
            _in_utc(value)
            if problem := offset_problem(utc_offset_minutes(value)):
                raise ValueError(problem)
        return value

    def model_post_init(self, context: Any) -> None:
        """`occurred_at` kept in UTC, the offset it was given in kept in `said_offset_minutes`."""
        if self.occurred_at is not None:
            given = utc_offset_minutes(self.occurred_at)
            self.said_offset_minutes = given if given is not None else self.said_offset_minutes
            self.occurred_at = self.occurred_at.astimezone(timezone.utc)

    @property
    def speaker(self) -> str:
        return self.name or self.role


class InputKind(str, Enum):
    text = "text"
    messages = "messages"
    document = "document"
    screenshot = "screenshot"


class InputStatus(str, Enum):
    pending = "pending"
    processing = "processing"
    processed = "processed"
    degraded = "degraded"  # processed by the offline rules in place of a model that failed; `error` says why
    failed = "failed"


class InputRecord(BaseModel):
    """An entry of the input log: written before any processing so nothing acknowledged is lost."""

    id: str = Field(default_factory=new_input_id)
    user_id: str
    kind: InputKind
    messages: list[Message]
    source_id: str | None = None
    occurred_at: datetime = Field(description="Kept in UTC; the offset it was given in is on each message "
                                              "(`Message.said_offset_minutes`).")
    metadata: dict[str, str] = Field(default_factory=dict, description="e.g. app and window_title of a screenshot.")
    status: InputStatus = InputStatus.pending
    error: str | None = None
    refused: list[str] = Field(default_factory=list,
                               description="Model writes refused for this input (not grounded, a near repeat, "
                                           "no secret), with their reasons.")
    attempts: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    processed_at: datetime | None = None
    expires_at: datetime | None = Field(
        default=None, description="When the memories made from this input expire (None: never).")

    @field_validator("occurred_at", "expires_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        return _require_aware(value)


# ---------------------------------------------------------------- results


class Operation(str, Enum):
    insert = "insert"
    update = "update"
    merge = "merge"
    delete = "delete"


class MemoryChange(BaseModel):
    """One write the engine made."""

    operation: Operation
    memory_id: str
    memory_type: MemoryType
    actor: str


class LLMUsage(BaseModel):
    """Model calls of one batch or one chat. Tokens are the provider's counts, or estimated
    offline (`tokens_estimated`) when it reports none."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sequential_rounds: int = 0
    tokens_estimated: bool = False
    wall_seconds: float = 0.0


Mode = Literal["offline", "llm"]  # deterministic rules, or a model


class AddResult(BaseModel):
    input_ids: list[str]
    status: InputStatus
    changes: list[MemoryChange] = Field(default_factory=list)
    mode: Mode = "offline"
    error: str | None = None
    routed: list[MemoryType] = Field(default_factory=list, description="Memory types the router chose.")
    left_out: list[MemoryType] = Field(
        default_factory=list, description="Types the router also chose, past the managers a batch may run "
                                          "(MIRIX_LLM_MAX_MANAGERS): not run; the rules' memories of them stand.")
    usage: LLMUsage = Field(default_factory=LLMUsage)
    rejected: list[str] = Field(default_factory=list,
                                description="Model writes refused by validation or grounding, with the reason.")
    write_position: str | None = Field(
        default=None, description="With searches on a replica: where the primary's log stood after this add's "
                                  "writes while the replica may lack them; a read given it as `read_after`, on "
                                  "any engine of the service, sees them.")


class CloseReport(BaseModel):
    """What `Mirix.close` did with the inputs queued for processing and the calls in flight. When it
    returns with `still_running` empty, none of the engine's work runs any more: none of its writes
    lands in the data dir afterwards."""

    left_pending: list[str] = Field(
        default_factory=list, description="Inputs close did not process (queued when its timeout passed, or cut "
                                          "short then): pending in the input log, the next engine opened on "
                                          "the data dir takes them up.")
    waited_for: list[str] = Field(
        default_factory=list, description="Inputs of the batches running when the timeout passed: close cut "
                                          "their model calls and waited for the rest of their work (rules, "
                                          "writes). Those cut short are in left_pending too.")
    calls_waited_for: list[str] = Field(
        default_factory=list, description="The engine's calls that write (add, update, delete, core_append, an "
                                          "import, a doctor's repair...) in flight in other threads when close "
                                          "started, as 'add(user_id=...)': close waited for each to end, or to "
                                          "be cut at its model calls (EngineClosed in its thread) and give its "
                                          "input back.")
    still_running: list[str] = Field(
        default_factory=list, description="What may still run, and write, when close(timeout=T) gave up at its "
                                          "cap (T plus grace): a batch's rules, a call in another thread. Empty "
                                          "when close finished. Otherwise the engine is not closed yet: it keeps "
                                          "the data dir's writer lock and its database open; call close() again "
                                          "to wait for them and finish, or end the process.")


class ChatResponse(BaseModel):
    answer: str
    topics: list[str]
    start: datetime | None = None
    end: datetime | None = None
    memory_ids: list[str] = Field(default_factory=list, description="Memories the answer cites.")
    retrieved_ids: list[str] = Field(default_factory=list, description="Memories put into the prompt.")
    mode: Mode = "offline"
    usage: LLMUsage = Field(default_factory=LLMUsage)
    update_input_ids: list[str] = Field(default_factory=list, description="The exchange, fed back into memory.")
    fallback: str | None = Field(default=None, description="Why the offline answer (best memories, cited) stands "
                                                           "in for the model's, when it does.")


class SearchMethod(str, Enum):
    hybrid = "hybrid"
    bm25 = "bm25"
    embedding = "embedding"
    string = "string"


class SearchHit(BaseModel):
    text: str = Field(description=f"The memory as it would be put in a prompt: past a search's first hits ({WHOLE_HITS} "
                                  "by default, MIRIX_WHOLE_HITS), a chat turn without its small talk (sentences of fewer than two content words, "
                                  "such as 'Thanks, Maria!'), and to a question asking for one moment ('When did…', 'How long…') "
                                  "as its sentences that share a word with it; `memory` holds every word.")
    score: float
    memory: Memory
    method: SearchMethod
    context_for: str | None = Field(default=None, description=(
        "Set on a turn returned as context (search with `context`): the id of the match it was said "
        "just before or after; its score is that match's."))


def reader_text(hit: SearchHit, text: str | None = None) -> str:
    """A hit's text as a reader gets it: a fact with the day it was said ("Caroline: lives in Berlin
    (said 2 May 2024)"), so a change the rules cannot read stays visible as the newer fact."""
    text = hit.text if text is None else text
    memory = hit.memory
    if isinstance(memory, SemanticMemory) and memory.occurred_at is not None:
        return f"{text} (said {day_words(at_offset(memory.occurred_at, memory.said_offset_minutes).date())})"
    return text


def newest_facts_first(hits: list[SearchHit]) -> list[SearchHit]:
    """`hits` in their order, except that facts about the same name come together, newest first, where
    the first of them ranked (undated facts after the dated ones)."""
    groups: dict[str, list[SearchHit]] = {}
    for hit in hits:
        if isinstance(hit.memory, SemanticMemory):
            groups.setdefault(hit.memory.name.casefold(), []).append(hit)
    oldest = datetime.min.replace(tzinfo=timezone.utc)
    out: list[SearchHit] = []
    for hit in hits:
        memory = hit.memory
        if not isinstance(memory, SemanticMemory):
            out.append(hit)
        elif (group := groups.pop(memory.name.casefold(), None)) is not None:
            out += sorted(group, key=lambda h: h.memory.occurred_at or oldest, reverse=True)
    return out


class MemoryContext(BaseModel):
    """What an agent gets before it answers: topics, core memory and the best items of each type."""

    user_id: str
    message: str = Field(default="", description="What the context was retrieved for; long hits are cut around it "
                                                  "when rendered.")
    topics: list[str]
    start: datetime | None = None
    end: datetime | None = None
    core: dict[str, str] = Field(default_factory=dict, description="Core blocks by label (empty ones left out), "
                                                                    "their lines newest first, each with the day "
                                                                    "it was said where that is known.")
    hits: list[SearchHit] = Field(default_factory=list, description="Each hit's `text` is cut to the passages "
                                                                      "about `message`; `memory` is the whole record. "
                                                                      "A turn said around a match follows it, with "
                                                                      "`context_for` naming the match.")

    @computed_field(description="The context as one ready text block for a system message ('' when empty).")  # type: ignore[prop-decorator]
    @property
    def prompt(self) -> str:
        return self.render()

    def render(self) -> str:
        """The context as one text block for a system message ('' when there is nothing to say)."""
        lines: list[str] = []
        if self.core:
            lines.append("Core memory:")
            lines += [f"[{label}] {value}" for label, value in self.core.items()]
        if self.hits:
            lines.append("Relevant memories" + (f" (topics: {', '.join(self.topics)})" if self.topics else "") + ":")
            ordered = newest_facts_first(self.hits)
            lines += day_lines([reader_text(h, focus(h.text, self.message)) for h in ordered],
                               [f"- [{h.memory.id}] ({h.memory.memory_type.value}) " for h in ordered])
        if not lines:
            return ""
        return f"Long-term memory of user {self.user_id} (mirix):\n" + "\n".join(lines)


class HistoryEvent(BaseModel):
    """One change to one memory: the base for `history(memory_id)` and undo."""

    id: int
    memory_id: str
    user_id: str
    memory_type: MemoryType
    operation: Operation
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    actor: str
    input_id: str | None
    created_at: datetime
    erased: bool = Field(default=False, description=(
        "The words of this change were erased (`delete(..., erase=True)`): for a memory that deletion removed, "
        "`before` and `after` are null; for one it changed, what it took back is left out of both."))


PUBLIC_MODELS: dict[str, type[BaseModel] | TypeAdapter] = {
    "core_memory": CoreMemory,
    "episodic_memory": EpisodicMemory,
    "semantic_memory": SemanticMemory,
    "procedural_memory": ProceduralMemory,
    "resource_memory": ResourceMemory,
    "knowledge_vault_memory": KnowledgeVaultMemory,
    "memory": MEMORY_ADAPTER,
    "message": Message,
    "input_record": InputRecord,
    "add_result": AddResult,
    "chat_response": ChatResponse,
    "llm_usage": LLMUsage,
    "search_hit": SearchHit,
    "history_event": HistoryEvent,
    "memory_change": MemoryChange,
}
