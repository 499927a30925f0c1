"""mirix_py.compat.mem0: a read or delete by `agent_id` or `run_id` alone reaches every memory carrying
that id, whoever's it is (mem0 filters those ids across users), while one with `user_id` stays within
that user; `reach` narrows a call without `user_id` to the users a caller may act for."""

from __future__ import annotations

import pytest

from mirix_py.compat.mem0 import Memory
from mirix_py.engine import Mirix


@pytest.fixture
def m(tmp_path, embedder, backend):
    mx = Mirix(tmp_path / "data", embedder=embedder, database_url=backend)
    yield Memory(mx=mx)
    mx.close()


def _texts(result: dict) -> set[str]:
    return {r["memory"] for r in result["results"]}


def _seed(m: Memory) -> None:
    m.add("I prefer window seats.", user_id="alice", agent_id="travel-bot", infer=False)
    m.add("Alice's budget is 2000 euros.", user_id="alice", agent_id="travel-bot", run_id="r1", infer=False)
    m.add("Alice is allergic to peanuts.", user_id="alice", agent_id="chef", infer=False)
    m.add("Bob wants a seat by the window too.", user_id="bob", agent_id="travel-bot", infer=False)
    m.add("Bob's window cleaner comes on Monday.", user_id="bob", infer=False)
    m.add("Bot-only note: be concise.", agent_id="travel-bot", infer=False)


def test_get_all_and_search_by_agent_or_run_alone_find_every_memory_carrying_it(m):
    _seed(m)
    travel = {"I prefer window seats.", "Alice's budget is 2000 euros.", "Bob wants a seat by the window too.",
              "Bot-only note: be concise."}
    assert _texts(m.get_all(filters={"agent_id": "travel-bot"})) == travel
    assert _texts(m.get_all(agent_id="travel-bot")) == travel
    assert _texts(m.get_all(filters={"run_id": "r1"})) == {"Alice's budget is 2000 euros."}
    found = m.search("window seat", filters={"agent_id": "travel-bot"})["results"]
    assert {r["memory"] for r in found} <= travel and "I prefer window seats." in {r["memory"] for r in found}
    assert {r.get("user_id") for r in found} >= {"alice", "bob"}
    # with user_id the call stays within that user: nothing of bob's reaches alice's reads
    alice = m.get_all(filters={"user_id": "alice", "agent_id": "travel-bot"})
    assert _texts(alice) == {"I prefer window seats.", "Alice's budget is 2000 euros."}
    for query in ("window seat", "Bob window cleaner Monday"):
        assert all(r["user_id"] == "alice" for r in m.search(query, user_id="alice")["results"])
        assert all(r["user_id"] == "alice" for r in m.search(query, filters={"user_id": "alice", "agent_id": "travel-bot"})["results"])


def test_delete_all_by_agent_alone_deletes_what_mem0_would_and_nothing_else(m):
    _seed(m)
    assert m.delete_all(agent_id="travel-bot") == {"message": "Memories deleted successfully!"}
    assert m.get_all(filters={"agent_id": "travel-bot"}) == {"results": []}
    assert _texts(m.get_all(user_id="alice")) == {"Alice is allergic to peanuts."}
    assert _texts(m.get_all(user_id="bob")) == {"Bob's window cleaner comes on Monday."}
    assert "agent:travel-bot" not in m.mx.user_ids()  # the agent's own user goes whole, inputs included


def test_delete_all_by_run_alone_and_by_user_and_agent(m):
    _seed(m)
    m.delete_all(run_id="r1")
    assert _texts(m.get_all(user_id="alice")) == {"I prefer window seats.", "Alice is allergic to peanuts."}
    m.delete_all(user_id="bob", agent_id="travel-bot")
    assert _texts(m.get_all(user_id="bob")) == {"Bob's window cleaner comes on Monday."}
    assert "I prefer window seats." in _texts(m.get_all(agent_id="travel-bot"))


def test_reach_narrows_a_call_without_user_id_to_the_callers_users(m):
    _seed(m)
    bot_only = Memory(mx=m.mx, reach=lambda user: user == "agent:travel-bot")
    assert _texts(bot_only.get_all(agent_id="travel-bot")) == {"Bot-only note: be concise."}
    assert {r["memory"] for r in bot_only.search("window seat", agent_id="travel-bot")["results"]} \
        == {"Bot-only note: be concise."}
    bot_only.delete_all(agent_id="travel-bot")
    assert _texts(m.get_all(agent_id="travel-bot")) == {
        "I prefer window seats.", "Alice's budget is 2000 euros.", "Bob wants a seat by the window too."}
