"""POST /v1/users/{user_id}/inputs/{input_id}/undo against a live server, and the HTTP client's undo."""

from __future__ import annotations

from mirix_py.client import MirixClient


def test_undo_over_rest_removes_what_an_input_wrote(live):
    c = live.client(live.alice)
    kept = c.post("/v1/users/alice/memories", json={"content": "I keep bees on the roof.", "wait": True}).json()
    bad = c.post("/v1/users/alice/memories", json={"content": "I moved to Porto and sold the boat.",
                                                   "wait": True}).json()
    assert bad["changes"]
    r = c.post(f"/v1/users/alice/inputs/{bad['input_ids'][0]}/undo")
    assert r.status_code == 200, r.text
    assert {ch["memory_id"] for ch in r.json()} == {ch["memory_id"] for ch in bad["changes"]}
    assert all(ch["operation"] == "delete" and ch["actor"].startswith("undo:") for ch in r.json())
    listed = {m["id"] for m in c.get("/v1/users/alice/memories").json()}
    assert {ch["memory_id"] for ch in kept["changes"]} <= listed
    assert not listed & {ch["memory_id"] for ch in bad["changes"]}
    again = c.post(f"/v1/users/alice/inputs/{bad['input_ids'][0]}/undo")
    assert again.status_code == 422 and "already undone" in again.json()["message"]
    # another user's key may not undo alice's input
    assert live.client(live.bob).post(f"/v1/users/alice/inputs/{kept['input_ids'][0]}/undo").status_code == 403


def test_http_client_undo(live):
    with MirixClient(live.url, api_key=live.alice) as client:
        result = client.add("The garage code is 55-19-77.", user_id="alice", wait=True)
        changes = client.undo(result.input_ids[0], user_id="alice")
        assert {c.memory_id for c in changes} == {c.memory_id for c in result.changes}


def test_undo_refused_for_later_changes_says_so_and_force_overrides(live):
    """An input whose memory was edited since: 422 `later_changes` naming the memory, nothing written;
    the same undo with force=true takes it back, the edit too."""
    c = live.client(live.alice)
    added = c.post("/v1/users/alice/memories", json={"content": "My neighbour Lars sells honey at the market.",
                                                     "wait": True}).json()
    episode = next(ch["memory_id"] for ch in added["changes"] if ch["memory_type"] == "episodic")
    assert c.patch(f"/v1/users/alice/memories/{episode}", json={"fields": {"details": "Lars moved away."}}).is_success
    undo = f"/v1/users/alice/inputs/{added['input_ids'][0]}/undo"

    refused = c.post(undo)
    assert refused.status_code == 422 and refused.json()["error"] == "later_changes"
    assert f"{episode} (changed later by" in refused.json()["message"]
    assert c.get(f"/v1/users/alice/memories/{episode}").json()["details"] == "Lars moved away."  # nothing undone

    forced = c.post(undo, params={"force": "true"})
    assert forced.status_code == 200, forced.text
    assert {ch["memory_id"] for ch in forced.json()} == {ch["memory_id"] for ch in added["changes"]}
    assert c.get(f"/v1/users/alice/memories/{episode}").status_code == 404
    # a refusal force cannot change keeps the general code
    assert c.post(undo).json()["error"] == "invalid_input"
