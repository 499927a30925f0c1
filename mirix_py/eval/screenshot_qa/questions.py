"""Questions with gold answers over a synthetic screenshot session, built from its manifest.

Six families, each question with a gold answer, the strings that answer must contain (`parts`),
the frames that show each part (`evidence`) and wrong values the context may hold instead
(`distractors`):

- lookup: one planted fact (what a project is, a colleague's role, phone, address, a command);
- time-localised: what was on screen on a given day, when other days showed other values;
- cross-app: two or more facts from different apps in one question;
- knowledge-update: the current value of a fact that changed (a moved appointment or date);
- counting: how many distinct things were seen (every item must be in the context to count them);
- abstention: something never shown, next to a similar value that was (a "trap").

Every value comes from the planted facts' structured `values` and the frames' `items` (calendar
events, email senders) that `mirix_synth.screens` records as it draws: nothing is parsed back out
of the drawn text, and a missing value raises instead of dropping a question.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any, Callable, Iterable

__all__ = ["DAY_NAMES", "FAMILIES", "NOT_PRESENT", "QAItem", "generate_questions"]

FAMILIES = ("lookup", "time-localised", "cross-app", "knowledge-update", "counting", "abstention")
NOT_PRESENT = "Not present in the screenshots."
DAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


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
            raise ValueError("the manifest has no 'world' entry: write it with mirix_synth.screens.session_manifest")
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

    def value(self, fid: str, name: str) -> str:
        """A planted fact's structured value; raises (naming the fact) when the generator did not record it."""
        values = self.facts[fid].get("values") or {}
        if name not in values:
            raise ValueError(f"planted fact {fid!r} has no value {name!r} (it has {sorted(values)}); "
                             "the manifest must come from mirix_synth.screens.session_manifest")
        return str(values[name])

    def items(self, scene: str, kind: str, key: Callable[[dict[str, str]], Any]) -> dict[Any, list[str]]:
        """Distinct drawn items of a kind (by `key`) in a scene's frames -> frames showing them, first-seen order."""
        out: dict[Any, list[str]] = {}
        for e in self.scene_frames(scene):
            for item in e.get("items") or []:
                if item.get("kind") == kind:
                    frames = out.setdefault(key(item), [])
                    if self.file(e) not in frames:
                        frames.append(self.file(e))
        return out


def _without_article(text: str) -> str:
    """'an analytics platform' -> 'analytics platform' (what an answer must contain)."""
    for article in ("a ", "an ", "the "):
        if text.startswith(article):
            return text[len(article):]
    return text


