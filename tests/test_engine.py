"""The SDK contract: add/search/get/list/update/delete/history/delete_user, core memory,
export/import, AsyncMirix, and bad input that writes nothing."""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import threading
from datetime import datetime, timezone

import pytest
from waiting import wait_for

from mirix_py.facade.async_mirix import ASYNC_METHODS, AsyncMirix
from mirix_py.engine import Mirix
from mirix_py.errors import CoreMemoryFull, InvalidInput, MemoryNotFound
from mirix_py.llm.loop import EngineClosed
from mirix_py.records import InputStatus
from mirix_py.settings import Settings

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)

MESSAGES = [
    {"role": "user", "name": "Caroline", "id": "D1:1", "content": "I went to a LGBTQ support group yesterday."},
    {"role": "user", "name": "Melanie", "id": "D1:2", "content": "That's great! My sister Anna is a painter."},
]


def test_add_messages_keeps_ids_speakers_and_time(mx, user_id):
    result = mx.add(MESSAGES, user_id=user_id, occurred_at=WHEN, source_id="session-1")
    assert result.status.value == "processed" and result.mode == "offline"
    assert len(result.input_ids) == 1
    episodes = {m.source_ids[-1]: m for m in mx.list(user_id=user_id, memory_types=["episodic"])}
    assert set(episodes) == {"D1:1", "D1:2"}
    first = episodes["D1:1"]
    assert first.actor == "Caroline" and first.occurred_at == WHEN
    assert result.input_ids[0] in first.source_ids and "session-1" in first.source_ids
    hits = mx.search("support group", user_id=user_id, limit=3)
    assert "D1:1" in hits[0].memory.source_ids
    semantic = mx.list(user_id=user_id, memory_types=["semantic"])
    assert any(m.name == "Anna" and "D1:2" in m.source_ids for m in semantic)


def test_add_plain_text_defaults_time_to_now(mx, user_id):
    before = datetime.now(timezone.utc)
    mx.add("Booked a table at Luigi's for Friday", user_id=user_id)
    (episode,) = mx.list(user_id=user_id)
    assert episode.occurred_at >= before.replace(microsecond=0)
    assert episode.actor == "user"


def test_add_accepts_iso_strings_with_zone(mx, user_id):
    mx.add("Ran 10k", user_id=user_id, occurred_at="2024-01-02T03:04:05+02:00")
    (episode,) = mx.list(user_id=user_id)
    assert episode.occurred_at == datetime(2024, 1, 2, 1, 4, 5, tzinfo=timezone.utc)


@pytest.mark.parametrize("content, kwargs, match", [
    ("", {}, "empty"),
    ("   \n", {}, "empty"),
    (None, {}, "required"),
    ([], {}, "empty list"),
    (b"\x89PNG\r\n\x1a\n", {}, "bytes"),
    ("abc\x00\x01def", {}, "control"),
    ([{"role": "user"}], {}, "message 0"),
    ([{"role": "robot", "content": "hi"}], {}, "message 0"),
    (["just a string"], {}, "message 0"),
    ("hello", {"occurred_at": datetime(2024, 1, 1)}, "time zone"),
    ("hello", {"occurred_at": "yesterday-ish"}, "ISO 8601"),
    ("hello", {"user_id": ""}, "user_id"),
    ("hello", {"user_id": "u" * 300}, "user_id"),
    ("hello", {"user_id": "ada\x00"}, "user_id holds control"),
    ("hello", {"user_id": "ada\nbob"}, "user_id holds control"),
    ("hello", {"user_id": ".."}, "is a path step, not an id"),
    ("hello", {"user_id": "."}, "is a path step, not an id"),
    ("bad \ud800 half", {}, "lone surrogate at position 4"),
    ([{"role": "user", "content": "hi", "name": "Ada\x00"}], {}, r"message 0.name holds a NUL"),
    ("hello", {"source_id": "s\x00"}, "source_id holds a NUL"),
    ("hello", {"occurred_at": "9999-12-31T23:59:59-23:59"}, "out of range once converted to UTC"),
    ("hello", {"occurred_at": "0001-01-01T00:00:00+05:00"}, "out of range once converted to UTC"),
    ("hello", {"expires_at": "9999-12-31T23:59:59-23:59"}, "out of range once converted to UTC"),
    # inside UTC, but a week either side runs off the calendar (it failed the input's batch)
    ("hello", {"occurred_at": "0001-01-01T00:00:00+00:00"}, "outside the years 2 to 9998"),
    ("hello", {"occurred_at": "9999-12-31T23:59:59+00:00"}, "outside the years 2 to 9998"),
    ([{"role": "user", "content": "hi", "occurred_at": "9999-06-01T00:00:00+00:00"}], {},
     "message 0 occurred_at .* outside the years 2 to 9998"),
    (12345, {}, "string or a list"),
])
def test_bad_input_is_rejected_and_writes_nothing(mx, user_id, content, kwargs, match):
    kwargs = {"user_id": user_id, **kwargs}
    with pytest.raises(InvalidInput, match=match):
        mx.add(content, **kwargs)
    assert mx.list(user_id=user_id) == []
    assert mx.store.count() == {}


