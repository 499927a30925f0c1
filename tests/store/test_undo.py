"""Undo of one input: inserts deleted, updates and deletions (merges too) restored, vault secrets
back as they were; recorded as history; conflicts with later inputs refused unless forced."""

from __future__ import annotations

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.tools.ops import DeleteOp, InsertOp, MergeOp, UpdateOp
from mirix_py.records import KnowledgeVaultMemory, SemanticMemory
from mirix_py.store.undo import plan_undo

U = "ada"


@pytest.fixture
def mx(tmp_path, embedder):
    with Mirix(tmp_path / "d", embedder=embedder) as engine:
        yield engine


def _fact(name: str, summary: str) -> SemanticMemory:
    return SemanticMemory(user_id=U, name=name, summary=summary)


def _state(mx) -> dict[str, dict]:
    """Every memory of the user, revealed, without the timestamps an undo may move."""
    return {m.id: m.model_dump(exclude={"updated_at", "created_at"})
            for m in mx.store.list(user_id=U, limit=1000, reveal=True)}


def _seed(mx) -> dict[str, str]:
    changes = mx.store.apply([InsertOp(memory=_fact("Tom", "Tom is Ada's brother")),
                              InsertOp(memory=_fact("Ines", "Ines is a mountain guide")),
                              InsertOp(memory=_fact("Ines", "Ines guides in June")),
                              InsertOp(memory=KnowledgeVaultMemory(user_id=U, entry_type="password", source="cabin",
                                                                   secret_value="7781-kestrel", caption="cabin wifi"))],
                             user_id=U, actor="seed", input_id="in_seed")
    return {"tom": changes[0].memory_id, "ines": changes[1].memory_id, "ines2": changes[2].memory_id,
            "wifi": changes[3].memory_id}


def test_undo_reverts_inserts_updates_merges_and_deletions(mx):
    ids = _seed(mx)
    before = _state(mx)
    mx.store.apply([InsertOp(memory=_fact("Lea", "Lea is Tom's wife")),
                    UpdateOp(memory_id=ids["tom"], fields={"summary": "Tom is a pilot", "tags": ["family"]}),
                    MergeOp(memory_ids=[ids["ines"], ids["ines2"]], fields={"summary": "Ines guides in June"}),
                    UpdateOp(memory_id=ids["wifi"], fields={"secret_value": "9999-new"}),
                    ], user_id=U, actor="semantic_memory_manager", input_id="in_bad")
    mx.store.apply([DeleteOp(memory_id=ids["wifi"])], user_id=U, actor="knowledge_vault_manager", input_id="in_bad")
    assert _state(mx) != before

    changes = mx.undo("in_bad", user_id=U)

    assert _state(mx) == before  # every field, the vault secret included
    assert {c.actor for c in changes} == {"undo:in_bad"}
    assert sorted(c.operation.value for c in changes) == ["delete", "insert", "insert", "update", "update"]
    events = mx.history(ids["tom"], user_id=U)
    assert [e.operation.value for e in events] == ["insert", "update", "update"]
    assert events[-1].actor == "undo:in_bad" and events[-1].after["summary"] == "Tom is Ada's brother"
    assert "$secret" not in str(mx.history(ids["wifi"], user_id=U))  # the kept secret is never shown
    hits = mx.search("mountain guide", user_id=U)
    assert ids["ines"] in {h.memory.id for h in hits}  # restored memories are searchable again


def test_a_restored_memory_keeps_when_it_was_created(mx):
    ids = _seed(mx)
    created = mx.get(ids["tom"], user_id=U).created_at
    mx.store.apply([DeleteOp(memory_id=ids["tom"])], user_id=U, actor="semantic_memory_manager", input_id="in_bad")
    mx.undo("in_bad", user_id=U)
    restored = mx.get(ids["tom"], user_id=U)
    assert restored.created_at == created and restored.updated_at > created


