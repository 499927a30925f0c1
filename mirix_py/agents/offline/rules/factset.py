"""The facts memory holds about one entity, and how a new claim changes them.

Pure: `apply` takes the facts held (read back from a core block's lines or a semantic memory's
sentences) and the claims of a new input, and returns the facts to hold, what was superseded and
what was added. An attribute holds one value at a time (a job, an employer, a home, a favourite of
each kind, a preference of each kind such as a drink) unless it is a list by nature (likes,
dislikes, allergies, descriptions); a like and a dislike of the same thing exclude each other.
A negated claim ("no longer") removes the fact it names (without a value, every value of its slot:
"no longer cooking professionally" ends the job); "switched from A to B" removes A; a claim
`only_if_replacing` ("left Acme for Globex": a job or a home) holds only where it removed A.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from mirix_py.agents.offline.rules import lexicon
from mirix_py.agents.offline.rules.claim import Claim
from mirix_py.text.passages import stem

__all__ = ["Held", "Outcome", "apply", "slot"]

# kinds of preference that hold one value at a time: "I switched to green tea" replaces the coffee
PREFERENCE_KINDS: dict[str, frozenset[str]] = lexicon.word_groups("preference_kinds")
MULTI = frozenset({"likes", "dislikes", "allergy", "is"})
# "is a …" words that say who someone is besides their job: a second one does not replace the job
# ("I'm a teacher" then "I'm a mom"), and one does not replace another ("a runner" and "a vegan")
NOT_JOBS = lexicon.words("not_jobs")
# "a stepfather", "a grandmother", "a homeowner": a kin word or an owner with a prefix is no job either
_NOT_JOB_COMPOUND = re.compile(r"^(?:(?:step|grand|great-?grand|god|foster|half)-?(?P<kin>[a-z]+)|[a-z]+-?owner)$")
TASTES = frozenset({"likes", "prefers"})
# relations a person holds one of at a time towards the speaker, by group: a boyfriend becomes a fiancé, a
# husband an ex-husband, a friend a best friend; one of another group is a second relation ("my best friend
# too" beside "boyfriend"), and any other relation (a brother, a flatmate) stands beside the rest
RELATION_GROUPS: dict[str, frozenset[str]] = lexicon.word_groups("relation_groups")
_WORD = re.compile(r"[a-z0-9]+")


def _words(value: str) -> tuple[str, ...]:
    return tuple(w for w in _WORD.findall(value.casefold()) if w not in ("a", "an", "the"))


# a possessive says whose the thing is, and the speaker's own is written in either person ("running my
# own studio" from the turn, "running their own studio" once restated): the same thing either way
_POSSESSIVES = frozenset({"my", "your", "his", "her", "its", "our", "their"})


def _stem(word: str) -> str:
    """`text.passages.stem`, and a final "e" dropped: "dance", "dances" and "dancing" are one word."""
    word = "their" if word in _POSSESSIVES else stem(word)
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _stems(value: str) -> tuple[str, ...]:
    """The value's words as a fact held is compared by: one taste said in two forms is one fact."""
    return tuple(_stem(w) for w in _words(value))


def preference_kind(value: str) -> str | None:
    for word in reversed(_words(value)):
        for kind, words in PREFERENCE_KINDS.items():
            if word in words:
                return kind
    return None


def _head(value: str) -> str:
    """The head word of a role: "mom of two" -> "mom", "marine biologist" -> "biologist"."""
    words = re.findall(r"[a-z0-9-]+", re.split(r"(?i)\s+(?:at|in|for|of|from|with|who|that|and)\b", value)[0].casefold())
    words = [w for w in words if w not in ("a", "an", "the")]
    return words[-1] if words else ""