def test_odd_arguments_to_undo_and_the_core_blocks_are_invalid_input(mx_sqlite, user_id):
    mx_sqlite.add("Carla planted tomatoes.", user_id=user_id)
    mx_sqlite.core_append("human", "Likes gardening and long walks.", user_id=user_id)
    block = mx_sqlite.core_memory(user_id=user_id)["human"]
    mx_sqlite.update(block.id, {"tags": ["x"]}, user_id=user_id)  # an API edit: a history event without an input
    for call, says in ((lambda: mx_sqlite.undo(None, user_id=user_id), "input_id must be an input's id"),
                       (lambda: mx_sqlite.core_rewrite("human", None, user_id=user_id), "value must be a string"),
                       (lambda: mx_sqlite.update(block.id, {"limit": 3}, user_id=user_id), "limit 3 is below the")):
        with pytest.raises(InvalidInput, match=says):
            call()
    assert mx_sqlite.core_memory(user_id=user_id)["human"].value == block.value


def test_counts_no_database_holds_are_refused(mx_sqlite, user_id):
    mx_sqlite.add("Carla planted tomatoes.", user_id=user_id)
    for call, says in ((lambda: mx_sqlite.list(user_id=user_id, offset=10**30), "offset .* larger than any count"),
                       (lambda: mx_sqlite.list(user_id=user_id, limit=2**64), "limit .* larger than any count"),
                       (lambda: mx_sqlite.search("tomatoes", user_id=user_id, limit=2**62), "at most 10,000"),
                       (lambda: mx_sqlite.search("tomatoes", user_id=user_id, context=10**30), "larger than any"),
                       # SQLite refuses a LIKE pattern of 50,000 bytes with a raw OperationalError
                       (lambda: mx_sqlite.search("t" * 60_000, user_id=user_id, method="string"),
                        "string search is at most 10,000 characters")):
        with pytest.raises(InvalidInput, match=says):
            call()
    assert len(mx_sqlite.list(user_id=user_id, offset=2**62)) == 0  # far, but a count: an empty page


def test_times_a_year_inside_the_calendar_are_remembered(mx_sqlite, user_id):
    for when in ("0002-01-01T00:00:00+00:00", "9998-12-31T23:59:59+00:00"):
        result = mx_sqlite.add(f"Carla planted tomatoes yesterday ({when[:4]}).", user_id=user_id, occurred_at=when)
        assert result.status.value == "processed" and result.error is None
    assert len(mx_sqlite.list(user_id=user_id, memory_types=["episodic"])) == 2


def test_strings_no_backend_can_store_are_refused_by_every_call_and_change_nothing(mx, user_id):
    """SQLite takes a NUL and PostgreSQL refuses it; neither may take a lone surrogate: each call
    refuses both alike on every layout, before anything is written."""
    mx.add("I went hiking with Sam on Sunday.", user_id=user_id)
    (episode,) = mx.list(user_id=user_id, memory_types=["episodic"])
    core = mx.core_append("human", "Likes: tea", user_id=user_id)
    counts, events = mx.store.count(), len(mx.history(episode.id, user_id=user_id))
    calls = {
        "summary holds a NUL": lambda: mx.update(episode.id, {"summary": "hik\x00ing"}, user_id=user_id),
        "summary is not valid Unicode": lambda: mx.update(episode.id, summary="hik\ud800ing", user_id=user_id),
        r"tags\[1\] holds a NUL": lambda: mx.update(episode.id, {"tags": ["walk", "sam\x00"]}, user_id=user_id),
        "value holds a NUL": lambda: mx.core_append("human", "Likes\x00: coffee", user_id=user_id),
        "value is not valid Unicode": lambda: mx.core_rewrite("human", "Likes: \udc80", user_id=user_id),
        "search query is not valid Unicode": lambda: mx.search("hiking \ud800", user_id=user_id),
        "message holds a NUL": lambda: mx.chat("where did I\x00 go?", user_id=user_id),
        "message is not valid Unicode": lambda: mx.chat("where \udfff?", user_id=user_id),
        "unknown memory type": lambda: mx.list(user_id=user_id, memory_types=["dreams"]),
        "user_id holds control": lambda: mx.search("hiking", user_id=user_id + "\x00"),
    }
    for match, call in calls.items():
        with pytest.raises(InvalidInput, match=match):
            call()
    assert mx.store.count() == counts
    assert mx.get(episode.id, user_id=user_id) == episode
    assert len(mx.history(episode.id, user_id=user_id)) == events
    assert mx.core_memory(user_id=user_id)["human"].value == core.value


CONTROLS = {"BEL": "\x07", "ESC": "\x1b", "DEL": "\x7f", "CSI": "\x9b", "NEL": "\x85"}


