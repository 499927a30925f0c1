"""The write path: ids kept on update, history for every change, atomic batches, delete_user."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest

from mirix_py.errors import InputsGone, InvalidInput, MemoryNotFound
from mirix_py.tools.ops import InsertOp, MergeOp, UpdateOp
from mirix_py.records import EpisodicMemory, SemanticMemory

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def _semantic(user_id: str, name: str, summary: str, **kw) -> InsertOp:
    return InsertOp(memory=SemanticMemory(user_id=user_id, name=name, summary=summary, **kw))


def test_insert_assigns_id_and_provenance(mx, user_id):
    changes = mx.store.apply([_semantic(user_id, "Rex", "Rex is a dog", source_ids=["caller-1"])],
                             user_id=user_id, actor="test", input_id="in_1")
    (change,) = changes
    assert change.memory_id.startswith("sem_")
    memory = mx.get(change.memory_id, user_id=user_id)
    assert memory.source_ids == ["caller-1", "in_1"]
    assert memory.name == "Rex"


def test_update_keeps_id_and_records_history(mx, user_id):
    (change,) = mx.store.apply([_semantic(user_id, "Rex", "Rex is a dog")], user_id=user_id, actor="a")
    updated = mx.update(change.memory_id, user_id=user_id, details="Rex likes balls", actor="b")
    assert updated.id == change.memory_id
    assert updated.details == "Rex likes balls"
    assert updated.updated_at >= updated.created_at
    events = mx.history(change.memory_id, user_id=user_id)
    assert [e.operation.value for e in events] == ["insert", "update"]
    assert [e.actor for e in events] == ["a", "b"]
    assert events[1].before["details"] == "" and events[1].after["details"] == "Rex likes balls"


def test_the_state_after_an_event_is_read_from_the_row_or_the_next_event_not_stored_twice(mx, user_id):
    from sqlalchemy import text

    (change,) = mx.store.apply([_semantic(user_id, "Rex", "Rex is a dog")], user_id=user_id, actor="a")
    mid = change.memory_id
    (insert,) = mx.history(mid, user_id=user_id)
    assert insert.after == mx.get(mid, user_id=user_id).model_dump(mode="json")
    mx.update(mid, user_id=user_id, details="Rex likes balls", actor="b")
    mx.update(mid, user_id=user_id, details="Rex likes sticks", actor="c")
    insert, first, second = mx.history(mid, user_id=user_id)
    assert insert.after == first.before and insert.after["details"] == "" and first.after == second.before
    mx.delete(mid, user_id=user_id)
    assert mx.history(mid, user_id=user_id)[0].after["summary"] == "Rex is a dog"
    with mx.engine.connect() as conn:  # stored: the insert's state once (the next event's before)
        stored = conn.execute(text("SELECT operation, COALESCE(CAST(after AS TEXT), 'null') = 'null' "
                                   "FROM memory_history WHERE memory_id = :m ORDER BY id"), {"m": mid}).all()
    assert [(op, bool(empty)) for op, empty in stored] == [("insert", True), ("update", True), ("update", True),
                                                            ("delete", True)]
    assert mx.history(mid, user_id=user_id)[2].after["details"] == "Rex likes sticks"


def test_update_rejects_immutable_and_invalid_fields(mx, user_id):
    (change,) = mx.store.apply([_semantic(user_id, "Rex", "Rex is a dog")], user_id=user_id, actor="a")
    with pytest.raises(InvalidInput, match="cannot change"):
        mx.update(change.memory_id, user_id=user_id, memory_type="episodic")
    with pytest.raises(InvalidInput):
        mx.update(change.memory_id, user_id=user_id, summary="")
    with pytest.raises(InvalidInput):
        mx.update(change.memory_id, user_id=user_id, no_such_field=1)
    assert mx.get(change.memory_id, user_id=user_id).summary == "Rex is a dog"
    assert len(mx.history(change.memory_id, user_id=user_id)) == 1


def test_merge_keeps_first_id_unions_sources_and_deletes_rest(mx, user_id):
    a, b = mx.store.apply([
        _semantic(user_id, "Rex", "Rex is a dog", source_ids=["s1"], tags=["pet"]),
        _semantic(user_id, "rex", "Rex barks", source_ids=["s2"], tags=["noise"]),
    ], user_id=user_id, actor="a")
    changes = mx.store.apply([MergeOp(memory_ids=[a.memory_id, b.memory_id], fields={"details": "barks"})],
                             user_id=user_id, actor="merger")
    assert [(c.operation.value, c.memory_id) for c in changes] == [("merge", a.memory_id), ("delete", b.memory_id)]
    merged = mx.get(a.memory_id, user_id=user_id)
    assert set(merged.source_ids) == {"s1", "s2"} and set(merged.tags) == {"pet", "noise"}
    with pytest.raises(MemoryNotFound):
        mx.get(b.memory_id, user_id=user_id)
    assert [e.operation.value for e in mx.history(b.memory_id, user_id=user_id)] == ["insert", "delete"]


def test_a_bad_operation_writes_nothing(mx, user_id):
    ops = [_semantic(user_id, "Ann", "Ann is a nurse"), UpdateOp(memory_id="sem_missing", fields={"details": "x"})]
    with pytest.raises(MemoryNotFound):
        mx.store.apply(ops, user_id=user_id, actor="a")
    assert mx.list(user_id=user_id) == []
    assert mx.store.count(user_id=user_id) == {}


def test_insert_for_another_user_is_refused(mx, user_id):
    with pytest.raises(InvalidInput):
        mx.store.apply([_semantic("someone-else", "X", "X is y")], user_id=user_id, actor="a")


def test_users_cannot_touch_each_others_memories(mx, user_id):
    (change,) = mx.store.apply([_semantic(user_id, "Rex", "Rex is a dog")], user_id=user_id, actor="a")
    with pytest.raises(MemoryNotFound):
        mx.get(change.memory_id, user_id="intruder")
    with pytest.raises(MemoryNotFound):
        mx.update(change.memory_id, user_id="intruder", details="x")
    with pytest.raises(MemoryNotFound):
        mx.delete(change.memory_id, user_id="intruder")
    with pytest.raises(MemoryNotFound):
        mx.history(change.memory_id, user_id="intruder")
    assert mx.get(change.memory_id, user_id=user_id).details == ""


def test_delete_removes_row_vector_and_fulltext(mx, user_id):
    (change,) = mx.store.apply([InsertOp(memory=EpisodicMemory(
        user_id=user_id, summary="We adopted a parrot named Kiwi", occurred_at=T0))], user_id=user_id, actor="a")
    assert mx.store.vectors.ids(user_id) == {change.memory_id}
    mx.delete(change.memory_id, user_id=user_id)
    assert mx.search("parrot Kiwi", user_id=user_id, method="bm25") == []
    assert mx.store.vectors.ids(user_id) == set()
    with pytest.raises(MemoryNotFound):
        mx.delete(change.memory_id, user_id=user_id)


def test_delete_user_removes_rows_vectors_history_and_inputs(mx, user_id):
    mx.add("My name is Ada and my email is ada@example.org", user_id=user_id)
    mx.add("Unrelated person", user_id="bystander-" + user_id)
    memory_ids = [m.id for m in mx.list(user_id=user_id)]
    assert memory_ids and mx.store.vectors.count(user_id) == len(memory_ids)
    counts = mx.delete_user(user_id)
    assert counts["memories"] == len(memory_ids) and counts["history"] >= len(memory_ids) and counts["inputs"] == 1
    assert mx.list(user_id=user_id) == []
    assert mx.store.vectors.count(user_id) == 0
    for memory_id in memory_ids:
        with pytest.raises(MemoryNotFound):
            mx.history(memory_id, user_id=user_id)
    assert mx.search("email", user_id=user_id, method="bm25") == []
    assert mx.list(user_id="bystander-" + user_id)  # the other user is untouched


def test_deleting_a_user_with_inputs_queued_leaves_nothing_of_theirs(mx, user_id):
    """Inputs accepted with wait=False and a batch already running when the user is deleted: nothing of
    theirs is written after (a batch in flight used to write its memories once the rows were gone)."""
    for i in range(24):
        mx.add(f"Diary {i}: I went to the clinic on day {i} about my knee.", user_id=user_id, wait=False)
    mx.delete_user(user_id)
    mx.flush(timeout=120)
    assert mx.list(user_id=user_id) == [] and mx.store.count(user_id=user_id) == {}
    assert mx.store.vectors.count(user_id) == 0 and user_id not in mx.user_ids()
    assert mx.search("clinic knee", user_id=user_id, method="bm25") == []


def test_a_batch_whose_inputs_were_deleted_writes_nothing(mx, user_id):
    """The write path's own check, for a batch another process runs while the user is deleted."""
    added = mx.add("I keep bees on the roof.", user_id=user_id)
    mx.delete_user(user_id)
    op = InsertOp(memory=EpisodicMemory(user_id=user_id, summary="I keep bees on the roof.", occurred_at=T0))
    with pytest.raises(InputsGone, match="deleted while it ran"):
        mx.store.apply([op], user_id=user_id, actor="episodic_memory_manager", ledger=added.input_ids)
    assert mx.store.count(user_id=user_id) == {} and mx.store.vectors.count(user_id) == 0


