"""A turn of an input of several messages without ids (mem0's `add([{"role", "content"}, …])`): deleting or
erasing it takes back the core lines its message alone said, and not those of the input's other messages
(`store.said_keys`), on SQLite and PostgreSQL."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.records import InputStatus

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)
WORD = "Quixhaven"


@pytest.fixture
def mx(tmp_path, embedder, backend):
    engine = Mirix(tmp_path / "data", embedder=embedder, database_url=backend)
    yield engine
    engine.close()


def chat(mx: Mirix, *texts: str, user_id: str = "kim", **message) -> dict[str, str]:
    """One input of these messages, none with an id (Kim's, and "Nice!" the assistant's); its turns' ids by text."""
    mx.add([{"role": "assistant", "content": t} if t == "Nice!" else {"role": "user", "name": "Kim", "content": t, **message}
            for t in texts], user_id=user_id, occurred_at=T0)
    return {m.summary: m.id for m in mx.list(user_id=user_id, memory_types=["episodic"])}


def human(mx: Mirix) -> str:
    return mx.core_memory(user_id="kim")["human"].value


def holding(mx: Mirix, word: str) -> list[str]:
    """The read paths that still give `word`: the core block's history, list, export, search, the input log."""
    block = mx.core_memory(user_id="kim")["human"]
    paths = ["history"] if word in "".join(e.model_dump_json() for e in mx.history(block.id, user_id="kim")) else []
    if word in "".join(m.model_dump_json() for m in mx.list(user_id="kim")):
        paths.append("list")
    exported = io.StringIO()
    mx.export(exported, user_id="kim")
    if word in exported.getvalue():
        paths.append("export")
    if any(word in h.model_dump_json() for method in ("bm25", "string") for h in mx.search(word, user_id="kim", method=method)):
        paths.append("search")
    if word in "".join(r.model_dump_json() for r in mx.inputs.newest(user_id="kim", statuses=list(InputStatus), limit=10)):
        paths.append("inputs")
    return paths


def test_erasing_a_turn_without_an_id_takes_back_the_core_line_it_alone_said(mx):
    turns = chat(mx, f"I live in {WORD}.", "Nice!", "I like tea.")
    assert human(mx) == f"Kim: lives in {WORD}\nKim: likes tea"

    changes = mx.delete(turns[f"I live in {WORD}."], user_id="kim", erase=True)

    assert [c.memory_type.value for c in changes] == ["episodic", "core"]
    assert human(mx) == "Kim: likes tea"
    assert holding(mx, WORD) == []
    assert holding(mx, "tea") == ["history", "list", "export", "search", "inputs"]


def test_deleting_one_turn_leaves_the_lines_of_the_input_s_other_turns(mx):
    turns = chat(mx, f"I live in {WORD}.", "Nice!", "I like tea.")

    mx.delete(turns["I like tea."], user_id="kim")
    assert human(mx) == f"Kim: lives in {WORD}"
    mx.delete(turns["Nice!"], user_id="kim")
    assert human(mx) == f"Kim: lives in {WORD}"
    mx.delete(turns[f"I live in {WORD}."], user_id="kim")
    assert human(mx) == ""


def test_a_line_said_in_another_turn_too_stays_until_that_turn_goes(mx):
    turns = chat(mx, f"I live in {WORD}.", "Nice!", "I like tea.")
    again = mx.add([{"role": "user", "name": "Kim", "content": "I like tea, honestly."},
                    {"role": "assistant", "content": "Noted."}], user_id="kim", occurred_at=T0 + timedelta(days=1))
    assert human(mx) == f"Kim: lives in {WORD}\nKim: likes tea"

    mx.delete(turns["I like tea."], user_id="kim", erase=True)
    assert human(mx) == f"Kim: lives in {WORD}\nKim: likes tea"
    other = next(c.memory_id for c in again.changes if c.memory_type.value == "episodic")
    mx.delete(other, user_id="kim")
    assert human(mx) == f"Kim: lives in {WORD}"


def test_a_turn_deleted_before_and_erased_later_leaves_no_line_in_the_block_s_history(mx):
    turns = chat(mx, f"I live in {WORD}.", "Nice!", "I like tea.")
    mx.delete(turns[f"I live in {WORD}."], user_id="kim")
    assert human(mx) == "Kim: likes tea"
    assert "history" in holding(mx, WORD)

    mx.delete(turns[f"I live in {WORD}."], user_id="kim", erase=True)

    assert holding(mx, WORD) == []
    assert human(mx) == "Kim: likes tea"


def test_a_rewritten_turn_without_an_id_keeps_its_line_as_its_new_words_say_it(mx):
    turns = chat(mx, "I live in Lisbn.", "Nice!", "I like tea.")

    mx.update(turns["I live in Lisbn."], {"summary": "I live in Lisbon."}, user_id="kim")
    assert human(mx) == "Kim: likes tea\nKim: lives in Lisbon"
    block = mx.core_memory(user_id="kim")["human"]
    assert block.said["Kim: lives in Lisbon"] == T0

    mx.delete(turns["I live in Lisbn."], user_id="kim", erase=True)
    assert human(mx) == "Kim: likes tea"
    assert holding(mx, "Lisb") == []


