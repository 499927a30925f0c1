"""Times (issue 18): stored in UTC, shown in the user's zone with the zone named; `doctor` finds no fault
after an add with an offset (`mirix add --occurred-at 2024-05-12T20:00:00-07:00` was stale right after)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.records import EpisodicMemory
from mirix_py.settings import Settings
from mirix_py.boundary.timezones import display_zone, local_when, shown_text, zone_name

LA = display_zone("America/Los_Angeles")
EVENING = "2024-05-12T20:00:00-07:00"


def test_records_keep_times_in_utc():
    memory = EpisodicMemory(user_id="u", summary="dinner",
                            occurred_at=datetime(2024, 5, 12, 20, tzinfo=timezone(timedelta(hours=-7))))
    assert memory.occurred_at == datetime(2024, 5, 13, 3, tzinfo=timezone.utc)
    assert memory.occurred_at.utcoffset() == timedelta(0)
    with pytest.raises(ValidationError):
        EpisodicMemory(user_id="u", summary="dinner", occurred_at=datetime(2024, 5, 12, 20))


def test_times_are_shown_in_the_zone_with_its_name():
    moment = datetime(2024, 5, 13, 3, tzinfo=timezone.utc)
    assert local_when(moment, LA) == "2024-05-12 20:00 PDT"
    assert zone_name(LA) == "America/Los_Angeles"
    assert shown_text("[13 May 2024, 03:00] user: dinner", moment, LA) == "[2024-05-12 20:00 PDT] user: dinner"
    assert shown_text("Tom: Tom is a pilot", moment, LA) == "Tom: Tom is a pilot"  # no time in it: as it is


def test_the_default_zone_is_the_machines():
    assert display_zone(None).utcoffset(datetime.now()) == datetime.now().astimezone().utcoffset()


def test_an_unknown_zone_is_refused_when_the_settings_are_made():
    with pytest.raises(ValidationError, match="unknown time zone"):
        Settings(timezone="Mars/Olympus_Mons")


def test_doctor_is_clean_after_an_add_with_an_offset(mx_sqlite, user_id):
    mx_sqlite.add("We had dinner at Casa Mia. I prefer window seats.", user_id=user_id, occurred_at=EVENING)
    report = mx_sqlite.doctor()
    assert report.clean, report.summary()
    episode = mx_sqlite.list(user_id=user_id, memory_types=["episodic"])[0]
    assert episode.occurred_at == datetime(2024, 5, 13, 3, tzinfo=timezone.utc)


@pytest.fixture
def run(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")

    def invoke(*args: str):
        return CliRunner().invoke(app, list(args), catch_exceptions=False)

    return invoke


def test_cli_shows_the_users_zone_and_doctor_finds_nothing(run, monkeypatch):
    monkeypatch.setenv("MIRIX_TIMEZONE", "America/Los_Angeles")
    monkeypatch.setattr("mirix_py.cli.commands.console.width", 200)  # one line per row
    assert run("add", "We had dinner at Casa Mia.", "--user", "ada", "--occurred-at", EVENING).exit_code == 0
    listed = run("list", "--user", "ada")
    assert "America/Los_Angeles" in listed.stdout and "2024-05-12 20:00 PDT" in listed.stdout
    assert "03:00" not in listed.stdout
    stored = json.loads(run("list", "--user", "ada", "--json").stdout)
    assert stored[0]["occurred_at"].startswith("2024-05-13T03:00:00") and stored[0]["occurred_at"].endswith(("Z", "+00:00"))
    doctor = run("doctor", "--json")
    assert json.loads(doctor.stdout)["clean"] is True, doctor.stdout


def test_cli_history_names_the_zone(run, monkeypatch):
    monkeypatch.setenv("MIRIX_TIMEZONE", "Europe/Lisbon")
    monkeypatch.setattr("mirix_py.cli.commands.console.width", 200)
    run("add", "My brother Tom is a pilot.", "--user", "ada")
    (tom,) = json.loads(run("list", "--user", "ada", "--type", "semantic", "--json").stdout)
    shown = run("show", tom["id"], "--user", "ada", "--history")
    assert "times in Europe/Lisbon" in shown.stdout and ("WET" in shown.stdout or "WEST" in shown.stdout)


def test_doctor_is_clean_after_adds_of_every_kind_in_other_zones(mx_sqlite, user_id):
    mx_sqlite.add([{"role": "user", "content": "My sister Mia moved to Porto.", "occurred_at": "2024-05-12T23:30:00+05:30"},
                   {"role": "assistant", "content": "Nice!", "occurred_at": "2024-05-12T10:00:00-09:00"}],
                  user_id=user_id)
    mx_sqlite.add("# Trip notes\n\nTrain at 9, hotel near the river. " * 20, user_id=user_id, kind="document",
                  occurred_at="2024-05-13T01:00:00+14:00")
    mx_sqlite.add("How to deploy:\n1. git pull\n2. make build", user_id=user_id, occurred_at=EVENING)
    assert mx_sqlite.doctor().clean
    assert all(m.occurred_at is None or m.occurred_at.utcoffset() == timedelta(0) for m in mx_sqlite.list(user_id=user_id))
