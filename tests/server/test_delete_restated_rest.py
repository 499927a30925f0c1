"""DELETE and PATCH of a turn over REST take back what was restated from it alone (`agents.derived`)."""

from __future__ import annotations


def _episode(added: dict) -> str:
    return next(ch["memory_id"] for ch in added["changes"] if ch["memory_type"] == "episodic")


def test_delete_over_rest_takes_back_the_core_line_of_the_turn(live):
    c = live.client(live.alice)
    added = c.post("/v1/users/alice/memories", json={"content": "I live in Lisbon, in Alfama.", "wait": True}).json()
    assert "Lisbon" in c.get("/v1/users/alice/core").json()["human"]["value"]

    deleted = c.delete(f"/v1/users/alice/memories/{_episode(added)}")
    assert deleted.status_code == 200, deleted.text
    core = c.get("/v1/users/alice/core").json()["human"]["id"]
    assert [(ch["operation"], ch["memory_id"]) for ch in deleted.json()] == [
        ("delete", _episode(added)), ("update", core)]

    assert "Lisbon" not in c.get("/v1/users/alice/core").json()["human"]["value"]
    context = c.post("/v1/users/alice/context", json={"message": "where do I live?"})
    assert context.status_code == 200 and "Lisbon" not in context.text


def test_patch_of_the_turn_over_rest_takes_back_its_core_line(live):
    c = live.client(live.bob)
    added = c.post("/v1/users/bob/memories", json={"content": "I live in Marseille.", "wait": True}).json()

    patched = c.patch(f"/v1/users/bob/memories/{_episode(added)}", json={"fields": {"summary": "I live in Toulouse."}})

    assert patched.status_code == 200, patched.text
    assert "Marseille" not in c.get("/v1/users/bob/core").json()["human"]["value"]
