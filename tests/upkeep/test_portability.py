"""Import of an export file: what is already in the store is skipped, also when another engine
imports the same file at the same moment."""

from __future__ import annotations

import io
import json

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.records import InputStatus
from mirix_py.settings import Settings


@pytest.fixture
def exported(mx, tmp_path, embedder) -> list[str]:
    """An export of two users' memories, made under `mx`'s vault key (its vault secret imports there)."""
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix(settings=Settings(data_dir=tmp_path / "src", vault_key=key), embedder=embedder) as source:
        source.add("ana bought a red bicycle in Lyon. My password is Lyon-Bike-42", user_id="ana")
        source.add("bob moved to Oslo and took up cycling", user_id="bob")
        buffer = io.StringIO()
        source.export(buffer)
    return buffer.getvalue().splitlines()


def _ids(lines: list[str], user: str | None = None) -> set[str]:
    memories = [json.loads(line)["memory"] for line in lines]
    return {m["id"] for m in memories if user is None or m["user_id"] == user}


@pytest.mark.parametrize("step", ["check", "apply"])
def test_an_import_beside_another_of_the_same_file_skips_what_the_other_wrote(mx, exported, embedder, monkeypatch,
                                                                              step):
    """The other engine's import runs to its end between this import's look-up of the ids and its
    check (or its write) of ana's lines: hers are skipped, as a second import run alone skips them,
    and bob's are still written."""
    anas = [line for line in exported if json.loads(line)["memory"]["user_id"] == "ana"]
    with Mirix(settings=mx.settings, embedder=embedder) as other:
        original = getattr(mx.store, step)
        others_counts = []

        def other_import_first(*args, **kwargs):
            monkeypatch.setattr(mx.store, step, original)
            others_counts.append(other.import_(anas))
            return original(*args, **kwargs)

        monkeypatch.setattr(mx.store, step, other_import_first)
        counts = mx.import_(exported)

    ana, bob = _ids(exported, "ana"), _ids(exported, "bob")
    assert others_counts == [{"imported": len(ana), "skipped_existing": 0}]
    assert counts == {"imported": len(bob), "skipped_existing": len(ana)}
    assert {m.id for m in mx.list(user_id="ana", limit=100)} == ana  # each once: nothing duplicated
    assert {m.id for m in mx.list(user_id="bob", limit=100)} == bob
    vault = mx.list(user_id="ana", memory_types=["knowledge_vault"])[0]
    assert mx.get(vault.id, user_id="ana", reveal=True).secret_value == "Lyon-Bike-42"
    assert mx.import_(exported) == {"imported": 0, "skipped_existing": len(ana | bob)}


def test_a_bad_line_is_still_refused_when_another_import_wrote_meanwhile(mx, exported, embedder, monkeypatch):
    """Skipping what another import wrote does not hide a line the store refuses: nothing of this
    import is written."""
    from mirix_py.errors import InvalidInput

    anas = [line for line in exported if json.loads(line)["memory"]["user_id"] == "ana"]
    bobs = [json.loads(line) for line in exported if json.loads(line)["memory"]["user_id"] == "bob"]
    bobs[-1]["memory"]["summary"] = "a NUL\x00 here"
    lines = anas + [json.dumps(b) for b in bobs]
    with Mirix(settings=mx.settings, embedder=embedder) as other:
        original = mx.store.check

        def other_import_first(*args, **kwargs):
            monkeypatch.setattr(mx.store, "check", original)
            other.import_(anas)
            return original(*args, **kwargs)

        monkeypatch.setattr(mx.store, "check", other_import_first)
        with pytest.raises(InvalidInput, match=f"line {len(lines)}: .*NUL"):
            mx.import_(lines)
    assert mx.list(user_id="bob") == []
    assert {m.id for m in mx.list(user_id="ana", limit=100)} == _ids(anas)


