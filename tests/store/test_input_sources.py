"""The input log by source (a screenshot file's name and capture time): indexed on a fresh and an upgraded
database, read through that index, and `append_new` logs a source the log does not hold yet only."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import event, inspect, text

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.records import InputKind, InputStatus
from mirix_py.store.db import make_engine
from mirix_py.store.migrations import current_revision, head_revision, upgrade

WHEN = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
INDEX = "ix_input_user_kind_source"


def _record(name: str, *, user_id: str = "ada", when: datetime = WHEN):
    return normalize_add(f"Inbox: {name}", user_id=user_id, occurred_at=when, source_id=name, kind="screenshot",
                         max_chars=10_000, metadata={"app": "Thunderbird"})


def _source_index(engine) -> list[str] | None:
    """The columns of the input log's index by source, None when there is none."""
    with engine.connect() as conn:
        found = {i["name"]: i["column_names"] for i in inspect(conn).get_indexes("input_log")}
    return found.get(INDEX)


@pytest.mark.parametrize("start", [None, "0017_memory_listing_index"], ids=["fresh", "from-0017"])
def test_a_fresh_and_an_upgraded_database_index_the_log_by_source(backend, tmp_path, start):
    engine = make_engine(backend or f"sqlite:///{tmp_path / 'log.db'}")
    if start is not None:
        upgrade(engine, start)
        assert _source_index(engine) is None
        with engine.begin() as conn:  # a row logged before the upgrade
            conn.execute(text("INSERT INTO input_log (id, user_id, kind, payload, source_id, occurred_at, status, "
                              "attempts, created_at, done_actors, refused) VALUES ('in_1', 'ada', 'screenshot', 'x', "
                              "'a.png', :at, 'processed', 1, :at, '[]', '[]')"), {"at": WHEN.replace(tzinfo=None)})
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    assert _source_index(engine) == ["user_id", "kind", "source_id"]
    if start is not None:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT source_id FROM input_log")).scalars().all() == ["a.png"]
    engine.dispose()


def test_a_lookup_by_source_reads_the_index_on_sqlite(tmp_path):
    with Mirix(tmp_path / "d", embedder=None, resume=False) as mx:
        mx.inputs.append([_record(f"shot{i}.png", user_id=user) for i in range(30) for user in ("ada", "bob")])
        statements: list[tuple[str, object]] = []

        def seen(conn, cursor, statement, parameters, context, executemany):
            statements.append((statement, parameters))

        event.listen(mx.engine, "before_cursor_execute", seen)
        try:
            found = mx.inputs.by_source(InputKind.screenshot, user_id="ada", source_ids=["shot3.png", "shot7.png"])
        finally:
            event.remove(mx.engine, "before_cursor_execute", seen)
        assert sorted(e.source_id for e in found) == ["shot3.png", "shot7.png"]
        [(statement, parameters)] = [(s, p) for s, p in statements if "input_log" in s]
        with mx.engine.connect() as conn:
            plan = " ".join(row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters))
        assert f"USING INDEX {INDEX}" in plan, plan


def test_append_new_logs_only_sources_the_log_does_not_hold(backend, tmp_path):
    with Mirix(tmp_path / "d", embedder=None, database_url=backend, resume=False) as mx:
        first = _record("a.png")
        mx.inputs.append([first])
        again, later, other_user = (_record("a.png"), _record("a.png", when=WHEN + timedelta(hours=1)),
                                    _record("a.png", user_id="bob"))
        unnamed = _record("b.png").model_copy(update={"source_id": None})
        left_out = mx.inputs.append_new([again, later, other_user, unnamed], claimed_by="worker-1")
        assert list(left_out) == [again.id] and left_out[again.id].id == first.id
        assert left_out[again.id].status is InputStatus.pending
        assert mx.inputs.get(again.id) is None
        for record in (later, other_user, unnamed):  # another capture time, another user, no source: logged
            logged = mx.inputs.get(record.id)
            assert logged is not None and logged.status is InputStatus.processing
        repeat = _record("a.png", when=WHEN + timedelta(hours=1))
        assert {mine: held.id for mine, held in mx.inputs.append_new([repeat]).items()} == {repeat.id: later.id}


def test_append_new_logs_a_source_the_batch_holds_twice_once(backend, tmp_path):
    with Mirix(tmp_path / "d", embedder=None, database_url=backend, resume=False) as mx:
        first, again, other = _record("a.png"), _record("a.png"), _record("b.png")  # one file listed twice
        left_out = mx.inputs.append_new([first, again, other], claimed_by="worker-1")
        assert {mine: held.id for mine, held in left_out.items()} == {again.id: first.id}
        assert left_out[again.id].status is InputStatus.processing and left_out[again.id].held
        assert mx.inputs.get(again.id) is None
        for record in (first, other):
            assert mx.inputs.get(record.id).status is InputStatus.processing
        later, later_again = (_record("c.png", when=WHEN + timedelta(hours=1)) for _ in range(2))
        left_out = mx.inputs.append_new([later, later_again])  # logged unclaimed: pending, held by nobody
        assert {mine: (held.id, held.status, held.held) for mine, held in left_out.items()} == {
            later_again.id: (later.id, InputStatus.pending, False)}
        logged = mx.inputs.by_source(InputKind.screenshot, user_id="ada", source_ids=["a.png", "b.png", "c.png"])
        assert sorted(e.id for e in logged) == sorted([first.id, other.id, later.id])