def test_list_filters_and_orders(mx, user_id):
    ops = [InsertOp(memory=EpisodicMemory(user_id=user_id, summary=f"event {i}",
                                          occurred_at=T0.replace(day=i + 1))) for i in range(5)]
    ops.append(_semantic(user_id, "Kiwi", "Kiwi is a parrot"))
    mx.store.apply(ops, user_id=user_id, actor="a")
    episodes = mx.list(user_id=user_id, memory_types=["episodic"])
    assert [m.summary for m in episodes] == [f"event {i}" for i in (4, 3, 2, 1, 0)]
    window = mx.list(user_id=user_id, start=T0.replace(day=2), end=T0.replace(day=4))
    assert sorted(m.summary for m in window) == ["event 1", "event 2"]
    assert len(mx.list(user_id=user_id, limit=2, offset=1)) == 2


PAGE = [f"Line {i}: minutes of the garden committee, hedges, compost and the watering rota." for i in range(40)]


def _raw(mx, memory_id: str, column: str):
    from sqlmodel import Session

    from mirix_py.store.tables import MemoryRow

    with Session(mx.store.engine) as session:
        return getattr(session.get(MemoryRow, memory_id), column)


def test_a_row_keeps_each_long_text_once(mx, user_id):
    from mirix_py.records import ResourceMemory

    details = "The boiler service code is kept in the red binder, on the shelf in the cellar."
    summary = "Read the house manual while waiting for the plumber"
    content = "\n".join(PAGE) + "\n\n  indented, with trailing spaces  \n"
    (ep, res) = mx.store.apply([
        InsertOp(memory=EpisodicMemory(user_id=user_id, summary=summary, details=details, occurred_at=T0)),
        InsertOp(memory=ResourceMemory(user_id=user_id, title="House manual", content=content)),
    ], user_id=user_id, actor="test")
    for change, long_texts in ((ep, (summary, details)), (res, (content,))):
        stored = _raw(mx, change.memory_id, "fields")
        assert not any(text in str(stored) for text in long_texts)  # only in the search text
        assert all(text in _raw(mx, change.memory_id, "text") for text in long_texts)
    assert mx.get(ep.memory_id, user_id=user_id).details == details
    assert mx.get(res.memory_id, user_id=user_id).content == content  # byte for byte, whitespace too
    updated = mx.update(res.memory_id, user_id=user_id, content=content.replace("Line 7", "Line seven"))
    assert mx.get(res.memory_id, user_id=user_id).content == updated.content != content
    (hit,) = mx.search("boiler service code", user_id=user_id, memory_types=["episodic"], method="bm25")
    assert hit.memory.details == details