def test_an_export_leaves_out_memories_past_their_expiry_as_reads_do(mx, user_id):
    """Memories past their expiry wait for the sweep, and no read shows them: an export leaves them
    out too (a vault entry's secret ciphertext with it); what has not expired goes, its expiry kept."""
    from datetime import timedelta

    from mirix_py.records import utcnow

    mx._queue.sweep_every_s = 3600  # the expired rows stay until this test has exported
    later = (utcnow() + timedelta(days=7)).replace(microsecond=0)
    mx.add("I love hiking in the Alps with my dog Rex.", user_id=user_id)
    kept = mx.add("The door code this week is spring-lantern.", user_id=user_id, expires_at=later)
    gone = mx.add("My wifi password is Hunter2Xyz!42, the dentist is Dr. Zoltanski.", user_id=user_id,
                  expires_at=later)
    expiring = [m for m in mx.list(user_id=user_id, limit=1000)
                if gone.input_ids[0] in m.source_ids and m.expires_at is not None]
    assert any(m.memory_type.value == "knowledge_vault" for m in expiring)
    mx.store.set_expiry({m.id: utcnow() - timedelta(seconds=1) for m in expiring}, user_id=user_id)
    readable = {m.id: m.expires_at for m in mx.list(user_id=user_id, limit=1000)}
    buffer = io.StringIO()
    count = mx.export(buffer, user_id=user_id)
    lines = buffer.getvalue().splitlines()
    exported = {m["id"]: m["expires_at"] for m in (json.loads(line)["memory"] for line in lines)}
    assert count == len(lines) == len(readable) and set(exported) == set(readable)
    assert not {m.id for m in expiring} & set(exported)
    assert any(kept.input_ids[0] in m.source_ids and exported[m.id] for m in mx.list(user_id=user_id, limit=1000))
    assert mx.export(io.StringIO()) == count  # every user's export leaves them out as well


def _episode_line(number: int, occurred_at: str, summary: str) -> str:
    memory = {"memory_type": "episodic", "id": f"epi_edge_{number}", "user_id": "ana", "summary": summary,
              "occurred_at": occurred_at, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
    return json.dumps({"memory": memory, "secret_ciphertext": None})


@pytest.mark.parametrize("occurred_at, summary", [
    ("0001-01-01T00:00:00Z", "I repaired the bicycle yesterday"),
    ("0001-06-01T00:00:00Z", "I repaired the bicycle"),
    ("9999-12-31T23:00:00Z", "I repair the bicycle tomorrow"),
])
def test_a_line_dated_in_a_year_add_refuses_is_refused_with_its_message_and_nothing_is_written(
        mx_sqlite, occurred_at, summary):
    with pytest.raises(InvalidInput) as refused_add:
        mx_sqlite.add(summary, user_id="ana", occurred_at=occurred_at)
    good = _episode_line(1, "2026-01-01T10:00:00Z", "I bought a bell for the bicycle")
    with pytest.raises(InvalidInput) as refused_import:
        mx_sqlite.import_([good, _episode_line(2, occurred_at, summary)])
    assert str(refused_import.value) == f"line 2: {refused_add.value}"
    assert mx_sqlite.list(user_id="ana") == []


def _inferring_line(created_at: str, updated_at: str) -> str:
    """A line of an export written before lines carried their inputs: the input it cites (with the
    caller's id "sess-9" and message "msg-9" after it) is logged by the import at its `created_at`."""
    memory = {"memory_type": "episodic", "id": "epi_edge_3", "user_id": "ana", "summary": "I oiled the chain",
              "occurred_at": "2026-01-01T10:00:00Z", "created_at": created_at, "updated_at": updated_at,
              "source_ids": ["in_" + "f" * 32, "sess-9", "msg-9"]}
    return json.dumps({"memory": memory, "secret_ciphertext": None})


@pytest.mark.parametrize("field, when", [("created_at", "9999-12-31T12:00:00Z"), ("updated_at", "9999-12-31T12:00:00Z"),
                                         ("created_at", "0001-01-01T00:00:00Z")])
def test_a_memory_logged_in_a_year_the_store_does_not_keep_refuses_the_whole_import(mx_sqlite, field, when):
    """Year 9999 sorted the memory, and the input the import logged for it, before everything in the lists."""
    times = {"created_at": "2026-01-01T10:00:00Z", "updated_at": "2026-01-01T10:00:00Z", field: when}
    good = _episode_line(1, "2026-01-01T10:00:00Z", "I bought a bell for the bicycle")
    with pytest.raises(InvalidInput) as refused:
        mx_sqlite.import_([good, _inferring_line(**times)])
    assert str(refused.value).startswith(f"line 2: {field} {when[:4]}-")
    assert "outside the years 2 to 9998" in str(refused.value)
    assert mx_sqlite.list(user_id="ana") == []
    assert mx_sqlite.inputs.newest(user_id="ana", statuses=list(InputStatus), limit=10) == []
    assert mx_sqlite.import_([good, _inferring_line(**{**times, field: "2026-01-02T10:00:00Z"})])["imported"] == 2
    assert [i.id for i in mx_sqlite.inputs.newest(user_id="ana", statuses=list(InputStatus), limit=10)] == ["in_" + "f" * 32]
