"""LoCoMo: loading the original JSON, ingesting it into the engine, and turn-level retrieval metrics.

The metric is evidence recall inside a word budget: for each question, take search hits in rank
order, keep them while they fit the remaining budget (stop at the first that does not), and count
the share of the question's evidence turns (`dia_id`s such as "D3:5") whose id is among the
`source_ids` of what was kept. The same metric scores three raw-turn baselines over the turns of the
same conversation (BM25, MiniLM cosine, and RRF of both), so a run always carries its own yardstick.

Categories are reported by their integer (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial); recall is averaged over questions of categories 1-4, category 5 is reported apart.

    convs = load_locomo("locomo_dev.json")
    ingest_conversations(mx, convs)
    report = evaluate(convs, engine_retriever(mx, "hybrid"), budget_words=750)
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any, Callable, Iterable, Mapping, NamedTuple, Sequence, TypeVar

from pydantic import AliasChoices, BaseModel, BeforeValidator, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from mirix_py.store.search import RRF_K as ENGINE_RRF_K
from mirix_py.store.search import rrf_fuse
from mirix_py.text.by_day import stated_once
from mirix_py.text.words import word_count

CATEGORY_NAMES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED_CATEGORIES: tuple[int, ...] = (1, 2, 3, 4)
PHOTO_TEMPLATE = " [shares a photo: {caption}]"

# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    blip_caption: str | None = None

    @property
    def content(self) -> str:
        """What the engine is given: the text, plus the photo's caption when the turn shares one."""
        if self.blip_caption:
            return self.text + PHOTO_TEMPLATE.format(caption=self.blip_caption)
        return self.text

    @property
    def document(self) -> str:
        """What the raw-turn baselines index and put into the context: "Speaker: content"."""
        return f"{self.speaker}: {self.content}"


@dataclass(frozen=True)
class Session:
    number: int
    date: datetime  # aware, UTC
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    conversation_id: str
    index: int
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # normalised, deduplicated dia_ids
    raw_evidence: tuple[str, ...]

    @property
    def scored(self) -> bool:
        return self.category in SCORED_CATEGORIES and bool(self.evidence)


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def user_id(self) -> str:
        return f"locomo:{self.sample_id}"

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


@dataclass
class EvidenceReport:
    """What normalising the evidence lists did, over a whole file."""

    entries: int = 0
    malformed: list[str] = field(default_factory=list)  # raw entries that needed repair or were dropped
    dropped: list[str] = field(default_factory=list)  # raw fragments with no recoverable dia_id
    unknown: list[str] = field(default_factory=list)  # well-formed ids naming no turn of the conversation
    no_evidence: int = 0  # questions left with no evidence id (not scored)

    def as_dict(self) -> dict[str, Any]:
        return {"entries": self.entries, "malformed": self.malformed, "dropped": self.dropped,
                "unknown": self.unknown, "questions_without_evidence": self.no_evidence}


# --------------------------------------------------------------------------- parsing

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %B %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %d %b %Y")


def _category_number(value: Any) -> int:
    """LoCoMo's category (1 to 5), written as a number or in digits (not true, 3.0 or "temporal")."""
    number = value if isinstance(value, int) and not isinstance(value, bool) else (
        int(value) if isinstance(value, str) and value.strip().isdecimal() else None)
    if number not in CATEGORY_NAMES:
        raise PydanticCustomError("locomo_category", f"category {{category}} is none of LoCoMo's "
                                  f"{min(CATEGORY_NAMES)} to {max(CATEGORY_NAMES)}", {"category": repr(value)})
    return number


def _session_date(value: Any) -> datetime:
    """A session's date as LoCoMo writes it, in words: a number is no date here (pydantic would read seconds)."""
    if not isinstance(value, str):
        raise PydanticCustomError("date_type", "a session's date is written in words")
    return parse_session_date(value)


class RawTurn(BaseModel):
    """A turn as LoCoMo writes it; its other keys (img_url, query, re-download: where the photo came
    from) are not read."""

    dia_id: str  # "D2:1": session 2, turn 1, what the evidence lists name
    speaker: str
    text: str
    blip_caption: str | None = None  # what BLIP saw in the photo the turn shares


