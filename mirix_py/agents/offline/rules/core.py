"""Self-statements for the "human" core block in offline mode.

The human block is always in the prompt, so only durable first-person facts belong there: the
speaker's name, likes and dislikes, profession, workplace, home, origin, allergies and birthday.
Each rule is anchored on an explicit first-person cue and the captured object is filtered
("I love that!" and "I'm swamped" say nothing durable), because these rules see every message.
"""

from __future__ import annotations

import re
from functools import lru_cache

from mirix_py.agents.offline.rules import lexicon
from mirix_py.agents.offline.rules.lexicon import WORDNET_JOB_WORDS

__all__ = ["extract_self_statements"]

MAX_FACT_CHARS = 120

_I = r"(?<![\w'’])[Ii]"
_APOS = r"['’]"
_I_AM = rf"{_I}(?:{_APOS}m|\s+am)"
_ADVERBS = r"(?:(?:really|absolutely|just|also|totally|genuinely|truly|honestly|do|still|actually|so|kinda|kind\s+of|definitely|especially)\s+)*"

# Clause boundaries: sentence punctuation always; conjunctions only where they start a new clause.
_HARD_STOP = re.compile(r"[.!?;:()\[\]\n—–]|\s-\s|(?<=\w)-\s|,")
_SOFT_STOP = re.compile(
    r"(?i)\s+(?:but|because|cause|cos|since|so|when|whenever|while|although|though|which|who|"
    r"if|unless|until|as\s+it|as\s+they|as\s+i|like\s+you|and\s+(?:i|i'm|it|it's|we|they|he|she|my|that|this|"
    r"you|your|our|his|her|their|there|so|then|also|now|now\s+i|have|had|am|was|really|can't|don't|will))\b"
)
_TRAILING_FILLER = re.compile(
    r"(?i)(?:\s+(?:too|so\s+much|a\s+lot|a\s+ton|very\s+much|as\s+well|though|lately|now|"
    r"these\s+days|anyway|originally|haha|lol|tbh|honestly|right\s+now|and|or|the|a|an|to|of|for|with|in|on|at|my))+$"
)

# Objects that make a like/love statement conversational rather than a preference.
_NON_PREFERENCE_OBJECTS = re.compile(
    r"(?i)^(?:it|its|it's|that|that's|this|these|those|you|your|yours|ya|u|him|her|them|us|me|"
    r"how|what|when|where|why|who|which|seeing|hearing|knowing|reading\s+about|reading\s+your|"
    r"the\s+(?:way|idea|thought|sound|look|pic|picture|photo|photos|pics|pictures|vibe|vibes|"
    r"message|sentiment|story|name|color|colours|colors|energy|attitude|plan|advice|support)|"
    r"to\s+(?:hear|see|know|think|say|help|chat|talk|share|meet|catch)|"
    r"so|too|such|a\s+lot|all|both|each|one|some|more|most|much|there|here|having\s+you|talking|"
    r"chatting|sharing|catching|being\s+able\s+to\s+share|the\s+fact)\b"
)

_NAME_STOPWORDS = lexicon.words("name_stopwords")

_PROFESSION_HEADS = lexicon.words("profession_heads")
# "headmistress", "postmaster": "-master"/"-mistress" after a prefix (not "a master of chess")
_PROFESSION_SUFFIX = re.compile(r"(?i)(?:ist|ian|eer|ologist|grapher|smith|wright|monger|(?<=\w{3})(?:master|mistress))$")
_MORE_JOB_WORDS = lexicon.words("more_job_words")
# agent nouns that name a job whatever the stem: "-keeper", "-maker", "-tender", Latin "-ator", "-ctor",
# "-ssor", "-itor" (a translator, an inspector, a professor, an auditor)
# words that make the noun after them a job, whatever it is: "a full-time potter", "a freelance illustrator"
JOB_MODIFIERS = frozenset("full-time part-time freelance self-employed professional trainee apprentice qualified licensed "
                          "certified junior senior".split())
_JOB_MORPHOLOGY = re.compile(r"(?i)(?:keeper|maker|tender|worker|dresser|ator|ctor|ssor|itor)$")
_NOT_AGENT_JOBS = lexicon.words("not_agent_jobs")


