"""Who "my sister" is: a relation word as a subject, resolved to the one person named with it.

People name someone once ("My sister Mia is a paramedic") and then go on by the relation alone
("My sister retrained as a midwife"). The claim rules read facts about names, so such a clause is
about nobody unless the relation word is read as the name it stands for. `known_people` maps each
relation word to the one person the speaker has named with it (a relation two people hold, "my
friend" for Jake and for Sam, names nobody); `name_the_subject` puts that name in place of a
clause's leading "my <relation>" when no name follows it. A parent or grandparent is also called by the
word itself, as a name ("Mum has moved to Málaga", "Dad retired"): the same person, whichever of
its forms ("mum", "mom", "mother") was used to name them. Pure functions.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from mirix_py.agents.offline.rules import semantic as entity_rules

__all__ = ["forms", "known_people", "name_the_subject", "relation_head", "relation_subjects"]

_LEAD = r"(?:(?:and|but|so|also|well|oh|yes|yeah|now|then|actually)[,\s]+)*"
_MY_RELATION = re.compile(
    rf"^(?P<lead>{_LEAD})(?i:my|our)\s+(?:(?i:{entity_rules._ADJ_WORDS})\s+)*(?P<rel>(?i:{entity_rules._RELATIONS}))\b"
    r"(?!-|['’]s\b|,?\s+[A-Z])"  # "my sister's flat" is the flat's; "my sister Mia" names her
)
# the forms one kin word takes, each read as the first: "Mum" names the person held as the speaker's mother
_KIN_FORMS = {"mum": "mother", "mom": "mother", "mam": "mother", "mommy": "mother", "mummy": "mother",
              "dad": "father", "daddy": "father", "papa": "father",
              "grandma": "grandmother", "granny": "grandmother", "gran": "grandmother", "nan": "grandmother",
              "nana": "grandmother", "grandpa": "grandfather", "grandad": "grandfather", "granddad": "grandfather"}
# "Mum has…", "Dad retired": the kin word as a name opening the clause (not "Mum's flat")
_KIN_AS_NAME = re.compile(rf"^(?P<lead>{_LEAD})(?P<rel>{'|'.join(w.capitalize() for w in (*_KIN_FORMS, 'Mother', 'Father'))})"
                          r"\b(?!['’]s\b|,)")


def relation_head(relation: str) -> str:
    """The word a relation is called by: "older sister" -> "sister", "best friend" -> "friend"."""
    words = relation.casefold().split()
    return _KIN_FORMS.get(words[-1], words[-1]) if words else ""


# "my sister" without a name after it, or a kin word as a name, anywhere in a text: a candidate for `name_the_subject`
_UNNAMED = re.compile(
    rf"(?:\b(?i:my|our)\s+(?:(?i:{entity_rules._ADJ_WORDS})\s+)*(?P<rel>(?i:{entity_rules._RELATIONS}))\b(?!-|['’]s\b|,?\s+[A-Z])|"
    rf"(?:^|(?<=[.!?;,]\s))(?P<kin>{'|'.join(w.capitalize() for w in (*_KIN_FORMS, 'Mother', 'Father'))})\b(?!['’]s\b|,))"
)


def relation_subjects(text: str) -> set[str]:
    """The relation words (as `relation_head` gives them) that `text` may use as a subject without a
    name: the people memory has to be asked about before reading it ("My brother is a pilot now")."""
    return {relation_head(m.group("rel") or m.group("kin")) for m in _UNNAMED.finditer(text)}


def forms(head: str) -> list[str]:
    """Every word a relation head is said by: "mother" -> ["mother", "mum", "mom", …]."""
    return [head, *(form for form, canonical in _KIN_FORMS.items() if canonical == head and form != head)]


def known_people(relations: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{relation word: name} from (name, relation) pairs the speaker stated, for the relation words
    that name exactly one person."""
    names: dict[str, set[str]] = {}
    for name, relation in relations:
        head = relation_head(relation)
        if head and name:
            names.setdefault(head, set()).add(name)
    return {head: next(iter(found)) for head, found in names.items() if len(found) == 1}


def name_the_subject(clause: str, people: Mapping[str, str]) -> str:
    """`clause` with a leading "my <relation>" replaced by the one person it names, if known:
    "My sister retrained as a midwife" -> "Mia retrained as a midwife"."""
    m = _MY_RELATION.match(clause) or _KIN_AS_NAME.match(clause)
    if not m:
        return clause
    name = people.get(relation_head(m.group("rel")))
    return f"{m.group('lead')}{name}{clause[m.end():]}" if name else clause