class RawSession(BaseModel):
    """A non-empty `session_N` with its `session_N_date_time`, as `RawDialogue` gathers them."""

    date: Annotated[datetime, BeforeValidator(_session_date)]
    turns: list[RawTurn]


class RawDialogue(BaseModel):
    """LoCoMo's 'conversation' object. Its session keys differ from one conversation to the next, so
    they are gathered by number first: session_1 to session_N with no gap, each with its date (a date
    without a session is left, as LoCoMo's files hold them; an empty session is skipped)."""

    speaker_a: str = ""
    speaker_b: str = ""
    sessions: dict[int, RawSession]  # by number, in order

    @model_validator(mode="before")
    @classmethod
    def _gather_sessions(cls, body: Any) -> Any:
        if not isinstance(body, Mapping):
            return body  # pydantic says what it is
        keys = {int(m.group(1)): key for key in body if (m := _SESSION_KEY.fullmatch(key))}
        if not keys:
            raise PydanticCustomError("locomo_sessions", "has no 'session_1' (no session at all)")
        gap = next((n for n in range(1, max(keys)) if n not in keys), None)
        if gap is not None:
            raise PydanticCustomError("locomo_sessions", "has no 'session_{gap}' (its sessions run to {last})",
                                      {"gap": gap, "last": keys[max(keys)]})
        sessions = {}
        for number, key in sorted(keys.items()):
            if body[key]:
                date_key = f"session_{number}_date_time"
                sessions[number] = {"turns": body[key], **({"date": body[date_key]} if date_key in body else {})}
        speakers = {k: body[k] for k in ("speaker_a", "speaker_b") if k in body}
        return {**speakers, "sessions": sessions}


class RawQuestion(BaseModel):
    """A QA entry as LoCoMo writes it. Evidence is required, an empty list allowed (the question is
    then not scored): a question with no evidence key at all is a file in another form, not a question
    without evidence."""

    question: str
    # category 5 (adversarial) questions carry `adversarial_answer` instead; some answers are years as numbers
    answer: str = Field(validation_alias=AliasChoices("answer", "adversarial_answer"), coerce_numbers_to_str=True)
    category: Annotated[int, BeforeValidator(_category_number)]
    evidence: list[str]  # dia_ids as written ("D8:6; D9:17", "D:11:26"): `normalize_evidence` repairs them


class RawConversation(BaseModel):
    """One conversation of a LoCoMo file; its summaries and observations (LoCoMo's annotations) are not read."""

    sample_id: str | None = Field(default=None, coerce_numbers_to_str=True)  # "conv-26"
    conversation: RawDialogue
    qa: list[RawQuestion]


def parse_session_date(value: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" as an aware UTC datetime (the data carries no zone)."""
    text = " ".join(value.strip().split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    from dateutil import parser as date_parser

    try:
        parsed = date_parser.parse(text.replace(" on ", " "), dayfirst=True)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"unparseable LoCoMo session date {value!r}") from exc
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed.astimezone(timezone.utc)


_DIA_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SEPARATORS = re.compile(r"[;,\s]+")


def normalize_evidence(raw: Iterable[str]) -> tuple[list[str], list[str], list[str]]:
    """Split and repair evidence entries: ("D8:6; D9:17" -> D8:6, D9:17; "D:11:26" -> D11:26; "D" dropped).

    Returns (ids deduplicated in order, raw entries that were not a single well-formed id,
    fragments dropped because no id could be recovered).
    """
    ids: list[str] = []
    malformed: list[str] = []
    dropped: list[str] = []
    for entry in raw:
        entry = str(entry)
        parts = [p for p in _SEPARATORS.split(entry.strip()) if p]
        found = []
        for part in parts:
            m = _DIA_ID.match(part)
            if m:
                found.append(f"D{int(m.group(1))}:{int(m.group(2))}")
            else:
                dropped.append(part)
        if not parts:
            dropped.append(entry)
        if found != [entry]:
            malformed.append(entry)
        ids.extend(found)
    return list(dict.fromkeys(ids)), malformed, dropped


# ---- saying what is wrong: a pydantic error, in one line and LoCoMo's own names

JSON_KINDS = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
              bool: "true or false", type(None): "null"}
