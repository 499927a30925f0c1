"""How people say that a fact changed: the phrasing families of a change, read once for every subject.

The claim rules (`claims`) read a few canonical forms of a change ("no longer <verb>", "now", "switched
(from A) to B", "moved to"); people say the same things in many other ways. `normalise` rewrites the
families of an end, a time opener, a lost job or taste, a favourite said with another verb, to those
forms; `CHANGES` are the verb phrases of a start or a replacement ("became a", "started working at",
"gave up A for B"), read by `find_changes` after any subject; `ended_relation`, `started_couple` and
`left_diet` read a couple or a diet ending or starting. What no verb list holds is read by its frame
(`frames`). Pure functions of one sentence or clause: what a change removes is decided where claims
meet held facts (`factset.apply`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from mirix_py.agents.offline.rules import idioms

__all__ = ["CHANGES", "DIETS", "ROMANTIC", "SHARED_HOME", "Change", "ended_relation", "find_changes", "left_diet",
           "moved_out", "normalise",
           "started_couple", "third_person"]

_APOS = r"['’]"
_SUBJ = r"(?P<subj>(?<![\w'’])I|(?<![\w'’])(?:[Hh]e|[Ss]he)|(?:[A-Z][a-z]+)(?:\s[A-Z][a-z]+)?)"

# Verbs whose forms the rewrites conjugate: a rewrite only fires for a verb the claim rules read.
_VERBS = ("be work live like love enjoy prefer drink use eat play ride drive take smoke cook read watch "
          "wear listen").split()
_GERUNDS = {"being": "be", "working": "work", "living": "live", "liking": "like", "loving": "love",
            "enjoying": "enjoy", "preferring": "prefer", "drinking": "drink", "using": "use", "eating": "eat",
            "playing": "play", "riding": "ride", "driving": "drive", "taking": "take", "smoking": "smoke",
            "cooking": "cook", "reading": "read", "watching": "watch", "wearing": "wear", "listening": "listen"}


def third_person(verb: str) -> str:
    """"work" -> "works", "watch" -> "watches": the form the claim rules read after a name."""
    if verb == "be":
        return "is"
    if verb == "have":
        return "has"
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    return verb + "s"


def _no_longer(subject: str, verb: str) -> str:
    """"no longer" with the verb as this subject takes it: "I no longer work", "Tom no longer works",
    "I am no longer", "Tom is no longer"."""
    first = subject == "I"
    if verb == "be":
        return f"{'am' if first else 'is'} no longer"
    return f"no longer {verb if first else third_person(verb)}"


def _ended(verb: str, then: str = "") -> Callable[[re.Match[str]], str]:
    """A substitution for a match with a `subj` group: "<subj> no longer <verb> <then>"."""
    return lambda m: f"{m.group('subj')} {_no_longer(m.group('subj'), verb)} {then}"


# ---------------------------------------------------------------- rewrites to the canonical forms

_PRESENT_OPENER = re.compile(
    r"^(?P<lead>(?:(?:and|but|so|well|actually)[,\s]+)*)(?i:these\s+days|nowadays|lately|currently|at\s+the\s+moment|"
    r"right\s+now|now|since\s+(?:then|last\s+\w+|this\s+\w+|[A-Z][a-z]+(?:\s+\d{4})?|\d{4})),?\s+"
)
_PAST_OPENER = re.compile(
    r"^(?P<lead>(?:(?:and|but|so|well|actually)[,\s]+)*)(?i:last\s+(?:year|month|week|spring|summer|autumn|fall|winter|"
    r"[a-z]+day)|earlier\s+this\s+(?:year|month|week)|this\s+(?:year|month|week|spring|summer|autumn|fall|winter)|"
    r"in\s+(?:\d{4}|January|February|March|April|May|June|July|August|September|October|November|December)|"
    r"(?:a|one|two|three|four|five|six|a\s+few|several)\s+(?:days?|weeks?|months?|years?)\s+ago|recently),?\s+"
)
_AUX_NEXT = re.compile(rf"^(?:{_APOS}(?:m|s|re|ve)\b|\s+(?:am|is|are|was|has|have|had)\b)")
_OPENED_SUBJECT = re.compile(r"^(?:I(?!\w)|[Hh]e\b|[Ss]he\b|[A-Z][a-z]+(?:\s[A-Z][a-z]+)?(?=\s+[a-z]))")

# "X is not a pilot anymore", "I'm not a nurse any more": the words in between hold no other negation or clause
_INNER = r"(?P<x>(?:(?!\bnot\b|n['’]t\b|\bnever\b)[^,;.!?])+?)"
_ANYMORE = r"\s+any\s*(?:more|longer)\b"
_BE_NOT = re.compile(rf"(?P<be>\b(?:am|is|are|was)|{_APOS}(?:m|s|re))\s+not\s+{_INNER}{_ANYMORE}")
_BE_NT = re.compile(rf"\b(?P<be>is|are|was)n{_APOS}t\s+{_INNER}{_ANYMORE}")
_DO_NOT = re.compile(rf"\b(?P<aux>do|does)(?:\s+not|n{_APOS}t)\s+(?P<v>{'|'.join(_VERBS)})\b{_INNER.replace('+?', '*?')}{_ANYMORE}")
_STOPPED = re.compile(
    rf"{_SUBJ}(?:\s+(?:has|have)|{_APOS}(?:ve|s))?\s+(?:(?:just|recently|finally|since|already)\s+)*(?:stopped|quit|gave\s+up|given\s+up)\s+"
    rf"(?P<g>{'|'.join(_GERUNDS)})\b"
)
_USED_TO = re.compile(rf"{_SUBJ}\s+used\s+to\s+(?P<v>{'|'.join(_VERBS)})\b")
# "left Acme for Globex" names where they went: read by `CHANGES`, not rewritten to a bare end
_FOR_NEXT = r"(?![^,;.!?]*?\s(?:for|to\s+join|to\s+work\s+(?:at|for))\s+(?:a\s+(?:new\s+)?job\s+(?:at|with)\s+)?(?:the\s+)?[A-Z])"
# a name, also one written with a lowercase "the" ("the BBC", "the Guardian", "the Netherlands")
_NAMED = r"(?=(?:the\s+)?[A-Z])"
_QUIT_JOB = re.compile(
    rf"{_SUBJ}(?:\s+(?:has|have)|{_APOS}(?:ve|s))?\s+(?:(?:just|recently|finally)\s+)*(?:quit|left|resigned\s+from)\s+{_FOR_NEXT}"
    r"(?:(?:my|his|her|their)\s+(?:job|position|role)\s+(?P<prep>at|with|as)\s+|" + _NAMED + ")"
)
_RETIRED_FROM = re.compile(rf"{_SUBJ}(?:\s+(?:has|have)|{_APOS}(?:ve|s))?\s+retired\s+from\s+{_NAMED}")
_MOVED_AWAY = re.compile(
    rf"{_SUBJ}(?:\s+(?:has|have)|{_APOS}(?:ve|s))?\s+(?:(?:just|recently|finally)\s+)*moved\s+(?:away\s+from|out\s+of)\s+{_NAMED}"
)

# losing a job: "got laid off from Shopify", "was let go by the BBC", "lost her job at Acme"
_LAID_OFF = re.compile(
    rf"{_SUBJ}(?:\s+(?:has|have|had)|{_APOS}(?:ve|s))?\s+(?:(?:just|recently|finally)\s+)*(?:(?:got|was|were|been|get|gets)\s+"
    r"(?:laid\s+off|let\s+go|fired|sacked|made\s+redundant|dismissed)|lost\s+(?:my|his|her|their)\s+job)\s+(?:from|at|by|with)\s+"
    + _NAMED
)
# losing a taste: "I've gone off horror movies", "she lost interest in chess", "got tired of sushi"
_LOST_TASTE = re.compile(
    rf"{_SUBJ}(?:\s+(?:has|have|had)|{_APOS}(?:ve|s))?\s+(?:(?:just|recently|finally|kind\s+of|sort\s+of|totally|completely)\s+)*"
    r"(?:(?:gone|went)\s+off|(?:lost|lose)\s+(?:(?:all|my|his|her|their)\s+)*(?:interest\s+in|taste\s+for|appetite\s+for)|(?:fell|fallen)\s+out\s+of\s+love\s+"
    r"with|(?:got|gotten|grown|grew|become|became)\s+(?:tired|sick|bored)\s+of|grew\s+out\s+of|grown\s+out\s+of)\s+"
)
# a taste one is over: "I'm over jazz these days" (not "over the moon")
_OVER = re.compile(rf"{_SUBJ}(?:\s+(?:am|is|are)|{_APOS}(?:m|s|re))\s+(?:so\s+|totally\s+|completely\s+|kind\s+of\s+|sort\s+of\s+)?"
                   r"over\s+(?!(?:the\s+moon|it|that|this|there|here|now)\b|\d)")
# "we" for the speaker's household when it moves: "We relocated to Edinburgh", "we live in Leeds now"
_WE_HOME = re.compile(
    r"(?<![\w'’])[Ww]e(?P<aux>\s+(?:have|had|are|were)|['’](?:ve|re))?(?P<adv>(?:\s+(?:just|recently|finally|now|since|already|"
    r"eventually|all|both|then|also|been))*)\s+(?P<verb>moved|relocated|settled|live|lived|living|based)\b"
    r"(?=\s+(?:(?:back|away|over|down|up|home|across)\s+){0,2}(?:to|from|in|out\s+of)\b)"
)
# a favourite said with another verb: "my favourite colour has been purple", "A has replaced B as my favourite film"
_WHOSE = r"(?P<who>(?i:my|his|her|their)|[A-Z][a-z]+['’]s)\s+(?:new\s+)?(?P<fav>(?:all[- ]time\s+)?favou?rite\s+[a-z][a-z -]{0,30}?)"
_FAVOURITE_VERB = re.compile(
    rf"\b{_WHOSE}\s+(?:(?:has|have|had)\s+(?:now\s+|lately\s+)?(?:been|become)|became|(?:is|are|{_APOS}s)\s+(?:now|currently)|"
    rf"{_APOS}s\s+(?:been|become))\s+"
)
# "A <verb> B as my favourite film", whatever the verb ("replaced", "tops", "has edged out"): A took B's place
_FAVOURITE_REPLACED = re.compile(
    rf"(?P<v>[^,;]+?)\s+(?:(?:has|have|had)\s+)?(?:now\s+|finally\s+|just\s+)?(?!(?:is|are|was|were|has|have|had|does|did|"
    rf"will|would|can|could|might|may)\b)(?:[a-z]+(?:s|ed|en)|beat|overtook|took\s+over\s+from)(?:\s+(?:out|over))?\s+"
    rf"(?P<old>[^,;]+?)\s+as\s+{_WHOSE}(?:\s+(?:now|these\s+days|nowadays|lately))?\s*$"
)
# "Fontaines D.C. are my favourite band", "I'd say A is my favourite film": the value before the favourite
_FAVOURITE_IS = re.compile(
    rf"^(?P<v>[^,;]+?)\s+(?:is|are|{_APOS}s|(?:has|have)\s+(?:now\s+)?(?:become|been)|became)\s+"
    rf"(?:now\s+|still\s+|definitely\s+|easily\s+|officially\s+)?{_WHOSE}"
    rf"(?:\s+(?:now|these\s+days|nowadays|lately))?\s*$"
)
_HEDGE = re.compile(r"^(?i:(?:and|but|so|well|actually|now|lately|these\s+days|nowadays|honestly|today)[,\s]+)*"
                    r"(?:I(?:['’]d|\s+would)?\s+(?:say|think|guess|reckon)(?:\s+that)?,?\s+)?")
_NOT_SAID = re.compile(r"(?i)\b(?:if|when|whether|unless|until|before|used\s+to|says?|said|asks?|asked|thinks?|thought|"
                       r"would|wish|hope)\b|\?|^\W*$")
_FAVOURITE_REPLACED_BY = re.compile(
    rf"(?P<old>[^,;]+?)\s+(?:(?:has|have|had)\s+been|was|got|is)\s+(?:replaced|overtaken|displaced|dethroned|supplanted)\s+by\s+"
    rf"(?P<v>[^,;]+?)\s+as\s+{_WHOSE}\s*$"
)

# an end said through what has not held since: "I haven't been a journalist since 2019", "she hasn't lived in Rome for years"
_PARTICIPLES = {"been": "be", "worked": "work", "lived": "live", "eaten": "eat", "drunk": "drink", "played": "play",
                "smoked": "smoke", "driven": "drive", "used": "use", "worn": "wear"}
_NOT_SINCE = re.compile(
    rf"{_SUBJ}(?:\s+(?:have|has)(?:n{_APOS}t|\s+not)|{_APOS}ve\s+not)\s+(?P<pp>{'|'.join(_PARTICIPLES)})\b"
    r"(?P<x>(?:(?!\bnot\b|n['’]t\b)[^,;.!?])+?)\s+(?:since|for\s+(?:years|months|ages|a\s+(?:while|long\s+time)|"
    r"(?:two|three|four|five|six|several|many|a\s+few)\s+(?:years|months)))\b[^,;.!?]*"
)
# the last day of a job, said in the past: "My last day at Amazon was Friday", "Tom's last day at the BBC was in May"
_LAST_DAY = re.compile(
    r"(?P<whose>(?<![\w'’])(?i:my|his|her)|[A-Z][a-z]+['’]s)\s+(?:very\s+)?last\s+(?:day|shift)\s+(?:at|with)\s+"
    r"(?P<org>(?:the\s+)?[A-Z][^,;.!?]*?)\s+(?:was|were)\b[^,;.!?]*"
)
# a job's end and the next employer in one breath: "handed in his notice at Deloitte and joined KPMG" -> "left
# Deloitte to join KPMG", which `CHANGES` reads as a change of employer
_END_AND_JOIN = re.compile(
    r"\b(?:handed\s+in\s+(?:my|his|her|their)\s+(?:notice|resignation)\s+(?:at|to)|quit|left|resigned\s+from|"
    r"(?:got|was|were)\s+(?:laid\s+off|let\s+go|fired|made\s+redundant)\s+(?:from|by|at))\s+"
    r"(?P<old>(?:the\s+)?[A-Z][\w&'’-]*(?:\s+(?:of\s+)?[A-Z][\w&'’-]*)*)\s*,?\s+and\s+(?:then\s+|later\s+|now\s+|soon\s+)?"
    r"(?:(?:has|have)\s+)?(?:joined|started\s+(?:at|with)|went\s+to\s+work\s+(?:at|for)|signed\s+(?:on\s+)?with)\s+"
    r"(?=(?:the\s+)?[A-Z])"
)
_NOTICE = re.compile(rf"{_SUBJ}(?:\s+(?:has|have|had)|{_APOS}(?:ve|s))?\s+(?:(?:just|recently|finally)\s+)*handed\s+in\s+"
                     r"(?:my|his|her|their)\s+(?:notice|resignation)\s+(?:at|to)\s+" + _NAMED)
# a taste that ends said with the thing as subject: "Rock climbing doesn't do it for me anymore", "Painting bores Sofia"
_THING_BORES = re.compile(
    r"^(?P<lead>(?:(?i:and|but|so|well|honestly|lately|now)[,\s]+)*)(?P<thing>[A-Z]?[a-z]+(?:\s+(?!(?:just|really)\b)[a-z]+){0,2})\s+(?:(?:just|really)\s+)?"
    r"(?:(?:doesn['’]t|does\s+not|no\s+longer|don['’]t|do\s+not)\s+(?:really\s+)?(?:do\s+(?:it|much|anything)\s+for|appeal\s+to|"
    r"interest|excite|thrill)|(?:really\s+|just\s+)?(?:bores|bore|annoys|irritates)|(?:has|have)\s+lost\s+(?:its|their)\s+"
    r"(?:appeal|charm)\s+for)\s+(?P<who>me|us|[A-Z][a-z]+)\b"
)
# a taste that ends said by refusing it: "Kiwi won't touch sunflower seeds anymore", "I can't eat sushi any more"
_WONT = re.compile(
    rf"{_SUBJ}\s+(?:won{_APOS}t|will\s+not|refuses\s+to|refuse\s+to|can{_APOS}t|cannot)\s+(?:even\s+)?"
    rf"(?:touch|eat|drink|look\s+at|go\s+near)\s+{_INNER}{_ANYMORE}"
)
# "my wife and I", "Jake and I" (moving home together) say "we"; "we both", "we all" include the speaker
_AND_I = re.compile(r"(?<![\w'’])(?:(?i:my|our)\s+[a-z]+|[A-Z][a-z]+)\s+and\s+I\b(?=\s+(?:have\s+|had\s+|are\s+|were\s+)?"
                    r"(?:(?:just|recently|finally|both|all|then|also)\s+)*(?:[a-z]+\s+(?:up|out)\s+and\s+)?(?:moved|relocated|settled|live|lived|living)\b)")
_WE_BOTH = re.compile(r"(?<![\w'’])[Ww]e\s+(?:both|all)\b")
# "we packed up and moved to Glasgow": a verb and "and" before a move are part of the move
_AND_MOVED = re.compile(r"(?<![\w'’])(?P<we>[Ww]e|I)\s+(?:[a-z]+\s+){1,3}?and\s+(?=(?:moved|relocated)\b)")
# a diet turned to: "Lucy has turned vegan", "I went vegetarian", "he's vegan now" -> "is a vegan now"
_DIETS = r"(?:vegan|vegetarian|pescatarian|pescetarian|flexitarian|carnivore)"
_TURNED_DIET = re.compile(
    rf"{_SUBJ}(?:\s+(?:has|have|had)|{_APOS}(?:s|ve))?\s+(?:(?:just|recently|finally|now|since|also)\s+)*"
    rf"(?:turned|gone|went|become|became)\s+(?:fully\s+|completely\s+)?(?P<v>{_DIETS})\b"
)
_IS_DIET_NOW = re.compile(rf"{_SUBJ}(?:\s+(?:is|am|are)|{_APOS}(?:s|m|re))\s+(?:now\s+|fully\s+)*(?P<v>{_DIETS})(?=\s+(?:now|these\s+days|nowadays)\b)")
# "<Name> says <A> is his favourite sport": what a person says of themself is about them
_SAYS = re.compile(r"^(?P<lead>(?:(?:and|but|so|well|now|apparently)[,\s]+)*)(?P<name>[A-Z][a-z]+)\s+(?:says|said|tells\s+me|told\s+me|"
                   r"reckons|claims|insists)(?:\s+that)?,?\s+(?P<rest>.+)$")


def _says(m: re.Match[str]) -> str:
    """"Tom says rugby is his favourite sport now" -> "rugby is Tom's favourite sport now"; only the
    person's own "he"/"his" become the name ("Tom says his sister moved" is about the sister)."""
    name, rest = m.group("name"), m.group("rest")
    rest = re.sub(r"^(?:he|she)\b", name, rest)
    rest = re.sub(r"(?<![\w'’])(?:his|her)\s+(?=(?:new\s+)?(?:all[- ]time\s+)?favou?rite\b)", f"{name}'s ", rest)
    return m.group("lead") + rest


