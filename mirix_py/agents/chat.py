"""The chat flow (MIRIX: topic generation → coarse retrieval → targeted retrieval → answer).

With a model: one call for topics (and a time range when the question asks for one), coarse
retrieval from all six memory types into the chat agent's prompt (core always; high-sensitivity
vault items never), then the chat agent answers, calling `search_in_memory` when it needs more,
and cites memory ids. Two sequential model rounds when no targeted search is needed.
Offline: keyword topics, the same retrieval, and the best memories with their ids as the answer.
"""

from __future__ import annotations

import asyncio
import html
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Callable, Collection, Sequence

from mirix_py.agents.definitions import AgentDefinition
from mirix_py.agents.offline.rules import extract_keywords, parse_time_range
from mirix_py.agents.prompt_refs import PromptRefs
from mirix_py.agents.sources_shown import MemoriesShown, as_keys, as_sources, without_model
from mirix_py.text.by_day import day_lines
from mirix_py.text.dates import day_words
from mirix_py.text.passages import FOCUS_WORDS, focus, query_stems, stem, text_stems
from mirix_py.text.storable import printable
from mirix_py.store.questions import said_ids
from mirix_py.store.restatements import restatements
from mirix_py.store.summaries import holds_turn
from mirix_py.boundary.timezones import display_zone, shown_text
from mirix_py.text.words import STOPWORDS
from mirix_py.tools.params import MemoryTypeName, SearchMethodName
from mirix_py.errors import InvalidInput
from mirix_py.agents.model_times import model_when
from mirix_py.llm.bounds import CallBounds, ModelCallFailed, provider_args
from mirix_py.llm.meter import Meter, agent_heading
from mirix_py.llm.toolcalls import ToolCallParseError, loads_lenient
from mirix_py.records import (
    CoreMemory, KnowledgeVaultMemory, MemoryType, SearchHit, Sensitivity, newest_facts_first, reader_text,
)
from mirix_py.store.memories import MemoryStore
from mirix_py.store.search import Searcher

if TYPE_CHECKING:  # autogen is imported where a model is used, so offline chat needs none of it
    from autogen_core.models import ChatCompletionClient
    from autogen_core.tools import FunctionTool

    from mirix_py.llm.metering import MeteredClient

MEMORY_ID = re.compile(r"\b(?:core|epi|sem|proc|res|kv)_[0-9a-f]{32}\b")
# Coarse retrieval: one ranking of every memory type, as `Mirix.search` ranks them (its default limit),
# then the first match of each type that ranking left out, so the prompt reads all six kinds of memory
# (core is in it whole). Searched type by type instead (6 episodes, 5 facts, 2 of each other type, merged
# by scores that came from different searches), a reader was handed fewer hits holding less of what was
# asked about (benchmarks/docs/locomo_eval.md, "What a reader's prompt holds"; `reader_contexts.py`).
COARSE_HITS = 10
COARSE_TYPES = (MemoryType.episodic, MemoryType.semantic, MemoryType.procedural, MemoryType.resource,
                MemoryType.knowledge_vault)
OFFLINE_ANSWER_ITEMS = 5
ANSWER_SEARCH_S = 5  # seconds the answer step allows its targeted searches besides its model calls

TOPIC_PROMPT = """# agent: topic_extractor
Extract search topics from the user's latest question, using the recent conversation for context.
Reply with only JSON: {"topics": ["keyword or entity", ...], "start": ISO-8601 or null, "end": ISO-8601 or null}.
Give 1-6 short topics (names, things, activities). Set start/end only when the question is about a
time ("last week", "in May 2023"); the current time is {now}."""


@dataclass
class Topics:
    keywords: list[str]
    start: datetime | None = None
    end: datetime | None = None
    # What coarse retrieval searches with. Offline, the message as asked: the search picks its own terms,
    # and a question's vector lies nearer its answer than its keywords' do (benchmarks/docs/locomo_hops.md,
    # twelfth round). None: the keywords (a model's topics, which may name what earlier turns said).
    query: str | None = None


