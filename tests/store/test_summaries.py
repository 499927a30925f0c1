"""Sources before summaries: a memory citing several things said follows the turns that match."""

from __future__ import annotations

from types import SimpleNamespace

from mirix_py.tools.ops import InsertOp
from mirix_py.records import EpisodicMemory, SemanticMemory
from mirix_py.store.restatements import RESTATEMENT_WEIGHT, weigh_down
from mirix_py.store.summaries import sums_up


def _records(**sources):
    return {memory_id: SimpleNamespace(source_ids=ids) for memory_id, ids in sources.items()}


def test_a_summary_cites_several_things_said_in_one_input():
    assert sums_up(["t1", "t2"]) and sums_up(["in_1", "t1", "t2", "t3"])
    assert not sums_up(["in_1", "t1"]) and not sums_up([]) and not sums_up(["in_1", "in_2"])
    # screens: each frame comes with its own input, and no other memory keeps a frame's text
    assert not sums_up(["in_1", "frame1.png", "in_2", "frame2.png"])


def test_the_callers_id_of_an_input_is_not_a_thing_said():
    """`add(..., source_id="conv-26/session_1")`: every memory of the input cites the tag too."""
    turn = ["in_1", "conv-26/session_1", "D1:3"]
    assert sums_up(turn) and not sums_up(turn, tags={"conv-26/session_1"})
    assert sums_up(["in_1", "conv-26/session_1", "D1:3", "D1:4"], tags={"conv-26/session_1"})
    records = _records(t=turn, s=["in_1", "conv-26/session_1", "D1:3", "D1:4"])
    out = weigh_down([("s", 0.9), ("t", 0.5)], records, tags={"conv-26/session_1"})
    assert [i for i, _ in out] == ["t", "s"] and dict(out)["t"] == 0.5


def test_turns_added_with_a_callers_id_keep_their_rank_and_their_neighbours_words(mx, user_id):
    from mirix_py.store.near import near_of_inputs

    said = [("Ana", "Did you ever find a drummer for the wedding band?"), ("Ben", "Yes! Priya said she would do it."),
            ("Ana", "That is wonderful news.")]
    result = mx.add([{"role": "user", "name": who, "content": text, "id": f"D1:{n}"} for n, (who, text) in
                     enumerate(said, 1)], user_id=user_id, source_id="conv-1/session_1")
    [input_id] = result.input_ids
    with mx.store.engine.connect() as conn:
        near = near_of_inputs(conn, user_id, [input_id])
    reply = next(h.memory for h in mx.search("Priya said she would do it", user_id=user_id, method="bm25")
                 if "Priya" in h.text and h.memory.memory_type.value == "episodic")
    assert reply.source_ids == [input_id, "conv-1/session_1", "D1:2"]
    assert "drummer" in near[reply.id]  # a turn, not a summary: its neighbours' words are written
    found = [h.memory.id for h in mx.search("drummer for the wedding band", user_id=user_id, method="bm25", limit=5)]
    assert reply.id in found  # by its neighbours' words
    assert mx.store.input_tags([input_id], user_id=user_id) == {"conv-1/session_1"}


def test_summaries_follow_the_turns_weighed_by_their_own_score():
    records = _records(s1=["t1", "t2"], a=["t1"], s2=["t3", "t4"], b=["t3"], c=["t5"])
    ranked = [("s1", 0.9), ("a", 0.8), ("s2", 0.7), ("b", 0.6), ("c", 0.1)]
    out = weigh_down(ranked, records)
    assert [i for i, _ in out] == ["a", "b", "s1", "s2", "c"]
    assert dict(out)["s2"] == 0.7 * RESTATEMENT_WEIGHT  # its own match, weighed: no other memory's score
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True)
    assert weigh_down(ranked, records) == out and ranked[2] == ("s2", 0.7)  # pure


def test_a_summary_of_a_chat_exchange_is_weighed_down_for_each_kind():
    records = _records(x=["in_1", "chat-q-a", "chat-a-a"], q=["in_2", "chat-q-b"], t=["in_3", "t1"])
    out = dict(weigh_down([("x", 0.8), ("q", 0.8), ("t", 0.1)], records))
    assert out["q"] == 0.8 * RESTATEMENT_WEIGHT and out["x"] == 0.8 * RESTATEMENT_WEIGHT ** 2 and out["t"] == 0.1