@pytest.mark.parametrize("char", CONTROLS.values(), ids=CONTROLS.keys())
def test_control_characters_are_refused_by_every_call_that_takes_text_and_change_nothing(mx, user_id, char):
    """The README's rule, as REST applies it: text holds no control character but a tab or a line break
    (an ESC in a name reached the core block, and `mirix list` ran it in the terminal)."""
    mx.add("I went hiking with Sam on Sunday.", user_id=user_id)
    (episode,) = mx.list(user_id=user_id, memory_types=["episodic"])
    core = mx.core_append("human", "Likes: tea", user_id=user_id)
    counts, events = mx.store.count(), len(mx.history(episode.id, user_id=user_id))
    logged = len(mx.inputs.by_status(InputStatus.processed, user_id=user_id))
    calls = [
        (r"summary holds a control character \(\\x[0-9a-f]{2}\) at position 3",
         lambda: mx.update(episode.id, {"summary": f"hik{char}ing"}, user_id=user_id)),
        (r"tags\[1\] holds a control", lambda: mx.update(episode.id, tags=["walk", f"sam{char}"], user_id=user_id)),
        ("value holds a control", lambda: mx.core_append("human", f"Likes{char}: coffee", user_id=user_id)),
        ("value holds a control", lambda: mx.core_rewrite("human", f"Likes: {char}coffee", user_id=user_id)),
        ("actor holds a control", lambda: mx.update(episode.id, {"summary": "hiking"}, user_id=user_id,
                                                    actor=f"script{char}")),
        ("actor holds a control", lambda: mx.delete(episode.id, user_id=user_id, actor=f"script{char}")),
        ("actor holds a control", lambda: mx.core_append("human", "Likes: coffee", user_id=user_id,
                                                         actor=f"script{char}")),
        ("message 0.name holds a control", lambda: mx.add(
            [{"role": "user", "name": f"Bo{char}", "content": "I like green tea."}], user_id=user_id)),
        ("content holds .*control character", lambda: mx.add(f"I like {char}green tea.", user_id=user_id)),
        ("source_id holds a control", lambda: mx.add("I like green tea.", user_id=user_id, source_id=f"s{char}")),
        ("search query holds a control", lambda: mx.search(f"hik{char}ing", user_id=user_id)),
        ("message holds a control", lambda: mx.chat(f"where did I{char} go?", user_id=user_id)),
    ]
    for match, call in calls:
        with pytest.raises(InvalidInput, match=match):
            call()
    assert mx.store.count() == counts
    assert len(mx.inputs.by_status(InputStatus.processed, user_id=user_id)) == logged
    assert mx.get(episode.id, user_id=user_id) == episode
    assert len(mx.history(episode.id, user_id=user_id)) == events
    assert mx.core_memory(user_id=user_id)["human"].value == core.value


def test_a_core_block_an_older_version_stored_with_a_control_character_still_takes_new_lines(mx, user_id):
    """Only what a caller sends is refused: a block holding a control character from before (planted
    here through the store, as an older version let `core_append` write it) takes appends, the SDK's
    and the rules' of a later add, instead of failing every input that adds a line to it."""
    from mirix_py.records import CoreMemory
    from mirix_py.tools.ops import InsertOp

    mx.store.apply([InsertOp(memory=CoreMemory(user_id=user_id, label="human", value="Name: Ann\x1b[31m"))],
                   user_id=user_id, actor="older version")
    assert "Likes: tea" in mx.core_append("human", "Likes: tea", user_id=user_id).value
    added = mx.add("My name is Ann and I am allergic to peanuts.", user_id=user_id)
    assert added.status is InputStatus.processed, added.error
    assert mx.core_memory(user_id=user_id)["human"].value.startswith("Name: Ann\x1b[31m")


def test_tabs_and_line_breaks_stay_storable_text(mx_sqlite, user_id):
    mx_sqlite.add("Shopping list:\r\n- milk\t x2", user_id=user_id)
    (episode,) = mx_sqlite.list(user_id=user_id, memory_types=["episodic"])
    assert mx_sqlite.update(episode.id, summary="milk\tx2\r\neggs", user_id=user_id).summary == "milk\tx2\r\neggs"
    assert mx_sqlite.core_append("human", "Likes:\ttea", user_id=user_id).value.endswith("Likes:\ttea")
    assert mx_sqlite.search("milk\teggs\n", user_id=user_id)


def test_bad_arguments_of_reads_and_updates_are_clear_errors(mx_sqlite, user_id):
    """Counts must be whole numbers and ranges run forwards; `list` reads its times as `search` does
    (a naive datetime reached the database, a string raised AttributeError, a float limit TypeError)."""
    mx_sqlite.add("I ran a marathon in Berlin.", user_id=user_id, occurred_at="2024-09-29T09:00:00+02:00")
    late, early = datetime(2025, 1, 1, tzinfo=timezone.utc), datetime(2024, 1, 1, tzinfo=timezone.utc)
    calls = {
        "start .* is after end": lambda: mx_sqlite.search("marathon", user_id=user_id, start=late, end=early),
        "start 2025.* is after end": lambda: mx_sqlite.list(user_id=user_id, start=late, end=early),
        "start has no time zone": lambda: mx_sqlite.list(user_id=user_id, start=datetime(2024, 1, 1)),
        "limit must be a whole number, not str": lambda: mx_sqlite.search("marathon", user_id=user_id, limit="5"),
        "limit must be a whole number, not float": lambda: mx_sqlite.list(user_id=user_id, limit=2.5),
        "limit must be a whole number, not bool": lambda: mx_sqlite.search("marathon", user_id=user_id, limit=True),
        "context must be a whole number": lambda: mx_sqlite.search("marathon", user_id=user_id, context=1.5),
        "offset must be a whole number": lambda: mx_sqlite.list(user_id=user_id, offset="1"),
        "fields must be a dict": lambda: mx_sqlite.update("epi_x", "summary", user_id=user_id),
        "end 9999.* out of range": lambda: mx_sqlite.search("marathon", user_id=user_id, end="9999-12-31T23:59:59-23:59"),
    }
    for match, call in calls.items():
        with pytest.raises(InvalidInput, match=match):
            call()
    (episode,) = mx_sqlite.list(user_id=user_id, start="2024-09-01T00:00:00Z", end="2024-10-01T00:00:00Z")
    assert "marathon" in episode.summary
    with pytest.raises(InvalidInput, match="occurred_at: datetime is out of range once converted to UTC"):
        mx_sqlite.update(episode.id, {"occurred_at": "9999-12-31T23:59:59-23:59"}, user_id=user_id)
    assert mx_sqlite.get(episode.id, user_id=user_id) == episode