TOPIC_CHARS = 200  # a topic is a few words: a runaway one is cut, not searched and echoed whole


def parse_topics(text: str, fallback: str, now: datetime) -> Topics:
    """Topics from the model's JSON, each as plain text (`storable.printable`: a control character, a
    NUL or a lone surrogate in a model's topic is no search query), cut to TOPIC_CHARS, blank ones and
    ones that are not strings dropped; keyword extraction when none is left or the reply is unusable."""
    try:
        data = loads_lenient(text if "{" not in text else text[text.index("{"):])
        if not isinstance(data, dict):
            raise ToolCallParseError("not an object")
        topics = data.get("topics", [])
        if not isinstance(topics, list):
            raise ToolCallParseError("topics is not a list")
        keywords = [t[:TOPIC_CHARS] for t in (printable(topic).strip() for topic in topics if isinstance(topic, str))
                    if t][:8]
        if keywords:
            return Topics(keywords, *_topic_range(data, now))
    except (ToolCallParseError, TypeError, ValueError):
        pass
    return offline_topics(fallback, now)


def _topic_range(data: dict[str, Any], now: datetime) -> tuple[datetime | None, datetime | None]:
    """The reply's start and end as the model meant them (`model_when`, in the zone of `now`); a
    range that reads as no time, or runs backwards, is dropped, and the topics are kept."""
    assert now.tzinfo is not None
    try:
        start = model_when(data.get("start"), "start", now.tzinfo)
        end = model_when(data.get("end"), "end", now.tzinfo, end=True)
    except InvalidInput:
        return None, None
    if start is not None and end is not None and start >= end:
        return None, None
    return start, end


HISTORY_TURN_CHARS = 2000  # a history turn as a prompt shows it: a long paste must not crowd out the memories


def recent_turns(history: Sequence[dict[str, Any]], count: int) -> str:
    """The last `count` turns of a chat's history as a prompt shows them, one a line, each cut to its
    first HISTORY_TURN_CHARS characters."""
    lines = []
    for turn in history[-count:]:
        content = str(turn.get("content", ""))
        if len(content) > HISTORY_TURN_CHARS:
            content = content[:HISTORY_TURN_CHARS].rstrip() + " …"
        lines.append(f"{turn.get('role', 'user')}: {content}")
    return "\n".join(lines)


FOLLOW_UP_KEYWORDS = 2  # a message with fewer content words than this leans on the turn before it


def offline_topics(message: str, now: datetime, history: Sequence[dict[str, Any]] = ()) -> Topics:
    """The message's keywords and the time range it names. A follow-up too short to search on its own
    ("and when?", "what about Anna?") is searched with the user's previous turn before it."""
    window = parse_time_range(message, now)
    start, end = window or (None, None)
    keywords, query = extract_keywords(message), message
    if len(keywords) < FOLLOW_UP_KEYWORDS:
        earlier = next((h["content"] for h in reversed(history)
                        if h.get("role", "user") == "user" and h.get("content", "").strip()), None)
        if earlier:
            query = f"{earlier.strip()} {message}"
            keywords = extract_keywords(query)
    return Topics(keywords, start, end, query=query)


_NAME = re.compile(r"(?<![\w'’])[A-Z][\w'’.-]*")


