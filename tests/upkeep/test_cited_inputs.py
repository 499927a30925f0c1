"""An exported and imported store searches as the one it came from: turns of inputs added with a
caller's id (`source_id=`) and of multi-turn inputs rank as they did, also from an export written
before lines carried their inputs."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.records import InputStatus
from mirix_py.settings import Settings

QUERIES = {"alice": ["who flies planes", "Tom pilot", "sushi"],
           "bob": ["music concert", "Lily violin", "jazz Chicago", "cello"]}


def _day(day: int) -> datetime:
    return datetime(2024, 5, day, 10, tzinfo=timezone.utc)


def _remember(source: Mirix) -> None:
    """Tagged multi-turn inputs with message ids, an untagged multi-turn input, single texts."""
    source.add([{"role": "user", "name": "Alice", "id": "a1", "content": "My brother Tom is a pilot for Lufthansa."},
                {"role": "assistant", "name": "Bot", "id": "a2", "content": "That sounds exciting! Where does he fly?"},
                {"role": "user", "name": "Alice", "id": "a3",
                 "content": "Mostly long haul to Tokyo. I love sushi because of him."}],
               user_id="alice", occurred_at=_day(1), source_id="sess-a1")
    source.add("I adopted a golden retriever named Biscuit last week.", user_id="alice", occurred_at=_day(2))
    source.add([{"role": "user", "name": "Bob", "id": "b1", "content": "I went to a jazz concert in Chicago yesterday."},
                {"role": "user", "name": "Bob", "id": "b2", "content": "My daughter Lily plays the violin."}],
               user_id="bob", occurred_at=_day(1), source_id="sess-b1")
    source.add([{"role": "user", "name": "Bob", "content": "I like the opera in Vienna."},
                {"role": "user", "name": "Bob", "content": "My son Max plays the cello."}], user_id="bob", occurred_at=_day(2))
    source.add("I drive a red Volvo estate.", user_id="bob", occurred_at=_day(5))


def _rankings(engine: Mirix, methods: tuple[str, ...] = ("hybrid", "bm25", "embedding")) -> dict[str, list[str]]:
    """Query and method -> the ids of the first three hits."""
    return {f"{user} {query!r} {method}": [h.memory.id for h in engine.search(query, user_id=user, limit=3,
                                                                              method=method, context=0)]
            for user, queries in QUERIES.items() for query in queries for method in methods}


@pytest.fixture
def original(mx, tmp_path, embedder):
    """A store (SQLite) under `mx`'s vault key, its export and its rankings."""
    key = (mx.settings.data_dir / "vault.key").read_text().strip()
    with Mirix(settings=Settings(data_dir=tmp_path / "src", vault_key=key), embedder=embedder) as source:
        _remember(source)
        buffer = io.StringIO()
        source.export(buffer)
        return buffer.getvalue().splitlines(), _rankings(source)


def _without_inputs(lines: list[str]) -> list[str]:
    """The lines as an export written before lines carried their inputs."""
    return [json.dumps({k: v for k, v in json.loads(line).items() if k != "cited_inputs"}) for line in lines]


WRITERS = ["this version", "an older version"]


def _as_written_by(lines: list[str], written_by: str) -> list[str]:
    return _without_inputs(lines) if written_by == "an older version" else lines


@pytest.mark.parametrize("written_by", WRITERS)
def test_an_imported_store_ranks_as_the_one_exported(tmp_path, embedder, written_by):
    """Every method, on one backend (SQLite): full-text scores differ between backends."""
    with Mirix(tmp_path / "src", embedder=embedder) as source:
        _remember(source)
        buffer = io.StringIO()
        source.export(buffer)
        rankings = _rankings(source)
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "vault.key").write_text((tmp_path / "src" / "vault.key").read_text())
    with Mirix(tmp_path / "dst", embedder=embedder) as imported:
        imported.import_(_as_written_by(buffer.getvalue().splitlines(), written_by))
        after = _rankings(imported)
    assert after["bob 'Lily violin' hybrid"][0] == rankings["bob 'Lily violin' hybrid"][0]
    assert {q: ids for q, ids in after.items() if ids != rankings[q]} == {}


@pytest.mark.parametrize("written_by", WRITERS)
def test_an_import_into_any_layout_ranks_by_meaning_as_the_one_exported(mx, original, written_by):
    lines, rankings = original
    mx.import_(_as_written_by(lines, written_by))
    after = _rankings(mx, ("embedding",))
    assert {q: ids for q, ids in after.items() if ids != rankings[q]} == {}


