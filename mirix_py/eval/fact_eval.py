"""Precision and recall of the offline fact rules on a labelled corpus, and how they apply changes.

Pure: a corpus is parsed from JSON lines; an extractor is any callable from (text, speaker) to
`Found` facts; a memory is any callable from a sequence of (text, speaker) inputs to the facts it
holds after them. The corpus in `tests/fixtures/offline_facts_corpus.jsonl` holds one example per
line (lines starting with "#" are comments):

    {"text": "My brother Tom is a pilot.", "speaker": "user",
     "facts": [["Tom", "relation", "brother"], ["Tom", "occupation", "pilot"]]}
    {"prior": ["I live in Boston."], "text": "I moved to Denver.", "speaker": "user",
     "facts": [["user", "location", "Denver"]], "supersedes": [["user", "location", "Boston"]],
     "keeps": []}

A fact is (entity, attribute, value); facts the speaker states about themself have the speaker as
entity ("user" for the user). An example without facts is a near miss: whatever is found in it is
a false positive. A found fact matches an expected one when the entity is the same (case aside)
and every word of the expected value is among the words of the found fact's text (`loose`: what a
reader of the memory can use); `strict` also wants the same attribute.

An example with `prior` is an update: the memory takes the prior texts, then the text. A
supersession succeeds when the old fact was held after the prior texts, is gone after the text,
and the example's new facts are held; a `keeps` fact held after the prior texts must still be held.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

__all__ = ["Example", "Found", "Score", "UpdateScore", "matches", "parse_corpus", "score", "score_updates"]

Fact = tuple[str, str, str]  # (entity, attribute, value)


@dataclass(frozen=True)
class Found:
    """A fact as the rules produced it: the entity, the attribute when the rules name one, and the
    fact's text as memory would hold it."""

    entity: str
    attribute: str | None
    text: str


@dataclass(frozen=True)
class Example:
    text: str
    speaker: str
    facts: tuple[Fact, ...]
    prior: tuple[str, ...] = ()
    supersedes: tuple[Fact, ...] = ()
    keeps: tuple[Fact, ...] = ()
    note: str = ""

    @property
    def is_update(self) -> bool:
        return bool(self.prior)


Extractor = Callable[[str, str], Sequence[Found]]
Memory = Callable[[Sequence[tuple[str, str]]], Sequence[Found]]

_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # "ex-wife" is one word: it is not "wife"
_SKIP = frozenset({"a", "an", "the"})


def _words(text: str) -> set[str]:
    return {w for w in _TOKEN.findall(text.casefold().replace("’", "'")) if w not in _SKIP}


def _spelling(attribute: str | None) -> str | None:
    """An attribute as compared: British and American spellings name one attribute ("favourite colour")."""
    return attribute and attribute.replace("favourite", "favorite").replace("colour", "color")


def matches(found: Found, fact: Fact, *, strict: bool = False) -> bool:
    entity, attribute, value = fact
    if found.entity.casefold() != entity.casefold():
        return False
    if strict and _spelling(found.attribute) != _spelling(attribute):
        return False
    wanted = _words(value)
    return bool(wanted) and wanted <= _words(found.text)


def parse_corpus(lines: Iterable[str]) -> list[Example]:
    """Examples from JSON lines; blank lines and lines starting with "#" are skipped."""
    def facts(row: dict, key: str, number: int) -> tuple[Fact, ...]:
        out = []
        for item in row.get(key, []):
            if len(item) != 3 or not all(isinstance(x, str) and x.strip() for x in item):
                raise ValueError(f"line {number}: {key} entries are [entity, attribute, value], got {item!r}")
            out.append((item[0], item[1], item[2]))
        return tuple(out)

    examples = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        row = json.loads(line)
        if not isinstance(row.get("text"), str) or not row["text"].strip():
            raise ValueError(f"line {number}: no text")
        examples.append(Example(
            text=row["text"], speaker=row.get("speaker") or "user", facts=facts(row, "facts", number),
            prior=tuple(row.get("prior", [])), supersedes=facts(row, "supersedes", number),
            keeps=facts(row, "keeps", number), note=row.get("note", ""),
        ))
    return examples


@dataclass
class Score:
    """Extraction counts per attribute ("all" for the totals) and the examples that went wrong.

    Recall counts expected facts covered by some found fact; precision counts found facts that
    cover some expected fact (one found fact may state several)."""

    tp: Counter = field(default_factory=Counter)  # expected facts found
    fn: Counter = field(default_factory=Counter)  # expected facts missed
    correct: int = 0  # found facts that match an expected one
    wrong: int = 0  # found facts that match none
    errors: list[dict[str, Any]] = field(default_factory=list)

    def precision(self) -> float:
        found = self.correct + self.wrong
        return self.correct / found if found else 1.0

    def recall(self, attribute: str = "all") -> float:
        labelled = self.tp[attribute] + self.fn[attribute]
        return self.tp[attribute] / labelled if labelled else 1.0

    def rows(self) -> list[dict[str, Any]]:
        kinds = sorted(k for k in set(self.tp) | set(self.fn) if k != "all")
        return [{"attribute": k, "labelled": self.tp[k] + self.fn[k], "found": self.tp[k], "missed": self.fn[k],
                 "recall": self.recall(k)} for k in [*kinds, "all"]]


