"""The index of the ids memories cite (`store.citations`): after every kind of write it holds exactly
what the memories' `source_ids` say, on SQLite and PostgreSQL, so what a delete looks up through it
is what it read from every memory before; and deleting or undoing a turn does as much work in a store
of many other turns as in one of a few."""

from __future__ import annotations

import io
import shutil
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import event, inspect

from mirix_py.engine import Mirix
from mirix_py.settings import Settings
from mirix_py.store.migrations import alembic_config, upgrade
from citation_rows import cited, indexed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
FIXTURE = Path(__file__).parents[1] / "fixtures" / "schema_0001.db"
FIXTURE_KEY = "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg="
EPISODIC = ["episodic"]


@pytest.fixture
def mx(tmp_path, backend):
    engine = Mirix(tmp_path / "data", embedder=None, database_url=backend)
    yield engine
    engine.close()


def chat(prefix: str, lines: list[str]) -> list[dict]:
    """A chat input whose messages have ids `<prefix>-<n>`."""
    return [{"role": "user", "name": "Kim", "id": f"{prefix}-{n}", "content": line} for n, line in enumerate(lines)]


def say(mx: Mirix, messages: list[dict], hours: int = 0, user_id: str = "kim"):
    return mx.add(messages, user_id=user_id, occurred_at=T0 + timedelta(hours=hours))


def episode_of(mx: Mirix, message_id: str, user_id: str = "kim") -> str:
    (memory_id,) = mx.store.made_from(user_id, [message_id], EPISODIC)[message_id]
    return memory_id


def test_the_index_holds_what_every_memory_cites_after_each_kind_of_write(mx):
    say(mx, chat("a", ["My sister Anna is a painter.", "We walked by the river.", "I live in Lisbon."]))
    assert indexed(mx) == cited(mx) and ("a-1" in {s for _, s, _, _ in indexed(mx)})
    resent = say(mx, chat("a", ["My sister Anna is a painter.", "We walked by the river.", "I live in Lisbon.",
                                "The bakery opens at seven."]), hours=1)  # a chat app's window sent again
    assert indexed(mx) == cited(mx)
    walk = episode_of(mx, "a-1")
    mx.update(walk, {"source_ids": [*mx.get(walk, user_id="kim").source_ids, "diary-7"]}, user_id="kim")
    assert indexed(mx) == cited(mx) and mx.store.made_from("kim", ["diary-7"], EPISODIC) == {"diary-7": [walk]}
    fact = mx.list(user_id="kim", memory_types=["semantic"])[0].id
    mx.update(fact, {"expires_at": T0 + timedelta(days=3650)}, user_id="kim")  # a write of another column
    assert indexed(mx) == cited(mx)
    mx.delete(episode_of(mx, "a-3"), user_id="kim")
    assert indexed(mx) == cited(mx) and "a-3" not in mx.store.made_from("kim", ["a-3"], EPISODIC)
    mx.undo(resent.input_ids[0], user_id="kim", force=True)
    assert indexed(mx) == cited(mx)
    say(mx, chat("b", ["Lee plays the cello."]), user_id="lee")
    mx.delete(episode_of(mx, "a-0"), user_id="kim", erase=True)
    assert indexed(mx) == cited(mx)
    mx.delete_user("kim")
    assert indexed(mx) == cited(mx) and {u for _, _, u, _ in indexed(mx)} == {"lee"}


def test_an_id_too_long_for_the_index_is_found_all_the_same(mx):
    from mirix_py.store.citations import MAX_INDEXED_ID

    long_id = "thread/" + "x" * MAX_INDEXED_ID
    say(mx, [{"role": "user", "name": "Kim", "id": long_id, "content": "The ferry leaves at noon."},
             {"role": "user", "name": "Kim", "id": "short-1", "content": "The ferry leaves at noon on Sundays."}])
    assert long_id not in {s for _, s, _, _ in indexed(mx)} and indexed(mx) == cited(mx)
    turn = episode_of(mx, long_id)
    assert mx.get(turn, user_id="kim").summary == "The ferry leaves at noon."
    mx.delete(turn, user_id="kim", erase=True)  # the input's other turn still cites it: it keeps that message
    assert [m.content for m in mx.input_status(mx.get(episode_of(mx, "short-1"), user_id="kim").source_ids[0]).messages] \
        == ["The ferry leaves at noon on Sundays."]


