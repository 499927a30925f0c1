"""Core lines carry the day they were said, and a reader sees them newest first: a change the rules
cannot read ("moved to Berlin" after "lives in Paris") stays visible as the newer line."""

from __future__ import annotations

from datetime import datetime, timezone

from mirix_py.integrations.context import retrieve_context
from mirix_py.records import CoreMemory

MAY = datetime(2024, 5, 2, 9, 0, tzinfo=timezone.utc)
JUNE = datetime(2024, 6, 9, 9, 0, tzinfo=timezone.utc)


def test_dated_lines_are_newest_first_and_undated_lines_last():
    block = CoreMemory(user_id="ada", label="human", value="kept from before\nlives in Paris\nmoved to Berlin",
                       said={"lives in Paris": MAY, "moved to Berlin": JUNE})
    assert block.dated_lines() == ["moved to Berlin (said 9 June 2024)", "lives in Paris (said 2 May 2024)",
                                   "kept from before"]


def test_the_offline_rules_date_each_line_by_its_message(mx, user_id):
    mx.add([{"role": "user", "content": "I work as a nurse."}], user_id=user_id, occurred_at=MAY)
    mx.add([{"role": "user", "content": "I live in Lisbon."}], user_id=user_id, occurred_at=JUNE)
    block = mx.core_memory(user_id=user_id)["human"]
    assert len(block.said) == len([ln for ln in block.value.splitlines() if ln.strip()]) >= 2, block.value
    lines = block.dated_lines()
    assert "Lisbon" in lines[0] and lines[0].endswith("(said 9 June 2024)"), lines
    assert any("nurse" in ln and ln.endswith("(said 2 May 2024)") for ln in lines[1:]), lines


def test_a_line_held_already_keeps_the_day_it_was_first_said(mx, user_id):
    mx.add([{"role": "user", "content": "I work as a nurse."}], user_id=user_id, occurred_at=MAY)
    mx.add([{"role": "user", "content": "I work as a nurse."}], user_id=user_id, occurred_at=JUNE)
    block = mx.core_memory(user_id=user_id)["human"]
    assert block.said and set(block.said.values()) == {MAY}


def test_a_line_appended_through_the_api_is_dated_and_the_context_shows_it(mx, user_id):
    mx.core_append("human", "plays the cello", user_id=user_id)
    block = mx.core_memory(user_id=user_id)["human"]
    assert set(block.said) == {"plays the cello"}
    context = retrieve_context(mx, user_id, "what instrument do I play?")
    assert context.core["human"].startswith("plays the cello (said ")


def _fact(name, summary, when, score):
    from mirix_py.records import SearchHit, SemanticMemory

    memory = SemanticMemory(user_id="ada", name=name, summary=summary, occurred_at=when)
    return SearchHit(text=memory.search_text(), score=score, memory=memory, method="hybrid")


def test_facts_about_one_name_are_read_together_newest_first_and_dated():
    from mirix_py.records import EpisodicMemory, MemoryContext, SearchHit, newest_facts_first, reader_text

    old = _fact("Ada", "lives in Paris", MAY, 0.9)
    turn = SearchHit(text="Ada: the flat is lovely", score=0.8, method="hybrid",
                     memory=EpisodicMemory(user_id="ada", summary="the flat is lovely", occurred_at=JUNE))
    new = _fact("ada", "moved to Berlin", JUNE, 0.7)
    assert newest_facts_first([old, turn, new]) == [new, old, turn]
    assert reader_text(new) == "ada: moved to Berlin (said 9 June 2024)"
    assert reader_text(turn) == turn.text  # an episode shows its time already
    rendered = MemoryContext(user_id="ada", message="where does Ada live", topics=[], hits=[old, turn, new]).render()
    assert rendered.index("moved to Berlin (said 9 June 2024)") < rendered.index("lives in Paris (said 2 May 2024)")