Place = tuple[int | str, ...]  # a pydantic error's `loc`, from the conversation down
_EXPECTED = {"model_type": "an object", "list_type": "a list", "string_type": "a string", "date_type": "a date"}
_ITEMS = {"qa": "questions", "turns": "turns", "evidence": "dia_ids"}  # what a list at that key holds
_MISSING_NOTES = {"answer": " (nor the 'adversarial_answer' of category 5)"}
RawModel = TypeVar("RawModel", bound=BaseModel)


def _kind(value: Any) -> str:
    return JSON_KINDS.get(type(value), type(value).__name__)


def _place(loc: Place, root: str = "it") -> str:
    """Where `loc` is, as a reader of the file names it: "question 3", "session_2 turn 0",
    "session_2_date_time"; `root` names the object validated itself."""
    match loc:
        case ():
            return root
        case ("conversation" | "qa" | "sample_id" as key,):
            return repr(key)
        case ("qa", int(index)):
            return f"question {index}"
        case ("conversation", "sessions", int(number)) | ("conversation", "sessions", int(number), "turns"):
            return f"session_{number}"
        case ("conversation", "sessions", int(number), "date"):
            return f"session_{number}_date_time"
        case ("conversation", "sessions", int(number), "turns", int(index)):
            return f"session_{number} turn {index}"
        case ("conversation", str(key)):
            return key
        case (*holder, int(index)):
            return f"{_place(tuple(holder), root)} {index}"
    *holder, field_name = loc
    return f"{_place(tuple(holder), root)}'s {field_name}"


def _key(loc: Place) -> str:
    """The key `loc` ends in, as the file writes it (a session's date is its `session_N_date_time`)."""
    return _place(loc) if loc[-1] == "date" else str(loc[-1])


def _in_words(errors: list[ErrorDetails], at: Place = (), root: str = "it") -> str:
    """The first of pydantic's errors as one line: where (`at` leads to the object validated) and what
    is wrong, with the keys missing beside it: "question 3 has no 'answer' (nor ...)"."""
    error = errors[0]
    loc, value, kind = at + tuple(error["loc"]), error.get("input"), error["type"]
    if kind == "missing":
        keys = [_key(at + tuple(e["loc"])) for e in errors
                if e["type"] == "missing" and e["loc"][:-1] == error["loc"][:-1]]
        notes = "".join(_MISSING_NOTES.get(k, "") for k in keys)
        return f"{_place(loc[:-1], root)} has no {', '.join(map(repr, keys))}{notes}"
    if kind in _EXPECTED:
        items = f" of {_ITEMS[loc[-1]]}" if kind == "list_type" and loc[-1] in _ITEMS else ""
        return f"{_place(loc, root)} is {_kind(value)}, not {_EXPECTED[kind]}{items}"
    if kind == "locomo_category":  # its message names its key: said at the question
        return f"{_place(loc[:-1], root)}: {error['msg']}"
    if kind == "locomo_sessions":
        return f"{_place(loc, root)} {error['msg']}"
    return f"{_place(loc, root)}: {error.get('ctx', {}).get('error', error['msg'])}"