def _thing_bores(m: re.Match[str]) -> str:
    who = m.group("who")
    subject = "I" if who in ("me", "us") else who
    return f"{m.group('lead')}{subject} {_no_longer(subject, 'like')} {m.group('thing').lower()}"


def _not_since(m: re.Match[str]) -> str:
    return f"{m.group('subj')} {_no_longer(m.group('subj'), _PARTICIPLES[m.group('pp')])}{m.group('x')}"


# "Friday was my last day at Ikea"
_WAS_LAST_DAY = re.compile(
    r"^(?P<lead>[^,;]*?)\bwas\s+(?P<whose>(?i:my|his|her)|[A-Z][a-z]+['’]s)\s+(?:very\s+)?last\s+(?:day|shift)\s+(?:at|with)\s+"
    r"(?P<org>(?:the\s+)?[A-Z][^,;.!?]*)"
)
# a home said as "home": "Home is Valencia now", "Lisbon is our home now"
_HOME_IS = re.compile(
    r"^(?P<lead>(?:(?:and|but|so|well|now)[,\s]+)*)(?:(?i:home)\s+is\s+(?:now\s+)?(?P<p>(?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)|"
    r"(?P<p2>(?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)\s+is\s+(?:now\s+)?(?:my|our)\s+(?:new\s+)?home)\b"
)