def test_an_import_logs_the_cited_inputs_without_their_text(mx, original):
    lines, _ = original
    mx.import_(lines)
    lily = next(m for m in mx.list(user_id="bob", limit=100) if "Lily" in m.search_text())
    tagged = mx.input_status(lily.source_ids[0], user_id="bob")
    assert (tagged.source_id, tagged.status.value, tagged.messages) == ("sess-b1", "processed", [])


def test_a_line_citing_an_input_its_memory_does_not_cite_is_refused_and_nothing_is_written(mx, original):
    lines, _ = original
    line = json.loads(lines[-1])
    line["cited_inputs"] = [{**line["cited_inputs"][0], "id": "in_other"}] if line["cited_inputs"] else [
        {"id": "in_other", "kind": "text", "source_id": None, "occurred_at": "2024-05-01T10:00:00Z",
         "created_at": "2024-05-01T10:00:00Z"}]
    with pytest.raises(InvalidInput, match=f"line {len(lines)}: cited input 'in_other'"):
        mx.import_([*lines[:-1], json.dumps(line)])
    assert mx.list(user_id="alice") == [] and mx.list(user_id="bob") == []


def _carrying(line: str, **changes) -> str:
    """The line with its first cited input changed."""
    data = json.loads(line)
    data["cited_inputs"] = [{**data["cited_inputs"][0], **changes}, *data["cited_inputs"][1:]]
    return json.dumps(data)


def _first_carrying(lines: list[str], user: str) -> int:
    return next(n for n, line in enumerate(lines)
                if json.loads(line)["cited_inputs"] and json.loads(line)["memory"]["user_id"] == user)


@pytest.mark.parametrize("changes, says", [
    ({"occurred_at": "0001-01-01T00:00:00+14:00"}, "occurred_at"),
    ({"created_at": "9999-12-31T23:59:59-14:00"}, "created_at"),
    ({"id": "in_../../etc/passwd"}, "not an exported memory"),
])
def test_a_cited_input_out_of_range_or_of_another_form_is_refused_and_nothing_is_written(mx, original, changes, says):
    lines, _ = original
    n = _first_carrying(lines, "alice")
    with pytest.raises(InvalidInput, match=says):
        mx.import_([*lines[:n], _carrying(lines[n], **changes), *lines[n + 1:]])
    assert mx.list(user_id="alice") == [] and mx.list(user_id="bob") == []


def test_an_input_cited_by_two_users_or_logged_for_another_is_refused(mx, original):
    lines, _ = original
    alice, bob = _first_carrying(lines, "alice"), _first_carrying(lines, "bob")
    shared = json.loads(lines[alice])["cited_inputs"][0]
    bob_line = json.loads(lines[bob])
    bob_line["memory"]["source_ids"] = [shared["id"], *bob_line["memory"]["source_ids"]]
    bob_line["cited_inputs"] = [shared, *bob_line["cited_inputs"]]
    crossed = [*lines[:bob], json.dumps(bob_line), *lines[bob + 1:]]
    with pytest.raises(InvalidInput, match="an input is one user's"):
        mx.import_(crossed)
    assert mx.list(user_id="alice") == [] and mx.list(user_id="bob") == []
    mx.import_([line for line in lines if json.loads(line)["memory"]["user_id"] == "alice"])
    with pytest.raises(InvalidInput, match="another user's input"):
        mx.import_([json.dumps(bob_line)])
    assert mx.list(user_id="bob") == []


def _memories(engine: Mirix, user: str) -> dict[str, list[str]]:
    """The user's memory ids -> the ids each cites."""
    return {m.id: m.source_ids for m in engine.list(user_id=user, limit=1000)}


