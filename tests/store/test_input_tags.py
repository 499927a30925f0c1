"""The caller's ids of inputs, read for a user's memories from that user's own inputs only: a memory may
cite any id, and another user's input must not decide how this user's memories rank."""

from __future__ import annotations

from mirix_py.records import SemanticMemory
from mirix_py.tools.ops import InsertOp

TAG = "conv-1/session_1"


def _others_input(mx, owner: str) -> str:
    """The id of an input of `owner` added with the caller's id TAG."""
    [input_id] = mx.add("Priya will play the drums at the wedding.", user_id=owner, source_id=TAG).input_ids
    return input_id


def _citing(mx, user_id: str, summary: str, source_ids: list[str]) -> str:
    """The id of a fact of `user_id` citing these ids, written below the API (which refuses another
    user's input id)."""
    memory = SemanticMemory(user_id=user_id, name="band", summary=summary, source_ids=source_ids)
    [change] = mx.store.apply([InsertOp(memory=memory)], user_id=user_id, actor="test")
    return change.memory_id


def test_a_memory_citing_another_users_input_gets_no_tag_from_it(mx, user_id):
    from mirix_py.store.input_tags import cited_tags, cited_tags_by_user, tags_of

    other = f"{user_id}-a"
    input_id = _others_input(mx, other)
    cited = [input_id, TAG, "D1:1"]

    assert mx.store.input_tags([input_id], user_id=other) == {TAG}  # read (and kept) for its own user first
    assert mx.store.input_tags.cited([cited], user_id=user_id) == frozenset()
    assert mx.store.input_tags.cited([cited], user_id=other) == {TAG}
    with mx.store.engine.connect() as conn:
        assert tags_of(conn, [input_id], user_id=user_id) == {}
        assert tags_of(conn, [input_id], user_id=other) == {input_id: TAG}
        assert cited_tags(conn, [cited], user_id=user_id) == frozenset()
        assert cited_tags_by_user(conn, [cited]) == {other: {TAG}}


def test_the_kept_tag_of_an_input_is_not_given_to_another_user_read_first(mx, user_id):
    other = f"{user_id}-a"
    input_id = _others_input(mx, other)
    assert mx.store.input_tags([input_id], user_id=user_id) == frozenset()  # read (and kept) for another user first
    assert mx.store.input_tags([input_id], user_id=other) == {TAG}


def test_another_users_input_does_not_rank_a_users_memories(mx, user_id):
    """A fact citing two things said sums them up and follows a fact that matches less (`summaries`):
    another user's input, whose caller's id it also cites, does not make one of those two say nothing."""
    input_id = _others_input(mx, f"{user_id}-a")
    summary = _citing(mx, user_id, "Priya drums in the wedding band: Priya drums, the band drums", [input_id, TAG, "D1:1"])
    turn = _citing(mx, user_id, "Priya drums in a wedding band", ["D2:1"])

    hits = mx.search("Priya drums wedding band", user_id=user_id, method="bm25", context=0)

    assert [h.memory.id for h in hits] == [turn, summary]


def test_a_rebuild_of_the_neighbours_words_reads_each_users_own_tags(mx, user_id):
    """`near.summaries_by_user` reads the episodes of every user at once: each with their own tags."""
    from mirix_py.records import EpisodicMemory
    from mirix_py.store.near import summaries_by_user

    other = f"{user_id}-a"
    input_id = _others_input(mx, other)
    episode = EpisodicMemory(user_id=user_id, summary="Priya drums.", source_ids=[input_id, TAG, "D1:1"])
    [change] = mx.store.apply([InsertOp(memory=episode)], user_id=user_id, actor="test")

    with mx.store.engine.connect() as conn:
        found = summaries_by_user(conn)

    assert found.get(user_id) == [change.memory_id]  # two things said, none of them a tag of the user's
    assert other not in found  # the turn of the input's own user cites its tag and one message
