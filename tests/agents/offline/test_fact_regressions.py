"""Regressions on sets the offline fact rules were fitted to, not measures of generalisation
(blind figures and history: benchmarks/docs/offline_facts.md)."""

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from mirix_py.eval.fact_eval import (
    Found, matches, parse_corpus, rules_extract, rules_memory, score, score_updates,
)

CORPUS_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "offline_facts_corpus.jsonl"
CORPUS = parse_corpus(CORPUS_PATH.read_text(encoding="utf-8").splitlines())
REGRESSION_DIR = CORPUS_PATH.parent / "fact_regressions"


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
    assert result.recall() >= 0.95, report
    assert result.precision() >= 0.95, report
    strict = score(CORPUS, rules_extract, strict=True)  # the attribute named too
    assert strict.recall() >= 0.95 and strict.precision() >= 0.95


def test_updates_supersede_on_the_corpus():
    result = score_updates(CORPUS, rules_memory)
    assert result.recall() >= 0.9, result.errors
    assert result.kept_rate() == 1.0, result.errors  # no fact lost to a change about something else


def _section(marker: str) -> list:
    """The examples after a "# Seen: …" comment of the corpus, up to the next one."""
    lines = CORPUS_PATH.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(marker))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# Seen:")), len(lines))
    return parse_corpus(lines[start:end])


def _regression_set(name: str) -> list:
    return parse_corpus((REGRESSION_DIR / name).read_text(encoding="utf-8").splitlines())


SET03 = _section("# Seen: the third held-out set")  # kept inside the corpus, as a section of its own


def test_set03_regression():
    assert len(SET03) == 69
    result = score(SET03, rules_extract)
    assert result.precision() >= 1.0 and result.recall() >= 0.94, result.errors
    updates = score_updates(SET03, rules_memory)
    assert updates.applied >= 26, updates.errors  # the other 2 need "my sister" named in another input
    assert updates.kept_rate() == 1.0, updates.errors
    resolved = score_updates(SET03, lambda inputs: rules_memory(inputs, people=True))
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


PROBES = _regression_set("probes.jsonl")


def test_probes_regression():
    result = score(PROBES, rules_extract)
    assert result.precision() >= 0.95 and result.recall() >= 0.9, result.errors
    updates = score_updates(PROBES, rules_memory)
    assert updates.applied >= 97 and updates.kept_rate() == 1.0, updates.errors


@dataclass(frozen=True)
class RegressionSet:
    """A set the rules were fitted to, and the floors they reached on it."""
    name: str
    precision: float
    recall: float
    applied: int  # supersessions applied
    resolved: int  # with the relations memory holds passed
    non_facts: int | None  # how many non-facts it holds, all kept out (None: not counted)


REGRESSION_SETS = [
    RegressionSet("set04.jsonl", 0.97, 0.95, 27, 30, None),
    RegressionSet("set05.jsonl", 1.0, 0.8, 23, 25, 11),
    RegressionSet("set06.jsonl", 1.0, 0.89, 19, 20, 12),
]


@pytest.fixture(scope="module", params=["patterns", "parse"])
def reader(request):
    """The rules as scored: by the patterns alone, and with the dependency parse (the engine's default)."""
    if request.param == "patterns":
        return None
    from mirix_py.agents.offline.parser import SpacyParser

    return SpacyParser()


@pytest.mark.parametrize("fitted", REGRESSION_SETS, ids=lambda f: f.name)
def test_regression_set_by_either_reader(fitted: RegressionSet, reader):
    """The floors hold with the parse too: what it adds costs none of the patterns' ground."""
    examples = _regression_set(fitted.name)
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


@pytest.mark.parametrize("name, precision, recall, applied, kept",
                         [("set07.jsonl", 0.90, 0.60, 11, 1.0), ("set08.jsonl", 0.97, 0.80, 14, 1.0),
                          ("set09.jsonl", 0.90, 0.35, 6, 0.93), ("set10.jsonl", 0.99, 0.37, 4, 1.0),
                          ("set11.jsonl", 0.87, 0.45, 5, 1.0), ("set12.jsonl", 0.93, 0.52, 8, 1.0),
                          ("set13.jsonl", 0.99, 0.47, 5, 1.0), ("set14.jsonl", 0.94, 0.57, 8, 1.0),
                          ("set15.jsonl", 0.87, 0.53, 3, 1.0), ("locomo_my.jsonl", 0.86, 0.48, 0, 1.0),
                          ("locomo_i.jsonl", 0.99, 0.47, 0, 1.0)],
                         ids=["set07", "set08", "set09", "set10", "set11", "set12", "set13", "set14", "set15",
                              "locomo-my", "locomo-i"])
def test_regression_set_with_the_parse(name, precision, recall, applied, kept):
    from mirix_py.agents.offline.parser import SpacyParser

    examples = _regression_set(name)
    parser = SpacyParser()
    result = score(examples, partial(rules_extract, parser=parser))
    assert result.precision() >= precision and result.recall() >= recall, result.errors
    resolved = score_updates(examples, partial(rules_memory, people=True, parser=parser))
    # set09's one lost fact is the patterns' ("I left the Met Office …, but I never did")
    assert resolved.applied >= applied and resolved.kept_rate() >= kept, resolved.errors
