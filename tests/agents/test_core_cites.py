"""A core block cites what its lines came from (`CoreMemory.line_cites`): a line dropped to make room,
replaced or taken back takes the ids no line left cites out of the block's `source_ids`, so a block's
ids stay bounded by its lines however long the history, and deleting a turn whose line is long gone
finds no block citing it. A block kept from before lines' ids were recorded keeps its ids until its
old lines are gone."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.agents.tools import OpCollector
from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.records import CoreMemory, MemoryType
from mirix_py.tools.ops import UpdateOp

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc)
SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vo", "pel", "dri", "nox", "bu", "zan"]


@pytest.fixture
def mx(tmp_path, backend):
    with Mirix(tmp_path / "data", embedder=None, database_url=backend) as engine:
        yield engine


def word(n: int) -> str:
    return "".join(SYLLABLES[(n // len(SYLLABLES) ** k) % len(SYLLABLES)] for k in range(3))


def love(mx: Mirix, n: int, user_id: str = "kim"):
    """A turn (message id `m<n>`) that adds the line "Kim: loves <word> music" to the human block."""
    return mx.add([{"role": "user", "name": "Kim", "id": f"m{n}", "content": f"I love {word(n)} music."}],
                  user_id=user_id, occurred_at=T0 + timedelta(hours=n))


def say(mx: Mirix, text: str, day: int, message_id: str):
    return mx.add([{"role": "user", "name": "Kim", "id": message_id, "content": text}], user_id="kim",
                  occurred_at=T0 + timedelta(days=day))


def episode_of(result):
    return next(c.memory_id for c in result.changes if c.memory_type.value == "episodic")


def human(mx: Mirix) -> CoreMemory:
    return mx.core_memory(user_id="kim")["human"]


def lines_cite(block: CoreMemory) -> set[str]:
    return {i for line in block.value.splitlines() for i in block.line_cites[line]}


def test_appends_past_the_limit_leave_the_block_citing_only_its_lines(mx):
    first = love(mx, 0)
    mx.update(human(mx).id, {"limit": 300}, user_id="kim")
    turns = [first, *(love(mx, n) for n in range(1, 40))]

    block = human(mx)
    lines = block.value.splitlines()
    assert 5 < len(lines) < 40  # the oldest lines made room
    assert len(block.source_ids) == 2 * len(lines)  # each line: its input and its message
    assert set(block.source_ids) == lines_cite(block)
    for n, result in enumerate(turns):
        cited = set(mx.get(episode_of(result), user_id="kim").source_ids)  # the turn's input and message
        line = f"Kim: loves {word(n)} music"
        assert (line in lines) == (n >= 40 - len(lines))
        if line in lines:
            assert set(block.line_cites[line]) == cited <= set(block.source_ids)
        else:
            assert cited.isdisjoint(block.source_ids)


@pytest.mark.parametrize("erase", [False, True])
def test_deleting_a_turn_whose_line_was_dropped_leaves_the_block_alone(mx, erase):
    first = love(mx, 0)
    mx.update(human(mx).id, {"limit": 200}, user_id="kim")
    for n in range(1, 20):
        love(mx, n)
    block = human(mx)
    episode = mx.get(episode_of(first), user_id="kim")
    assert f"Kim: loves {word(0)} music" not in block.value
    assert set(episode.source_ids).isdisjoint(block.source_ids)  # no block cites the turn
    events = len(mx.history(block.id, user_id="kim"))

    changes = mx.delete(episode.id, user_id="kim", erase=erase)

    assert [c.memory_type.value for c in changes] == ["episodic"]
    after = human(mx)
    assert (after.value, after.source_ids, after.line_cites, after.updated_at) == \
        (block.value, block.source_ids, block.line_cites, block.updated_at)
    history = mx.history(block.id, user_id="kim")
    assert len(history) == events  # no change of the block
    if erase:  # the line's words leave the block's earlier states, which held them
        assert not any(word(0) in str(e.before) + str(e.after) for e in history)


def test_a_replaced_line_takes_its_turns_ids_with_it_and_brings_them_back_when_put_back(mx):
    say(mx, "I like tea.", 0, "t1")
    paris = say(mx, "I live in Paris.", 1, "p1")
    paris_ids = set(mx.get(episode_of(paris), user_id="kim").source_ids)
    assert paris_ids <= set(human(mx).source_ids)

    berlin = say(mx, "I live in Berlin now.", 5, "b1")
    block = human(mx)
    assert block.value == "Kim: likes tea\nKim: lives in Berlin"
    assert paris_ids.isdisjoint(block.source_ids) and set(block.source_ids) == lines_cite(block)

    mx.delete(episode_of(berlin), user_id="kim")  # the turn that replaced Paris: Paris comes back
    block = human(mx)
    assert block.value == "Kim: likes tea\nKim: lives in Paris"
    assert set(block.line_cites["Kim: lives in Paris"]) == paris_ids
    assert set(block.source_ids) == lines_cite(block)


def test_a_turn_taken_back_leaves_the_ids_of_a_line_said_elsewhere_too(mx):
    one = say(mx, "I live in Lisbon.", 1, "a1")
    two = say(mx, "I live in Lisbon, in Alfama.", 2, "a2")
    one_ids, two_ids = (set(mx.get(episode_of(r), user_id="kim").source_ids) for r in (one, two))
    assert one_ids | two_ids <= set(human(mx).source_ids)

    mx.delete(episode_of(one), user_id="kim")
    block = human(mx)
    assert block.value == "Kim: lives in Lisbon"
    assert set(block.source_ids) == two_ids
    assert set(block.line_cites["Kim: lives in Lisbon"]) == two_ids


def test_a_block_kept_from_before_keeps_its_ids_until_its_old_lines_are_gone(mx):
    first = love(mx, 0)
    love(mx, 1)
    block = human(mx)
    # as an older version left it: no line's ids recorded, and an id no line of it names
    mx.store.apply([UpdateOp(memory_id=block.id, fields={"line_cites": {}, "limit": 200},
                             add_source_ids=["old-session"])], user_id="kim", actor="test")
    old = set(human(mx).source_ids)
    assert {"old-session", *mx.get(episode_of(first), user_id="kim").source_ids} <= old

    love(mx, 2)
    assert old <= set(human(mx).source_ids)  # its old lines stand: which ids they cite is not known
    n = 3
    while any(f"loves {word(k)} " in human(mx).value for k in (0, 1)):
        love(mx, n)
        n += 1
    block = human(mx)
    assert set(block.source_ids) == lines_cite(block) and old.isdisjoint(block.source_ids)


def test_api_writes_cite_nothing_and_a_rewrite_drops_what_its_dropped_lines_cited(mx):
    lisbon = say(mx, "I live in Lisbon.", 1, "a1")
    lisbon_ids = set(mx.get(episode_of(lisbon), user_id="kim").source_ids)
    block = mx.core_append("human", "prefers short answers", user_id="kim")
    assert set(block.source_ids) == lisbon_ids

    block = mx.core_rewrite("human", "prefers short answers", user_id="kim")
    assert block.source_ids == []
    assert block.line_cites == {"prefers short answers": []}


def test_update_of_a_blocks_lines_makes_it_cite_them_and_bad_line_cites_change_nothing(mx):
    lisbon = say(mx, "I live in Lisbon.", 1, "a1")
    say(mx, "I like tea.", 2, "a2")
    block = human(mx)
    for bad in ({"Kim: lives in Rome": ["x"]}, {"Kim: lives in Lisbon": "a1"}, ["a1"]):
        with pytest.raises(InvalidInput, match="line_cites"):
            mx.update(block.id, {"line_cites": bad}, user_id="kim")
    assert human(mx) == block

    updated = mx.update(block.id, {"value": "Kim: lives in Lisbon"}, user_id="kim")
    assert set(updated.source_ids) == set(mx.get(episode_of(lisbon), user_id="kim").source_ids)
    updated = mx.update(block.id, {"line_cites": {"Kim: lives in Lisbon": ["crm-7"]}}, user_id="kim")
    assert updated.source_ids == ["crm-7"]


def test_export_and_import_keep_each_lines_ids(mx, tmp_path):
    say(mx, "I live in Lisbon.", 1, "a1")
    out = io.StringIO()
    mx.export(out, user_id="kim")
    with Mirix(tmp_path / "copy", embedder=None) as copy:
        copy.import_(io.StringIO(out.getvalue()))
        assert copy.core_memory(user_id="kim")["human"].line_cites == human(mx).line_cites != {}


def model_writes(mx: Mirix, write) -> CoreMemory:
    """The block after a model's core tool call (`write`) in a batch of ids `in_x` and `msg-1`."""
    tools = OpCollector(store=mx.store, user_id="kim", memory_type=MemoryType.core,
                        batch_source_ids=["in_x", "msg-1"], shown_ids=["msg-1"])
    write(tools)
    mx.store.apply(tools.ops, user_id="kim", actor="core_memory_manager")
    return human(mx)


