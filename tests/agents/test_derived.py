"""Deleting or rewriting a turn takes back what the offline rules restated from it alone: its core
lines and facts (`agents.derived`), on SQLite and PostgreSQL."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.integrations.context import retrieve_context
from mirix_py.records import EpisodicMemory, Operation
from mirix_py.tools.ops import InsertOp

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def mx(tmp_path, embedder, backend):
    engine = Mirix(tmp_path / "data", embedder=embedder, database_url=backend)
    yield engine
    engine.close()


def say(mx: Mirix, user_id: str, text: str, day: int, **message):
    return mx.add([{"role": "user", "name": "Kim", "content": text, **message}], user_id=user_id,
                  occurred_at=T0 + timedelta(days=day))


def episode_of(result) -> str:
    return next(c.memory_id for c in result.changes if c.memory_type.value == "episodic")


def human(mx: Mirix, user_id: str) -> str:
    return mx.core_memory(user_id=user_id)["human"].value


def served(mx: Mirix, user_id: str, word: str, question: str) -> list[str]:
    """Every read path that still gives `word`: core, search, chat, the context block, export."""
    paths = []
    if word in human(mx, user_id):
        paths.append("core")
    for method in ("hybrid", "bm25", "string"):
        for query in (word, question):
            if any(word in h.text for h in mx.search(query, user_id=user_id, method=method)):
                paths.append(f"search {method} {query!r}")
    if word in mx.chat(question, user_id=user_id, remember=False).answer:
        paths.append("chat")
    if word in retrieve_context(mx, user_id, question).prompt:
        paths.append("context")
    exported = io.StringIO()
    mx.export(exported, user_id=user_id)
    if word in exported.getvalue():
        paths.append("export")
    return paths


def test_deleting_the_turn_takes_back_its_core_line_everywhere(mx):
    say(mx, "kim", "My favourite food is ramen.", 1)
    lisbon = say(mx, "kim", "I live in Lisbon, in Alfama.", 2)
    assert "Kim: lives in Lisbon" in human(mx, "kim")

    changes = mx.delete(episode_of(lisbon), user_id="kim", actor="kim-app")

    assert served(mx, "kim", "Lisbon", "where do I live?") == []
    assert human(mx, "kim") == "Kim: favorite food: ramen"  # the other turn's line stays
    assert [(c.operation, c.memory_type.value, c.actor) for c in changes] == [
        (Operation.delete, "episodic", "kim-app"), (Operation.update, "core", "kim-app")]


def test_deleting_the_turn_deletes_the_fact_made_from_it(mx):
    tobias = say(mx, "kim", "My brother Tobias is a carpenter.", 1)
    fact = next(c.memory_id for c in tobias.changes if c.memory_type.value == "semantic")

    changes = mx.delete(episode_of(tobias), user_id="kim")

    assert mx.list(user_id="kim", memory_types=["semantic"]) == []
    assert served(mx, "kim", "carpenter", "what does Tobias do?") == []
    assert (Operation.delete, fact) in [(c.operation, c.memory_id) for c in changes]


def test_rewriting_the_turn_restates_it_from_its_new_words(mx):
    say(mx, "kim", "My favourite food is ramen.", 1)
    marseille = say(mx, "kim", "I live in Marseille.", 2)
    assert "Marseille" in human(mx, "kim")

    mx.update(episode_of(marseille), {"summary": "I live in Toulouse."}, user_id="kim", actor="kim-app")

    assert human(mx, "kim") == "Kim: favorite food: ramen\nKim: lives in Toulouse"
    block = mx.core_memory(user_id="kim")["human"]
    assert block.said["Kim: lives in Toulouse"] == block.said["Kim: favorite food: ramen"] + timedelta(days=1)
    assert block.line_sources["Kim: lives in Toulouse"] == mx.get(episode_of(marseille), user_id="kim").source_ids
    assert [e.actor for e in mx.history(block.id, user_id="kim")][-2:] == ["kim-app", "kim-app"]


def test_rewriting_a_turn_citing_another_users_input_reads_nothing_of_that_input(mx):
    """A turn an older version let `update` point at another user's input: the rewrite reads the turn
    from its own user's inputs only, so no line names that input's speaker or carries its caller's id."""
    theirs = mx.add([{"role": "user", "name": "Dr. Mallory Quinn", "content": "Ines relapsed in March."}],
                    user_id="alice", source_id="ward-7/patient-ines", occurred_at=T0).input_ids[0]
    (turn,) = mx.store.apply([InsertOp(memory=EpisodicMemory(
        user_id="kim", summary="I like tea.", actor="Kim", occurred_at=T0, source_ids=[theirs]))],
        user_id="kim", actor="an older version")

    mx.update(turn.memory_id, {"summary": "I live in Toulouse."}, user_id="kim")

    written = [m.model_dump_json() for m in mx.list(user_id="kim", limit=100)]
    assert written and not [m for m in written if "Mallory" in m or "ward-7" in m]
    assert human(mx, "kim") == ""  # nothing restated: the turn's input is not Kim's
    assert all(e.input_id is None for m in mx.list(user_id="kim", limit=100) for e in mx.history(m.id, user_id="kim"))