# the employer as the subject: "Equinor let me go", "Statkraft hired me last month"
_LET_ME_GO = re.compile(r"^(?P<lead>(?:(?:and|but|so|then)[,\s]+)*)(?P<org>(?:the\s+)?[A-Z][\w&'’.-]*(?:\s+[A-Z][\w&'’.-]*)*)\s+"
                        r"(?:let\s+me\s+go|laid\s+me\s+off|fired\s+me|sacked\s+me|made\s+me\s+redundant)\b")
_HIRED_ME = re.compile(r"^(?P<lead>(?:(?:and|but|so|then)[,\s]+)*)(?P<org>(?:the\s+)?[A-Z][\w&'’.-]*(?:\s+[A-Z][\w&'’.-]*)*)\s+"
                       r"(?:hired|recruited|poached|headhunted|took)\s+me(?:\s+on)?\b")
# "Mira and her husband moved to Bergen": a household moving home; the named person moved
_AND_THEIR = re.compile(r"^(?P<lead>(?:(?:and|but|so)[,\s]+)*)(?P<name>[A-Z][a-z]+)\s+and\s+(?:his|her|their)\s+[a-z]+\s+"
                        r"(?=(?:have\s+|had\s+|just\s+|recently\s+|finally\s+)*(?:moved|relocated|settled)\b)")
