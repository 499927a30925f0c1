"""`DELETE /v1/users/{u}/memories/{id}?erase=true` and `MirixClient.delete(..., erase=True)`: the
deleted turn's words leave history and the input log (`Mirix.delete(..., erase=True)`)."""

from __future__ import annotations

from mirix_py.client import MirixClient


def _episode(added: dict) -> str:
    return next(ch["memory_id"] for ch in added["changes"] if ch["memory_type"] == "episodic")


def test_delete_with_erase_over_rest_leaves_no_word_in_history_or_inputs(live):
    c = live.client(live.alice)
    added = c.post("/v1/users/alice/memories",
                   json={"content": "I live in Zorblatt street, in Quixhaven.", "wait": True}).json()
    episode = _episode(added)

    erased = c.delete(f"/v1/users/alice/memories/{episode}", params={"erase": "true"})

    assert erased.status_code == 200, erased.text
    core = c.get("/v1/users/alice/core").json()["human"]["id"]
    assert [(ch["operation"], ch["memory_id"]) for ch in erased.json()] == [("delete", episode), ("update", core)]
    for memory_id in (episode, core):
        history = c.get(f"/v1/users/alice/memories/{memory_id}/history")
        assert history.status_code == 200 and "Quixhaven" not in history.text
        assert history.json()[-1]["erased"] is True
    inputs = c.get("/v1/users/alice/inputs")
    assert inputs.status_code == 200 and added["input_ids"][0] in inputs.text and "Quixhaven" not in inputs.text


def test_the_client_sends_erase_and_returns_the_changes(live):
    with MirixClient(live.url, api_key=live.bob) as client:
        added = client.add("I live in Zorblatt street, in Quixhaven.", user_id="bob", wait=True)
        episode = next(ch.memory_id for ch in added.changes if ch.memory_type.value == "episodic")
        kept = client.add("I live in Blorpington.", user_id="carol", wait=True)
        plain = next(ch.memory_id for ch in kept.changes if ch.memory_type.value == "episodic")

        changes = client.delete(episode, user_id="bob", erase=True)
        client.delete(plain, user_id="carol")

        assert changes[0].memory_id == episode and len(changes) == 2
        assert [e.erased for e in client.history(episode, user_id="bob")] == [True, True]
        assert "Quixhaven" not in "".join(e.model_dump_json() for e in client.history(episode, user_id="bob"))
        assert "Blorpington" in client.history(plain, user_id="carol")[-1].before["summary"]  # a plain delete keeps it