def test_a_corrected_turn_keeps_its_line_and_fact_in_the_corrected_words(mx):
    """A typo fixed in the turn: what it restated is taken back and made again from the fixed words, so
    memory keeps where Kim lives and what Tobias does."""
    said = say(mx, "kim", "I live in Lisbn, in Alfama. My brother Tobias is a carpentr.", 1)
    mx.update(episode_of(said), {"summary": "I live in Lisbon, in Alfama. My brother Tobias is a carpenter."},
              user_id="kim")

    assert human(mx, "kim") == "Kim: lives in Lisbon"
    facts = [m.search_text() for m in mx.list(user_id="kim", memory_types=["semantic"])]
    assert len(facts) == 1 and "carpenter" in facts[0] and "carpentr" not in facts[0]


def test_a_rewritten_reply_is_read_as_the_assistant_said_it(mx):
    """The rules make no line of the user's from the assistant's words, rewritten or not."""
    mx.add([{"role": "user", "name": "Kim", "content": "Hello!", "id": "u1"},
            {"role": "assistant", "content": "Hello Kim.", "id": "a1"}], user_id="kim", occurred_at=T0)
    reply = next(m for m in mx.list(user_id="kim", memory_types=["episodic"]) if m.actor == "assistant")

    mx.update(reply.id, {"summary": "Hello Kim. I live in Porto."}, user_id="kim")

    assert human(mx, "kim") == ""


def test_only_an_update_of_what_the_turn_says_takes_back(mx):
    marseille = say(mx, "kim", "I live in Marseille.", 1)

    mx.update(episode_of(marseille), {"expires_at": datetime.now(timezone.utc) + timedelta(days=30)}, user_id="kim")
    assert human(mx, "kim") == "Kim: lives in Marseille"

    mx.update(episode_of(marseille), {"details": "We moved in May."}, user_id="kim")  # a note beside the words
    assert human(mx, "kim") == "Kim: lives in Marseille"

    mx.update(episode_of(marseille), {"summary": "I moved away."}, user_id="kim")
    assert human(mx, "kim") == ""


def test_a_line_said_in_two_turns_stays_until_both_are_deleted(mx):
    first = say(mx, "kim", "I live in Lisbon.", 1)
    second = say(mx, "kim", "I live in Lisbon, in Alfama.", 2)

    mx.delete(episode_of(first), user_id="kim")
    assert human(mx, "kim") == "Kim: lives in Lisbon"

    mx.delete(episode_of(second), user_id="kim")
    assert human(mx, "kim") == ""


def test_deleting_one_message_of_an_input_takes_back_only_what_it_said(mx):
    added = mx.add([{"role": "user", "name": "Kim", "content": "I live in Lisbon.", "id": "msg-1"},
                    {"role": "user", "name": "Kim", "content": "My brother Tobias is a carpenter.", "id": "msg-2"}],
                   user_id="kim", occurred_at=T0)
    episodes = {m.summary: m.id for m in mx.list(user_id="kim", memory_types=["episodic"])}

    mx.delete(episodes["I live in Lisbon."], user_id="kim")

    assert human(mx, "kim") == ""
    assert [m.name for m in mx.list(user_id="kim", memory_types=["semantic"])] == ["Tobias"]
    assert added.input_ids


