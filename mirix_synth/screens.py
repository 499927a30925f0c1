"""Synthetic desktop screenshots with planted facts, for tests and the screenshot benchmark.

A seeded simulation of a few working days on one desktop. Every frame is a maximized window of
one of seven apps (browser, editor, terminal, chat, email, document, calendar) drawn with PIL and
a TrueType font at 1920x1080 or larger, under a top bar with a clock. The user visits apps in
turn; while they dwell on a window a frame is captured every 1.5-3 s, and successive frames
differ by nothing, by the mouse pointer or clock, or by real content (a chat message arrives, a
command finishes). Facts are planted in the content and change over the simulated days (a
meeting is rescheduled, a launch date moves). The manifest says what each frame shows: its time,
app, window title, which facts are visible and first appear there, the structured items drawn
on it (calendar events, email senders), and what changed since the previous frame. Every planted
fact carries its structured `values` (a date, a time, a person, a command), so questions and
checks are built from them rather than by parsing the drawn text.

    synth = ScreenSynth(seed=7)
    frames = synth.session(days=3)
    manifest = write_session(frames, "shots/")      # PNGs + manifest.json

Nothing here touches the engine: it produces images and ground truth only. It lives outside the
`mirix_py` package because the engine never needs it.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from PIL import Image, ImageDraw, ImageFont, PngImagePlugin

__all__ = [
    "APPS", "SCENES", "PlantedFact", "ScreenSynth", "SynthFrame", "find_font", "frame_file_name", "load_manifest",
    "session_manifest", "write_session",
]

FONT_DIRS = (
    "/usr/share/fonts/truetype/dejavu",
    "/usr/share/fonts/dejavu",
    "/usr/local/share/fonts",
    "/Library/Fonts",
    "C:/Windows/Fonts",
)
FONT_FILES = {
    (False, False): ("DejaVuSans.ttf", "Arial.ttf", "arial.ttf"),
    (False, True): ("DejaVuSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf"),
    (True, False): ("DejaVuSansMono.ttf", "Courier New.ttf", "cour.ttf"),
    (True, True): ("DejaVuSansMono-Bold.ttf", "Courier New Bold.ttf", "courbd.ttf"),
}


def find_font(*, mono: bool = False, bold: bool = False) -> Path | None:
    """Path of a TrueType font on this machine (DejaVu from Debian's fonts-dejavu-core first)."""
    for folder in FONT_DIRS:
        for name in FONT_FILES[(mono, bold)]:
            path = Path(folder) / name
            if path.is_file():
                return path
    return None


@lru_cache(maxsize=64)
def _font(size: int, mono: bool = False, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = find_font(mono=mono, bold=bold) or find_font(mono=mono) or find_font()
    if path is not None:
        return ImageFont.truetype(str(path), size)
    # Pillow >= 10.1 bundles a scalable default font; OCR works on it, the look is plainer.
    return ImageFont.load_default(size)


# ---------------------------------------------------------------- ground truth


@dataclass(frozen=True)
class PlantedFact:
    """A fact drawn on screen, and where it should end up in memory.

    `text` is the exact line drawn; `memory_type` the memory type it should become; `query` a
    search that should find it; `needle` a short string the memory's text should contain (OCR
    permitting); `secret` the vault value for credentials and contact details; `supersedes` the
    id of the fact this one replaces (a moved meeting, a changed date); `values` the fact's parts
    by name, exactly as drawn (e.g. {"weekday": "Friday", "date": "21 June"} for a launch date).
    """

    id: str
    scene: str
    day: int
    text: str
    memory_type: str
    query: str
    needle: str
    secret: str | None = None
    supersedes: str | None = None
    values: dict[str, str] = field(default_factory=dict, hash=False)

    def value(self, name: str) -> str:
        """One structured value; a KeyError names the fact, so a renamed value fails loudly."""
        try:
            return self.values[name]
        except KeyError:
            raise KeyError(f"planted fact {self.id!r} has no value {name!r} (it has {sorted(self.values)})") from None


@dataclass
class SynthFrame:
    """One captured frame and what it shows."""

    index: int
    captured_at: datetime
    app: str
    window_title: str
    scene: str
    day: int
    change: str  # "new_window" | "content" | "pointer" | "clock" | "none"
    facts: list[str]  # ids of planted facts visible in this frame
    new_facts: list[str]  # ids first visible in this frame
    lines: list[str]  # every text line drawn (reading order), for OCR accuracy checks
    size: tuple[int, int]
    items: list[dict[str, str]] = field(default_factory=list)  # structured things drawn: events, email senders
    render: Callable[[], Image.Image] = field(repr=False, compare=False, default=lambda: Image.new("RGB", (1, 1)))
    duplicate_of: int | None = None  # the frame it repeats when only pointer/clock/nothing changed

    @property
    def expect_duplicate(self) -> bool:
        return self.change in ("none", "pointer", "clock")

    def image(self) -> Image.Image:
        return self.render()

    def manifest_entry(self, file: str | None = None) -> dict[str, Any]:
        entry = {
            "index": self.index, "captured_at": self.captured_at.isoformat(), "app": self.app,
            "window_title": self.window_title, "scene": self.scene, "day": self.day, "change": self.change,
            "expect_duplicate": self.expect_duplicate, "duplicate_of": self.duplicate_of, "facts": self.facts,
            "new_facts": self.new_facts, "size": list(self.size), "lines": self.lines, "items": self.items,
        }
        if file is not None:
            entry["file"] = file
        return entry


SCENES = ("browser", "editor", "terminal", "chat", "email", "document", "calendar")
APPS = {
    "browser": "Firefox",
    "editor": "Visual Studio Code",
    "terminal": "Terminal",
    "chat": "Slack",
    "email": "Thunderbird",
    "document": "LibreOffice Writer",
    "calendar": "Calendar",
}

# ---------------------------------------------------------------- world data (seeded choices)

FIRST = ["Alice", "Priya", "Marco", "Dana", "Tomas", "Keiko", "Omar", "Lena", "Ravi", "Sofia", "Jonas", "Mei"]
LAST = ["Chen", "Natarajan", "Rossi", "Kim", "Novak", "Tanaka", "Haddad", "Weber", "Iyer", "Moreau", "Berg", "Ward"]
COMPANIES = [("Acme Analytics", "acme-analytics.com"), ("Northwind Labs", "northwind-labs.io"),
             ("Bluefin Systems", "bluefin.dev"), ("Copperleaf Health", "copperleaf.health")]
PROJECTS = [("Falcon", "an analytics platform for retail stores"), ("Aurora", "a billing service for clinics"),
            ("Nimbus", "a storage gateway for research data"), ("Orion", "a routing engine for delivery vans")]
ARTICLES = [
    ("Lake Baikal", "Lake Baikal is the deepest lake in the world.", "It holds about a fifth of the fresh surface water on Earth."),
    ("Mount Kilimanjaro", "Mount Kilimanjaro is the highest mountain in Africa.", "Its summit, Uhuru Peak, rises 5,895 metres above sea level."),
    ("The Atacama Desert", "The Atacama Desert is the driest desert in the world.", "Some weather stations there have never recorded rain."),
    ("Lake Titicaca", "Lake Titicaca is the largest lake in South America.", "It lies on the border of Peru and Bolivia."),
    ("The Danube", "The Danube is the second longest river in Europe.", "It flows through ten countries and four capitals."),
    ("Mount Elbrus", "Mount Elbrus is the highest mountain in Europe.", "It is a dormant volcano in the Caucasus."),
]
EVENTS = ["Dentist appointment", "Design review", "1:1 with {boss}", "Quarterly planning", "Team lunch",
          "Vendor call with {vendor}", "Yoga class", "Interview panel"]
DAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
FILLER = ("the report numbers look fine but we should double check the totals before sending the update "
          "to the whole team and keep the notes from today in the shared folder for later review").split()
# Secrets avoid characters OCR confuses (0/O, 1/l/I, 5/S, 8/B) so a test can compare them exactly.
SAFE_ALNUM = "abcdefghjkmnpqrstuvwxyzACDEFGHJKMNPQRTUVWXY234679"


def text_window(*lines: str, width: int = 1000) -> Image.Image:
    """A plain window: a title bar and `lines` in a large font, which Tesseract reads back exactly
    (for tests that need known screen text rather than a realistic desktop)."""
    image = Image.new("RGB", (width, 120 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 40), fill=(40, 90, 160))
    for i, line in enumerate(lines):
        draw.text((24, 80 + 60 * i), line, fill="black", font=_font(34))
    return image


def _ordinal_date(d: datetime) -> str:
    return f"{DAY_NAMES[d.weekday()]} {_day_month(d)}"


def _day_month(d: datetime) -> str:
    return f"{d.day} {d.strftime('%B')}"


# ---------------------------------------------------------------- drawing helpers


class _Painter:
    """Scaled drawing: layout is written in 1080p units and multiplied by the frame's scale."""

    def __init__(self, size: tuple[int, int], *, dry: bool = False) -> None:
        self.w, self.h = size
        self.s = self.h / 1080
        self.dry = dry  # lay out text (for the manifest) without drawing pixels
        self.img = Image.new("RGB", (1, 1) if dry else size, (245, 245, 247))
        self.draw = ImageDraw.Draw(self.img)
        self.items: list[dict[str, str]] = []  # structured things drawn (the manifest's `items`)

    def u(self, v: float) -> int:
        return int(round(v * self.s))

    def _box(self, box: Sequence[float]) -> list[int]:
        """Layout box in 1080p units; a negative start or a non-positive end counts from the far edge."""
        x0, y0, x1, y1 = box
        return [self.u(x0) if x0 >= 0 else self.w + self.u(x0), self.u(y0) if y0 >= 0 else self.h + self.u(y0),
                self.u(x1) if x1 > 0 else self.w + self.u(x1), self.u(y1) if y1 > 0 else self.h + self.u(y1)]

    def rect(self, box: Sequence[float], fill, outline=None) -> None:
        if not self.dry:
            self.draw.rectangle(self._box(box), fill=fill, outline=outline)

    def text(self, xy: tuple[float, float], text: str, size: int = 16, fill=(25, 25, 30), mono: bool = False,
             bold: bool = False) -> None:
        if not self.dry:
            self.draw.text((self.u(xy[0]), self.u(xy[1])), text, font=_font(self.u(size), mono, bold), fill=fill)

    def text_width(self, text: str, size: int = 16, mono: bool = False, bold: bool = False) -> float:
        return _font(self.u(size), mono, bold).getlength(text) / self.s

    def circle(self, center: tuple[float, float], r: float, fill) -> None:
        cx, cy = center
        if not self.dry:
            self.draw.ellipse([self.u(cx - r), self.u(cy - r), self.u(cx + r), self.u(cy + r)], fill=fill)

    def photo(self, box: Sequence[float], rng: random.Random) -> None:
        """A photograph-like block (smooth colour field + grain): pages and chats carry pictures."""
        if self.dry:
            return
        x0, y0, x1, y1 = self._box(box)
        w, h = max(x1 - x0, 1), max(y1 - y0, 1)
        base = [rng.randint(60, 200) for _ in range(3)]
        small = Image.new("RGB", (8, 6))
        small.putdata([tuple(max(0, min(255, c + rng.randint(-60, 60))) for c in base) for _ in range(48)])
        field_ = small.resize((w, h), Image.Resampling.BICUBIC)
        grain = Image.effect_noise((w, h), 18).convert("RGB")
        self.img.paste(Image.blend(field_, grain, 0.12), (x0, y0))

    def pointer(self, xy: tuple[float, float]) -> None:
        if self.dry:
            return
        x, y = xy
        pts = [(0, 0), (0, 17), (4, 13), (7, 20), (10, 19), (7, 12), (12, 12)]
        self.draw.polygon([(self.u(x + px), self.u(y + py)) for px, py in pts], fill=(10, 10, 10),
                          outline=(255, 255, 255))


# ---------------------------------------------------------------- the simulation


@dataclass
class _World:
    user: str
    company: str
    domain: str
    colleagues: list[tuple[str, str]]
    project: str
    project_desc: str
    start: datetime


class ScreenSynth:
    """Seeded generator of desktop screenshot sessions with planted, day-varying facts."""

    def __init__(self, seed: int = 0, *, size: tuple[int, int] = (1920, 1080),
                 start: datetime = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc),
                 interval: tuple[float, float] = (1.5, 3.0)) -> None:
        if size[0] < 1280 or size[1] < 720:
            raise ValueError("synthetic screens are at least 1280x720")
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        self.seed = seed
        self.size = size
        self.interval = interval
        rng = random.Random(seed)
        names = rng.sample([(first, last) for first in FIRST for last in LAST], 8)
        company, domain = rng.choice(COMPANIES)
        project, desc = rng.choice(PROJECTS)
        user = names.pop()
        self.world = _World(user=f"{user[0]} {user[1]}", company=company, domain=domain, colleagues=names,
                            project=project, project_desc=desc, start=start)
        self.facts: dict[str, PlantedFact] = {}
        self._days: dict[int, dict[str, Any]] = {}

    # ------------------------------------------------------------ facts per day

    def _person(self, i: int) -> tuple[str, str, str]:
        first, last = self.world.colleagues[i % len(self.world.colleagues)]
        return first, last, f"{first.lower()}.{last.lower()}@{self.world.domain}"

    def _plant(self, fact: PlantedFact) -> PlantedFact:
        self.facts.setdefault(fact.id, fact)
        return fact

    def day_state(self, day: int) -> dict[str, Any]:
        """What every app shows on a simulated day (cached; facts registered in `self.facts`)."""
        if day in self._days:
            return self._days[day]
        rng = random.Random(f"{self.seed}/day/{day}")
        w = self.world
        date = w.start + timedelta(days=day)
        boss = self._person(0)
        mate = self._person(1 + day % 3)
        vendor = self._person(5)
        state: dict[str, Any] = {"date": date}

        # document: the project overview; its launch date moves on day 2
        launch = (w.start + timedelta(days=11 + (7 if day >= 2 else 0)))
        launch_text = f"Launch date: {_ordinal_date(launch)}"
        doc_facts = [
            self._plant(PlantedFact("doc-project", "document", 0, f"Project {w.project} is {w.project_desc}.",
                                    "semantic", f"what is Project {w.project}", f"Project {w.project}",
                                    values={"project": w.project, "description": w.project_desc,
                                            "owner": f"{boss[0]} {boss[1]}"})),
            self._plant(PlantedFact(f"doc-launch-{launch:%m%d}", "document", 0 if day < 2 else 2, launch_text,
                                    "resource", f"{w.project} launch date", launch.strftime("%B"),
                                    supersedes=None if day < 2 else f"doc-launch-{(launch - timedelta(days=7)):%m%d}",
                                    values={"weekday": DAY_NAMES[launch.weekday()], "date": _day_month(launch)})),
        ]
        state["document"] = {
            "title": f"{w.project} overview.odt",
            "heading": f"Project {w.project} — Overview",
            "paragraphs": [
                doc_facts[0].text + f" It is run by {boss[0]} {boss[1]} at {w.company}.",
                launch_text + ". Owner: " + f"{boss[0]} {boss[1]}.",
                " ".join(rng.choice(FILLER) for _ in range(40)).capitalize() + ".",
                " ".join(rng.choice(FILLER) for _ in range(30)).capitalize() + ".",
            ],
            "facts": [f.id for f in doc_facts],
        }

        # calendar: this week's events; the dentist appointment moves on day 1
        monday = date - timedelta(days=date.weekday())
        events = []
        slots = [(0, "09:30", "Standup"), (1, "11:00", EVENTS[1]), (2, "13:00", EVENTS[2].format(boss=boss[0])),
                 (3, "10:00", EVENTS[5].format(vendor=f"{vendor[0]} {vendor[1]}")), (4, "12:30", EVENTS[4])]
        dentist_day, dentist_time = (1, "15:00") if day < 1 else (3, "16:30")
        slots.append((dentist_day, dentist_time, "Dentist appointment with Dr. Weber"))
        cal_facts = []
        for wd, hhmm, title in slots:
            events.append((wd, hhmm, title))
        dentist_date = monday + timedelta(days=dentist_day)
        fid = f"cal-dentist-{dentist_date:%m%d}"
        cal_facts.append(self._plant(PlantedFact(
            fid, "calendar", 0 if day < 1 else 1,
            f"{dentist_time} Dentist appointment with Dr. Weber", "episodic", "dentist appointment", "Dentist",
            supersedes=None if day < 1 else f"cal-dentist-{monday + timedelta(days=1):%m%d}",
            values={"time": dentist_time, "weekday": DAY_NAMES[dentist_day]})))
        state["calendar"] = {"monday": monday, "events": events, "facts": [f.id for f in cal_facts]}

        # email: one new message a day; day 0 carries a colleague's address and phone
        phone = "+1 415 555 0" + "".join(random.Random(f"{self.seed}/phone").choice("234679") for _ in range(3))
        mails: list[dict[str, Any]] = []
        for d in range(day + 1):
            sender = self._person(2 + d)
            mrng = random.Random(f"{self.seed}/mail/{d}")
            subject = [f"{w.project} kickoff notes", f"{w.project} launch moved", "Expense report",
                       "Offsite agenda"][d % 4]
            body = [
                f"Hi {w.user.split()[0]},",
                f"{sender[0]} {sender[1]} works at {w.company} as a product manager." if d == 0 else
                (f"The {w.project} launch moved to {_ordinal_date(launch)}." if d == 2 else
                 " ".join(mrng.choice(FILLER) for _ in range(14)).capitalize() + "."),
                f"You can reach me at {phone} any time this week." if d == 0 else
                " ".join(mrng.choice(FILLER) for _ in range(12)).capitalize() + ".",
                "Best,", f"{sender[0]}",
            ]
            mails.append({"from": sender, "subject": subject, "body": body, "day": d})
        first_sender = self._person(2)
        mail_facts = [
            self._plant(PlantedFact("mail-address", "email", 0, f"From: {first_sender[0]} {first_sender[1]} <{first_sender[2]}>",
                                    "knowledge_vault", f"{first_sender[0]} email address", "email address",
                                    secret=first_sender[2],
                                    values={"name": f"{first_sender[0]} {first_sender[1]}",
                                            "first": first_sender[0], "email": first_sender[2]})),
        ]
        if day == 0:
            mail_facts.append(self._plant(PlantedFact(
                "mail-phone", "email", 0, f"You can reach me at {phone} any time this week.", "knowledge_vault",
                f"{first_sender[0]} phone number", "phone number", secret=phone,
                values={"person": f"{first_sender[0]} {first_sender[1]}", "phone": phone})))
            mail_facts.append(self._plant(PlantedFact(
                "mail-works", "email", 0, mails[0]["body"][1], "semantic", f"where does {first_sender[0]} work",
                f"{first_sender[0]} {first_sender[1]}",
                values={"person": f"{first_sender[0]} {first_sender[1]}", "company": w.company,
                        "role": "product manager"})))
        if day == 2:
            mail_facts.append(self._plant(PlantedFact(
                "mail-launch-moved", "email", 2, mails[2]["body"][1], "episodic", f"{w.project} launch moved",
                "launch moved", values={"when": _ordinal_date(launch), "date": _day_month(launch)})))
        state["email"] = {"messages": mails, "facts": [f.id for f in mail_facts]}

        # chat: a channel whose messages arrive while the user watches
        crng = random.Random(f"{self.seed}/chat/{day}")
        demo_date = _ordinal_date(date + timedelta(days=2))
        chat = [(mate, "morning! standup notes are in the doc"),
                (boss, f"reminder: {w.project} demo is on {demo_date} at 14:00"),
                (mate, " ".join(crng.choice(FILLER) for _ in range(10)))]
        arriving = []
        chat_facts = [self._plant(PlantedFact(
            f"chat-demo-d{day}", "chat", day, chat[1][1], "episodic", f"{w.project} demo",
            "demo is on", values={"date": demo_date, "time": "14:00"}))]
        if day == 1:
            token = "".join(crng.choice(SAFE_ALNUM) for _ in range(10)) + "-" + "".join(crng.choice(SAFE_ALNUM) for _ in range(4))
            line = f"the staging password is {token}"
            arriving.append((boss, line))
            chat_facts.append(self._plant(PlantedFact("chat-password", "chat", 1, line, "knowledge_vault",
                                                      "staging password", "password", secret=token,
                                                      values={"password": token})))
        arriving.append((mate, f"lunch at {crng.choice(['Luigi', 'Sakura', 'Green Bowl'])} at 12:30?"))
        arriving.append((boss, " ".join(crng.choice(FILLER) for _ in range(9))))
        state["chat"] = {"channel": f"#{w.project.lower()}-team", "messages": chat, "arriving": arriving,
                         "facts": [f.id for f in chat_facts]}

        # terminal: a shell session that grows command by command
        commands = [("git pull --rebase", ["Already up to date."]),
                    ("make test", [f"{rng.randint(80, 140)} passed in {rng.randint(3, 19)}.{rng.randint(0, 9)}s"]),
                    (f"./deploy.sh --env staging --project {w.project.lower()}", ["deployed build "
                                                                                  + str(rng.randint(1000, 9999))])]
        deploy = f"./deploy.sh --env staging --project {w.project.lower()}"
        term_fact = self._plant(PlantedFact(
            "term-deploy", "terminal", 0, f"$ {deploy}", "procedural", f"deploy {w.project} to staging", "deploy.sh",
            values={"command": deploy, "project_flag": f"--project {w.project.lower()}"}))
        state["terminal"] = {"commands": commands, "facts": [term_fact.id]}

        # editor: a config file; day 0 has an API key in it
        key = "sk_live_" + "".join(rng.choice(SAFE_ALNUM) for _ in range(24))
        code = [
            "import os",
            "",
            "from service import create_app",
            "",
            f'PROJECT = "{w.project.lower()}"',
            f'REGION = "{rng.choice(["eu-west-1", "us-east-2", "ap-south-1"])}"',
        ]
        ed_facts = []
        if day == 0:
            code.append(f'STRIPE_KEY = "{key}"')
            ed_facts.append(self._plant(PlantedFact("editor-key", "editor", 0, f'STRIPE_KEY = "{key}"',
                                                    "knowledge_vault", "stripe API key", "API key", secret=key,
                                                    values={"key": key})))
        else:
            code.append('STRIPE_KEY = os.environ["STRIPE_KEY"]')
        code += ['TIMEOUT_SECONDS = 30', 'MAX_RETRIES = 5', "", "",
                 "def database_url() -> str:", '    host = os.environ.get("DB_HOST", "localhost")',
                 '    return f"postgresql://app@{host}/" + PROJECT', "", "",
                 "def main():", "    app = create_app(PROJECT, region=REGION)", "    app.config.timeout = TIMEOUT_SECONDS",
                 "    app.config.retries = MAX_RETRIES", "    app.run(port=8080)", "", "",
                 'if __name__ == "__main__":', "    main()"]
        state["editor"] = {"file": "settings.py", "code": code, "facts": [f.id for f in ed_facts]}

        # browser: a reference article, a different one each day
        title, lead, more = ARTICLES[(self.seed + day) % len(ARTICLES)]
        # the semantic name drops a leading article: "The Danube is ..." is about "Danube"
        art = self._plant(PlantedFact(f"web-{title.lower().replace(' ', '-')}", "browser", day, lead, "semantic",
                                      title, title.removeprefix("The "),
                                      values={"title": title, "name": title.removeprefix("The "),
                                              "is": lead.rstrip(".").split(" is ", 1)[1]}))
        state["browser"] = {"title": title, "url": f"https://en.wikipedia.org/wiki/{title.replace(' ', '_')}",
                            "paragraphs": [lead + " " + more,
                                           " ".join(rng.choice(FILLER) for _ in range(45)).capitalize() + ".",
                                           " ".join(rng.choice(FILLER) for _ in range(35)).capitalize() + "."],
                            "facts": [art.id]}
        self._days[day] = state
        return state

    # ------------------------------------------------------------ scene rendering

    def window_title(self, scene: str, day: int) -> str:
        st = self.day_state(day)
        return {
            "browser": f"{st['browser']['title']} - Wikipedia — Mozilla Firefox",
            "editor": f"{st['editor']['file']} — {self.world.project.lower()}-service — Visual Studio Code",
            "terminal": f"{self.world.user.split()[0].lower()}@laptop: ~/{self.world.project.lower()}",
            "chat": f"{st['chat']['channel']} | {self.world.company} — Slack",
            "email": f"Inbox — {self.world.user.split()[0].lower()}@{self.world.domain} — Thunderbird",
            "document": f"{st['document']['title']} — LibreOffice Writer",
            "calendar": f"Calendar — week of {st['calendar']['monday']:%d %B %Y}",
        }[scene]

    def _frame(self, scene: str, day: int, when: datetime, progress: int, pointer: tuple[int, int],
               dry: bool = False) -> tuple[Image.Image, list[str], list[dict[str, str]]]:
        p = _Painter(self.size, dry=dry)
        lines: list[str] = []
        dark = scene in ("editor", "terminal")
        # top bar: activities, app name, clock
        p.rect((0, 0, 0, 30), fill=(28, 28, 32))
        p.text((14, 6), "Activities", 15, fill=(235, 235, 235))
        p.text((140, 6), APPS[scene], 15, fill=(235, 235, 235), bold=True)
        clock = when.strftime("%a %d %b  %H:%M")
        p.text((p.w / p.s / 2 - 70, 6), clock, 15, fill=(235, 235, 235))
        lines += ["Activities", APPS[scene], clock]
        # window title bar
        title = self.window_title(scene, day)
        p.rect((0, 30, 0, 70), fill=(52, 52, 58) if dark else (222, 222, 226))
        p.text((20, 40), title, 16, fill=(230, 230, 230) if dark else (40, 40, 45), bold=True)
        lines.append(title)
        getattr(self, f"_draw_{scene}")(p, day, progress, lines)
        p.pointer(pointer)
        return p.img, lines, p.items

    def _draw_document(self, p: _Painter, day: int, progress: int, lines: list[str]) -> None:
        st = self.day_state(day)["document"]
        p.rect((0, 70, 0, 110), fill=(236, 236, 240))
        p.text((20, 80), "File   Edit   View   Insert   Format   Styles   Table   Tools", 15, fill=(60, 60, 60))
        p.rect((360, 120, 1560, 0), fill=(255, 255, 255))
        p.text((440, 170), st["heading"], 28, bold=True)
        lines.append(st["heading"])
        rng = random.Random(f"{self.seed}/docfill/{day}")
        paragraphs = st["paragraphs"] + [_sentence(rng, rng.randint(25, 45)) for _ in range(4)]
        y = 240
        for para in paragraphs:
            wrapped = _wrap(p, para, 1040, 18)
            if y + 30 * len(wrapped) > 1000:
                break
            for line in wrapped:
                p.text((440, y), line, 18)
                lines.append(line)
                y += 30
            y += 22
        footer = f"Page 1 of 3    {sum(len(x.split()) for x in paragraphs)} words    English (USA)"
        p.text((20, p.h / p.s - 26), footer, 14, fill=(70, 70, 70))
        lines.append(footer)

    def _draw_calendar(self, p: _Painter, day: int, progress: int, lines: list[str]) -> None:
        st = self.day_state(day)["calendar"]
        monday: datetime = st["monday"]
        p.rect((0, 70, 280, 0), fill=(240, 240, 244))
        p.text((24, 96), monday.strftime("%B %Y"), 20, bold=True)
        lines.append(monday.strftime("%B %Y"))
        p.text((24, 136), "Mo Tu We Th Fr Sa Su", 15, mono=True, fill=(90, 90, 90))
        first = monday.replace(day=1)
        cells = ["  "] * first.weekday() + [f"{d:>2}" for d in range(1, 31)]
        for r in range(0, len(cells), 7):
            row = " ".join(cells[r:r + 7])
            p.text((24, 162 + (r // 7) * 24), row, 15, mono=True)
            lines.append(row.strip())
        for i, cal in enumerate(["My calendars", self.world.user, "Holidays", f"{self.world.company}", "Birthdays"]):
            p.text((24, 340 + i * 30), cal, 16, bold=i == 0)
            lines.append(cal)
        col_w = (p.w / p.s - 320) / 5
        for i in range(5):
            d = monday + timedelta(days=i)
            x = 300 + i * col_w
            head = f"{DAY_NAMES[i][:3]} {d.day} {d:%b}"
            p.text((x + 10, 90), head, 18, bold=True)
            lines.append(head)
            p.rect((x, 125, x + 1, 0), fill=(210, 210, 215))
        for wd, hhmm, title in sorted(st["events"], key=lambda e: (e[1], e[0])):
            if wd > 4:
                continue
            hour, minute = map(int, hhmm.split(":"))
            y = 140 + (hour - 8 + minute / 60) * 85
            x = 300 + wd * col_w
            p.rect((x + 6, y, x + col_w - 8, y + 70), fill=(206, 226, 250))
            p.text((x + 14, y + 8), hhmm, 16, bold=True)
            words = title
            wrapped = _wrap(p, words, col_w - 40, 16)
            for j, line in enumerate(wrapped[:2]):
                p.text((x + 14, y + 30 + j * 20), line, 16)
            lines.append(f"{hhmm} {' '.join(wrapped[:2])}")
            p.items.append({"kind": "event", "time": hhmm, "title": title, "shown": " ".join(wrapped[:2]),
                            "weekday": DAY_NAMES[wd]})

    def _draw_email(self, p: _Painter, day: int, progress: int, lines: list[str]) -> None:
        st = self.day_state(day)["email"]
        msgs = list(reversed(st["messages"]))
        p.rect((0, 70, 620, 0), fill=(248, 248, 250))
        p.rect((620, 70, 623, 0), fill=(196, 196, 204))  # pane divider
        rng = random.Random(f"{self.seed}/inbox")
        older = [(who, subj.format(p=self.world.project.lower(), P=self.world.project.upper()[:4],
                                   n=rng.randint(100, 999)))
                 for who, subj in rng.sample(NEWSLETTERS, len(NEWSLETTERS))]
        listing = [(f"{m['from'][0]} {m['from'][1]}", m["subject"]) for m in msgs] + older
        for i, (sender, subject) in enumerate(listing[:13]):
            y = 90 + i * 70
            if i == 0:
                p.rect((0, y - 10, 620, y + 58), fill=(214, 228, 248))
            p.text((24, y), sender, 16, bold=True)
            p.text((24, y + 26), subject, 16)
            lines += [sender, subject]
        open_ = msgs[0] if progress == 0 or len(msgs) == 1 else msgs[min(progress, len(msgs) - 1)]
        first = st["messages"][0]
        # the open message; the first-day message (with the planted address) is always pinned below
        y = 100
        for m in ([open_] if open_ is first else [open_, first]):
            p.items.append({"kind": "sender", "name": f"{m['from'][0]} {m['from'][1]}", "email": m["from"][2]})
            head = [f"From: {m['from'][0]} {m['from'][1]} <{m['from'][2]}>",
                    f"To: {self.world.user} <{self.world.user.split()[0].lower()}@{self.world.domain}>",
                    f"Subject: {m['subject']}"]
            for line in head:
                p.text((660, y), line, 17, bold=line.startswith("Subject"))
                lines.append(line)
                y += 30
            y += 14
            for para in m["body"]:
                for line in _wrap(p, para, 1150, 17):
                    p.text((660, y), line, 17)
                    lines.append(line)
                    y += 28
            y += 40
            p.rect((660, y - 20, 1860, y - 19), fill=(210, 210, 215))

    def _draw_chat(self, p: _Painter, day: int, progress: int, lines: list[str]) -> None:
        st = self.day_state(day)["chat"]
        p.rect((0, 70, 300, 0), fill=(63, 14, 64))
        for i, ch in enumerate([st["channel"], "#general", "#random", "#support", "#incidents", "#design",
                                "Direct messages", self.world.user]):
            p.text((24, 96 + i * 34), ch, 17, fill=(255, 255, 255), bold=i == 0)
            lines.append(ch)
        p.text((340, 90), st["channel"], 22, bold=True)
        lines.append(st["channel"])
        hrng = random.Random(f"{self.seed}/chathist/{day}")
        history = [(self._person(3 + i), _sentence(hrng, hrng.randint(6, 12))) for i in range(3)]
        msgs = history + st["messages"] + st["arriving"][:progress]
        y = 150
        base = self.world.start + timedelta(days=day, hours=1)
        for i, (who, text) in enumerate(msgs):
            name = f"{who[0]} {who[1]}"
            stamp = (base + timedelta(minutes=7 * i)).strftime("%H:%M")
            p.circle((365, y + 22), 20, fill=_avatar_colour(name))
            p.text((400, y), f"{name}  {stamp}", 17, bold=True)
            p.text((400, y + 28), text, 17)
            lines += [f"{name}  {stamp}", text]
            y += 78
        p.rect((330, -80, -30, -24), fill=(255, 255, 255), outline=(180, 180, 185))
        p.text((350, p.h / p.s - 66), f"Message {st['channel']}", 17, fill=(140, 140, 140))

    def _draw_terminal(self, p: _Painter, day: int, progress: int, lines: list[str]) -> None:
        st = self.day_state(day)["terminal"]
        p.rect((0, 70, 0, 0), fill=(24, 24, 28))
        prompt = f"{self.world.user.split()[0].lower()}@laptop:~/{self.world.project.lower()}$"
        y = 90
        hist = [("ls", ["Makefile  README.md  deploy.sh  requirements.txt  service  tests"]),
                ("git log --oneline -5", [f"{h} {m}" for h, m in zip(
                    ["9f3c2a1", "4be81d0", "c07e5f9", "2d1a9b4", "7a6e0c3"],
                    ["Fix retry on timeout", "Add region setting", "Bump dependencies", "Split settings module",
                     "Initial import"])]),
                ("git status", ["On branch main", "Your branch is up to date with 'origin/main'.",
                                "nothing to commit, working tree clean"])]
        shown = hist + st["commands"][: 1 + progress]
        for cmd, out in shown:
            line = f"{prompt} {cmd}"
            p.text((20, y), line, 17, fill=(140, 230, 140), mono=True)
            lines.append(line)
            y += 28
            for o in out:
                p.text((20, y), o, 17, fill=(220, 220, 220), mono=True)
                lines.append(o)
                y += 28
        p.text((20, y), prompt, 17, fill=(140, 230, 140), mono=True)
        lines.append(prompt)

    def _draw_editor(self, p: _Painter, day: int, progress: int, lines: list[str]) -> None:
        st = self.day_state(day)["editor"]
        p.rect((0, 70, 0, 0), fill=(30, 30, 36))
        p.rect((0, 70, 260, 0), fill=(37, 37, 44))
        p.rect((260, 70, 263, 0), fill=(70, 70, 80))  # pane divider
        for i, name in enumerate(["settings.py", "service.py", "models.py", "routes.py", "storage.py", "tests/",
                                  "README.md", "Makefile", "requirements.txt", "deploy.sh"]):
            p.text((20, 90 + i * 28), name, 16, fill=(200, 200, 205))
            lines.append(name)
        p.rect((260, 70, 0, 108), fill=(45, 45, 52))
        p.text((280, 80), st["file"], 16, fill=(255, 255, 255))
        code = st["code"] + (["", "# TODO: rotate keys every quarter"] if progress else [])
        for i, line in enumerate(code):
            y = 124 + i * 27
            p.text((280, y), f"{i + 1:>3}", 17, fill=(110, 110, 120), mono=True)
            p.text((340, y), line, 17, fill=(230, 230, 230), mono=True)
            if line.strip():
                lines.append(line)
        p.rect((0, -28, 0, 0), fill=(0, 100, 180))
        p.text((20, p.h / p.s - 24), "Python 3.12   UTF-8   LF   Ln 7, Col 1", 14, fill=(255, 255, 255))

    def _draw_browser(self, p: _Painter, day: int, progress: int, lines: list[str]) -> None:
        st = self.day_state(day)["browser"]
        rng = random.Random(f"{self.seed}/photo/{day}")
        p.rect((0, 70, 0, 150), fill=(240, 240, 244))
        p.rect((120, 84, 1500, 116), fill=(255, 255, 255), outline=(200, 200, 205))
        p.text((140, 90), st["url"], 16, fill=(40, 40, 40))
        lines.append(st["url"])
        p.rect((0, 150, 0, 0), fill=(255, 255, 255))
        p.text((300, 180), st["title"], 34, bold=True)
        lines.append(st["title"])
        p.text((300, 232), "From Wikipedia, the free encyclopedia", 15, fill=(90, 90, 90))
        p.photo((1340, 290, 1700, 560), rng)
        for i, item in enumerate(["Contents", "(Top)", "Geography", "History", "Ecology", "Climate", "Economy",
                                  "See also", "References", "External links"]):
            p.text((40, 290 + i * 30), item, 16, bold=i == 0, fill=(30, 30, 30) if i == 0 else (50, 90, 170))
            lines.append(item)
        infobox = [f"Coordinates {rng.randint(10, 60)}°N {rng.randint(10, 120)}°E", f"Area {rng.randint(1000, 90000):,} km²",
                   f"Elevation {rng.randint(100, 5000):,} m", f"Countries {rng.randint(1, 10)}"]
        for i, item in enumerate(infobox):
            p.text((1340, 580 + i * 28), item, 15)
            lines.append(item)
        frng = random.Random(f"{self.seed}/webfill/{day}")
        y = 290
        for para in st["paragraphs"] + [_sentence(frng, frng.randint(30, 50)) for _ in range(3)]:
            for line in _wrap(p, para, 1000, 18):
                p.text((300, y), line, 18)
                lines.append(line)
                y += 30
            y += 20

    # ------------------------------------------------------------ sessions

    def session(self, days: int = 3, *, visits_per_day: int | None = None, dwell: tuple[int, int] = (3, 7),
                scenes: Sequence[str] = SCENES) -> list[SynthFrame]:
        """Frames of `days` simulated working days; frames render lazily (`frame.image()`)."""
        if days < 1:
            raise ValueError("days must be >= 1")
        unknown = set(scenes) - set(SCENES)
        if unknown:
            raise ValueError(f"unknown scenes: {sorted(unknown)}")
        rng = random.Random(f"{self.seed}/session")
        frames: list[SynthFrame] = []
        for day in range(days):
            self.day_state(day)
            when = self.world.start + timedelta(days=day, minutes=rng.randint(0, 20))
            order = list(scenes)
            rng.shuffle(order)
            if visits_per_day is not None:
                order = (order * (visits_per_day // max(len(order), 1) + 1))[:visits_per_day]
            seen_today: set[str] = set()
            for scene in order:
                frames.extend(self._visit(scene, day, when, rng, rng.randint(*dwell), len(frames), seen_today))
                when = frames[-1].captured_at + timedelta(minutes=rng.randint(2, 25), seconds=rng.randint(0, 59))
        return frames

    def _visit(self, scene: str, day: int, start: datetime, rng: random.Random, count: int, first_index: int,
               seen_today: set[str]) -> list[SynthFrame]:
        st = self.day_state(day)[scene]
        max_progress = {"chat": len(st.get("arriving", [])), "terminal": len(st.get("commands", [])) - 1,
                        "editor": 1, "email": 0}.get(scene, 0)
        frames: list[SynthFrame] = []
        progress = 0
        pointer = (rng.randint(400, 1700), rng.randint(200, 900))
        when = start
        last_kept: int | None = None
        prev_minute = None
        for k in range(count):
            if k == 0:
                change = "new_window"
            else:
                when = when + timedelta(seconds=round(rng.uniform(*self.interval), 2))
                roll = rng.random()
                if progress < max_progress and roll < 0.45:
                    progress += 1
                    change = "content"
                elif roll < 0.75:
                    pointer = (pointer[0] + rng.randint(-300, 300), pointer[1] + rng.randint(-200, 200))
                    pointer = (min(max(pointer[0], 320), 1800), min(max(pointer[1], 160), 1000))
                    change = "pointer"
                else:
                    change = "none"
                if change in ("pointer", "none") and when.strftime("%H:%M") != prev_minute:
                    change = "clock" if change == "none" else change
            prev_minute = when.strftime("%H:%M")
            index = first_index + k
            render = _Renderer(self, scene, day, when, progress, pointer)
            _, lines, items = self._frame(scene, day, when, progress, pointer, dry=True)
            if change in ("new_window", "content"):
                last_kept = index
            shown = " ".join(lines)
            facts = [fid for fid in st["facts"] if self.facts[fid].text in shown]
            new = [fid for fid in facts if fid not in seen_today]
            seen_today.update(new)
            frames.append(SynthFrame(
                index=index, captured_at=when, app=APPS[scene], window_title=self.window_title(scene, day),
                scene=scene, day=day, change=change, facts=facts, new_facts=new, lines=list(lines),
                size=self.size, items=items, render=render, duplicate_of=None if change in ("new_window", "content") else last_kept,
            ))
        return frames

    def frame(self, scene: str, day: int = 0, *, progress: int = 0, when: datetime | None = None,
              pointer: tuple[int, int] = (960, 540)) -> Image.Image:
        """One screen of `scene` on `day`, for tests that need a single image."""
        if scene not in SCENES:
            raise ValueError(f"unknown scene {scene!r}; one of {SCENES}")
        when = when or self.world.start + timedelta(days=day, hours=1)
        return self._frame(scene, day, when, progress, pointer)[0]


class _Renderer:
    """Picklable, lazy rendering of one frame (sessions of hundreds of frames stay small)."""

    def __init__(self, synth: ScreenSynth, scene: str, day: int, when: datetime, progress: int,
                 pointer: tuple[int, int]) -> None:
        self.synth, self.scene, self.day, self.when, self.progress, self.pointer = synth, scene, day, when, progress, pointer

    def __call__(self) -> Image.Image:
        return self.synth._frame(self.scene, self.day, self.when, self.progress, self.pointer)[0]


def _wrap(p: _Painter, text: str, width: float, size: int) -> list[str]:
    out: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and p.text_width(trial, size) > width:
            out.append(line)
            line = word
        else:
            line = trial
    if line:
        out.append(line)
    return out


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(words)).capitalize() + "."


NEWSLETTERS = [("GitHub", "[{p}] 3 new pull requests need review"), ("Jira", "{P}-{n} moved to In Progress"),
               ("HR Team", "Benefits enrolment closes Friday"), ("IT Service Desk", "Scheduled VPN maintenance"),
               ("Travel Desk", "Your itinerary has changed"), ("Confluence", "{P} space weekly digest"),
               ("Payroll", "Your payslip is available"), ("Facilities", "Parking garage closed on Saturday"),
               ("Calendar", "Invitation: {P} retro"), ("Notion", "Comments on {P} roadmap")]


def _avatar_colour(name: str) -> tuple[int, int, int]:
    h = sum(ord(c) * (i + 1) for i, c in enumerate(name))
    return (60 + h % 150, 60 + (h // 7) % 150, 60 + (h // 49) % 150)


# ---------------------------------------------------------------- files


def write_session(frames: Sequence[SynthFrame], out_dir: str | Path, *, synth: ScreenSynth | None = None,
                  metadata: bool = True, progress: Callable[[int], None] | None = None) -> Path:
    """Write frames as PNGs named by capture time, plus manifest.json; returns the manifest path.

    With `metadata`, each PNG also carries text chunks `mirix:captured_at`, `mirix:app` and
    `mirix:window_title` (what `mirix ingest-screenshots` reads before falling back to the name).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for frame in frames:
        name = frame_file_name(frame)
        info = PngImagePlugin.PngInfo()
        if metadata:
            info.add_text("mirix:captured_at", frame.captured_at.isoformat())
            info.add_text("mirix:app", frame.app)
            info.add_text("mirix:window_title", frame.window_title)
        frame.image().save(out / name, format="PNG", pnginfo=info, optimize=False, compress_level=6)
        names.append(name)
        if progress:
            progress(1)
    manifest = session_manifest(frames, synth=synth, files=names)
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def frame_file_name(frame: SynthFrame) -> str:
    """The PNG name `write_session` gives a frame: its capture time in UTC, to the millisecond."""
    stamp = frame.captured_at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S.%f")[:-3] + "Z"
    return f"screenshot_{stamp}.png"


def session_manifest(frames: Sequence[SynthFrame], *, synth: ScreenSynth | None = None,
                     files: Sequence[str] | None = None) -> dict[str, Any]:
    """The manifest `write_session` writes, built in memory (`files`: one name per frame, or none).

    Besides frames and facts it names the simulated world (`world`: user, company, domain,
    project and its description, colleagues as [first, last], start time), which question
    generators need to word questions without parsing fact texts.
    """
    if files is not None and len(files) != len(frames):
        raise ValueError("one file name per frame")
    entries = [f.manifest_entry(files[i] if files is not None else None) for i, f in enumerate(frames)]
    world = None
    if synth is not None:
        w = synth.world
        world = {"user": w.user, "company": w.company, "domain": w.domain, "project": w.project,
                 "project_desc": w.project_desc, "colleagues": [list(c) for c in w.colleagues],
                 "start": w.start.isoformat()}
    return {
        "generator": "mirix_synth.screens",
        "seed": synth.seed if synth else None,
        "user": synth.world.user if synth else None,
        "world": world,
        "frames": entries,
        "facts": {fid: asdict(f) for fid, f in (synth.facts.items() if synth else [])},
    }


def load_manifest(path: str | Path) -> dict[str, Any]:
    """Read a manifest.json written by `write_session` (facts as PlantedFact)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    data["facts"] = {fid: PlantedFact(**f) for fid, f in data.get("facts", {}).items()}
    return data


def iter_images(frames: Sequence[SynthFrame]) -> Iterator[tuple[SynthFrame, Image.Image]]:
    for frame in frames:
        yield frame, frame.image()