@lru_cache(maxsize=8192)
def is_job_word(word: str) -> bool:
    """True when `word` names a job: a known job word, an agent noun by its ending ("translator",
    "zookeeper", "pharmacist"), or a compound or prefixed form of a job word ("headteacher",
    "head-teacher", "schoolteacher", "copilot", "songwriter")."""
    word = word.lower().strip("'’")
    if not word:
        return False
    parts = [p for p in word.split("-") if p]
    if len(parts) > 1 and is_job_word(parts[-1]):
        return True
    if word in _PROFESSION_HEADS or word in _MORE_JOB_WORDS or word in WORDNET_JOB_WORDS or _PROFESSION_SUFFIX.search(word):
        return True
    if word not in _NOT_AGENT_JOBS and _JOB_MORPHOLOGY.search(word) and len(word) >= 6:
        return True
    return any(len(word) - len(job) >= 2 and word.endswith(job)
               for job in (*_PROFESSION_HEADS, *_MORE_JOB_WORDS) if len(job) >= 4)
_NOT_IDENTITY_HEADS = lexicon.words("not_identity_heads")
_IDENTITY_CUT = re.compile(
    r"(?i)\s+(?:at|in|for|of|from|with|who|that|which|and|but|so|because|since|by|on|to|myself)\b"
)


def _clip(phrase: str) -> str:
    """Cut the captured object at its clause boundary and trim filler; cap the length."""
    phrase = phrase.strip()
    m = _HARD_STOP.search(phrase)
    if m:
        phrase = phrase[: m.start()]
    m = _SOFT_STOP.search(phrase)
    if m:
        phrase = phrase[: m.start()]
    phrase = phrase.strip().strip("\"'“”‘’*_").strip()
    prev = None
    while prev != phrase:
        prev = phrase
        phrase = _TRAILING_FILLER.sub("", phrase).strip()
    if len(phrase) > MAX_FACT_CHARS:
        cut = phrase[:MAX_FACT_CHARS].rsplit(" ", 1)[0]
        phrase = cut or phrase[:MAX_FACT_CHARS]
    return phrase


