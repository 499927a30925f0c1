"""Times typed without a zone on the `mirix` command: read in the zone its tables show times in
(MIRIX_TIMEZONE, else the machine's), and a time at the calendar's ends a one-line error, not a
traceback."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mirix_py.cli.commands import app

runner = CliRunner()


@pytest.fixture
def run(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIRIX_TIMEZONE", raising=False)

    def invoke(*args: str):
        return runner.invoke(app, list(args), catch_exceptions=False)

    return invoke




def _found(result) -> list[str]:
    assert result.exit_code == 0, result.output
    return sorted(hit["memory"]["summary"] for hit in json.loads(result.stdout))


def test_a_window_without_a_zone_is_read_in_the_zone_tables_show(run, machine_zone, monkeypatch):
    machine_zone("UTC")
    monkeypatch.setenv("MIRIX_TIMEZONE", "America/Los_Angeles")
    run("add", "I cooked lasagna for Priya at home.", "-u", "la", "--occurred-at", "2026-01-01T23:30:00-08:00")
    run("add", "I cooked lasagna at the New Year's Eve party.", "-u", "la", "--occurred-at", "2025-12-31T20:00:00-08:00")
    table = run("list", "-u", "la", "-t", "episodic")
    assert "2026-01-01 23:30 PST" in table.stdout and "2025-12-31 20:00 PST" in table.stdout
    on_new_years_day = run("search", "lasagna", "-u", "la", "--start", "2026-01-01T00:00", "--end", "2026-01-02T00:00",
                           "--json")
    assert _found(on_new_years_day) == ["I cooked lasagna for Priya at home."]


def test_without_mirix_timezone_a_time_is_read_in_the_machines_zone_with_its_summer_time(run, machine_zone):
    machine_zone("Europe/Berlin")
    run("add", "The lake was warm.", "-u", "ber", "--occurred-at", "2026-07-01T12:00")
    run("add", "Clocks changed while I was reading Faust.", "-u", "ber", "--occurred-at", "2026-03-29T02:30")
    listed = json.loads(run("list", "-u", "ber", "-t", "episodic", "--json").stdout)
    assert sorted(m["occurred_at"] for m in listed) == ["2026-03-29T01:30:00Z", "2026-07-01T10:00:00Z"]


@pytest.mark.parametrize("zone, args", [
    ("Asia/Kolkata", ["add", "old", "-u", "e", "--occurred-at", "0001-01-01T00:00"]),
    ("UTC", ["add", "old", "-u", "e", "--occurred-at", "0001-01-01T00:00"]),
    ("America/Los_Angeles", ["add", "late", "-u", "e", "--expires-at", "9999-12-31T23:59"]),
    ("Asia/Kolkata", ["search", "old", "-u", "e", "--start", "0001-01-01T00:00"]),
    ("America/Los_Angeles", ["search", "late", "-u", "e", "--end", "9999-12-31T23:59"]),
])
def test_a_time_at_the_calendars_ends_is_a_one_line_error(run, machine_zone, zone, args):
    machine_zone(zone)
    result = run(*args)
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and result.output.count("\n") == 1, result.output


def test_a_window_from_the_first_year_searches_everything(run, machine_zone):
    machine_zone("UTC")
    run("add", "The keeper wrote in the lighthouse logbook.", "-u", "e", "--occurred-at", "0002-06-01T00:00")
    found = run("search", "lighthouse logbook", "-u", "e", "--start", "0001-01-01T00:00", "--json")
    assert _found(found) == ["The keeper wrote in the lighthouse logbook."]
