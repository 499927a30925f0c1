"""mirix_py.compat.mem0: a search narrowed by metadata (or agent / run) returns the best matches among
the memories that pass the filter, however far down the unfiltered ranking they are."""

from __future__ import annotations

import pytest

from mirix_py.compat.mem0 import Memory
from mirix_py.engine import Mirix


@pytest.fixture
def m(tmp_path, embedder):
    mx = Mirix(tmp_path / "data", embedder=embedder)
    yield Memory(mx=mx)
    mx.close()


def test_a_filtered_search_finds_matches_ranked_below_the_unfiltered_top(m):
    for i in range(40):
        m.add(f"Carol watched the film number {i} at the cinema with friends.", user_id="carol",
              metadata={"category": "outings"}, infer=False)
    for i in range(3):
        m.add(f"Carol's favourite film is Solaris, part {i}.", user_id="carol", metadata={"category": "movies"},
              infer=False)
    query = "which film did Carol watch?"
    unfiltered = m.search(query, user_id="carol", top_k=5)["results"]
    assert all(r["metadata"]["category"] == "outings" for r in unfiltered)  # the movies rank below
    for k in (1, 2, 3, 5):
        found = m.search(query, filters={"user_id": "carol", "category": "movies"}, top_k=k)["results"]
        assert len(found) == min(k, 3)
        assert all("Solaris" in r["memory"] and r["metadata"] == {"category": "movies"} for r in found)
        assert [r["score"] for r in found] == sorted((r["score"] for r in found), reverse=True)
    with_operator = m.search(query, filters={"user_id": "carol", "category": {"in": ["movies"]}}, limit=2)
    assert len(with_operator["results"]) == 2
    m.add("Carol saw a film about Porto.", user_id="carol", infer=False)  # no metadata: "ne" passes it
    others = m.search(query, filters={"user_id": "carol", "category": {"ne": "outings"}}, top_k=10)["results"]
    assert {r["memory"] for r in others} == {"Carol saw a film about Porto."} | {
        f"Carol's favourite film is Solaris, part {i}." for i in range(3)}


def test_a_filtered_search_by_run_finds_the_runs_memories_among_many(m):
    for i in range(30):
        m.add(f"Dan asked about the train to Porto, question {i}.", user_id="dan", run_id="old", infer=False)
    m.add("Dan asked about the train to Lisbon.", user_id="dan", run_id="new", infer=False)
    found = m.search("train to Porto", filters={"user_id": "dan", "run_id": "new"}, top_k=1)["results"]
    assert [r["memory"] for r in found] == ["Dan asked about the train to Lisbon."]
    assert m.search("train to Porto", filters={"run_id": "new"}, top_k=3)["results"][0]["run_id"] == "new"