def test_history_of_a_text_edited_line_by_line_stores_patches_and_reads_every_state(mx, user_id):
    from sqlalchemy import text as sql

    from mirix_py.records import ResourceMemory

    versions = ["\n".join(PAGE)]
    for i in (3, 17, 30):
        lines = versions[-1].split("\n")
        lines[i] = f"Line {i}: changed on visit {len(versions)}"
        versions.append("\n".join(lines))
    (change,) = mx.store.apply([InsertOp(memory=ResourceMemory(user_id=user_id, title="Screenshot of Firefox",
                                                                content=versions[0]))], user_id=user_id, actor="t")
    mid = change.memory_id
    for content in versions[1:]:
        mx.update(mid, user_id=user_id, content=content)
    mx.delete(mid, user_id=user_id)
    events = mx.history(mid, user_id=user_id)
    assert [e.operation.value for e in events] == ["insert", "update", "update", "update", "delete"]
    assert [e.after["content"] for e in events[:4]] == versions and events[4].after is None
    assert [e.before["content"] for e in events[1:]] == versions
    with mx.engine.connect() as conn:
        sizes = [n for (n,) in conn.execute(sql("SELECT LENGTH(CAST(before AS TEXT)) FROM memory_history "
                                                "WHERE memory_id = :m AND operation = 'update' ORDER BY id"),
                                            {"m": mid})]
    assert len(sizes) == 3 and max(sizes) < len(versions[0]) / 3  # patches, not whole pages


