"""Idioms of a fact or a change, rewritten to the plain forms the claim rules read.

People rarely say "I now work at Netflix"; they say "my paycheck comes from Netflix" or "Netflix took
me on". Each family in `idioms.yaml` reads one such idiom as a whole and rewrites it to a form the
rules in `changes` and `claims` already read ("I work at", "now lives in", "no longer likes"), so
every subject they know ("I", a name, "he"/"she") gets it at once. Pure functions of one sentence:
a sentence without an idiom comes back unchanged.
"""

from __future__ import annotations

import functools
import re
import string
from pathlib import Path
from typing import Any, Callable, NamedTuple

import yaml

from mirix_py.agents.offline.rules import core as self_rules
from mirix_py.agents.offline.rules import semantic as entity_rules

__all__ = ["EXAMPLES", "FAMILIES", "Family", "guard_text", "rewrite"]

DATA = Path(__file__).with_name("idioms.yaml")


class Family(NamedTuple):
    guards: tuple[str, ...]
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]


def _common(thing: str) -> str:
    """"Coffee" opening a sentence is the common noun "coffee"; "Apple Music" stays a name."""
    return thing.lower() if " " not in thing and thing.istitle() else thing


def _common_phrase(thing: str) -> str:
    """"Oat lattes" opening a sentence is "oat lattes"; "Apple Music" and "Diet Coke" stay names."""
    words = thing.split()
    return thing[:1].lower() + thing[1:] if words[0].istitle() and all(w.islower() for w in words[1:]) else thing