def _words(phrase: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'’-]*", phrase)


# ---------------------------------------------------------------- rules

_NAME_IS = re.compile(r"(?i:\bmy\s+name\s*(?:is|'s|’s)\s+)(?P<name>[A-Z][a-zA-Z'’-]+(?:\s+[A-Z][a-zA-Z'’-]+){0,2})")
_CALL_ME = re.compile(r"(?i:\b(?:you\s+can\s+|please\s+|just\s+)?call\s+me\s+)(?P<name>[A-Z][a-z'’-]+)(?=\s*(?:[.,!;]|$))")
_IM_NAME = re.compile(
    rf"(?:^|(?<=[.!?,]\s)|(?<=^\W)|(?i:\b(?:hi|hello|hey|hiya)\b),?\s*(?:there,?\s*|all,?\s*|everyone,?\s*)?)"
    rf"{_I_AM}\s+(?P<name>[A-Z][a-z]{{1,20}}(?:[A-Z][a-z]+)?)(?=\s*(?:[,.!]|$))"
)

_PREF_VERBS = {
    "like": "likes",
    "love": "loves",
    "prefer": "prefers",
    "enjoy": "enjoys",
    "hate": "hates",
    "dislike": "dislikes",
    "adore": "adores",
    "detest": "detests",
}
_PREFERENCE = re.compile(
    rf"{_I}\s+{_ADVERBS}(?P<verb>(?i:like|love|prefer|enjoy|hate|dislike|adore|detest))\s+(?=(?P<obj>[^.!?\n]{{1,240}}))"
)
_NEG_PREFERENCE = re.compile(
    rf"{_I}\s+(?i:(?:do\s+not|don{_APOS}t|dont|really\s+don{_APOS}t|never)\s+(?:really\s+)?(?P<verb>like|enjoy|love))\s+(?=(?P<obj>[^.!?\n]{{1,240}}))"
)
_CANT_STAND = re.compile(rf"{_I}\s+(?i:(?:can{_APOS}?t|cannot)\s+(?:stand|bear|abide|stomach))\s+(?=(?P<obj>[^.!?\n]{{1,240}}))")
_FAN_OF = re.compile(rf"{_I_AM}\s+(?i:(?:a\s+)?(?:big\s+|huge\s+|massive\s+|giant\s+|real\s+)?fan\s+of)\s+(?=(?P<obj>[^.!?\n]{{1,240}}))")
_FAVORITE = re.compile(
    r"(?i:\bmy\s+(?:all[- ]time\s+|absolute\s+|new\s+|current\s+)?favou?rite\s+)(?P<what>[a-zA-Z][\w -]{0,40}?)"
    r"(?:\s+(?i:is|are|was|has\s+to\s+be|would\s+be|has\s+become|became)\s+|\s*:\s*)"  # "My favorite book: Dune"
    r"(?=(?P<obj>[^.!?\n]{1,240}))"
)
_IS_MY_FAVORITE = re.compile(
    r"(?:^|(?<=[.!?]\s)|(?<=^\W))(?P<subject>(?!(?:It|That|This|These|Those|He|She|They|Which|What|Who|There|Here|Mine)\b)"
    r"[A-Za-z][\w'’-]*(?:\s+[\w'’-]+){0,5}?)\s+(?:is|are)\s+(?:still\s+|definitely\s+|probably\s+)?"
    r"my\s+(?:all[- ]time\s+|absolute\s+|top\s+)?favou?rite\s+(?P<what>[a-z][a-z -]{0,30}?)(?=\s*(?:[.!,;]|$))"
)
_NOT_FAVORITE_KINDS = frozenset("one ones thing things part parts moment moments memory memories bit way time times kind sort".split())

_IDENTITY = re.compile(rf"{_I_AM}\s+(?:(?i:also|now|currently|actually|still|just)\s+)?(?P<article>(?i:a|an))\s+(?=(?P<obj>[^.!?\n]{{1,240}}))")
_AUX = rf"(?:{_APOS}m|{_APOS}ve\s+been|\s+am|\s+have\s+been)?"
_WORK = re.compile(
    rf"{_I}{_AUX}\s+(?:(?i:currently|now|still|also|actually)\s+)?(?i:work|working)"
    r"\s+(?P<prep>(?i:as|at|for))\s+(?=(?P<obj>[^.!?\n]{1,240}))"
)
_LIVE = re.compile(
    rf"{_I}{_AUX}\s+(?:(?i:currently|now|still|also|actually)\s+)?(?i:live|living)"
    r"\s+(?i:in)\s+(?=(?P<obj>[^.!?\n]{1,240}))"
)
_FROM = re.compile(rf"{_I_AM}\s+(?:(?i:originally|actually|also)\s+)?(?i:from)\s+(?=(?P<obj>[^.!?\n]{{1,240}}))")
_ALLERGIC = re.compile(rf"{_I_AM}\s+(?:(?i:very|severely|super|really|so|deathly)\s+)?(?i:allergic)\s+(?i:to)\s+(?=(?P<obj>[^.!?\n]{{1,240}}))")
_BIRTHDAY = re.compile(r"(?i:\bmy\s+(?:birthday|bday|b-day)\s+(?:is|'s|’s|falls\s+on)\s+(?:on\s+)?)(?=(?P<obj>[^.!?\n]{1,240}))")

_WORK_BAD_OBJECT = re.compile(
    r"(?i)^(?:it|this|that|them|home\s+today|the\s+moment|my\s+own\s+pace|least|times|night|"
    r"all|hard|a\s+(?:lot|bit)|so|on|well|together|with|out|through|really|too|very|more|less)\b"
)
_PLACE_BAD_OBJECT = re.compile(
    r"(?i)^(?:it|this|that|there|here|fear|peace|the\s+moment|the\s+past|the\s+present|a\s+(?:world|time|bubble|state|way)|"
    r"denial|harmony|hope|my\s+head|the\s+now|pain|constant)\b"
)


_SENTENCE_END = re.compile(r"[.!?\n]")


def _question(text: str, start: int) -> bool:
    """True when the sentence holding `start` ends with a question mark."""
    end = _SENTENCE_END.search(text, start)
    return bool(end and end.group() == "?")


def _name_facts(text: str) -> list[tuple[int, str]]:
    facts = []
    for m in _NAME_IS.finditer(text):
        facts.append((m.start(), f"name: {_clip(m.group('name'))}"))
    for pattern in (_CALL_ME, _IM_NAME):
        for m in pattern.finditer(text):
            name = m.group("name")
            if name in _NAME_STOPWORDS or _question(text, m.start()):
                continue
            facts.append((m.start(), f"name: {name}"))
    return facts


def _preference_facts(text: str) -> list[tuple[int, str]]:
    facts = []
    negated_spans = []

    def ok(m: re.Match[str], obj: str) -> bool:
        return _good_object(obj) and not _question(text, m.start()) and _starts_clause(text, m.start())

    for m in _NEG_PREFERENCE.finditer(text):
        negated_spans.append(m.span())
        obj = _clip(m.group("obj"))
        if ok(m, obj):
            facts.append((m.start(), f"dislikes {_third_person(obj)}"))
    for m in _CANT_STAND.finditer(text):
        obj = _clip(m.group("obj"))
        if ok(m, obj):
            facts.append((m.start(), f"can't stand {_third_person(obj)}"))
    for m in _PREFERENCE.finditer(text):
        if any(s <= m.start() < e for s, e in negated_spans):
            continue
        # "I'd like", "I would like", "I feel like" never match (they lack "I <verb>"); "I like to
        # think" is an opinion marker, not a preference.
        obj = _clip(m.group("obj"))
        if re.match(r"(?i)^to\s+(?:think|believe|say|imagine|hope|remind|keep\s+in\s+mind)\b", obj):
            continue
        if ok(m, obj):
            facts.append((m.start(), f"{_PREF_VERBS[m.group('verb').lower()]} {_third_person(obj)}"))
    for m in _FAN_OF.finditer(text):
        obj = _clip(m.group("obj"))
        if ok(m, obj):
            facts.append((m.start(), f"is a fan of {_third_person(obj)}"))
    for m in _FAVORITE.finditer(text):
        if any(w.lower() in _CLAUSE_WORDS for w in m.group("what").split()[1:]):
            continue  # "my favourite book since I was nine": the value is in a clause of its own
        what = _clip(m.group("what")).lower()
        obj = _favorite_object(_clip(m.group("obj")))
        if _good_favorite(what, obj) and not _question(text, m.start()):
            facts.append((m.start(), f"favorite {what}: {_third_person(obj)}"))
    for m in _IS_MY_FAVORITE.finditer(text):
        what = _clip(m.group("what")).lower()
        obj = _clip(m.group("subject"))
        if _good_favorite(what, obj) and not _question(text, m.start()):
            facts.append((m.start(), f"favorite {what}: {obj}"))
    return facts


def _favorite_object(obj: str) -> str:
    # "my favorite treat is this chocolate tart": drop the pointer word, keep the thing.
    m = re.match(r"(?i)^(?:this|that|these|those)\s+(?=\S+\s+\S+)", obj)
    return obj[m.end():] if m else obj


# "my favourite book since I was nine": a clause inside the kind; "my favourite city is over": an end, not a value
_CLAUSE_WORDS = frozenset("since when as because if that which while until i we".split())
_NO_FAVORITE = frozenset("over done gone finished history dead out back ended".split())


def _good_favorite(what: str, obj: str) -> bool:
    if not what or not obj or len(what.split()) > 3 or len(obj.split()) > 10:
        return False
    if what.split()[0] in _NOT_FAVORITE_KINDS:
        return False
    if obj.strip().lower().rstrip(".!") in _NO_FAVORITE:
        return False
    return not _NON_PREFERENCE_OBJECTS.match(obj) and not re.match(r"(?i)^(?:when|how|what|where|being)\b", obj)


_REFERENTIAL = re.compile(r"(?i)\b(?:it|this|that|these|those|them|they|their|his|her|him|he|she|one)\b")
_BAD_FIRST_WORD = lexicon.words("bad_first_word")
_FIRST_PERSON = {"my": "their", "myself": "themselves", "me": "them", "mine": "theirs", "i": "they"}


def _good_object(obj: str) -> bool:
    """A preference object must be a durable thing or activity, not a reaction to the chat.

    Referential objects ("that", "his tech", "holding them") depend on context the fact would
    lose; long "the ..." objects are almost always reactions to a photo or story.
    """
    words = _words(obj)
    if not words or _NON_PREFERENCE_OBJECTS.match(obj):
        return False
    if words[0].lower() in _BAD_FIRST_WORD or (len(words) == 1 and len(words[0]) < 3):
        return False
    if _REFERENTIAL.search(obj):
        return False
    if words[0].lower() == "the" and len(words) > 3:
        return False
    return True


# Words that may stand right before the "I" of a preference. Anything else there ("something I
# love", "a job I enjoy") makes it a relative clause about another thing.
_CLAUSE_OPENERS = lexicon.words("clause_openers")


def _starts_clause(text: str, start: int) -> bool:
    before = text[max(0, start - 60):start].rstrip(" ")
    if not before or not before[-1].isalpha():
        return True
    prev = re.search(r"([A-Za-z'’]+)$", before)
    return prev is not None and prev.group(1).lower().replace("’", "'") in _CLAUSE_OPENERS


def _third_person(obj: str) -> str:
    """"reminds me of home" -> "reminds them of home"; a title keeps its words ("Don't Stop Me Now")."""
    words = obj.split()
    if len(words) > 1 and all(w[:1].isupper() or w in ("a", "an", "the", "of", "in", "on", "and", "to") for w in words):
        return obj
    return re.sub(r"\b(?:my|myself|me|mine|I)\b", lambda m: _FIRST_PERSON[m.group().lower()], obj)


def _identity_facts(text: str) -> list[tuple[int, str]]:
    facts = []
    for m in _IDENTITY.finditer(text):
        if _question(text, m.start()):
            continue
        obj = _clip(m.group("obj"))
        core = _IDENTITY_CUT.split(obj, maxsplit=1)[0]
        words = _words(core)
        if not words or len(words) > 5:
            continue
        head = words[-1].lower()
        if any(w.lower() in _NOT_IDENTITY_HEADS for w in words[:1]) or head in _NOT_IDENTITY_HEADS:
            continue
        if words[-1][:1].isupper():
            continue  # "a Parisian", "a Catholic": who one is by a name, not a job
        if is_job_word(head) or len(words) > 1 and words[-2].lower() in JOB_MODIFIERS:
            facts.append((m.start(), f"is {m.group('article').lower()} {_third_person(obj)}"))
    for m in _WORK.finditer(text):
        obj = _clip(m.group("obj"))
        if not obj or _WORK_BAD_OBJECT.match(obj) or _question(text, m.start()):
            continue
        prep = m.group("prep").lower()
        if prep == "as" and not re.match(r"(?i)^(?:an?\s+|the\s+)?\w", obj):
            continue
        facts.append((m.start(), f"works {prep} {_third_person(obj)}"))
    for pattern, verb in ((_LIVE, "lives in"), (_FROM, "is from"), (_ALLERGIC, "is allergic to")):
        for m in pattern.finditer(text):
            obj = _clip(m.group("obj"))
            if not obj or _question(text, m.start()):
                continue
            if verb != "is allergic to" and _PLACE_BAD_OBJECT.match(obj):
                continue
            if verb == "is from" and not re.match(r"^(?:[A-Z]|(?i:a|the)\s)", obj):
                continue
            facts.append((m.start(), f"{verb} {_third_person(obj)}"))
    for m in _BIRTHDAY.finditer(text):
        obj = _clip(m.group("obj"))
        if obj and re.search(r"\d|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|today|tomorrow)", obj):
            facts.append((m.start(), f"birthday: {obj}"))
    return facts


def extract_self_statements(text: str) -> list[str]:
    """Return short third-person facts the speaker states about themself, deduplicated, in order.

    Examples: "name: Alice", "likes hiking in the mountains", "works at Acme Corp",
    "lives in Berlin", "is allergic to peanuts", "favorite color: blue".
    """
    if not text or not text.strip():
        return []
    found = sorted(_name_facts(text) + _preference_facts(text) + _identity_facts(text), key=lambda f: f[0])
    seen: set[str] = set()
    facts: list[str] = []
    for _, fact in found:
        fact = " ".join(fact.split())
        key = fact.lower()
        if key not in seen:
            seen.add(key)
            facts.append(fact)
    return facts
