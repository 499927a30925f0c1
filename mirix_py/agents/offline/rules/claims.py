"""Whole facts for offline mode: (entity, attribute, value), with what they change.

"My brother Tom is a pilot." gives two claims about Tom: relation "brother" (of the speaker) and
occupation "pilot". What the speaker says of themself goes to core memory; everything else goes to
semantic memory under the entity's name. A claim keeps what makes it an update: `negated` for "no
longer", `replaces` for "switched from A to B"; which attributes hold one value at a time is decided
where claims meet stored facts (`factset`). Built on `semantic` and `core`, with phrasings of a change
from `changes` and `frames`, "my sister" resolved by `people`, names with dots and commas by `names`.
Questions, indirect questions, wishes and plans say nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Sequence

from mirix_py.agents.offline.rules import changes
from mirix_py.agents.offline.rules import core as self_rules
from mirix_py.agents.offline.rules import frames, idioms, people as relations
from mirix_py.agents.offline.rules import semantic as entity_rules
from mirix_py.agents.offline.rules.claim import Claim, is_profession
from mirix_py.agents.offline.rules.names import shield, unshield
from mirix_py.agents.offline.rules.parsed import ClauseParser, read_claims, worth_parsing

__all__ = ["extract_claims", "parse_worthy", "typed_text", "parse_fact", "parse_self_line"]

MAX_VALUE_WORDS = 12


# ---------------------------------------------------------------- reading stored facts back

_SELF_LINE = [
    (re.compile(r"^name:\s*(?P<v>.+)$"), "name"),
    (re.compile(r"^(?P<a>favou?rite [\w -]+?):\s*(?P<v>.+)$"), None),
    (re.compile(r"^birthday:\s*(?P<v>.+)$"), "birthday"),
    (re.compile(r"^is allergic to\s+(?P<v>.+)$"), "allergy"),
    (re.compile(r"^is (?:a|an) fan of\s+(?P<v>.+)$"), "likes"),
    (re.compile(r"^is from\s+(?P<v>.+)$"), "origin"),
    (re.compile(r"^(?:is|was) born in\s+(?P<v>.+)$"), "born"),
    (re.compile(r"^is\s+(?P<v>(?:a|an)\s+.+)$"), "occupation"),
    (re.compile(r"^works as\s+(?P<v>.+)$"), "occupation"),
    (re.compile(r"^works (?:at|for)\s+(?P<v>.+)$"), "employer"),
    (re.compile(r"^lives in\s+(?P<v>.+)$"), "location"),
    (re.compile(r"^(?:likes|loves|enjoys|adores)\s+(?P<v>.+)$"), "likes"),
    (re.compile(r"^(?:hates|dislikes|detests|can't stand)\s+(?P<v>.+)$"), "dislikes"),
    (re.compile(r"^prefers\s+(?P<v>.+)$"), "prefers"),
]


def _bare(value: str) -> str:
    return re.sub(r"(?i)^(?:a|an)\s+", "", value.strip())


def parse_self_line(line: str) -> tuple[str, str] | None:
    """(attribute, value) of a core line in the rules' own form; None for any other line."""
    line = line.strip()
    for pattern, attribute in _SELF_LINE:
        m = pattern.match(line)
        if m:
            value = m.group("v").strip()
            if attribute is None:
                attribute = re.sub(r"^favou?rite", "favorite", m.group("a").strip().lower())
            if attribute == "occupation":
                value = _bare(value)
            return attribute, value
    return None


def parse_fact(entity: str, text: str) -> tuple[str, str] | None:
    """(attribute, value) of a semantic fact sentence about `entity` in the rules' own form."""
    text = text.strip().rstrip(".")
    if not text.startswith(entity):
        return None
    rest = text[len(entity):]
    m = re.match(r"^ is (?:the speaker's|[\w .'’-]+?'s) (?P<v>[\w -]+)$", rest)
    if m and entity_rules._RELATIONS and re.search(rf"\b(?:{entity_rules._RELATIONS})$", m.group("v")):
        return "relation", m.group("v")
    m = re.match(r"^'s (?P<a>favou?rite [\w -]+?):\s*(?P<v>.+)$", rest)
    if m:
        return re.sub(r"^favou?rite", "favorite", m.group("a")), m.group("v")
    m = re.match(r"^ (?:is|was) (?P<v>(?:a|an)\s.+)$", rest)
    if m:
        return ("occupation" if is_profession(_bare(m.group("v"))) else "is"), _bare(m.group("v"))
    m = re.match(r"^ (?:works|worked|is working) as (?P<v>.+)$", rest)
    if m:
        return "occupation", _bare(m.group("v"))
    m = re.match(r"^ (?:works|worked|is working) (?:at|for) (?P<v>.+)$", rest)
    if m:
        return "employer", m.group("v")
    m = re.match(r"^ (?:lives|lived|is living) in (?P<v>.+)$", rest)
    if m:
        return "location", m.group("v")
    m = re.match(r"^ (?:was|is) (?:born|founded|established|created|started|built) (?:in|on) (?P<v>.+)$", rest)
    if m:
        return "born", m.group("v")
    line = parse_self_line(rest.strip())
    if line:
        return line
    m = re.match(r"^ (?:is|was) (?P<v>.+)$", rest)
    if m:
        return "is", m.group("v")
    return None


