"""One writer of a user at a time in an engine (`agents.user_locks`): writes that read the user's
memories and write from what they read, run from several threads at once, end as they would one
after the other."""

from __future__ import annotations

import threading

import pytest

from mirix_py.agents.user_locks import UserLocks
from mirix_py.engine import Mirix
from mirix_py.llm.loop import EngineClosed


def _together(n: int, call) -> None:
    start = threading.Barrier(n)

    def run(i: int) -> None:
        start.wait()
        call(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_core_lines_appended_at_once_all_land_in_one_block(tmp_path, embedder):
    """Each append read the block and wrote it whole: 14 of 30 lines kept, in three `human` blocks."""
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        _together(3, lambda i: [mx.core_append("human", f"Likes hike number {i}-{j} in the Alps.", user_id="ada")
                                for j in range(10)])
        blocks = [m for m in mx.list(user_id="ada", memory_types=["core"]) if m.label == "human"]
        assert len(blocks) == 1 and len(blocks[0].value.splitlines()) == 30


def test_the_same_turn_added_at_once_is_one_memory_as_it_is_one_after_the_other(tmp_path, embedder):
    message = [{"role": "user", "name": "Ada", "content": "I love kayaking on the fjord near Bergen."}]
    with Mirix(tmp_path / "one", embedder=embedder) as mx:
        for _ in range(3):
            mx.add(message, user_id="ada")
        one_by_one = mx.store.count(user_id="ada")
    with Mirix(tmp_path / "together", embedder=embedder) as mx:
        _together(3, lambda i: mx.add(message, user_id="ada"))
        assert mx.store.count(user_id="ada") == one_by_one


def test_two_engines_on_postgresql_take_turns_for_a_user(tmp_path, embedder, pgvector_schema_url):
    """Engines of other processes or machines share a database: each append read the block another
    engine was rewriting (16 of 30 lines lost across three engines)."""
    engines = [Mirix(tmp_path / f"e{i}", embedder=embedder, database_url=pgvector_schema_url,
                     vector_store="pgvector") for i in range(2)]
    try:
        _together(2, lambda i: [engines[i].core_append("human", f"Likes hike number {i}-{j} in the Alps.",
                                                       user_id="ada") for j in range(10)])
        blocks = [m for m in engines[0].list(user_id="ada", memory_types=["core"]) if m.label == "human"]
        assert len(blocks) == 1 and len(blocks[0].value.splitlines()) == 20
    finally:
        for mx in engines:
            mx.close()


def test_closing_waits_for_a_turn_held_and_gives_no_new_one():
    """The engine's close waits on its turns: a write running ends, a new one is refused."""
    locks, held, go, inside = UserLocks(), threading.Event(), threading.Event(), []

    def write() -> None:
        with locks("ada"):
            held.set()
            go.wait(60)
            with locks("ada"):  # the holder's own nested step goes on while closing
                inside.append("nested step")

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert held.wait(60)
    assert locks.close(timeout=0) is False  # still held
    with pytest.raises(EngineClosed, match="the engine is closed"):
        with locks("bob"):
            pass
    go.set()
    assert locks.close(timeout=60) is True
    assert inside == ["nested step"] and not writer.is_alive()