def _validated(model: type[RawModel], raw: Any, at: Place = (), root: str = "it") -> RawModel:
    """`raw` as `model`, or a ValueError saying in one line what is wrong, and where."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(_in_words(exc.errors(include_url=False), at, root)) from None


# ---- from LoCoMo's form to the records


def _turn(raw: RawTurn) -> Turn:
    return Turn(dia_id=raw.dia_id.strip(), speaker=raw.speaker.strip(), text=raw.text,
                blip_caption=raw.blip_caption.strip() if raw.blip_caption else None)


def _sessions(raw: RawDialogue) -> list[Session]:
    return [Session(number=number, date=session.date, turns=tuple(_turn(t) for t in session.turns))
            for number, session in raw.sessions.items()]


def _question(raw: RawQuestion, index: int, sample_id: str, known: set[str], report: EvidenceReport) -> Question:
    """The question, its evidence normalised into `report` (`known`: the conversation's dia_ids)."""
    ids, malformed, dropped = normalize_evidence(raw.evidence)
    report.entries += len(raw.evidence)
    report.malformed.extend(f"{sample_id}#{index}: {e!r}" for e in malformed)
    report.dropped.extend(f"{sample_id}#{index}: {e!r}" for e in dropped)
    report.unknown.extend(f"{sample_id}#{index}: {e}" for e in ids if e not in known)
    if not ids:
        report.no_evidence += 1
    return Question(conversation_id=sample_id, index=index, question=raw.question, answer=raw.answer,
                    category=raw.category, evidence=tuple(ids), raw_evidence=tuple(raw.evidence))


def parse_turn(raw: Any, where: str = "the turn") -> Turn:
    """One turn; a ValueError naming it by `where` ("session_2 turn 0") when it is not in LoCoMo's form."""
    return _turn(_validated(RawTurn, raw, root=where))


def parse_sessions(body: Mapping[str, Any]) -> list[Session]:
    """The numbered sessions of a 'conversation' object, in order (see `RawDialogue`)."""
    return _sessions(_validated(RawDialogue, body, at=("conversation",)))


def parse_question(qa: Any, index: int, sample_id: str, known: set[str], report: EvidenceReport) -> Question:
    """A QA entry of the conversation `sample_id`; its evidence normalised into `report`."""
    return _question(_validated(RawQuestion, qa, at=("qa", index)), index, sample_id, known, report)


def parse_conversation(raw: Any, report: EvidenceReport | None = None, *, index: int = 0) -> Conversation:
    """One conversation of a LoCoMo file, the `index`-th (its id when it has no `sample_id`: each
    conversation is a user of its own); a ValueError saying what is missing, and where, when it is not
    in LoCoMo's form. It is checked whole before its evidence is counted into `report`."""
    report = report if report is not None else EvidenceReport()
    conv = _validated(RawConversation, raw)
    sample_id = conv.sample_id or f"conv-{index}"
    sessions = _sessions(conv.conversation)
    known = {t.dia_id for s in sessions for t in s.turns}
    questions = [_question(qa, i, sample_id, known, report) for i, qa in enumerate(conv.qa)]
    return Conversation(sample_id=sample_id, speaker_a=conv.conversation.speaker_a,
                        speaker_b=conv.conversation.speaker_b, sessions=tuple(sessions), questions=tuple(questions))


def load_locomo(path: str | Path, report: EvidenceReport | None = None) -> list[Conversation]:
    """Read the original LoCoMo JSON (a list of conversations, or one conversation). A file of another
    form is refused whole, before anything is ingested, with a ValueError naming the conversation (and
    question, session or turn) and what is wrong."""
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc})") from exc
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ValueError(f"{path}: not LoCoMo's form: {_kind(data)}, not a list of conversations (or one conversation)")
    conversations = []
    for i, raw in enumerate(data):
        try:
            conversations.append(parse_conversation(raw, report, index=i))
        except ValueError as exc:
            named = f" ({raw['sample_id']})" if isinstance(raw, Mapping) and raw.get("sample_id") else ""
            raise ValueError(f"{path}: conversation {i}{named} is not in LoCoMo's form: {exc}") from exc
    shared = sorted(i for i, n in Counter(c.sample_id for c in conversations).items() if n > 1)
    if shared:  # one id is one user: their memories would be searched together
        raise ValueError(f"{path}: conversations share a sample_id ({shared}): "
                         "each conversation is ingested as a user of its own, so each needs an id of its own")
    return conversations


def file_digest(path: str | Path, length: int = 16) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:length]


# --------------------------------------------------------------------------- ingestion


