"""A change read by the shape of the clause: "<verb phrase> as|to|at|for|in|with <value>".

Lists of verbs of change (`changes.CHANGES`) miss the next verb people use ("earn my living as a
plumber", "is now settled in Singapore"). What those share is a frame: a short verb phrase, a
preposition, and a value of a kind the rules know by its form (a job word, a name, an organisation),
with a marker of change in the clause ("now", "since 2019", "anymore"). The preposition and the
value's kind decide the attribute (as + job: occupation; at/for/with + organisation: employer;
in/to + place: location); the verb phrase is kept to a narrow kind, since "ate at McDonald's" is no
job. A plan, a wish, a negation, a moment or a visit says nothing. Pure functions of one clause.
"""

from __future__ import annotations

import re

from mirix_py.agents.offline.rules import lexicon
from mirix_py.agents.offline.rules.changes import Change

__all__ = ["MARKER", "find_frames", "is_organisation"]

# words that say the clause describes what holds now, after a change; "since" only before a time
# ("since 2019", "since March", "since then"), not as "because" ("since I was hungry")
MARKER = re.compile(
    r"(?i)(?<![\w'’])(?:(?<!just\s)(?<!right\s)now(?!\s+and\s+(?:then|again))|these\s+days|nowadays|any\s*more|any\s+longer|"
    r"no\s+longer|instead|switched|new|currently|at\s+present|since\s+(?:then|last|early|late|the\s+(?:start|spring|summer|"
    r"autumn|fall|winter|beginning)|\d{4}|(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b|moving|leaving|graduating))(?![\w'’])"
)
# words that make the verb phrase something other than a standing state: a plan or wish, a modal,
# a negation, a journey or a visit, an event, seeming or dressing up as something
_NOT_A_STATE = lexicon.words("not_a_state")
# verb phrases of each kind (any word of the phrase may carry it)
_WORK = re.compile(r"^(?:work(?:s|ed|ing)?|employed|stud(?:y|ies|ied|ying)|enrolled|intern(?:s|ed|ing)?|teach(?:es|ing)?|taught|lectur(?:e|es|ed|ing)|"
                   r"consult(?:s|ed|ing)?|freelanc(?:e|es|ed|ing)|contract(?:s|ed|ing)?|job)$")
_DWELL = re.compile(r"^(?:live[sd]?|living|based|settled|resettled|stationed|residing|resides?|home)$")
# going to a school or a firm by its name is where one studies or works ("Leo goes to Elm Academy now")
_ATTEND = re.compile(r"^(?:go|goes|attend|attends|started)$")
_RELOCATE = re.compile(r"^(?:moved|relocated|transferred|emigrated|immigrated|resettled|returned)$")
# a progressive verb is a moment ("shopping at Tesco now"), but for these
_LASTING = frozenset("working living studying teaching training employed based settled residing interning".split())
# a tail that makes the value a visit or a moment: "in Berlin for a conference", "since noon"
_PASSING = re.compile(r"(?i)^[^,;]*?\b(?:for\s+(?:a|an|the|my|his|her|our|their|two|three|four|few|some)\s+(?:[\w'’-]+\s+){0,2}?"
                      r"(?:conference|meeting|wedding|funeral|holiday|vacation|trip|visit|weekend|week|weeks|days?|night|nights|"
                      r"month|course|festival|game|match|party|break|birthday|event|term|semester|exchange)|abroad\b|on\s+(?:holiday|vacation|a\s+trip|business)|"
                      r"since\s+(?:noon|this\s+morning|lunch|breakfast|\d{1,2}(?::\d\d)?\s*(?:am|pm)?\b|yesterday|last\s+night|"
                      r"Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday))")
# capitalised words that are times, not places or organisations
_TIME_NAME = re.compile(r"^(?:January|February|March|April|May|June|July|August|September|October|November|December|"
                        r"Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Christmas|Easter|Halloween)\b")