# ---------------------------------------------------------------- extraction

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_CLAUSE = re.compile(r"\s*;\s*|,?\s+(?:and|but|so|while)\s+(?=(?:(?:now|today|these\s+days|nowadays),?\s+)?(?:he|she|I|i|my|we['’]re|[A-Z][a-z]+\s+(?:is|was|works|lives|moved|loves|likes|hates))\b)")
_NAME = r"(?P<name>(?:(?:Mr|Mrs|Ms|Mx|Dr|Prof|St)\u2024\s)?(?:[A-Z]\u2024\s?)*[A-Z][a-z]+(?:['’][A-Z][a-z]+)?(?:\s(?:[A-Z]\u2024\s?)*[A-Z][a-z]+){0,2})"
_LEAD = r"(?:(?:and|but|so|also|well|oh|yes|yeah|now|then|actually)[,\s]+)*"
_ADV = r"(?:(?P<adv>now|currently|still|also|actually|no\s+longer|just)\s+)?"
# a relation word, also a former one ("ex-wife")
_REL = rf"(?:ex-)?(?:{entity_rules._RELATIONS})|ex(?![\w-])"
_MY_REL = re.compile(
    rf"(?i:\b(?:my|our)\s+(?P<adj>(?:{entity_rules._ADJ_WORDS}\s+)*)(?P<rel>{_REL}))(?!-),?\s+{_NAME}(?:,\s*|\s+|(?=[^\w]|$))"
)
# "is now my", "is officially my": an adverb between the copula and the relation
_REL_ADV = r"(?:(?:now|still|officially|technically|legally|finally|basically|also)\s+)?"
_NAME_IS_MY = re.compile(
    rf"^{_LEAD}{_NAME}\s+(?:is|was)\s+{_REL_ADV}(?P<neg>no\s+longer\s+)?(?i:(?:my|our)\s+(?P<adj>(?:{entity_rules._ADJ_WORDS}\s+)*)(?P<rel>{_REL}))\b(?!-|['’]s\b)"
)
# "Ben's son Ollie": a relation of someone else, named; what follows is about Ollie, not Ben
_THEIR_REL = re.compile(
    rf"^{_LEAD}(?P<owner>[A-Z][a-z]+)['’]s\s+(?P<adj>(?:{entity_rules._ADJ_WORDS}\s+)*)(?P<rel>{_REL})(?!-)\s+"
    rf"(?P<name>[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)(?:,\s*|\s+|$)"
)
_SUBJECT_NAME = re.compile(rf"^{_LEAD}{_NAME}(?:(?P<poss>['’]s)?\s+|,\s*(?=who\s|(?:a|an|my|our)\s))")
_PRONOUN = re.compile(rf"^{_LEAD}(?i:he|she)(?P<contr>['’]s)?\s+")
_FAVORITE_OF = re.compile(
    r"^(?i:(?:all[- ]time\s+|absolute\s+)?favou?rite\s+)(?P<what>[a-z][a-z -]{0,30}?)\s+(?:is|are)\s+(?:now\s+)?(?P<v>[^!?\n;]+)"
)

# what one is "into" is a taste when it is a bare noun or a name ("into poker", "into the Beatles"), not a
# point reached ("into the second round")
_INTO = r"(?P<v>(?!(?:a|an|my|his|her|their|our|it|this|that|you|him|them)\b)(?:the\s+(?=[A-Z]))?(?!the\b)[^!?\n;]+)"
# a taste said by how keen one is: "crazy about grapes", "obsessed with Oasis", "hooked on sudoku" ("passionate
# about" and "keen on" name causes and plans as often as tastes: "passionate about improving education")
_KEEN = (r"(?:really\s+|so\s+|totally\s+|completely\s+|absolutely\s+)?(?:crazy|mad|nuts|obsessed|hooked|fond)\s+"
         r"(?:about|with|on|of)\s+(?P<v>(?!(?:it|this|that|these|those|you|him|her|them|me|us)\b)[A-Za-z][^!?\n;]*)")