def test_oversized_input_is_rejected(tmp_path, embedder, user_id):
    settings = Settings(data_dir=tmp_path / "d", max_input_chars=100)
    with Mirix(settings=settings, embedder=embedder) as mx:
        with pytest.raises(InvalidInput, match="over the limit of 100"):
            mx.add("x" * 101, user_id=user_id)
        assert mx.store.count() == {}
        assert mx.add("x" * 100, user_id=user_id).status.value == "processed"


def test_unknown_ids_are_clear_errors(mx, user_id):
    for call in (lambda: mx.get("epi_nope", user_id=user_id), lambda: mx.delete("epi_nope", user_id=user_id),
                 lambda: mx.update("epi_nope", user_id=user_id, summary="x"),
                 lambda: mx.history("epi_nope", user_id=user_id)):
        with pytest.raises(MemoryNotFound, match="epi_nope"):
            call()


def test_core_memory_append_limit_and_rewrite(mx, user_id):
    blocks = mx.core_memory(user_id=user_id)
    assert set(blocks) == {"persona", "human"} and blocks["human"].value == ""
    mx.core_append("human", "Name: Ada", user_id=user_id)
    block = mx.core_append("human", "Likes: tea", user_id=user_id)
    assert block.value == "Name: Ada\nLikes: tea"
    with pytest.raises(CoreMemoryFull, match="over its limit"):
        mx.core_append("human", "x" * 5000, user_id=user_id)
    assert mx.core_memory(user_id=user_id)["human"].value == "Name: Ada\nLikes: tea"
    rewritten = mx.core_rewrite("human", "Name: Ada Lovelace", user_id=user_id)
    assert rewritten.value == "Name: Ada Lovelace" and rewritten.id == block.id
    with pytest.raises(InvalidInput, match="label"):
        mx.core_append("diary", "x", user_id=user_id)
    ops = [e.operation.value for e in mx.history(block.id, user_id=user_id)]
    assert ops == ["insert", "update", "update"]


def test_offline_rules_fill_core_vault_procedural(mx, user_id):
    mx.add([{"role": "user", "name": "Ada", "content": "My name is Ada and I love hiking."},
            {"role": "user", "name": "Ada", "content": "Deploy steps:\n1. git pull\n2. make build\n3. make deploy"},
            {"role": "user", "name": "Ada", "content": "My email is ada@example.org"}], user_id=user_id)
    human = mx.core_memory(user_id=user_id)["human"].value
    assert "name: Ada" in human and "hiking" in human
    (proc,) = mx.list(user_id=user_id, memory_types=["procedural"])
    assert proc.steps == ["git pull", "make build", "make deploy"] and proc.entry_type == "script"
    (vault,) = mx.list(user_id=user_id, memory_types=["knowledge_vault"])
    assert vault.entry_type == "email"
    assert mx.get(vault.id, user_id=user_id, reveal=True).secret_value == "ada@example.org"


def test_export_import_round_trip_keeps_ids_and_secrets(mx, user_id, tmp_path, embedder):
    mx.add(MESSAGES + [{"role": "user", "content": "my password is Tr0ub4dor&3x"}], user_id=user_id, occurred_at=WHEN)
    buffer = io.StringIO()
    n = mx.export(buffer, user_id=user_id)
    assert n == len(mx.list(user_id=user_id))
    text = buffer.getvalue()
    assert "Tr0ub4dor" not in text
    key = mx.settings.data_dir / "vault.key"
    target_settings = Settings(data_dir=tmp_path / "copy", vault_key=key.read_text())
    with Mirix(settings=target_settings, embedder=embedder) as other:
        counts = other.import_(text.splitlines())
        assert counts == {"imported": n, "skipped_existing": 0}
        assert {m.id for m in other.list(user_id=user_id)} == {m.id for m in mx.list(user_id=user_id)}
        vault = other.list(user_id=user_id, memory_types=["knowledge_vault"])[0]
        assert other.get(vault.id, user_id=user_id, reveal=True).secret_value == "Tr0ub4dor&3x"
        assert other.search("support group", user_id=user_id)[0].memory.source_ids[-1] == "D1:1"
        assert other.import_(text.splitlines())["skipped_existing"] == n
        again = io.StringIO()
        other.export(again, user_id=user_id)
        def memories(lines: str) -> list[dict]:  # a secret's ciphertext differs each time it is sealed
            return sorted((json.loads(line)["memory"] for line in lines.splitlines()), key=lambda m: m["id"])

        assert memories(again.getvalue()) == memories(text)  # every field, times included


def _export_lines(mx, *users: str) -> list[dict]:
    for user in users:
        mx.add(f"{user} bought a red bicycle in Lyon", user_id=user)
    buffer = io.StringIO()
    mx.export(buffer)
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