# "Tea is my go-to drink now": what one prefers, said by its place
_GO_TO = re.compile(r"^(?!(?:it|that|this|these|those|he|she|they|which|what)\b)(?P<v>[^,;]+?)\s+(?:is|are)\s+(?:now\s+)?"
                    r"(?:my|our)\s+(?:new\s+)?(?:go-to|usual|drink\s+of\s+choice)\b(?:\s+(?:drink|order|breakfast|snack|ride|"
                    r"coffee|beer|meal|lunch|dinner))?(?=\s*(?:now|these\s+days|nowadays|lately)?\s*$)", re.IGNORECASE)


# a taste come to: "I've come to love running", "she learned to like olives", "Running has grown on me"
_CAME_TO = re.compile(rf"{_SUBJ}(?:\s+(?:has|have|had)|{_APOS}(?:ve|s))?\s+(?:(?:slowly|finally|actually|really)\s+)*"
                      r"(?:come|came|grown|grew|learned|learnt)\s+to\s+(?:love|like|enjoy|appreciate)\b")
_GROWN_ON = re.compile(r"^(?P<lead>(?:(?:and|but|so|well|honestly)[,\s]+)*)(?P<thing>[A-Z]?[a-z]+(?:\s+[a-z]+){0,2})\s+"
                       r"(?:has|have)\s+(?:really\s+|slowly\s+|finally\s+)*grown\s+on\s+(?P<who>me|[A-Z][a-z]+)\b")


def _hired_me(m: re.Match[str]) -> str:
    """"Apple hired me as a consultant" -> "I joined Apple as a consultant" (a job and an employer);
    "Statkraft hired me last month" -> "I started working at Statkraft last month"."""
    verb = "joined" if re.match(r"\s+as\s", m.string[m.end():]) else "started working at"
    return f"{m.group('lead')}I {verb} {m.group('org')}"


def _last_day(m: re.Match[str]) -> str:
    whose = m.group("whose")
    subject = {"my": "I", "his": "he", "her": "she"}.get(whose.lower(), whose[:-2])
    return f"{subject} {_no_longer(subject, 'work')} at {m.group('org')}"


# a vehicle for hire driven is a job: "he drives a taxi now" -> "he is a taxi driver now"
_DRIVES_FOR_HIRE = re.compile(
    r"(?P<i>(?<![\w'’])I(?:\s+(?:now|still|also))?\s+)?(?P<verb>drives|drive)\s+(?:a|an)\s+"
    r"(?P<v>(?:school\s+|delivery\s+|city\s+)?(?:taxi|cab|bus|truck|lorry|ambulance|forklift|tram|van))\b(?!\s+to\b)"
)


def _drives(m: re.Match[str]) -> str:
    if m.group("i"):
        return f"{m.group('i')}am a {m.group('v')} driver"
    return f"is a {m.group('v')} driver" if m.group("verb") == "drives" else m.group()


def _we_home(m: re.Match[str]) -> str:
    aux = (m.group("aux") or "").strip().replace("’", "'")
    aux = {"have": " have", "had": " had", "'ve": "'ve", "are": " am", "'re": "'m", "were": " was"}.get(aux, "")
    return f"I{aux}{m.group('adv')} {m.group('verb')}"