_PREDICATES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^(?:is|was|['’]s|has\s+been)\s+{_ADV}(?P<v>(?:a|an)\s+[^!?\n;]+)"), "occupation"),
    (re.compile(rf"^{_ADV}(?:works|worked|is\s+working)\s+as\s+(?P<v>[^!?\n;]+)"), "occupation"),
    (re.compile(rf"^{_ADV}(?:works|is\s+working)\s+(?:at|for)\s+(?P<v>[^!?\n;]+)"), "employer"),
    (re.compile(rf"^{_ADV}(?:lives|is\s+living)\s+in\s+(?P<v>[^!?\n;]+)"), "location"),
    (re.compile(rf"^{_ADV}(?:has\s+)?(?:moved|relocated)\s+(?:(?:back|up|down|over|out|home|across)\s+){{0,2}}to\s+(?P<v>[^!?\n;]+)"), "moved"),
    (re.compile(rf"^(?:is|was|['’]s)\s+{_ADV}(?:really\s+|so\s+|totally\s+|very\s+)?into\s+{_INTO}"), "likes"),
    (re.compile(rf"^(?:is|was|['’]s)\s+{_ADV}{_KEEN}"), "likes"),
    (re.compile(rf"^{_ADV}(?:goes|attends)\s+(?:to\s+)?(?P<v>(?:the\s+)?[A-Z][^!?\n;]+)"), "school"),
    (re.compile(rf"^(?:is|was|['’]s)\s+{_ADV}(?:originally\s+)?from\s+(?P<v>[^!?\n;]+)"), "origin"),
    (re.compile(rf"^{_ADV}(?:loves|likes|enjoys|adores)\s+(?P<v>[^!?\n;]+)"), "likes"),
    (re.compile(rf"^{_ADV}(?:hates|dislikes|detests|can['’]?t\s+stand)\s+(?P<v>[^!?\n;]+)"), "dislikes"),
    (re.compile(r"^(?:does\s+not|doesn['’]t)\s+(?:like|enjoy)\s+(?P<v>[^!?\n;]+)"), "dislikes"),
    (re.compile(rf"^{_ADV}prefers\s+(?P<v>[^!?\n;]+)"), "prefers"),
    (re.compile(rf"^{_ADV}(?:drives|rides)\s+(?:a|an)\s+(?P<v>[A-Z][^!?\n;]+)"), "prefers"),  # a named car or bike
    (re.compile(rf"^{_ADV}(?:grew\s+up|was\s+(?:raised|brought\s+up))\s+in\s+(?P<v>[^!?\n;]+)"), "origin"),
]

_CUT = re.compile(
    r"[.,:()\[\]—–]|\s-\s|\s+(?:but|because|since|so|when|while|although|though|which|who|instead\s+of|rather\s+than|"
    r"and\s+(?:i|he|she|they|we|it|you|my|his|her|their|that|this|then|so|now))\b", re.IGNORECASE,
)
# when a change happened is not part of the value: "a doctor last year", "Klarna two months ago"
_TIME_TAIL = re.compile(r"\s+(?:last|this|next|earlier|yesterday|today|recently|(?:a|an|one|two|three|four|five|six|a\s+few|"
                        r"few|several|some)\s+(?:days?|weeks?|months?|years?)\s+ago|in\s+(?:\d{4}|January|February|March|"
                        r"April|May|June|July|August|September|October|November|December)|back\s+in)\b.*$")
_TRAILING = re.compile(r"(?i)(?:\s+(?:too|now|anymore|any\s+more|these\s+days|lately|again|though|lol|haha|and|or|the|a|an|of|to|in|at|for|with))+$")
_PLACE_TAIL = re.compile(r"\s+(?!(?:of|de|del|da|do|upon|on|and)\s+[A-Z])(?:[a-z]|\d).*$")  # "Denver last year", "Porto in 2021": the place ends at a lowercase word
_BAD_VALUE = re.compile(
    r"(?i)^(?:a|an|the)\s+(?:bit|little|lot|few|couple|kind|sort|way|thing|time|moment|reason|one|same|mess|"
    r"great\s+(?:way|idea|time)|good\s+(?:idea|time)|best\s+(?:part|thing|way))\b|^(?:it|this|that|them|him|her|you|home|"
    r"all|the\s+moment|how|what|when|where|why|so|too|such|(?:my|him|her|them|your|our)sel(?:f|ves))\b"
)
_MOVE_PLAN = re.compile(r"(?i)\b(?:might|may|could|would|will|want\s+to|wants\s+to|plan(?:ning|s)?\s+to|thinking\s+(?:about|of)|"
                        r"hope\s+to|hoping\s+to|going\s+to|used\s+to|if|wish(?:es|ed)?|if\s+only|dream(?:s|t|ed)?|imagine)\b")


def _clip(value: str, *, place: bool = False) -> str:
    m = _CUT.search(value)
    if m:
        value = value[: m.start()]
    value = value.strip().strip("\"'“”‘’").strip()
    value = _TIME_TAIL.sub("", value)
    if place:
        value = _PLACE_TAIL.sub("", value)
    prev = None
    while prev != value:
        prev = value
        value = _TRAILING.sub("", value).strip()
    words = value.split()
    return " ".join(words[:MAX_VALUE_WORDS])


def _rel(m: re.Match[str]) -> str:
    return f"{m.group('adj') or ''}{m.group('rel')}".lower().strip()


_ORG = re.compile(r"\s(?:at|for|with)\s+(?P<org>(?:the\s+)?[A-Z][^,;]*)$")


def _employer_of(occupation: str) -> str:
    """The employer a job names ("a nurse at St Mary's Hospital"), or ""."""
    m = _ORG.search(occupation)
    return _PLACE_TAIL.sub("", m.group("org")).strip() if m else ""


def _place_ok(value: str) -> bool:
    """A home is a name ("Denver", "the Netherlands"), not "a new apartment" or "the suburbs"."""
    return bool(re.match(r"^(?:the\s+)?[A-Z\u2024]", value))


# what a job is worn or worked in: "traded his apron for a classroom" changes a job, not a preference
_WORK_GEAR = re.compile(r"(?i)\b(?:apron|scrubs|uniform|briefcase|badge|stethoscope|overalls|toolbelt|hard\s+hat|classroom|"
                        r"desk\s+job|cockpit|courtroom|pulpit|whites)\b")


def _change_claims(found: list[changes.Change], subject: str, *, about_speaker: bool) -> list[Claim]:
    """Claims from verbs of change (`changes.find_changes`), each value cut and checked as the
    attribute wants it: a job is a profession, an employer and a home are names, a preference a
    short noun phrase. A value that fails says nothing (a plan or a phrase of speech, not a fact)."""
    out: list[Claim] = []
    for change in found:
        if "|" in change.attribute:  # one value for whichever attribute the old one held
            out += [replace(c, only_if_replacing=True) for a in change.attribute.split("|")
                    for c in _change_claims([replace(change, attribute=a)], subject, about_speaker=about_speaker)
                    if c.replaces]
            continue
        attribute = change.attribute
        if attribute == "student":  # "graduated": the student ends, whatever else they were
            out.append(Claim(entity=subject, attribute="occupation", value="student", about_speaker=about_speaker,
                             negated=True))
            continue
        if attribute == "where":  # "transferred to": an organisation's name is an employer, any other a home
            attribute = "employer" if frames.is_organisation(_clip(change.value, place=True)) else "location"
        place = attribute in ("location", "employer")
        if change.negated and not change.value and attribute in ("occupation", "employer"):
            # "is no longer cooking professionally": the job ends, whatever it was called
            out.append(Claim(entity=subject, attribute=attribute, value="", about_speaker=about_speaker, negated=True))
            continue
        value = _clip(change.value, place=place)
        old = _clip(change.old, place=place) if change.old else ""
        if not value or _BAD_VALUE.match(value):
            continue
        if attribute == "occupation":
            employer = _employer_of(value)
            value = _bare(_clip(re.split(r"\s+(?:at|in|for|from|with|who|that|of)\s", value)[0]))
            if not is_profession(value):
                continue  # "became a problem", "got a job as soon as I could"
            if employer and _place_ok(employer):
                out.append(Claim(entity=subject, attribute="employer", value=unshield(employer),
                                 about_speaker=about_speaker))
        elif place and not _place_ok(value):
            continue
        elif attribute == "prefers" and (len(value.split()) > 6 or _WORK_GEAR.search(f"{old} {value}") or re.match(
                r"(?i)^(?:jobs?|careers?|teams?|roles?|sides?|on|it|my|his|her|their|the\s+idea)\b", value)):
            continue
        out.append(Claim(entity=subject, attribute=attribute, value=unshield(value), about_speaker=about_speaker,
                         negated=change.negated, replaces=unshield(old)))
    return out


# "lives in the house in Shiraz", "moved into a flat in Leith": the home's place is where one lives
_HOME = r"(?:the|a|an|my|our|his|her|their)\s+(?:[a-z]+\s+)?(?:house|flat|apartment|home|cottage|place|room|studio|condo|bungalow)"
_HOME_IN = re.compile(rf"\b(?:in|into|to)\s+{_HOME}\s+in\s+(?=[A-Z])")
_HOME_PLACE = re.compile(rf"^{_HOME}\s+in\s+(?P<place>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)")


def _predicate(rest: str, subject: str, known: bool) -> list[Claim]:
    """Claims from the words after a named subject ("is a pilot", "moved to Porto last spring"),
    or else from a verb of change ("became a doctor", "moved from Cairo to Alexandria")."""
    rest = _HOME_IN.sub(lambda m: ("to" if m.group().startswith("into") else m.group().split()[0]) + " ", rest)
    found = _plain_predicate(rest, subject, known)
    found = found or _change_claims(changes.find_changes(rest, first_person=False), subject, about_speaker=False)
    return found or _change_claims(frames.find_frames(rest, first_person=False), subject, about_speaker=False)


def _plain_predicate(rest: str, subject: str, known: bool) -> list[Claim]:
    for pattern, attribute in _PREDICATES:
        m = pattern.match(rest)
        if not m:
            continue
        adverb = (m.groupdict().get("adv") or "").lower()
        negated = bool(re.match(r"no\s+longer", adverb))
        raw = m.group("v")
        place = attribute in ("moved", "location", "origin")
        # a named employer ends at the first lowercase word too ("Google and went freelance")
        value = _clip(raw, place=place or attribute == "employer" and raw[:1].isupper())
        if negated and attribute in ("likes", "dislikes"):
            value = re.split(r"\s+(?:and|but|or)\s+", value)[0]  # "no longer likes tennis balls and only chews sticks"
        if not value or _BAD_VALUE.match(value):
            return []
        if attribute == "occupation":
            bare = _bare(value)
            if not is_profession(bare):
                if not known or len(bare.split()) < 1:
                    return []
                attribute, bare = "is", value
            elif re.match(r"(?i)^(?:a|an)\s", value):
                bare = _bare(_clip(re.split(r"\s+(?:at|in|for|from|with|who|that)\s", value)[0]))
                employer = _employer_of(_clip(raw))
                if employer and not negated and _place_ok(employer):
                    return [Claim(entity=subject, attribute=attribute, value=unshield(bare)),
                            Claim(entity=subject, attribute="employer", value=unshield(employer))]
            value = bare
        if attribute == "moved":
            attribute = "employer" if frames.is_organisation(value) else "location"
        if attribute == "school":  # "goes to Oak Primary": a school by its name's form, not a place one visits
            value = _PLACE_TAIL.sub("", value) or value
            if not frames.is_organisation(value):
                return []
            attribute = "employer"
        if place and not _place_ok(value):  # "moved to the Algarve", not "moved to the suburbs"
            return []
        return [Claim(entity=subject, attribute=attribute, value=unshield(value), negated=negated)]
    return []


_AND_VERB = re.compile(r"\s+and\s+(?=(?:now\s+|also\s+|then\s+)?(?:works|lives|moved|loves|likes|enjoys|hates|prefers|"
                       r"is\s+(?:now\s+)?(?:working|living|based)|is\s+now|is\s+(?:a|an)\s(?=.*\b(?:now|these\s+days)\b)|became|"
                       r"has\s+become|joined|retrained|(?:took|got|accepted|landed|found)\s+(?:a|an|the)\s+(?:new\s+)?(?:job|role|position|post))\b)")
_STRONG_START = re.compile(r"^(?:(?:has|had)\s+(?:(?:just|recently|finally|since|already|now|also)\s+)*(?=moved|relocated|"
                           r"settled|left|quit|joined|become|started|got|taken|given|swapped|traded|replaced))?"
                           r"(?:works|lives|moved|relocated|loves|likes|enjoys|adores|hates|dislikes|detests|prefers|drives|rides|"
                           r"is\s+from|is\s+(?:no\s+longer|now)\s|was\s+born|no\s+longer|now|(?:has\s+)?(?:became|become|"
                           r"started|began|got\s+(?:a|the)\s|took\s+(?:a|the)\s|joined|settled|gave\s+up|swapped|traded|replaced|left|quit)|"
                           r"(?:was|got|has\s+been)\s+(?:hired|promoted)|is\s+(?:now\s+)?based)\b")
# "Lily, who is a chemist, lives in Oslo", "my sister Lily, a chemist, lives in Oslo": two predicates
_APPOSITION = re.compile(r"^(?:who\s+(?P<who>[^,]+)|(?P<app>(?:a|an|my|our)\s+[^,]+)),\s*(?P<main>.+)$")
# "is my flatmate" (an apposition read as a predicate), "is no longer my boss" (after a pronoun)
_IS_MY = re.compile(
    rf"^(?:is|was|['’]s)\s+{_REL_ADV}(?P<neg>no\s+longer\s+)?(?i:(?:my|our)\s+(?P<adj>(?:{entity_rules._ADJ_WORDS}\s+)*)"
    rf"(?P<rel>{_REL}))\b(?!-|['’]s\b)"
    rf"|^(?:is|was|['’]s)\s+(?:now\s+)?(?P<neg2>no\s+longer\s+)?(?i:(?:a|an)\s+(?P<adj2>(?:{entity_rules._ADJ_WORDS}\s+)*)"
    rf"(?P<rel2>{_REL})\s+of\s+(?:mine|ours))\b"
)
# a clause opened by a name and a verb ("Marco moved out", "Karen retired"): the person a later
# "he"/"she" in the message is about, though the clause itself states no fact
_NAME_THEN_VERB = re.compile(r"^(?:[a-z]+ed|no\s+longer|is|was|has|had|[a-z]+s|left|quit|went|got|took|came|ran|sold|bought|broke|split)\b")


def _parts(rest: str) -> list[str]:
    """The predicates after a name and its comma: the one in a relative clause or apposition, then
    the main one (only after a comma: "As a writer, my laptop…" holds no apposition)."""
    m = _APPOSITION.match(rest)
    if not m:
        return [rest]
    return [m.group("who") or f"is {m.group('app')}", m.group("main")]


def _relation_or_predicate(part: str, name: str, owner: str, known: bool) -> list[Claim]:
    """A relation said as a predicate ("is my flatmate", "is no longer my boss"), else `_predicate`."""
    m = _IS_MY.match(part)
    if m:
        value = _rel(m) if m.group("rel") else f"{m.group('adj2') or ''}{m.group('rel2')}".lower().strip()
        return [Claim(entity=name, attribute="relation", value=value, owner=owner,
                      negated=bool(m.group("neg") or m.group("neg2")))]
    return _predicate(part, name, known)


def _named_claims(clause: str, speaker: str, known: set[str], last: list[str],
                  subjects: list[str] | None = None) -> list[Claim]:
    """Claims about a named person in one clause. `last` is the one name a following "he"/"she"
    continues; `subjects` collects the names that opened a clause of the message, for a pronoun
    when no claim set `last` ("Marco moved out, so he's not my roommate any longer")."""
    subjects = [] if subjects is None else subjects
    claims: list[Claim] = []
    owner = speaker or ""
    m = _MY_REL.search(clause)
    if m and m.start() <= 20:
        name = _clean_name(m.group("name"))
        if name and name != speaker:
            claims.append(Claim(entity=name, attribute="relation", value=_rel(m), owner=owner))
            last[:] = [name]
            rest = clause[m.end():]
            parts = _parts(rest.lstrip(", ")) if m.group().rstrip().endswith(",") else [rest.lstrip(", ")]
            claims += [c for part in parts for c in _predicate(part, name, True)]
            return claims
    m = _THEIR_REL.match(clause)
    if m:
        name, whose = _clean_name(m.group("name")), _clean_name(m.group("owner"))
        if name and whose and name != speaker:
            last[:] = [name]
            rest = clause[m.end():]
            return [Claim(entity=name, attribute="relation", value=_rel(m), owner=whose),
                    *_predicate(rest, name, True)]
    m = _NAME_IS_MY.match(clause)
    if m:
        name = _clean_name(m.group("name"))
        if name and name != speaker:
            last[:] = [name]
            return [Claim(entity=name, attribute="relation", value=_rel(m), owner=owner, negated=bool(m.group("neg")))]
    m = _SUBJECT_NAME.match(clause)
    if m:
        name = _clean_name(m.group("name"))
        rest = clause[m.end():]
        if not name or name == speaker:
            return []
        if m.group("poss"):
            fav = _FAVORITE_OF.match(rest)
            if fav:
                value = _clip(fav.group("v"))
                if value:
                    last[:] = [name]
                    return [Claim(entity=name, attribute=f"favorite {fav.group('what').strip().lower()}",
                                  value=unshield(value))]
            return []
        parts = [p for part in (_parts(rest) if m.group().rstrip().endswith(",") else [rest])
                 for p in _AND_VERB.split(part)]
        trusted = name in known or " " in name or "\u2024" in name or any(_STRONG_START.match(p) for p in parts) \
            or any(changes.find_changes(p, first_person=False) for p in parts)  # a verb of change has a person as subject
        found = [c for part in parts for c in _relation_or_predicate(part, name, owner, name in known)]
        # an end only removes what is held about the name, and a marker of change says the clause
        # reports a change of the person's state ("Bruno can't stand the park since…")
        trusted = trusted or bool(found) and (all(c.negated for c in found) or bool(_CHANGE_WORD.search(rest)))
        if found and (trusted or found[0].attribute in ("occupation", "relation")):
            last[:] = [name]
            return found
        if _NAME_THEN_VERB.match(rest) or re.match(rf"^and\s+{_I}\b", rest):  # "Chris and I are engaged"
            subjects.append(name)
        return []
    named = last[0] if len(last) == 1 else (subjects[0] if len(set(subjects)) == 1 else None)
    m = _WE_NO_LONGER.match(clause)
    if m and named:
        return [Claim(entity=named, attribute="relation", value=m.group("rel").lower(), owner=owner, negated=True)]
    m = _PRONOUN.match(clause)
    if m and named:
        rest = ("is " if m.group("contr") else "") + clause[m.end():]
        return _relation_or_predicate(rest, named, owner, True)
    return []


# a word of change or time after a name: the clause reports how a person is now ("Bruno can't stand the park since…")
_CHANGE_WORD = re.compile(r"(?i)\b(?:now|these\s+days|nowadays|since|any\s*more|any\s+longer|no\s+longer|instead|new)\b")
# "We adopted a cat called Mochi", "I have a dog named Rex", "our new puppy, called Bo": the speaker's
_CALLED = re.compile(
    rf"(?:^(?:{_LEAD})(?:I|[Ww]e)(?:\s+(?:just|recently|finally|now|also))*(?:['’]ve|\s+have|\s+has|\s+had)?"
    rf"(?:\s+(?:just|recently|finally|now|also))*\s+(?:got|gotten|adopted|own|bought|rescued|welcomed|have|had|took\s+in)\s+"
    rf"(?:a|an)|(?i:\bmy|\bour))\s+(?:(?i:new|little|baby|rescue|sweet)\s+)*"
    rf"(?P<rel>(?i:{entity_rules._RELATIONS}))\b,?\s+(?:called|named)\s+{_NAME}"
)
# "so we're not flatmates anymore" (after "no longer" rewriting): the relation of the one person named
_WE_NO_LONGER = re.compile(rf"^{_LEAD}(?i:we)(?:['’]re|\s+are)\s+no\s+longer\s+(?P<rel>(?i:{entity_rules._RELATIONS}))(?:e?s)?\b")
_NAME_AND_I = re.compile(rf"^{_LEAD}{_NAME}\s+and\s+I\b")


_SHE = frozenset("girlfriend fiancée fiancee wife".split())
_HE = frozenset("boyfriend fiancé fiance husband".split())


def _couple_word(kind: str, name: str, stated: Iterable[tuple[str, str]]) -> str:
    """"spouse" or "fiance" said as the word the person was held by before: Sophie held as the speaker's
    fiancée who married them is their wife; without one held, the word stays neutral."""
    held = {relation.casefold() for who, relation in stated if who == name}
    if held & _SHE:
        return {"spouse": "wife", "fiance": "fiancée"}.get(kind, kind)
    if held & _HE:
        return {"spouse": "husband", "fiance": "fiancé"}.get(kind, kind)
    return kind


def _clean_name(name: str) -> str | None:
    words = name.split()
    while words and words[0] in entity_rules._EXCLUDED:
        words.pop(0)
    if not words or any(w in entity_rules._EXCLUDED for w in words):
        return None
    if len(words) == 1 and words[0].endswith("ing"):
        return None
    return unshield(" ".join(words))


# ---- the speaker about themself

_I = r"(?<![\w'’])I"
_SELF_CHANGES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"{_I}(?:\s+have|['’]ve)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:(?:back|up|down|over|out|home|across)\s+){{0,2}}to\s+(?P<v>[^!?\n;]+)"), "location"),
    (re.compile(rf"{_I}(?:\s+have|['’]ve)?\s+(?:just\s+|recently\s+|finally\s+)?switched\s+from\s+(?P<old>.+?)\s+to\s+(?P<v>[^!?\n;]+)"), "prefers"),
    (re.compile(rf"{_I}(?:\s+have|['’]ve)?\s+(?:just\s+|recently\s+|finally\s+)?switched\s+to\s+(?P<v>[^!?\n;]+)"), "prefers"),
    (re.compile(rf"{_I}\s+no\s+longer\s+(?:like|love|enjoy)\s+(?P<v>[^!?\n;]+)"), "likes-"),
    (re.compile(rf"{_I}\s+(?:don['’]t|do\s+not)\s+(?:like|love|enjoy)\s+(?P<v>[^!?\n;]+?)\s+any\s*more\b"), "likes-"),
    (re.compile(rf"{_I}\s+no\s+longer\s+work\s+as\s+(?P<v>[^!?\n;]+)"), "occupation-"),
    (re.compile(rf"{_I}\s+no\s+longer\s+work\s+(?:at|for)\s+(?P<v>[^!?\n;]+)"), "employer-"),
    (re.compile(rf"{_I}\s+no\s+longer\s+live\s+in\s+(?P<v>[^!?\n;]+)"), "location-"),
    (re.compile(rf"{_I}(?:['’]m|\s+am)\s+no\s+longer\s+(?P<v>(?:a|an)\s+[^!?\n;]+|[a-z]+$)"), "occupation-"),
    (re.compile(rf"{_I}\s+(?:now\s+)?(?:drive|ride)\s+(?:a|an)\s+(?P<v>[A-Z][^!?\n;]+)"), "prefers"),  # a named car or bike
    (re.compile(rf"{_I}(?:['’]m|\s+am)\s+(?:now\s+|really\s+|so\s+|totally\s+|very\s+|also\s+)*into\s+{_INTO}"), "likes"),
    (re.compile(rf"{_I}(?:['’]m|\s+am)\s+(?:now\s+|also\s+)*{_KEEN}"), "likes"),
    (re.compile(rf"{_I}\s+(?:grew\s+up|was\s+(?:raised|brought\s+up))\s+in\s+(?P<v>[^!?\n;]+)"), "origin"),
    # a diet said without an article: "I'm vegetarian", "I am vegan now"
    (re.compile(rf"{_I}(?:['’]m|\s+am)\s+(?:now\s+|fully\s+|strictly\s+|also\s+)*(?P<v>{'|'.join(changes.DIETS)})\b(?!\s+(?:food|options?|recipes?|friendly))"), "occupation"),
    # where one studies is labelled as an employer, as a job at a named place
    (re.compile(rf"{_I}\s+(?:now\s+|currently\s+)?study\s+at\s+(?P<v>(?:the\s+)?[A-Z][^!?\n;]+)"), "employer"),
    # "I've been a firefighter for twelve years": a job held since
    (re.compile(rf"{_I}(?:['’]ve|\s+have)\s+(?:now\s+)?been\s+(?P<v>(?:a|an)\s+[^!?\n;]+?)\s+(?:for|since)\s"), "occupation"),
]