@pytest.mark.parametrize("spoil, message", [
    (lambda line: line["memory"].update(summary="a NUL\x00 here"), "line 3: .*NUL"),
    (lambda line: line["memory"].update(id="../../etc/passwd"), "line 3: memory id '../../etc/passwd' is not an id"),
    (lambda line: line["memory"].update(user_id="bo\nb"), "line 3: user_id holds control characters"),
])
def test_import_writes_nothing_when_a_later_users_line_is_refused(mx, tmp_path, embedder, spoil, message):
    lines = _export_lines(mx, "ana", "bob")
    (bobs_episode,) = [i for i, line in enumerate(lines)
                       if line["memory"]["user_id"] == "bob" and line["memory"]["memory_type"] == "episodic"]
    assert lines[0]["memory"]["user_id"] == "ana"  # first: a write per user would have written her lines already
    spoil(lines[bobs_episode])
    with Mirix(tmp_path / "other", embedder=embedder) as other:
        with pytest.raises(InvalidInput, match=message.replace("line 3", f"line {bobs_episode + 1}")):
            other.import_([json.dumps(line) for line in lines])
        assert other.store.count() == {}


def test_import_refuses_an_id_given_twice(mx, tmp_path, embedder):
    lines = _export_lines(mx, "ana", "bob")
    twin = dict(lines[-1], memory=dict(lines[-1]["memory"], id=lines[0]["memory"]["id"]))
    with Mirix(tmp_path / "other", embedder=embedder) as other:
        with pytest.raises(InvalidInput, match=f"line {len(lines) + 1}: .* is on line 1 too"):
            other.import_([json.dumps(line) for line in [*lines, twin]])
        assert other.store.count() == {}


def test_import_validates_every_line_first(mx, user_id, tmp_path, embedder):
    mx.add("Bought a red bicycle", user_id=user_id)
    buffer = io.StringIO()
    mx.export(buffer)
    lines = buffer.getvalue().splitlines() + ["{not json"]
    with Mirix(tmp_path / "other", embedder=embedder) as other:
        with pytest.raises(InvalidInput, match="line 2"):
            other.import_(lines)
        assert other.store.count() == {}


def test_import_refuses_secrets_under_another_key(mx, user_id, tmp_path, embedder):
    mx.add("my password is Tr0ub4dor&3x", user_id=user_id)
    buffer = io.StringIO()
    mx.export(buffer)
    with Mirix(tmp_path / "other", embedder=embedder) as other:
        with pytest.raises(InvalidInput, match="another vault key"):
            other.import_(buffer.getvalue().splitlines())
        assert other.store.count() == {}


def test_a_failing_manager_keeps_other_writes_and_marks_input_failed(mx_sqlite, user_id, monkeypatch):
    from mirix_py.agents.offline import managers

    def broken(batch, lookup):
        raise RuntimeError("semantic rules exploded")

    monkeypatch.setattr(managers, "semantic_ops", broken)
    result = mx_sqlite.add("Bob is my brother and he lives in Paris.", user_id=user_id)
    assert result.status.value == "failed" and "semantic rules exploded" in result.error
    assert mx_sqlite.list(user_id=user_id, memory_types=["episodic"])
    assert mx_sqlite.list(user_id=user_id, memory_types=["semantic"]) == []
    record = mx_sqlite.input_status(result.input_ids[0])
    assert record.status.value == "failed" and "semantic" in record.error
    monkeypatch.undo()
    (retried,) = mx_sqlite.retry_failed(user_id=user_id)
    assert retried.status.value == "processed"
    assert mx_sqlite.list(user_id=user_id, memory_types=["semantic"])


def test_an_input_a_manager_fails_on_does_not_fail_its_batch_mates(mx_sqlite, user_id, monkeypatch):
    """Inputs queued together are one batch: a manager that raised on one input's content marked every
    input of the batch failed. Each now runs again alone for that manager."""
    from mirix_py.agents.offline import managers

    real = managers.semantic_ops

    def fails_on_poison(batch, lookup):
        if any("POISON" in m.text for m in batch.messages):
            raise RuntimeError("semantic rules exploded")
        return real(batch, lookup)

    monkeypatch.setattr(managers, "semantic_ops", fails_on_poison)
    good = mx_sqlite.add("Bob is my brother and he lives in Paris.", user_id=user_id, wait=False).input_ids[0]
    bad = mx_sqlite.add("POISON: Carla is my sister and she lives in Rome.", user_id=user_id, wait=False).input_ids[0]
    mx_sqlite.flush()
    assert mx_sqlite.input_status(good).status.value == "processed"
    failed = mx_sqlite.input_status(bad)
    assert failed.status.value == "failed" and "semantic" in failed.error
    facts = " ".join(m.search_text() for m in mx_sqlite.list(user_id=user_id, memory_types=["semantic"]))
    assert "Paris" in facts and "Rome" not in facts
    assert len(mx_sqlite.list(user_id=user_id, memory_types=["episodic"])) == 2  # no manager wrote twice


def _parameters(method) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values()]


