"""Whole facts through the engine in offline mode (issue 18): a change updates the memory in place with a
history event, core lines are replaced, and a repeated input adds provenance instead of copies."""

from __future__ import annotations

from mirix_py.records import Operation


def _semantic(mx, user_id, name):
    return [m for m in mx.list(user_id=user_id, memory_types=["semantic"]) if m.name == name]


def test_a_change_supersedes_the_fact_in_place_with_history(mx_sqlite, user_id):
    first = mx_sqlite.add("My brother Tom is a pilot.", user_id=user_id)
    (tom,) = _semantic(mx_sqlite, user_id, "Tom")
    assert "pilot" in tom.search_text() and "brother" in tom.search_text()
    assert first.input_ids[0] in tom.source_ids

    second = mx_sqlite.add("Tom is no longer a pilot; he is a flight instructor now.", user_id=user_id)
    (after,) = _semantic(mx_sqlite, user_id, "Tom")
    assert after.id == tom.id
    assert "flight instructor" in after.search_text() and "pilot" not in after.search_text()
    assert "brother" in after.search_text()
    assert second.input_ids[0] in after.source_ids
    events = mx_sqlite.history(tom.id, user_id=user_id)
    assert [e.operation for e in events] == [Operation.insert, Operation.update]
    assert "pilot" in (events[-1].before or {}).get("details", "")


def test_core_memory_replaces_the_preference(mx_sqlite, user_id):
    mx_sqlite.add("I prefer dark roast coffee.", user_id=user_id)
    mx_sqlite.add("I switched to green tea.", user_id=user_id)
    human = mx_sqlite.core_memory(user_id=user_id)["human"].value
    assert "prefers green tea" in human and "coffee" not in human


def test_an_input_added_twice_makes_no_copies(mx_sqlite, user_id):
    text = "My sister Mia is a marine biologist in Faro. We adopted a cat called Miso."
    first = mx_sqlite.add(text, user_id=user_id, occurred_at="2024-05-12T20:00:00-07:00")
    before = {m.id: m for m in mx_sqlite.list(user_id=user_id)}
    second = mx_sqlite.add(text, user_id=user_id, occurred_at="2024-05-12T20:05:00-07:00")
    after = {m.id: m for m in mx_sqlite.list(user_id=user_id)}
    assert set(after) == set(before)  # same memories, no new ids
    assert {c.operation.value for c in second.changes} == {"update"}
    for memory in after.values():
        assert first.input_ids[0] in memory.source_ids and second.input_ids[0] in memory.source_ids


def test_the_same_words_saying_otherwise_are_kept_as_their_own_memory(mx_sqlite, user_id):
    """Names swapped in a long turn share every word with the first: each is its own episode, and a
    search finds both."""
    first = mx_sqlite.add("Alice owes Bob 20 dollars for the concert tickets.", user_id=user_id)
    second = mx_sqlite.add("Bob owes Alice 20 dollars for the concert tickets.", user_id=user_id)
    assert [c.operation.value for c in second.changes if c.memory_type.value == "episodic"] == ["insert"]
    episodes = {m.summary for m in mx_sqlite.list(user_id=user_id, memory_types=["episodic"])}
    assert episodes == {"Alice owes Bob 20 dollars for the concert tickets.",
                        "Bob owes Alice 20 dollars for the concert tickets."}
    hits = mx_sqlite.search("Bob owes Alice", user_id=user_id, memory_types=["episodic"], limit=2)
    assert sorted(h.memory.source_ids for h in hits) == sorted([first.input_ids, second.input_ids])


def test_changes_said_in_other_families_apply_through_the_engine(mx_sqlite, user_id):
    """"not … anymore", "instead of", "moved from A to B": the same in-place updates as "no longer"."""
    mx_sqlite.add("Paul is my boss. Paul works at Initech.", user_id=user_id)
    (paul,) = _semantic(mx_sqlite, user_id, "Paul")
    mx_sqlite.add("Paul isn't my boss anymore.", user_id=user_id)
    (after,) = _semantic(mx_sqlite, user_id, "Paul")
    assert after.id == paul.id
    assert "boss" not in after.search_text() and "Initech" in after.search_text()

    mx_sqlite.add("I prefer coffee. I live in Boston.", user_id=user_id)
    mx_sqlite.add("These days I drink tea instead of coffee. I moved from Boston to Denver.", user_id=user_id)
    human = mx_sqlite.core_memory(user_id=user_id)["human"].value
    assert "prefers tea" in human and "coffee" not in human
    assert "lives in Denver" in human and "Boston" not in human


def test_a_near_miss_changes_nothing_through_the_engine(mx_sqlite, user_id):
    mx_sqlite.add("I'm a teacher. I live in Boston.", user_id=user_id)
    before = mx_sqlite.core_memory(user_id=user_id)["human"].value
    mx_sqlite.add("I moved to a new apartment. I might become a doctor. I'm a mom of two.", user_id=user_id)
    human = mx_sqlite.core_memory(user_id=user_id)["human"].value
    assert all(line in human for line in before.splitlines())
    assert "is a mom of two" in human and "doctor" not in human