# "since I lost my job, …": a past end told as the background of something else, not news of the present
_SUBORDINATE = re.compile(r"(?i)\b(?:since|after|before|when|because|['’]?cause|until|once|ever\s+since)\s+$")


def _self_claims(clause: str, speaker: str) -> list[Claim]:
    who = speaker or "user"
    claims: list[Claim] = []
    changed: set[str] = set()
    for pattern, attribute in _SELF_CHANGES:
        for m in pattern.finditer(clause):
            if _MOVE_PLAN.search(clause[max(0, m.start() - 30):m.start()]):
                continue
            negated = attribute.endswith("-")
            attribute = attribute.rstrip("-")
            raw = m.group("v").strip()
            # a place or a named employer ends at the first lowercase word ("Acme for personal reasons")
            value = _clip(raw, place=attribute == "location" or (attribute == "employer" and raw[:1].isupper()))
            if attribute == "occupation":
                value = _bare(value)
                if not negated and not is_profession(value):
                    continue  # "I've been a fan for years"
            if not value or _BAD_VALUE.match(value):
                continue
            if attribute == "prefers" and re.match(r"(?i)^(?:jobs?|careers?|teams?|roles?|sides?)\b", value):
                continue
            if attribute in ("location", "origin") and not negated and not _place_ok(value):
                continue  # "moved to a new flat" is no new home town
            if attribute == "location" and frames.is_organisation(value):
                attribute = "employer"  # "moved to Imperial College": a school or a firm, not a town
            old = _clip(m.groupdict().get("old") or "")
            claims.append(Claim(entity=who, attribute=attribute, value=unshield(value), about_speaker=True,
                                negated=negated, replaces=unshield(old)))
            changed.add(attribute)
    found = [c for c in changes.find_changes(clause, first_person=True) or frames.find_frames(clause, first_person=True)
             if not _MOVE_PLAN.search(clause[max(0, c.start - 30):c.start])
             and not (c.negated and not c.value and _SUBORDINATE.search(clause[:c.start]))]
    for claim in _change_claims(found, who, about_speaker=True):
        claims.append(claim)
        changed.add(claim.attribute)
    if re.search(rf"{_I}(?:['’]m|\s+am)?\s+no\s+longer\b|{_I}\s+(?:don['’]t|do\s+not)\s+\w+\s+.*\bany\s*more\b", clause):
        return claims  # the negation is the whole statement: no positive fact from the same words
    for line in self_rules.extract_self_statements(clause):
        parsed = parse_self_line(line)
        if parsed is None:
            continue
        attribute, value = parsed
        if attribute in changed:
            continue
        if attribute in ("location", "origin"):
            value = _PLACE_TAIL.sub("", value) or value
        value = _TRAILING.sub("", value).strip() or value  # "can't stand sushi anymore": the taste is sushi
        claims.append(Claim(entity=who, attribute=attribute, value=unshield(value), about_speaker=True,
                            phrase=unshield(" ".join(line.split()))))
        employer = _employer_of(value) if attribute == "occupation" else ""
        if employer and _place_ok(employer) and "employer" not in changed:
            claims.append(Claim(entity=who, attribute="employer", value=unshield(employer), about_speaker=True))
    return claims