def test_a_message_without_its_own_id_among_others_takes_back_its_own_core_lines(mx):
    """Two messages of one input with no ids of their own: a core line names its message by its input
    and the time it was said (`said_keys`), so deleting one turn takes back its line; the other turn's
    fact stays."""
    mx.add([{"role": "user", "name": "Kim", "content": "I live in Lisbon."},
            {"role": "user", "name": "Kim", "content": "My brother Tobias is a carpenter."}],
           user_id="kim", occurred_at=T0)
    episodes = {m.summary: m.id for m in mx.list(user_id="kim", memory_types=["episodic"])}

    changes = mx.delete(episodes["I live in Lisbon."], user_id="kim")

    assert [c.memory_type.value for c in changes] == ["episodic", "core"]
    assert human(mx, "kim") == ""
    assert [m.name for m in mx.list(user_id="kim", memory_types=["semantic"])] == ["Tobias"]


def test_a_line_written_without_sources_is_left_alone(mx):
    mx.core_append("human", "Kim: lives in Lisbon", user_id="kim")  # the API knows no message
    turn = say(mx, "kim", "I live in Lisbon. My favourite food is ramen.", 1)  # the first line is held already
    assert human(mx, "kim") == "Kim: lives in Lisbon\nKim: favorite food: ramen"

    mx.delete(episode_of(turn), user_id="kim")

    assert human(mx, "kim") == "Kim: lives in Lisbon"


def test_history_of_the_block_shows_the_line_taken_back_by_whom(mx):
    say(mx, "kim", "My favourite food is ramen.", 1)
    lisbon = say(mx, "kim", "I live in Lisbon, in Alfama.", 2)
    block = mx.core_memory(user_id="kim")["human"]

    mx.delete(episode_of(lisbon), user_id="kim", actor="kim-app")

    last = mx.history(block.id, user_id="kim")[-1]
    assert (last.operation, last.actor) == (Operation.update, "kim-app")
    assert "Lisbon" in last.before["value"] and "Lisbon" not in last.after["value"]


def test_a_fact_said_again_in_an_input_without_message_ids_stays(mx):
    """The fact cites [input A, m-1, input B]: input B said it too (it has no message ids), so deleting A's turn
    leaves the fact to B's."""
    first = say(mx, "kim", "My brother Tobias is a carpenter.", 1, id="m-1")
    say(mx, "kim", "My brother Tobias is a carpenter.", 4)
    facts = [m.id for m in mx.list(user_id="kim", memory_types=["semantic"])]
    assert facts
    mx.delete(episode_of(first), user_id="kim")
    assert [m.id for m in mx.list(user_id="kim", memory_types=["semantic"])] == facts


def test_a_message_sent_again_in_another_input_keeps_its_line(mx):
    """A chat app sends its window again: the same message id in a later input; deleting the first episode
    leaves the line the other still holds."""
    first = mx.add([{"role": "user", "name": "Kim", "content": "I live in Lisbon.", "id": "m1"}], user_id="kim",
                   occurred_at=T0 + timedelta(days=1))
    mx.add([{"role": "user", "name": "Kim", "content": "I live in Lisbon.", "id": "m1"},
            {"role": "user", "name": "Kim", "content": "I had a long meeting today.", "id": "m2"}], user_id="kim",
           occurred_at=T0 + timedelta(days=3))
    assert "Lisbon" in human(mx, "kim")
    mx.delete(episode_of(first), user_id="kim")
    assert "Lisbon" in human(mx, "kim")


def test_a_summary_changed_only_in_spacing_takes_nothing_back(mx):
    marseille = say(mx, "kim", "I live in Marseille.", 1)
    mx.update(episode_of(marseille), {"summary": "I live in Marseille. "}, user_id="kim")
    assert "Marseille" in human(mx, "kim")