def test_an_input_undone_twice_or_unknown_is_a_clear_error(mx):
    _seed(mx)
    mx.undo("in_seed", user_id=U)
    assert _state(mx) == {}
    with pytest.raises(InvalidInput, match="already undone"):
        mx.undo("in_seed", user_id=U)
    with pytest.raises(InvalidInput, match="changed no memory"):
        mx.undo("in_nothing", user_id=U)
    with pytest.raises(InvalidInput, match="changed no memory"):
        mx.undo("in_seed", user_id="someone else")


def test_a_later_change_is_a_conflict_unless_forced(mx):
    ids = _seed(mx)
    mx.store.apply([UpdateOp(memory_id=ids["tom"], fields={"summary": "Tom is a pilot"})],
                   user_id=U, actor="semantic_memory_manager", input_id="in_1")
    mx.store.apply([UpdateOp(memory_id=ids["tom"], fields={"details": "flies for Lufthansa"})],
                   user_id=U, actor="semantic_memory_manager", input_id="in_2")
    with pytest.raises(InvalidInput, match=rf"{ids['tom']} \(changed later by in_2\)"):
        mx.undo("in_1", user_id=U)
    assert mx.get(ids["tom"], user_id=U).summary == "Tom is a pilot"  # refused: nothing written
    mx.undo("in_1", user_id=U, force=True)
    tom = mx.get(ids["tom"], user_id=U)
    assert tom.summary == "Tom is Ada's brother" and tom.details == ""


def test_undoing_the_later_input_first_frees_the_earlier_one(mx):
    """As the refusal asks: undo the later change, then the earlier one undoes; a change made after
    the later input's undo still stands in the way."""
    ids = _seed(mx)
    for input_id, fields in (("in_1", {"summary": "Tom is a pilot"}), ("in_2", {"details": "flies for Lufthansa"})):
        mx.store.apply([UpdateOp(memory_id=ids["tom"], fields=fields)], user_id=U,
                       actor="semantic_memory_manager", input_id=input_id)
    with pytest.raises(InvalidInput, match="changed later by in_2"):
        mx.undo("in_1", user_id=U)
    mx.undo("in_2", user_id=U)
    mx.undo("in_1", user_id=U)
    tom = mx.get(ids["tom"], user_id=U)
    assert tom.summary == "Tom is Ada's brother" and tom.details == ""
    with pytest.raises(InvalidInput, match="already undone"):
        mx.undo("in_1", user_id=U)

    mx.store.apply([UpdateOp(memory_id=ids["ines"], fields={"summary": "Ines retired"})], user_id=U,
                   actor="semantic_memory_manager", input_id="in_3")
    mx.store.apply([UpdateOp(memory_id=ids["ines"], fields={"details": "in Chamonix"})], user_id=U,
                   actor="semantic_memory_manager", input_id="in_4")
    mx.undo("in_4", user_id=U)
    mx.update(ids["ines"], {"details": "in Zermatt"}, user_id=U)  # a change of its own after that undo
    with pytest.raises(InvalidInput, match="changed later by api"):
        mx.undo("in_3", user_id=U)


def test_undo_of_an_offline_add_removes_what_it_wrote(mx):
    kept = mx.add("I adopted a cat named Miso", user_id=U)
    bad = mx.add("My bank PIN is 4417 and I moved to Lisbon in May", user_id=U)
    assert len(bad.changes) >= 2
    before_ids = {c.memory_id for c in kept.changes}
    mx.undo(bad.input_ids[0], user_id=U)
    assert {m.id for m in mx.list(user_id=U)} == before_ids
    assert not [h for h in mx.search("Lisbon PIN", user_id=U) if h.memory.id not in before_ids]