_FIRST_PERSON = re.compile(rf"{_I}\b|(?i:\bmy\s+(?:all[- ]time\s+|absolute\s+|top\s+|new\s+|current\s+)?(?:favou?rite|name|birthday|bday|b-day)\b|"
                           r"\bcall\s+me\b)")


# an indirect question or a wondering: what follows is asked, not said ("My sister asked whether I still work at Amazon")
_INDIRECT_QUESTION = re.compile(r"(?i)\b(?:asked|asks|asking|wonder(?:s|ed|ing)?|wants?\s+to\s+know|wanted\s+to\s+know|"
                                r"not\s+sure|unsure|checked|checking|doubt)\s+(?:me\s+|us\s+|him\s+|her\s+)?(?:whether|if)\b")


def _question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


# make-believe: a role-play, a pretence, a supposition or a hypothetical states nothing about anyone
# ("Let's say my name is Alex for this role-play", "Pretend I'm a pilot", "Imagine I lived in Rome")
_MAKE_BELIEVE_GUARD = ("let's ", "let’s ", "lets ", "let us ", "pretend", "imagin", "suppos", "assum", "hypothetical",
                       "what if", "role", "in character",
                       *(f"for {a} {b}" for a in ("this", "the") for b in ("game", "story", "scenario", "exercise")))