def _favourite(text: str) -> str:
    """"A has replaced B as my favourite film" -> "my favourite film is A"; "my favourite colour has
    been purple" -> "my favourite colour is purple": a favourite holds one value, the new one replaces."""
    if "favo" not in text:  # every pattern here needs "favourite" or "favorite": most sentences skip them all
        return text
    for pattern in (_FAVOURITE_REPLACED_BY, _FAVOURITE_REPLACED, _FAVOURITE_IS):
        # "Honestly, A is my favourite film": a hedge before the value says nothing
        hedge = _HEDGE.match(text) if pattern is _FAVOURITE_IS else None
        said = text[hedge.end():] if hedge else text
        m = pattern.search(said)
        if m and not re.search(r"(?i)^(?:nothing|no\s+one|none|nobody)\b|\b(?:not|never)\b|n['’]t\b", m.group("v")):
            lead = _HEDGE.match(m.group("v"))
            value = m.group("v")[lead.end():] if lead else m.group("v")
            if pattern is _FAVOURITE_IS and (not value or re.match(
                    r"(?i)(?:it|this|that|these|those|he|she|they|which|what|who|there|here)\b", value)):
                continue
            return f"{said[:m.start()]}{m.group('who')} {m.group('fav')} is {value}"
    # "Heat got knocked off the top spot, Parasite is my favourite film now": the favourite in the last clause, after
    # one that is no condition, report or question ("If I had to pick, …", "she asked whether …")
    head, comma, tail = text.rpartition(", ")
    if comma and not _NOT_SAID.search(head):
        m = _FAVOURITE_IS.search(tail)
        if m and not re.match(r"(?i)(?:it|this|that|these|those|he|she|they|which|what|who|there|here|nothing|no\s+one|none)\b|"
                              r".*\b(?:not|never)\b|.*n['’]t\b", m.group("v")):
            return f"{head}; {m.group('who')} {m.group('fav')} is {m.group('v')}"
    return _FAVOURITE_VERB.sub(lambda m: f"{m.group('who')} {m.group('fav')} is ", text)


def _opener(clause: str) -> str:
    """"These days I drink tea" -> "I now drink tea"; "Last year, Tom moved to Oslo" -> "Tom moved to Oslo".

    Only when a subject follows the opener: "Since I moved to Denver, …" is a clause of its own."""
    for pattern, now in ((_PRESENT_OPENER, True), (_PAST_OPENER, False)):
        m = pattern.match(clause)
        if not m:
            continue
        rest = clause[m.end():]
        subject = _OPENED_SUBJECT.match(rest)
        if not subject:
            return clause
        after = rest[subject.end():]
        if now and not _AUX_NEXT.match(after) and not re.match(r"^\s+now\b", after):
            rest = f"{subject.group()} now{after}"
        return m.group("lead") + rest
    return clause


def normalise(sentence: str) -> str:
    """The sentence with its phrasings of an end rewritten to "no longer", and a time opener to "now".

    "Paul isn't my boss anymore" -> "Paul is no longer my boss"; "I don't live in Rome any more" ->
    "I no longer live in Rome"; "Tom stopped working at Google" -> "Tom no longer works at Google";
    "I used to be a nurse" -> "I am no longer a nurse"; "I quit my job at Acme" -> "I no longer work
    at Acme"; "She moved away from Leeds" -> "She no longer lives in Leeds". Anything else is
    returned as it is."""
    text = _AND_I.sub("we", idioms.rewrite(sentence))
    text = _WE_BOTH.sub("I", _AND_MOVED.sub(lambda m: f"{m.group('we')} ", text))
    text = _WE_HOME.sub(_we_home, text)
    text = _SAYS.sub(_says, text)
    text = _opener(_favourite(text))
    text = _THING_BORES.sub(_thing_bores, text)
    text = _END_AND_JOIN.sub(lambda m: f"left {m.group('old')} to join ", text)
    text = _NOTICE.sub(_ended("work", "at "), text)
    text = _LAST_DAY.sub(_last_day, text)
    text = _LET_ME_GO.sub(lambda m: f"{m.group('lead')}I no longer work at {m.group('org')}", text)
    text = _HIRED_ME.sub(_hired_me, text)
    text = _CAME_TO.sub(lambda m: f"{m.group('subj')} {'like' if m.group('subj') == 'I' else 'now likes'}", text)
    text = _GROWN_ON.sub(lambda m: f"{m.group('lead')}{'I like' if m.group('who') == 'me' else m.group('who') + ' now likes'} "
                                   f"{m.group('thing').lower()}", text)
    text = _AND_THEIR.sub(lambda m: f"{m.group('lead')}{m.group('name')} ", text)
    text = _GO_TO.sub(lambda m: f"I prefer {m.group('v')}", text)
    text = _WAS_LAST_DAY.sub(_last_day, text)
    text = _HOME_IS.sub(lambda m: f"{m.group('lead')}I now live in {m.group('p') or m.group('p2')}", text)
    text = _NOT_SINCE.sub(_not_since, text)
    text = _WONT.sub(lambda m: f"{m.group('subj')} {_no_longer(m.group('subj'), 'like')} {m.group('x')}", text)
    text = _TURNED_DIET.sub(lambda m: f"{m.group('subj')} {'am' if m.group('subj') == 'I' else 'is'} now a {m.group('v')}", text)
    text = _IS_DIET_NOW.sub(lambda m: f"{m.group('subj')} {'am' if m.group('subj') == 'I' else 'is'} now a {m.group('v')}", text)
    text = _DRIVES_FOR_HIRE.sub(_drives, text)
    text = _BE_NOT.sub(lambda m: f"{m.group('be')} no longer {m.group('x')}", text)
    text = _BE_NT.sub(lambda m: f"{m.group('be')} no longer {m.group('x')}", text)
    text = _DO_NOT.sub(lambda m: f"no longer {m.group('v') if m.group('aux') == 'do' else third_person(m.group('v'))}"
                                 f"{m.group('x')}", text)
    text = _STOPPED.sub(lambda m: f"{m.group('subj')} {_no_longer(m.group('subj'), _GERUNDS[m.group('g')])}", text)
    text = _LAID_OFF.sub(_ended("work", "at "), text)
    text = _LOST_TASTE.sub(_ended("like"), text)
    text = _OVER.sub(_ended("like"), text)
    text = _USED_TO.sub(lambda m: f"{m.group('subj')} {_no_longer(m.group('subj'), m.group('v'))}", text)
    text = _QUIT_JOB.sub(lambda m: f"{m.group('subj')} {_no_longer(m.group('subj'), 'work')} "
                                   f"{'as' if m.group('prep') == 'as' else 'at'} ", text)
    text = _RETIRED_FROM.sub(_ended("work", "at "), text)
    text = _MOVED_AWAY.sub(_ended("live", "in "), text)
    return text


# ---------------------------------------------------------------- verbs of change