def test_deleting_the_turn_that_changed_a_fact_puts_the_fact_back(mx):
    """The fact said on day 1 and changed on day 5 ("… a plumber now"): deleting the day-5 turn puts it back
    as the day-1 turn left it, so the deleted words are not served by it."""
    say(mx, "kim", "My brother Tobias is a carpenter.", 1)
    plumber = say(mx, "kim", "My brother Tobias is a plumber now.", 5)
    assert any("plumber" in m.search_text() for m in mx.list(user_id="kim", memory_types=["semantic"]))
    mx.delete(episode_of(plumber), user_id="kim")
    facts = mx.list(user_id="kim", memory_types=["semantic"])
    assert facts and not any("plumber" in m.search_text() for m in facts)
    assert any("carpenter" in m.search_text() for m in facts)


@pytest.mark.parametrize("line_sources", [{"not a line": ["m1"]}, {"Kim: lives in Lisbon": "m1"}, ["m1"]])
def test_line_sources_naming_what_the_block_does_not_hold_are_refused_and_nothing_changes(mx, line_sources):
    say(mx, "kim", "I live in Lisbon, in Alfama.", 2)
    block = mx.core_memory(user_id="kim")["human"]
    assert "Kim: lives in Lisbon" in block.value.splitlines()
    with pytest.raises(InvalidInput, match="line_sources"):
        mx.update(block.id, {"line_sources": line_sources}, user_id="kim")
    after = mx.get(block.id, user_id="kim")
    assert (after.line_sources, after.updated_at) == (block.line_sources, block.updated_at)


def _made(result, memory_type: str) -> str:
    return next(c.memory_id for c in result.changes if c.memory_type.value == memory_type)


@pytest.mark.parametrize("text, memory_type", [
    ("My bank PIN is 4921, keep it safe.", "knowledge_vault"),
    ("To reset the router: first unplug it, then wait 30 seconds, then plug it back in and press the reset "
     "button for 10 seconds.", "procedural"),
    ("Here is my essay draft: " + "The history of the Lisbon tram network is long and winding. " * 40, "resource"),
])
def test_deleting_the_turn_deletes_the_vault_entry_procedure_or_resource_made_from_it(mx, text, memory_type):
    said = say(mx, "kim", text, 1)
    made = _made(said, memory_type)

    changes = mx.delete(episode_of(said), user_id="kim")

    assert (Operation.delete, made) in [(c.operation, c.memory_id) for c in changes]
    assert mx.list(user_id="kim", memory_types=[memory_type]) == []
    with pytest.raises(MemoryNotFound):
        mx.get(made, user_id="kim", reveal=True)


def test_a_vault_entry_another_turn_points_at_stays_with_its_value(mx):
    first = say(mx, "kim", "My bank PIN is 4921, keep it safe.", 1)
    again = say(mx, "kim", "Reminder: my bank PIN is 4921.", 2)
    entry = _made(first, "knowledge_vault")
    assert f"[vault:{entry}]" in mx.get(episode_of(again), user_id="kim").summary

    mx.delete(episode_of(first), user_id="kim")

    assert mx.get(entry, user_id="kim", reveal=True).secret_value == "4921"


def test_rewriting_the_turn_keeps_its_vault_entry_procedure_and_resource(mx):
    """A rewrite takes back core lines and facts only: the vault entry holds the value the new words still
    point at, and a procedure's steps or a document are more than the turn's words."""
    pin = say(mx, "kim", "My bank PIN is 4921, keep it safe.", 1)
    router = say(mx, "kim", "To reset the router: first unplug it, then wait 30 seconds, then plug it back in.", 2)
    entry, steps = _made(pin, "knowledge_vault"), _made(router, "procedural")
    for result in (pin, router):
        episode = mx.get(episode_of(result), user_id="kim")
        mx.update(episode.id, {"summary": episode.summary.replace("it", "it, please", 1)}, user_id="kim")

    assert mx.get(entry, user_id="kim", reveal=True).secret_value == "4921"
    assert mx.get(steps, user_id="kim").memory_type.value == "procedural"


def test_deleting_the_turn_that_replaced_a_line_puts_the_line_back(mx):
    """"lives in Berlin" had replaced "lives in Paris": deleting the Berlin turn puts Paris back as said
    on day 1, with its time and its turn."""
    say(mx, "kim", "I like tea.", 0)
    paris = say(mx, "kim", "I live in Paris.", 1)
    berlin = say(mx, "kim", "I live in Berlin now.", 5)
    assert human(mx, "kim") == "Kim: likes tea\nKim: lives in Berlin"

    mx.delete(episode_of(berlin), user_id="kim")

    block = mx.core_memory(user_id="kim")["human"]
    assert block.value == "Kim: likes tea\nKim: lives in Paris"
    assert block.said["Kim: lives in Paris"] == T0 + timedelta(days=1)
    assert block.line_sources["Kim: lives in Paris"] == mx.get(episode_of(paris), user_id="kim").source_ids