_MAKE_BELIEVE = re.compile(
    r"(?i)^(?:(?:ok(?:ay)?|so|now|and|right|alright)[,\s]+)*(?:(?:let['’]?s|let\s+us)\s+(?:say|pretend|imagine|suppose|assume)|"
    r"pretend|imagine|suppose|supposing|assuming|hypothetically|what\s+if)\b|"
    r"\brole[- ]?play|\bin\s+character\b|\bfor\s+(?:this|the)\s+(?:game|story|scenario|exercise|role)\b")
# a story's world ("In the novel, the heroine…") and a text asked for ("Write a poem that starts with 'My name is…'")
_STORY_STARTS = ("in the ", "in my ", "in this ", "in that ", "in a ", "write", "please write", "compose", "draft")
_STORY = re.compile(
    r"(?i)(?:in\s+(?:the|my|this|that|a)\s+(?:novel|story|book|film|movie|game|play|show|series|dream|script|fairy\s+tale)\b|"
    r"(?:please\s+)?(?:write|compose|draft)\s+(?:me\s+)?(?:a|an)\s+(?:short\s+|funny\s+)?(?:poem|story|song|limerick|haiku|"
    r"script|scene|sonnet|rap|monologue|dialogue)\b)")


def _make_believe(sentence: str) -> bool:
    lower = idioms.guard_text(sentence)  # each branch of the pattern needs one of the guards
    if lower.startswith(_STORY_STARTS) and _STORY.match(sentence.lstrip()):
        return True
    return any(map(lower.__contains__, _MAKE_BELIEVE_GUARD)) and bool(_MAKE_BELIEVE.search(sentence))