def test_rows_and_history_written_before_the_single_copy_layout_still_read(mx, user_id):
    from sqlalchemy import update
    from sqlmodel import Session

    from mirix_py.records import type_fields
    from mirix_py.store.tables import HistoryRow, MemoryRow

    (change,) = mx.store.apply([_semantic(user_id, "House manual", "Where things are kept in the house",
                                          details="\n".join(PAGE))], user_id=user_id, actor="t")
    mid = change.memory_id
    mx.update(mid, user_id=user_id, details="\n".join(PAGE[1:]))
    current = mx.get(mid, user_id=user_id)
    old_before = mx.history(mid, user_id=user_id)[1].before
    with Session(mx.store.engine) as session:  # as an older version stored them: every field whole
        session.execute(update(MemoryRow).where(MemoryRow.id == mid).values(fields=type_fields(current)))
        session.execute(update(HistoryRow).where(HistoryRow.memory_id == mid, HistoryRow.operation == "update")
                        .values(before=old_before))
        session.commit()
    assert mx.get(mid, user_id=user_id) == current
    assert mx.history(mid, user_id=user_id)[1].before["details"] == "\n".join(PAGE)


def test_the_users_actors_follow_its_episodes(mx, user_id):
    def said(who: str, text: str) -> InsertOp:
        return InsertOp(memory=EpisodicMemory(user_id=user_id, summary=text, actor=who, occurred_at=T0))

    changes = mx.store.apply([said("Jon", "Bye!"), said("Gina", "Hi!"), said("Jon", "Thanks!"),
                              _semantic(user_id, "Rex", "Rex is a dog")], user_id=user_id, actor="a")
    mx.store.apply([InsertOp(memory=EpisodicMemory(user_id="bystander-" + user_id, summary="Hey", actor="Ann"))],
                   user_id="bystander-" + user_id, actor="a")
    assert mx.store.actors(user_id=user_id) == ["Gina", "Jon"]
    ids = [c.memory_id for c in changes]
    said = mx.store.provenance_of(ids + ["mem_unknown"], user_id=user_id)
    assert {i: p.actor for i, p in said.items()} == {ids[0]: "Jon", ids[1]: "Gina", ids[2]: "Jon", ids[3]: None}
    assert mx.store.provenance_of(ids, user_id="intruder") == {}
    mx.store.apply([UpdateOp(memory_id=ids[1], fields={"actor": "Gina Lee"})], user_id=user_id, actor="a")
    mx.delete(ids[0], user_id=user_id)
    assert mx.store.actors(user_id=user_id) == ["Gina Lee", "Jon"]
    mx.delete(ids[2], user_id=user_id)
    assert mx.store.actors(user_id=user_id) == ["Gina Lee"]
    mx.delete_user(user_id)
    assert mx.store.actors(user_id=user_id) == []
    assert mx.store.actors(user_id="bystander-" + user_id) == ["Ann"]


