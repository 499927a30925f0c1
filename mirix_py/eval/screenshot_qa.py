"""Screenshot QA: questions about a seeded synthetic desktop session, scored against a raw-OCR baseline.

The session comes from `mirix_py.ingest.synth` (seven apps, facts planted and changed over the
days). From its manifest, questions are generated in six families, each with a gold answer, the
strings that answer must contain, and the frames that show it (evidence):

- lookup: one planted fact (what a project is, a colleague's role, phone, address, a command);
- time-localised: what was on screen on a given day, when other days showed other values;
- cross-app: two or more facts from different apps in one question;
- knowledge-update: the current value of a fact that changed (a moved appointment or date);
- counting: how many distinct things were seen (every item must be in the context to count them);
- abstention: something never shown, next to a similar value that was (a "trap").

Offline scoring is containment in the retrieved context: search with the question, keep hits in
rank order while they fit a word budget (`fill_budget`, 750 words as for LoCoMo), normalise case
and punctuation, and count the question answered when every gold part occurs in the context. An
abstention question counts as held when no kept hit contains a trap value. In LLM mode answers come
from `Mirix.chat(question, remember=False)` and are graded by a judge callable.

The same questions and budget score a baseline: BM25 (`mirix_py.eval.locomo.BM25`) over the raw
OCR text of every frame the engine read, one document per frame; and that baseline again with each
frame cut around the question the way the engine's prompts cut long memories (`passages.focus`), so
the gain of the cut is not counted as the gain of the memory.

    result = run(ScreenshotQAConfig(seed=7, days=3), out_dir="out", cache_dir="cache")
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Sequence

from mirix_py.agents.chat import prompt_text
from mirix_py.agents.passages import focus
from mirix_py.eval.cache import default_cache_dir, engine_fingerprint
from mirix_py.eval.judge import answer_from_context
from mirix_py.eval.locomo import BM25, fill_budget, tokenize
from mirix_py.eval.report import jsonable
from mirix_py.store.footprint import stored_bytes
from mirix_py.text import human_bytes

__all__ = [
    "FAMILIES", "NOT_PRESENT", "QAItem", "ItemScore", "ScreenshotQAConfig", "BaselineIndex", "abstention_holds",
    "contains", "engine_fingerprint", "first_mention", "generate_questions", "normalize", "run", "score_item",
]

FAMILIES = ("lookup", "time-localised", "cross-app", "knowledge-update", "counting", "abstention")
MODES = ("offline", "llm")
NOT_PRESENT = "Not present in the screenshots."
CACHE_VERSION = 2
DAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# --------------------------------------------------------------------------- questions


@dataclass
class QAItem:
    """One question. `parts`: every part must occur in the context (any of its alternatives);
    `evidence`: per part, the frames (file names) that show it; `distractors`: wrong values the
    context may hold instead (other days' or superseded values; for abstention, the traps)."""

    id: str
    family: str
    question: str
    answer: str
    parts: list[list[str]] = field(default_factory=list)
    evidence: list[list[str]] = field(default_factory=list)
    distractors: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)

    @property
    def evidence_frames(self) -> list[str]:
        return sorted({f for group in self.evidence for f in group})

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "family": self.family, "question": self.question, "gold": self.answer,
                "gold_parts": self.parts, "evidence_frames": self.evidence_frames, "evidence_by_part": self.evidence,
                "distractors": self.distractors, "facts": self.facts}