def test_the_third_rounds_families_apply_through_the_engine(mx_sqlite, user_id):
    """A relation ended through "he" for the person the message names, a job ended through its
    activity, losing a job, "we" moving home: in-place updates of semantic and core memory."""
    mx_sqlite.add("Marco is my roommate. My husband Dan is a chef.", user_id=user_id)
    (marco,) = _semantic(mx_sqlite, user_id, "Marco")
    mx_sqlite.add("Marco moved out, so he's not my roommate any longer.", user_id=user_id)
    (after,) = _semantic(mx_sqlite, user_id, "Marco")
    assert after.id == marco.id and after.summary.startswith("Marco: no longer")  # every fact withdrawn, said so
    mx_sqlite.add("Dan isn't cooking professionally anymore.", user_id=user_id)
    (dan,) = _semantic(mx_sqlite, user_id, "Dan")
    assert "chef" not in dan.search_text() and "husband" in dan.search_text()

    mx_sqlite.add("I work at Shopify. I live in Manchester.", user_id=user_id)
    mx_sqlite.add("I got laid off from Shopify in March. We relocated to Edinburgh in the spring.", user_id=user_id)
    human = mx_sqlite.core_memory(user_id=user_id)["human"].value
    assert "Shopify" not in human
    assert "lives in Edinburgh" in human and "Manchester" not in human


def test_the_fourth_rounds_shapes_apply_through_the_engine(mx_sqlite, user_id):
    """A change read by its frame ("earn my living as"), a job's end and the next employer in one breath, and
    a near miss read by the same frame (a visit) replace only what they should."""
    mx_sqlite.add("I'm an electrician. I live in Bristol.", user_id=user_id)
    mx_sqlite.add("These days I earn my living as a plumber.", user_id=user_id)
    mx_sqlite.add("I'm in Denver now for my cousin's wedding.", user_id=user_id)
    human = mx_sqlite.core_memory(user_id=user_id)["human"].value
    assert "plumber" in human and "electrician" not in human
    assert "Bristol" in human and "Denver" not in human

    mx_sqlite.add("My friend Jake works at Deloitte.", user_id=user_id)
    (jake,) = _semantic(mx_sqlite, user_id, "Jake")
    mx_sqlite.add("Jake handed in his notice at Deloitte and joined KPMG.", user_id=user_id)
    (after,) = _semantic(mx_sqlite, user_id, "Jake")
    assert after.id == jake.id
    assert "KPMG" in after.search_text() and "Deloitte" not in after.search_text() and "friend" in after.search_text()


def test_a_relation_word_later_is_the_person_named_before(mx_sqlite, user_id):
    """"my brother Tom" in one input, "my brother" alone in a later one: the later fact updates Tom."""
    mx_sqlite.add("My brother Tom is a pilot.", user_id=user_id)
    (tom,) = _semantic(mx_sqlite, user_id, "Tom")
    mx_sqlite.add("My brother is a flight instructor now.", user_id=user_id)
    (after,) = _semantic(mx_sqlite, user_id, "Tom")
    assert after.id == tom.id
    assert "flight instructor" in after.search_text() and "pilot" not in after.search_text()
    assert "brother" in after.search_text()
    assert [e.operation for e in mx_sqlite.history(tom.id, user_id=user_id)] == [Operation.insert, Operation.update]


def test_a_parent_called_mum_is_the_mother_named_before(mx_sqlite, user_id):
    mx_sqlite.add("My mum Linda lives in Cardiff.", user_id=user_id)
    mx_sqlite.add("Mum has swapped rainy Cardiff for sunny Málaga.", user_id=user_id)
    (linda,) = _semantic(mx_sqlite, user_id, "Linda")
    assert "Málaga" in linda.search_text() and "Cardiff" not in linda.search_text()


def test_a_relation_word_two_people_hold_names_nobody(mx_sqlite, user_id):
    mx_sqlite.add("My friend Jake is a nurse. My friend Sam is a teacher.", user_id=user_id)
    mx_sqlite.add("My friend is a pilot now.", user_id=user_id)
    (jake,) = _semantic(mx_sqlite, user_id, "Jake")
    (sam,) = _semantic(mx_sqlite, user_id, "Sam")
    assert "nurse" in jake.search_text() and "teacher" in sam.search_text()
    assert "pilot" not in jake.search_text() + sam.search_text()


def test_the_parse_reads_what_the_patterns_miss(tmp_path, embedder, user_id):
    """By default the engine reads facts with the dependency parse too; `fact_parser="none"` is the patterns alone."""
    from mirix_py.agents.offline import parser as parser_module
    from mirix_py.engine import Mirix
    from mirix_py.settings import Settings

    text = "My stepmum, Ruth, is a GP in Harrogate."
    assert parser_module.load_fact_parser("spacy") is not None  # installed with the package's [all]
    for parser, expected in (("spacy", True), ("none", False)):
        mx = Mirix(settings=Settings(data_dir=tmp_path / parser, fact_parser=parser), embedder=embedder)
        try:
            assert mx.describe()["fact_parser"] == (parser if expected else None)
            mx.add(text, user_id=user_id)
            ruth = _semantic(mx, user_id, "Ruth")
            assert bool(ruth and "stepmum" in ruth[0].search_text()) is expected
        finally:
            mx.close()