def test_two_messages_said_at_one_time_cannot_be_told_apart_and_keep_their_lines(mx):
    """Messages without ids given the same time of their own: neither the input log nor a line tells
    which said what, so deleting one turn leaves both lines (give messages an id)."""
    turns = chat(mx, f"I live in {WORD}.", "I like tea.", occurred_at=(T0 + timedelta(hours=1)).isoformat())

    mx.delete(turns[f"I live in {WORD}."], user_id="kim", erase=True)

    assert human(mx) == f"Kim: lives in {WORD}\nKim: likes tea"


@pytest.mark.parametrize("ids", [False, True])
def test_a_turn_deleted_before_leaves_the_input_log_when_erased_later(mx, ids):
    """Its input's other turns still cite the input: erased later, the turn's own message leaves it all the same."""
    said = mx.add([{"role": "user", "name": "Kim", "content": f"I live in {WORD}.", **({"id": "m1"} if ids else {})},
                   {"role": "user", "name": "Kim", "content": "I like tea.", **({"id": "m2"} if ids else {})}],
                  user_id="kim", occurred_at=T0)
    turn = next(m.id for m in mx.list(user_id="kim", memory_types=["episodic"]) if WORD in m.summary)
    mx.delete(turn, user_id="kim")

    mx.delete(turn, user_id="kim", erase=True)

    record = mx.inputs.get(said.input_ids[0])
    assert record is not None and [m.content for m in record.messages] == ["I like tea."]
    assert holding(mx, WORD) == []


def facts(mx: Mirix, user_id: str = "kim") -> list[tuple[str, str]]:
    return [(m.name, m.details) for m in mx.list(user_id=user_id, memory_types=["semantic"])]


def test_erasing_a_turn_without_an_id_takes_back_the_fact_it_alone_said(mx):
    """A fact cites the input in `source_ids` and its message apart (`SemanticMemory.said_in`)."""
    turns = chat(mx, "My brother Tobias is a carpenter.", "Nice!", "I like tea.")
    fact = mx.list(user_id="kim", memory_types=["semantic"])[0]
    assert (fact.details, len(fact.source_ids)) == ("Tobias is a carpenter", 1)

    changes = mx.delete(turns["My brother Tobias is a carpenter."], user_id="kim", erase=True)

    assert {(c.memory_type.value, c.operation.value) for c in changes} == {("episodic", "delete"), ("semantic", "delete")}
    assert facts(mx) == []
    assert holding(mx, "carpenter") == []
    assert "carpenter" not in "".join(e.model_dump_json() for e in mx.history(fact.id, user_id="kim"))
    assert human(mx) == "Kim: likes tea"


def test_deleting_another_turn_of_the_input_leaves_the_fact(mx):
    turns = chat(mx, "My brother Tobias is a carpenter.", "Nice!", "I like tea.")

    mx.delete(turns["I like tea."], user_id="kim", erase=True)
    mx.delete(turns["Nice!"], user_id="kim")

    assert facts(mx) == [("Tobias", "Tobias is a carpenter")]


def test_a_fact_a_later_turn_without_an_id_changed_is_put_back_when_that_turn_is_erased(mx):
    chat(mx, "My brother Tobias is a carpenter.", "Nice!")
    mx.add([{"role": "user", "name": "Kim", "content": "My brother Tobias is a plumber now."},
            {"role": "assistant", "content": "Oh!"}], user_id="kim", occurred_at=T0 + timedelta(days=1))
    assert facts(mx) == [("Tobias", "Tobias is a plumber")]
    fact = mx.list(user_id="kim", memory_types=["semantic"])[0]
    plumber = next(m.id for m in mx.list(user_id="kim", memory_types=["episodic"]) if "plumber" in m.summary)

    mx.delete(plumber, user_id="kim", erase=True)

    assert facts(mx) == [("Tobias", "Tobias is a carpenter")]
    assert "plumber" not in "".join(e.model_dump_json() for e in mx.history(fact.id, user_id="kim"))


def test_a_rewritten_turn_without_an_id_restates_its_fact_and_its_erasure_takes_it_back(mx):
    turns = chat(mx, "My brother Tobias is a carpentr.", "Nice!", "I like tea.")

    mx.update(turns["My brother Tobias is a carpentr."], {"summary": "My brother Tobias is a carpenter."}, user_id="kim")
    assert facts(mx) == [("Tobias", "Tobias is a carpenter")]

    mx.delete(turns["My brother Tobias is a carpentr."], user_id="kim", erase=True)
    assert facts(mx) == []
    assert holding(mx, "carpent") == []