def test_a_replaced_line_stays_out_when_its_own_turn_is_gone_or_a_later_turn_replaced_it(mx):
    paris = say(mx, "kim", "I live in Paris.", 1)
    berlin = say(mx, "kim", "I live in Berlin now.", 5)
    mx.delete(episode_of(paris), user_id="kim")
    mx.delete(episode_of(berlin), user_id="kim")
    assert human(mx, "kim") == ""  # Paris's turn went first: nothing says it any more

    say(mx, "kim", "I live in Oslo.", 6)
    bergen = say(mx, "kim", "I live in Bergen now.", 7)
    say(mx, "kim", "I live in Rome now.", 8)
    mx.delete(episode_of(bergen), user_id="kim")
    assert human(mx, "kim") == "Kim: lives in Rome"  # Rome replaced Bergen since: Oslo stays replaced


def test_rewriting_the_turn_that_replaced_a_line_puts_the_line_back(mx):
    say(mx, "kim", "I live in Paris.", 1)
    berlin = say(mx, "kim", "I live in Berlin now.", 5)

    mx.update(episode_of(berlin), {"summary": "I visited Berlin."}, user_id="kim")

    assert human(mx, "kim") == "Kim: lives in Paris"


def test_a_turn_imported_without_its_input_text_is_restated_from_its_new_words(mx):
    """An export carries no input text: the rewritten turn is read as said by its speaker."""
    say(mx, "kim", "I live in Lisbn.", 1)
    exported = io.StringIO()
    mx.export(exported, user_id="kim")
    mx.delete_user("kim")
    mx.import_(io.StringIO(exported.getvalue()))
    episode = mx.list(user_id="kim", memory_types=["episodic"])[0]

    mx.update(episode.id, {"summary": "I live in Lisbon."}, user_id="kim")

    assert human(mx, "kim") == "Kim: lives in Lisbon"


def test_a_typo_fixed_in_a_turn_sent_again_keeps_its_line(mx):
    """A chat window sent again cites the turn's message in two inputs: the fix reads the first."""
    first = {"role": "user", "name": "Kim", "content": "I live in Lisbn.", "id": "m1"}
    reply = {"role": "assistant", "content": "Lovely.", "id": "m2"}
    mx.add([first, reply], user_id="kim", occurred_at=T0)
    mx.add([first, reply, {"role": "user", "name": "Kim", "content": "Bye!", "id": "m3"}], user_id="kim",
           occurred_at=T0 + timedelta(minutes=5))
    turn = next(m for m in mx.list(user_id="kim", memory_types=["episodic"]) if "Lisbn" in m.summary)

    mx.update(turn.id, {"summary": "I live in Lisbon."}, user_id="kim")

    assert human(mx, "kim") == "Kim: lives in Lisbon"


def test_the_line_a_rewrite_replaced_comes_back_when_the_rewritten_turn_goes(mx):
    say(mx, "kim", "I live in Lisbon.", 0)
    tea = say(mx, "kim", "I like tea.", 3)
    mx.update(episode_of(tea), {"summary": "I live in Porto now."}, user_id="kim")
    assert human(mx, "kim") == "Kim: lives in Porto"

    mx.delete(episode_of(tea), user_id="kim")

    assert human(mx, "kim") == "Kim: lives in Lisbon"


def test_a_replaced_line_stays_out_when_the_turn_that_said_it_was_rewritten(mx):
    paris = say(mx, "kim", "I live in Paris.", 1)
    berlin = say(mx, "kim", "I live in Berlin now.", 5)
    mx.update(episode_of(paris), {"summary": "I like coffee."}, user_id="kim")

    mx.delete(episode_of(berlin), user_id="kim")

    assert human(mx, "kim") == "Kim: likes coffee"  # no episode says Paris any more