def session_messages(session: Session) -> list[dict[str, Any]]:
    """One message per turn: role user, name = speaker, id = dia_id, occurred_at = session time + i s."""
    return [
        {"role": "user", "name": turn.speaker, "id": turn.dia_id, "content": turn.content,
         "occurred_at": session.date + timedelta(seconds=i)}
        for i, turn in enumerate(session.turns)
    ]


@dataclass
class IngestStats:
    conversations: int = 0
    sessions: int = 0
    turns: int = 0
    failed_sessions: list[str] = field(default_factory=list)
    seconds: float = 0.0


def ingest_conversation(mx: Any, conv: Conversation, *, user_id: str | None = None,
                        stats: IngestStats | None = None,
                        on_session: Callable[[Session, IngestStats, Any], None] | None = None,
                        wait: bool = True) -> IngestStats:
    """One `add` per session, occurred_at = the session's date.

    `wait=False` queues every session (`Mirix.add(wait=False)`, processed in per-user batches) and
    then `flush()`es: a history imported at once, as a bulk import would. The offline rules store the
    same memories either way; a model is given a batch of sessions at once instead of one.
    `on_session(session, stats, result)` is called after each session's `add`, or with its input's
    final record after the flush when queued (progress reporting).
    """
    stats = stats if stats is not None else IngestStats()
    user = user_id or conv.user_id
    t0 = time.perf_counter()
    queued: list[tuple[Session, str]] = []
    for session in conv.sessions:
        result = mx.add(session_messages(session), user_id=user, occurred_at=session.date,
                        source_id=f"{conv.sample_id}/session_{session.number}", wait=wait)
        if not wait:
            queued.append((session, result.input_ids[0]))
            continue
        _count_session(conv, session, result, stats, on_session)
    if queued:
        mx.flush()
        for session, input_id in queued:
            _count_session(conv, session, mx.input_status(input_id), stats, on_session)
    stats.conversations += 1
    stats.seconds += time.perf_counter() - t0
    return stats


def _count_session(conv: Conversation, session: Session, result: Any, stats: IngestStats,
                   on_session: Callable[[Session, IngestStats, Any], None] | None) -> None:
    """Count one session's add (an `AddResult`, or a queued input's final `InputRecord`)."""
    stats.sessions += 1
    stats.turns += len(session.turns)
    error = getattr(result, "error", None)
    if error is None and getattr(result, "status", None) in ("pending", "processing", "failed"):
        error = f"left {result.status.value}"  # a queued batch that raised stays in the input log
    if error:
        stats.failed_sessions.append(f"{conv.sample_id}/session_{session.number}: {error}")
    if on_session:
        on_session(session, stats, result)


def ingest_conversations(mx: Any, convs: Sequence[Conversation],
                         progress: Callable[[Conversation, IngestStats], None] | None = None,
                         wait: bool = True) -> IngestStats:
    stats = IngestStats()
    for conv in convs:
        ingest_conversation(mx, conv, stats=stats, wait=wait)
        if progress:
            progress(conv, stats)
    return stats


# --------------------------------------------------------------------------- metrics


def words(text: str) -> int:
    """The words `text` takes of a reader's budget (`text.words.word_count`: English's `len(text.split())`)."""
    return word_count(text)


class Filled(NamedTuple):
    items: list[tuple[str, tuple[str, ...]]]  # kept (text, source_ids), in rank order
    words: int

    @property
    def source_ids(self) -> set[str]:
        return {s for _, sources in self.items for s in sources}


def fill_budget(hits: Iterable[tuple[str, Iterable[str]]], budget_words: int) -> Filled:
    """Keep hits in rank order while each fits the words left; stop at the first that does not.

    A hit that does not fit ends the context even if later (shorter) hits would fit: a reader
    given a prefix of the ranking, never a re-packed selection. Words are `words` (`text.words.word_count`).
    """
    kept: list[tuple[str, tuple[str, ...]]] = []
    used = 0
    for text, sources in hits:
        n = words(text)
        if used + n > budget_words:
            break
        kept.append((text, tuple(sources)))
        used += n
    return Filled(kept, used)


