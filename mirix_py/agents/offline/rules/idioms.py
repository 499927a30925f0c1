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
- a favourite: "X is the colour I love most", "ask me my favourite film and I'd say X";
- seventh round (`_SEVENTH`, guarded): "…, and <Org> hired me", "I'm starting at <Org>", "<Org> is my former
  employer(; I joined <Org2>)", "got the keys to our new flat in X", "X is behind us", "made the move to X",
  "retired to X", "retired from nursing", "at uni in X", "ditched A and signed up for B", "for good" (no
  value), "I'm all about/hooked on X", "X is my thing", "Nothing beats X", "I love X, it's my favourite K" (the
  pronoun is X), "become a fan of", "makes my throat swell", "lactose intolerant", "can't get into X", and a
  comment adverb opening the sentence ("Weirdly I …").

Pure functions of one sentence; a rewrite only fires on the whole idiom, so a sentence without one
comes back unchanged.
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from mirix_py.agents.offline.rules import core as self_rules
from mirix_py.agents.offline.rules import semantic as entity_rules

__all__ = ["guard_text", "rewrite"]

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
                      r"\s+(?:for|(?:ever\s+)?since)\b[^,;.!?]*")
# "Raj is at Oracle after eight years with IBM", "I'm with Google now, after six years at Apple": the new employer, the old one named by the years there
_AT_AFTER_YEARS = re.compile(rf"{_SUBJ}(?:\s+(?:is|am)|{_A}[sm])\s+(?:now\s+)?(?:at|with)\s+{_ORG}(?:\s+now)?,?\s+after\s+"
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


_RULES: list[tuple[tuple[str, ...], re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (("'s been", "’s been"), _S_BEEN, lambda m: f"{m.group('name')} has been "),
    (("me on", "me up"), _TOOK_ME_ON, _took_me_on),
    (("parted", "separate ways"), _PARTED_WAYS, lambda m: f"{m.group('lead')}I no longer work at {m.group('org')}"),
    (("parted",), _I_PARTED_WAYS, lambda m: f"I no longer work at {m.group('org')}"),
    (("pay", "salary", "wage", "income"), _PAY_FROM, lambda m: f"{m.group('lead')}I now work at {m.group('org')}"),
    (("after",), _AT_AFTER_YEARS, _at_after),
    (("been at", "been with", "been working"), _BEEN_AT, _been_at),
    (("away from",), _LEFT_FIELD_AND_IS, lambda m: f"{m.group('subj')} {_be(m.group('subj'))} now "),
    (("retirement",), _RETIREMENT, lambda m: f"{'am' if re.match(r'am|.m', m.group()) else 'is'} now retired"),
    (("upped sticks", "pulled up", "packed"), _UPPED_STICKS, "moved to "),
    (("move to",), _MOVE_DONE, lambda m: f"{m.group('lead')}I moved to {m.group('place')}"),
    (("back",), _BACK_FOR_GOOD, lambda m: f"{m.group('subj')} {'now live' if m.group('subj') == 'I' else 'now lives'} in {m.group('place')}"),
    (("home",), _HOME_FOR_ME, lambda m: f"{m.group('lead')}I now live in {m.group('place')}"),
    (("live with", "lives with", "living with"), _LIVES_WITH, lambda m: f"{m.group('verb')} "),
    (("'s ", "’s ", "s' ", "s’ "), _THEIR_RELATION_NAMED, lambda m: f"{m.group('lead')}{m.group('name')} "),
    (("who lives", "who works"), _JOB_WHO, lambda m: f"{m.group('pre')} and "),
    (("round to", "warmed"), _COME_ROUND, _come_round),
    (("to hate", "to dislike", "to loathe", "to detest"), _GROWN_TO_HATE, lambda m: f"{_subject_verb(m.group('subj'), 'hate', 'now hates')}"),
    (("won me over",), _WON_ME_OVER, lambda m: f"{m.group('lead')}I prefer {_common(m.group('thing'))} now"),
    (("about",), _ALL_ABOUT, lambda m: f"{m.group('lead')}{m.group('who')} {'love' if m.group('who') == 'I' else 'now loves'} {m.group('thing')}"),
    (("thing i",), _EVERY_DAY, lambda m: f"{m.group('lead')}I love {m.group('thing')}"),
    (("barely", "hardly", "rarely", "seldom"), _BARELY, lambda m: f"I no longer {'drink' if m.group('verb') == 'touch' else m.group('verb')}"),
    (("what i",), _WHAT_I_USE, lambda m: f"{m.group('lead')}I now {m.group('verb')} {m.group('thing')}"),
    (("subscription", "membership", "account", "plan"), _CANCELLED, lambda m: f"I no longer use {m.group('thing')}"),
    (("in came",), _OUT_IN, lambda m: f"I replaced {m.group('old')} with {m.group('new')}"),
    (("most", "best"), _KIND_I_LOVE_MOST, lambda m: f"{m.group('lead')}my favourite {m.group('kind')} is {m.group('v')}"),
    (("ask me",), _ASK_ME, lambda m: f"{m.group('fav')} is {m.group('v')}"),
]


# ---------------------------------------------------------------- sixth round: guarded families
# Each family below runs only when one of its guards is in the sentence (lowercased, each run of
# whitespace one space), words its pattern cannot match without, so a guard changes no result: the
# rules run on every chat turn, and a substring test costs far less than a regex search.

# one person as the subject: "I", "he"/"she" or a name, not "We"/"They"/"You" (which `_SUBJ` would read as a name)
_ONE = r"(?!(?:We|They|You|It)\b)" + _SUBJ

# "Priya jumped over to HSBC", "I jumped ship to Lidl": a job changed by a verb of crossing over
_JUMPED_OVER = re.compile(rf"{_ONE}\s+(?:(?:has|have|had)\s+|{_A}(?:ve|s)\s+)?(?:(?:just|finally|recently)\s+)?"
                          rf"(?:(?:jumped|hopped|moved|switched|went|defected|crossed)\s+over|jumped\s+ship)\s+to\s+{_ORG}")
# "product manager is my title now", "nurse is my job these days": the job as the subject
_TITLE_NOW = re.compile(r"(?:^(?=[A-Za-z])|(?<=[;,]\s)(?=[a-z])|(?<=\band\s)(?=[a-z]))(?P<job>[A-Za-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+is\s+(?:now\s+)?"
                        r"my\s+(?:job\s+title|official\s+title|(?:new\s+)?(?:title|job|role|position))\b")
# "he got a job as a paramedic", "she landed a role as an editor"
_JOB_AS = re.compile(r"\b(?:got|landed|found|took|accepted|started)\s+(?:a\s+|the\s+)?(?:new\s+|full-time\s+|part-time\s+)?"
                     r"(?:job|position|role|post)\s+as\s+(?=(?:a|an)\s)")
# "Leo's waiting days are over: he got …": a colon before a new clause about someone
_COLON_CLAUSE = re.compile(r":\s+(?=(?:he|she|I|they|we)\s)")
# "Sara's a midwife now": "'s" after a name before a job is "is"
_NAME_S_A = re.compile(r"(?:^|(?<=[;,]\s))(?P<name>(?!(?:It|That|There|What|Here|Who|Let|He|She|This|Where|How)['’])[A-Z][a-z]+)['’]s\s+"
                       r"(?=(?:a|an)\s+(?P<job>[\w-]+(?:\s+[\w-]+)?))")
# "Sara's a midwife now that she finished her training": the reason after "now that" is a clause of its own
_NOW_THAT = re.compile(r"\s+now\s+that\s+")
# "I don't really run anymore": a pastime ended by its verb
_PASTIMES = {"run": "running", "swim": "swimming", "cycle": "cycling", "climb": "climbing", "ski": "skiing",
             "surf": "surfing", "dance": "dancing", "paint": "painting", "knit": "knitting", "bake": "baking",
             "skate": "skating", "hike": "hiking", "box": "boxing", "row": "rowing", "sing": "singing", "golf": "golf"}
_PASTIME_END = re.compile(r"(?<![\w'’])I\s+(?:don['’]t|do\s+not)\s+(?:really\s+|even\s+|actually\s+)?(?P<verb>"
                          + "|".join(_PASTIMES) + r")\s+(?:any\s*more|any\s+longer)\b")
# "Ever since the food poisoning I can't stand sushi": an opener of cause or time before the plain statement
_CAUSE_OPENER = re.compile(r"^(?i:ever\s+since|since|after|because\s+of)\s+(?:the|my|that|this|our|a)\s+"
                           r"(?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*,?\s+(?=I\s)")
# "Rosa, who's ninety, still lives …": an aside between a name and its verb, unless the aside is itself a fact
_WHO_ASIDE = re.compile(r"(?P<name>\b[A-Z][a-z]+),\s+who(?P<aside>(?:['’]s\s|\s)[^,]+),\s+(?=(?:still\s+|now\s+|also\s+)?"
                        r"(?:is|was|lives|works|has|moved|loves|likes|hates|teaches)\b)")
_ASIDE_FACT = re.compile(r"\b(?:lives?|works?|moved|(?:is|was|['’]s)\s+(?:a|an|the|my|our)\b)")
# "Florence + the Machine, hands down, is my favourite band": a comment between a subject and its verb
_COMMENT = re.compile(r",\s+(?:hands\s+down|by\s+far|without\s+(?:a\s+)?doubt|honestly|easily|for\s+sure|no\s+question),\s+"
                      r"(?=(?:is|are|has|was)\b)")
# "I'd pick Terry Pratchett over J.K. Rowling as my favourite author"
_PICK_OVER = re.compile(r"(?<![\w'’])I(?:['’]d|\s+would)\s+(?:(?:now|probably|definitely)\s+)?(?:pick|choose|take|go\s+with|put)\s+"
                        r"(?P<new>[^,;]+?)\s+over\s+[^,;]+?\s+as\s+my\s+(?:favou?rite|fave)\s+(?P<kind>[a-z]+)")
# "my go-to comfort show is Gilmore Girls"
_GO_TO_KIND = re.compile(r"(?i:\bmy)\s+go-to\s+(?:[a-z-]+\s+)??(?P<kind>[a-z]+)\s+(?=is\b)")
# "Penicillin gives me hives", "Latex brings me out in a rash": an allergy said by its effect
_ALLERGY_EFFECT = re.compile(rf"{_START}{_LEAD}(?P<thing>[A-Z][\w'’-]*(?:\s+[\w'’-]+){{0,2}}?)\s+(?:gives|brings)\s+me\s+"
                             r"(?:out\s+in\s+)?(?:hives|a\s+rash|rashes|welts|an\s+allergic\s+reaction|a\s+reaction|anaphylaxis)\b")
# "Cilantro tastes like soap to me": a food disliked by its taste
_TASTES_BAD = re.compile(rf"{_START}{_LEAD}(?P<thing>[A-Z][\w'’-]*(?:\s+[\w'’-]+){{0,2}}?)\s+tastes?\s+"
                         r"(?:like\s+(?:soap|dirt|cardboard|metal|chalk|medicine|plastic|feet)|awful|horrible|disgusting|vile|gross|"
                         r"revolting)\s+to\s+me\b")
# "I'm a huge fan of the New York Knicks"
_FAN_OF = re.compile(rf"{_ONE}(?:\s+(?:is|am)|{_A}[sm])\s+(?:a\s+)?(?:(?:huge|big|massive|great|long-time|lifelong|die-hard|"
                     r"diehard|real|total)\s+)*fan\s+of\s+(?:the\s+(?=[A-Z]))?")
# "Nina's new address is in Bergen", "my place is in Leith now"
_ADDRESS_IN = re.compile(rf"{_START}{_LEAD}(?P<owner>[Mm]y|[Hh]is|[Hh]er|[A-Z][a-z]+['’]s)\s+(?:new\s+)?(?:address|home|place|flat|house)\s+"
                         rf"is\s+(?:now\s+)?in\s+{_PLACE}")
# "Dad moved in with us in Bath": who one moved in with is not where
_MOVED_IN_WITH = re.compile(r"\bmoved\s+in\s+with\s+(?:us|me|them|him|her|(?:my|his|her|their|our)\s+[a-z]+)\s+in\s+(?=[A-Z])")
# "I've lived in London for ten years", "Zoe has been living in Seville since May"
_LIVED_FOR = re.compile(rf"{_ONE}(?:\s+(?:has|have)|{_A}(?:ve|s))\s+(?:now\s+)?(?:lived|been\s+living)\s+in\s+{_PLACE}"
                        r"(?=\s+(?:for|(?:ever\s+)?since)\b)")


def _name_s_a(m: re.Match[str]) -> str:
    words = re.split(r"\s+", m.group("job"))
    head = words[0] if len(words) == 1 or words[1] in ("now", "at", "in", "for", "who", "and", "with") else words[1]
    return f"{m.group('name')} is " if self_rules.is_job_word(head) else m.group()


def _who_aside(m: re.Match[str]) -> str:
    return m.group() if _ASIDE_FACT.search(m.group("aside")) else f"{m.group('name')} "


def _address_in(m: re.Match[str]) -> str:
    owner = m.group("owner")
    subj = {"my": "I", "his": "he", "her": "she"}.get(owner.lower(), owner[:-2])
    return f"{m.group('lead')}{_subject_verb(subj, 'now live', 'now lives')} in {m.group('place')}"


def _verb(subj: str, first: str, third: str) -> str:
    return _subject_verb(subj, first, third)


_COMMENTS = tuple(f", {c}," for c in ("hands down", "by far", "without a doubt", "without doubt", "honestly", "easily",
                                       "for sure", "no question"))

_GUARDED: list[tuple[tuple[str, ...], re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (("over to", "jumped ship"), _JUMPED_OVER, lambda m: f"{_verb(m.group('subj'), 'now work', 'now works')} at {m.group('org')}"),
    (("is my", "is now my"), _TITLE_NOW, lambda m: f"I am now a {m.group('job')[:1].lower()}{m.group('job')[1:]}"),
    (("job as", "position as", "role as", "post as"), _JOB_AS, "now works as "),
    ((":",), _COLON_CLAUSE, "; "),
    (("'s a", "’s a"), _NAME_S_A, _name_s_a),
    (("now that",), _NOW_THAT, " now; "),
    (("anymore", "any more", "any longer"), _PASTIME_END, lambda m: f"I no longer like {_PASTIMES[m.group('verb')]}"),
    (("since", "after", "because of"), _CAUSE_OPENER, ""),
    ((", who",), _WHO_ASIDE, _who_aside),
    (_COMMENTS, _COMMENT, " "),
    (("as my favo", "as my fave"), _PICK_OVER, lambda m: f"my favourite {m.group('kind')} is {m.group('new')}"),
    (("go-to",), _GO_TO_KIND, lambda m: f"my favourite {m.group('kind')} "),
    (("gives me", "brings me"), _ALLERGY_EFFECT, lambda m: f"{m.group('lead')}I am allergic to {_common(m.group('thing'))}"),
    (("taste",), _TASTES_BAD, lambda m: f"{m.group('lead')}I dislike {_common(m.group('thing'))}"),
    (("fan of",), _FAN_OF, lambda m: f"{_verb(m.group('subj'), 'love', 'loves')} "),
    ((" is in ", " is now in "), _ADDRESS_IN, _address_in),
    (("moved in with",), _MOVED_IN_WITH, "moved to "),
    (("lived in", "been living in"), _LIVED_FOR, lambda m: f"{_verb(m.group('subj'), 'live', 'lives')} in {m.group('place')}"),
]


# ---------------------------------------------------------------- seventh round: guarded families
# Each read from a miss of the sixth held-out set as a way of saying, not as its sentence.

# "…, and Aldi hired me a month later": the employer as the subject after a comma or "and" (`changes` reads it at the start)
_ORG_HIRED_ME = re.compile(rf"(?:(?<=[,;]\s)|(?<=\band\s)|(?<=\bthen\s)){_LEAD}{_ORG}\s+(?:has\s+|have\s+|then\s+|quickly\s+|soon\s+)?"
                           r"(?:hired|recruited|employed)\s+me\b")
# "Just got the keys to our new flat in Edinburgh": a new home by its keys
_KEYS_TO = re.compile(rf"^(?:(?:Just|Finally|So|And)\s+|(?:I|We)(?:\s+have|['’]ve)?\s+(?:just\s+|finally\s+)?)?"
                      rf"(?:got|picked\s+up|collected|received)\s+(?:the\s+)?keys\s+(?:to|for)\s+(?:our|my|the|a)\s+"
                      rf"(?:new\s+)?(?:flat|house|place|home|apartment|condo|cottage)\s+in\s+{_PLACE}")
# "Glasgow is behind us": a home left
_BEHIND_US = re.compile(rf"(?:^|(?<=[,;]\s)){_LEAD}{_PLACE}\s+is\s+(?:now\s+|firmly\s+|well\s+)*behind\s+(?:us|me)\b")
# "gave up cigarettes for good": "for good" says for ever, not what was taken in exchange
_FOR_GOOD = re.compile(r",?\s+for\s+good(?=\s+(?:in|on|at|this|last|since|after|now|back)\b|\s*[,;.!?]|\s*$)")
# "I'm starting at BP on Monday": a new employer by its first day
_STARTING_AT = re.compile(rf"{_ONE}(?:\s+(?:is|am)|{_A}[sm])\s+(?:now\s+)?(?:starting|beginning)\s+(?:a\s+new\s+job\s+|work\s+|my\s+new\s+job\s+)?"
                          rf"at\s+{_ORG}(?:\s+(?:on\s+(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)|tomorrow|"
                          r"next\s+(?:week|month|Monday|Tuesday|Wednesday|Thursday|Friday)))?")
# "Frank sold up and retired to the Algarve": a home by retiring there
_RETIRED_TO = re.compile(rf"{_ONE}\s+(?:(?:has|have)\s+|{_A}(?:s|ve)\s+)?(?:sold\s+up\s+and\s+)?retired\s+(?:down\s+|out\s+|back\s+)?to\s+"
                         r"(?=(?:the\s+)?[A-Z])")
# "Mum retired from nursing": a working life over, said through its field
_RETIRED_FROM_FIELD = re.compile(r"\bretired\s+from\s+(?:[a-z]+ing|the\s+(?:police|force|army|navy|air\s+force|fire\s+service|law|bench|"
                                 r"classroom))\b")
# "I ditched Spotify and signed up for Apple Music": one name dropped for another
_DITCHED_AND = re.compile(r"\b(?:ditched|dumped|binned|scrapped|dropped|cancell?ed)\s+(?P<old>[A-Z][\w'’.+&-]*(?:\s+[A-Z][\w'’.+&-]*)*)\s+"
                          r"and\s+(?:(?:now|then|just)\s+)?(?:signed\s+up\s+(?:for|to|with)|switched\s+to|went\s+(?:for|with)|"
                          r"moved\s+(?:over\s+)?to|subscribed\s+to|got)\s+(?P<new>[A-Z][\w'’.+&-]*(?:\s+[A-Z][\w'’.+&-]*)*)"
                          r"(?:\s+instead)?")
# "We … made the move to Portland": a home by the move made
_MADE_MOVE = re.compile(r"\b(?:made|make|makes|making)\s+(?:the|a|our|my|his|her|their)\s+(?:big\s+|final\s+)?move\s+"
                        r"(?:(?:back|over|down|up|out)\s+)?to\s+(?=(?:the\s+)?[A-Z])")
# "I'm all about green at the moment", "I'm hooked on padel": a taste said as what one is about
_ALL_ABOUT_ME = re.compile(rf"{_ONE}(?:\s+(?:is|am)|{_A}[sm])\s+(?:(?:totally|really|so|very\s+much)\s+)?(?:all\s+about|hooked\s+on|"
                           r"obsessed\s+with|mad\s+about|crazy\s+about)\s+(?=\w)")
# "X is my thing now", "Oat lattes are my new thing": a preference by its place
_MY_THING = re.compile(rf"^{_LEAD}(?!(?i:it|that|this|these|those|there|which|what)\b)(?P<thing>[A-Za-z][\w'’-]*(?:\s+[\w'’-]+){{0,2}}?)\s+"
                       r"(?:is|are)\s+(?:now\s+|totally\s+|definitely\s+|very\s+much\s+)?my\s+(?:new\s+)?thing\b")
# "Accenture is my former employer; I joined Capgemini in May": an employer named as past, then perhaps the next
_FORMER_EMPLOYER = re.compile(rf"^{_LEAD}{_ORG}\s+(?:is|was)\s+(?:now\s+)?my\s+(?:former|previous|old|last|ex-?)\s*"
                              r"(?:employer|company|firm|workplace|job)\b(?P<next>\s*[;,]\s*(?:and\s+|but\s+|so\s+)?I(?:\s+have|['’]ve)?\s+"
                              r"(?:now\s+|since\s+)?(?:joined|moved\s+to|went\s+to|started\s+at)\s+(?P<new>(?:the\s+)?[A-Z][\w&'’.-]*"
                              r"(?:\s+[A-Z][\w&'’.-]*)*))?")
# "Nothing beats Arctic Monkeys for me", "Nothing relaxes me like gardening": a taste by what nothing matches
_NOTHING_BEATS = re.compile(rf"^{_LEAD}(?i:nothing)\s+(?:beats|compares\s+to|tops|(?:relaxes|calms|cheers)\s+me\s+(?:up\s+|down\s+)?"
                            r"(?:quite\s+)?like|makes\s+me\s+(?:as\s+)?happy\s+as)\s+(?P<thing>(?:(?!\s+as\s)[^,;.!?])+?)"
                            r"(?P<tail>(?:\s+(?:for\s+me|now|these\s+days|at\s+the\s+moment|right\s+now))*)(?=[,;.!?]|$)")
# "I love X, it's my favourite colour now", "…, they've replaced Blur as my favourite band": the pronoun is the thing
_TASTE_THEN_IT = re.compile(r"^(?P<head>(?:[\w'’ ]*?)I\s+(?:love|adore|like|prefer|am\s+into|['’]m\s+into)\s+(?P<thing>[^,;.!?]+?))"
                            r"(?:\s+(?:for\s+me|now|these\s+days|at\s+the\s+moment|right\s+now|lately))*,\s+"
                            r"(?P<it>it|they)(?P<verb>['’]s|['’]ve|['’]re|\s+is|\s+are|\s+has|\s+have)\s+(?P<rest>(?:now\s+)?(?:my\s+(?:new\s+)?"
                            r"(?:favou?rite|fave)\b|(?:now\s+|just\s+|finally\s+)?(?:replaced|overtaken|beaten|topped|knocked)\b))")
# "I've become a big fan of running": a taste come to, said as a fan
_BECOME_FAN = re.compile(rf"{_ONE}(?:\s+(?:has|have)|{_A}(?:ve|s))\s+(?:now\s+|actually\s+|really\s+)*become\s+(?=(?:a\s+)?"
                         r"(?:(?:huge|big|massive|great|real|total)\s+)*fan\s+of\b)")
# "he's at uni in Leeds": a student lives where they study
_AT_UNI_IN = re.compile(rf"(?P<comma>,\s+)?{_ONE}(?:\s+(?:is|am)|{_A}[sm])\s+(?:now\s+)?(?:at|in)\s+(?:uni|university|college|boarding\s+school)\s+"
                        rf"in\s+{_PLACE}")
# "Shellfish makes my throat swell up": an allergy said by its effect on the body
_SWELL = re.compile(rf"{_START}{_LEAD}(?P<thing>[A-Z][\w'’-]*(?:\s+[\w'’-]+){{0,2}}?)\s+(?:makes|make)\s+my\s+"
                    r"(?:throat|lips|tongue|face|eyes|mouth|skin)\s+(?:swell|itch|tingle|puff|close)(?:\s+up)?\b")
# "I'm lactose intolerant", "she's intolerant to gluten": an intolerance, labelled as an allergy
_INTOLERANT = re.compile(rf"{_ONE}(?:\s+(?:is|am)|{_A}[sm])\s+(?:(?:severely|very|mildly|quite|slightly)\s+)?"
                         r"(?:(?P<x>[a-z]+)\s+intolerant\b|intolerant\s+(?:to|of)\s+(?P<y>[a-z][\w-]*))")
# "I can't get into podcasts at all": a dislike said as what one can't get into
_CANT_GET_INTO = re.compile(r"(?<![\w'’])I\s+(?:just\s+|really\s+|honestly\s+)?(?:can['’]t|cannot|could\s+never)\s+"
                            r"(?:get\s+into|get\s+on\s+with|warm\s+to|be\s+doing\s+with)\s+(?P<x>[^,;.!?]+?)(?:\s+at\s+all)?(?=[,;.!?]|$)")
# "Weirdly I've become …", "Funnily enough, I …": a comment opening the sentence before "I"
_ADVERB_OPENER = re.compile(r"^(?:[A-Z][a-z]+ly(?:\s+enough)?|Believe\s+it\s+or\s+not|To\s+be\s+honest|Truth\s+be\s+told),?\s+"
                            r"(?=I(?:\s|['’]))")
# the opener's word ends in "ly" (then a space, or a comma), or is one of the phrases
_COMMENT_ADVERBS = ("ly ", "ly,", "believe it", "to be honest", "truth be told")


def _former_employer(m: re.Match[str]) -> str:
    if m.group("new"):
        return f"{m.group('lead')}I left {m.group('org')} to join {m.group('new')}"
    return f"{m.group('lead')}I no longer work at {m.group('org')}"


def _taste_then_it(m: re.Match[str]) -> str:
    verb = m.group("verb").replace("’", "'").strip()
    be = "has" if verb in ("'ve", "has", "have") else "is"
    if m.group("rest").startswith(("replaced", "overtaken", "beaten", "topped", "knocked", "now", "just", "finally")):
        be = "has" if be == "has" or verb in ("'s",) else be
    return f"{m.group('head')}; {m.group('thing')} {be} {m.group('rest')}"


def _common_phrase(thing: str) -> str:
    """"Oat lattes" opening a sentence is "oat lattes"; "Apple Music" and "Diet Coke" stay names."""
    words = thing.split()
    return thing[:1].lower() + thing[1:] if words[0].istitle() and all(w.islower() for w in words[1:]) else thing


def _nothing_beats(m: re.Match[str]) -> str:
    tail = re.sub(r"\s+for\s+me\b", "", m.group("tail"))  # "for me" is the speaker's already
    return f"{m.group('lead')}I love {m.group('thing')}{tail}"


def _intolerant(m: re.Match[str]) -> str:
    more = re.match(r"\s+[A-Za-z]", m.string[m.end():])  # "since I'm lactose intolerant I'm trying…": the value ends here
    return f"{m.group('subj')} {_be(m.group('subj'))} allergic to {m.group('x') or m.group('y')}{',' if more else ''}"


_SEVENTH: list[tuple[tuple[str, ...], re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (_COMMENT_ADVERBS, _ADVERB_OPENER, ""),
    (("ed me",), _ORG_HIRED_ME, lambda m: f"{m.group('lead')}I started working at {m.group('org')}"),
    (("keys ",), _KEYS_TO, lambda m: f"I moved to {m.group('place')}"),
    (("behind ",), _BEHIND_US, lambda m: f"{m.group('lead')}I no longer live in {m.group('place')}"),
    (("for good",), _FOR_GOOD, ""),
    (("starting ", "beginning "), _STARTING_AT,
     lambda m: f"{_verb(m.group('subj'), 'now work', 'now works')} at {m.group('org')}"),
    (("retired ",), _RETIRED_TO,
     lambda m: f"{m.group('subj')} {'have' if m.group('subj') == 'I' else 'has'} moved to "),
    (("retired from",), _RETIRED_FROM_FIELD, "retired"),
    (("ditched", "dumped", "binned", "scrapped", "dropped", "cancel"), _DITCHED_AND,
     lambda m: f"replaced {m.group('old')} with {m.group('new')}"),
    (("move ",), _MADE_MOVE, "moved to "),
    (("all about", "hooked on", "obsessed with", "mad about", "crazy about"), _ALL_ABOUT_ME,
     lambda m: f"{_verb(m.group('subj'), 'love', 'loves')} "),
    (("my thing", "my new thing"), _MY_THING, lambda m: f"{m.group('lead')}I prefer {_common_phrase(m.group('thing'))}"),
    (("my former", "my previous", "my old", "my last", "my ex"), _FORMER_EMPLOYER, _former_employer),
    (("nothing",), _NOTHING_BEATS, _nothing_beats),
    ((", it", ", they"), _TASTE_THEN_IT, _taste_then_it),
    (("become",), _BECOME_FAN, lambda m: f"{m.group('subj')} {_be(m.group('subj'))} "),
    (("uni", "college", "school in"), _AT_UNI_IN,
     lambda m: f"{'; ' if m.group('comma') else ''}{_verb(m.group('subj'), 'live', 'lives')} in {m.group('place')}"),
    (("makes my", "make my"), _SWELL, lambda m: f"{m.group('lead')}I am allergic to {_common(m.group('thing'))}"),
    (("intolerant",), _INTOLERANT, _intolerant),
    (("get into", "get on with", "warm to", "be doing with"), _CANT_GET_INTO, lambda m: f"I dislike {m.group('x')}"),
]

# the order they run in: a comment opening the sentence goes first, so every family sees the subject
_FAMILIES = (*_SEVENTH[:1], *_RULES, *_GUARDED, *_SEVENTH[1:])
def _any_of(words: set[str]) -> str:
    """A pattern matching any of `words`, written as a trie ("be(?:come|hind )"), so a search tries one branch
    per character instead of every word."""
    heads: dict[str, set[str]] = {}
    for word in words:
        if word:
            heads.setdefault(word[0], set()).add(word[1:])
    branches = [re.escape(c) + _any_of(rest) for c, rest in sorted(heads.items())]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    return f"(?:{body})?" if "" in words else body


# each round's families behind one search for any of their guards: most sentences hold none and skip them at once
_GROUPS = [(re.compile(_any_of({g for guard, _, _ in group for g in guard})), group)
           for group in (_SEVENTH[:1], _RULES, _GUARDED, _SEVENTH[1:])]


def rewrite(sentence: str) -> str:
    """`sentence` with each idiom above rewritten to its plain form; unchanged when it holds none."""
    text = sentence
    lower = guard_text(text)
    for gate, group in _GROUPS:
        if not gate.search(lower):
            continue
        for guard, pattern, replacement in group:
            if any(map(lower.__contains__, guard)):
                new = pattern.sub(replacement, text)
                if new != text:
                    text, lower = new, guard_text(new)
    return text


@functools.lru_cache(maxsize=64)
def guard_text(text: str) -> str:
    """`text` as the guards are tested on: lowercased, each run of whitespace one space (so a guard
    "over to" stands for the pattern's "over\\s+to")."""
    return " ".join(text.lower().split())