def test_plan_undo_is_pure_and_orders_deletions_first():
    from datetime import datetime, timezone

    from mirix_py.records import HistoryEvent

    now = datetime.now(timezone.utc)
    fact = _fact("Tom", "x").model_dump(mode="json") | {"id": "sem_1"}

    def event(i, op, before, after, input_id):
        return HistoryEvent(id=i, memory_id=(before or after)["id"], user_id=U, memory_type="semantic",
                            operation=op, before=before, after=after, actor="m", input_id=input_id, created_at=now)

    histories = {"sem_1": [event(1, "insert", None, fact, "in_a"), event(2, "delete", fact, None, "in_b")],
                 "sem_2": [event(3, "insert", None, fact | {"id": "sem_2"}, "in_b")]}
    plan = plan_undo("in_b", histories, decrypt=lambda t: t)
    assert [op.op for op in plan.ops] == ["delete", "insert"]
    assert plan.ops[1].memory.id == "sem_1" and not plan.conflicts


def test_an_input_processed_in_a_batch_of_several_is_undone_alone(mx):
    """Queued inputs (wait=False, REST's default, chat's exchanges) are processed in batches; what a
    change cites of one input alone is that input's to take back."""
    first = mx.add("Ada's brother Tom flies planes for a regional airline.", user_id=U, wait=False).input_ids[0]
    second = mx.add("Ada bought a red kayak in Bergen last summer.", user_id=U, wait=False).input_ids[0]
    mx.flush()
    assert {h.memory.id for h in mx.search("kayak Bergen", user_id=U)}
    changes = mx.undo(second, user_id=U)
    assert changes and all(c.actor == f"undo:{second}" for c in changes)
    texts = " ".join(m.search_text() for m in mx.list(user_id=U))
    assert "kayak" not in texts and "regional airline" in texts
    assert mx.undo(first, user_id=U)
    assert mx.list(user_id=U) == []


def _merged_tom(mx) -> dict[str, str]:
    """Ada's brother Tom (in_tom), his debt (in_debt), a guide (in_guide), then in_merge folding
    the debt and the guide into Tom's fact and adding a fact of its own."""
    ids = {}
    for input_id, key, fact in (("in_tom", "tom", _fact("Tom", "Tom is Ada's brother")),
                                ("in_debt", "debt", _fact("Tom", "Tom owes Ada 500 euros")),
                                ("in_guide", "guide", _fact("Tom", "Tom guides climbs in Chamonix"))):
        ids[key] = mx.store.apply([InsertOp(memory=fact)], user_id=U, actor="seed", input_id=input_id)[0].memory_id
    changes = mx.store.apply([MergeOp(memory_ids=[ids["tom"], ids["debt"], ids["guide"]], fields={
        "summary": "Tom is Ada's brother, owes her 500 euros and guides climbs in Chamonix"}),
                              InsertOp(memory=_fact("Lea", "Lea is Tom's wife"))],
                             user_id=U, actor="semantic_memory_manager", input_id="in_merge")
    ids["lea"] = changes[-1].memory_id
    return ids


def test_a_forced_undo_takes_back_the_merge_that_folded_its_memory_away(mx):
    ids = _merged_tom(mx)
    with pytest.raises(InvalidInput, match=rf"{ids['debt']} \(changed later by in_merge\)"):
        mx.undo("in_debt", user_id=U)
    assert "500 euros" in mx.get(ids["tom"], user_id=U).summary  # refused: nothing written

    mx.undo("in_debt", user_id=U, force=True)

    tom = mx.get(ids["tom"], user_id=U)
    assert tom.summary == "Tom is Ada's brother" and "in_debt" not in tom.source_ids
    assert mx.get(ids["guide"], user_id=U).summary == "Tom guides climbs in Chamonix"  # the merge's other member back
    assert set(_state(mx)) == {ids["tom"], ids["guide"], ids["lea"]}
    assert not [h for h in mx.search("owes 500 euros", user_id=U) if "500" in h.memory.search_text()]
    assert "$merged" not in str(mx.history(ids["tom"], user_id=U)) + str(mx.history(ids["debt"], user_id=U))