def test_an_export_imported_again_finds_each_turn_by_its_message(mx):
    say(mx, chat("a", ["My brother Tobias is a carpenter.", "We had soup."]))
    exported = io.StringIO()
    mx.export(exported, user_id="kim")
    before = indexed(mx)
    mx.delete_user("kim")
    assert not indexed(mx)
    mx.import_(exported.getvalue().splitlines())
    assert indexed(mx) == cited(mx) == before
    mx.delete(episode_of(mx, "a-0"), user_id="kim")
    assert not [m for m in mx.list(user_id="kim", memory_types=["semantic"]) if "Tobias" in m.search_text()]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_restored_backup_finds_each_turn_by_its_message(mx, tmp_path):
    say(mx, chat("a", ["My brother Tobias is a carpenter.", "We had soup."]))
    mx.backup(tmp_path / "b.tar.gz")
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "r", vault_key=key, embedder=None) as copy:
        assert indexed(copy) == cited(copy) == indexed(mx)
        copy.delete(episode_of(copy, "a-0"), user_id="kim")
        assert not [m for m in copy.list(user_id="kim", memory_types=["semantic"]) if "Tobias" in m.search_text()]


def test_a_store_of_the_first_schema_gets_the_ids_its_memories_cite(tmp_path):
    data = tmp_path / "old"
    data.mkdir()
    shutil.copy(FIXTURE, data / "mirix.db")
    with Mirix(settings=Settings(data_dir=data, vault_key=FIXTURE_KEY), embedder=None, resume=False) as old:
        assert indexed(old) == cited(old)
        assert old.store.made_from("caroline", ["D1:3"], EPISODIC) == {"D1:3": ["epi_00000000000000000000000000000001"]}


def test_the_migration_fills_the_index_from_the_rows_there_and_goes_back(mx):
    say(mx, chat("a", ["My brother Tobias is a carpenter.", "We had soup."]))
    before = indexed(mx)
    with mx.engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0019_reembed_secret_refs")
    assert "memory_source" not in inspect(mx.engine).get_table_names()
    upgrade(mx.engine)
    assert indexed(mx) == cited(mx) == before
    say(mx, chat("b", ["We had tea."]), hours=1)  # the triggers are back
    assert indexed(mx) == cited(mx) != before


# what an erasing write does to the whole store by design (`store.sqlite_erase`): FTS5's segments merged,
# the write-ahead log checkpointed
WHOLE_STORE = ("'optimize'", "wal_checkpoint")


def vm_steps(mx: Mirix, work) -> int:
    """SQLite's virtual machine steps (in hundreds) that `work()` runs on the engine's connections in
    this thread (not the engine's background work), but for WHOLE_STORE's statements: the rows it
    reads, through whichever index, whether or not they reach Python."""
    steps, skipping, here = [0], [False], threading.get_ident()

    def count() -> int:
        steps[0] += not skipping[0] and threading.get_ident() == here
        return 0

    def watch(dbapi_conn, _record, _proxy) -> None:
        dbapi_conn.set_progress_handler(count, 100)

    def before(_conn, _cursor, statement, *_args) -> None:
        skipping[0] = any(s in statement for s in WHOLE_STORE)

    def after(*_args) -> None:
        skipping[0] = False

    hooks = (("checkout", watch), ("before_cursor_execute", before), ("after_cursor_execute", after))
    for name, hook in hooks:
        event.listen(mx.engine, name, hook)
    try:
        work()
    finally:
        for name, hook in hooks:
            event.remove(mx.engine, name, hook)
    return steps[0]


def store_with_other_turns(tmp_path: Path, name: str, others: int) -> tuple[Mirix, str]:
    """A SQLite store whose first input says a fact among small talk (messages `c0-<n>`), then `others`
    inputs of small talk; and the id of that first input."""
    mx = Mirix(tmp_path / name, embedder=None)
    first = say(mx, chat("c0", ["My sister Anna is a painter.", *[f"We talked about lunch, part {k}." for k in range(24)]]))
    for n in range(1, others + 1):
        say(mx, chat(f"c{n}", [f"We talked about the weather, round {n} part {k}." for k in range(25)]), hours=n)
    return mx, first.input_ids[0]


def test_deleting_erasing_or_undoing_a_turn_reads_no_more_with_many_other_turns(tmp_path):
    stores = [store_with_other_turns(tmp_path, "few", 0), store_with_other_turns(tmp_path, "many", 20)]  # 500 more
    try:
        work = {what: [vm_steps(mx, lambda mx=mx, input_id=input_id: act(mx, input_id)) for mx, input_id in stores]
                for what, act in (
                    ("delete", lambda mx, _: mx.delete(episode_of(mx, "c0-0"), user_id="kim")),
                    ("erase", lambda mx, _: mx.delete(episode_of(mx, "c0-1"), user_id="kim", erase=True)),
                    ("undo", lambda mx, input_id: mx.undo(input_id, user_id="kim", force=True)))}
    finally:
        for mx, _ in stores:
            mx.close()
    assert all(many < 1.5 * few for few, many in work.values()), work  # before the index: 2 to 7 times