def test_many_records_read_at_once_are_the_ones_read_one_by_one_and_only_the_users(mx, user_id):
    from mirix_py.records import KnowledgeVaultMemory, ResourceMemory

    ops = [InsertOp(memory=EpisodicMemory(user_id=user_id, summary="Adopted a cat", actor="Ann", occurred_at=T0,
                                          tags=["pets"])),
           _semantic(user_id, "Rex", "Rex is a dog", details="a beagle"),
           InsertOp(memory=ResourceMemory(user_id=user_id, title="House manual", content="Boiler: reset twice.")),
           InsertOp(memory=KnowledgeVaultMemory(user_id=user_id, caption="wifi password", secret_value="hunter2-x9"))]
    ids = [c.memory_id for c in mx.store.apply(ops, user_id=user_id, actor="a")]
    (other,) = [c.memory_id for c in mx.store.apply([_semantic("other-" + user_id, "Mia", "Mia is a cat")],
                                                    user_id="other-" + user_id, actor="a")]
    found = mx.store.get_many([*ids, other, "mem_unknown"], user_id=user_id)
    assert sorted(found) == sorted(ids)
    for memory_id in ids:  # each as `get` reads it through the ORM: dates with their zone, the secret masked
        assert found[memory_id] == mx.store.get(memory_id, user_id=user_id)
    assert found[ids[0]].occurred_at == T0 and found[ids[0]].tags == ["pets"]
    assert found[ids[3]].secret_value != "hunter2-x9"
    assert mx.store.get_many([], user_id=user_id) == {}


def test_inserted_as_names_the_inserting_actor_of_the_users_own_memories_only(mx, user_id):
    mine = mx.store.apply([InsertOp(memory=SemanticMemory(user_id=user_id, name="Tom", summary="Tom is a pilot"))],
                          user_id=user_id, actor="semantic_memory_manager")
    theirs = mx.store.apply([InsertOp(memory=SemanticMemory(user_id="other", name="Ann", summary="Ann sails"))],
                            user_id="other", actor="api")
    mine_id, theirs_id = mine[0].memory_id, theirs[0].memory_id
    mx.store.apply([UpdateOp(memory_id=mine_id, fields={"summary": "Tom flies planes"})], user_id=user_id, actor="api")
    assert mx.store.inserted_as([mine_id, theirs_id], user_id=user_id) == {mine_id: "semantic_memory_manager"}


