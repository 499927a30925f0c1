"""Idioms of a fact or a change, rewritten to the plain forms the claim rules read.

People rarely say "I now work at Netflix"; they say "my paycheck comes from Netflix", "Netflix
took me on", "I've been at Netflix for six years". Each family below is one way of saying a job, a
home, a taste or a favourite, read as a whole idiom (not a verb list) and rewritten to the form the
rules in `changes` and `claims` already read ("I work at", "now lives in", "no longer likes", "my
favourite K is"), so every subject the rules know ("I", a name, "he"/"she") gets it at once:

- a job: an employer as the subject ("<Org> took me on", also after a comma), pay that comes from
  an employer, "been at <Org> for/since", "is at <Org> after N years with <Org2>", "<Org> and I
  parted ways", "'s been poached by", "walked away from <field> and is a <job>", "enjoying his
  retirement";
- a home: "upped sticks and headed to", "the move to X is done", "back (home) in X for good",
  "home for me has been X" (after a time opener too), "lives with <someone> in X";
- who someone is: "our neighbours' son, Felix, is …", "is a headmistress who lives in X";
- a taste: "come round to X", "warmed to X", "grown to hate X", "X has won me over", "X is all he
  cares about", "X is the one thing I could eat every day", "I barely touch X", "X is what I use",
  "cancelled my X subscription", "out went A, and in came B";
- a favourite: "X is the colour I love most", "ask me my favourite film and I'd say X".

Pure functions of one sentence; a rewrite only fires on the whole idiom, so a sentence without one
comes back unchanged.
"""

from __future__ import annotations

import re
from typing import Callable

from mirix_py.agents.offline.rules import semantic as entity_rules

__all__ = ["rewrite"]

_A = r"['’]"
_LEAD = r"(?P<lead>(?:(?:and|but|so|well|honestly|actually|funny\s+thing|thankfully|luckily)[,\s]+)*)"
# a subject the rules read: "I", "he"/"she", or a name of one or two capitalised words
_SUBJ = r"(?P<subj>(?<![\w'’])I|(?<![\w'’])(?:[Hh]e|[Ss]he)|[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
# a name of an organisation or a place: capitalised words, "the BBC", "Sainsbury's", "Smith & Co."
_ORG = r"(?P<org>(?:the\s+)?[A-Z][\w&'’.-]*(?:\s+(?:of\s+|&\s+)?[A-Z][\w&'’.-]*)*)"
_PLACE = r"(?P<place>(?:the\s+)?[A-Z][\w'’.-]*(?:[\s-]+(?:de\s+|del\s+|upon\s+)?[A-Z][\w'’.-]*)*)"
# where a clause may start: the sentence's start or after a semicolon ("Leo has ditched football; basketball is all…")
_START = r"(?:^|(?<=;\s))"
_TIME_OPENER = (r"(?:(?i:since|for|over|during|from)\s+(?:the\s+)?(?:spring|summer|autumn|fall|winter|start\s+of\s+the\s+year|"
                r"new\s+year|[A-Z][a-z]+|\d{4}|last\s+\w+)|(?i:these\s+days|nowadays|lately|now)),?\s+")


def _subject_verb(subj: str, first: str, third: str) -> str:
    return f"{subj} {first if subj == 'I' else third}"


def _be(subj: str) -> str:
    return "am" if subj == "I" else "is"


# ---------------------------------------------------------------- a job

# "Salesforce took me on a week later", "…, and Aldi snapped me up": the employer as the subject, after a comma too
_TOOK_ME_ON = re.compile(rf"(?:^|(?<=[,;]\s)){_LEAD}{_ORG}\s+(?:has\s+|have\s+)?(?:took|taken|snapped|brought|signed)\s+me\s+(?:on|up)\b")
# "Microsoft and I parted ways": a job's end with the employer as the subject
_PARTED_WAYS = re.compile(rf"^{_LEAD}{_ORG}\s+and\s+I\s+(?:have\s+|had\s+)?(?:parted\s+ways|parted\s+company|went\s+our\s+separate\s+ways)\b")
_I_PARTED_WAYS = re.compile(r"(?<![\w'’])I(?:\s+have|['’]ve)?\s+(?:parted\s+ways|parted\s+company)\s+with\s+" + _ORG)
# "my paycheck comes from Netflix", "my salary is paid by the council now"
_PAY_FROM = re.compile(rf"{_LEAD}(?i:my|his|her)\s+(?:pay(?:check|cheque|slip)?|salary|wages?|income)\s+(?:now\s+)?"
                       rf"(?:comes?|is\s+coming|is\s+paid|gets?\s+paid)\s+(?:from|by)\s+{_ORG}")