def question_terms(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """(content-word stems of the question, the stems of the names it asks about: capitalised words
    past the first, "Tom" in "What does Tom do?")."""
    terms = query_stems(question) if question.strip() else frozenset()
    names = set()
    for m in _NAME.finditer(question):
        word = m.group().rstrip(".'’").lower()
        if m.start() > 0 and word not in STOPWORDS:
            names.add(stem(re.sub(r"['’]s$", "", word)))
    return terms, frozenset(names)


RELATED = 0.3  # cosine of MiniLM vectors: "what pet do I have?" / "I adopted a cat" 0.38; unrelated pairs < 0.15


def _relevance(question: str, text: str, similarity: float | None, *, by_words: bool = False) -> float | None:
    """How well `text` answers to the question: the share of its words held plus the vectors'
    cosine. None when it misses a name the question asks about, or shares neither a word nor
    (with vectors) a meaning ("cat" for "pet"). `by_words`: only a word besides the names it asks
    about makes a match (for what restates others, below)."""
    terms, names = question_terms(question)
    words = text_stems(text)
    if names and not names & words:
        return None
    shared = len(terms & words)
    if by_words and not (terms - names) & words:
        return None
    related = similarity is not None and similarity >= RELATED
    if not shared and not related:
        return None
    return shared / max(len(terms), 1) + (similarity or 0.0)


def matching_hits(question: str, hits: Sequence[SearchHit], *, timed: bool = False,
                  similarities: Sequence[float] | None = None, tags: Collection[str] = ()) -> list[SearchHit]:
    """The hits that answer to the question, in the order given (the search's ranking, which places
    the evidence higher than a count of shared words and a cosine would: `benchmarks/reader_contexts.py`):
    a memory must hold a word of the question or (given `similarities`, the cosine of each hit's vector
    with the question's) be close to it in meaning, and hold a name the question asks about, when it
    asks about one; ranking within a memory type is not a match by itself. What restates others (`store.restatements`: a summary of
    several things said, a chat exchange) matches by a word besides those names only: it names the
    people of what it sums up and is close in meaning to many questions about them, while the turns
    it restates match by their own words. Inside a time range the question asked for ("what
    happened last week?"), a question with no other words keeps the hits of that range. `tags`: the
    caller's ids of the hits' inputs (`summaries.sums_up`)."""
    scored = []
    for i, h in enumerate(hits):
        value = _relevance(question, h.text, similarities[i] if similarities is not None else None,
                           by_words=bool(restatements(h.memory.source_ids, tags)))
        if value is not None:
            scored.append((i, h))
    if not scored and timed:
        terms, _ = question_terms(question)
        if not terms - TIME_WORDS:
            return list(hits)
    # what restates others comes after what it restates, as in search (`store.restatements`): a question
    # asked in chat matches itself best but answers nothing, and a model's summary or fact is close in
    # meaning to many questions while the turns it sums up hold the words that were said
    scored.sort(key=lambda x: (restatements(x[1].memory.source_ids, tags), x[0]))
    return [h for _, h in scored]


def said_first(question: str, hits: Sequence[SearchHit], tags: Collection[str] = ()) -> list[SearchHit]:
    """`hits` without what a reader should not be handed twice: a memory that restates others
    (`store.restatements`: a model's summary or fact citing several turns) is left out when a turn it
    cites is among the hits, whose words then say it first-hand, or when it holds no word of the
    question besides the names it asks about; any other memory but a turn's own episode (a fact, a
    summary, a procedure drawn from what was said) is left out when every turn it cites is among the
    hits as its own episode (`summaries.holds_turn`), which says all of it in the speaker's words. A
    weak model repeats what its prompt holds, and its own words beside the turns they come from are
    where its mistakes enter an answer (benchmarks/docs/local_model.md); a memory whose turns are not
    there still adds what they would. `tags`: the caller's ids of the hits' inputs."""
    restating = [restatements(h.memory.source_ids, tags) > 0 for h in hits]
    present = {i for h, r in zip(hits, restating) if not r for i in (h.memory.id, *said_ids(h.memory.source_ids, tags))}
    turns = {i for h in hits if holds_turn(h.memory) for i in (h.memory.id, *said_ids(h.memory.source_ids, tags))}

    def kept(hit: SearchHit, restates: bool) -> bool:
        cited = said_ids(hit.memory.source_ids, tags)
        if restates:
            return not present.intersection(cited) and _relevance(question, hit.text, None, by_words=True) is not None
        return holds_turn(hit.memory) or not cited or not turns.issuperset(cited)

    return [h for h, r in zip(hits, restating) if kept(h, r)]


def matching_lines(question: str, lines: Sequence[str], similarities: Sequence[float] | None = None) -> list[str]:
    """Lines of a core block that answer to the question, by the same rule as `matching_hits`."""
    scored = []
    for i, line in enumerate(lines):
        if line.strip():
            value = _relevance(question, line, similarities[i] if similarities is not None else None)
            if value is not None:
                scored.append((value, i, line))
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [ln for _, _, ln in scored]


def cosines(embed: Callable[[Sequence[str]], Sequence[Sequence[float]]] | None, question: str, texts: Sequence[str],
            known: Sequence[Sequence[float] | None] = ()) -> list[float] | None:
    """Cosine of each text's vector with the question's; None without an embedder (`embed`: an
    embedder's `embed`) or when it fails. `known[i]`, when given, is text i's vector already (the
    index's), so only the rest are embedded."""
    if embed is None or not texts:
        return None
    import numpy as np

    given = list(known) + [None] * (len(texts) - len(known))
    missing = [t for t, v in zip(texts, given) if v is None]
    try:
        embedded = iter(embed([question, *missing]))
    except Exception:  # a remote embedder down: words alone decide
        return None
    q = next(embedded)
    vectors = np.asarray([q, *(v if v is not None else next(embedded) for v in given)], dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    return [float(c) for c in (vectors[1:] @ vectors[0]) / (norms[1:] * norms[0])]


def indexed_vectors(store: MemoryStore, hits: Sequence[SearchHit]) -> dict[str, list[float]]:
    """The vector index's vectors of the hits whose memory is as stored (so the vector is of its
    `embedding_text`), by id: embedding them again would give the same. Not a vault entry's: the
    hit's masked value is not what was embedded."""
    if store.vectors is None or not hits:
        return {}
    user_id = hits[0].memory.user_id
    candidates = [h.memory for h in hits if not isinstance(h.memory, KnowledgeVaultMemory)]
    records = store.get_many([m.id for m in candidates], user_id=user_id)
    same = [m.id for m in candidates
            if (r := records.get(m.id)) is not None and r.embedding_text() == m.embedding_text()]
    return store.vectors.get(user_id, same) if same else {}


TIME_WORDS = frozenset(stem(w) for w in """
    happened happen today yesterday tomorrow tonight week weeks month months year years day days ago last
    past recent recently earlier lately morning afternoon evening night weekend monday tuesday wednesday
    thursday friday saturday sunday january february march april may june july august september october
    november december since before after""".split())


def prompt_text(hit: SearchHit, store: MemoryStore, query: str | None = None,
                max_words: int = FOCUS_WORDS) -> str | None:
    """A memory's text as a prompt carries it: a low/medium vault entry with its value; None for a
    high-sensitivity secret, which must never enter a prompt. With a `query`, a memory longer than
    `max_words` is cut to its first line and the lines about the query (`text.passages.focus`)."""
    memory = hit.memory
    if isinstance(memory, KnowledgeVaultMemory):
        if memory.sensitivity is Sensitivity.high:
            return None
        revealed = store.get(memory.id, user_id=memory.user_id, reveal=True)
        assert isinstance(revealed, KnowledgeVaultMemory)  # the same id, read back with its value
        return f"{hit.text}: {revealed.secret_value}"
    return reader_text(hit, hit.text if query is None else focus(hit.text, query, max_words))


def prompt_lines(hits: Sequence[SearchHit], store: MemoryStore, query: str | None = None,
                 refs: PromptRefs | None = None) -> list[str]:
    """Memories as the chat agent sees them, each with what to cite it by (its reference in the turn's
    `refs`, else its id), dated ones under their day (`text.by_day`); what must never enter a prompt left out."""
    shown = [(hit, text) for hit in hits if (text := prompt_text(hit, store, query)) is not None]
    return day_lines([text for _, text in shown],
                     [f"[{refs.ref(hit.memory.id) if refs else hit.memory.id}] " for hit, _ in shown])


@dataclass
class Retrieval:
    core: dict[str, CoreMemory]
    user_id: str  # whose memories these are (the offline answer embeds with that user's kept vectors)
    hits: list[SearchHit] = field(default_factory=list)
    question: str | None = None  # what long memories are cut around in the prompt
    timed: bool = False  # the hits were searched inside a time range the question asked for
    tags: frozenset[str] = frozenset()  # the caller's ids of the hits' inputs (`summaries.sums_up`)

    @property
    def ids(self) -> list[str]:
        return [h.memory.id for h in self.hits]


_CALL_AS_TEXT = re.compile(r"^\s*(functions\.\w+\s*:|\{\s*\"(name|tool_calls|function)\"|<tool_call>)")


_CHARACTER_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def decoded_references(answer: str, shown: str) -> str:
    """`answer` with the HTML character references it did not copy from what the model was shown
    decoded ("I&#39;m" -> "I'm"): a local server writes them where the prompt holds the character, and a
    reader gets the text, not markup. A reference the prompt itself held is kept as written."""
    def decode(match: re.Match[str]) -> str:
        reference = match.group(0)
        return reference if reference in shown else html.unescape(reference)

    return _CHARACTER_REFERENCE.sub(decode, answer) if "&" in answer else answer


def unusable_answer(answer: str | None) -> str | None:
    """Why a model's answer cannot be shown as one, or None when it can."""
    text = (answer or "").strip()
    if not MEMORY_ID.sub("", text).strip(" []().,;:-\n"):
        return "the model's answer was empty"
    if _CALL_AS_TEXT.match(text):
        return "the model answered with a tool call written as text"
    return None


def search_tool(search_in_memory: Any) -> "FunctionTool":
    from autogen_core.tools import FunctionTool

    return FunctionTool(search_in_memory, name="search_in_memory",
                        description="Targeted search in one memory type; returns matching memories with their ids.")


def search_tool_schema() -> dict[str, Any]:
    """The schema of the chat agent's `search_in_memory`, as a model sees it."""
    # no flow behind it: only the function's signature is read, it is never called
    return dict(search_tool(ChatFlow._search_fn(None, "schema", [])).schema)  # type: ignore[arg-type]


def _query(message: str, topics: Topics) -> str:
    """What coarse retrieval searches: the topics' query, else their keywords, else the message."""
    return topics.query or " ".join(topics.keywords) or message


class ChatFlow:
    def __init__(self, store: MemoryStore, searcher: Searcher, client: ChatCompletionClient | None,
                 definition: AgentDefinition | None, bounds: CallBounds | None = None,
                 zone: tzinfo | None = None, context: int = 0, memories_shown: MemoriesShown = "keys",
                 model_actors: Collection[str] = (), question_zone: tzinfo | None = None) -> None:
        """`context`: the turns around the first N matches each retrieval adds (`Searcher.search`); the
        engine passes its `search_context`, the default of every path that builds a reader's context.
        `memories_shown`: whether a memory a model wrote (its actor one of `model_actors`) reaches a
        reader as the turns it cites (`sources_shown`: added, or in the room of the hits besides the
        model's with "keys"), not at all ("none") or in its own words. `question_zone`: the zone a
        question's "yesterday" and "today" are reckoned in (MIRIX_TIMEZONE's; None: UTC, never the
        machine's, so the same question finds the same memories wherever the engine runs)."""
        self.zone = zone or display_zone()  # the offline answer shows times in the user's zone
        self.question_zone = question_zone or timezone.utc
        self.context = context
        self.memories_shown = memories_shown
        self.model_actors = frozenset(model_actors)
        self.store = store
        self.searcher = searcher
        self.client = client
        self.definition = definition
        self.bounds = bounds or CallBounds()

    def _metered(self, meter: Meter, agent: str, model: dict[str, Any] | None = None) -> MeteredClient:
        """The client for one chat step, every call bounded (completion tokens, and its time here as
        well as at the server: a client that takes no timeout argument would otherwise wait forever)."""
        from mirix_py.llm.metering import MeteredClient

        assert self.client is not None
        bounds = self.bounds.for_agent(model or {})
        return MeteredClient(self.client, meter, agent, extra_args=provider_args(self.client, bounds, None),
                             timeout_s=bounds.timeout_s)

    def now(self) -> datetime:
        """Now on the user's clock (`question_zone`): what a question's "yesterday" is reckoned from."""
        return datetime.now(self.question_zone)

    async def topics(self, message: str, history: Sequence[dict[str, Any]], meter: Meter) -> Topics:
        now = self.now()
        if self.client is None:
            return offline_topics(message, now, history)
        from autogen_core.models import SystemMessage, UserMessage

        recent = recent_turns(history, 4)
        metered = self._metered(meter, "topic_extractor", {"max_tokens": 128, "temperature": 0})
        result = await metered.create([
            SystemMessage(content=TOPIC_PROMPT.replace("{now}", now.isoformat(timespec="minutes"))),
            UserMessage(content=f"{recent}\nuser: {message}".strip(), source="user"),
        ])
        text = result.content if isinstance(result.content, str) else ""
        return parse_topics(text, message, now)

    def retrieve(self, user_id: str, message: str, topics: Topics, core: dict[str, CoreMemory],
                 limit: int = COARSE_HITS) -> Retrieval:
        """Coarse retrieval: the first `limit` matches of every memory type in one ranking, then the
        first match of each type that ranking left out, each with its context turns."""
        ranked = self.ranking(user_id, message, topics, limit)
        return self.retrieval(user_id, message, topics, core, ranked + self.floors(user_id, message, topics, ranked))

    def ranking(self, user_id: str, message: str, topics: Topics, limit: int = COARSE_HITS) -> list[SearchHit]:
        """The first `limit` matches of every memory type but core, in one ranking, with their context turns."""
        return self._coarse(user_id, _query(message, topics), topics, limit, None)

    def floors(self, user_id: str, message: str, topics: Topics, ranked: list[SearchHit]) -> list[SearchHit]:
        """The first match of each memory type `ranked` left out: every type gets a say."""
        held = {h.memory.memory_type for h in ranked if h.context_for is None}
        query = _query(message, topics)
        return [hit for memory_type in COARSE_TYPES if memory_type not in held
                for hit in self._coarse(user_id, query, topics, 1, memory_type)]

    def retrieval(self, user_id: str, message: str, topics: Topics, core: dict[str, CoreMemory],
                  hits: list[SearchHit]) -> Retrieval:
        """`hits` as a reader gets them (what restates a turn shown after it, a model's memories as
        `memories_shown` says), with the core blocks."""
        tags = self.store.input_tags.cited((h.memory.source_ids for h in hits), user_id=user_id)
        question = topics.query or message  # a short follow-up asks with the turn before it (`offline_topics`)
        return Retrieval(core=core, user_id=user_id,
                         hits=self._shown(user_id, said_first(question, hits, tags), tags),
                         question=question, timed=bool(topics.start or topics.end), tags=tags)

    def _coarse(self, user_id: str, query: str, topics: Topics, limit: int,
                memory_type: MemoryType | None) -> list[SearchHit]:
        """The first `limit` matches (of one memory type, or of all), with their context turns, inside the
        time range the topics name, or anywhere when nothing is there: a wrong guess at the time must not
        blind the agent."""
        types = [memory_type] if memory_type else list(COARSE_TYPES)  # core is in the prompt whole
        found = self.searcher.search(query, user_id=user_id, limit=limit, memory_types=types,
                                     start=topics.start, end=topics.end, context=self.context)
        if not found and (topics.start or topics.end):
            found = self.searcher.search(query, user_id=user_id, limit=limit, memory_types=types, context=self.context)
        return found

    def _shown(self, user_id: str, hits: list[SearchHit], tags: Collection[str]) -> list[SearchHit]:
        """`hits` as a reader gets them: a model's memories as `memories_shown` says (`sources_shown`)."""
        if self.memories_shown == "own_words" or not self.model_actors:
            return hits
        shown = {"keys": as_keys, "none": without_model}.get(self.memories_shown, as_sources)
        return shown(hits, self.store, user_id, self.model_actors, tags)

    def _embed_kept(self, user_id: str) -> Callable[[Sequence[str]], list[list[float]]] | None:
        """What embeds the texts the offline answer weighs: the searcher's, which keeps them for `user_id`
        (the question it just embedded, the core lines of the user's last calls); None without an embedder."""
        cached = self.searcher.embedder
        return None if cached is None else partial(cached.embed_kept, user_id=user_id)

    def offline_answer(self, retrieval: Retrieval, *, reason: str = "Offline mode (no LLM configured)"
                       ) -> tuple[str, list[str]]:
        """The memories that match the question (`matching_hits`, in the search's order), then the
        core lines that do (`matching_lines`): a core line restates what was said, and, as in search,
        what restates follows the turns; says so when nothing matches."""
        lines: list[str] = []
        cited: list[str] = []
        question = retrieval.question or ""
        core_lines = [(block, line) for block in retrieval.core.values() for line in block.value.splitlines()
                      if line.strip()]
        # vectors of what the memories embed as (an episode without its date, as the index has it)
        texts = [line for _, line in core_lines] + [h.memory.embedding_text() for h in retrieval.hits]
        stored = indexed_vectors(self.store, retrieval.hits) if question.strip() else {}
        known = [None] * len(core_lines) + [stored.get(h.memory.id) for h in retrieval.hits]
        similar = cosines(self._embed_kept(retrieval.user_id), question, texts, known) if question.strip() else None
        core_similar = similar[:len(core_lines)] if similar is not None else None
        hit_similar = similar[len(core_lines):] if similar is not None else None
        for hit in matching_hits(question, retrieval.hits, timed=retrieval.timed, similarities=hit_similar,
                                 tags=retrieval.tags):
            vault = isinstance(hit.memory, KnowledgeVaultMemory)
            text = f"{hit.text}" if vault else prompt_text(hit, self.store, retrieval.question)
            if text is not None and len(lines) < OFFLINE_ANSWER_ITEMS:
                lines.append(f"- [{hit.memory.id}] {shown_text(text, hit.memory.occurred_at, self.zone)}")
                cited.append(hit.memory.id)
        owners = {line: block for block, line in core_lines}
        for line in matching_lines(question, [line for _, line in core_lines], core_similar):
            block = owners[line]
            if len(lines) < OFFLINE_ANSWER_ITEMS:
                lines.append(f"- [{block.id}] {_with_day(block, line)}")
                if block.id not in cited:
                    cited.append(block.id)
        if not lines:
            return f"{reason}: I found no memories about that.", []
        return (f"{reason}: these memories match the question:\n" + "\n".join(lines)), cited

    def _search_fn(self, user_id: str, searched: list[str], shown: Sequence[SearchHit] = (),
                   refs: PromptRefs | None = None) -> Any:
        """The chat agent's targeted search, bound to one user; found ids are added to `searched`. What
        restates turns already `shown` in the prompt or found beside it is left out, as in `retrieve`.
        Found memories are cited by their references in the turn's `refs` when given."""
        def search_in_memory(
            memory_type: Annotated[MemoryTypeName, "Which memory to search."],
            query: Annotated[str, "A focused query: names, things, words the answer would hold."],
            method: Annotated[SearchMethodName, "hybrid by default; bm25 for exact names and numbers; embedding "
                                                "for paraphrases; string for an exact substring."] = "hybrid",
            start: Annotated[str | None, "Only memories from this time on: an ISO 8601 date (2024-05-01) or "
                                         "date-time; one without a zone is the user's local time."] = None,
            end: Annotated[str | None, "Only memories up to this time: an ISO 8601 date (2024-05-01, that day "
                                       "included) or date-time; one without a zone is the user's local time."] = None,
        ) -> str:
            """Targeted search in one memory type; returns matching memories with their ids."""
            since = model_when(start, "start", self.question_zone)
            until = model_when(end, "end", self.question_zone, end=True)
            hits = self.searcher.search(query, user_id=user_id, limit=8, memory_types=[memory_type],
                                        start=since, end=until, method=method, context=self.context)
            together = [*shown, *hits]
            tags = self.store.input_tags.cited((h.memory.source_ids for h in together), user_id=user_id)
            kept = {id(h) for h in said_first(query, together, tags)}
            already = {h.memory.id for h in shown}
            hits = [h for h in self._shown(user_id, [h for h in hits if id(h) in kept], tags)
                    if h.memory.id not in already]
            lines = prompt_lines(hits, self.store, query, refs)
            searched.extend(h.memory.id for h in hits)
            return "\n".join(lines) or "(no matching memories)"

        return search_in_memory

    async def answer(self, user_id: str, message: str, history: Sequence[dict[str, Any]], retrieval: Retrieval,
                     meter: Meter) -> tuple[str, list[str]]:
        from autogen_agentchat.agents import AssistantAgent
        from autogen_core import CancellationToken

        assert self.client is not None and self.definition is not None
        definition = self.definition  # for `run` below (a closure sees no narrowing of the attribute)
        searched: list[str] = []
        refs = PromptRefs()  # the answerer cites "m1", "m2", …; the reader gets the ids

        search_in_memory = self._search_fn(user_id, searched, retrieval.hits, refs)

        core_text = "\n".join(f"<{label}>\n" + "\n".join(block.dated_lines()) + f"\n</{label}>"
                              for label, block in retrieval.core.items())  # newest first, dated
        memory_lines = prompt_lines(newest_facts_first(retrieval.hits), self.store, retrieval.question, refs)
        system = (f"{agent_heading(self.definition.name)}\n{self.definition.system_prompt}\n\n"
                  f"Core memory:\n{core_text}\n\nRetrieved memories:\n" + ("\n".join(memory_lines) or "(none)"))
        function_calling = bool(self.client.model_info.get("function_calling", False))
        recent = recent_turns(history, 6)
        task = f"{recent}\nuser: {message}".strip() if recent else message
        bounds = self.bounds.for_agent(self.definition.model)

        async def run(with_tools: bool) -> str:
            client = self._metered(meter, "chat_agent", definition.model)
            agent = AssistantAgent(name=definition.name,
                                   model_client=client,
                                   tools=[search_tool(search_in_memory)] if with_tools else None,
                                   system_message=system, reflect_on_tool_use=True if with_tools else None,
                                   max_tool_iterations=2)
            # a guard over the whole step: its model calls are bounded one by one (`_metered`), and there are
            # at most three (answer, search, answer, as `max_tool_iterations` allows) with searches between
            waited = 3 * bounds.timeout_s + ANSWER_SEARCH_S
            try:
                result = await asyncio.wait_for(agent.run(task=task, cancellation_token=CancellationToken()),
                                                timeout=waited)
            except asyncio.TimeoutError:
                raise ModelCallFailed(f"the answer timed out after {waited:g} s (three model calls of "
                                      f"{bounds.timeout_s:g} s and {ANSWER_SEARCH_S:g} s for its searches)") from None
            if client.last_finish_reason == "length":  # a cut answer is no answer (and is not remembered)
                raise ModelCallFailed(f"the answer was cut at its bound of {bounds.max_tokens} tokens")
            # a text message's (or tool-call summary's) content; any other final message as its text
            return result.messages[-1].to_text()

        answer = await run(function_calling)
        if function_calling and _CALL_AS_TEXT.match(answer or ""):
            # a server whose `auto` grammar stops after "functions.NAME:" (llama-cpp-python): the
            # retrieved memories are in the prompt, so ask once more without tools, for prose
            answer = await run(False)
        answer = refs.decoded(decoded_references(answer, f"{system}\n{task}"))
        allowed = set(retrieval.ids) | set(searched) | {b.id for b in retrieval.core.values() if b.id}
        cited = [i for i in dict.fromkeys(MEMORY_ID.findall(answer)) if i in allowed]
        return answer, cited


def _with_day(block: CoreMemory, line: str) -> str:
    """A core line with the day it was said, as `/context` shows it: an undated "lives in Paris" beside a
    dated turn reads as current whatever its age."""
    said = block.said_local()
    return f"{line} (said {day_words(said[line].date())})" if line in said else line