def test_async_mirix_has_the_same_methods(tmp_path, embedder, user_id):
    public = {n for n in dir(Mirix) if not n.startswith("_") and callable(getattr(Mirix, n))}
    assert set(ASYNC_METHODS) == public - {"import", "restore"}
    for name in ASYNC_METHODS:  # written out by hand: the same parameters, names, kinds and defaults
        assert asyncio.iscoroutinefunction(getattr(AsyncMirix, name)), name
        assert _parameters(getattr(AsyncMirix, name)) == _parameters(getattr(Mirix, name)), name
    assert getattr(AsyncMirix, "import") is AsyncMirix.import_
    assert asyncio.iscoroutinefunction(AsyncMirix.restore)

    async def scenario():
        async with AsyncMirix(tmp_path / "a", embedder=embedder) as amx:
            await amx.add("Planted tomatoes in the garden", user_id=user_id)
            hits = await amx.search("tomatoes", user_id=user_id)
            memory = await amx.get(hits[0].memory.id, user_id=user_id)
            history = await amx.history(memory.id, user_id=user_id)
            return hits, history, amx.mode

    hits, history, mode = asyncio.run(scenario())
    assert "tomatoes" in hits[0].text and history[0].operation.value == "insert" and mode == "offline"


def test_describe_says_offline(mx):
    info = mx.describe()
    assert info["mode"] == "offline" and info["search"] == "hybrid" and info["embedder"] == "all-MiniLM-L6-v2"


def test_an_input_logged_at_the_calendars_edge_before_the_rule_is_still_processed(mx_sqlite, user_id):
    """Inputs logged by a version without `STORED_YEARS` are taken up on resume: the repeat window
    around them stops at the calendar's edge instead of failing the batch."""
    from mirix_py.records import InputKind, InputRecord, Message

    edge = datetime(9999, 12, 31, 23, 0, tzinfo=timezone.utc)
    record = InputRecord(user_id=user_id, kind=InputKind.text, occurred_at=edge,
                         messages=[Message(role="user", content="Carla planted tomatoes in the garden.", occurred_at=edge)])
    mx_sqlite.inputs.append([record])
    mx_sqlite.resume()
    assert mx_sqlite.input_status(record.id).status.value == "processed"
    assert mx_sqlite.search("tomatoes", user_id=user_id)


# ---------------------------------------------------------------- close and delete_user beside running writes

ADDED = "My brother Tom is a pilot in Denver and my sister Anna lives in Lisbon."


class _Paused:
    """The first `mx.store.<method>` call for `user_id` waits until `go` (`reached` says it came).
    `abandon()` lets it go on by raising: a write left running by close must not write after it."""

    def __init__(self, mx, user_id: str, monkeypatch, method: str = "apply") -> None:
        self.reached, self.go, self.abandoned = threading.Event(), threading.Event(), False
        original = getattr(mx.store, method)

        def paused(*args, **kwargs):
            user = kwargs["user_id"] if "user_id" in kwargs else args[0]
            if user == user_id and not self.reached.is_set():
                self.reached.set()
                self.go.wait(120)
                if self.abandoned:
                    raise RuntimeError("written after close")
            return original(*args, **kwargs)

        monkeypatch.setattr(mx.store, method, paused)

    def abandon(self) -> None:
        self.abandoned = True
        self.go.set()


class _TurnsAsked:
    """The engine's user turns, telling (`asked`) when the engine itself asks for one (the batch
    runner keeps its own reference, so a waited add's turn does not count)."""

    def __init__(self, turns) -> None:
        self.turns, self.asked = turns, threading.Event()

    def __call__(self, user_id: str):
        self.asked.set()
        return self.turns(user_id)

    def close(self, timeout=None):
        self.asked.set()
        return self.turns.close(timeout)

    def __getattr__(self, name: str):
        return getattr(self.turns, name)


def _in_thread(call, out: list) -> threading.Thread:
    def run() -> None:
        try:
            out.append(call())
        except Exception as exc:  # the test asserts on what came out
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_close_waits_for_a_waited_add_another_thread_runs(mx, user_id, embedder, monkeypatch):
    """The add used to wait for good: close stopped the engine's event loop under its pending flow."""
    pause = _Paused(mx, user_id, monkeypatch)
    turns = _TurnsAsked(mx.user_locks)
    monkeypatch.setattr(mx, "user_locks", turns)
    added: list = []
    adder = _in_thread(lambda: mx.add(ADDED, user_id=user_id), added)
    assert pause.reached.wait(120)
    closer = _in_thread(lambda: (mx.close(), turns.asked.set()), [])
    assert turns.asked.wait(120)  # close is waiting for the add's turn (or, before the fix, returned)
    pause.go.set()
    closer.join(120)
    adder.join(120)
    assert not adder.is_alive(), "the add never returned"
    assert added[0].status.value == "processed", added
    with Mirix(settings=mx.settings, embedder=embedder, resume=False) as again:
        assert again.input_status(added[0].input_ids[0]).status.value == "processed"
        assert again.list(user_id=user_id)


def test_close_cuts_short_a_model_call_it_cannot_wait_for(mx_sqlite, user_id, embedder, monkeypatch):
    """What still runs when close's wait is over raises EngineClosed, and its input goes back to the log
    (not failed): a new engine in the same process takes it at once (it stayed claimed by this live
    process for the claim's lease, 300 s). The write it had running on the engine's threads is not
    cut but waited for: close returns once it has ended, so nothing of it lands after."""
    mx = mx_sqlite
    pause = _Paused(mx, user_id, monkeypatch)
    added: list = []
    adder = _in_thread(lambda: mx.add(ADDED, user_id=user_id), added)
    assert pause.reached.wait(120)
    closer = _in_thread(lambda: mx.close(timeout=0), [])
    try:
        adder.join(120)  # cut short at once, while its write waits
    finally:
        pause.go.set()  # the write goes on, and close, which waited for it, returns
    closer.join(120)
    assert not closer.is_alive(), "close never returned"
    assert not adder.is_alive(), "the add never returned"
    assert isinstance(added[0], EngineClosed) and "closed before" in str(added[0])
    cut = added[0]
    with Mirix(settings=mx.settings, embedder=embedder, resume=False) as again:
        assert [r.status for r in again.inputs.by_status(InputStatus.pending, user_id=user_id)] == [InputStatus.pending]
        assert not again.inputs.by_status(InputStatus.processing, user_id=user_id)
        assert not again.inputs.by_status(InputStatus.failed, user_id=user_id)
        assert again.resume() == 1, f"the input cut short ({cut}) was not taken up"
        assert [r.status for r in again.inputs.by_status(InputStatus.processed, user_id=user_id)] == [InputStatus.processed]