def test_deleting_a_user_while_another_process_writes_for_them_leaves_nothing(tmp_path, embedder,
                                                                               pgvector_schema_url):
    """Two engines on one PostgreSQL (two servers of a service): one is writing a batch for the user,
    held inside its transaction, when the other deletes the user. The deletion waits for that write
    (the batch holds its inputs shared) and then deletes what it wrote."""
    from mirix_py.engine import Mirix

    layout = {"database_url": pgvector_schema_url, "vector_store": "pgvector"}
    with Mirix(tmp_path / "a", embedder=embedder, **layout) as writer, \
            Mirix(tmp_path / "b", embedder=embedder, **layout) as deleter:
        inside, release = threading.Event(), threading.Event()
        refresh = writer.store.fulltext.refresh_near

        def held(*args, **kwargs):  # inside the batch's transaction, after its rows are written
            inside.set()
            assert release.wait(30)
            return refresh(*args, **kwargs)

        writer.store.fulltext.refresh_near = held
        adding = threading.Thread(target=writer.add, args=("I keep bees on the roof.",), kwargs={"user_id": "ada"})
        adding.start()
        assert inside.wait(30)
        deleting = threading.Thread(target=deleter.delete_user, args=("ada",))
        deleting.start()
        deleting.join(0.5)
        assert deleting.is_alive()  # waiting on the inputs the batch holds
        release.set()
        adding.join(30)
        deleting.join(30)
        assert not deleting.is_alive()
        assert deleter.store.count(user_id="ada") == {} and writer.list(user_id="ada") == []
        assert deleter.store.vectors.count("ada") == 0


def test_many_records_read_with_expired_ones_only_when_asked(mx, user_id):
    kept, lapsed = [c.memory_id for c in mx.store.apply([_semantic(user_id, "Rex", "Rex is a dog"),
                                                         _semantic(user_id, "Mia", "Mia is a cat")],
                                                        user_id=user_id, actor="a")]
    (other,) = [c.memory_id for c in mx.store.apply([_semantic("other-" + user_id, "Ann", "Ann sails")],
                                                    user_id="other-" + user_id, actor="a")]
    mx.store.set_expiry({lapsed: T0}, user_id=user_id)  # past: not yet swept
    ids = [kept, lapsed, other, "mem_unknown"]
    assert sorted(mx.store.get_many(ids, user_id=user_id)) == [kept]
    with_expired = mx.store.get_many(ids, user_id=user_id, include_expired=True)
    assert sorted(with_expired) == sorted([kept, lapsed])
    assert with_expired[lapsed].name == "Mia" and with_expired[lapsed].expires_at == T0
    assert mx.store.get_many([], user_id=user_id, include_expired=True) == {}


def _vault(user_id: str, caption: str, secret: str) -> InsertOp:
    from mirix_py.records import KnowledgeVaultMemory

    return InsertOp(memory=KnowledgeVaultMemory(user_id=user_id, caption=caption, secret_value=secret))


def test_vault_values_are_the_users_unexpired_entries_revealed(mx, user_id, monkeypatch):
    from sqlalchemy import update
    from sqlmodel import Session

    from mirix_py.store import memories
    from mirix_py.store.tables import MemoryRow

    wifi, door, bike, broken, lapsed, fact = [c.memory_id for c in mx.store.apply([
        _vault(user_id, "wifi password", "hunter2-x9"), _vault(user_id, "door code", "4471-B"),
        _vault(user_id, "bike lock", "88-12-31"), _vault(user_id, "alarm pin", "9090-Q"),
        _vault(user_id, "old pin", "1234-Z"), _semantic(user_id, "Rex", "Rex is a dog")],
        user_id=user_id, actor="a")]
    (theirs,) = [c.memory_id for c in mx.store.apply([_vault("other-" + user_id, "their pin", "5555-K")],
                                                     user_id="other-" + user_id, actor="a")]
    mx.store.set_expiry({lapsed: T0}, user_id=user_id)
    with Session(mx.store.engine) as session:  # a value the vault key cannot open
        session.execute(update(MemoryRow).where(MemoryRow.id == broken).values(secret="not-a-fernet-token"))
        session.commit()
    monkeypatch.setattr(memories, "IDS_PER_QUERY", 2)  # the ids read over several queries
    asked = [wifi, door, bike, broken, lapsed, fact, theirs, "kv_unknown"]
    assert mx.store.vault_values(asked, user_id=user_id) == {wifi: "hunter2-x9", door: "4471-B", bike: "88-12-31"}
    assert mx.store.vault_values(asked, user_id="other-" + user_id) == {theirs: "5555-K"}
    assert mx.store.vault_values([], user_id=user_id) == {}
    assert mx.store.get(wifi, user_id=user_id).secret_value != "hunter2-x9"  # other reads stay masked


