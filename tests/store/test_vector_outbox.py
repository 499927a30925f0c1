"""A write whose process stops between its SQL commit and its vector index write (Chroma) is finished
at the next open (`store.vector_outbox`): the index then holds the vector of the memory's current
text, or none for a memory deleted, and `doctor` finds nothing to repair."""

from __future__ import annotations

import math

import pytest

from mirix_py.engine import Mirix
from mirix_py.records import SemanticMemory
from mirix_py.tools.ops import InsertOp


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs, no `except Exception` catches it."""


def _kill_vector_writes(mx: Mirix, monkeypatch) -> None:
    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(mx.store.vectors, "upsert", die)
    monkeypatch.setattr(mx.store.vectors, "delete", die)


def _insert(mx: Mirix, user_id: str, summary: str) -> str:
    memory = SemanticMemory(user_id=user_id, name="Rex", summary=summary)
    [change] = mx.store.apply([InsertOp(memory=memory)], user_id=user_id, actor="test")
    return change.memory_id


def _cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _reopened(tmp_path, embedder, layout) -> Mirix:
    return Mirix(tmp_path / "data", embedder=embedder, **layout)


@pytest.fixture
def stopped(tmp_path, embedder, layout, monkeypatch):
    """An engine whose vector writes "kill the process" once `kill()` is called, and a way to open the
    data dir again as the next process would."""
    mx = Mirix(tmp_path / "data", embedder=embedder, **layout)
    if mx.store.vectors.transactional:
        mx.close()
        pytest.skip("pgvector is written in the rows' transaction: no write is left pending")
    reopened: list[Mirix] = []

    def reopen() -> Mirix:
        monkeypatch.undo()
        mx.close()
        reopened.append(_reopened(tmp_path, embedder, layout))
        return reopened[-1]

    yield mx, (lambda: _kill_vector_writes(mx, monkeypatch)), reopen
    for engine in [mx, *reopened]:
        engine.close()


def test_an_update_stopped_before_its_vector_gets_the_new_text_vector_at_open(stopped, embedder, user_id):
    mx, kill, reopen = stopped
    memory_id = _insert(mx, user_id, "Rex is a golden retriever who loves the beach")
    kill()
    with pytest.raises(Killed):
        mx.update(memory_id, {"summary": "Rex is a tabby cat who sleeps on the piano"}, user_id=user_id)
    mx = reopen()
    current = mx.get(memory_id, user_id=user_id)
    assert "tabby cat" in current.search_text()  # the SQL commit survived
    [wanted] = embedder.embed([current.embedding_text()])
    stored = mx.store.vectors.get(user_id, [memory_id])[memory_id]
    assert _cosine(stored, wanted) > 0.999
    assert mx.search("a cat sleeping on a piano", user_id=user_id, method="embedding")[0].memory.id == memory_id
    assert mx.doctor().clean


def test_a_delete_stopped_before_its_vector_loses_the_vector_at_open(stopped, user_id):
    mx, kill, reopen = stopped
    kept = _insert(mx, user_id, "Rex is a golden retriever who loves the beach")
    gone = _insert(mx, user_id, "Rex was adopted from the shelter in 2019")
    kill()
    with pytest.raises(Killed):
        mx.delete(gone, user_id=user_id)
    mx = reopen()
    assert mx.store.vectors.ids(user_id) == {kept}
    assert mx.doctor().clean


def test_an_insert_stopped_before_its_vector_gets_it_at_open(stopped, embedder, user_id):
    mx, kill, reopen = stopped
    kill()
    with pytest.raises(Killed):
        _insert(mx, user_id, "Rex is afraid of thunderstorms")
    mx = reopen()
    [memory] = mx.list(user_id=user_id)
    [wanted] = embedder.embed([memory.embedding_text()])
    assert _cosine(mx.store.vectors.get(user_id, [memory.id])[memory.id], wanted) > 0.999
    assert mx.doctor().clean


def test_doctor_reports_a_pending_vector_write_and_repair_finishes_it(stopped, embedder, user_id, monkeypatch):
    mx, kill, _ = stopped
    memory_id = _insert(mx, user_id, "Rex is a golden retriever who loves the beach")
    kill()
    with pytest.raises(Killed):
        mx.update(memory_id, {"summary": "Rex is a tabby cat who sleeps on the piano"}, user_id=user_id)
    monkeypatch.undo()  # the index takes writes again; the engine is not reopened
    report = mx.doctor()
    assert not report.clean and report.vectors_pending == [memory_id]
    fixed = mx.doctor(repair=True)
    assert fixed.clean, fixed.summary()
    [wanted] = embedder.embed([mx.get(memory_id, user_id=user_id).embedding_text()])
    assert _cosine(mx.store.vectors.get(user_id, [memory_id])[memory_id], wanted) > 0.999


def test_a_vector_write_that_succeeds_leaves_nothing_pending(mx, user_id):
    memory_id = _insert(mx, user_id, "Rex is a golden retriever who loves the beach")
    mx.update(memory_id, {"summary": "Rex is a tabby cat"}, user_id=user_id)
    mx.delete(memory_id, user_id=user_id)
    report = mx.doctor()
    assert report.clean and report.vectors_pending == []


def test_a_delete_user_stopped_before_its_index_is_dropped_leaves_no_vector_at_open(stopped, monkeypatch, user_id):
    mx, _, reopen = stopped
    memory_id = _insert(mx, user_id, "Rex is a golden retriever who loves the beach")

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(mx.store.vectors, "drop_user", die)
    with pytest.raises(Killed):
        mx.delete_user(user_id)
    mx = reopen()
    assert mx.store.vectors.get(user_id, [memory_id]) == {}
    assert mx.doctor().clean


def test_doctor_names_a_deleted_users_index_left_to_drop_and_repair_drops_it(stopped, monkeypatch, user_id):
    mx, _, _ = stopped
    memory_id = _insert(mx, user_id, "Rex is a golden retriever who loves the beach")
    drop_user = mx.store.vectors.drop_user

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(mx.store.vectors, "drop_user", die)
    with pytest.raises(Killed):
        mx.delete_user(user_id)
    monkeypatch.setattr(mx.store.vectors, "drop_user", drop_user)
    report = mx.doctor()
    assert report.vectors_pending == [f"every vector of user {user_id!r} (deleted)"]
    assert mx.doctor(repair=True).clean
    assert mx.store.vectors.get(user_id, [memory_id]) == {}