def test_a_models_lines_cite_the_batch_and_a_merged_line_what_it_replaced(mx):
    lisbon, tea = say(mx, "I live in Lisbon.", 1, "a1"), say(mx, "I like tea.", 2, "a2")
    lisbon_ids, tea_ids = (set(mx.get(episode_of(r), user_id="kim").source_ids) for r in (lisbon, tea))
    assert human(mx).value == "Kim: lives in Lisbon\nKim: likes tea"

    block = model_writes(mx, lambda tools: tools.core_memory_rewrite("human", "Kim: lives in Lisbon"))
    assert set(block.source_ids) == lisbon_ids | {"in_x", "msg-1"}  # the tea line's ids went with it

    block = model_writes(mx, lambda tools: tools.core_memory_append("human", "works as a nurse"))
    assert set(block.line_cites["works as a nurse"]) == {"in_x", "msg-1"}
    block = model_writes(mx, lambda tools: tools.core_memory_rewrite(
        "human", "lives in Alfama, Lisbon\nworks as a nurse"))  # merges the Lisbon line: it may restate it
    assert set(block.line_cites["lives in Alfama, Lisbon"]) == lisbon_ids | {"in_x", "msg-1"}
    assert set(block.source_ids) == lines_cite(block) and tea_ids.isdisjoint(block.source_ids)