def _kind(attribute: str) -> str:
    return "favorite" if attribute.startswith("favorite") else attribute


def score(examples: Sequence[Example], extract: Extractor, *, strict: bool = False) -> Score:
    result = Score()
    for example in examples:
        found = list(extract(example.text, example.speaker))
        missed = [f for f in example.facts if not any(matches(x, f, strict=strict) for x in found)]
        extra = [x for x in found if not any(matches(x, f, strict=strict) for f in example.facts)]
        for fact in example.facts:
            bucket = result.fn if fact in missed else result.tp
            bucket[_kind(fact[1])] += 1
            bucket["all"] += 1
        result.correct += len(found) - len(extra)
        result.wrong += len(extra)
        if missed or extra:
            result.errors.append({"text": example.text, "missed": missed,
                                  "false_positives": [(x.entity, x.attribute, x.text) for x in extra]})
    return result


@dataclass
class UpdateScore:
    supersessions: int = 0  # labelled
    applied: int = 0  # old fact held, then gone, with the new facts held
    keeps: int = 0  # facts that must survive and were held after the prior texts
    kept: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)

    def recall(self) -> float:
        return self.applied / self.supersessions if self.supersessions else 1.0

    def kept_rate(self) -> float:
        return self.kept / self.keeps if self.keeps else 1.0


def _held(facts: Sequence[Found], fact: Fact) -> bool:
    """Held: a fact that names its attribute must name this one ("likes cilantro" is not "dislikes cilantro")."""
    return any(matches(x, fact, strict=x.attribute is not None) for x in facts)


def score_updates(examples: Sequence[Example], memory: Memory) -> UpdateScore:
    result = UpdateScore()
    for example in examples:
        if not example.is_update:
            continue
        inputs = [(text, example.speaker) for text in example.prior]
        before = list(memory(inputs))
        after = list(memory([*inputs, (example.text, example.speaker)]))
        new_held = all(_held(after, f) for f in example.facts)
        problems: list[tuple[str, Fact | tuple[Fact, ...]]] = []
        for fact in example.supersedes:
            result.supersessions += 1
            if _held(before, fact) and not _held(after, fact) and new_held:
                result.applied += 1
            else:
                problems.append(("not superseded", fact))
        for fact in example.keeps:
            if not _held(before, fact):
                continue
            result.keeps += 1
            if _held(after, fact):
                result.kept += 1
            else:
                problems.append(("lost", fact))
        if not new_held:
            problems.append(("new facts missing", example.facts))
        if problems:
            result.errors.append({"prior": example.prior, "text": example.text, "problems": problems,
                                  "held": [(x.entity, x.text) for x in after]})
    return result


# ---------------------------------------------------------------- the offline rules as scored

def rules_extract(text: str, speaker: str, *, parser: Any = None) -> list[Found]:
    """What the offline rules write for a text: each claim's entity, attribute and rendered fact (an
    end, or a value that holds only where it replaces a held one, is no fact on its own). With a
    `parser` (a `parsed.ClauseParser`), the rules also read the sentences' parse (`extract_claims(parser=)`)."""
    from mirix_py.agents.offline.rules.claims import extract_claims

    return [Found(c.entity, c.attribute, c.text) for c in extract_claims(text, speaker, parser=parser)
            if not c.negated and not c.only_if_replacing]


def rules_memory(inputs: Sequence[tuple[str, str]], *, people: bool = False, parser: Any = None) -> list[Found]:
    """The facts held after the inputs, each input's claims applied to what was held per entity
    (`factset.apply`: the supersession the managers do). With `people`, each input is read knowing
    the relations held so far ("my sister" for the one person held as the speaker's sister)."""
    from mirix_py.agents.offline.rules.claims import extract_claims
    from mirix_py.agents.offline.rules.factset import apply

    held: dict[str, list] = {}
    for text, speaker in inputs:
        known = [(entity, f.value) for entity, facts in held.items() for f in facts
                 if people and f.attribute == "relation" and f" {speaker}'s " in f" {f.text} "]
        claims = extract_claims(text, speaker, people=known, parser=parser)
        for entity in dict.fromkeys(c.entity for c in claims):
            held[entity] = apply(held.get(entity, []), [c for c in claims if c.entity == entity]).facts
    return [Found(entity, f.attribute, f.text) for entity, facts in held.items() for f in facts]
