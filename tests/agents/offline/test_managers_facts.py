"""Offline managers and whole facts (issue 18): the predicate is kept, a change supersedes in place, a
repeat adds provenance."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mirix_py.agents.offline import managers
from mirix_py.tools.ops import InsertOp, UpdateOp
from mirix_py.records import CoreMemory, InputKind, InputRecord, Message, SemanticMemory

WHEN = datetime(2024, 2, 2, 8, 0, tzinfo=timezone.utc)


def _batch(*texts: str, name: str = "user", kind: InputKind = InputKind.messages):
    record = InputRecord(user_id="u", kind=kind, occurred_at=WHEN,
                         messages=[Message(role="user", name=name, id=f"m{i}", content=t) for i, t in enumerate(texts)])
    return managers.prepare_batch("u", [record])


def _facts(memory: SemanticMemory) -> list[str]:
    return [memory.summary, *filter(None, memory.details.split("; "))]


def test_a_relation_keeps_its_predicate_and_provenance():
    (op,) = managers.semantic_ops(_batch("My brother Tom is a pilot."), lambda name: None)
    assert isinstance(op, InsertOp) and op.memory.name == "Tom"
    assert _facts(op.memory) == ["Tom is user's brother", "Tom is a pilot"]
    assert "m0" in op.memory.source_ids


def test_a_name_with_a_dot_and_a_place_with_a_comma_are_kept_whole():
    ops = managers.semantic_ops(_batch("My boss Mr. Tanaka lives in Osaka.", "My friend Jo lives in Cork, Ireland."),
                                lambda name: None)
    assert {op.memory.name: _facts(op.memory) for op in ops} == {
        "Mr. Tanaka": ["Mr. Tanaka is user's boss", "Mr. Tanaka lives in Osaka"],
        "Jo": ["Jo is user's friend", "Jo lives in Cork, Ireland"],
    }


def test_a_new_job_supersedes_the_old_one_in_place():
    tom = SemanticMemory(id="sem_tom", user_id="u", name="Tom", summary="Tom is user's brother",
                         details="Tom is a pilot")
    batch = _batch("Tom is no longer a pilot; he is a flight instructor now.")
    (op,) = managers.semantic_ops(batch, lambda name: tom if name == "Tom" else None)
    assert isinstance(op, UpdateOp) and op.memory_id == "sem_tom"
    assert op.fields == {"summary": "Tom is user's brother", "details": "Tom is a flight instructor"}


def test_a_repeated_fact_adds_provenance_only():
    tom = SemanticMemory(id="sem_tom", user_id="u", name="Tom", summary="Tom is user's brother",
                         details="Tom is a pilot")
    (op,) = managers.semantic_ops(_batch("My brother Tom is a pilot."), lambda name: tom)
    assert isinstance(op, UpdateOp) and op.fields == {} and "m0" in op.add_source_ids


def test_core_line_is_replaced_not_appended():
    block = CoreMemory(id="core_1", user_id="u", label="human",
                       value="name: Ada\nprefers dark roast coffee\nlikes hiking")
    (op,) = managers.core_ops(_batch("I switched to green tea."), lambda label: block)
    assert op.fields["value"] == "name: Ada\nlikes hiking\nprefers green tea"


def test_core_lines_of_each_speaker_change_apart():
    block = CoreMemory(id="core_1", user_id="u", label="human", value="Ada: lives in Boston\nBo: lives in Boston")
    (op,) = managers.core_ops(_batch("I moved to Denver last year.", name="Ada"), lambda label: block)
    assert op.fields["value"] == "Bo: lives in Boston\nAda: lives in Denver"


def test_no_longer_removes_the_line_and_keeps_the_rest():
    block = CoreMemory(id="core_1", user_id="u", label="human", value="likes jazz\nlikes hiking\nnotes from the API")
    (op,) = managers.core_ops(_batch("I no longer like jazz."), lambda label: block)
    assert op.fields["value"] == "likes hiking\nnotes from the API"


def test_a_plan_or_a_question_changes_nothing():
    block = CoreMemory(id="core_1", user_id="u", label="human", value="lives in Boston")
    assert managers.core_ops(_batch("I might move to Denver.", "Do I still live in Boston?"), lambda label: block) == []


def test_screen_text_is_not_the_user_speaking():
    batch = _batch("I switched to green tea.", kind=InputKind.screenshot)
    assert managers.core_ops(batch, lambda label: None) == []


# ---------------------------------------------------------------- repeats

def test_the_same_message_twice_in_a_batch_is_one_episode_with_both_sources():
    (op,) = managers.episodic_ops(_batch("We adopted a cat called Miso.", "We adopted a cat called Miso!"))
    assert isinstance(op, InsertOp) and {"m0", "m1"} <= set(op.memory.source_ids)


def test_a_stored_episode_within_the_window_takes_the_repeat_as_provenance():
    from datetime import timedelta

    from mirix_py.records import EpisodicMemory

    stored = EpisodicMemory(id="epi_1", user_id="u", summary="We adopted a cat called Miso.", actor="user",
                            occurred_at=WHEN - timedelta(hours=2), source_ids=["old"])
    (op,) = managers.episodic_ops(_batch("we adopted a cat called miso"), [stored])
    assert isinstance(op, UpdateOp) and op.memory_id == "epi_1" and op.fields == {} and "m0" in op.add_source_ids
    long_ago = stored.model_copy(update={"occurred_at": WHEN - timedelta(days=3)})
    (op,) = managers.episodic_ops(_batch("We adopted a cat called Miso."), [long_ago])
    assert isinstance(op, InsertOp)  # outside the window: told again, a new event


def test_near_duplicates_are_repeats_and_short_variants_are_not():
    assert managers.same_content("The quarterly report is due on Friday at noon, please send it to Dana.",
                                 "The quarterly report is due on Friday at noon please send it to Dana!!")
    assert not managers.same_content("Thanks, see you Monday!", "Thanks, see you Tuesday!")
    assert not managers.same_content("Tom is a pilot.", "Tom is not a pilot.")
    assert managers.same_content("The quarterly report is due on Friday at noon, please send it to Dana.",
                                 "The quarterly repert is due on Friday at noon, please send it to Dana.")


@pytest.mark.parametrize("first, second", [
    ("Alice owes Bob 20 dollars for the concert tickets.", "Bob owes Alice 20 dollars for the concert tickets."),
    ("I will go to the party on Saturday with Anna and her brother.",
     "I will not go to the party on Saturday with Anna and her brother."),
    ("The flight to Oslo leaves from gate 12 at 7:30 tomorrow morning.",
     "The flight to Oslo leaves from gate 12 at 7:40 tomorrow morning."),
    ("My sister Anna is coming to stay with us for the whole summer.",
     "My sister Anne is coming to stay with us for the whole summer."),
])
def test_a_long_statement_that_says_otherwise_is_not_a_repeat(first, second):
    """Nine words in ten shared, and still another statement: swapped names, an added "not", another
    time, another name. Each is kept as its own memory, not taken for the first one said again."""
    assert not managers.same_content(first, second)


def test_another_speaker_saying_the_same_is_not_a_repeat():
    from mirix_py.records import EpisodicMemory

    stored = EpisodicMemory(id="epi_1", user_id="u", summary="Good morning!", actor="Bo", occurred_at=WHEN)
    (op,) = managers.episodic_ops(_batch("Good morning!", name="Ada"), [stored])
    assert isinstance(op, InsertOp)


def test_new_core_lines_keep_the_order_they_were_said_in():
    record = InputRecord(user_id="u", kind=InputKind.messages, occurred_at=WHEN, messages=[
        Message(role="user", name="Ada", id="m0", content="I love chess."),
        Message(role="user", name="Bo", id="m1", content="I love tennis."),
        Message(role="user", name="Ada", id="m2", content="I love jazz."),
    ])
    (op,) = managers.core_ops(managers.prepare_batch("u", [record]), lambda label: None)
    assert op.memory.value == "Ada: loves chess\nBo: loves tennis\nAda: loves jazz"


def _tom(summary: str = "Tom is user's brother", details: str = "Tom is a pilot") -> SemanticMemory:
    return SemanticMemory(user_id="u", name="Tom", summary=summary, details=details, source="user", occurred_at=WHEN)


def test_the_relations_held_are_read_from_semantic_memory():
    assert managers.relations_held([_tom()]) == [("user", "Tom", "brother")]
    assert managers.relations_held([_tom(summary="Tom is Mel's brother")]) == [("Mel", "Tom", "brother")]
    assert managers.relations_held([_tom(summary="Tom is user's ex-husband")]) == []  # an ended relation names nobody
    assert managers.relations_held([_tom(summary="Tom is a pilot", details="")]) == []


def test_a_batch_asks_memory_only_for_the_relation_words_it_uses_without_a_name():
    asked: list[list[str]] = []

    def find(words):
        asked.append(list(words))
        return [_tom()]

    record = InputRecord(user_id="u", kind=InputKind.messages, occurred_at=WHEN,
                         messages=[Message(role="user", id="m0", content="My brother is a flight instructor now.")])
    batch = managers.prepare_batch("u", [record], find_people=find)
    assert asked == [["brother"]]
    (op,) = managers.semantic_ops(batch, lambda name: _tom() if name == "Tom" else None)
    assert isinstance(op, UpdateOp) and "flight instructor" in op.fields["details"] + op.fields["summary"]

    named = InputRecord(user_id="u", kind=InputKind.messages, occurred_at=WHEN,
                        messages=[Message(role="user", id="m1", content="My brother Tom is a pilot.")])
    managers.prepare_batch("u", [named], find_people=find)
    assert len(asked) == 1  # "my brother Tom" names him: nothing to ask