def test_every_write_and_model_call_after_close_raises_engine_closed_and_logs_nothing(tmp_path, embedder, user_id):
    mx = Mirix(tmp_path / "data", embedder=embedder)
    mx.add("I keep bees on the roof.", user_id=user_id)
    other = io.StringIO()
    with Mirix(tmp_path / "other", embedder=embedder) as elsewhere:  # memories this store does not hold
        elsewhere.add("I keep goats in the yard.", user_id=user_id)
        elsewhere.export(other)
    exported = other.getvalue()
    held = sorted(m.id for m in mx.list(user_id=user_id))
    mx.close()
    calls = {
        "waited add": lambda: mx.add("I keep goats too.", user_id=user_id),
        "queued add": lambda: mx.add("I keep goats too.", user_id=user_id, wait=False),
        "core append": lambda: mx.core_append("human", "Keeps goats", user_id=user_id),
        "delete_user": lambda: mx.delete_user(user_id),
        "work": mx.work,
        "model loop": lambda: mx.run_on_model_loop(asyncio.sleep(0)),
        "import": lambda: mx.import_(io.StringIO(exported)),
        "doctor repair": lambda: mx.doctor(repair=True),
        "doctor_secrets repair": lambda: mx.doctor_secrets(repair=True),
        "delete_expired": mx.delete_expired,
    }
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match="the engine is closed"):
            call()
            pytest.fail(f"{name} ran after close")
    with Mirix(tmp_path / "data", embedder=embedder, resume=False) as again:
        assert sorted(m.id for m in again.list(user_id=user_id)) == held, "a call after close wrote memories"
        assert [r.status.value for r in again.inputs.by_status(InputStatus.processed, user_id=user_id)] == ["processed"]
        assert not again.inputs.by_status(InputStatus.pending, user_id=user_id)
        assert not again.inputs.by_status(InputStatus.processing, user_id=user_id)


def test_an_async_add_cancelled_by_its_caller_is_waited_for_by_close(tmp_path, embedder, user_id, monkeypatch):
    """`asyncio.wait_for` gave up on the add, whose thread went on; `asyncio.run` then waited at its
    end for that thread, stuck on the engine's stopped loop."""
    amx = AsyncMirix(tmp_path / "a", embedder=embedder)
    pause = _Paused(amx.sync, user_id, monkeypatch)
    turns = _TurnsAsked(amx.sync.user_locks)
    monkeypatch.setattr(amx.sync, "user_locks", turns)

    async def scenario() -> None:
        task = asyncio.create_task(amx.add(ADDED, user_id=user_id))
        assert await asyncio.to_thread(pause.reached.wait, 120)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        closing = asyncio.create_task(amx.close())
        await asyncio.to_thread(turns.asked.wait, 120)
        pause.go.set()
        await closing

    ended = _in_thread(lambda: asyncio.run(scenario()), [])
    ended.join(120)
    assert not ended.is_alive(), "asyncio.run never returned"
    with Mirix(tmp_path / "a", embedder=embedder, resume=False) as again:
        assert [r.status.value for r in again.inputs.by_status(InputStatus.processed, user_id=user_id)] == ["processed"]


def test_delete_user_during_a_waited_add_of_theirs_leaves_nothing(mx_sqlite, user_id, monkeypatch):
    """delete_user landed between the add's commit and its vectors' mirror in Chroma: one vector of
    the deleted user stayed (their collection made again). It now takes the user's turn: the add ends
    first, and what it wrote is deleted."""
    mx = mx_sqlite
    pause = _Paused(mx, user_id, monkeypatch, method="_mirror_vectors")
    turns = _TurnsAsked(mx.user_locks)
    monkeypatch.setattr(mx, "user_locks", turns)
    added: list = []
    adder = _in_thread(lambda: mx.add(ADDED, user_id=user_id), added)
    assert pause.reached.wait(120)  # committed, not yet in Chroma
    deleted: list = []
    deleter = _in_thread(lambda: (deleted.append(mx.delete_user(user_id)), turns.asked.set()), [])
    assert turns.asked.wait(120)  # waiting for the add's turn (or, before the fix, done already)
    pause.go.set()
    adder.join(120)
    deleter.join(120)
    assert mx.store.vectors.count(user_id) == 0 and mx.list(user_id=user_id) == []
    assert user_id not in mx.user_ids()
    assert mx.doctor().vectors_without_rows == []
    assert added[0].status.value == "processed" and deleted[0]["memories"] >= 1  # the add ended first