def test_one_mentioning_finds_a_memory_of_the_user_holding_a_text_besides_the_ones_named(mx, user_id):
    said, field, tagged, silent = [c.memory_id for c in mx.store.apply([
        _semantic(user_id, "Door", "The spare key is under blue-door-42's mat"),
        _semantic(user_id, "Key", "Where the spare key is kept", source="blue-door-42 note"),
        _semantic(user_id, "Shed", "The shed holds the bikes", tags=["blue-door-42"]),
        _semantic(user_id, "Rex", "Rex is a dog")], user_id=user_id, actor="a")]
    mx.store.apply([_semantic("other-" + user_id, "Gate", "The gate is green-gate-7")],
                   user_id="other-" + user_id, actor="a")
    mx.store.set_expiry({tagged: T0}, user_id=user_id)  # expired, not yet swept: still counts
    assert mx.store.one_mentioning("blue-door-42", user_id=user_id) in {said, field, tagged}
    assert mx.store.one_mentioning("blue-door-42", user_id=user_id, besides=[said, field]) == tagged
    assert mx.store.one_mentioning("blue-door-42", user_id=user_id, besides=[said, tagged]) == field
    assert mx.store.one_mentioning("blue-door-42", user_id=user_id, besides=[field, tagged]) == said
    assert mx.store.one_mentioning("blue-door-42", user_id=user_id, besides=[said, field, tagged]) is None
    assert mx.store.one_mentioning("green-gate-7", user_id=user_id) is None  # another user's
    assert mx.store.one_mentioning("green-gate-7", user_id="other-" + user_id) is not None
    assert mx.store.one_mentioning("purple-door", user_id=user_id, besides=[silent]) is None


def test_delete_user_waits_for_another_writers_transaction_on_sqlite(mx_sqlite, user_id, caplog):
    """It once began deferred, and its first write found the write lock held: SQLite refuses that
    upgrade at once, so it failed in milliseconds ("database is locked") instead of waiting out the
    busy timeout. It asks for the write lock first (`BEGIN IMMEDIATE`) and waits."""
    from sqlalchemy import event

    mx = mx_sqlite
    mx.add("My name is Victor and I love sailing in Greece.", user_id=user_id)
    waiting, out = threading.Event(), []

    def before(conn, cursor, statement, parameters, context, executemany):
        if threading.current_thread() is not deleter:
            return
        if statement.startswith("BEGIN IMMEDIATE"):  # asking for the write lock
            waiting.set()

    def delete() -> None:
        try:
            out.append(mx.delete_user(user_id))
        except Exception as exc:  # asserted below
            out.append(exc)
        waiting.set()

    deleter = threading.Thread(target=delete, daemon=True)
    with mx.engine.connect() as writer:
        writer.exec_driver_sql("BEGIN IMMEDIATE")  # another write transaction, open
        event.listen(mx.engine, "before_cursor_execute", before)
        try:
            deleter.start()
            assert waiting.wait(120)
            writer.rollback()
            deleter.join(120)
        finally:
            event.remove(mx.engine, "before_cursor_execute", before)
    assert isinstance(out[0], dict) and out[0]["memories"] >= 1, out
    assert mx.list(user_id=user_id) == [] and user_id not in mx.user_ids()
    assert "not available" not in caplog.text


@pytest.mark.parametrize("when", [datetime(1, 1, 1, tzinfo=timezone.utc),
                                  datetime(9999, 12, 31, 23, 59, tzinfo=timezone.utc)])