class _Template(string.Formatter):
    """A rewrite written in the data: `{subj:am/is}` is "am" when the group is "I", else "is"; `!c`, `!p`
    and `!l` lowercase a common noun, a common phrase, or the first letter."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if "/" in format_spec:
            first, third = format_spec.split("/")
            return first if value == "I" else third
        return format(value, format_spec)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "c":
            return _common(value)
        if conversion == "p":
            return _common_phrase(value)
        if conversion == "l":
            return value[:1].lower() + value[1:]
        return super().convert_field(value, conversion)


_TEMPLATE = _Template()
_ASIDE_FACT = re.compile(r"\b(?:lives?|works?|moved|(?:is|was|['’]s)\s+(?:a|an|the|my|our)\b)")


def _retired(m: re.Match[str]) -> str:
    return f"{'am' if re.match(r'am|.m', m.group()) else 'is'} now retired"


def _come_round(m: re.Match[str]) -> str:
    subj = m.group("subj") or m.group("subj2")
    return f"{subj} {'like' if subj == 'I' else 'now likes'} {m.group('thing')}"


def _barely(m: re.Match[str]) -> str:
    return f"I no longer {'drink' if m.group('verb') == 'touch' else m.group('verb')}"


def _name_s_a(m: re.Match[str]) -> str:
    words = re.split(r"\s+", m.group("job"))
    head = words[0] if len(words) == 1 or words[1] in ("now", "at", "in", "for", "who", "and", "with") else words[1]
    return f"{m.group('name')} is " if self_rules.is_job_word(head) else m.group()


def _pastime_end(m: re.Match[str]) -> str:
    return f"I no longer like {_PASTIMES[m.group('verb')]}"


def _who_aside(m: re.Match[str]) -> str:
    return m.group() if _ASIDE_FACT.search(m.group("aside")) else f"{m.group('name')} "


def _address_in(m: re.Match[str]) -> str:
    owner = m.group("owner")
    subj = {"my": "I", "his": "he", "her": "she"}.get(owner.lower(), owner[:-2])
    return f"{m.group('lead')}{subj} {'now live' if subj == 'I' else 'now lives'} in {m.group('place')}"


def _former_employer(m: re.Match[str]) -> str:
    if m.group("new"):
        return f"{m.group('lead')}I left {m.group('org')} to join {m.group('new')}"
    return f"{m.group('lead')}I no longer work at {m.group('org')}"


def _nothing_beats(m: re.Match[str]) -> str:
    tail = re.sub(r"\s+for\s+me\b", "", m.group("tail"))  # "for me" is the speaker's already
    return f"{m.group('lead')}I love {m.group('thing')}{tail}"


def _taste_then_it(m: re.Match[str]) -> str:
    verb = m.group("verb").replace("’", "'").strip()
    be = "has" if verb in ("'ve", "has", "have") else "is"
    if m.group("rest").startswith(("replaced", "overtaken", "beaten", "topped", "knocked", "now", "just", "finally")):
        be = "has" if be == "has" or verb in ("'s",) else be
    return f"{m.group('head')}; {m.group('thing')} {be} {m.group('rest')}"


def _at_uni_in(m: re.Match[str]) -> str:
    subj = m.group("subj")
    return f"{'; ' if m.group('comma') else ''}{subj} {'live' if subj == 'I' else 'lives'} in {m.group('place')}"


def _intolerant(m: re.Match[str]) -> str:
    more = re.match(r"\s+[A-Za-z]", m.string[m.end():])  # "since I'm lactose intolerant I'm trying…": the value ends here
    subj = m.group("subj")
    return f"{subj} {'am' if subj == 'I' else 'is'} allergic to {m.group('x') or m.group('y')}{',' if more else ''}"


_CALLS: dict[str, Callable[[re.Match[str]], str]] = {
    "retired": _retired, "come_round": _come_round, "barely": _barely, "name_s_a": _name_s_a,
    "pastime_end": _pastime_end, "who_aside": _who_aside, "address_in": _address_in,
    "former_employer": _former_employer, "nothing_beats": _nothing_beats, "taste_then_it": _taste_then_it,
    "at_uni_in": _at_uni_in, "intolerant": _intolerant,
}


def _template(text: str) -> Callable[[re.Match[str]], str]:
    return lambda m: _TEMPLATE.vformat(text, (), m.groupdict())


def _load(data: dict[str, Any]) -> tuple[dict[str, Family], list[tuple[str, str, str]]]:
    """The families of `data` by name, in the order they run, and their examples (family, sentence, rewritten)."""
    fragments = {**data["fragments"], "RELATIONS": entity_rules._RELATIONS, "PASTIMES": "|".join(data["pastimes"])}
    families: dict[str, Family] = {}
    examples: list[tuple[str, str, str]] = []
    for family in data["families"]:
        pattern = re.sub(r"\{([A-Z][A-Z0-9_]*)\}", lambda m: fragments[m.group(1)], family["pattern"])
        replace = _CALLS[family["call"]] if "call" in family else _template(family["rewrite"])
        families[family["name"]] = Family(tuple(family["guards"]), re.compile(pattern), replace)
        examples += [(family["name"], said, rewritten) for said, rewritten in family["examples"]]
    return families, examples


_DATA = yaml.safe_load(DATA.read_text(encoding="utf-8"))
_PASTIMES: dict[str, str] = _DATA["pastimes"]
FAMILIES, EXAMPLES = _load(_DATA)
_FAMILIES = list(FAMILIES.values())


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


# one search for any guard: most sentences hold none and skip every family at once
_GATE = re.compile(_any_of({g for family in _FAMILIES for g in family.guards}))


def rewrite(sentence: str) -> str:
    """`sentence` with each idiom of `idioms.yaml` rewritten to its plain form; unchanged when it holds none."""
    text = sentence
    lower = guard_text(text)
    if not _GATE.search(lower):
        return text
    for guards, pattern, replace in _FAMILIES:
        if any(map(lower.__contains__, guards)):
            new = pattern.sub(replace, text)
            if new != text:
                text, lower = new, guard_text(new)
    return text


@functools.lru_cache(maxsize=64)
def guard_text(text: str) -> str:
    """`text` as the guards are tested on: lowercased, each run of whitespace one space (so a guard
    "over to" stands for the pattern's "over\\s+to")."""
    return " ".join(text.lower().split())
