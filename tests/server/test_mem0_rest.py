"""mem0's REST routes beside ours: the calls of mem0's REST server (add, list, get, search, update,
history, delete, delete all, reset) with its bodies and shapes, and keys scoping them to users."""

from __future__ import annotations


def test_mem0_routes_round_trip(live_sqlite):
    alice = live_sqlite.client(live_sqlite.alice)
    added = alice.post("/memories", json={
        "messages": [{"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
                     {"role": "assistant", "content": "Got it, sci-fi it is."}],
        "user_id": "alice", "metadata": {"category": "movies"}})
    assert added.status_code == 200, added.text
    results = added.json()["results"]
    assert results and all(r["event"] in ("ADD", "UPDATE") for r in results)
    assert all(r["metadata"] == {"category": "movies"} for r in results)

    listed = alice.get("/memories", params={"user_id": "alice"}).json()["results"]
    assert {r["id"] for r in results} <= {r["id"] for r in listed}
    found = alice.post("/search", json={"query": "which movies do I like", "filters": {"user_id": "alice"}}).json()
    assert found["results"] and "sci-fi" in " ".join(r["memory"] for r in found["results"])
    assert all(isinstance(r["score"], float) and r["user_id"] == "alice" for r in found["results"])
    narrowed = alice.post("/search", json={"query": "movies", "user_id": "alice", "filters": {"category": "books"}})
    assert narrowed.json() == {"results": []}

    memory_id = next(r["id"] for r in results if r["memory_type"] == "episodic")
    assert alice.get(f"/memories/{memory_id}").json()["id"] == memory_id
    assert alice.put(f"/memories/{memory_id}", json={"text": "Loves sci-fi films."}).json() == {
        "message": "Memory updated successfully!"}
    history = alice.get(f"/memories/{memory_id}/history").json()
    assert [h["event"] for h in history] == ["ADD", "UPDATE"] and history[-1]["new_memory"] == "Loves sci-fi films."
    assert alice.delete(f"/memories/{memory_id}").json() == {"message": "Memory deleted successfully"}
    assert alice.get(f"/memories/{memory_id}").status_code == 404

    raw = alice.post("/memories", json={"messages": [{"role": "user", "content": "Call me Al."}],
                                        "user_id": "alice", "agent_id": "concierge", "infer": False}).json()
    assert [r["memory"] for r in raw["results"]] == ["Call me Al."]
    assert alice.delete("/memories", params={"user_id": "alice"}).json() == {"message": "All relevant memories deleted"}
    assert alice.get("/memories", params={"user_id": "alice"}).json() == {"results": []}


def test_mem0_routes_respect_keys(live_sqlite):
    alice, bob = live_sqlite.client(live_sqlite.alice), live_sqlite.client(live_sqlite.bob)
    admin = live_sqlite.client(live_sqlite.admin)
    mine = bob.post("/memories", json={"messages": [{"role": "user", "content": "My locker code is on a note."}],
                                       "user_id": "bob"}).json()["results"][0]["id"]
    refused = alice.post("/search", json={"query": "locker", "filters": {"user_id": "bob"}})
    assert refused.status_code == 403 and refused.json()["error"] == "forbidden"
    assert alice.get("/memories", params={"user_id": "bob"}).status_code == 403
    assert alice.post("/memories", json={"messages": [{"role": "user", "content": "x"}]}).status_code == 400
    for call in (alice.get(f"/memories/{mine}"), alice.delete(f"/memories/{mine}"),
                 alice.get(f"/memories/{mine}/history"), alice.put(f"/memories/{mine}", json={"text": "y"})):
        assert call.status_code == 404  # another user's memory is not there for this key
    assert bob.get(f"/memories/{mine}").status_code == 200
    bad = bob.post("/search", json={"query": "locker", "user_id": "bob", "filters": {"k": {"gt": 1}}})
    assert bad.status_code == 422 and "not supported" in bad.json()["message"]
    assert bob.post("/reset").status_code == 403
    assert admin.post("/reset").json() == {"message": "All memories reset"}
    assert bob.get("/memories", params={"user_id": "bob"}).json() == {"results": []}


def test_mem0_routes_take_an_expiration_date(live_sqlite):
    alice = live_sqlite.client(live_sqlite.alice)
    added = alice.post("/memories", json={"messages": [{"role": "user", "content": "My parking spot is P3-17."}],
                                          "user_id": "alice", "infer": False, "expiration_date": "2030-01-31"})
    assert added.status_code == 200, added.text
    memory_id = added.json()["results"][0]["id"]
    assert alice.get(f"/memories/{memory_id}").json()["expiration_date"] == "2030-01-31"
    assert alice.put(f"/memories/{memory_id}", json={"expiration_date": None}).status_code == 200
    assert "expiration_date" not in alice.get(f"/memories/{memory_id}").json()
    bad = alice.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "user_id": "alice",
                                        "expiration_date": "31.01.2030"})
    assert bad.status_code == 422


def test_mem0_history_shows_only_the_callers_users_changes_of_an_id(live_sqlite):
    """An id an import reused for another user carries both users' events: each key sees its own."""
    import json

    alice, bob = live_sqlite.client(live_sqlite.alice), live_sqlite.client(live_sqlite.bob)
    added = alice.post("/memories", json={"messages": [{"role": "user", "content": "Call me Al."}],
                                          "user_id": "alice", "infer": False}).json()["results"][0]
    memory_id = added["id"]
    line = live_sqlite.mx.store.get(memory_id).model_dump(mode="json")
    assert alice.delete(f"/memories/{memory_id}").status_code == 200
    line.update(user_id="bob", summary="Bob's lottery numbers: 4 8 15")
    line.pop("details", None)
    assert live_sqlite.mx.import_([json.dumps({"memory": line, "secret_ciphertext": None})])["imported"] == 1

    seen = alice.get(f"/memories/{memory_id}/history").json()
    assert [h["event"] for h in seen] == ["ADD", "DELETE"] and "lottery" not in json.dumps(seen)
    bobs = bob.get(f"/memories/{memory_id}/history").json()
    assert [h["event"] for h in bobs] == ["ADD"] and "Al." not in json.dumps(bobs)