def test_an_update_to_a_time_add_refuses_is_refused_alike_and_writes_nothing(mx_sqlite, user_id, when):
    (change,) = mx_sqlite.store.apply([InsertOp(memory=EpisodicMemory(
        user_id=user_id, occurred_at=T0, summary="I went to the dentist yesterday and go again tomorrow."))],
        user_id=user_id, actor="seed")
    with pytest.raises(InvalidInput) as refused_add:
        mx_sqlite.add("I went to the dentist.", user_id=user_id, occurred_at=when)
    with pytest.raises(InvalidInput) as refused_update:
        mx_sqlite.update(change.memory_id, {"occurred_at": when}, user_id=user_id)
    assert str(refused_update.value) == str(refused_add.value)
    assert "outside the years 2 to 9998" in str(refused_update.value)
    assert mx_sqlite.get(change.memory_id, user_id=user_id).occurred_at == T0
    assert [e.operation.value for e in mx_sqlite.history(change.memory_id, user_id=user_id)] == ["insert"]


def test_an_episode_said_near_the_calendars_ends_is_stored_with_what_it_can_resolve(mx_sqlite, user_id):
    old = mx_sqlite.add("We moved to the valley 10 years ago.", user_id=user_id, occurred_at="0005-06-01T00:00:00Z")
    late = mx_sqlite.add("I retire next year and travel next winter.", user_id=user_id,
                         occurred_at="9998-12-31T12:00:00Z")
    assert [old.status.value, late.status.value] == ["processed", "processed"]
    texts = sorted(m.search_text() for m in mx_sqlite.list(user_id=user_id, memory_types=["episodic"]))
    assert texts == ["[1 June 0005, 00:00] user: We moved to the valley 10 years ago.",
                     "[31 December 9998, 12:00] user: I retire next year (9999) and travel next winter."]


def test_a_core_block_an_older_version_stored_with_a_naive_said_time_reads_as_utc(mx, user_id):
    """`said` now refuses a time without a zone; an older version let `update` store one, and its
    block became unreadable (list, core_memory and /context raised)."""
    from sqlmodel import Session

    from mirix_py.store.tables import MemoryRow

    block = mx.core_append("human", "Lives in Lisbon.", user_id=user_id)
    with Session(mx.store.engine) as session:
        row = session.get(MemoryRow, block.id)
        row.fields = {**row.fields, "said": {"Lives in Lisbon.": "2026-01-01T10:00:00"}}
        session.add(row)
        session.commit()
    said = mx.core_memory(user_id=user_id)["human"].said["Lives in Lisbon."]
    assert said == datetime(2026, 1, 1, 10, tzinfo=timezone.utc)
    assert [m.id for m in mx.list(user_id=user_id, memory_types=["core"])] == [block.id]


def test_an_update_citing_an_input_not_of_the_users_log_is_refused_and_changes_nothing(mx):
    """An input id among the source ids says the memory came from that input: one of another user's
    (or of no one's) would be read as this user's, and their export would carry its caller's id."""
    alice = mx.add("My sister is a nurse.", user_id="alice", source_id="ward-7/patient-alice").input_ids[0]
    bob = mx.add("I like hiking with my dog Rex.", user_id="bob").input_ids[0]
    episode = mx.list(user_id="bob", memory_types=["episodic"])[0]
    before, history = mx.get(episode.id, user_id="bob"), mx.history(episode.id, user_id="bob")
    for cited in (alice, "in_" + "0" * 32):
        with pytest.raises(InvalidInput, match=f"source_ids cite \\['{cited}'\\], which user 'bob' has no input of"):
            mx.update(episode.id, {"source_ids": [*before.source_ids, cited]}, user_id="bob")
    assert mx.get(episode.id, user_id="bob") == before and mx.history(episode.id, user_id="bob") == history
    later = mx.add("Rex is a border collie.", user_id="bob").input_ids[0]
    cited = [*before.source_ids, later, "trail-log-3"]  # the user's own input, and a caller's id
    assert mx.update(episode.id, {"source_ids": cited}, user_id="bob").source_ids == cited
    assert mx.update(episode.id, {"source_ids": [bob, "trail-log-3"]}, user_id="bob").source_ids == [bob, "trail-log-3"]