@dataclass(frozen=True)
class Change:
    """A verb of change read after a subject: the attribute it sets, the new value's words as
    written (uncut), the old value's words when the phrasing names it ("from A", "instead of A"),
    and whether it ends the fact instead ("gave up A")."""

    attribute: str
    value: str
    old: str = ""
    negated: bool = False
    start: int = 0


_V = r"(?P<v>[^!?\n;]+)"
_HABIT = (r"(?:(?:drinks?|uses?|takes?|rides?|drives?|eats?|plays?|reads?|watch(?:es)?|orders?|prefers?|has|have|"
          r"chooses?|cooks?|wears?|goes\s+for|go\s+for|listens?\s+to|smokes?)(?<!has)(?<!have)|(?:has|have)(?!\s+[a-z]+(?:ed|en)\b))")
_HABIT_NOW = r"(?:drinks?|uses?|takes?|rides?|drives?|eats?|plays?|reads?|watch(?:es)?|orders?|cooks?|wears?|listens?\s+to)"
_JOB_NOUN = r"(?:(?:a|an|the|my|his|her|their)\s+)?(?:new\s+|first\s+|full-time\s+|part-time\s+)?(?:job|position|role|post)"

# the words before a name swapped for another: a determiner and an adjective ("my old Audi", "sunny Málaga")
_NAMED_SWAP = r"(?:(?:my|his|her|their|our|the|a|an)\s+)?(?:[a-z]+\s+)?"
# a name taken in exchange without "a"/"an" ("for sunny Málaga", "for Apple Music"); "for a Nissan Leaf" is a thing had
_BARE_NAME = r"(?:(?:my|his|her|their|our|the)\s+)?(?:[a-z]+\s+)?(?<!\ba\s)(?<!\ban\s)"
_OUT_OF_WORK = (r"(?:(?:has|have|had)\s+)?(?:(?:is|am|are|was|were|{a}s|{a}m|{a}re)\s+(?:now\s+|currently\s+|still\s+)?)?"
                # an object after the verb is something else retired or fired ("retired the old laptop", "fired up")
                r"(?:retired\b(?!\s+(?:from|as|the|my|his|her|their|our|it|them|this|that|a|an)\b)|(?:got|been|was|were)\s+"
                r"(?:laid\s+off|let\s+go|made\s+redundant|fired|sacked)\b(?!\s+(?:from|at|by|with|up)\b)|lost\s+(?:my|his|her|their)\s+job\b(?!\s+(?:at|with)\s)|"
                r"unemployed\b|out\s+of\s+work\b|between\s+jobs\b|jobless\b)").format(a=_APOS)
