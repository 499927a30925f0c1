"""What the chat agent's prompt is handed (`chat.said_first`): a model's restatement of turns stays out
when the turns it cites are there, or when it shares no more than a name with the question; a memory of
turns all shown stays out for them; a long history turn is cut (`chat.recent_turns`)."""

from __future__ import annotations

from mirix_py.agents.chat import said_first
from mirix_py.records import EpisodicMemory, SearchHit, SemanticMemory


def _hit(memory, score):
    return SearchHit(memory=memory, text=memory.search_text(), score=score, method="hybrid")


def _turn(memory_id, text, message_id, input_id="in_1"):
    return _hit(EpisodicMemory(id=memory_id, user_id="u", summary=text, actor="Mel",
                               source_ids=[input_id, message_id]), 0.5)


def _fact(memory_id, text, cited, input_id="in_1"):
    return _hit(SemanticMemory(id=memory_id, user_id="u", name="Mel", summary=text,
                               source_ids=[*cited, input_id]), 0.05)


def _ids(hits):
    return [h.memory.id for h in hits]


QUESTION = "What does Mel say running has been great for?"


def test_a_restatement_of_turns_in_the_prompt_is_left_out():
    turn = _turn("epi_1", "Mel: running has been great for my mental health", "D7:9")
    fact = _fact("sem_1", "Mel is a running guide for books", ["D7:9", "D7:10", "D7:11"])
    assert _ids(said_first(QUESTION, [turn, fact])) == ["epi_1"]
    # the turn cited by its memory's id counts as well
    by_id = _fact("sem_2", "Mel is a running guide for books", ["epi_1", "epi_9"])
    assert _ids(said_first(QUESTION, [turn, by_id])) == ["epi_1"]


def test_a_restatement_of_turns_elsewhere_stays_when_it_shares_a_word_besides_the_names():
    turn = _turn("epi_1", "Mel: running has been great for my mental health", "D7:9")
    fact = _fact("sem_1", "Mel ran a charity race, running for mental health", ["D2:1", "D2:2"], "in_2")
    name_only = _fact("sem_2", "Mel is a loving parent", ["D3:1", "D3:2"], "in_3")
    assert _ids(said_first(QUESTION, [turn, fact, name_only])) == ["epi_1", "sem_1"]


def test_turns_and_memories_of_turns_not_shown_are_never_left_out():
    turn = _turn("epi_1", "Tom: I fixed the bike", "D1:1")
    unrelated = _turn("epi_2", "Ada: the weather is fine", "D1:2")
    single = _hit(SemanticMemory(id="sem_1", user_id="u", name="Ada", summary="Ada likes rain",
                                 source_ids=["in_1", "D1:3"]), 0.1)
    uncited = _hit(SemanticMemory(id="sem_2", user_id="u", name="Ada", summary="Ada lives in Porto"), 0.1)
    assert _ids(said_first(QUESTION, [turn, unrelated, single, uncited])) == ["epi_1", "epi_2", "sem_1", "sem_2"]


def test_a_memory_of_one_turn_shown_is_left_out_for_the_turn():
    """A fact or summary drawn from one turn says nothing the turn does not, in the speaker's words."""
    turn = _turn("epi_1", "Nate: Speaking of which, here they go again!", "D4:7")
    fact = _fact("sem_1", "Nate: Speaking of which, here they go again!", ["D4:7"])
    summary = _hit(EpisodicMemory(id="epi_2", user_id="u", summary="Nate watched his turtles again",
                                  event_type="summary", actor="Nate", source_ids=["D4:7", "in_1"]), 0.05)
    assert _ids(said_first(QUESTION, [turn, fact, summary])) == ["epi_1"]


def test_a_turn_cut_short_does_not_stand_for_what_cites_it():
    """A long message's episode keeps its start; the memory holding the rest stays beside it."""
    cut = _hit(EpisodicMemory(id="epi_1", user_id="u", summary="Mel: the recipe starts with…", actor="Mel",
                              details="full text kept as a resource", source_ids=["in_1", "D2:1"]), 0.5)
    rest = _fact("sem_1", "Mel: the recipe starts with flour, then eggs", ["D2:1"])
    assert _ids(said_first(QUESTION, [cut, rest])) == ["epi_1", "sem_1"]


def test_the_callers_input_tags_are_no_turn():
    """Every memory of an input cites the caller's id of it: sharing that tag is not sharing a turn."""
    turn = _turn("epi_1", "Mel: running has been great for my mental health", "D7:9")
    turn.memory.source_ids.append("chat-42")
    fact = _fact("sem_1", "Mel ran a charity race, running for mental health", ["D2:1", "D2:2", "chat-42"], "in_2")
    assert _ids(said_first(QUESTION, [turn, fact], tags={"chat-42"})) == ["epi_1", "sem_1"]


class _Found:
    """A searcher that finds the same hits for any query."""

    def __init__(self, hits):
        self.hits = hits

    def search(self, *args, **kwargs):
        return list(self.hits)


def test_the_targeted_search_leaves_out_what_restates_turns_the_prompt_holds(tmp_path):
    from mirix_py.agents.chat import ChatFlow
    from mirix_py.engine import Mirix

    mx = Mirix(tmp_path / "d", embedder=None)
    try:
        shown = _turn("epi_1", "Mel: running has been great for my mental health", "D7:9")
        fact = _fact("sem_1", "Mel is a running guide for books", ["D7:9", "D7:10", "D7:11"])
        other = _fact("sem_2", "Mel ran a charity race, running for mental health", ["D2:1", "D2:2"], "in_2")
        searched: list[str] = []
        search = ChatFlow(mx.store, _Found([fact, other]), None, None)._search_fn("u", searched, [shown])
        found = search(memory_type="semantic", query="Mel running")
        assert "sem_2" in found and "sem_1" not in found
        assert searched == ["sem_2"]
    finally:
        mx.close()


def test_a_long_history_turn_is_cut_in_the_prompt():
    """A pasted page in the history must not crowd the memories out of a small model's window: each
    turn the prompt shows keeps its first HISTORY_TURN_CHARS characters; only the last turns are shown."""
    from mirix_py.agents.chat import HISTORY_TURN_CHARS, recent_turns

    history = [{"role": "user", "content": "old question"}, {"role": "assistant", "content": "old answer"},
               {"role": "user", "content": "pasted " * 5000}, {"content": "short one"}]
    shown = recent_turns(history, 3).splitlines()
    assert shown[0] == "assistant: old answer" and shown[2] == "user: short one"
    assert shown[1].startswith("user: pasted pasted") and shown[1].endswith(" …")
    assert len(shown[1]) <= len("user: ") + HISTORY_TURN_CHARS + 2