# "I've been at the Royal Mail for about six years", "Tariq has been with Boots since 2019"
_BEEN_AT = re.compile(rf"{_SUBJ}(?:\s+(?:has|have)|{_A}(?:ve|s))\s+been\s+(?:working\s+)?(?:at|with)\s+{_ORG}"
                      r"\s+(?:for|since)\b[^,;.!?]*")
# "Raj is at Oracle after eight years with IBM": the new employer, the old one named by the years there
_AT_AFTER_YEARS = re.compile(rf"{_SUBJ}(?:\s+(?:is|am)|{_A}[sm])\s+(?:now\s+)?at\s+{_ORG}\s+(?:now\s+)?after\s+"
                             r"(?:\w+\s+){0,2}(?:years?|months?|decades?)\s+(?:with|at|in)\s+(?P<old>(?:the\s+)?[A-Z][\w&'’.-]*"
                             r"(?:\s+[A-Z][\w&'’.-]*)*)")
# "Nora walked away from the law and is a full-time potter": an old field left, the new job after "and"
_LEFT_FIELD_AND_IS = re.compile(
    rf"{_SUBJ}\s+(?:(?:has|had)\s+)?(?:walked|stepped|turned)\s+away\s+from\s+[^,;.!?]+?\s+and\s+(?:is|am|{_A}s|{_A}m)\s+(?:now\s+)?"
    r"(?=(?:a|an)\s)")
# "is enjoying his retirement": a working life over
_RETIREMENT = re.compile(rf"(?:is|am|{_A}s|{_A}m)\s+(?:now\s+|really\s+|finally\s+)*(?:enjoying|loving|settling\s+into)\s+"
                         r"(?:his|her|my|their)\s+retirement\b")
# "Sam's been poached by": "'s been" after a name is "has been"
_S_BEEN = re.compile(r"\b(?P<name>[A-Z][a-z]+)['’]s\s+been\s+(?=(?:poached|headhunted|recruited|hired|snapped\s+up|taken\s+on)\b)")

# ---------------------------------------------------------------- a home

# "upped sticks and headed west to Seattle", "packed up and went back to Leeds"
_UPPED_STICKS = re.compile(
    r"(?:upped\s+sticks|pulled\s+up\s+(?:stakes|roots)|packed\s+(?:up|everything|(?:our|my|his|her|their)\s+bags))\s+"
    r"(?:and\s+)?(?:headed|went|moved|relocated|drove)\s+(?:(?:back|west|east|north|south|out|over|down|up)\s+){0,2}to\s+(?=[A-Z])")
# "The move to Cardiff is finally done"
_MOVE_DONE = re.compile(rf"^{_LEAD}(?i:the|our|my)\s+move\s+to\s+{_PLACE}\s+(?:is|was)\s+(?:finally\s+|now\s+)?"
                        r"(?:done|complete|completed|finished|official|over)\b")
# "Jenny's back home in Melbourne for good": a return that lasts; "back in Rome for the weekend" is a visit
_BACK_FOR_GOOD = re.compile(
    rf"{_SUBJ}(?:\s+(?:is|am)|{_A}[sm])\s+(?:now\s+)?back\s+(?:home\s+)?in\s+{_PLACE}\s+(?:for\s+good|permanently|to\s+stay)\b")
# "Since the spring, home for me has been Galway", "home for us is Leeds now"
_HOME_FOR_ME = re.compile(rf"^{_LEAD}(?:{_TIME_OPENER})?(?i:home)(?:\s+(?:for|to)\s+(?:me|us))?\s+(?:has\s+been|is)\s+"
                          rf"(?:now\s+)?{_PLACE}")
# "lives with his girlfriend in Hamburg": who one lives with is not where
_LIVES_WITH = re.compile(r"\b(?P<verb>lives?|living)\s+with\s+(?:(?:my|his|her|their|our)\s+)?(?:[a-z]+\s+){0,2}?[a-z]+\s+(?=in\s+[A-Z])")

# ---------------------------------------------------------------- who someone is

# "Our neighbours' son, Felix, is a carpenter": a relation of someone else's, then the name, then what is said of it
_THEIR_RELATION_NAMED = re.compile(
    rf"^{_LEAD}(?:[Oo]ur|[Mm]y|[A-Z][a-z]+['’]s)\s+[a-z]+(?:['’]s|s['’])\s+(?:[a-z]+\s+)?(?:{entity_rules._RELATIONS}),\s+"
    r"(?P<name>[A-Z][a-z]+(?:\s[A-Z][a-z]+)?),\s+(?=(?:is|was|works|lives)\b)")