# (verb phrase and value, attribute, negated). Order matters: the first family that reads a span wins.
CHANGES: list[tuple[str, str, bool]] = [
    # a new job: "became a", "started working as", "got a job as", "was promoted to"
    (r"(?:became|become|started\s+(?:working|work)\s+as|(?:got|took|accepted|landed|found)\s+" + _JOB_NOUN + r"\s+as|"
     r"(?:was|got|been|be)\s+promoted\s+to|retrained\s+as|(?:started|began)\s+(?:out\s+|work\s+|working\s+)?as|qualified\s+as|trained\s+to\s+be|joined\s+[A-Z][^!?\n;]*?\s+as)\s+"
     + _V, "occupation", False),
    # a new employer: "started a new job at", "got a job with", "was hired by", "joined Acme as"
    (r"(?:(?:started|began)\s+(?:" + _JOB_NOUN + r"|working|work)\s+(?:at|for|with)|(?:got|took|accepted|landed|found)\s+"
     + _JOB_NOUN + r"\s+(?:at|with)|(?:was|got|been)\s+(?:hired\s+(?:at|by)|(?:poached|headhunted|recruited|snapped\s+up)\s+by)|went\s+to\s+work\s+(?:at|for))\s+" + _V,
     "employer", False),
    (r"joined\s+(?P<v>[A-Z][^!?\n;]*?)\s+as\s+(?:a|an)\s", "employer", False),
    (r"(?:started|began)\s+(?:out\s+)?(?:at|with)\s+(?P<v>(?:the\s+)?[A-Z][^!?\n;]*)", "employer", False),
    # leaving one place for another: "left Acme to join Globex" is a job; "left Acme for Globex" a job
    # or a home, whichever Acme was (`employer|location`: the claim holds only where it replaces)
    (r"(?:quit|left)\s+(?:(?:my|his|her|their)\s+job\s+(?:at|with)\s+)?(?P<old>[A-Z][^!?\n;]*?)\s+(?:to\s+join|to\s+work\s+"
     r"(?:at|for)|for\s+a\s+(?:new\s+)?job\s+(?:at|with))\s+" + _V, "employer", False),
    (r"(?:quit|left)\s+(?:my|his|her|their)\s+job\s+(?:at|with)\s+(?P<old>[A-Z][^!?\n;]*?)\s+for\s+(?P<v>[A-Z][^!?\n;]*)",
     "employer", False),
    (r"left\s+(?P<old>[A-Z][^!?\n;]*?)\s+for\s+(?P<v>[A-Z][^!?\n;]*)", "employer|location", False),
    # a new home: "moved from A to B", "is based in", "settled in"
    (r"(?:moved|relocated)\s+from\s+(?P<old>[^!?\n;]+?)\s+to\s+" + _V, "location", False),
    (r"(?:is|am|are|{a}m|{a}s|{a}re)\s+(?:now\s+|currently\s+)?based\s+(?:in|out\s+of)\s+".format(a=_APOS) + _V,
     "location", False),
    (r"(?:settled|resettled)\s+(?:down\s+)?in\s+" + _V, "location", False),
    # a home said with "home": "made Austin my home", "I call Lisbon home now"
    (r"(?:made|make|makes|call|calls|called)\s+(?P<v>(?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)\s+(?:(?:my|our|his|her|their)\s+)?"
     r"(?:new\s+|permanent\s+)?home\b", "location", False),
    # a transfer goes to an organisation (a school, an office of one's employer) or a place, by the name's form
    (r"(?:transferred|transfered|switched\s+schools?)\s+to\s+" + _V, "where", False),
    # one thing in place of another: "drinks tea instead of coffee", "gave up A for B", "replaced A with B"
    (r"(?:now\s+|mostly\s+|mainly\s+|only\s+)?" + _HABIT + r"\s+(?P<v>[^!?\n;]+?)\s+(?:instead\s+of|rather\s+than)\s+"
     r"(?P<old>[^!?\n;]+)", "prefers", False),
    (r"(?:gave|given|give)\s+up\s+(?P<old>[^!?\n;]+?)\s+(?:for|in\s+favou?r\s+of)\s+" + _V, "prefers", False),
    # one name for another ("swapped rainy Cardiff for sunny Málaga", "traded Spotify for Apple Music"): a home, a job or
    # a preference, whichever the old name was held as
    (r"(?:swapped|traded|exchanged)\s+" + _NAMED_SWAP + r"(?P<old>[A-Z][^!?\n;]*?)\s+for\s+" + _BARE_NAME + r"(?P<v>[A-Z][^!?\n;]*)",
     "prefers|employer|location", False),
    (r"(?:swapped|traded|exchanged|ditched|dropped)\s+(?!" + _NAMED_SWAP + r"[A-Z][^!?\n;]*?\s+for\s+" + _BARE_NAME + r"[A-Z])"
     r"(?P<old>[^!?\n;]+?)\s+for\s+" + _V, "prefers", False),
    (r"replaced\s+(?P<old>[^!?\n;]+?)\s+with\s+" + _V, "prefers", False),
    (r"(?:sold|scrapped|traded\s+in|got\s+rid\s+of)\s+(?:(?:my|his|her|their|our|the)\s+)?(?P<old>[^!?\n;,]+?)\s*,?\s+and\s+"
     # what was bought in its place is a vehicle: a name ("a Tesla") or a kind of one, not "a helmet"
     r"(?:(?:now|then)\s+)?(?:bought|got|leased|drives?|ride|rides)\s+(?P<v>(?:(?:a|an|the)\s+)?(?:new\s+|used\s+|second-hand\s+)?"
     r"(?:[A-Z]|(?:e-?)?(?:car|bike|motorbike|motorcycle|scooter|van|truck)\b)[^!?\n;]*)", "prefers", False),
    (r"switched\s+over\s+to\s+" + _V, "prefers", False),
    (r"(?:upgraded|downgraded)\s+to\s+" + _V, "prefers", False),
    # a hobby taken up: "has taken up tennis instead of golf", "took up running"
    (r"(?:taken|took|take|takes|picked|pick|picks)\s+up\s+(?P<v>[^!?\n;]+?)\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+"
     r"(?P<old>[^!?\n;]+)", "likes", False),
    # an end and what came in its place: "cut out coffee completely and drink matcha", "quit soda and now drink water"
    (r"(?:cut\s+out|quit|dropped|ditched|gave\s+up|given\s+up|stopped\s+(?:drinking|eating|using))\s+(?P<old>[^!?\n;,]+?)"
     r"(?:\s+(?:completely|entirely|altogether|for\s+good))?\s*,?\s+and\s+(?:I\s+)?(?:now\s+|only\s+|just\s+)*" + _HABIT + r"\s+" + _V,
     "prefers", False),
    (r"(?:gave|given)\s+up\s+" + _V, "prefers", True),
    (r"(?:cut\s+out|got\s+rid\s+of|sold|scrapped|ditched)\s+(?:(?:my|his|her|their|our|the)\s+)?"
     r"(?P<v>[^!?\n;,]+?)(?=\s*(?:,|\s(?:and|but|so|because|since)\b|$))", "prefers", True),
    # a habit said with a marker of the present: "now drinks tea", "uses Linux these days"
    (r"(?:now|mostly|mainly|only)\s+" + _HABIT_NOW + r"\s+" + _V, "prefers", False),
    (_HABIT_NOW + r"\s+(?P<v>[^!?\n;,]+?)\s+(?:now|these\s+days|nowadays)\b", "prefers", False),
    # an end said with the habit's verb: "no longer drinks coffee"
    (r"no\s+longer\s+" + _HABIT + r"\s+" + _V, "prefers", True),
    # a job's end said through its activity, whatever the job was called: "is no longer cooking
    # professionally", "no longer teaches for a living" (the value is empty: every job ends)
    (r"(?:(?:is|am|are|{a}s|{a}m|{a}re)\s+)?no\s+longer\s+(?:[a-z]+ing|[a-z]+s?)\s+(?:[a-z]+\s+)?(?:professionally|"
     r"for\s+a\s+living|for\s+(?:work|money|pay)|full[- ]time)\b(?P<v>)".format(a=_APOS), "occupation", True),
    # a working life paused or over, no employer named: "I retired last year", "Joe is retired now", "I was laid off",
    # "I'm unemployed": the job and the employer both end, whatever they were (empty values)
    (_OUT_OF_WORK + r"(?P<v>)", "occupation", True),
    (_OUT_OF_WORK + r"(?P<v>)", "employer", True),
    # working for no employer: "works for himself these days", "went freelance", "is self-employed now"
    (r"(?:works?|working|worked)\s+for\s+(?:my|him|her|them)sel(?:f|ves)\b(?P<v>)|(?:went|gone|going)\s+freelance\b(?P<v2>)|"
     r"(?:is|am|{a}s|{a}m)\s+(?:now\s+)?self-employed\b(?P<v3>)".format(a=_APOS), "employer", True),
    # a student no more: "I graduated in May", "she finished her degree"
    (r"(?:graduated\b(?!\s+from\s+(?:a\s+|an\s+|my\s+|the\s+)?[a-z])|finished\s+(?:my|his|her|their)\s+(?:degree|studies|"
     r"course|PhD|masters)\b)(?P<v>)", "student", True),
    # a habit kept to: "so I stick to tea"
    (r"(?:stick|sticks|stuck|sticking)\s+(?:with|to)\s+(?!(?:the|a|an|my|his|her|its|it|this|that|them|our|your|their|"
     r"together|to)\b)" + _V, "prefers", False),
    # a taste said as who one is: "more of a coffee person", "a tea drinker now", "a huge Arsenal fan"
    (r"(?:is|am|are|{a}s|{a}m|{a}re)\s+(?:now\s+|definitely\s+|really\s+|totally\s+|very\s+much\s+)?(?:more\s+of\s+|"
     r"much\s+more\s+of\s+)?(?:a|an)\s+(?P<v>[a-z][\w-]*(?:\s[a-z][\w-]*)?)\s+(?:person|guy|gal|girl|drinker|kind\s+of\s+"
     r"(?:person|guy|girl))\b".format(a=_APOS), "prefers", False),
    (r"(?:is|am|are|{a}s|{a}m|{a}re)\s+(?:now\s+|still\s+)?(?:a|an)\s+(?:(?:huge|big|massive|lifelong|life-long|die-?hard|"
     r"avid|devoted|loyal|keen|long-time|longtime|massive)\s+)*(?P<v>[A-Z][\w'’.&-]*(?:\s[A-Z][\w'’.&-]*){{0,3}})\s+"
     r"(?:fan|supporter)\b".format(a=_APOS), "likes", False),
]

