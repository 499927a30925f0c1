"""`delete(..., erase=True)`: the words of a deleted turn, and of what it took back, leave the store
(`store.erase`), on SQLite and PostgreSQL; on SQLite no byte of them is left in the data dir."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput, LaterChanges, MemoryNotFound
from mirix_py.records import InputStatus, Operation, SemanticMemory
from mirix_py.tools.ops import InsertOp, MergeOp

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)
WORDS = ("Quixhaven", "Zorblatt")


@pytest.fixture
def mx(tmp_path, embedder, backend):
    engine = Mirix(tmp_path / "data", embedder=embedder, database_url=backend)
    yield engine
    engine.close()


def say(mx: Mirix, text: str, day: int, user_id: str = "kim", **message):
    return mx.add([{"role": "user", "name": "Kim", "content": text, **message}], user_id=user_id,
                  occurred_at=T0 + timedelta(days=day))


def made(result, memory_type: str) -> str:
    return next(c.memory_id for c in result.changes if c.memory_type.value == memory_type)


def served(mx: Mirix, word: str, memory_ids: list[str], user_id: str = "kim",
           question: str = "Where do I live, and what is my PIN?") -> list[str]:
    """Every read path that still gives `word`: the history of these memories, list, export, each
    search method, the input log's listing, chat's answer to `question`."""
    paths = [f"history {m}" for m in memory_ids
             if word in "".join(e.model_dump_json() for e in mx.history(m, user_id=user_id))]
    if word in "".join(m.model_dump_json() for m in mx.list(user_id=user_id)):
        paths.append("list")
    exported = io.StringIO()
    mx.export(exported, user_id=user_id)
    if word in exported.getvalue():
        paths.append("export")
    for method in ("hybrid", "bm25", "embedding", "string"):
        if any(word in h.model_dump_json() for h in mx.search(word, user_id=user_id, method=method)):
            paths.append(f"search {method}")
    logged = mx.inputs.newest(user_id=user_id, statuses=list(InputStatus), limit=100)
    if word in "".join(r.model_dump_json() for r in logged):
        paths.append("inputs")
    if word in mx.chat(question, user_id=user_id, remember=False).model_dump_json():
        paths.append("chat")
    return paths


def rows_holding(mx: Mirix, word: str) -> list[str]:
    """The tables of the store with a row holding `word` in any case, read raw (FTS5's shadow tables too)."""
    found = []
    with mx.engine.connect() as conn:
        for table in inspect(conn).get_table_names():
            rows = conn.execute(text(f'SELECT * FROM "{table}"')).all()
            if word.lower() in repr(rows).lower():
                found.append(table)
    return found


def on_disk(data_dir: Path, word: str) -> list[str]:
    """The files of the data dir holding `word`'s bytes, in any case (FTS5 keeps tokens lowercased)."""
    needle = word.lower().encode()
    return sorted(str(p.relative_to(data_dir)) for p in data_dir.rglob("*")
                  if p.is_file() and needle in p.read_bytes().lower())


def test_an_erased_turn_leaves_no_word_on_any_read_path(mx):
    say(mx, "My favourite food is ramen.", 1)
    turn = say(mx, "I live in Zorblatt street, in Quixhaven. My bank PIN is 4921.", 2)
    episode, core, vault = (made(turn, t) for t in ("episodic", "core", "knowledge_vault"))
    assert all(served(mx, w, [episode, core]) and rows_holding(mx, w) for w in WORDS)

    changes = mx.delete(episode, user_id="kim", actor="kim-app", erase=True)

    assert [(c.operation, c.memory_id) for c in changes] == [
        (Operation.delete, episode), (Operation.update, core), (Operation.delete, vault)]
    for word in (*WORDS, "4921"):
        assert served(mx, word, [episode, core, vault]) == [], word
        assert rows_holding(mx, word) == [], word
    assert mx.core_memory(user_id="kim")["human"].value == "Kim: favorite food: ramen"
    gone = mx.history(episode, user_id="kim")  # who, when, which operation and input stay; the states go
    assert [(e.operation, e.actor, e.input_id, e.erased, e.before, e.after) for e in gone] == [
        (Operation.insert, "episodic_memory_manager", turn.input_ids[0], True, None, None),
        (Operation.delete, "kim-app", None, True, None, None)]
    record = mx.inputs.get(turn.input_ids[0])
    assert record is not None and record.messages == [] and record.metadata == {"erased": "true"}


def test_on_sqlite_no_byte_of_the_erased_words_is_left_in_the_data_dir(tmp_path, embedder):
    data = tmp_path / "data"
    with Mirix(data, embedder=embedder) as mx:
        say(mx, "My favourite food is ramen.", 1)
        turn = say(mx, "I live in Zorblatt street, in Quixhaven.", 2)
        say(mx, "Quixhaven is far from the sea.", 3, user_id="other")  # another user's: it stays
        mx.delete(made(turn, "episodic"), user_id="kim", erase=True)
        assert mx.list(user_id="other")
    assert on_disk(data, "Zorblatt") == []
    assert on_disk(data, "ramen") and on_disk(data, "Quixhaven")  # what stays is still there


def test_a_plain_delete_keeps_the_words_in_history_and_the_input_log(mx):
    turn = say(mx, "I live in Zorblatt street, in Quixhaven.", 2)
    episode = made(turn, "episodic")

    mx.delete(episode, user_id="kim")

    deleted = mx.history(episode, user_id="kim")[-1]
    assert not deleted.erased and "Quixhaven" in deleted.before["summary"]
    assert "Quixhaven" in mx.inputs.get(turn.input_ids[0]).messages[0].content


def test_the_block_keeps_its_history_without_the_erased_line(mx):
    say(mx, "My favourite food is ramen.", 1)
    turn = say(mx, "I live in Quixhaven.", 2)
    say(mx, "I like tea.", 3)
    core = made(turn, "core")
    before = mx.history(core, user_id="kim")

    mx.delete(made(turn, "episodic"), user_id="kim", erase=True)

    after = mx.history(core, user_id="kim")
    assert [(e.id, e.operation, e.actor) for e in after[:-1]] == [(e.id, e.operation, e.actor) for e in before]
    assert "Quixhaven" not in "".join(e.model_dump_json() for e in after)
    assert [e.erased for e in after] == [False, True, True, True]  # the ramen line's insert did not hold it
    for event in after[1:]:
        for state in (event.before, event.after):
            assert "Kim: favorite food: ramen" in state["value"].splitlines()
            assert set(state["said"]) == set(state["line_sources"]) == set(state["value"].splitlines())
    assert after[0].model_dump() == before[0].model_dump()


def test_a_fact_put_back_keeps_no_state_of_the_erased_change(mx):
    carpenter = say(mx, "My brother Tobias is a carpenter.", 1)
    plumber = say(mx, "My brother Tobias is a plumber now.", 5)
    fact = made(carpenter, "semantic")
    assert any("plumber" in m.search_text() for m in mx.list(user_id="kim", memory_types=["semantic"]))

    mx.delete(made(plumber, "episodic"), user_id="kim", erase=True)

    events = mx.history(fact, user_id="kim")
    assert [e.operation for e in events] == [Operation.insert, Operation.update, Operation.update]
    assert "plumber" not in "".join(e.model_dump_json() for e in events)
    assert not events[0].erased and "carpenter" in events[0].after["summary"] + events[0].after["details"]
    assert "carpenter" in mx.get(fact, user_id="kim").search_text()
    assert served(mx, "plumber", [fact], question="What does Tobias do?") == []


def test_a_fact_changed_again_after_the_erased_turn_keeps_no_state_of_it(mx):
    """The erased turn's change is not the fact's last, so nothing is put back; the state it made reads as
    the one before it, and undoing the later turn brings back that one."""
    say(mx, "My brother Tobias is a carpenter.", 1)
    plumber = say(mx, "My brother Tobias is a plumber now.", 2)
    pilot = say(mx, "My brother Tobias is a pilot now.", 3)
    fact = made(plumber, "semantic")

    mx.delete(made(plumber, "episodic"), user_id="kim", erase=True)

    events = mx.history(fact, user_id="kim")
    assert [(e.operation, e.erased) for e in events] == [
        (Operation.insert, False), (Operation.update, True), (Operation.update, True)]
    assert "pilot" in mx.get(fact, user_id="kim").search_text()
    assert served(mx, "plumber", [fact], question="What does Tobias do?") == []
    assert rows_holding(mx, "plumber") == []
    mx.undo(pilot.input_ids[0], user_id="kim")
    assert "carpenter" in mx.get(fact, user_id="kim").search_text()
    assert "plumber" not in "".join(e.model_dump_json() for e in mx.history(fact, user_id="kim"))


def test_the_turns_a_merge_folded_into_the_erased_one_leave_history(mx):
    """A model folded one turn's episode into another's; the erased survivor's text took the folded turn's
    words in, and the folded episode's history kept them: it is emptied too."""
    added = mx.add([{"role": "user", "name": "Kim", "content": "My therapist Dr Zorblatt moved to Quixhaven.",
                     "id": "msg-1"},
                    {"role": "user", "name": "Kim", "content": "I saw my therapist on Monday.", "id": "msg-2"},
                    {"role": "user", "name": "Kim", "content": "I like tea.", "id": "msg-3"}],
                   user_id="kim", occurred_at=T0)
    episodes = {m.summary: m.id for m in mx.list(user_id="kim", memory_types=["episodic"])}
    folded, survivor = episodes["My therapist Dr Zorblatt moved to Quixhaven."], episodes["I saw my therapist on Monday."]
    mx.store.apply([MergeOp(memory_ids=[survivor, folded], fields={"summary": "Kim saw her therapist on Monday."})],
                   user_id="kim", actor="episodic_memory_manager", input_id=added.input_ids[0])

    mx.delete(survivor, user_id="kim", erase=True)

    assert [e.erased for e in mx.history(folded, user_id="kim")] == [True, True]
    for word in WORDS:
        assert served(mx, word, [folded, survivor], question="Where did my therapist move?") == [], word
        assert rows_holding(mx, word) == [], word
    assert [m.content for m in mx.inputs.get(added.input_ids[0]).messages] == ["I like tea."]


def test_what_merges_folded_into_an_erased_memory_in_turn_leaves_history_but_not_what_came_back(mx):
    """Erasing a memory (not a turn: a model's fact) empties the history of each memory a merge folded into
    it, and of those folded into them; a memory a merge folded in and an undo brought back is not erased."""
    facts = [SemanticMemory(user_id="kim", name="Kim", summary=summary) for summary in (
        "Kim sees a therapist weekly", "Kim's therapist is Dr Zorblatt", "Dr Zorblatt practises in Quixhaven",
        "Kim likes green tea")]
    survivor, middle, first, tea = (c.memory_id for c in mx.store.apply(
        [InsertOp(memory=f) for f in facts], user_id="kim", actor="semantic_memory_manager"))
    mx.store.apply([MergeOp(memory_ids=[middle, first], fields={"details": "Dr Zorblatt practises in Quixhaven"})],
                   user_id="kim", actor="semantic_memory_manager")
    mx.store.apply([MergeOp(memory_ids=[survivor, middle], fields={"details": "with Dr Zorblatt"})],
                   user_id="kim", actor="semantic_memory_manager")
    mx.store.apply([MergeOp(memory_ids=[survivor, tea], fields={"details": "likes green tea"})],
                   user_id="kim", actor="semantic_memory_manager", input_id="in_tea_merge")
    mx.undo("in_tea_merge", user_id="kim")  # the tea fact is back, the survivor as before that merge

    mx.delete(survivor, user_id="kim", erase=True)

    for memory_id in (survivor, middle, first):
        assert all(e.erased for e in mx.history(memory_id, user_id="kim")), memory_id
    for word in WORDS:
        assert served(mx, word, [survivor, middle, first], question="Who is my therapist?") == [], word
        assert rows_holding(mx, word) == [], word
    assert not any(e.erased for e in mx.history(tea, user_id="kim"))
    assert mx.get(tea, user_id="kim").summary == "Kim likes green tea"


def test_erasing_one_turn_of_a_message_input_scrubs_only_its_message(mx):
    added = mx.add([{"role": "user", "name": "Kim", "content": "I live in Quixhaven.", "id": "msg-1"},
                    {"role": "user", "name": "Kim", "content": "My brother Tobias is a carpenter.", "id": "msg-2"}],
                   user_id="kim", occurred_at=T0)
    episodes = {m.summary: m.id for m in mx.list(user_id="kim", memory_types=["episodic"])}

    mx.delete(episodes["I live in Quixhaven."], user_id="kim", erase=True)

    kept = mx.inputs.get(added.input_ids[0])
    assert [m.content for m in kept.messages] == ["My brother Tobias is a carpenter."]  # the other turn holds it
    assert served(mx, "Quixhaven", list(episodes.values())) == []
    assert [m.name for m in mx.list(user_id="kim", memory_types=["semantic"])] == ["Tobias"]


def test_an_input_only_a_restated_fact_still_cites_loses_its_text(mx):
    """The fact the erased turn restated stays and still cites its input, which held the turn's whole
    message: only another turn citing the input keeps its text."""
    say(mx, "My brother Tobias is a carpenter.", 1)
    erased = say(mx, "My brother Tobias is a carpenter. My therapist Dr Zorblatt says I have panic attacks.", 2)
    say(mx, "My brother Tobias is a carpenter.", 3)
    (fact,) = [m.id for m in mx.list(user_id="kim", memory_types=["semantic"]) if m.name == "Tobias"]
    assert erased.input_ids[0] in mx.get(fact, user_id="kim").source_ids

    mx.delete(made(erased, "episodic"), user_id="kim", erase=True)

    status = mx.input_status(erased.input_ids[0], user_id="kim")
    assert status.messages == [] and status.metadata == {"erased": "true"}
    assert "carpenter" in mx.get(fact, user_id="kim").search_text()
    for word in ("Zorblatt", "panic"):
        assert served(mx, word, [fact], question="Who is my therapist?") == [], word
        assert rows_holding(mx, word) == [], word


def test_a_turn_without_its_own_id_leaves_its_input_by_the_time_it_was_said(mx):
    """A message without an id is found by the time its turn was said (its place in the list); the others
    keep that time, so the next erasure finds its own message, not the one that moved into a dropped place.
    Two messages said at one time cannot be told apart: that input keeps both."""
    added = mx.add([{"role": "user", "name": "Kim", "content": "My brother Tobias is a carpenter."},
                    {"role": "user", "name": "Kim", "content": "I live in Quixhaven."},
                    {"role": "user", "name": "Kim", "content": "My cat is called Zorblatt."}],
                   user_id="kim", occurred_at=T0)
    episodes = {m.summary: m.id for m in mx.list(user_id="kim", memory_types=["episodic"])}

    mx.delete(episodes["I live in Quixhaven."], user_id="kim", erase=True)
    mx.delete(episodes["My cat is called Zorblatt."], user_id="kim", erase=True)

    kept = mx.inputs.get(added.input_ids[0])
    assert [(m.content, m.occurred_at) for m in kept.messages] == [("My brother Tobias is a carpenter.", T0)]
    for erased in ("I live in Quixhaven.", "My cat is called Zorblatt."):
        assert not any(e.before or e.after for e in mx.history(episodes[erased], user_id="kim"))

    at_once = mx.add([{"role": "user", "name": "Kim", "content": "I live in Quixhaven.", "occurred_at": T0},
                      {"role": "user", "name": "Kim", "content": "I like tea.", "occurred_at": T0}],
                     user_id="kim", occurred_at=T0)
    (turn,) = [m.id for m in mx.list(user_id="kim", memory_types=["episodic"])
               if at_once.input_ids[0] in m.source_ids and m.summary == "I live in Quixhaven."]
    mx.delete(turn, user_id="kim", erase=True)
    assert len(mx.inputs.get(at_once.input_ids[0]).messages) == 2


def test_undo_of_an_erased_input_names_the_erasure_and_forced_brings_no_word_back(mx):
    say(mx, "My favourite food is ramen.", 1)
    turn = say(mx, "I live in Zorblatt street, in Quixhaven.", 2)
    episode, core = made(turn, "episodic"), made(turn, "core")
    mx.delete(episode, user_id="kim", erase=True)

    with pytest.raises(LaterChanges, match=f"{episode} \\(erased later by api"):
        mx.undo(turn.input_ids[0], user_id="kim")
    mx.undo(turn.input_ids[0], user_id="kim", force=True)

    for word in WORDS:
        assert served(mx, word, [episode, core]) == [], word
    assert mx.core_memory(user_id="kim")["human"].value == "Kim: favorite food: ramen"


def test_a_failure_in_the_middle_erases_nothing_and_deletes_nothing(mx, monkeypatch):
    turn = say(mx, "I live in Zorblatt street, in Quixhaven.", 2)
    episode, core = made(turn, "episodic"), made(turn, "core")

    def failing(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr("mirix_py.store.erase.still_cited", failing)  # the history is rewritten by then
    with pytest.raises(RuntimeError):
        mx.delete(episode, user_id="kim", erase=True)

    assert "Quixhaven" in mx.get(episode, user_id="kim").summary
    assert "Zorblatt" in mx.core_memory(user_id="kim")["human"].value
    assert [e.erased for e in mx.history(core, user_id="kim")] == [False]
    assert mx.inputs.get(turn.input_ids[0]).messages


def test_erase_must_be_a_bool(mx):
    turn = say(mx, "I live in Quixhaven.", 2)
    with pytest.raises(InvalidInput, match="erase"):
        mx.delete(made(turn, "episodic"), user_id="kim", erase="yes")  # type: ignore[arg-type]
    assert mx.get(made(turn, "episodic"), user_id="kim")


def test_erasing_a_rewritten_turn_erases_its_first_words_too(mx):
    """The rewrite took back the first words' core line and fact, which history kept: the erase of the
    turn takes them out there too."""
    say(mx, "I like tea.", 0)
    said = say(mx, "I live in Quixhavn. My brother Zorblatt is a carpenter.", 1)
    fact = made(said, "semantic")
    mx.update(made(said, "episodic"), {"summary": "I live in Lisbon."}, user_id="kim")
    block = mx.core_memory(user_id="kim")["human"].id

    mx.delete(made(said, "episodic"), user_id="kim", erase=True)

    for word in ("Quixhavn", "Zorblatt"):
        assert served(mx, word, [block, fact]) == []
        assert rows_holding(mx, word) == []
    assert mx.core_memory(user_id="kim")["human"].value == "Kim: likes tea"


def test_a_turn_deleted_before_can_be_erased_after(mx):
    """`delete` without `erase` kept the words in history and the input log; asked again with `erase`,
    they go, and nothing else changes."""
    say(mx, "I like tea.", 0)
    said = say(mx, "I live in Quixhaven. My PIN is 4921.", 1)
    turn, entry = made(said, "episodic"), made(said, "knowledge_vault")
    mx.delete(turn, user_id="kim")
    assert rows_holding(mx, "Quixhaven")

    assert mx.delete(turn, user_id="kim", erase=True) == []

    assert served(mx, "Quixhaven", [turn, entry]) == []
    assert rows_holding(mx, "Quixhaven") == []
    assert mx.core_memory(user_id="kim")["human"].value == "Kim: likes tea"
    assert [e.erased for e in mx.history(turn, user_id="kim")] == [True, True]
    with pytest.raises(MemoryNotFound):
        mx.delete(turn, user_id="kim", erase=True)  # nothing left to erase
    with pytest.raises(MemoryNotFound):
        mx.delete("epi_never_there", user_id="kim", erase=True)


def test_a_vault_entry_another_turn_points_at_stays_without_the_erased_words_in_its_caption(mx):
    first = say(mx, "My bank PIN is 4921, I got it at the Quixhaven branch.", 0)
    say(mx, "Remember my bank PIN is 4921.", 1)
    entry = made(first, "knowledge_vault")

    mx.delete(made(first, "episodic"), user_id="kim", erase=True)

    kept = mx.get(entry, user_id="kim", reveal=True)
    assert (kept.secret_value, kept.caption) == ("4921", "password mentioned")
    assert served(mx, "Quixhaven", [entry]) == []
    assert rows_holding(mx, "Quixhaven") == []