def test_summaries_alone_are_all_returned_in_their_order():
    records = _records(s1=["t1", "t2"], s2=["t3", "t4"])
    assert [i for i, _ in weigh_down([("s1", 0.5), ("s2", 0.4)], records)] == ["s1", "s2"]
    assert [i for i, _ in weigh_down([("s1", 0.5), ("s2", -0.2)], records)] == ["s1", "s2"]


def test_search_puts_the_turns_before_the_summaries(mx, user_id):
    turns = ["Sam and I paddled the kayak across the lake at dawn",
             "The kayak rental by the lake opens at six"]
    ops = [InsertOp(memory=EpisodicMemory(user_id=user_id, summary=t, actor="me", event_type="message",
                                          source_ids=[f"t{i}"])) for i, t in enumerate(turns)]
    ops += [InsertOp(memory=SemanticMemory(user_id=user_id, name=f"kayak {k}", summary="kayak lake kayak lake Sam",
                                           source_ids=["t0", "t1"])) for k in range(2)]
    mx.store.apply(ops, user_id=user_id, actor="seed")
    hits = mx.search("kayak lake Sam", user_id=user_id, limit=4, method="bm25")
    kinds = ["summary" if sums_up(h.memory.source_ids) else "turn" for h in hits]
    assert kinds == ["turn", "turn", "summary", "summary"], [h.text for h in hits]



def test_fuse_apart_ranks_the_sources_among_themselves():
    from mirix_py.store.restatements import fuse_apart
    from mirix_py.store.search import rrf_fuse

    # without summaries "b" leads (third and first against first and fifth); ten summaries at the top
    # of the second leg push both down it, and "a", first in the other leg, would pass "b"
    sources = [["a", "x", "b"], ["b", "y", "z", "w", "a"]]
    summaries = [f"s{k}" for k in range(10)]
    legs = [sources[0], [*summaries, *sources[1]]]
    order = lambda fused: [i for i, _ in fused if i in ("a", "b")]  # noqa: E731
    assert order(rrf_fuse(sources)) == ["b", "a"] and order(rrf_fuse(legs)) == ["a", "b"]
    apart = fuse_apart(rrf_fuse, legs, set(summaries))
    assert order(apart) == ["b", "a"] and dict(apart)["b"] == dict(rrf_fuse(sources))["b"]
    assert dict(apart)["s0"] == dict(rrf_fuse(legs))["s0"]  # a summary keeps its own score
    assert fuse_apart(rrf_fuse, legs, set()) == rrf_fuse(legs)  # nothing restates: fused as ever


def test_a_callers_id_changes_no_ranking(mx, user_id):
    """The same session added with and without `source_id` ranks the same for every question."""
    said = [("Ana", "Did you ever find a drummer for the wedding band?"), ("Ben", "Yes! Priya said she would do it."),
            ("Ana", "That is wonderful news. Is she still teaching violin?"), ("Ben", "Only on Thursdays now."),
            ("Ana", "My sister moved to Porto last spring."), ("Ben", "Porto is lovely, the bridges at night!")]
    messages = [{"role": "user", "name": who, "content": text, "id": f"D1:{n}"} for n, (who, text) in enumerate(said, 1)]
    when = "2023-05-08T13:56:00+00:00"  # one time for both: added a minute apart, their texts would differ by it
    mx.add(messages, user_id=user_id, occurred_at=when)
    mx.add(messages, user_id=user_id + "-tagged", source_id="conv-1/session_1", occurred_at=when)
    for question in ("who is the drummer for the wedding band", "when does Priya teach violin",
                     "where did Ana's sister move", "what did Ben say about Porto"):
        for method in ("bm25", "hybrid"):
            plain = [h.text for h in mx.search(question, user_id=user_id, method=method)]
            tagged = [h.text for h in mx.search(question, user_id=user_id + "-tagged", method=method)]
            assert tagged == plain, (question, method)