def shown_within(texts: Sequence[str], budget_words: int) -> int:
    """How many of the ranked texts (`fill_budget`'s prefix) a reader's context holds within the
    budget, each counted by the words it adds there, where a day is stated once (`by_day.stated_once`)."""
    return len(fill_budget(((t, ()) for t in stated_once(texts)), budget_words).items)


def evidence_recall(evidence_ids: Iterable[str], retrieved_source_ids: Iterable[str]) -> float:
    """Share of the (distinct) evidence ids found among the retrieved source ids; NaN without evidence."""
    evidence = set(evidence_ids)
    if not evidence:
        return math.nan
    return len(evidence & set(retrieved_source_ids)) / len(evidence)


# --------------------------------------------------------------------------- raw-turn baselines

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str, *, stopwords: frozenset[str] | None = None) -> list[str]:
    """Lowercase alphanumeric runs (punctuation splits words: "mel's" -> "mel", "s"), minus any stopwords.

    The baselines keep stopwords by default: with rank_bm25-style idf that reproduces the figures in
    DESIGN.md (BM25 0.64 at 750 words); `mirix_py.text.words.STOPWORDS` removed scores about 0.02 higher.
    """
    tokens = _TOKEN.findall(text.lower())
    if stopwords:
        tokens = [t for t in tokens if t not in stopwords]
    return tokens


