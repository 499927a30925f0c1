"""The offline fact rules on the labelled facts corpus (issue 18): minimum precision and recall of what
semantic and core memory get, and of the supersessions the updates must apply."""

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from mirix_py.eval.fact_eval import (
    Found, matches, parse_corpus, rules_extract, rules_memory, score, score_updates,
)

CORPUS_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "offline_facts_corpus.jsonl"
CORPUS = parse_corpus(CORPUS_PATH.read_text(encoding="utf-8").splitlines())


def test_corpus_is_large_and_covers_the_issue():
    assert len(CORPUS) >= 120
    attributes = {a for e in CORPUS for _, a, _ in e.facts}
    assert {"relation", "occupation", "employer", "location", "likes", "dislikes", "prefers"} <= attributes
    assert any(a.startswith("favorite") for a in attributes)
    assert sum(1 for e in CORPUS if not e.facts and not e.is_update) >= 30  # near misses
    assert sum(1 for e in CORPUS if e.is_update) >= 20
    assert sum(1 for e in CORPUS if e.is_update and not e.supersedes) >= 5  # updates that replace nothing
    texts = " ".join(e.text for e in CORPUS).casefold()
    for cue in ("no longer", "switched to", "moved to", " now"):
        assert cue in texts


def test_matching_wants_the_entity_and_every_word_of_the_value():
    found = Found("Tom", "occupation", "Tom is a flight instructor")
    assert matches(found, ("tom", "occupation", "flight instructor"))
    assert not matches(found, ("Tom", "occupation", "pilot"))
    assert not matches(found, ("Mia", "occupation", "flight instructor"))
    assert not matches(found, ("Tom", "employer", "flight instructor"), strict=True)
    colour = Found("user", "favorite colour", "favorite colour: green")  # British and American spellings, one attribute
    assert matches(colour, ("user", "favorite color", "green"), strict=True)
    assert not matches(colour, ("user", "favorite film", "green"), strict=True)


def test_extraction_precision_and_recall_on_the_corpus():
    result = score(CORPUS, rules_extract)
    report = "\n".join(f"{e['text']!r}: missed {e['missed']}, false positives {e['false_positives']}"
                       for e in result.errors)
    assert result.recall() >= 0.95, report  # the rules before issue 18: 0.636
    assert result.precision() >= 0.95, report  # before: 0.898
    strict = score(CORPUS, rules_extract, strict=True)  # the attribute named too (before: none named)
    assert strict.recall() >= 0.95 and strict.precision() >= 0.95


def test_updates_supersede_on_the_corpus():
    result = score_updates(CORPUS, rules_memory)
    assert result.recall() >= 0.9, result.errors  # before issue 18: 0 of 17
    assert result.kept_rate() == 1.0, result.errors  # no fact lost to a change about something else



def _section(marker: str) -> list:
    """The examples after a "# Seen: …" comment of the corpus, up to the next one."""
    lines = CORPUS_PATH.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(marker))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# Seen:")), len(lines))
    return parse_corpus(lines[start:end])


# the third held-out set, blind in 25364fc (first run: 0.909 / 0.286, 1 of 28 supersessions), the development set of
# the fourth round since: its floors are what that round reached on it, so a change that loses that ground shows
THIRD = _section("# Seen: the third held-out set")


def test_the_third_held_out_set_as_seen():
    assert len(THIRD) == 69
    result = score(THIRD, rules_extract)
    assert result.precision() >= 1.0 and result.recall() >= 0.94, result.errors  # fourth round: 1.000, 0.943
    updates = score_updates(THIRD, rules_memory)
    assert updates.applied >= 26, updates.errors  # fourth round: 26 of 28 ("my sister" named in another input: 2)
    assert updates.kept_rate() == 1.0, updates.errors  # 31 of 31
    resolved = score_updates(THIRD, lambda inputs: rules_memory(inputs, people=True))
    assert resolved.applied == 28 and resolved.kept_rate() == 1.0, resolved.errors  # the relations held passed


