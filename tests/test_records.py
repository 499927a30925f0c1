"""Records validate what callers and models hand in; the committed JSON Schemas match the models."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from mirix_py.records import (
    MASK, MEMORY_ADAPTER, CoreMemory, EpisodicMemory, KnowledgeVaultMemory, Message, ProceduralMemory, ResourceMemory,
    SearchHit, SemanticMemory, reader_text,
)
from mirix_py.cli.schemas import all_schemas, default_schema_dir, render


def test_discriminated_union_picks_the_type():
    memory = MEMORY_ADAPTER.validate_python({"memory_type": "procedural", "user_id": "u", "summary": "Deploy",
                                             "steps": ["build", "ship"]})
    assert isinstance(memory, ProceduralMemory)
    with pytest.raises(ValidationError):
        MEMORY_ADAPTER.validate_python({"memory_type": "dreams", "user_id": "u"})


def test_naive_datetimes_and_unknown_fields_are_rejected():
    with pytest.raises(ValidationError, match="timezone-aware"):
        EpisodicMemory(user_id="u", summary="x", occurred_at=datetime(2024, 1, 1))
    with pytest.raises(ValidationError):
        EpisodicMemory(user_id="u", summary="x", colour="red")
    with pytest.raises(ValidationError):
        Message(role="user", content="")


def test_prompt_text_of_each_type():
    when = datetime(2024, 1, 2, 3, 4, tzinfo=timezone.utc)
    assert EpisodicMemory(user_id="u", summary="Met Bo", actor="Ada", occurred_at=when).search_text() == \
        "[2 January 2024, 03:04] Ada: Met Bo"
    assert EpisodicMemory(user_id="u", summary="Met Bo", actor="Ada", occurred_at=when).embedding_text() == "Ada: Met Bo"
    assert ProceduralMemory(user_id="u", summary="Tea", steps=["boil"]).embedding_text() == "Tea: 1. boil"
    assert ProceduralMemory(user_id="u", summary="Tea", steps=["boil", "steep"]).search_text() == "Tea: 1. boil 2. steep"
    vault = KnowledgeVaultMemory(user_id="u", caption="gym locker code", secret_value="4321")
    assert "4321" not in vault.search_text()
    assert vault.masked().secret_value == MASK
    content = "Page 1\n\n" + "word " * 1000 + "\nPage 9: the   boiler code is in the red binder\n"
    resource = ResourceMemory(user_id="u", title="Notes", content=content)
    # all of it is searchable, as it is; the vector reads the opening only
    assert resource.search_text() == "Notes (text):\n" + content
    assert len(resource.embedding_text()) < 1100 and "boiler" not in resource.embedding_text()


def test_committed_schemas_match_the_models():
    folder = default_schema_dir()
    expected = all_schemas()
    on_disk = {p.name.removesuffix(".schema.json"): p.read_text() for p in folder.glob("*.schema.json")}
    assert set(on_disk) == set(expected), "run `mirix schemas export`"
    for name, schema in expected.items():
        assert on_disk[name] == render(schema), f"schemas/{name}.schema.json is stale: run `mirix schemas export`"


# ---------------------------------------------------------------- the speaker's clock

LA_EVENING = datetime(2026, 1, 2, 7, 30, tzinfo=timezone.utc)  # 1 January 2026, 23:30 in Los Angeles
DENTIST = "I went to the dentist yesterday, and tonight I cooked lasagna for Priya."


def test_an_episode_states_its_day_and_relative_phrases_on_the_speakers_clock():
    said = EpisodicMemory(user_id="u", summary=DENTIST, actor="Maya", occurred_at=LA_EVENING, said_offset_minutes=-480)
    assert said.search_text() == ("[1 January 2026, 23:30] Maya: I went to the dentist yesterday (31 December 2025), "
                                  "and tonight (1 January 2026) I cooked lasagna for Priya.")
    assert said.occurred_at == LA_EVENING  # kept in UTC all the same


def test_an_episode_without_an_offset_renders_in_utc_as_before():
    plain = EpisodicMemory(user_id="u", summary=DENTIST, actor="Maya", occurred_at=LA_EVENING)
    assert plain.search_text() == ("[2 January 2026, 07:30] Maya: I went to the dentist yesterday (1 January 2026), "
                                   "and tonight (2 January 2026) I cooked lasagna for Priya.")
    # a row stored before the field existed reads the same
    stored = MEMORY_ADAPTER.validate_python({"memory_type": "episodic", "user_id": "u", "summary": DENTIST,
                                             "actor": "Maya", "occurred_at": "2026-01-02T07:30:00Z"})
    assert stored.search_text() == plain.search_text()


def test_a_fact_is_said_on_the_speakers_day():
    fact = SemanticMemory(user_id="u", name="Anna", summary="Anna is a painter", occurred_at=LA_EVENING,
                          said_offset_minutes=-480)
    hit = SearchHit(text=fact.search_text(), score=1.0, memory=fact, method="bm25")
    assert reader_text(hit) == "Anna: Anna is a painter (said 1 January 2026)"
    utc_hit = hit.model_copy(update={"memory": fact.model_copy(update={"said_offset_minutes": None})})
    assert reader_text(utc_hit) == "Anna: Anna is a painter (said 2 January 2026)"


def test_an_offset_no_zone_keeps_or_that_takes_the_time_off_the_calendar_is_refused():
    with pytest.raises(ValidationError):
        EpisodicMemory(user_id="u", summary="x", occurred_at=LA_EVENING, said_offset_minutes=20 * 60)
    with pytest.raises(ValidationError, match="off the calendar"):
        EpisodicMemory(user_id="u", summary="x", occurred_at=datetime(1, 1, 1, tzinfo=timezone.utc),
                       said_offset_minutes=-60)
    with pytest.raises(ValidationError, match="farther from UTC than any zone"):
        Message(content="hi", occurred_at="2026-01-01T10:00:00+20:00")


def test_a_message_keeps_its_time_in_utc_and_the_offset_it_was_given_in():
    given = Message(content="hi", occurred_at="2026-01-01T23:30:00-08:00")
    assert given.occurred_at == LA_EVENING and given.occurred_at.utcoffset() == timedelta(0)
    assert given.said_offset_minutes == -480
    assert Message.model_validate(given.model_dump(mode="json")) == given  # as the input log reads it back
    assert Message(content="hi", occurred_at="2026-01-02T07:30:00+00:00").said_offset_minutes is None
    # the repeated autumn hour: the second 02:15 in Berlin is 01:15 UTC, one hour on the clock
    second = datetime(2026, 10, 25, 2, 15, fold=1, tzinfo=ZoneInfo("Europe/Berlin"))
    folded = Message(content="hi", occurred_at=second)
    assert folded.occurred_at == datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc) and folded.said_offset_minutes == 60


def test_a_core_line_said_at_a_naive_time_is_refused():
    with pytest.raises(ValidationError, match="timezone-aware"):
        CoreMemory(user_id="u", label="human", value="Lives in Lisbon.", said={"Lives in Lisbon.": "2026-01-01T10:00:00"})
    block = CoreMemory(user_id="u", label="human", value="Lives in Lisbon.\nWorks as a nurse.",
                       said={"Lives in Lisbon.": "2026-01-01T05:00:00+14:00", "Works as a nurse.": "2026-02-01T10:00:00Z"})
    assert block.said["Lives in Lisbon."] == datetime(2025, 12, 31, 15, tzinfo=timezone.utc)
    assert block.dated_lines() == ["Works as a nurse. (said 1 February 2026)", "Lives in Lisbon. (said 31 December 2025)"]


def test_the_same_words_embed_alike_whatever_the_vault_ids_of_their_secrets():
    said = [EpisodicMemory(user_id="ada", summary=f"the wifi password is [vault:kv_{ref}], and the gate [redacted:pin]")
            for ref in ("1f2e3d", "9a8b7c")]
    assert said[0].search_text() != said[1].search_text()  # the text keeps which entry it means
    assert said[0].embedding_text() == said[1].embedding_text() == \
        "user: the wifi password is [secret], and the gate [secret]"
    tip = ResourceMemory(user_id="ada", title="Router", summary="login [vault:kv_77aa]", content="admin")
    assert "[vault:" not in tip.embedding_text() and "[secret]" in tip.embedding_text()