def generate_questions(manifest: dict[str, Any]) -> list[QAItem]:
    """Questions of the six families from a synthetic session's manifest (deterministic: same
    manifest, same questions). Questions about facts the session never showed are left out; a
    shown fact without the values a question needs raises ValueError."""
    s = _Session(manifest)
    P = s.project
    value = s.value
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
    sender = (value("mail-address", "name"), value("mail-address", "email")) if s.shown("mail-address") else None

    # ---------------------------------------------------------------- lookup
    if s.shown("doc-project"):
        desc = value("doc-project", "description")
        add("lookup", f"What is Project {P}, according to its overview document?", desc, [[_without_article(desc)]],
            [s.shown("doc-project")], facts=["doc-project"])
    if s.shown("mail-works"):
        role = value("mail-works", "role")
        add("lookup", f"What is {value('mail-works', 'person')}'s job at {value('mail-works', 'company')}?", role,
            [[role]], [s.shown("mail-works")], facts=["mail-works"])
    if s.shown("mail-phone") and sender:
        phone = value("mail-phone", "phone")
        add("lookup", f"What phone number did {sender[0]} give in an email?", phone, [[phone]],
            [s.shown("mail-phone")], facts=["mail-phone"])
    if sender:
        add("lookup", f"What is {sender[0]}'s email address?", sender[1], [[sender[1]]], [s.shown("mail-address")],
            facts=["mail-address"])
    if s.shown("term-deploy"):
        command = value("term-deploy", "command")
        add("lookup", f"Which command did I run in the terminal to deploy {P} to staging?", command, [[command]],
            [s.shown("term-deploy")], facts=["term-deploy"])
    for fid in articles:
        add("lookup", f"According to a Wikipedia page I read, what is {value(fid, 'is')}?", value(fid, "title"),
            [[value(fid, "name")]], [s.shown(fid)], facts=[fid])

    # ---------------------------------------------------------------- time-localised
    for day in s.days:
        today = [fid for fid in articles if s.shown(fid, day)]
        if today:
            fid = today[0]
            others = [value(o, "name") for o in articles if o != fid]
            add("time-localised", f"Which Wikipedia article did I have open on {s.day_label(day)}?",
                value(fid, "title"), [[value(fid, "name")]], [s.shown(fid, day)], others, [fid])
        demo = f"chat-demo-d{day}"
        if demo in demos and s.shown(demo, day):
            date, at = value(demo, "date"), value(demo, "time")
            others = [value(o, "date") for o in demos if o != demo]
            add("time-localised", f"On {s.day_label(day)}, which date did the reminder in Slack give for the "
                f"{P} demo?", f"{date} at {at}", [[date]], [s.shown(demo, day)], [o for o in others if o != date],
                [demo])

    # ---------------------------------------------------------------- cross-app
    first, last = s.world["colleagues"][0]
    boss = f"{first} {last}"
    one_on_one = s.items("calendar", "event", lambda e: (e["time"], e["shown"]) if e["title"] == f"1:1 with {first}"
                         else None)
    one_on_one.pop(None, None)
    doc_frames = s.shown("doc-project")
    if doc_frames and one_on_one:
        (when, _), cal_frames = next(iter(one_on_one.items()))
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
        desc = value("doc-project", "description")
        add("cross-app", "Which project does the staging deploy command in my terminal deploy, and what does that "
            "project's overview document say it is?", f"{P}: {desc}",
            [[value("term-deploy", "project_flag")], [_without_article(desc)]],
            [s.shown("term-deploy"), doc_frames], facts=["term-deploy", "doc-project"])
    if s.shown("mail-launch-moved"):
        day = s.first_day("mail-launch-moved")
        same_day = [fid for fid in articles if s.shown(fid, day)]
        if same_day:
            moved = same_day[0]
            add("cross-app", f"An email said the {P} launch had moved: to which date, and which Wikipedia article "
                f"did I read on the day that email arrived?",
                f"{value('mail-launch-moved', 'when')}; {value(moved, 'title')}",
                [[value("mail-launch-moved", "date")], [value(moved, "name")]],
                [s.shown("mail-launch-moved"), s.shown(moved, day)], facts=["mail-launch-moved", moved])

    # ---------------------------------------------------------------- knowledge update
    if len(dentists) >= 2:
        new = dentists[-1]
        old = [value(o, "time") for o in dentists[:-1]]
        now = value(new, "time")
        add("knowledge-update", "At what time is my dentist appointment with Dr. Weber, after the latest change in "
            "my calendar?", now, [[now]], [s.shown(new)], [o for o in old if o != now], [*dentists])
    if len(launches) >= 2:
        new = launches[-1]
        weekday, date = value(new, "weekday"), value(new, "date")
        old = [value(o, "date") for o in launches[:-1]]
        evidence = s.shown(new) + s.shown("mail-launch-moved")
        moved_mail = ["mail-launch-moved"] if s.shown("mail-launch-moved") else []
        add("knowledge-update", f"What is the current launch date of Project {P}?", f"{weekday} {date}", [[date]],
            [evidence], [o for o in old if o != date], [*launches, *moved_mail])
    if len(demos) >= 2:
        new = demos[-1]
        date, at = value(new, "date"), value(new, "time")
        old = [value(o, "date") for o in demos[:-1]]
        add("knowledge-update", f"According to the most recent reminder in Slack, when is the {P} demo?",
            f"{date} at {at}", [[date]], [s.shown(new)], [o for o in old if o != date], [*demos])

    # ---------------------------------------------------------------- counting
    if articles:
        add("counting", "How many different Wikipedia articles did I read?",
            f"{len(articles)} ({', '.join(value(fid, 'title') for fid in articles)})",
            [[value(fid, "name")] for fid in articles], [s.shown(fid) for fid in articles], facts=articles)
    if demos:
        dates = [value(fid, "date") for fid in demos]
        add("counting", f"How many different dates did the reminders in Slack give for the {P} demo?",
            f"{len(set(dates))} ({', '.join(dict.fromkeys(dates))})", [[d] for d in dict.fromkeys(dates)],
            [s.shown(fid) for fid in demos], facts=demos)
    events: dict[str, list[str]] = {}  # an event's title as drawn -> frames (a moved event counts once)
    for (_, title), frames in s.items("calendar", "event", lambda e: (e["time"], e["shown"])).items():
        events.setdefault(title, [])
        events[title] += [f for f in frames if f not in events[title]]
    if events:
        names = list(events)
        add("counting", "How many different events does my calendar show this week?",
            f"{len(names)} ({', '.join(names)})",
            [list(dict.fromkeys([t, " ".join(t.split()[:2])])) for t in names], [events[t] for t in names])
    senders = s.items("email", "sender", lambda e: e["name"])
    if senders:
        names = list(senders)
        add("counting", "How many different people sent the emails I opened in Thunderbird?",
            f"{len(names)} ({', '.join(names)})", [[n] for n in names], [senders[n] for n in names])

    # ---------------------------------------------------------------- abstention
    all_text = " ".join(line for e in s.frames for line in e["lines"])  # what was drawn, to pick a stranger
    if s.shown("mail-phone"):
        from mirix_synth.screens import FIRST, LAST

        known = {" ".join(c) for c in s.world["colleagues"]} | {s.world["user"]}
        stranger = next(f"{a} {b}" for a in reversed(FIRST) for b in LAST
                        if f"{a} {b}" not in known and a not in all_text)
        add("abstention", f"What is {stranger}'s phone number?", NOT_PRESENT, [], [],
            [value("mail-phone", "phone")], ["mail-phone"])
    if dentists:
        add("abstention", "When is my appointment with the dermatologist?", NOT_PRESENT, [], [],
            [value(fid, "time") for fid in dentists], dentists)
    if s.shown("chat-password"):
        add("abstention", "What is the production database password?", NOT_PRESENT, [], [],
            [value("chat-password", "password")], ["chat-password"])
    if launches:
        from mirix_synth.screens import PROJECTS

        other = next(name for name, _ in PROJECTS if name != P)
        add("abstention", f"What is the launch date of Project {other}?", NOT_PRESENT, [], [],
            [value(fid, "date") for fid in launches], launches)
    return items
