"""The CLI's argument parsing: pure functions, each bad value a message naming what is accepted."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from mirix_py.cli.args import event_changes, field_assignments, local_when, memory_types, messages_or_text
from mirix_py.errors import InvalidInput
from mirix_py.records import HistoryEvent


def test_memory_types_aliases_and_the_valid_list():
    assert memory_types(["vault", "Episodic", "procedure"]) == ["knowledge_vault", "episodic", "procedural"]
    assert memory_types([]) is None
    with pytest.raises(InvalidInput, match="use one of core, episodic, semantic, procedural, resource, knowledge_vault"):
        memory_types(["vaults"])


def test_local_when_keeps_a_zone_and_gives_one_to_a_naive_time():
    assert local_when("2024-05-01T10:00:00+02:00", "x") == "2024-05-01T10:00:00+02:00"
    naive = datetime.fromisoformat(local_when("2024-05-01T10:00", "x"))
    assert naive.utcoffset() == datetime(2024, 5, 1, 10).astimezone().utcoffset()
    assert local_when(None, "x") is None
    with pytest.raises(InvalidInput, match="--start"):
        local_when("yesterday", "--start")


def test_messages_or_text():
    assert messages_or_text('[{"role": "user", "content": "hi"}]', messages=False) == [{"role": "user", "content": "hi"}]
    assert messages_or_text("[draft] notes", messages=False) == "[draft] notes"
    assert messages_or_text("[1, 2]", messages=False) == "[1, 2]"
    with pytest.raises(InvalidInput, match="JSON list"):
        messages_or_text("plain", messages=True)


def test_field_assignments():
    assert field_assignments(["summary=Tom=pilot", "tags=[\"a\"]", "limit=5"], None) == {
        "summary": "Tom=pilot", "tags": ["a"], "limit": 5}
    assert field_assignments([], '{"details": "x"}') == {"details": "x"}
    with pytest.raises(InvalidInput, match="name=value"):
        field_assignments(["summary"], None)
    with pytest.raises(InvalidInput, match="nothing to update"):
        field_assignments([], None)


def _event(op, before, after):
    return HistoryEvent(id=1, memory_id="sem_1", user_id="u", memory_type="semantic", operation=op, before=before,
                        after=after, actor="cli", input_id=None, created_at=datetime.now(timezone.utc))


def test_event_changes_say_what_changed():
    before = {"id": "sem_1", "name": "Tom", "summary": "Tom is a pilot", "tags": ["a"], "updated_at": "t1"}
    after = {**before, "summary": "Tom flies for Lufthansa", "tags": ["a", "family"], "updated_at": "t2"}
    assert event_changes(_event("update", before, after)) == [
        "~ summary: Tom is a pilot → Tom flies for Lufthansa", "~ tags: +family"]
    assert event_changes(_event("insert", None, before)) == ["+ name: Tom", "+ summary: Tom is a pilot", '+ tags: ["a"]']
    assert event_changes(_event("delete", before, None)) == ["(deleted)"]


BERLIN = ZoneInfo("Europe/Berlin")


def test_a_time_without_a_zone_is_read_in_the_zone_given():
    los_angeles = ZoneInfo("America/Los_Angeles")
    assert local_when("2026-01-01T00:00", "--start", los_angeles) == "2026-01-01T00:00:00-08:00"
    assert local_when("2026-07-01", "--start", los_angeles) == "2026-07-01T00:00:00-07:00"  # summer's offset
    assert local_when("2026-01-01T00:00+01:00", "--start", los_angeles) == "2026-01-01T00:00:00+01:00"  # its own


def test_a_wall_time_the_clocks_skip_or_repeat_is_read_as_zoneinfo_reads_it():
    skipped = datetime.fromisoformat(local_when("2026-03-29T02:30", "--occurred-at", BERLIN))
    assert skipped.astimezone(timezone.utc) == datetime(2026, 3, 29, 1, 30, tzinfo=timezone.utc)  # 03:30 CEST
    repeated = datetime.fromisoformat(local_when("2026-10-25T02:30", "--occurred-at", BERLIN))
    assert repeated.astimezone(timezone.utc) == datetime(2026, 10, 25, 0, 30, tzinfo=timezone.utc)  # the first


@pytest.mark.parametrize("value, zone", [("0001-01-01T00:00", "Asia/Kolkata"),
                                         ("9999-12-31T23:59", "America/Los_Angeles"),
                                         ("0001-01-01T00:00+01:00", "UTC")])
def test_a_time_with_no_utc_equivalent_is_a_bad_value(value, zone):
    with pytest.raises(InvalidInput, match=r"--end: .* is off the calendar in UTC"):
        local_when(value, "--end", ZoneInfo(zone))


def test_a_local_mean_time_is_given_in_utc():
    # before 1883 Los Angeles kept its local mean time, 7:52:58 behind UTC: an offset ISO 8601 readers refuse
    assert local_when("1850-01-01T00:00", "--start", ZoneInfo("America/Los_Angeles")) == "1850-01-01T07:52:58+00:00"


def test_the_machines_zone_is_read_with_its_rules(monkeypatch):
    from mirix_py.cli.args import machine_zone, typed_zone

    monkeypatch.setenv("TZ", "Europe/Berlin")
    assert machine_zone() == BERLIN and typed_zone(None) == BERLIN
    assert typed_zone("America/Los_Angeles") == ZoneInfo("America/Los_Angeles")  # MIRIX_TIMEZONE first
    monkeypatch.setenv("TZ", ":Europe/Lisbon")
    assert machine_zone() == ZoneInfo("Europe/Lisbon")
    monkeypatch.setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3")  # a POSIX rule: the offset now, as before
    assert machine_zone().utcoffset(datetime.now()) == datetime.now().astimezone().utcoffset()
    with pytest.raises(InvalidInput, match="unknown time zone"):
        typed_zone("Mars/Olympus")
