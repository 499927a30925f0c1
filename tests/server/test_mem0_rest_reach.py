"""mem0's REST routes by `agent_id` alone: they reach the agent's memories in every user the key may act
for, and no further (a key for the agent's own user `agent:<id>` never sees or deletes a user's)."""

from __future__ import annotations


def test_an_agent_only_call_reaches_only_the_keys_users(live):
    admin = live.client(live.admin)
    bot = live.client(live.keys.create(["agent:concierge"], name="concierge").key)
    for user_id in ("alice", None):
        body = {"messages": [{"role": "user", "content": f"Window seat please ({user_id or 'bot'})."}],
                "agent_id": "concierge", "infer": False} | ({"user_id": user_id} if user_id else {})
        assert admin.post("/memories", json=body).status_code == 200

    def listed(client):
        return {r["memory"] for r in client.get("/memories", params={"agent_id": "concierge"}).json()["results"]}

    def searched(client):
        found = client.post("/search", json={"query": "window seat", "filters": {"agent_id": "concierge"}})
        return {r["memory"] for r in found.json()["results"]}

    everyone = {"Window seat please (alice).", "Window seat please (bot)."}
    assert listed(admin) == everyone and searched(admin) == everyone
    assert listed(bot) == {"Window seat please (bot)."} and searched(bot) == {"Window seat please (bot)."}
    assert bot.delete("/memories", params={"agent_id": "concierge"}).status_code == 200
    assert listed(admin) == {"Window seat please (alice)."}  # alice's stays: the key may not act for her
    assert admin.delete("/memories", params={"agent_id": "concierge"}).status_code == 200
    assert listed(admin) == set()