def extract_claims(text: str, speaker: str | None = None, *, self_statements: bool = True,
                   people: Iterable[tuple[str, str]] = (), parser: ClauseParser | None = None) -> list[Claim]:
    """Facts stated in `text` by `speaker` ("user" when unnamed), in text order, deduplicated.

    `self_statements=False` leaves out what the speaker says of themself (text on a screen is not
    the user speaking). `people` are (name, relation) pairs the speaker stated before (what memory
    holds): with the ones this text states, a clause opened by "my sister" is about the one person
    named as the speaker's sister. With a `parser` (`offline.parser`), what the patterns miss is read
    from the sentences' dependency parse (`parsed`): a claim of an entity and attribute the patterns
    did not read."""
    if not text or not text.strip():
        return []
    speaker = speaker or "user"
    text = typed_text(text)
    shielded = shield(text)
    known = entity_rules._mid_sentence_capitals(text)
    claims: list[Claim] = []
    last: list[str] = []
    subjects: list[str] = []
    stated = list(people)
    wed: list[Claim] = []  # couples said to start; unless the text names the relation itself ("so he's my husband")
    left: list[Claim] = []  # shared homes said to end; likewise
    for sm in _SENTENCE.finditer(shielded):
        sentence = sm.group().strip()
        if not sentence or _question(sentence) or _make_believe(sentence):
            continue
        body = changes.normalise(sentence.rstrip(".!"))
        partner = changes.ended_relation(body) if self_statements else None
        called = _CALLED.search(body) if self_statements else None
        if called and _clean_name(called.group("name")):
            claims.append(Claim(entity=_clean_name(called.group("name")) or "", attribute="relation",
                                value=called.group("rel").lower(), owner=speaker))
        couple = changes.started_couple(body) if self_statements else None
        if couple and _clean_name(couple[0]):  # "Ella and I got married": she is the speaker's spouse now
            partner_name = _clean_name(couple[0]) or couple[0]
            wed.append(Claim(entity=partner_name, attribute="relation", value=_couple_word(couple[1], partner_name, stated),
                             owner=speaker))
        if self_statements and changes.left_diet(body):  # "I eat meat again": a meatless diet ends, whichever
            claims += [Claim(entity=speaker, attribute="occupation", value=d, about_speaker=True, negated=True)
                       for d in changes.DIETS]
        moved = changes.moved_out(body) if self_statements else None
        if moved and _clean_name(moved):  # "since Ahmed found his own place": a shared home's relation ends
            left += [Claim(entity=_clean_name(moved) or moved, attribute="relation", value=v, owner=speaker, negated=True)
                       for v in changes.SHARED_HOME]
        if partner and _clean_name(partner):  # "Jake and I split up": every couple's relation to Jake ends
            claims += [Claim(entity=_clean_name(partner) or partner, attribute="relation", value=v, owner=speaker,
                             negated=True) for v in changes.ROMANTIC]
        # "I graduated and started as a developer": the speaker goes on after "and"
        body = re.sub(r"(?i)\band\s+(?=(?:now\s+|also\s+|then\s+)?(?:work|live|started|began|joined|became|moved|relocated|"
                      r"retrained|switched)\b)", lambda m: m.group() if _MODAL_BEFORE.search(body[:m.start()]) else "and I ",
                      body) if re.search(_I, body) else body
        named_with_me = _NAME_AND_I.match(body)
        if named_with_me and _clean_name(named_with_me.group("name")):  # "Chris and I are engaged, so he's my fiancé": he is Chris
            subjects.append(_clean_name(named_with_me.group("name")) or "")
        for clause in _CLAUSE.split(body):
            clause = clause.strip(" ,")
            if not clause:
                continue
            clause = _INDIRECT_QUESTION.split(clause)[0]  # "asked whether I still work at Amazon" states nothing
            named = relations.known_people([*stated, *((c.entity, c.value) for c in claims if c.attribute == "relation"
                                                       and c.owner == speaker and not c.negated)])
            clause = relations.name_the_subject(clause, named)
            if self_statements and _FIRST_PERSON.search(clause):
                claims += _self_claims(clause, speaker)
            if re.match(rf"^{_LEAD}{_I}\b", clause):
                continue
            claims += _named_claims(clause, speaker, known, last, subjects)
    claims += _legacy_entity_claims(text, speaker, claims)
    claims += [c for c in [*wed, *left] if not any(x.entity == c.entity and x.attribute == "relation" for x in claims)]
    if parser is not None:
        claims += _parsed_claims(text, speaker, parser, claims, stated, self_statements, subjects)
    claims += _handed_over(claims, stated, speaker)
    out: list[Claim] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for claim in claims:
        key = (claim.entity.casefold(), claim.attribute, claim.value.casefold(), claim.negated)
        if key not in seen:
            seen.add(key)
            out.append(claim)
    return out


# relations one person holds at a time: a new manager is no longer the old one's
_ONE_AT_A_TIME = frozenset({"boss", "manager", "line manager", "supervisor", "team lead", "husband", "wife", "spouse",
                            "fiance", "fiancé", "fiancee", "fiancée", "landlord", "landlady"})


def _handed_over(claims: list[Claim], stated: Sequence[tuple[str, str]], speaker: str) -> list[Claim]:
    """"Leilani's taken over Gunnar's team so she's my manager now": the person memory held as the speaker's
    manager is no longer (one manager, one husband, one landlord at a time)."""
    out = []
    for claim in claims:
        role = relations.relation_head(claim.value) if claim.attribute == "relation" and not claim.negated else ""
        if claim.owner != speaker or claim.value.casefold() not in _ONE_AT_A_TIME and role not in _ONE_AT_A_TIME:
            continue
        out += [Claim(entity=name, attribute="relation", value=held, owner=speaker, negated=True) for name, held in stated
                if name.casefold() != claim.entity.casefold() and relations.relation_head(held) == role]
    return out


# "i'm", "i've", "i" alone: the speaker typed in lowercase
_LOWER_I = re.compile(r"(?<![\w'’.-])i(?=(?:['’](?:m|ve|d|ll))?(?![\w'’.-]))")
_PICTOGRAPHS = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]+")