# "is a retired headmistress who lives in Edinburgh": a job, then where the person lives or works
_JOB_WHO = re.compile(r"(?P<pre>\b(?:is|was|['’]s)\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}[\w-]+)\s+who\s+(?=(?:lives|works)\s+(?:in|at|for)\s+[A-Z])")

# ---------------------------------------------------------------- a taste

# "I've come round to mushrooms and actually love them", "she warmed to jazz"
_COME_ROUND = re.compile(rf"(?:{_SUBJ}(?:\s+(?:has|have|had)|{_A}(?:ve|s))?\s+(?:(?:finally|slowly|actually|really)\s+)*"
                         r"(?:come|came)\s+(?:a)?round\s+to\s+|" + rf"{_SUBJ.replace('subj', 'subj2')}(?:\s+(?:has|have|had)|{_A}(?:ve|s))?\s+"
                         r"(?:(?:finally|slowly|actually|really)\s+)*warmed\s+(?:up\s+)?to\s+)"
                         r"(?P<thing>[^,;.!?]+?)(?:\s+and\s+(?:(?:actually|really|now)\s+)?(?:love|like|enjoy)s?\s+(?:it|them))?"
                         r"(?=[,;.!?]|$)")
# "I've grown to hate jogging", "she came to loathe opera": a taste turned to dislike
_GROWN_TO_HATE = re.compile(rf"{_SUBJ}(?:\s+(?:has|have|had)|{_A}(?:ve|s))?\s+(?:(?:slowly|really|actually)\s+)*"
                            r"(?:come|came|grown|grew|learned|learnt)\s+to\s+(?:hate|dislike|loathe|detest)\b")
# "Coffee has won me over": the thing as the subject
_WON_ME_OVER = re.compile(rf"{_START}{_LEAD}(?P<thing>[A-Z][\w'’-]*(?:\s+[\w'’-]+){{0,2}})\s+(?:has|have)\s+(?:finally\s+|totally\s+|completely\s+)?"
                          r"won\s+me\s+over\b")
# "basketball is all he cares about", "chess is all I talk about"
_ALL_ABOUT = re.compile(rf"{_START}{_LEAD}(?P<thing>[A-Za-z][\w'’-]*(?:\s+[\w'’-]+){{0,2}}?)\s+is\s+(?:now\s+)?(?:all|the\s+only\s+thing)\s+"
                        r"(?P<who>I|he|she)\s+(?:cares?|talks?|thinks?)\s+about\b")
# "Peanut butter is the one thing I could eat every single day"
_EVERY_DAY = re.compile(rf"{_START}{_LEAD}(?P<thing>[A-Z][\w'’-]*(?:\s+[\w'’-]+){{0,2}}?)\s+is\s+(?:the\s+(?:one\s+)?thing|something)\s+"
                        r"I\s+(?:could|would|can)\s+(?:happily\s+)?(?:eat|drink|watch|listen\s+to|play)\s+"
                        r"(?:every\s+(?:single\s+)?day|forever|all\s+day|on\s+repeat)\b")
# "I barely touch tea", "I hardly drink coffee these days": a habit dropped
_BARELY = re.compile(r"(?<![\w'’])I\s+(?:barely|hardly|rarely|seldom)\s+(?:ever\s+)?(?P<verb>touch|drink|eat|use|play|watch)\b")
# "Apple Music is what I use", "Oat milk is what I drink now"
_WHAT_I_USE = re.compile(rf"{_START}{_LEAD}(?P<thing>[A-Z][\w'’.+-]*(?:\s+[\w'’.+-]+){{0,3}}?)\s+is\s+(?:now\s+)?what\s+I\s+"
                         r"(?:now\s+)?(?P<verb>use|drink|drive|ride|eat|play|listen\s+to|watch)\b")
# "I cancelled my Spotify subscription"
_CANCELLED = re.compile(r"(?<![\w'’])I(?:\s+have|['’]ve)?\s+(?:just\s+|finally\s+)?(?:cancell?ed|ended|dropped)\s+(?:my\s+)?"
                        r"(?P<thing>[A-Z][\w'’.+-]*(?:\s+[A-Z][\w'’.+-]*)*)\s+(?:subscription|membership|account|plan)\b")
# "Out went the Audi, and in came a Volvo estate"
_OUT_IN = re.compile(r"^(?i:out)\s+went\s+(?:the\s+|my\s+|our\s+)?(?P<old>[^,;]+?),?\s+(?:and\s+)?in\s+came\s+(?P<new>[^,;.!?]+)")

# ---------------------------------------------------------------- a favourite