def test_undoing_the_merge_after_a_forced_undo_does_not_bring_the_memory_back(mx):
    ids = _merged_tom(mx)
    mx.undo("in_debt", user_id=U, force=True)

    mx.undo("in_merge", user_id=U)  # takes back what is left of it: Lea's fact

    assert set(_state(mx)) == {ids["tom"], ids["guide"]}  # the debt stays gone
    assert mx.get(ids["tom"], user_id=U).summary == "Tom is Ada's brother"
    with pytest.raises(InvalidInput, match="already undone"):
        mx.undo("in_debt", user_id=U, force=True)


def test_a_forced_undo_of_a_merges_survivor_brings_back_what_was_folded_into_it(mx):
    ids = _merged_tom(mx)
    mx.undo("in_tom", user_id=U, force=True)
    assert {m.summary for m in mx.store.list(user_id=U, limit=100)} == {
        "Tom owes Ada 500 euros", "Tom guides climbs in Chamonix", "Lea is Tom's wife"}
    assert ids["tom"] not in _state(mx)


def test_undoing_a_later_input_does_not_put_back_what_a_forced_undo_took(mx):
    ids = _seed(mx)
    for input_id, fields in (("in_1", {"summary": "Tom is a pilot"}), ("in_2", {"details": "flies for Lufthansa"})):
        mx.store.apply([UpdateOp(memory_id=ids["tom"], fields=fields)], user_id=U,
                       actor="semantic_memory_manager", input_id=input_id)
    mx.undo("in_1", user_id=U, force=True)  # overwrites in_2's change too

    with pytest.raises(InvalidInput, match="already undone"):
        mx.undo("in_2", user_id=U)
    tom = mx.get(ids["tom"], user_id=U)
    assert tom.summary == "Tom is Ada's brother" and tom.details == ""


def test_a_memory_whose_insert_a_forced_undo_took_back_stays_deleted(mx):
    lea = mx.store.apply([InsertOp(memory=_fact("Lea", "Lea is Tom's wife"))], user_id=U, actor="seed",
                         input_id="in_lea")[0].memory_id
    mx.store.apply([DeleteOp(memory_id=lea)], user_id=U, actor="semantic_memory_manager", input_id="in_gone")

    assert mx.undo("in_lea", user_id=U, force=True) == []  # deleted already: it stays so
    with pytest.raises(InvalidInput, match="already undone"):
        mx.undo("in_gone", user_id=U)
    assert _state(mx) == {}
    assert [e.actor for e in mx.history(lea, user_id=U)][-1] == "undo:in_lea"


def test_a_forced_undo_takes_back_a_merge_of_what_a_merge_made(mx):
    """Tom's fact took the debt in (in_m), then Tom's home took Tom's fact in (in_n): forcing the
    debt's undo puts both survivors back as they were before, and neither merge undone later brings it back."""
    ids = {key: mx.store.apply([InsertOp(memory=_fact("Tom", summary))], user_id=U, actor="seed",
                               input_id=f"in_{key}")[0].memory_id
           for key, summary in (("tom", "Tom is Ada's brother"), ("debt", "Tom owes Ada 500 euros"),
                                ("home", "Tom lives in Bergen"))}
    mx.store.apply([MergeOp(memory_ids=[ids["tom"], ids["debt"]], fields={
        "summary": "Tom is Ada's brother and owes her 500 euros"})], user_id=U, actor="m", input_id="in_m")
    mx.store.apply([MergeOp(memory_ids=[ids["home"], ids["tom"]], fields={
        "summary": "Tom lives in Bergen, is Ada's brother and owes her 500 euros"})], user_id=U, actor="m", input_id="in_n")

    mx.undo("in_debt", user_id=U, force=True)
    for later in ("in_n", "in_m"):
        with pytest.raises(InvalidInput, match="already undone"):
            mx.undo(later, user_id=U)

    assert {k: v["summary"] for k, v in _state(mx).items()} == {
        ids["tom"]: "Tom is Ada's brother", ids["home"]: "Tom lives in Bergen"}