def test_the_benchmark_scores_a_held_out_set_given_by_path(tmp_path):
    """`benchmarks/offline_facts.py --heldout PATH`: the next blind set is scored where it is written."""
    import json
    import subprocess
    import sys

    heldout = tmp_path / "blind.jsonl"
    heldout.write_text('{"prior": ["I live in Leeds."], "text": "I moved to York.", "speaker": "user", '
                       '"facts": [["user", "location", "York"]], "supersedes": [["user", "location", "Leeds"]]}\n',
                       encoding="utf-8")
    out = tmp_path / "figures.json"
    script = Path(__file__).resolve().parents[3] / "benchmarks" / "offline_facts.py"
    subprocess.run([sys.executable, str(script), "--heldout", str(heldout), "--out", str(out)], check=True,
                   capture_output=True)
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert [(f["corpus"], f["reader"]) for f in figures] == [
        ("offline_facts_corpus.jsonl", "patterns only"), ("offline_facts_corpus.jsonl", "patterns and parse"),
        ("blind.jsonl", "patterns only"), ("blind.jsonl", "patterns and parse")]
    assert all(f["updates"]["applied"] == 1 and f["loose"]["recall"] == 1.0 for f in figures[2:])
    missing = subprocess.run([sys.executable, str(script), "--heldout", str(tmp_path / "none.jsonl")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "no held-out set" in missing.stderr


# the fourth round's own probes, written batch by batch during the round and fitted on after each batch's first run
# (seen): kept so a later change that loses their ground shows; the fourth round reached 0.958 / 0.900, 97 of 107
PROBES = parse_corpus((Path(__file__).parent / "fact_probes_round4.jsonl").read_text(encoding="utf-8").splitlines())


def test_the_fourth_rounds_probes():
    result = score(PROBES, rules_extract)
    assert result.precision() >= 0.95 and result.recall() >= 0.9, result.errors
    updates = score_updates(PROBES, rules_memory)
    assert updates.applied >= 97 and updates.kept_rate() == 1.0, updates.errors


@dataclass(frozen=True)
class FittedSet:
    """A held-out set once blind, fitted on in a later round (seen since), and the floors it reached."""
    name: str
    precision: float
    recall: float
    applied: int  # supersessions applied
    resolved: int  # with the relations memory holds passed
    non_facts: int | None  # how many non-facts it holds, all kept out (None: not counted)


FITTED_SETS = [
    # blind in f389215 (first and only blind run: 0.933 / 0.318, 8 of 31 supersessions), fitted on in the fifth round
    # once the fifth set was written: 0.977 / 0.955, 27 of 31 (30 with the relations held)
    FittedSet("offline_facts_heldout4.jsonl", 0.97, 0.95, 27, 30, None),
    # blind in a33d9c1 (first and only blind run: 0.950 / 0.452, 13 of 29 supersessions, the role-play name read as
    # the user's), fitted on in the sixth round once the sixth set was written: 1.000 / 0.810, 23 of 29 (25)
    FittedSet("offline_facts_heldout5.jsonl", 1.0, 0.8, 23, 25, 11),
    # blind in b0e4aeb (first and only blind run: 0.750 / 0.432, 5 of 24 supersessions, four false facts), fitted on
    # in the seventh round once the seventh set was written: 1.000 / 0.892, 19 of 24 (20)
    FittedSet("offline_facts_heldout6.jsonl", 1.0, 0.89, 19, 20, 12),
]


@pytest.fixture(scope="module", params=["patterns", "parse"])
def reader(request):
    """The rules as scored: by the patterns alone, and with the dependency parse (the engine's default)."""
    if request.param == "patterns":
        return None
    from mirix_py.agents.offline.parser import SpacyParser

    return SpacyParser()


@pytest.mark.parametrize("fitted", FITTED_SETS, ids=lambda f: f.name)
def test_a_held_out_set_after_fitting(fitted: FittedSet, reader):
    """The floors hold with the parse too: what it adds costs none of the patterns' ground."""
    examples = parse_corpus((CORPUS_PATH.parent / fitted.name).read_text(encoding="utf-8").splitlines())
    extract = partial(rules_extract, parser=reader)
    result = score(examples, extract)
    assert result.precision() >= fitted.precision and result.recall() >= fitted.recall, result.errors
    updates = score_updates(examples, partial(rules_memory, parser=reader))
    assert updates.applied >= fitted.applied and updates.kept_rate() == 1.0, updates.errors
    resolved = score_updates(examples, partial(rules_memory, people=True, parser=reader))
    assert resolved.applied >= fitted.resolved, resolved.errors
    near_misses = [e for e in examples if not e.facts and not e.is_update]
    assert fitted.non_facts is None or len(near_misses) == fitted.non_facts
    assert score(near_misses, extract).wrong == 0  # every non-fact kept out


def test_the_corpus_with_the_parse(reader):
    """The corpus's floors hold whichever way the rules read."""
    result = score(CORPUS, partial(rules_extract, parser=reader))
    assert result.precision() >= 0.99 and result.recall() >= 0.99, result.errors
    updates = score_updates(CORPUS, partial(rules_memory, people=True, parser=reader))
    assert updates.applied == updates.supersessions and updates.kept_rate() == 1.0, updates.errors


# the seventh set, blind in bea4ee8 (first and only blind run, patterns only: 0.750 / 0.273, 1 of 19
# supersessions, 2 with the relations held); the parse round was fitted on it: what that round reached
SEVENTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout7.jsonl").read_text(encoding="utf-8").splitlines())


# the eighth set, blind in 4d99f6a (first and only blind run: patterns only 0.950 / 0.308, 4 of 22 supersessions;
# with the parse 0.900 / 0.431, 6 of 22), fitted on in the same round after that run
EIGHTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout8.jsonl").read_text(encoding="utf-8").splitlines())


# the ninth set, blind in 40ce66f (first and only blind run, at e820b82: patterns only 0.778 / 0.125, 2 of 22; with
# the parse 0.700 / 0.125, 2 of 22), fitted on in the same round after that run
NINTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout9.jsonl").read_text(encoding="utf-8").splitlines())
# the tenth set, blind in 88af050 (first and only blind run, at 3b07d4f: patterns only 0.889 / 0.125, 1 of 21; with
# the parse 0.909 / 0.156, 1 of 21), fitted on in the same round after that run
TENTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout10.jsonl").read_text(encoding="utf-8").splitlines())
# the eleventh set, blind in cc900ca (first and only blind run, at cc900ca, the rules of 05b668e: patterns only
# 0.692 / 0.153, 1 of 20; with the parse 0.762 / 0.271, 1 of 20); not fitted on: its floors are that run's figures
ELEVENTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout11.jsonl").read_text(encoding="utf-8").splitlines())


# the second parse round: the twelfth set blind in 677e154 (run once before the round: with the parse 0.778 / 0.246,
# 0 of 20), the thirteenth blind (run once mid-round: 0.882 / 0.291, 2 of 20), both fitted on after their runs; the
# fourteenth blind (run once late in the round: 0.939 / 0.508, 3 of 20), then fitted on; the 100 natural
# LoCoMo turns holding "my" (blind: 0.571 / 0.148), fitted on
TWELFTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout12.jsonl").read_text(encoding="utf-8").splitlines())
THIRTEENTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout13.jsonl").read_text(encoding="utf-8").splitlines())
FOURTEENTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout14.jsonl").read_text(encoding="utf-8").splitlines())
LOCOMO_MY = parse_corpus((CORPUS_PATH.parent / "offline_facts_locomo_my.jsonl").read_text(encoding="utf-8").splitlines())
# the fifteenth set (blind: 0.724 / 0.393, 3 of 20) and 120 first-person LoCoMo turns (blind: 0.667 / 0.348), each run
# once on the round's final rules, then fitted on
FIFTEENTH = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout15.jsonl").read_text(encoding="utf-8").splitlines())
LOCOMO_I = parse_corpus((CORPUS_PATH.parent / "offline_facts_locomo_i.jsonl").read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("examples, precision, recall, applied, kept",
                         [(SEVENTH, 0.90, 0.60, 11, 1.0), (EIGHTH, 0.97, 0.80, 14, 1.0), (NINTH, 0.90, 0.35, 6, 0.93),
                          (TENTH, 0.99, 0.37, 4, 1.0), (ELEVENTH, 0.87, 0.45, 5, 1.0), (TWELFTH, 0.93, 0.52, 8, 1.0),
                          (THIRTEENTH, 0.99, 0.47, 5, 1.0), (FOURTEENTH, 0.94, 0.57, 8, 1.0), (FIFTEENTH, 0.87, 0.53, 3, 1.0),
                          (LOCOMO_MY, 0.86, 0.48, 0, 1.0), (LOCOMO_I, 0.99, 0.47, 0, 1.0)],
                         ids=["seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth",
                              "fifteenth", "locomo-my", "locomo-i"])
def test_a_set_read_in_the_parse_round(examples, precision, recall, applied, kept):
    from mirix_py.agents.offline.parser import SpacyParser

    parser = SpacyParser()
    result = score(examples, partial(rules_extract, parser=parser))
    assert result.precision() >= precision and result.recall() >= recall, result.errors
    resolved = score_updates(examples, partial(rules_memory, people=True, parser=parser))
    # the ninth set's one lost fact is the patterns' ("I left the Met Office …, but I never did")
    assert resolved.applied >= applied and resolved.kept_rate() >= kept, resolved.errors