# "Green is the colour I love most", "Tolkien is the author I like best"
_KIND_I_LOVE_MOST = re.compile(rf"^{_LEAD}(?P<v>[^,;]+?)\s+(?:is|are)\s+(?:the|my)\s+(?P<kind>[a-z]+)\s+I\s+(?:love|like|enjoy)\s+"
                               r"(?:the\s+)?(?:most|best)\b")
# "Ask me for my favourite film today and I'd say Parasite, not Jaws"
_ASK_ME = re.compile(r"^(?i:(?:if\s+you\s+)?ask\s+me\s+(?:for|about|what)\s+)(?P<fav>my\s+(?:favou?rite|fave)\s+[a-z]+)"
                     r"(?:\s+is)?(?:\s+(?:today|now|these\s+days|nowadays))?\s*(?:,|and|,\s*and)\s+I(?:['’]d|\s+would)\s+say\s+"
                     r"(?P<v>[^,;]+)")


def _took_me_on(m: re.Match[str]) -> str:
    return f"{m.group('lead')}I started working at {m.group('org')}"


def _at_after(m: re.Match[str]) -> str:
    return f"{m.group('subj')} left {m.group('old')} to join {m.group('org')}"


def _been_at(m: re.Match[str]) -> str:
    return f"{_subject_verb(m.group('subj'), 'work', 'works')} at {m.group('org')}"


def _common(thing: str) -> str:
    """"Coffee" opening a sentence is the common noun "coffee"; "Apple Music" stays a name."""
    return thing.lower() if " " not in thing and thing.istitle() else thing


def _come_round(m: re.Match[str]) -> str:
    subj = m.group("subj") or m.group("subj2")
    return f"{_subject_verb(subj, 'like', 'now likes')} {m.group('thing')}"


_RULES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (_S_BEEN, lambda m: f"{m.group('name')} has been "),
    (_TOOK_ME_ON, _took_me_on),
    (_PARTED_WAYS, lambda m: f"{m.group('lead')}I no longer work at {m.group('org')}"),
    (_I_PARTED_WAYS, lambda m: f"I no longer work at {m.group('org')}"),
    (_PAY_FROM, lambda m: f"{m.group('lead')}I now work at {m.group('org')}"),
    (_AT_AFTER_YEARS, _at_after),
    (_BEEN_AT, _been_at),
    (_LEFT_FIELD_AND_IS, lambda m: f"{m.group('subj')} {_be(m.group('subj'))} now "),
    (_RETIREMENT, lambda m: f"{'am' if re.match(r'am|.m', m.group()) else 'is'} now retired"),
    (_UPPED_STICKS, "moved to "),
    (_MOVE_DONE, lambda m: f"{m.group('lead')}I moved to {m.group('place')}"),
    (_BACK_FOR_GOOD, lambda m: f"{m.group('subj')} {'now live' if m.group('subj') == 'I' else 'now lives'} in {m.group('place')}"),
    (_HOME_FOR_ME, lambda m: f"{m.group('lead')}I now live in {m.group('place')}"),
    (_LIVES_WITH, lambda m: f"{m.group('verb')} "),
    (_THEIR_RELATION_NAMED, lambda m: f"{m.group('lead')}{m.group('name')} "),
    (_JOB_WHO, lambda m: f"{m.group('pre')} and "),
    (_COME_ROUND, _come_round),
    (_GROWN_TO_HATE, lambda m: f"{_subject_verb(m.group('subj'), 'hate', 'now hates')}"),
    (_WON_ME_OVER, lambda m: f"{m.group('lead')}I prefer {_common(m.group('thing'))} now"),
    (_ALL_ABOUT, lambda m: f"{m.group('lead')}{m.group('who')} {'love' if m.group('who') == 'I' else 'now loves'} {m.group('thing')}"),
    (_EVERY_DAY, lambda m: f"{m.group('lead')}I love {m.group('thing')}"),
    (_BARELY, lambda m: f"I no longer {'drink' if m.group('verb') == 'touch' else m.group('verb')}"),
    (_WHAT_I_USE, lambda m: f"{m.group('lead')}I now {m.group('verb')} {m.group('thing')}"),
    (_CANCELLED, lambda m: f"I no longer use {m.group('thing')}"),
    (_OUT_IN, lambda m: f"I replaced {m.group('old')} with {m.group('new')}"),
    (_KIND_I_LOVE_MOST, lambda m: f"{m.group('lead')}my favourite {m.group('kind')} is {m.group('v')}"),
    (_ASK_ME, lambda m: f"{m.group('fav')} is {m.group('v')}"),
]


def rewrite(sentence: str) -> str:
    """`sentence` with each idiom above rewritten to its plain form; unchanged when it holds none."""
    text = sentence
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