class BM25:
    """Okapi BM25 over pre-tokenised documents, computed as `rank_bm25.BM25Okapi` does (k1=1.5, b=0.75).

    idf="okapi": ln((N - df + 0.5) / (df + 0.5)), and a term in more than half the documents (negative
    idf) gets `epsilon` x the mean idf instead, as rank_bm25 does. idf="lucene": ln(1 + (N - df + 0.5) /
    (df + 0.5)), never negative.
    """

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75, *,
                 idf: str = "okapi", epsilon: float = 0.25) -> None:
        if idf not in ("okapi", "lucene"):
            raise ValueError("idf must be 'okapi' or 'lucene'")
        self.k1, self.b = k1, b
        self.n = len(docs)
        self.lengths = [len(d) for d in docs]
        self.avgdl = (sum(self.lengths) / self.n) if self.n else 0.0
        self.tf = [Counter(d) for d in docs]
        df: Counter[str] = Counter()
        for d in docs:
            df.update(set(d))
        if idf == "lucene":
            self.idf = {t: math.log(1.0 + (self.n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        else:
            raw = {t: math.log(self.n - c + 0.5) - math.log(c + 0.5) for t, c in df.items()}
            floor = epsilon * (sum(raw.values()) / len(raw)) if raw else 0.0
            self.idf = {t: (v if v >= 0 else floor) for t, v in raw.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        """One score per document; a query term repeated counts once per repetition (as rank_bm25)."""
        out = [0.0] * self.n
        terms = [t for t in query if t in self.idf]
        avgdl = self.avgdl or 1.0
        for i, (tf, dl) in enumerate(zip(self.tf, self.lengths)):
            s = 0.0
            for t in terms:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * dl / avgdl))
            out[i] = s
        return out

    def rank(self, query: Sequence[str]) -> list[int]:
        """Indices of documents sharing a term with the query, best first (ties: document order)."""
        terms = set(query)
        scores = self.scores(query)
        return sorted((i for i, tf in enumerate(self.tf) if terms & tf.keys()), key=lambda i: (-scores[i], i))


def bm25_rank(query: str, documents: Sequence[str], k1: float = 1.5, b: float = 0.75, *,
              stopwords: frozenset[str] | None = None, idf: str = "okapi") -> list[int]:
    """Pure convenience: BM25 ranking of raw strings (tokenised with `tokenize`)."""
    index = BM25([tokenize(d, stopwords=stopwords) for d in documents], k1, b, idf=idf)
    return index.rank(tokenize(query, stopwords=stopwords))


def cosine_rank(query_vector: Any, doc_vectors: Any) -> list[int]:  # sequences or numpy arrays
    import numpy as np

    docs = np.asarray(doc_vectors, dtype=np.float32)
    q = np.asarray(query_vector, dtype=np.float32)
    docs = docs / np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-12)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    sims = docs @ q
    return sorted(range(len(sims)), key=lambda i: (-float(sims[i]), i))


def rrf_rank(rankings: Sequence[Sequence[int]], k: int = 60) -> list[int]:
    fused = rrf_fuse([[f"{i:08d}" for i in r] for r in rankings], k=k)
    return [int(key) for key, _ in fused]


Hits = list[tuple[str, tuple[str, ...]]]
Retriever = Callable[[Conversation, Question], Hits]


BASELINE_NAMES = {"bm25": "raw BM25", "embedding": "raw MiniLM", "rrf": "raw RRF",
                  "rrf_engine_k": f"raw RRF k={ENGINE_RRF_K}"}


class RawTurnBaselines:
    """BM25, MiniLM cosine and RRF of both over one conversation's raw turns ("Speaker: text"): RRF
    with k=60 (the usual constant, DESIGN.md's baseline) and with the engine's own k, so that the
    engine's fusion constant is not counted as the gain of its memory."""

    METHODS = ("bm25", "embedding", "rrf", "rrf_engine_k")

    def __init__(self, convs: Sequence[Conversation], embedder: Any | None = None, *, k1: float = 1.5,
                 b: float = 0.75, stopwords: frozenset[str] | None = None, idf: str = "okapi",
                 rrf_k: int = 60, depth: int | None = None) -> None:
        self.embedder = embedder
        self.stopwords = stopwords
        self.rrf_k = rrf_k
        self.depth = depth
        self._turns: dict[str, list[Turn]] = {}
        self._bm25: dict[str, BM25] = {}
        self._vectors: dict[str, Any] = {}
        self._qvectors: dict[tuple[str, int], list[float]] = {}
        for conv in convs:
            turns = conv.turns
            self._turns[conv.sample_id] = turns
            self._bm25[conv.sample_id] = BM25([tokenize(t.document, stopwords=stopwords) for t in turns], k1, b,
                                              idf=idf)
        if embedder is not None:
            for conv in convs:
                self._vectors[conv.sample_id] = embedder.embed([t.document for t in self._turns[conv.sample_id]])
            questions = [q for conv in convs for q in conv.questions]
            vectors = embedder.embed([q.question for q in questions])
            self._qvectors = {(q.conversation_id, q.index): v for q, v in zip(questions, vectors)}

    def ranking(self, method: str, conv: Conversation, question: Question) -> list[int]:
        return [i for i, _ in self.scored_ranking(method, conv, question)]

    def scored_ranking(self, method: str, conv: Conversation, question: Question) -> list[tuple[int, float]]:
        """(turn index, score) best first: BM25 score, cosine similarity, or RRF score."""
        if method == "bm25":
            query = tokenize(question.question, stopwords=self.stopwords)
            index = self._bm25[conv.sample_id]
            scores = index.scores(query)
            ranked = [(i, scores[i]) for i in index.rank(query)]
        elif method == "embedding":
            import numpy as np

            docs = np.asarray(self._vectors[conv.sample_id], dtype=np.float32)
            q = np.asarray(self._qvectors[(conv.sample_id, question.index)], dtype=np.float32)
            sims = (docs / np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-12)) @ (
                q / max(float(np.linalg.norm(q)), 1e-12))
            ranked = [(i, float(sims[i])) for i in cosine_rank(q, docs)]
        elif method in ("rrf", "rrf_engine_k"):
            fused = rrf_fuse([[f"{i:08d}" for i in self.ranking(m, conv, question)] for m in ("bm25", "embedding")],
                             k=self.rrf_k if method == "rrf" else ENGINE_RRF_K)
            ranked = [(int(key), score) for key, score in fused]
        else:
            raise ValueError(f"unknown baseline {method!r}: use {self.METHODS}")
        return ranked[: self.depth] if self.depth else ranked

    def turns(self, conv: Conversation) -> list[Turn]:
        return self._turns[conv.sample_id]

    def retriever(self, method: str) -> Retriever:
        if method != "bm25" and self.embedder is None:
            raise ValueError(f"baseline {method!r} needs an embedder")

        def retrieve(conv: Conversation, question: Question) -> Hits:
            turns = self._turns[conv.sample_id]
            return [(turns[i].document, (turns[i].dia_id,)) for i in self.ranking(method, conv, question)]

        return retrieve