# a quoted span: "…", “…” or '…', opened after a space, a colon or a bracket and closed before a space or a stop
# (an apostrophe before a letter is part of a word: 'I'm a pilot')
_QUOTED = re.compile(r"""(?:^|(?<=[\s:(]))(?P<open>["“‘'])(?P<body>(?:[^"“”‘’'\n]|['’](?=[A-Za-z]))+?)(?P<close>["”’'])(?=$|[\s.,;:!?)])""")
_IN_LAW = re.compile(r"(?i)\b(mother|father|sister|brother|son|daughter|parents?)\s+in\s+law\b")
_FIRST_PERSON_WORD = re.compile(r"(?i)\b(?:I|I['’]m|my|me|we|our)\b")
_TITLE_SMALL_WORDS = frozenset("a an the of in on at to for and or but with from by".split())


def _unquoted(m: re.Match[str]) -> str:
    """Words someone else said or wrote ('He said, "I'm a pilot"', a profile quoted from a template) are no
    fact of the speaker's: a quoted clause is read as "…". A quoted title ("Amélie") stays."""
    body = m.group("body")
    words = body.split()
    said = len(words) >= 3 and _FIRST_PERSON_WORD.search(body) or len(words) >= 5 and body.rstrip()[-1:] in ".!?,"
    titled = all(w[:1].isupper() or w.lower() in _TITLE_SMALL_WORDS for w in words)  # 'Don't Stop Me Now'
    return f"{m.group('open')}…{m.group('close')}" if said and not titled else m.group()


def typed_text(text: str) -> str:
    """A message as the rules read it: a lowercase "i" as "I", emoji as a space ("obsessed with padel rn 🎾"
    is read as words; the parser tags a pictograph as a word), and a quoted clause as "…" (`_unquoted`).
    Everything else is kept."""
    text = _IN_LAW.sub(lambda m: f"{m.group(1)}-in-law", text)  # "my mother in law Hiroko"
    return _QUOTED.sub(_unquoted, _PICTOGRAPHS.sub(" ", _LOWER_I.sub("I", text)))


def _unsaid(sentence: str) -> bool:
    """A sentence that states nothing: a question, make-believe, an indirect question."""
    return _question(sentence) or _make_believe(sentence) or bool(_INDIRECT_QUESTION.search(sentence))


# "… who should live in Copenhagen and work as a florist": what follows "and" goes on with the modal, not with "I"
_MODAL_BEFORE = re.compile(r"(?i)\b(?:should|would|could|might|must|will|can|shall|wants?\s+to|going\s+to|['’](?:d|ll))\s+"
                           r"(?:\w+\s+){0,6}$")
_PRONOUN_OPENS = re.compile(r"(?i)^(?:(?:and|so|now|but)\s+)?(?:he|she|(?:his|her)\s+name)\b")


def parse_worthy(text: str) -> list[str]:
    """The sentences of a text the parse reads: those that state something and hold a predicate word. The
    text is read as typed (`typed_text`, which `extract_claims` applies too), so a batch parsed ahead
    holds the very sentences each message's claims ask for."""
    sentences = [unshield(m.group().strip()) for m in _SENTENCE.finditer(shield(typed_text(text)))]
    worthy = [bool(s) and not _unsaid(s) and worth_parsing(s) for s in sentences]
    # "Valentina swapped the bank counter for a fire engine. She's been a firefighter since Monday!": the two
    # sentences before one that opens with "he"/"she" name who that is
    opens = [w and bool(_PRONOUN_OPENS.match(s)) for s, w in zip(sentences, worthy)]
    before = [any(opens[i + 1: i + 3]) and bool(sentences[i]) and not _unsaid(sentences[i]) for i in range(len(sentences))]
    return [s for s, w, b in zip(sentences, worthy, before) if w or b]


def _parsed_claims(text: str, speaker: str, parser: ClauseParser, found: list[Claim],
                   stated: list[tuple[str, str]], self_statements: bool, subjects: Sequence[str] = ()) -> list[Claim]:
    """The parse's claims of an (entity, attribute) the patterns left unread (a job that ended and the
    one that followed are two claims). `subjects` are the names that opened a clause the patterns read
    ("Valentina swapped the bank counter for a fire engine. She's been a firefighter …")."""
    sentences = parse_worthy(text)
    if not sentences:
        return []
    have = {(c.entity.casefold(), c.attribute, c.negated) for c in found}
    named = relations.known_people([*stated, *((c.entity, c.value) for c in found if c.attribute == "relation"
                                               and c.owner == speaker and not c.negated)])
    # named in sentences the parse may not read, in the order the text names them
    others = sorted(dict.fromkeys([*(c.entity for c in found if not c.about_speaker), *filter(None, subjects)]),
                    key=lambda name: (text.find(name) < 0, text.find(name)))
    read = read_claims(parser.parse(sentences), speaker, people=named, self_statements=self_statements,
                              skip=_unsaid, named=others)
    return [c for c in read if (c.entity.casefold(), c.attribute, c.negated) not in have
            or c.attribute in _MANY_VALUED and not any(_same_thing(c, f) for f in [*found, *read[:read.index(c)]])]


# attributes a person holds many values of: a taste the patterns read does not stand for every other one said
_MANY_VALUED = frozenset({"likes", "dislikes", "allergy"})


def _same_thing(a: Claim, b: Claim) -> bool:
    """Two claims of one fact: the same entity and attribute, and one value's words within the other's."""
    if (a.entity.casefold(), a.attribute, a.negated) != (b.entity.casefold(), b.attribute, b.negated):
        return False
    wa, wb = set(re.findall(r"\w+", a.value.casefold())), set(re.findall(r"\w+", b.value.casefold()))
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def _legacy_entity_claims(text: str, speaker: str, found: list[Claim]) -> list[Claim]:
    """What `semantic.extract_facts` finds that the clause rules did not (a name mid-sentence, "was
    founded in"), read back into claims."""
    have = {(c.entity.casefold(), c.attribute) for c in found}
    names = {c.entity.casefold() for c in found}
    out = []
    for fact in entity_rules.extract_facts(shield(text), speaker):
        name = unshield(fact.name)
        parsed = parse_fact(fact.name, fact.summary)
        if parsed is None:
            continue
        attribute, value = parsed
        if (name.casefold(), attribute) in have or any(name.casefold() in n.split() for n in names if n != name.casefold()):
            continue
        if any(name.casefold().endswith(" " + n) for n in names):
            continue  # "Nowadays Tom": an opener read as half of a name the clause rules already have
        if attribute == "location":
            home = _HOME_PLACE.match(value)
            value = home.group("place") if home else _PLACE_TAIL.sub("", value) or value
            if not _place_ok(value):
                continue  # "lives in the house": no place named
        out.append(Claim(entity=name, attribute=attribute, value=unshield(value),
                         owner=speaker if attribute == "relation" else "", phrase=unshield(fact.summary)))
    return out