@pytest.mark.parametrize("written_by", WRITERS)
def test_a_line_citing_another_users_input_is_refused_and_nothing_is_written(mx, original, written_by):
    """An input id this store logs for bob, on one of alice's lines, whether the line carries its inputs
    or not (an older export's does not): refused, naming the line, before anything is written. Her own
    input, and the inputs of the store the file came from (logged nowhere here), import."""
    lines, _ = original
    bobs = mx.add("I keep my bicycle in the shed.", user_id="bob", source_id="bob-notes").input_ids[0]
    hers = mx.add("I keep my kayak in the garage.", user_id="alice").input_ids[0]
    before = {user: _memories(mx, user) for user in ("alice", "bob")}
    n = _first_carrying(lines, "alice")
    line = json.loads(lines[n])

    def citing(input_id: str) -> list[str]:
        line["memory"]["source_ids"] = [*json.loads(lines[n])["memory"]["source_ids"], input_id]
        return _as_written_by([*lines[:n], json.dumps(line), *lines[n + 1:]], written_by)

    with pytest.raises(InvalidInput, match=f"^line {n + 1}: source_ids cite '{bobs}', another user's input"):
        mx.import_(citing(bobs))
    assert {user: _memories(mx, user) for user in ("alice", "bob")} == before
    assert [i.id for i in mx.inputs.newest(user_id="alice", statuses=list(InputStatus), limit=100)] == [hers]
    assert mx.import_(citing(hers))["imported"] == len(lines)
    imported = _memories(mx, "alice")
    assert hers in imported[line["memory"]["id"]] and not any(bobs in cited for cited in imported.values())
    tagged = next(i for i in json.loads(lines[n])["cited_inputs"] if i["source_id"] == "sess-a1")["id"]
    assert mx.input_status(tagged, user_id="alice").source_id == "sess-a1"  # carried, or read from the ids


def test_a_line_skipped_as_already_there_logs_no_input(mx, original):
    lines, _ = original
    mx.import_(lines)
    inputs_before = {u: len(mx.inputs.newest(user_id=u, statuses=list(InputStatus), limit=1000)) for u in ("alice", "bob")}
    zed = json.loads(lines[_first_carrying(lines, "alice")])
    zed["memory"]["user_id"] = "zed"  # its id is taken: skipped; the input it cites is new to the store
    old_input = zed["cited_inputs"][0]["id"]
    zed["memory"]["source_ids"] = ["in_zed0001" if s == old_input else s for s in zed["memory"]["source_ids"]]
    zed["cited_inputs"][0]["id"] = "in_zed0001"
    assert mx.import_([json.dumps(zed)]) == {"imported": 0, "skipped_existing": 1}
    assert mx.inputs.newest(user_id="zed", statuses=list(InputStatus), limit=10) == []
    assert {u: len(mx.inputs.newest(user_id=u, statuses=list(InputStatus), limit=1000))
            for u in ("alice", "bob")} == inputs_before


def _cited(lines: list[str], user: str) -> set[str]:
    """The ids of the inputs the user's lines carry."""
    return {i["id"] for line in lines if json.loads(line)["memory"]["user_id"] == user
            for i in json.loads(line)["cited_inputs"]}


def test_an_export_carries_the_users_own_inputs_only_and_imports_again(tmp_path, embedder):
    """A memory may cite another user's input id (`add` refuses one as a caller's id now; a store written
    before holds them): the lines of its user carry none of that input (its caller's id, its times),
    whether the export is the user's or all."""
    from mirix_py.records import SemanticMemory
    from mirix_py.tools.ops import InsertOp

    with Mirix(tmp_path / "src", embedder=embedder) as source:
        alice = source.add("Patient file: Ines relapsed in March.", user_id="alice", occurred_at=_day(3),
                           source_id="psychiatry-ward-7/patient-ines").input_ids[0]
        bob = source.add("I like hiking with my dog Rex.", user_id="bob").input_ids[0]
        citing = SemanticMemory(user_id="bob", name="Rex", summary="Bob hikes with his dog Rex.", source_ids=[bob, alice])
        source.store.apply([InsertOp(memory=citing)], user_id="bob", actor="test")  # below `add`, which refuses it
        assert any(alice in m.source_ids for m in source.list(user_id="bob"))
        own, everyone = io.StringIO(), io.StringIO()
        source.export(own, user_id="bob")
        source.export(everyone)
    assert "psychiatry-ward-7" not in own.getvalue() and _cited(own.getvalue().splitlines(), "bob") == {bob}
    lines = everyone.getvalue().splitlines()
    assert (_cited(lines, "alice"), _cited(lines, "bob")) == ({alice}, {bob})
    with Mirix(tmp_path / "dst", embedder=embedder) as imported:
        assert imported.import_(lines)["imported"] == len(lines)
        again = io.StringIO()
        imported.export(again)
        # alice's input is logged here now, and bob's line cites it: the file carries it, on her lines
        assert imported.import_(lines) == {"imported": 0, "skipped_existing": len(lines)}
    assert sorted(again.getvalue().splitlines()) == sorted(lines)
