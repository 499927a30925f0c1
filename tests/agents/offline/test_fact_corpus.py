"""The offline fact rules on the labelled facts corpus (issue 18): minimum precision and recall of what
semantic and core memory get, and of the supersessions the updates must apply."""

from pathlib import Path

from mirix_py.agents.offline.rules.fact_eval import (
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



# committed before the rules were run on it (25364fc) and never tuned on (the first two held-out sets are in CORPUS
# now, as seen): its floors are the figures of its first and only blind run, kept so a change that loses ground on
# unseen sentences shows
HELDOUT = parse_corpus((CORPUS_PATH.parent / "offline_facts_heldout.jsonl").read_text(encoding="utf-8").splitlines())


def test_held_out_sentences():
    result = score(HELDOUT, rules_extract)
    assert result.precision() >= 0.9 and result.recall() >= 0.28, result.errors  # first run: 0.909, 0.286
    updates = score_updates(HELDOUT, rules_memory)
    assert updates.applied >= 1, updates.errors  # first run: 1 of 28
    assert updates.kept >= 28, updates.errors  # first run: 28 of 29 kept (a second relation replaced the first)