_COPULA = frozenset("is am are was were be been being 's 'm 're now still".split())
_ORG_WORD = re.compile(
    r"\b(?:University|College|School|Academy|Institute|Polytechnic|Inc|Ltd|LLC|Corp|Corporation|Company|Co|Group|"
    r"Bank|Hospital|Clinic|Labs?|Studios?|Agency|Foundation|Ministry|Department|Council|Partners|Associates|"
    r"Technologies|Systems|Solutions|Media|Records|Airlines?|Motors|Primary|Elementary|Secondary|High|Nursery|Kindergarten|"
    r"Preschool|Montessori|Grammar|Comprehensive)\b"
)
_ACRONYM = re.compile(r"^(?:the\s+)?[A-Z]{2,6}$")

_SUBJECT_I = r"(?<![\w'’])I(?:['’](?:m|ve)|\s+(?:am|have))?"
_FRAME = re.compile(r"(?:(?P<vp>(?:[a-z]+(?:['’][a-z]+)?\s+){0,4}?[a-z]+(?:['’][a-z]+)?)\s+)?(?P<prep>as|to|at|for|in|with)\s+"
                    r"(?P<v>(?:(?:a|an)\s+[a-z][\w-]*|(?:the\s+)?[A-Z])[^!?\n;]*)")


def is_time_name(name: str) -> bool:
    """A month, a weekday or a season by name ("March", "Easter"): no place."""
    return bool(_TIME_NAME.match(name))


def is_organisation(name: str) -> bool:
    """A name shaped like an organisation's: an acronym ("KPMG", "the BBC") or a name holding an
    organisation word ("the University of York", "Acme Labs")."""
    return bool(_ACRONYM.match(name.strip()) or _ORG_WORD.search(name))


_NAME_RUN = re.compile(r"(?:the\s+)?[A-Z][\w&'’.-]*(?:\s+(?:of\s+|and\s+|&\s+)?[A-Z][\w&'’.-]*)*")


def _attribute(prep: str, value: str, vp: list[str]) -> str | None:
    name = _NAME_RUN.match(value)
    value = name.group() if name else value
    if prep == "as":
        return "occupation" if re.match(r"(?:a|an)\s", value) else None
    if re.match(r"(?:a|an)\s", value) or _TIME_NAME.match(value) or re.search(r"['’]s$", value):
        return None  # "in a new flat", "in January", "at Google's conference": not a place or a firm
    bare = all(w in _COPULA or w == "back" for w in vp)  # "I've been back in Paris since January"
    if prep == "with" or bare and prep in ("at", "for"):
        # "I'm with BP now", "I'm at KPMG now": an organisation's name; "I'm at Starbucks now" is where one is
        return "employer" if is_organisation(value) else None
    if prep in ("at", "for"):
        return "employer" if any(_WORK.match(w) for w in vp) else None
    if prep == "in":
        if any(_WORK.match(w) for w in vp):
            return None  # "works in Marketing": a department
        return "location" if bare or any(_DWELL.match(w) for w in vp) else None
    if any(_RELOCATE.match(w) for w in vp):
        return "employer" if is_organisation(value) else "location"
    if any(_ATTEND.match(w) for w in vp) and is_organisation(value):
        return "employer"
    return None


def _frames(text: str, start: int) -> list[Change]:
    m = _FRAME.match(text, start)
    if not m:
        return []
    vp = (m.group("vp") or "").lower().replace("’", "'").split()  # empty after "I'm": "I'm with BP now"
    prep = m.group("prep")
    # an article in the verb phrase makes an event ("had an interview at"), but "make a living as" is a job
    if any((w in _NOT_A_STATE and not (prep == "as" and w in ("a", "an"))) or w.endswith("n't") for w in vp):
        return []
    if any(w.endswith("ing") and w not in _LASTING for w in vp) or _PASSING.match(m.group("v")):
        return []
    attribute = _attribute(prep, m.group("v"), vp)
    if attribute is None:
        return []
    return [Change(attribute=attribute, value=m.group("v"), start=m.start())]


def find_frames(clause: str, *, first_person: bool) -> list[Change]:
    """The change a clause states by its frame, when it holds a marker of change: after "I" anywhere
    (`first_person`), or at the clause's start (the words after a name or "he"/"she")."""
    if not MARKER.search(clause):
        return []
    if not first_person:
        return _frames(clause, 0)
    for m in re.finditer(_SUBJECT_I, clause):
        found = _frames(clause, m.end() + (1 if clause[m.end():m.end() + 1] == " " else 0))
        if found:
            return found
    return []