def engine_retriever(mx: Any, method: str = "hybrid", limit: int = 60, **search_kwargs: Any) -> Retriever:
    """Search the conversation's user with the question; hits as (text, source_ids)."""

    def retrieve(conv: Conversation, question: Question) -> Hits:
        hits = mx.search(question.question, user_id=conv.user_id, limit=limit, method=method, **search_kwargs)
        return [(h.text, tuple(h.memory.source_ids)) for h in hits]

    return retrieve


# --------------------------------------------------------------------------- evaluation


@dataclass
class QuestionResult:
    conversation_id: str
    index: int
    category: int
    recall: float
    words: int
    hits_kept: int
    seconds: float


@dataclass
class RecallReport:
    name: str
    budget_words: int
    results: list[QuestionResult]

    def _mean(self, rows: list[QuestionResult], attr: str) -> float:
        return sum(getattr(r, attr) for r in rows) / len(rows) if rows else math.nan

    def by_category(self) -> dict[int, dict[str, float]]:
        groups: dict[int, list[QuestionResult]] = defaultdict(list)
        for r in self.results:
            groups[r.category].append(r)
        return {c: {"n": len(rows), "recall": self._mean(rows, "recall"), "words": self._mean(rows, "words")}
                for c, rows in sorted(groups.items())}

    def overall(self, categories: Sequence[int] = SCORED_CATEGORIES) -> dict[str, float]:
        rows = [r for r in self.results if r.category in categories]
        return {"n": len(rows), "recall": self._mean(rows, "recall"), "words": self._mean(rows, "words"),
                "mean_ms": 1000 * self._mean(rows, "seconds")}

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "budget_words": self.budget_words, "overall_1_4": self.overall(),
                "by_category": {f"{c} {CATEGORY_NAMES.get(c, '?')}": v for c, v in self.by_category().items()}}


@dataclass
class Retrieved:
    """One question's ranked hits, kept so several budgets can be scored from one retrieval."""

    conversation_id: str
    index: int
    category: int
    evidence: tuple[str, ...]
    hits: Hits
    seconds: float


def collect(convs: Sequence[Conversation], retrieve: Retriever, *,
            categories: Sequence[int] = (1, 2, 3, 4, 5)) -> list[Retrieved]:
    """Run `retrieve` for every question with evidence in `categories` (questions without evidence are skipped)."""
    out = []
    for conv in convs:
        for q in conv.questions:
            if q.category not in categories or not q.evidence:
                continue
            t0 = time.perf_counter()
            hits = retrieve(conv, q)
            out.append(Retrieved(conv.sample_id, q.index, q.category, q.evidence, hits, time.perf_counter() - t0))
    return out


def score(retrieved: Sequence[Retrieved], budget_words: int, name: str = "") -> RecallReport:
    results = []
    for r in retrieved:
        filled = fill_budget(r.hits, budget_words)
        results.append(QuestionResult(r.conversation_id, r.index, r.category,
                                      evidence_recall(r.evidence, filled.source_ids), filled.words,
                                      len(filled.items), r.seconds))
    return RecallReport(name, budget_words, results)


def evaluate(convs: Sequence[Conversation], retrieve: Retriever, *, budget_words: int = 750,
             categories: Sequence[int] = (1, 2, 3, 4, 5), name: str = "") -> RecallReport:
    """Evidence recall inside the budget for every question with evidence in `categories`."""
    return score(collect(convs, retrieve, categories=categories), budget_words, name)


def full_context_words(conv: Conversation) -> int:
    return sum(words(t.document) for t in conv.turns)
