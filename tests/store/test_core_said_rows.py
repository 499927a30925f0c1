"""A core block's clocks (`said_offsets`) are kept in its row's `fields`, as an episode's offset is: no
column, no migration; a row written before them reads its days in UTC, as it did."""

from __future__ import annotations

from sqlmodel import Session

from mirix_py.store.tables import MemoryRow

LATE_IN_LA = "2026-01-01T23:30:00-08:00"


def test_a_blocks_clocks_are_stored_and_a_row_without_them_reads_in_utc(mx, user_id):
    mx.add("I work as a nurse.", user_id=user_id, occurred_at=LATE_IN_LA)
    block = mx.core_memory(user_id=user_id)["human"]
    assert block.dated_lines() == ["works as a nurse (said 1 January 2026)"]
    with Session(mx.store.engine) as session:
        row = session.get(MemoryRow, block.id)
        assert row is not None and row.fields["said_offsets"] == {"works as a nurse": -480}
        row.fields = {k: v for k, v in row.fields.items() if k != "said_offsets"}  # as an older version wrote it
        session.add(row)
        session.commit()
    old = mx.core_memory(user_id=user_id)["human"]
    assert old.said_offsets == {} and old.said == block.said
    assert old.dated_lines() == ["works as a nurse (said 2 January 2026)"]