def slot(attribute: str, value: str) -> tuple[str, ...]:
    """What a fact occupies: a new fact in the same slot with another value replaces it.

    A job is one slot; a diet ("a vegetarian", "prefers a vegan diet") another; any other "is a …"
    (a parent, a runner, a fan) holds many values, each its own slot."""
    if attribute == "occupation":
        head = _head(value)
        if head in PREFERENCE_KINDS["diet"]:
            return ("prefers", "diet")
        compound = _NOT_JOB_COMPOUND.match(head)
        if head in NOT_JOBS or compound and (compound.group("kin") is None or compound.group("kin") in NOT_JOBS):
            return ("is", *_words(value))
        return (attribute,)
    if attribute in ("likes", "dislikes"):
        return ("taste", *_stems(value))
    if attribute == "relation":
        head = value.casefold().split()[-1] if value.split() else ""
        head = head[3:] if head.startswith("ex-") else head
        group = next((g for g, heads in RELATION_GROUPS.items() if head in heads), None)
        return ("relation", group) if group else ("relation", *_words(value))
    if attribute == "prefers":
        kind = preference_kind(value)
        return ("prefers", kind) if kind else ("prefers", *_words(value))
    if attribute in MULTI:
        return (attribute, *_words(value))
    return (attribute,)


@dataclass(frozen=True)
class Held:
    """A fact memory holds: its attribute and value when the rules can read it, and its text."""

    text: str
    attribute: str | None = None
    value: str = ""


@dataclass
class Outcome:
    facts: list[Held]
    superseded: list[Held] = field(default_factory=list)
    added: list[Held] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.superseded or self.added)


def _same_value(a: str, b: str) -> bool:
    if re.search(r"\bex-", a) != re.search(r"\bex-", b) and (re.search(r"\bex-", a) or re.search(r"\bex-", b)):
        return False  # "ex-wife" is not "wife"
    wa, wb = _stems(a), _stems(b)
    return bool(wa) and bool(wb) and (wa == wb or set(wa) <= set(wb) and len(wa) >= len(wb) - 1)


def _names_it(held: str, said: str) -> bool:
    """A thing held by its full name and said by part of it: "the Civic" for "Honda Civic"."""
    said = re.sub(r"^(?:the|my|his|her|their|our)\s+", "", said.strip())
    return said[:1].isupper() and bool(_words(said)) and set(_words(said)) <= set(_words(held))


def apply(held: Sequence[Held], claims: Sequence[Claim]) -> Outcome:
    facts = list(held)
    out = Outcome(facts=facts)

    def drop(match) -> None:
        for fact in [f for f in facts if f.attribute is not None and match(f)]:
            facts.remove(fact)
            if fact in out.added:
                out.added.remove(fact)
            else:
                out.superseded.append(fact)

    for claim in claims:
        if claim.negated and not claim.value:  # "no longer cooking professionally": whatever the job was
            drop(lambda f: slot(f.attribute, f.value) == slot(claim.attribute, ""))
            continue
        if claim.negated:  # "no longer likes jazz" also ends "prefers jazz": one taste, said two ways
            family = TASTES if claim.attribute in TASTES else {claim.attribute}
            drop(lambda f: f.attribute in family and (_same_value(f.value, claim.value) or _names_it(f.value, claim.value)))
            continue
        if claim.replaces:
            before = len(out.superseded)
            drop(lambda f: (_same_value(f.value, claim.replaces) or _names_it(f.value, claim.replaces))
                 and f.attribute in (claim.attribute, "likes"))
            if claim.only_if_replacing and len(out.superseded) == before:
                continue  # "left Acme for Globex" where Acme was not held with this attribute
        new = Held(text=claim.text, attribute=claim.attribute, value=claim.value)
        key = slot(claim.attribute, claim.value)
        if any(f.attribute == claim.attribute and slot(f.attribute, f.value) == key and _same_value(f.value, claim.value)
               and not (claim.attribute == "occupation" and len(_words(claim.value)) > len(_words(f.value)))  # "head nurse"
               for f in facts):
            continue  # held already: a repeat changes nothing
        drop(lambda f: slot(f.attribute, f.value) == key)
        facts.append(new)
        out.added.append(new)
    return out
