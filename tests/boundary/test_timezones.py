"""Times (issue 18): stored in UTC, shown in the user's zone with the zone named; `doctor` finds no fault
after an add with an offset (`mirix add --occurred-at 2024-05-12T20:00:00-07:00` was stale right after)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.records import EpisodicMemory
from mirix_py.server import create_app
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


# ---------------------------------------------------------------- the speaker's clock (MIRIX_TIMEZONE)

DENTIST = "I went to the dentist yesterday, and tonight I cooked lasagna for Priya."
LA_TEXT = ("[1 January 2026, 23:30] Maya: I went to the dentist yesterday (31 December 2025), "
           "and tonight (1 January 2026) I cooked lasagna for Priya.")
UTC_TEXT = ("[2 January 2026, 07:30] Maya: I went to the dentist yesterday (1 January 2026), "
            "and tonight (2 January 2026) I cooked lasagna for Priya.")


@pytest.fixture
def mx_in(tmp_path, embedder, monkeypatch, backend):
    """An engine whose user lives in `zone` (MIRIX_TIMEZONE; None: unset), on SQLite and on PostgreSQL
    (the offset is kept in a memory's `fields`: no column, no migration)."""
    from mirix_py.engine import Mirix

    made = []

    def make(zone: str | None):
        if zone:
            monkeypatch.setenv("MIRIX_TIMEZONE", zone)
        else:
            monkeypatch.delenv("MIRIX_TIMEZONE", raising=False)
        made.append(Mirix(tmp_path / f"data{len(made)}", embedder=embedder, database_url=backend))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


def _episode_texts(mx, user: str) -> list[str]:
    return [m.search_text() for m in mx.list(user_id=user, memory_types=["episodic"])]


def test_a_memory_states_its_day_as_the_speaker_lived_it(mx_in, user_id):
    from mirix_py.integrations.context import retrieve_context

    mx = mx_in("America/Los_Angeles")
    mx.add([{"role": "user", "name": "Maya", "content": DENTIST}], user_id=user_id, occurred_at="2026-01-01T23:30:00-08:00")
    (hit,) = mx.search("dentist lasagna", user_id=user_id, memory_types=["episodic"])
    assert hit.text == LA_TEXT
    assert "1 January 2026, 23:30:" in retrieve_context(mx, user_id, "when did Maya cook lasagna?").prompt
    # the same time given in UTC is read in MIRIX_TIMEZONE, through the input log too (wait=False)
    mx.add([{"role": "user", "name": "Maya", "content": DENTIST}], user_id=user_id + "q",
           occurred_at="2026-01-02T07:30:00Z", wait=False)
    mx.flush()
    assert _episode_texts(mx, user_id + "q") == [LA_TEXT]
    # a message's own time, given with its offset, over REST
    client = TestClient(create_app(mx, auth=False))
    body = {"content": [{"role": "user", "name": "Maya", "content": DENTIST, "occurred_at": "2026-01-01T23:30:00-08:00"}],
            "wait": True}
    assert client.post(f"/v1/users/{user_id}r/memories", json=body).status_code == 200
    assert _episode_texts(mx, user_id + "r") == [LA_TEXT]


def test_without_a_zone_a_memory_renders_in_utc_as_before(mx_in, user_id):
    mx = mx_in(None)
    mx.add([{"role": "user", "name": "Maya", "content": DENTIST}], user_id=user_id, occurred_at="2026-01-02T07:30:00+00:00")
    assert _episode_texts(mx, user_id) == [UTC_TEXT]
    (hit,) = mx.search("dentist lasagna", user_id=user_id, memory_types=["episodic"])
    assert hit.text == UTC_TEXT


def test_an_add_in_the_repeated_autumn_hour_is_stored_at_its_instant(mx_in, user_id):
    mx = mx_in(None)
    second_0215 = datetime.fromtimestamp(datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc).timestamp(),
                                         ZoneInfo("Europe/Berlin"))
    mx.add("First I fed the goldfish.", user_id=user_id, occurred_at=datetime(2026, 10, 25, 0, 45, tzinfo=timezone.utc))
    mx.add("Then I watered the orchid.", user_id=user_id, occurred_at=second_0215)
    listed = mx.list(user_id=user_id, memory_types=["episodic"])  # newest first
    assert [m.occurred_at for m in listed] == [datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc),
                                               datetime(2026, 10, 25, 0, 45, tzinfo=timezone.utc)]
    assert listed[0].search_text() == "[25 October 2026, 02:15] user: Then I watered the orchid."


def _day_start(zone, days_back: int) -> datetime:
    return datetime.combine((datetime.now(zone) - timedelta(days=days_back)).date(), datetime.min.time(), zone)


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", None])
def test_a_questions_yesterday_is_the_users_yesterday(mx_in, user_id, zone):
    from mirix_py.integrations.context import retrieve_context

    mx = mx_in(zone)
    clock = ZoneInfo(zone) if zone else timezone.utc
    before = _day_start(clock, 1)
    context = retrieve_context(mx, user_id, "What did I do yesterday?")
    chat = mx.chat("What did I do yesterday?", user_id=user_id, remember=False)
    assert context.start in (before, _day_start(clock, 1))  # either side of a midnight met mid-test
    assert chat.start in (before, _day_start(clock, 1))


def test_a_core_line_said_at_a_naive_time_is_refused_and_context_still_reads(mx_in, user_id):
    from mirix_py.errors import InvalidInput
    from mirix_py.integrations.context import retrieve_context

    mx = mx_in(None)
    block = mx.core_append("human", "Lives in Lisbon.", user_id=user_id)
    naive = {"said": {"Lives in Lisbon.": "2026-01-01T10:00:00"}}
    with pytest.raises(InvalidInput, match="timezone-aware"):
        mx.update(block.id, naive, user_id=user_id)
    client = TestClient(create_app(mx, auth=False))
    assert client.patch(f"/v1/users/{user_id}/memories/{block.id}", json={"fields": naive}).status_code == 422
    line = json.dumps({"memory": {"memory_type": "core", "id": "core_naive", "user_id": user_id + "i", "label": "human",
                                  "value": "Lives in Lisbon.", "said": naive["said"]}, "secret_ciphertext": None})
    with pytest.raises(InvalidInput):
        mx.import_([line])
    assert mx.get(block.id, user_id=user_id).said == block.said  # nothing written
    assert mx.list(user_id=user_id + "i") == []
    assert "Lives in Lisbon. (said" in retrieve_context(mx, user_id, "where does she live?").prompt
    assert client.post(f"/v1/users/{user_id}/context", json={"message": "where does she live?"}).status_code == 200


def test_unset_the_machines_zone_shows_each_time_with_its_own_seasons_offset(monkeypatch):
    """With MIRIX_TIMEZONE unset, times were shown at the machine's offset of now: in winter a summer
    memory read an hour off (its clock and, near midnight, its day)."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    zone = display_zone(None)
    assert local_when(datetime(2026, 7, 1, 12, tzinfo=timezone.utc), zone) == "2026-07-01 14:00 CEST"
    assert local_when(datetime(2026, 1, 1, 12, tzinfo=timezone.utc), zone) == "2026-01-01 13:00 CET"
