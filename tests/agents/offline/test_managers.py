"""Offline managers: routing and the operations each manager emits for a batch."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from mirix_py.agents.offline import managers
from mirix_py.boundary.inputs import normalize_add
from mirix_py.tools.ops import InsertOp, UpdateOp
from mirix_py.records import (
    CoreMemory, InputKind, InputRecord, MemoryType, Message, SearchHit, SemanticMemory, reader_text,
)

WHEN = datetime(2024, 2, 2, 8, 0, tzinfo=timezone.utc)


def _batch(*texts: str, kind: InputKind = InputKind.messages, role: str = "user"):
    record = InputRecord(user_id="u", kind=kind, occurred_at=WHEN,
                         messages=[Message(role=role, name="Ada", id=f"m{i}", content=t) for i, t in enumerate(texts)])
    return managers.prepare_batch("u", [record]), record


def test_plain_chat_routes_to_episodic_only():
    batch, _ = _batch("Hey! How have you been?", "Swamped with work, you?")
    assert managers.route(batch) == [MemoryType.episodic]
    ops = managers.episodic_ops(batch)
    assert [op.memory.summary for op in ops] == ["Hey! How have you been?", "Swamped with work, you?"]
    assert ops[0].memory.actor == "Ada" and ops[0].memory.occurred_at == WHEN


def test_secrets_go_to_the_vault_and_are_redacted_everywhere_else():
    batch, record = _batch("my password is s3cr3t-Pa55 ok")
    assert MemoryType.knowledge_vault in managers.route(batch)
    (vault_op,) = batch.vault_ops
    assert vault_op.memory.secret_value == "s3cr3t-Pa55" and vault_op.memory.id.startswith("kv_")
    text = batch.messages[0].text
    assert "s3cr3t" not in text and f"[vault:{vault_op.memory.id}]" in text
    assert vault_op.memory.source_ids == [record.id, "m0"]


def test_route_names_every_manager_with_work():
    batch, _ = _batch("My name is Ada.", "Tom lives in Rome.", "Setup:\n1. pip install x\n2. run x")
    assert set(managers.route(batch)) == {MemoryType.episodic, MemoryType.core, MemoryType.semantic,
                                          MemoryType.procedural}


def test_core_ops_append_then_update_and_trim_oldest():
    batch, _ = _batch("My name is Ada and I love chess.")
    (op,) = managers.core_ops(batch, lambda label: None)
    assert isinstance(op, InsertOp) and op.memory.value == "Ada: name: Ada\nAda: loves chess"
    block = CoreMemory(id="core_1", user_id="u", label="human", value="Ada: old fact\nAda: name: Ada", limit=40)
    (update,) = managers.core_ops(batch, lambda label: block)
    assert isinstance(update, UpdateOp) and update.memory_id == "core_1"
    assert update.fields["value"].endswith("Ada: loves chess") and "old fact" not in update.fields["value"]
    assert len(update.fields["value"]) <= 40


def test_core_ops_ignore_assistant_messages_and_known_facts():
    batch, _ = _batch("My name is Ada.", role="assistant")
    assert managers.core_ops(batch, lambda label: None) == []
    batch, _ = _batch("My name is Ada.")
    block = CoreMemory(id="core_1", user_id="u", label="human", value="Ada: name: Ada")
    (op,) = managers.core_ops(batch, lambda label: block)  # a fact held already: provenance only
    assert isinstance(op, UpdateOp) and op.fields == {} and "m0" in op.add_source_ids


def test_semantic_ops_insert_new_names_and_update_known_ones():
    batch, _ = _batch("Yesterday I heard that Tom is a pilot.", "Lena lives in Oslo.")
    known = SemanticMemory(id="sem_tom", user_id="u", name="Tom", summary="Tom is Ada's brother")
    ops = managers.semantic_ops(batch, lambda name: known if name == "Tom" else None)
    by_kind = {type(op).__name__: op for op in ops}
    assert by_kind["UpdateOp"].memory_id == "sem_tom" and "pilot" in by_kind["UpdateOp"].fields["details"]
    assert by_kind["InsertOp"].memory.name == "Lena"


def test_document_becomes_a_resource():
    text = "# Travel policy\n\nEmployees book economy class for flights under six hours. " * 3
    batch, _ = _batch(text, kind=InputKind.document)
    (op,) = managers.resource_ops(batch)
    assert op.memory.title == "Travel policy" and op.memory.content == text


def test_a_long_message_is_kept_whole_unless_a_resource_keeps_it():
    middling = " ".join(f"Point {i}: the rota and the plants were discussed at length." for i in range(14))
    assert managers.EPISODE_SUMMARY_CHARS < len(middling) < 1200  # too long for a summary, too short for a resource
    batch, _ = _batch(middling + " The launch moved to Friday 21 June.")
    assert managers.resource_ops(batch) == []
    (event,) = managers.episodic_ops(batch)
    assert event.memory.summary.endswith("The launch moved to Friday 21 June.") and not event.memory.details

    pasted = middling * 2
    batch, _ = _batch(pasted)
    (resource,) = managers.resource_ops(batch)
    (event,) = managers.episodic_ops(batch)
    assert event.memory.summary.endswith("…") and event.memory.details == "full text kept as a resource"
    assert resource.memory.content == pasted


# ---------------------------------------------------------------- the speaker's clock

LA = ZoneInfo("America/Los_Angeles")
BERLIN = ZoneInfo("Europe/Berlin")


def _told(*texts: str, occurred_at: str, zone=None):
    record = normalize_add([{"role": "user", "name": "Maya", "content": t} for t in texts], user_id="u",
                           occurred_at=occurred_at, source_id=None, kind="text", max_chars=10_000)
    return managers.prepare_batch("u", [record], **({"zone": zone} if zone else {}))


def test_an_episode_in_the_repeated_autumn_hour_keeps_its_instant_and_order():
    second_0215 = datetime.fromtimestamp(datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc).timestamp(), BERLIN)
    record = normalize_add([{"content": "I watered the orchid."}, {"content": "Then I fed the cat."}], user_id="u",
                           occurred_at=second_0215, source_id=None, kind="text", max_chars=1000)
    ops = managers.episodic_ops(managers.prepare_batch("u", [record]))
    assert [op.memory.occurred_at for op in ops] == [datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc),
                                                    datetime(2026, 10, 25, 1, 15, 0, 1, tzinfo=timezone.utc)]
    assert ops[0].memory.search_text() == "[25 October 2026, 02:15] user: I watered the orchid."


def test_an_episode_states_the_day_the_speaker_lived():
    batch = _told("I went to the dentist yesterday, and tonight I cooked lasagna for Priya.",
                  occurred_at="2026-01-01T23:30:00-08:00")
    (op,) = managers.episodic_ops(batch)
    assert op.memory.occurred_at == datetime(2026, 1, 2, 7, 30, tzinfo=timezone.utc)
    assert op.memory.search_text() == ("[1 January 2026, 23:30] Maya: I went to the dentist yesterday "
                                       "(31 December 2025), and tonight (1 January 2026) I cooked lasagna for Priya.")


def test_a_time_given_in_utc_is_read_in_the_users_zone_and_without_one_stays_utc():
    said = "I went to the dentist yesterday."
    (in_la,) = managers.episodic_ops(_told(said, occurred_at="2026-01-02T07:30:00Z", zone=LA))
    assert in_la.memory.said_offset_minutes == -480
    assert in_la.memory.search_text() == "[1 January 2026, 23:30] Maya: I went to the dentist yesterday (31 December 2025)."
    (plain,) = managers.episodic_ops(_told(said, occurred_at="2026-01-02T07:30:00Z"))
    assert plain.memory.said_offset_minutes is None
    assert plain.memory.search_text() == "[2 January 2026, 07:30] Maya: I went to the dentist yesterday (1 January 2026)."
    # an offset given with the time is the speaker's own, whatever the user's zone
    (given,) = managers.episodic_ops(_told(said, occurred_at="2026-01-02T09:30:00+02:00", zone=LA))
    assert given.memory.said_offset_minutes == 120


def test_a_fact_made_by_the_rules_is_said_on_the_speakers_day():
    batch = _told("My sister Anna is a painter.", occurred_at="2026-01-01T23:45:00-08:00")
    (fact,) = [op.memory for op in managers.semantic_ops(batch, lambda name: None)]
    hit = SearchHit(text=fact.search_text(), score=1.0, memory=fact, method="bm25")
    assert reader_text(hit).endswith("(said 1 January 2026)")
