"""A claim: one fact (entity, attribute, value) as the rules read it, and the sentence memory keeps of it.

The reading is `claims` (patterns) and `parsed` (the dependency parse); what a claim changes among
the facts held is `factset`. All three build on this module, which imports none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mirix_py.agents.offline.rules import core as self_rules

__all__ = ["Claim", "is_profession", "render"]


@dataclass(frozen=True)
class Claim:
    entity: str  # a name, or the speaker for what they say of themself
    attribute: str  # relation, occupation, employer, location, origin, likes, dislikes, prefers,
    #                 favorite <kind>, name, allergy, birthday, born, is
    value: str
    about_speaker: bool = False
    owner: str = ""  # for a relation: whose ("user", "Mel")
    negated: bool = False  # "no longer": the fact stops holding
    replaces: str = ""  # "switched from A to B": A
    only_if_replacing: bool = False  # holds only where it replaces `replaces` ("left Acme for Globex": a job or a home)
    phrase: str = ""  # the fact as the rules phrased it ("loves chess"), kept as memory's text when set

    @property
    def text(self) -> str:
        return render(self)


def is_profession(phrase: str) -> bool:
    """True when the phrase's head word names a job ("marine biologist", "flight instructor")."""
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*", re.split(r"\s+(?:at|in|for|of|from|with|who|that|and)\b", phrase)[0])
    if not words or len(words) > 4:
        return False
    return self_rules.is_job_word(words[-1]) or len(words) > 1 and words[-2].lower() in self_rules.JOB_MODIFIERS


def _article(value: str) -> str:
    if re.match(r"(?i)^(?:a|an|the)\s", value):
        return value
    return f"{'an' if value[:1].lower() in 'aeiou' else 'a'} {value}"


def _possessive(owner: str) -> str:
    return f"{owner}'s" if owner else "the speaker's"


def render(claim: Claim) -> str:
    """The claim as memory holds it: a sentence about the entity (semantic), or a line without
    subject for the speaker's core block ("works at Acme Corp", "favorite book: Dune")."""
    if claim.phrase:
        return claim.phrase
    a, v = claim.attribute, claim.value
    if claim.about_speaker:
        lines = {"name": f"name: {v}", "occupation": f"is {_article(v)}", "employer": f"works at {v}",
                 "location": f"lives in {v}", "origin": f"is from {v}", "likes": f"likes {v}",
                 "dislikes": f"dislikes {v}", "prefers": f"prefers {v}", "allergy": f"is allergic to {v}",
                 "birthday": f"birthday: {v}", "born": f"was born in {v}", "is": f"is {v}"}
        if a.startswith("favorite "):
            return f"{a}: {v}"
        return lines.get(a, f"{a}: {v}")
    e = claim.entity
    if a == "relation":
        return f"{e} is {_possessive(claim.owner)} {v}"
    if a.startswith("favorite "):
        return f"{e}'s {a}: {v}"
    sentences = {"occupation": f"{e} is {_article(v)}", "employer": f"{e} works at {v}",
                 "location": f"{e} lives in {v}", "origin": f"{e} is from {v}", "likes": f"{e} likes {v}",
                 "dislikes": f"{e} dislikes {v}", "prefers": f"{e} prefers {v}", "allergy": f"{e} is allergic to {v}",
                 "born": f"{e} was born in {v}", "is": f"{e} is {v}", "name": f"{e} is called {v}",
                 "birthday": f"{e}'s birthday: {v}"}
    return sentences.get(a, f"{e} {a}: {v}")