def test_delete_user_waits_for_another_engines_turn_of_that_user(tmp_path, embedder, user_id, pgvector_schema_url):
    """On PostgreSQL the turn is an advisory lock: a batch of the user in another engine (process,
    machine) ends before the rows go."""
    from sqlalchemy import text

    url = pgvector_schema_url
    writer = Mirix(tmp_path / "w", embedder=embedder, database_url=url, vector_store="pgvector")
    deleting = Mirix(tmp_path / "d", embedder=embedder, database_url=url, vector_store="pgvector")
    try:
        held, go = threading.Event(), threading.Event()

        def write_in_one_turn():
            with writer.user_locks(user_id):
                held.set()
                go.wait(120)
                return writer.add(ADDED, user_id=user_id)

        added: list = []
        adder = _in_thread(write_in_one_turn, added)
        assert held.wait(120)
        deleted: list = []
        deleter = _in_thread(lambda: deleting.delete_user(user_id), deleted)

        def delete_waits() -> bool:
            with deleting.engine.connect() as conn:
                return bool(conn.execute(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                                              "AND NOT granted")).scalar())

        wait_for(delete_waits)
        go.set()
        adder.join(120)
        deleter.join(120)
        assert added[0].status.value == "processed" and deleted[0]["memories"] >= 1
        assert deleting.list(user_id=user_id) == [] and user_id not in deleting.user_ids()
    finally:
        writer.close()
        deleting.close()


def test_delete_user_inside_the_users_own_turn_does_not_wait_for_itself(mx, user_id):
    mx.add(ADDED, user_id=user_id)
    with mx.user_locks(user_id):
        assert mx.delete_user(user_id)["memories"] >= 1
    assert mx.list(user_id=user_id) == []


def test_input_status_with_a_user_reads_another_users_input_as_none(mx_sqlite, user_id):
    added = mx_sqlite.add("I keep bees on the roof.", user_id=user_id)
    input_id = added.input_ids[0]
    assert mx_sqlite.input_status(input_id, user_id=user_id).status.value == "processed"
    with pytest.raises(InvalidInput, match="no input"):
        mx_sqlite.input_status(input_id, user_id="someone-else")
    assert mx_sqlite.input_status(input_id).user_id == user_id  # without a user: the operator's view


def test_a_value_nested_past_any_reason_is_refused_not_a_recursion_error(mx_sqlite, user_id):
    deep: dict = {}
    inner = deep
    for _ in range(1000):
        inner["a"] = inner = {}
    with pytest.raises(InvalidInput, match="nested more than 64 levels deep"):
        mx_sqlite.add([{"role": "user", "content": "hello there Anna", "metadata": deep}], user_id=user_id)
    assert mx_sqlite.store.count(user_id=user_id) == {}


def test_close_lets_go_of_the_model_the_engine_loaded_but_not_one_it_was_given(tmp_path, embedder, user_id):
    """A closed engine stays reachable until a full garbage collection (its parts hold its bound
    methods), and its MiniLM stayed loaded with it: a process opening engines in turn held ~10 models."""
    with Mirix(tmp_path / "own") as mx:
        mx.add("I keep bees on the roof.", user_id=user_id)
        assert mx.search("bees", user_id=user_id)
        loaded_by_engine = mx.store.embedder
        assert loaded_by_engine.loaded["onnx"] or loaded_by_engine.loaded["numpy"]
    assert not any(loaded_by_engine.loaded.values())
    with Mirix(tmp_path / "given", embedder=embedder) as mx:
        mx.add("I keep bees on the roof.", user_id=user_id)
    assert any(embedder.loaded.values()), "an embedder the caller passed was unloaded: other engines share it"


def _episodes(mx: Mirix, user_id: str, hours: range) -> list[str]:
    """Episodes of `user_id` said an hour apart, the newest first (their ids)."""
    from mirix_py.records import EpisodicMemory
    from mirix_py.tools.ops import InsertOp

    ops = [InsertOp(memory=EpisodicMemory(user_id=user_id, summary=f"Hour {h}.", occurred_at=WHEN.replace(hour=h)))
           for h in hours]
    return list(reversed([c.memory_id for c in mx.store.apply(ops, user_id=user_id, actor="test")]))


def test_list_pages_after_a_cursor_while_memories_are_written(tmp_path, user_id):
    """Sync and async alike: the page after the previous page's last memory, however many memories
    were written meanwhile; a cursor that is not text, or one with an offset, is refused."""
    from mirix_py.store.memories import MemoryPosition

    async def scenario():
        async with AsyncMirix(tmp_path / "a", embedder=None) as amx:
            newest_first = _episodes(amx.sync, user_id, range(0, 6))
            first = await amx.list(user_id=user_id, limit=4)
            _episodes(amx.sync, user_id, range(10, 13))  # newer than every listed one
            cursor = MemoryPosition.of(first[-1]).cursor()
            second = await amx.list(user_id=user_id, limit=4, before=cursor)
            also = amx.sync.list(user_id=user_id, limit=4, before=cursor)
            for before, offset, says in ((7, 0, "before must be a cursor"), (cursor, 2, "cannot be combined")):
                with pytest.raises(InvalidInput, match=says):
                    await amx.list(user_id=user_id, before=before, offset=offset)
            return newest_first, [[m.id for m in page] for page in (first, second, also)]

    newest_first, pages = asyncio.run(scenario())
    assert pages == [newest_first[:4], newest_first[4:], newest_first[4:]]