class _Session:
    """Read-only helpers over a manifest (frames, facts, world)."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        world = manifest.get("world")
        if not world:
            raise ValueError("the manifest has no 'world' entry: write it with mirix_py.ingest.synth.session_manifest")
        self.world = world
        self.frames = list(manifest.get("frames") or [])
        if not self.frames:
            raise ValueError("the manifest has no frames")
        self.facts = {fid: (asdict(f) if not isinstance(f, dict) else dict(f))
                      for fid, f in (manifest.get("facts") or {}).items()}
        self.start = datetime.fromisoformat(world["start"])
        self.project = world["project"]
        self.days = sorted({int(e["day"]) for e in self.frames})

    @staticmethod
    def file(entry: dict[str, Any]) -> str:
        return entry.get("file") or f"frame-{entry['index']:05d}"

    def shown(self, fid: str, day: int | None = None) -> list[str]:
        return [self.file(e) for e in self.frames if fid in e["facts"] and (day is None or e["day"] == day)]

    def visible(self, predicate: Callable[[dict[str, Any]], bool]) -> list[str]:
        return [fid for fid in self.facts if self.shown(fid) and predicate(self.facts[fid])]

    def first_day(self, fid: str) -> int:
        return min(e["day"] for e in self.frames if fid in e["facts"])

    def scene_frames(self, scene: str, day: int | None = None) -> list[dict[str, Any]]:
        return [e for e in self.frames if e["scene"] == scene and (day is None or e["day"] == day)]

    def day_label(self, day: int) -> str:
        d = self.start + timedelta(days=day)
        return f"{DAY_NAMES[d.weekday()]} {d.day} {d:%B %Y}"

    def lines_matching(self, scene: str, pattern: re.Pattern[str]) -> dict[str, list[str]]:
        """Distinct drawn lines of a scene matching `pattern` -> frames showing them (first-seen order)."""
        out: dict[str, list[str]] = {}
        for e in self.scene_frames(scene):
            for line in e["lines"]:
                if pattern.search(line):
                    out.setdefault(line, [])
                    if self.file(e) not in out[line]:
                        out[line].append(self.file(e))
        return out


_LAUNCH = re.compile(r"Launch date: (\w+) (\d+ \w+)")
_DENTIST = re.compile(r"^(\d\d:\d\d) Dentist")
_DEMO = re.compile(r"demo is on (\w+ \d+ \w+) at (\d\d:\d\d)")
_WORKS = re.compile(r"^(.+?) works at (.+?) as an? (.+?)\.$")
_FROM = re.compile(r"^From: (.+?) <(.+?)>$")
_EVENT = re.compile(r"^(\d\d:\d\d) (.+)$")
_ONE_ON_ONE = re.compile(r"^(\d\d:\d\d) 1:1 with (\S+)")


def _article(fact: dict[str, Any]) -> tuple[str, str, str]:
    """(title, what the answer must contain, the predicate of the lead sentence)."""
    title = fact["query"]
    lead = fact["text"].rstrip(".")
    rest = lead.split(" is ", 1)[1] if " is " in lead else lead
    return title, fact["needle"], rest


def generate_questions(manifest: dict[str, Any]) -> list[QAItem]:
    """Questions of the six families from a synthetic session's manifest (deterministic: same
    manifest, same questions). Questions whose facts the session never showed are left out."""
    s = _Session(manifest)
    P = s.project
    items: list[QAItem] = []

    def add(family: str, question: str, answer: str, parts: list[list[str]], evidence: list[list[str]],
            distractors: Iterable[str] = (), facts: Iterable[str] = ()) -> None:
        n = sum(1 for i in items if i.family == family) + 1
        items.append(QAItem(f"{family}-{n:02d}", family, question, answer, parts, evidence,
                            list(dict.fromkeys(distractors)), list(facts)))

    facts = s.facts
    articles = sorted(s.visible(lambda f: f["scene"] == "browser"), key=lambda fid: min(
        e["index"] for e in s.frames if fid in e["facts"]))
    demos = sorted(s.visible(lambda f: f["id"].startswith("chat-demo-")), key=lambda fid: facts[fid]["day"])
    launches = sorted(s.visible(lambda f: f["id"].startswith("doc-launch-")), key=s.first_day)
    dentists = sorted(s.visible(lambda f: f["id"].startswith("cal-dentist-")), key=s.first_day)
    sender = None
    if s.shown("mail-address"):
        m = _FROM.match(facts["mail-address"]["text"])
        sender = (m.group(1), m.group(2)) if m else None

    # ---------------------------------------------------------------- lookup
    if s.shown("doc-project"):
        desc = s.world["project_desc"]
        core = re.sub(r"^(a|an|the) ", "", desc)
        add("lookup", f"What is Project {P}, according to its overview document?", desc, [[core]],
            [s.shown("doc-project")], facts=["doc-project"])
    if s.shown("mail-works"):
        m = _WORKS.match(facts["mail-works"]["text"])
        if m:
            add("lookup", f"What is {m.group(1)}'s job at {m.group(2)}?", m.group(3), [[m.group(3)]],
                [s.shown("mail-works")], facts=["mail-works"])
    if s.shown("mail-phone") and sender:
        phone = facts["mail-phone"]["secret"]
        add("lookup", f"What phone number did {sender[0]} give in an email?", phone, [[phone]],
            [s.shown("mail-phone")], facts=["mail-phone"])
    if sender:
        add("lookup", f"What is {sender[0]}'s email address?", sender[1], [[sender[1]]], [s.shown("mail-address")],
            facts=["mail-address"])
    if s.shown("term-deploy"):
        command = facts["term-deploy"]["text"].lstrip("$ ").strip()
        add("lookup", f"Which command did I run in the terminal to deploy {P} to staging?", command, [[command]],
            [s.shown("term-deploy")], facts=["term-deploy"])
    for fid in articles:
        title, needle, rest = _article(facts[fid])
        add("lookup", f"According to a Wikipedia page I read, what is {rest}?", title, [[needle]], [s.shown(fid)],
            facts=[fid])

    # ---------------------------------------------------------------- time-localised
    for day in s.days:
        today = [fid for fid in articles if s.shown(fid, day)]
        if today:
            fid = today[0]
            title, needle, _ = _article(facts[fid])
            others = [_article(facts[o])[1] for o in articles if o != fid]
            add("time-localised", f"Which Wikipedia article did I have open on {s.day_label(day)}?", title,
                [[needle]], [s.shown(fid, day)], others, [fid])
        demo = f"chat-demo-d{day}"
        if demo in demos and s.shown(demo, day):
            m = _DEMO.search(facts[demo]["text"])
            if m:
                others = [_DEMO.search(facts[o]["text"]).group(1) for o in demos if o != demo]
                add("time-localised", f"On {s.day_label(day)}, which date did the reminder in Slack give for the "
                    f"{P} demo?", f"{m.group(1)} at {m.group(2)}", [[m.group(1)]], [s.shown(demo, day)],
                    [o for o in others if o != m.group(1)], [demo])

    # ---------------------------------------------------------------- cross-app
    boss = " ".join(s.world["colleagues"][0])
    one_on_one = {line: frames for line, frames in s.lines_matching("calendar", _ONE_ON_ONE).items()
                  if _ONE_ON_ONE.match(line).group(2) == s.world["colleagues"][0][0]}
    doc_frames = s.shown("doc-project")
    if doc_frames and one_on_one:
        line, cal_frames = next(iter(one_on_one.items()))
        when = _ONE_ON_ONE.match(line).group(1)
        first = s.world["colleagues"][0][0]
        add("cross-app", f"Who owns Project {P} according to its overview document, and at what time is my 1:1 with "
            f"them in the calendar?", f"{boss}; {when}", [[boss], [f"1:1 with {first}"], [when]],
            [doc_frames, cal_frames, cal_frames], facts=["doc-project"])
    chats = [s.file(e) for e in s.scene_frames("chat")]
    if sender and chats:
        channel = f"#{P.lower()}-team"
        add("cross-app", f"Who sent me the email '{P} kickoff notes', and in which Slack channel does the {P} team "
            f"talk?", f"{sender[0]}; {channel}", [[sender[0]], [channel]], [s.shown("mail-address"), chats],
            facts=["mail-address"])
    if s.shown("term-deploy") and doc_frames:
        desc = s.world["project_desc"]
        add("cross-app", "Which project does the staging deploy command in my terminal deploy, and what does that "
            "project's overview document say it is?", f"{P}: {desc}",
            [[f"--project {P.lower()}"], [re.sub(r'^(a|an|the) ', '', desc)]],
            [s.shown("term-deploy"), doc_frames], facts=["term-deploy", "doc-project"])
    if s.shown("mail-launch-moved"):
        day = s.first_day("mail-launch-moved")
        m = re.search(r"moved to (\w+ (\d+ \w+))", facts["mail-launch-moved"]["text"])
        same_day = [fid for fid in articles if s.shown(fid, day)]
        if m and same_day:
            title, needle, _ = _article(facts[same_day[0]])
            add("cross-app", f"An email said the {P} launch had moved: to which date, and which Wikipedia article "
                f"did I read on the day that email arrived?", f"{m.group(1)}; {title}", [[m.group(2)], [needle]],
                [s.shown("mail-launch-moved"), s.shown(same_day[0], day)],
                facts=["mail-launch-moved", same_day[0]])

    # ---------------------------------------------------------------- knowledge update
    if len(dentists) >= 2:
        new = dentists[-1]
        old = [_DENTIST.match(facts[o]["text"]).group(1) for o in dentists[:-1]]
        now = _DENTIST.match(facts[new]["text"]).group(1)
        add("knowledge-update", "At what time is my dentist appointment with Dr. Weber, after the latest change in "
            "my calendar?", now, [[now]], [s.shown(new)], [o for o in old if o != now], [*dentists])
    if len(launches) >= 2:
        new = launches[-1]
        wd, date = _LAUNCH.search(facts[new]["text"]).groups()
        old = [_LAUNCH.search(facts[o]["text"]).group(2) for o in launches[:-1]]
        evidence = s.shown(new) + s.shown("mail-launch-moved")
        add("knowledge-update", f"What is the current launch date of Project {P}?", f"{wd} {date}", [[date]],
            [evidence], [o for o in old if o != date], [*launches, *(["mail-launch-moved"] if s.shown("mail-launch-moved") else [])])
    if len(demos) >= 2:
        new = demos[-1]
        m = _DEMO.search(facts[new]["text"])
        old = [_DEMO.search(facts[o]["text"]).group(1) for o in demos[:-1]]
        add("knowledge-update", f"According to the most recent reminder in Slack, when is the {P} demo?",
            f"{m.group(1)} at {m.group(2)}", [[m.group(1)]], [s.shown(new)], [o for o in old if o != m.group(1)],
            [*demos])

    # ---------------------------------------------------------------- counting
    if articles:
        titles = [_article(facts[fid]) for fid in articles]
        add("counting", "How many different Wikipedia articles did I read?",
            f"{len(titles)} ({', '.join(t[0] for t in titles)})", [[t[1]] for t in titles],
            [s.shown(fid) for fid in articles], facts=articles)
    if demos:
        dates = [_DEMO.search(facts[fid]["text"]).group(1) for fid in demos]
        add("counting", f"How many different dates did the reminders in Slack give for the {P} demo?",
            f"{len(set(dates))} ({', '.join(dict.fromkeys(dates))})", [[d] for d in dict.fromkeys(dates)],
            [s.shown(fid) for fid in demos], facts=demos)
    events: dict[str, list[str]] = {}
    for line, frames in s.lines_matching("calendar", _EVENT).items():
        title = _EVENT.match(line).group(2)
        events.setdefault(title, [])
        events[title] += [f for f in frames if f not in events[title]]
    if events:
        names = list(events)
        add("counting", "How many different events does my calendar show this week?",
            f"{len(names)} ({', '.join(names)})",
            [list(dict.fromkeys([t, " ".join(t.split()[:2])])) for t in names], [events[t] for t in names])
    senders: dict[str, list[str]] = {}
    for e in s.scene_frames("email"):
        for line in e["lines"]:
            m = _FROM.match(line)
            if m:
                senders.setdefault(m.group(1), [])
                if s.file(e) not in senders[m.group(1)]:
                    senders[m.group(1)].append(s.file(e))
    if senders:
        names = list(senders)
        add("counting", "How many different people sent the emails I opened in Thunderbird?",
            f"{len(names)} ({', '.join(names)})", [[n] for n in names], [senders[n] for n in names])

    # ---------------------------------------------------------------- abstention
    all_text = " ".join(line for e in s.frames for line in e["lines"])
    if s.shown("mail-phone"):
        from mirix_py.ingest.synth import FIRST, LAST

        known = {" ".join(c) for c in s.world["colleagues"]} | {s.world["user"]}
        stranger = next(f"{a} {b}" for a in reversed(FIRST) for b in LAST
                        if f"{a} {b}" not in known and a not in all_text)
        add("abstention", f"What is {stranger}'s phone number?", NOT_PRESENT, [], [],
            [facts["mail-phone"]["secret"]], ["mail-phone"])
    if dentists:
        times = [_DENTIST.match(facts[fid]["text"]).group(1) for fid in dentists]
        add("abstention", "When is my appointment with the dermatologist?", NOT_PRESENT, [], [], times, dentists)
    if s.shown("chat-password"):
        add("abstention", "What is the production database password?", NOT_PRESENT, [], [],
            [facts["chat-password"]["secret"]], ["chat-password"])
    if launches:
        from mirix_py.ingest.synth import PROJECTS

        other = next(name for name, _ in PROJECTS if name != P)
        dates = [_LAUNCH.search(facts[fid]["text"]).group(2) for fid in launches]
        add("abstention", f"What is the launch date of Project {other}?", NOT_PRESENT, [], [], dates, launches)
    return items


# --------------------------------------------------------------------------- scoring

_WORD = re.compile(r"[^\W_]+")


def normalize(text: str) -> str:
    """Lowercase word characters separated by single spaces: punctuation and case do not matter."""
    return " ".join(_WORD.findall(str(text).lower()))


def contains(context: str, value: str) -> bool:
    """`value` occurs in `context` as whole words after `normalize` ("14 June" is not in "114 june")."""
    v = normalize(value)
    return bool(v) and f" {v} " in f" {normalize(context)} "


def _norm_contains(norm_context: str, value: str) -> bool:
    v = normalize(value)
    return bool(v) and f" {v} " in f" {norm_context} "


def first_mention(item: QAItem, texts: Sequence[str]) -> float | None:
    """For single-part questions with distractors: 1.0 when the first kept hit that mentions the
    gold or a distractor mentions the gold and no distractor, else 0.0 (also when none mentions
    either); None when the question has no distractors."""
    if not item.distractors or len(item.parts) != 1:
        return None
    for text in texts:
        n = normalize(text)
        gold = any(_norm_contains(n, alt) for alt in item.parts[0])
        wrong = any(_norm_contains(n, d) for d in item.distractors)
        if gold or wrong:
            return 1.0 if gold and not wrong else 0.0
    return 0.0


def abstention_holds(item: QAItem, texts: Sequence[str]) -> bool:
    """An abstention question holds when no kept hit contains any of its trap values."""
    return not any(contains(t, trap) for t in texts for trap in item.distractors)


@dataclass
class ItemScore:
    score: float  # answerable: every part contained (1/0); abstention: no trap value in the context
    partial: float  # share of parts contained (abstention: = score)
    evidence: float  # share of evidence groups with a frame among the kept hits' source ids (NaN: none)
    first_mention: float | None
    words: int
    kept: int


def score_item(item: QAItem, kept: Sequence[tuple[str, Sequence[str]]]) -> ItemScore:
    """Score one question against the kept context: (text, source_ids) of each hit that fit the budget."""
    texts = [t for t, _ in kept]
    sources = {s for _, ss in kept for s in ss}
    words = sum(len(t.split()) for t in texts)
    if item.family == "abstention":
        held = 1.0 if abstention_holds(item, texts) else 0.0
        return ItemScore(held, held, math.nan, None, words, len(kept))
    context = normalize("\n".join(texts))
    found = [any(_norm_contains(context, alt) for alt in part) for part in item.parts]
    groups = [g for g in item.evidence if g]
    evidence = sum(1 for g in groups if sources.intersection(g)) / len(groups) if groups else math.nan
    return ItemScore(1.0 if found and all(found) else 0.0, sum(found) / len(found) if found else 0.0, evidence,
                     first_mention(item, texts), words, len(kept))


# --------------------------------------------------------------------------- retrieval

Hit = tuple[str, tuple[str, ...], str]  # (context text, source ids, memory id)


def engine_hits(mx: Any, user_id: str, question: str, *, limit: int = 60,
                now: datetime | None = None) -> tuple[list[Hit], dict[str, Any]]:
    """Hybrid search with the question, inside the time range the chat flow reads from it
    (`offline_topics`), falling back to no range when that finds nothing, as `ChatFlow.retrieve` does."""
    from mirix_py.agents.chat import offline_topics

    topics = offline_topics(question, now or datetime.now(timezone.utc))
    hits = mx.search(question, user_id=user_id, limit=limit, start=topics.start, end=topics.end)
    window = [topics.start.isoformat(), topics.end.isoformat()] if topics.start and topics.end else None
    if not hits and (topics.start or topics.end):
        hits = mx.search(question, user_id=user_id, limit=limit)
        window = None
    out: list[Hit] = []
    for hit in hits:
        text = prompt_text(hit, mx.store, question)
        if text is not None:
            out.append((text, tuple(hit.memory.source_ids), hit.memory.id))
    return out, {"time_window": window}


class BaselineIndex:
    """BM25 over raw OCR text, one document per frame (source id: the frame's file name)."""

    def __init__(self, docs: Sequence[tuple[str, str]]) -> None:
        self.docs = list(docs)
        self.index = BM25([tokenize(text) for text, _ in self.docs])

    def hits(self, question: str, limit: int = 60) -> list[Hit]:
        ranked = self.index.rank(tokenize(question))[:limit]
        return [(self.docs[i][0], (self.docs[i][1],), f"frame:{self.docs[i][1]}") for i in ranked]


def keep_within(hits: Sequence[Hit], budget_words: int) -> list[Hit]:
    """The prefix of the ranking that fits the budget (`locomo.fill_budget`)."""
    filled = fill_budget(((t, s) for t, s, _ in hits), budget_words)
    return list(hits[: len(filled.items)])


# --------------------------------------------------------------------------- ingestion and cache


@dataclass(frozen=True)
class ScreenshotQAConfig:
    seed: int = 7
    days: int = 3
    budget_words: int = 750
    mode: str = "offline"
    dwell: tuple[int, int] = (3, 7)
    size: tuple[int, int] = (1920, 1080)
    workers: int | None = None
    search_limit: int = 60
    user_id: str = "screenshot-qa"

    def validate(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}: use one of {', '.join(MODES)}")
        if not isinstance(self.days, int) or self.days < 1:
            raise ValueError(f"days must be a whole number >= 1, not {self.days!r}")
        if self.budget_words < 1:
            raise ValueError(f"the word budget must be >= 1, not {self.budget_words!r}")
        lo, hi = self.dwell
        if lo < 1 or hi < lo:
            raise ValueError(f"dwell must be MIN-MAX frames per visit with 1 <= MIN <= MAX, not {lo}-{hi}")
        if self.size[0] < 1280 or self.size[1] < 720:
            raise ValueError("synthetic screens are at least 1280x720")
        if self.workers is not None and self.workers < 0:
            raise ValueError("workers must be >= 0")
        if self.search_limit < 1:
            raise ValueError("search_limit must be >= 1")

    def ingestion_settings(self) -> dict[str, Any]:
        """What decides the ingested data (the cache key), apart from the engine's source."""
        from mirix_py.ingest.screenshots import ScreenshotConfig

        sc = ScreenshotConfig()
        return {"seed": self.seed, "days": self.days, "dwell": list(self.dwell), "size": list(self.size),
                "similarity_threshold": sc.similarity_threshold, "batch_frames": sc.batch.max_frames,
                "batch_seconds": sc.batch.max_seconds, "ocr_lang": sc.ocr.lang, "user_id": self.user_id,
                "cache_version": CACHE_VERSION}


_DEFAULT = object()
Progress = Callable[[str, int], Callable[[int], None]]  # (description, total) -> advance(n)


def _no_progress(description: str, total: int) -> Callable[[int], None]:
    return lambda n=1: None


def _offline_settings(data_dir: Path) -> Any:
    from mirix_py.settings import Settings

    settings = Settings.from_env(data_dir=data_dir)
    return settings.model_copy(update={"llm_provider": None, "llm_model": None, "llm_base_url": None})


def resolve_embedder(embedder: Any = _DEFAULT) -> Any:
    """The embedder to use: the one given, or the one the settings name (MIRIX_EMBEDDER, default MiniLM)."""
    if embedder is not _DEFAULT:
        return embedder
    from mirix_py.store.embeddings import load_embedder

    return load_embedder(_offline_settings(Path(".")).embedder)


def _session(config: ScreenshotQAConfig) -> tuple[Any, list[Any], dict[str, Any]]:
    from mirix_py.ingest.synth import ScreenSynth, frame_file_name, session_manifest

    synth = ScreenSynth(seed=config.seed, size=tuple(config.size))
    frames = synth.session(days=config.days, dwell=tuple(config.dwell))
    manifest = session_manifest(frames, synth=synth, files=[frame_file_name(f) for f in frames])
    return synth, frames, manifest


def ingest_cached(config: ScreenshotQAConfig, cache_dir: Path, *, embedder: Any = _DEFAULT, fresh: bool = False,
                  progress: Progress = _no_progress) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Generate the session and ingest it offline into a cached data dir keyed by the seed, days,
    ingestion settings, embedder and engine source; returns (data dir, ingestion info, manifest).
    An existing complete ingestion is reused unless `fresh`."""
    from mirix_py.engine import Mirix
    from mirix_py.ingest.screenshots import ScreenshotConfig
    from mirix_py.ingest.synth import write_session

    synth, frames, manifest = _session(config)
    settings = config.ingestion_settings()
    embedder = resolve_embedder(embedder)
    embedder_name = "none" if embedder is None else (getattr(embedder, "name", None) or type(embedder).__name__)
    settings["embedder"] = embedder_name
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    fingerprint = engine_fingerprint()
    key = f"s{config.seed}-d{config.days}-{digest}-{fingerprint}"
    root = Path(cache_dir) / key
    marker = root / "ingested.json"
    if marker.exists() and not fresh:
        info = json.loads(marker.read_text(encoding="utf-8"))
        info["reused"] = True
        return root / "data", info, manifest
    if root.exists():
        shutil.rmtree(root)
    for old in Path(cache_dir).glob(f"s{config.seed}-d{config.days}-{digest}-*"):  # older engine sources
        if old.is_dir() and old != root:
            shutil.rmtree(old, ignore_errors=True)
    shots = root / "shots"
    t0 = time.perf_counter()
    write_session(frames, shots, synth=synth, progress=progress("writing synthetic frames", len(frames)))
    write_seconds = time.perf_counter() - t0
    mx = Mirix(settings=_offline_settings(root / "data"), embedder=embedder)
    try:
        mx.configure_screenshots(ScreenshotConfig(workers=config.workers))
        mx.search("warm up", user_id=config.user_id)  # load the embedder before the clock starts
        advance = progress("ingesting screenshots", len(frames))
        report = mx.ingest_screenshots(shots, user_id=config.user_id, progress=advance)
        stored = stored_bytes(mx.store, config.user_id)
        counts = mx.store.count(user_id=config.user_id)
        describe = mx.describe()
    finally:
        mx.close()
    # the baseline's documents: the same frames the engine read, OCR'd again with the engine's OCR
    # settings (the input log drops the text of processed screenshots, so it cannot be reused)
    read = sorted(o.name for o in report.outcomes if o.status in ("processed", "no_text"))
    docs = baseline_documents(shots, read, workers=config.workers, progress=progress)
    rep = report.to_dict()
    wall = report.wall_seconds or math.nan
    info = {
        "cache_key": key, "data_dir": str(root / "data"), "engine_fingerprint": fingerprint, "settings": settings,
        "engine": {k: v for k, v in describe.items() if k != "data_dir"}, "reused": False,
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "write_seconds": round(write_seconds, 2),
        "report": rep, "stored": stored, "memories": counts,
        "throughput": {"frames": report.frames, "unique": report.unique, "duplicates": report.duplicates,
                       "duplicate_share": report.duplicate_share, "wall_seconds": report.wall_seconds,
                       "unique_fps": report.unique / wall, "all_fps": report.frames / wall,
                       "ocr_seconds": report.ocr_seconds, "load_average": os.getloadavg()[0],
                       "cpus": os.cpu_count()},
        "storage": _storage(report.png_bytes, report.frames, report.unique, stored),
    }
    (root / "baseline_docs.json").write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
    (root / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(shots, ignore_errors=True)  # the PNGs are regenerated from the seed when needed
    marker.write_text(json.dumps(info, indent=1), encoding="utf-8")
    return root / "data", info, manifest


def baseline_documents(shots: Path, names: Sequence[str], *, workers: int | None = None,
                       progress: Progress = _no_progress) -> list[tuple[str, str]]:
    """(OCR text, file name) of each named frame, read with the engine's default OCR settings."""
    from PIL import Image

    from mirix_py.ingest.ocr import OcrPool
    from mirix_py.ingest.screenshots import ScreenshotConfig

    docs: list[tuple[str, str]] = []
    advance = progress("OCR for the raw-text baseline", len(names))
    with OcrPool(ScreenshotConfig().ocr, workers=workers) as pool:
        step = max(2 * pool.workers, 2)
        for i in range(0, len(names), step):
            chunk = names[i:i + step]
            images = []
            for name in chunk:
                with Image.open(shots / name) as im:
                    images.append(im.convert("RGB"))
            for name, res in zip(chunk, pool.map(images)):
                if isinstance(res, Exception):
                    raise RuntimeError(f"baseline OCR of {name} failed: {res}") from res
                docs.append((res.text, name))
            advance(len(chunk))
    return docs


def _storage(png_bytes: int, frames: int, unique: int, stored: dict[str, int]) -> dict[str, Any]:
    total = sum(stored.values())
    png_per_frame = png_bytes / frames if frames else math.nan
    per_frame = total / frames if frames else math.nan
    return {"png_bytes": png_bytes, "png_per_frame": png_per_frame, "stored_bytes": total,
            "stored_per_frame": per_frame, "stored_per_unique_frame": total / unique if unique else math.nan,
            "stored_share": per_frame / png_per_frame if png_per_frame else math.nan,
            "by_part_per_frame": {k: v / frames if frames else math.nan for k, v in stored.items()}}


# --------------------------------------------------------------------------- the run

ANSWER_SYSTEM = """# agent: answerer
You answer a question about what was on a user's computer screen, from the screen text below only
(OCR of screenshots, so expect small recognition errors). Answer with a short phrase. If the screen
text does not contain the answer, reply exactly: Not present in the screenshots.

Screen text:
{context}"""

QUESTION_SUFFIX = ("\n\nAnswer with a short phrase. If it is not in memory, reply exactly: "
                   "Not present in the screenshots.")

Judge = Callable[[Any, str, str, str], Awaitable[Any]]


def _judged(result: Any) -> tuple[bool, str, str]:
    if isinstance(result, bool):
        return result, "CORRECT" if result else "WRONG", ""
    correct = bool(getattr(result, "correct", False))
    return correct, str(getattr(result, "label", "CORRECT" if correct else "WRONG")), str(getattr(result, "reasoning", ""))


def _mean(values: Iterable[float | None]) -> float:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else math.nan


SYSTEMS = ("engine", "baseline", "baseline_focus")


def summarize(rows: Sequence[dict[str, Any]], llm: bool) -> dict[str, Any]:
    """Per family and overall (micro: every question; macro: mean of the family means)."""
    metrics = ["score", "partial", "evidence", "first_mention"] + (["judge"] if llm else [])

    def block(subset: Sequence[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(subset)}
        for system in SYSTEMS:
            out[system] = {m: _mean(r[system].get(m) for r in subset) for m in metrics}
            out[system]["words"] = _mean(r[system]["words"] for r in subset)
            out[system]["ms"] = _mean(r[system]["ms"] for r in subset)
        return out

    families = {f: block([r for r in rows if r["family"] == f]) for f in FAMILIES if any(r["family"] == f for r in rows)}
    overall = block(rows)
    macro = {system: {m: _mean(families[f][system][m] for f in families) for m in metrics} for system in SYSTEMS}
    return {"families": families, "overall": overall, "macro": macro}


def run(config: ScreenshotQAConfig, out_dir: str | Path, cache_dir: str | Path | None = None, *,
        embedder: Any = _DEFAULT, model_client: Any = None, judge: Judge | None = None, judge_client: Any = None,
        fresh: bool = False, progress: Progress | None = None) -> dict[str, Any]:
    """Ingest (or reuse) the session, ask every question of the engine and of the baseline, score,
    and write screenshot_qa.json, screenshot_qa.md and screenshot_qa_families.png into `out_dir`."""
    config.validate()
    if config.mode == "llm" and (model_client is None or judge is None):
        raise ValueError("LLM mode needs a model client (the answer model) and a judge")
    progress = progress or _no_progress
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir("screenshot_qa")
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    embedder = resolve_embedder(embedder)
    data_dir, info, manifest = ingest_cached(config, cache, embedder=embedder, fresh=fresh, progress=progress)
    questions = generate_questions(manifest)
    docs = json.loads((data_dir.parent / "baseline_docs.json").read_text(encoding="utf-8"))
    baseline = BaselineIndex([tuple(d) for d in docs])

    from mirix_py.engine import Mirix

    settings = _offline_settings(data_dir)
    llm = config.mode == "llm"
    mx = Mirix(settings=settings, model_client=model_client if llm else None, resume=False, embedder=embedder)
    judge_client = judge_client or model_client
    rows: list[dict[str, Any]] = []
    now = datetime.now(timezone.utc)
    try:
        advance = progress("asking questions", len(questions))
        for item in questions:
            row: dict[str, Any] = item.as_dict()
            t0 = time.perf_counter()
            hits, extra = engine_hits(mx, config.user_id, item.question, limit=config.search_limit, now=now)
            engine_ms = 1000 * (time.perf_counter() - t0)
            t0 = time.perf_counter()
            base_hits = baseline.hits(item.question, limit=config.search_limit)
            base_ms = 1000 * (time.perf_counter() - t0)
            # the same raw frames cut the way the engine's prompts cut long memories (`passages.focus`)
            focused = [(focus(t, item.question), ids, i) for t, ids, i in base_hits]
            for system, ranked, ms in (("engine", hits, engine_ms), ("baseline", base_hits, base_ms),
                                       ("baseline_focus", focused, base_ms)):
                kept = keep_within(ranked, config.budget_words)
                sc = score_item(item, [(t, s) for t, s, _ in kept])
                row[system] = {
                    "score": sc.score, "partial": sc.partial, "evidence": sc.evidence,
                    "first_mention": sc.first_mention, "words": sc.words, "ms": round(ms, 2),
                    "retrieved_ids": [i for _, _, i in ranked], "kept_ids": [i for _, _, i in kept],
                    "kept_sources": sorted({s for _, ss, _ in kept for s in ss}),
                    "kept_texts": [t for t, _, _ in kept],
                }
            row["engine"].update(extra)
            if llm:
                _llm_answers(mx, item, row, judge, judge_client, model_client, config)
            rows.append(row)
            advance(1)
    finally:
        mx.close()
    summary = summarize(rows, llm)
    result = {
        "benchmark": "mirix eval screenshots",
        "config": {**asdict(config), "dwell": list(config.dwell), "size": list(config.size),
                   "cache_dir": str(cache), "questions": len(questions),
                   "families": {f: sum(1 for q in questions if q.family == f) for f in FAMILIES},
                   "generator": "mirix_py.ingest.synth.ScreenSynth", "session_frames": len(manifest["frames"]),
                   "session_user": manifest["world"]["user"], "session_project": manifest["world"]["project"]},
        "ingestion": info,
        "summary": summary,
        "questions": rows,
        "seconds": round(time.perf_counter() - started, 2),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    (out / "screenshot_qa.json").write_text(json.dumps(jsonable(result), indent=1, ensure_ascii=False),
                                            encoding="utf-8")
    (out / "screenshot_qa.md").write_text(render_markdown(result), encoding="utf-8")
    plot_families(result, out / "screenshot_qa_families.png")
    return result


def _llm_answers(mx: Any, item: QAItem, row: dict[str, Any], judge: Judge, judge_client: Any, model_client: Any,
                 config: ScreenshotQAConfig) -> None:
    t0 = time.perf_counter()
    reply = mx.chat(item.question + QUESTION_SUFFIX, user_id=config.user_id, remember=False)
    chat_ms = 1000 * (time.perf_counter() - t0)
    correct, label, why = _judged(mx._run(judge(judge_client, item.question, item.answer, reply.answer)))
    row["engine"].update(answer=reply.answer, answer_ms=round(chat_ms, 1), cited_ids=list(reply.memory_ids),
                         chat_retrieved_ids=list(reply.retrieved_ids), judge=1.0 if correct else 0.0,
                         judge_label=label, judge_reasoning=why)
    context = "\n\n".join(row["baseline"]["kept_texts"])
    t0 = time.perf_counter()
    answer = mx._run(answer_from_context(model_client, item.question, context, system=ANSWER_SYSTEM)).answer
    base_ms = 1000 * (time.perf_counter() - t0)
    correct, label, why = _judged(mx._run(judge(judge_client, item.question, item.answer, answer)))
    row["baseline"].update(answer=answer, answer_ms=round(base_ms, 1), judge=1.0 if correct else 0.0,
                           judge_label=label, judge_reasoning=why)


# --------------------------------------------------------------------------- report


_NONE: dict[str, float] = {"score": math.nan, "evidence": math.nan, "first_mention": math.nan}  # older results


def _pct(v: float | None) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"




def render_markdown(result: dict[str, Any]) -> str:
    cfg = result["config"]
    ing = result["ingestion"]
    summ = result["summary"]
    llm = cfg["mode"] == "llm"
    lines = [
        f"# Screenshot QA: synthetic desktop, seed {cfg['seed']}, {cfg['days']} day(s)",
        "",
        f"`mirix eval screenshots --seed {cfg['seed']} --days {cfg['days']} --budget-words {cfg['budget_words']} "
        f"--mode {cfg['mode']} --dwell {cfg['dwell'][0]}-{cfg['dwell'][1]}` · {cfg['questions']} questions over {cfg['session_frames']} frames "
        f"({ing['throughput']['unique']} read by OCR) · {result['created_at']}",
        "",
        "**engine**: `Mirix.search(question)` (hybrid BM25 + MiniLM over the memories the offline managers "
        "wrote from the screenshots, inside the time range the chat flow reads from the question); "
        "vault entries carry their value unless of high sensitivity, as in a chat prompt. "
        f"**baseline**: BM25 over the raw OCR text of every frame the engine read, one document per frame. "
        f"**baseline+focus**: the same ranking, each frame cut to its first line and the lines about the "
        f"question, as the engine's prompts cut long memories (`mirix_py.agents.passages.focus`). "
        f"All: hits in rank order while they fit {cfg['budget_words']} words.",
        "",
        "## Answer containment in the retrieved context (offline)",
        "",
        "| family | n | engine | baseline | baseline+focus | engine evidence | baseline evidence | "
        "baseline+focus evidence | engine first-mention | baseline first-mention | engine words | baseline words |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(name: str, b: dict[str, Any]) -> str:
        e, s, f = b["engine"], b["baseline"], b.get("baseline_focus", _NONE)
        return (f"| {name} | {b['n']} | {_pct(e['score'])} | {_pct(s['score'])} | {_pct(f['score'])} | "
                f"{_pct(e['evidence'])} | {_pct(s['evidence'])} | {_pct(f['evidence'])} | "
                f"{_pct(e['first_mention'])} | {_pct(s['first_mention'])} | {e['words']:.0f} | {s['words']:.0f} |")

    for fam, block in summ["families"].items():
        lines.append(row(fam, block))
    lines.append(row("**all questions**", summ["overall"]))
    macro = summ["macro"]
    mf = macro.get("baseline_focus", _NONE)
    lines.append(f"| **mean of families** | {len(summ['families'])} | {_pct(macro['engine']['score'])} | "
                 f"{_pct(macro['baseline']['score'])} | {_pct(mf['score'])} | {_pct(macro['engine']['evidence'])} | "
                 f"{_pct(macro['baseline']['evidence'])} | {_pct(mf['evidence'])} | "
                 f"{_pct(macro['engine']['first_mention'])} | {_pct(macro['baseline']['first_mention'])} | | |")
    lines += [
        "",
        "- **containment** (engine, baseline): share of questions whose every gold part occurs in the kept "
        "context after normalising case and punctuation (whole words). Counting questions need every item "
        "counted; cross-app questions every part. For **abstention** it is the share where the gold "
        "\"not present\" holds: no kept hit contains a trap value (a similar value that was on screen, "
        "e.g. another person's phone number for a stranger's).",
        "- **evidence**: share of a question's evidence groups (one per gold part) with at least one "
        "evidence frame among the kept hits' `source_ids` (abstention: none).",
        "- **first-mention** (time-localised, knowledge-update and other questions with distractors): the "
        "first kept hit mentioning the gold or a distractor (another day's or a superseded value) mentions "
        "the gold and no distractor.",
        "",
    ]
    if llm:
        lines += ["## LLM judge (answers from `Mirix.chat`; baseline: the same model given the baseline context)",
                  "", "| family | n | engine | baseline |", "|---|---:|---:|---:|"]
        for fam, block in summ["families"].items():
            lines.append(f"| {fam} | {block['n']} | {_pct(block['engine']['judge'])} | {_pct(block['baseline']['judge'])} |")
        o = summ["overall"]
        lines += [f"| **all questions** | {o['n']} | {_pct(o['engine']['judge'])} | {_pct(o['baseline']['judge'])} |", ""]
    st, tp, rep = ing["storage"], ing["throughput"], ing["report"]
    lines += [
        "## Storage and throughput (ingestion of this session)",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| frames / read by OCR / skipped as near-duplicates | {tp['frames']} / {tp['unique']} / "
        f"{tp['duplicates']} ({tp['duplicate_share']:.1%}) |",
        f"| unique frames per second, end to end (dedup, OCR, managers, embeddings, store) | {tp['unique_fps']:.2f} |",
        f"| all frames per second | {tp['all_fps']:.2f} |",
        f"| ingestion wall time / OCR CPU time | {tp['wall_seconds']:.1f} s / {tp['ocr_seconds']:.1f} s |",
        f"| raw PNG per frame | {human_bytes(st['png_per_frame'])} |",
        f"| stored per frame (input log + memories + history + vectors) | {human_bytes(st['stored_per_frame'])} "
        f"({st['stored_share']:.3%} of the PNG) |",
        *[f"| &nbsp;&nbsp;{k.replace('_', ' ')} per frame | {human_bytes(v)} |" for k, v in st["by_part_per_frame"].items()],
        f"| stored per unique frame | {human_bytes(st['stored_per_unique_frame'])} |",
        f"| memories written | {', '.join(f'{k} {v}' for k, v in sorted(ing['memories'].items()))} |",
        f"| mean search time per question, engine / baseline | {summ['overall']['engine']['ms']:.0f} ms / "
        f"{summ['overall']['baseline']['ms']:.1f} ms |",
        "",
        f"Throughput was measured when the cache entry was built ({ing.get('built_at', '?')}, load average "
        f"{tp.get('load_average', float('nan')):.1f} on {tp.get('cpus')} CPUs); this run "
        f"{'reused it' if ing.get('reused') else 'built it'}. {rep.get('batches', 0)} memory updates.",
        "",
        "## Configuration",
        "",
        "```json",
        json.dumps(jsonable({"config": cfg, "cache_key": ing["cache_key"], "engine": ing.get("engine"),
                              "engine_fingerprint": ing["engine_fingerprint"], "ingestion_settings": ing["settings"]}),
                   indent=1),
        "```",
        "",
        "## Questions",
        "",
        "| id | question | gold | engine | baseline |" + (" engine judge | baseline judge |" if llm else ""),
        "|---|---|---|---:|---:|" + ("---:|---:|" if llm else ""),
    ]
    for q in result["questions"]:
        cells = [q["id"], q["question"].replace("|", "\\|"), q["gold"].replace("|", "\\|"),
                 _pct(q["engine"]["score"]), _pct(q["baseline"]["score"])]
        if llm:
            cells += [_pct(q["engine"].get("judge")), _pct(q["baseline"].get("judge"))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def plot_families(result: dict[str, Any], path: str | Path) -> Path:
    """Bars per family (and overall): engine beside the baselines, for containment, evidence and (LLM) judge."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summ = result["summary"]
    names = list(summ["families"]) + ["all"]
    blocks = [summ["families"][f] for f in summ["families"]] + [summ["overall"]]
    panels = [("score", "answer containment (abstention: trap absent)"), ("evidence", "evidence frame retrieved")]
    if result["config"]["mode"] == "llm":
        panels.append(("judge", "LLM judge accuracy"))
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 3.2 * len(panels)), squeeze=False)
    series = [("engine", "engine", "#2b6cb0"), ("baseline", "baseline", "#a0aec0"),
              ("baseline_focus", "baseline+focus", "#718096")]
    series = [x for x in series if x[0] in blocks[0]]
    width = 0.8 / len(series)
    for ax, (metric, title) in zip(axes[:, 0], panels):
        for k, (system, label, colour) in enumerate(series):
            raw = [b[system].get(metric) for b in blocks]
            missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in raw]
            vals = [0.0 if m else v for v, m in zip(raw, missing)]
            xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(names))]
            bars = ax.bar(xs, vals, width, label=label, color=colour)
            for bar, v, m in zip(bars, vals, missing):  # not measured (e.g. evidence of abstention): "n/a"
                ax.text(bar.get_x() + bar.get_width() / 2, v + 0.02, "n/a" if m else f"{v:.2f}", ha="center",
                        fontsize=7)
        ax.set_xticks(range(len(names)), [f"{n}\n(n={b['n']})" for n, b in zip(names, blocks)], fontsize=8)
        ax.set_ylim(0, 1.15)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8, loc="upper right")
    cfg = result["config"]
    fig.suptitle(f"Screenshot QA, seed {cfg['seed']}, {cfg['days']} day(s), {cfg['budget_words']}-word context",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