_AUX = rf"(?:\s+(?:has|have|had)|{_APOS}ve)?"
_ADVERBS = r"(?:\s+(?:just|recently|finally|now|since|already|eventually|then|also))*"
_SELF = [(re.compile(rf"(?<![\w'’])I{_AUX}{_ADVERBS}(?:\s+|(?=['’]))(?:{phrase})"), a, n) for phrase, a, n in CHANGES]
_AFTER_SUBJECT = [(re.compile(rf"^(?:(?:has|have|had)\s+)?(?:(?:just|recently|finally|now|since|already|eventually|then|"
                              rf"also)\s+)*(?:{phrase})"), a, n) for phrase, a, n in CHANGES]


def find_changes(text: str, *, first_person: bool) -> list[Change]:
    """The verbs of change in `text`: after "I" anywhere in it (`first_person`), or at its start
    (the words after a name or "he"/"she"). One change per attribute and span of text, the first
    family first."""
    patterns = _SELF if first_person else _AFTER_SUBJECT
    found: list[Change] = []
    taken: list[tuple[str, int, int]] = []  # one reading per attribute and span; "joined Acme as an engineer" has two
    for pattern, attribute, negated in patterns:
        for m in pattern.finditer(text):
            if any(a == attribute and s < m.end() and m.start() < e for a, s, e in taken):
                continue
            taken.append((attribute, *m.span()))
            found.append(Change(attribute=attribute, value=m.group("v"), old=m.groupdict().get("old") or "",
                                negated=negated, start=m.start()))
    return sorted(found, key=lambda c: c.start)


# ---------------------------------------------------------------- the end of a couple

ROMANTIC = ("boyfriend", "girlfriend", "partner", "husband", "wife", "spouse", "fiance", "fiancé", "fiancee",
            "fiancée", "sweetheart")
_NAME = r"(?P<name>[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
_BROKE_UP = [
    re.compile(rf"(?<![\w'’])I{_AUX}{_ADVERBS}\s+(?:broke|broken)\s+up\s+with\s+{_NAME}\b"),
    re.compile(rf"(?<![\w'’])I{_AUX}{_ADVERBS}\s+(?:divorced|dumped|separated\s+from|split\s+(?:up\s+)?from)\s+{_NAME}\b"),
    re.compile(rf"^{_NAME}\s+and\s+I{_AUX}{_ADVERBS}\s+(?:broke\s+up|split(?:\s+up)?|divorced|separated|got\s+divorced)\b"),
    re.compile(rf"^{_NAME}\s+(?:broke\s+up\s+with|dumped|divorced|left)\s+me\b"),
]


_MARRIED = [
    (re.compile(rf"^{_NAME}\s+and\s+I{_AUX}{_ADVERBS}\s+(?:got|are|were|have\s+been)\s+(?:now\s+)?(?P<kind>married|engaged)\b"), None),
    (re.compile(rf"(?<![\w'’])I{_AUX}{_ADVERBS}\s+(?:married|got\s+(?P<kind>married|engaged)\s+to)\s+{_NAME}\b"), "married"),
    (re.compile(rf"^{_NAME}\s+and\s+I{_AUX}{_ADVERBS}\s+(?:tied\s+the\s+knot|got\s+hitched|said\s+(?:our\s+)?(?:I\s+do|vows))\b"),
     "married"),
]


def started_couple(clause: str) -> tuple[str, str] | None:
    """(name, relation) when the speaker says they married or got engaged to someone: "Ella and I got
    married" -> ("Ella", "spouse"); "I got engaged to Sam" -> ("Sam", "fiance")."""
    for pattern, kind in _MARRIED:
        m = pattern.search(clause)
        if m:
            return str(m.group("name")), {"married": "spouse", "engaged": "fiance"}[str(m.groupdict().get("kind") or kind)]
    return None


DIETS = ("vegan", "vegetarian", "pescatarian")
_MEAT_AGAIN = re.compile(
    r"(?<![\w'’])(?:eat|eats|eating|ate)\s+(?:meat|fish|chicken|steak|burgers?)\s+(?:again|now)\b|"
    r"(?:gone|went|going|go)\s+back\s+to\s+eating\s+(?:meat|fish)|(?:started|began)\s+eating\s+(?:meat|fish)\s+again|"
    r"(?:am|['’]m)\s+back\s+on\s+(?:the\s+)?(?:meat|fish|steak|chicken|burgers)\b"
)


SHARED_HOME = ("roommate", "flatmate", "housemate")
# "moved out" alone is left to what follows it ("Marco moved out, so he's not my roommate"): he may have moved out of anywhere
_MOVED_OUT = re.compile(rf"(?<![\w'’]){_NAME}\s+(?:(?:has|had)\s+)?(?:(?:just|finally|recently)\s+)?"
                        r"(?:(?:found|got|bought|rented)\s+(?:his|her|their)\s+own\s+(?:place|flat|apartment|house)|moved\s+out\b(?!\s+of\b))")


def moved_out(clause: str) -> str | None:
    """The name of someone the speaker says found their own place ("since Ahmed found his
    own place"): a shared home's relation to them ends (`SHARED_HOME`); any other relation is kept."""
    m = _MOVED_OUT.search(clause)
    return m.group("name") if m else None


def left_diet(clause: str) -> bool:
    """True when the speaker says they eat meat again ("I eat meat again these days", "went back to
    eating meat"): a meatless diet held ends (`DIETS`), whichever it was."""
    return bool(re.match(r"^(?:(?:and|but|so|well|actually)[,\s]+)*I\b", clause) and _MEAT_AGAIN.search(clause))


def ended_relation(clause: str) -> str | None:
    """The name of a partner the speaker says they broke up with, divorced or split from; else None.

    The relation itself goes unnamed in such sentences, so every couple's relation to that name ends
    (`ROMANTIC`); a friend or a brother of that name is kept."""
    for pattern in _BROKE_UP:
        m = pattern.search(clause)
        if m:
            return m.group("name")
    return None
