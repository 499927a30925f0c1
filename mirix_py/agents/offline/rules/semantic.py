"""Simple facts about named things for semantic memory in offline mode.

Only copular or relational statements about a capitalised entity are taken ("Bob is my brother",
"my sister Anna", "Acme was founded in 1999"). A capitalised word at the start of a sentence is
usually just a capitalised common word ("Painting is a great outlet"), so single sentence-initial
words only count as names when the text also uses them capitalised mid-sentence, or when the
relation itself implies a person ("is my sister", "works at", "lives in", "was born in").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mirix_py.text.words import is_sentence_start

__all__ = ["FactDraft", "extract_facts"]

MAX_SUMMARY_CHARS = 160


@dataclass(frozen=True)
class FactDraft:
    """A fact keyed by the entity it is about."""

    name: str
    summary: str


_RELATIONS = (
    "best friend|friend|boyfriend|girlfriend|partner|fiance|fiancé|fiancee|fiancée|husband|wife|"
    "spouse|brother|sister|sibling|mom|mum|mother|dad|father|stepmom|stepmother|stepdad|stepfather|"
    "son|daughter|stepson|stepdaughter|kid|child|baby|grandma|grandmother|granny|grandpa|"
    "grandfather|grandson|granddaughter|aunt|uncle|cousin|niece|nephew|roommate|flatmate|"
    "housemate|neighbor|neighbour|boss|manager|coworker|co-worker|colleague|teammate|classmate|"
    "mentor|teacher|coach|therapist|doctor|landlord|landlady|lodger|tenant|roomie|bff|buddy|pal|dog|cat|puppy|kitten|pet|horse|"
    "bird|rabbit|hamster|turtle|parrot|ex|ex-husband|ex-wife|ex-boyfriend|ex-girlfriend|"
    "brother-in-law|sister-in-law|mother-in-law|father-in-law|son-in-law|daughter-in-law|"
    "godmother|godfather|goddaughter|godson|bestie|sweetheart|twin|co-founder|cofounder"
)
_ADJ_WORDS = (
    r"(?:best|older|younger|big|little|baby|elder|oldest|youngest|eldest|new|old|dear|dearest|late|"
    r"lovely|amazing|wonderful|closest|close|good|twin)"
)
_ADJ = rf"(?:{_ADJ_WORDS}\s+)"

_WORD = r"(?:[A-Z][a-z]+(?:['’][A-Z][a-z]+)?|[A-Z]{2,6}(?![a-z]))"
_NAME = rf"(?P<name>{_WORD}(?:[ -]{_WORD}){{0,3}})"

_EXCLUDED = frozenset(
    """
    I I'm I've I'd I'll You You're We We're They They're He He's She She's It It's Its This That
    These Those There There's Here Here's Hey Hi Hello Thanks Thank Yes No Yeah Yep Nope Oh Wow
    Well So But And Or If When Where What Why How Who Whom Whose Which While Also Just Maybe
    Really Sure Okay Ok OK Cool Great Good Nice Awesome Amazing Sounds Sound Glad Love Haha Lol
    Omg Aww Ah Ahh Ugh Hmm Uh Um Please Sorry Congrats Congratulations Cheers Bye Anyway Btw
    The A An My Your Our Their His Her Its Mine Yours Every Everyone Everybody Everything
    Someone Somebody Something Nothing Nobody Anyone Anybody Anything All Some Any Each Both
    Today Tomorrow Yesterday Tonight Now Then Life Family Mom Dad Mum Mother Father Grandma
    Grandpa Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April
    May June July August September October November December Christmas Easter Thanksgiving
    God Lord Jesus Not Never Always Sometimes Once After Before Since Until Because Though
    Although Still Even Only Plus Let Let's Lets Mr Mrs Ms Dr Sir Madam Man Dude Bro Guys Buddy
    Being Having Getting Going Doing Making Taking Seeing Trying Working Living Learning
    One Two Three Four Five Six Seven Eight Nine Ten Eleven Twelve Twenty Thirty Forty Fifty Sixty Seventy Eighty
    Ninety Hundred Thousand First Second Third Last Next Half Most Many Few
    """.split()
)

_END_PUNCT = ".!?"


def _is_sentence_start(text: str, pos: int) -> bool:
    return is_sentence_start(text, pos, _END_PUNCT)

_COPULA = re.compile(
    rf"(?<![\w'’]){_NAME}\s+(?P<verb>is|was)\s+(?=(?P<rest>(?:a|an|the)\s+[^.!?\n;]{{1,240}}))"
)
_IS_MY = re.compile(
    rf"(?<![\w'’]){_NAME}\s+(?:is|was|has\s+been)\s+(?:my|our)\s+{_ADJ}*(?P<rel>{_RELATIONS})\b(?!-|['’]s\b)"
)
_MY_REL_NAME = re.compile(
    rf"(?<![\w'’])(?i:my|our)\s+{_ADJ}*(?P<rel>(?i:{_RELATIONS}))(?!-),?\s+{_NAME}(?=['’]s\b|[^\w'’]|$)"
)
_WORKS = re.compile(
    rf"(?<![\w'’]){_NAME}\s+(?:now\s+|currently\s+|still\s+)?(?P<verb>works|worked|is\s+working)\s+(?P<prep>at|as|for)\s+(?=(?P<rest>[^.!?\n;]{{1,240}}))"
)
_LIVES = re.compile(
    rf"(?<![\w'’]){_NAME}\s+(?:now\s+|currently\s+|still\s+)?(?P<verb>lives|lived|is\s+living)\s+in\s+(?=(?P<rest>[^.!?\n;]{{1,240}}))"
)
_FOUNDED = re.compile(
    rf"(?<![\w'’]){_NAME}\s+(?P<verb>was\s+(?:founded|born|established|created|started|built))\s+(?P<prep>in|on)\s+(?=(?P<rest>[^.!?\n;]{{1,240}}))"
)

_CUT = re.compile(
    r"(?i:,|\s+(?:but|because|since|so|when|while|although|though|which|and\s+(?:i|he|she|they|we|it|"
    r"you|my|his|her|their|that|this|then|so))\b|\s+-\s|\s+—)|\s+and\s+(?=[A-Z])"
)
_TRAILING = re.compile(r"(?i)(?:\s+(?:too|now|though|lol|haha|and|or|the|a|an|of|to|in|at|for|with))+$")
_BAD_COPULA_REST = re.compile(
    r"(?i)^(?:a|an|the)\s+(?:bit|little|lot|few|couple|kind|sort|way|thing|time|moment|reason|"
    r"one|same|best\s+(?:part|thing|way)|only\s+(?:one|way|thing))\b"
    r"|^(?:a|an|the)\s+(?:[\w-]+\s+){1,2}(?:I|we)\s"  # "Azul is the board game I love most": the speaker's taste
)


def _clip(rest: str) -> str:
    m = _CUT.search(rest)
    if m:
        rest = rest[: m.start()]
    rest = rest.strip().strip("\"'“”‘’").strip()
    prev = None
    while prev != rest:
        prev = rest
        rest = _TRAILING.sub("", rest).strip()
    words = rest.split()
    if len(words) > 12:
        rest = " ".join(words[:12])
    return rest


def _possessor(speaker: str | None) -> str:
    return f"{speaker}'s" if speaker else "the speaker's"


def _mid_sentence_capitals(text: str) -> set[str]:
    """Capitalised words that occur after the start of a sentence: the text treats them as names."""
    names = set()
    for m in re.finditer(r"(?<![\w'’])[A-Z][a-z]+", text):
        if not _is_sentence_start(text, m.start()):
            names.add(m.group())
    return names


def _valid_name(name: str, text: str, start: int, strong: bool, known: set[str]) -> str | None:
    """Clean the captured name and decide whether it can be an entity here; None if not."""
    words = name.split()
    while words and words[0] in _EXCLUDED:
        words.pop(0)
    if not words:
        return None
    if any(w in _EXCLUDED for w in words):
        # "Bob And Alice" style runs are rare; a function word inside means a bad capture.
        words = words[: next(i for i, w in enumerate(words) if w in _EXCLUDED)]
        if not words:
            return None
    name = " ".join(words)
    offset = text.find(name, start)
    before = text[max(0, offset - 12):max(offset, 0)]
    if not strong and re.search(r"\b(?:my|your|his|her|our|their|its)\s+$", before):
        return None  # "my Zen is ...": a possessed common noun, not a named entity
    if not strong and len(words) == 1 and re.search(r"\b(?:the|a|an)\s+$", before):
        return None
    sentence_initial = _is_sentence_start(text, offset if offset >= 0 else start)
    if len(words) == 1 and sentence_initial and not strong:
        word = words[0]
        if word not in known and not word.isupper():
            return None
    if len(words) == 1 and words[0].endswith("ing") and words[0] not in known:
        return None
    return name


def extract_facts(text: str, speaker: str | None = None) -> list[FactDraft]:
    """Return simple facts about named entities in `text`, deduplicated, in text order.

    `speaker` (the message author) resolves "my": "my sister Anna" becomes "Anna is Mel's sister".
    """
    if not text or not text.strip():
        return []
    known = _mid_sentence_capitals(text)
    found: list[tuple[int, FactDraft]] = []
    owner = _possessor(speaker)
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, name: str, summary: str) -> None:
        summary = " ".join(summary.split())
        if len(summary) > MAX_SUMMARY_CHARS:
            summary = summary[: MAX_SUMMARY_CHARS - 1].rsplit(" ", 1)[0] + "…"
        found.append((start, FactDraft(name=name, summary=summary)))
        taken.append((start, end))

    for m in _IS_MY.finditer(text):
        name = _valid_name(m.group("name"), text, m.start("name"), True, known)
        if name and not (speaker and name == speaker):
            add(m.start(), m.end(), name, f"{name} is {owner} {_relation_text(m)}")
    for m in _MY_REL_NAME.finditer(text):
        name = _valid_name(m.group("name"), text, m.start("name"), True, known)
        if name and not (speaker and name == speaker):
            add(m.start(), m.end(), name, f"{name} is {owner} {_relation_text(m)}")
    for pattern, strong in ((_WORKS, True), (_LIVES, True), (_FOUNDED, True)):
        for m in pattern.finditer(text):
            name = _valid_name(m.group("name"), text, m.start("name"), strong, known)
            rest = _clip(m.group("rest"))
            if not name or not rest or re.match(r"(?i)^(?:it|this|that|home|all|the\s+moment)\b", rest):
                continue
            verb = " ".join(m.group("verb").split())
            prep = m.groupdict().get("prep") or "in"
            add(m.start(), m.end(), name, f"{name} {verb} {prep} {rest}")
    for m in _COPULA.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        name = _valid_name(m.group("name"), text, m.start("name"), False, known)
        rest = _clip(m.group("rest"))
        if not name or not rest or _BAD_COPULA_REST.match(rest) or len(rest.split()) < 2:
            continue
        add(m.start(), m.end(), name, f"{name} {m.group('verb')} {rest}")

    found.sort(key=lambda f: f[0])
    seen: set[tuple[str, str]] = set()
    facts: list[FactDraft] = []
    for _, fact in found:
        key = (fact.name.lower(), fact.summary.lower())
        if key not in seen:
            seen.add(key)
            facts.append(fact)
    return facts


def _relation_text(m: re.Match[str]) -> str:
    """The relation as written, adjectives included ("older brother"), lowercased."""
    whole = m.group(0)
    rel = m.group("rel")
    rel_at = whole.lower().find(rel.lower())
    lead = re.search(rf"(?i)(?:my|our)\s+((?:{_ADJ_WORDS}\s+)*)$", whole[:rel_at])
    adjectives = lead.group(1) if lead else ""
    return f"{adjectives}{rel}".lower().strip()
