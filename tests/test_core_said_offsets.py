"""A core block's "(said …)" days, as `CoreMemory.dated_lines` states them: on the clock each line was
said by (`said_offsets`), as an episode's and a fact's text are; UTC for a line without one."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from mirix_py.records import MEMORY_ADAPTER, CoreMemory

LATE_IN_LA = datetime(2026, 1, 2, 7, 30, tzinfo=timezone.utc)  # 23:30 on 1 January in Los Angeles
NOON = datetime(2026, 1, 2, 12, 0, tzinfo=timezone.utc)


def test_each_line_states_the_day_of_the_clock_it_was_said_by():
    block = CoreMemory(user_id="maya", label="human", value="works as a nurse\nlives in Lisbon\nkept from before",
                       said={"works as a nurse": LATE_IN_LA, "lives in Lisbon": NOON},
                       said_offsets={"works as a nurse": -480})
    assert block.dated_lines() == ["lives in Lisbon (said 2 January 2026)", "works as a nurse (said 1 January 2026)",
                                   "kept from before"]


def test_without_offsets_the_lines_read_in_utc_as_before():
    block = CoreMemory(user_id="maya", label="human", value="works as a nurse\nlives in Lisbon",
                       said={"works as a nurse": LATE_IN_LA, "lives in Lisbon": NOON})
    assert block.said_offsets == {}
    assert block.dated_lines() == ["lives in Lisbon (said 2 January 2026)", "works as a nurse (said 2 January 2026)"]


def test_a_stored_block_without_the_field_reads_as_before():
    stored = {"memory_type": "core", "user_id": "maya", "label": "human", "value": "works as a nurse",
              "said": {"works as a nurse": "2026-01-02T07:30:00+00:00"}}
    block = MEMORY_ADAPTER.validate_python(stored)
    assert isinstance(block, CoreMemory) and block.said_offsets == {}
    assert block.dated_lines() == ["works as a nurse (said 2 January 2026)"]


@pytest.mark.parametrize("minutes", [961, -961])
def test_an_offset_farther_from_utc_than_any_zone_is_refused(minutes):
    with pytest.raises(ValidationError, match="960"):
        CoreMemory(user_id="maya", label="human", value="works as a nurse", said={"works as a nurse": NOON},
                   said_offsets={"works as a nurse": minutes})


def test_an_offset_that_takes_a_lines_day_off_the_calendar_is_refused():
    last = datetime(9999, 12, 31, 23, 0, tzinfo=timezone.utc)
    with pytest.raises(ValidationError, match="off the calendar"):
        CoreMemory(user_id="maya", label="human", value="retires", said={"retires": last}, said_offsets={"retires": 120})
