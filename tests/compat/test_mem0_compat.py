"""mirix_py.compat.mem0: mem0's documented quick start run with only the import changed, then each call's
result shape, scoping by agent_id / run_id / metadata, infer=False, update, history, delete, reset."""

from __future__ import annotations

import contextlib
import io
import textwrap

import pytest

from mirix_py.compat.mem0 import AsyncMemory, Memory
from mirix_py.engine import Mirix

# mem0's Python quick start (docs "open-source/python-quickstart", mem0ai 2.x), as published but for the import
QUICKSTART = textwrap.dedent('''
    from mirix_py.compat.mem0 import Memory

    m = Memory()

    messages = [
        {"role": "user", "content": "Hi, I'm Alex. I love basketball and gaming."},
        {"role": "assistant", "content": "Hey Alex! I'll remember your interests."}
    ]
    m.add(messages, user_id="alex")

    results = m.search("What do you know about me?", filters={"user_id": "alex"})
    print(results)
''')

# the 1.x guide of the same page: add with metadata, get_all, get, search with user_id, update, history,
# delete, delete_all, reset. Its placeholder ids ("892db2ae-...") are the id of a memory `add` returned.
GUIDE = textwrap.dedent('''
    import os
    from mirix_py.compat.mem0 import Memory

    os.environ["OPENAI_API_KEY"] = "your-api-key"

    m = Memory()
    messages = [
        {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
        {"role": "assistant", "content": "How about a thriller movies? They can be quite engaging."},
        {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
        {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."}
    ]

    # Store inferred memories (default behavior)
    result = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})
    memory_id = result["results"][0]["id"]

    # Get all memories
    all_memories = m.get_all(user_id="alice")

    # Get a single memory by ID
    specific_memory = m.get(memory_id)

    related_memories = m.search(query="What do you know about me?", user_id="alice")

    update_result = m.update(memory_id=memory_id, data="I love India, it is my favorite country.")
    history = m.history(memory_id=memory_id)

    # Delete a memory by id
    m.delete(memory_id=memory_id)
    after_delete = m.get_all(user_id="alice")
    # Delete all memories for a user
    m.delete_all(user_id="alice")
    after_delete_all = m.get_all(user_id="alice")

    m.add("I live in Lisbon.", user_id="bob")
    m.reset() # Reset all memories
    after_reset = m.get_all(user_id="bob")
''')


def _run(code: str, data_dir, monkeypatch) -> dict:
    monkeypatch.setenv("MIRIX_DATA_DIR", str(data_dir))
    scope: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<mem0 quickstart>", "exec"), scope)
    scope["m"].close()
    scope["__stdout__"] = out.getvalue()
    return scope


def test_the_mem0_quickstart_runs_with_only_the_import_changed(tmp_path, monkeypatch):
    scope = _run(QUICKSTART, tmp_path / "mem", monkeypatch)
    results = scope["results"]["results"]
    assert results and scope["__stdout__"].startswith("{'results': [{'id': ")
    texts = " ".join(r["memory"] for r in results)
    assert "basketball" in texts and "gaming" in texts
    for r in results:
        assert r["user_id"] == "alex" and isinstance(r["score"], float) and r["created_at"]
        assert {"id", "memory", "hash", "created_at", "updated_at", "score"} <= set(r)


def test_the_1x_guide_add_get_search_update_history_delete_reset(tmp_path, monkeypatch):
    s = _run(GUIDE, tmp_path / "mem", monkeypatch)
    added = s["result"]["results"]
    assert added and all(r["event"] == "ADD" for r in added)
    assert all(r["metadata"] == {"category": "movie_recommendations"} for r in added)
    assert any("sci-fi" in r["memory"] for r in added)

    listed = s["all_memories"]["results"]
    assert {r["id"] for r in added} <= {r["id"] for r in listed}
    assert all(r["user_id"] == "alice" and "score" not in r for r in listed)
    assert s["specific_memory"]["id"] == s["memory_id"] and s["specific_memory"]["metadata"]["category"]

    related = s["related_memories"]["results"]
    assert related and [r["score"] for r in related] == sorted((r["score"] for r in related), reverse=True)
    assert any("sci-fi" in r["memory"] for r in related)

    assert s["update_result"] == {"message": "Memory updated successfully!"}
    history = s["history"]
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert history[0]["old_memory"] is None and history[1]["new_memory"] == "I love India, it is my favorite country."
    assert history[1]["old_memory"] == history[0]["new_memory"]

    assert s["memory_id"] not in {r["id"] for r in s["after_delete"]["results"]}
    assert len(s["after_delete"]["results"]) == len(listed) - 1
    assert s["after_delete_all"] == {"results": []}
    assert s["after_reset"] == {"results": []}


@pytest.fixture
def m(tmp_path, embedder):
    mx = Mirix(tmp_path / "data", embedder=embedder)
    yield Memory(mx=mx)
    mx.close()


def test_agent_run_and_metadata_scopes(m):
    m.add("I'm allergic to peanuts.", user_id="ada", agent_id="chef", run_id="r1", metadata={"topic": "food"})
    m.add("My flight to Oslo leaves on Friday.", user_id="ada", agent_id="travel", metadata={"topic": "trips"})
    m.add("The kitchen timer is broken.", agent_id="chef")  # an agent's own memory, no user

    def texts(res):
        return " ".join(r["memory"] for r in res["results"])

    assert "peanuts" in texts(m.get_all(user_id="ada")) and "Oslo" in texts(m.get_all(user_id="ada"))
    chef = m.get_all(filters={"user_id": "ada", "agent_id": "chef"})
    assert "peanuts" in texts(chef) and "Oslo" not in texts(chef)
    assert all(r["agent_id"] == "chef" and r["run_id"] == "r1" for r in chef["results"])
    food = m.search("what can't I eat", filters={"user_id": "ada", "topic": "food"})
    assert food["results"] and all(r["metadata"]["topic"] == "food" for r in food["results"])
    trips = m.search("flight", user_id="ada", filters={"topic": {"in": ["trips", "work"]}}, limit=3)
    assert trips["results"] and "Oslo" in texts(trips) and len(trips["results"]) <= 3
    chefs = m.get_all(agent_id="chef")  # as mem0: every memory added with agent_id "chef", whoever's
    assert "timer" in texts(chefs) and "peanuts" in texts(chefs) and "Oslo" not in texts(chefs)
    own = next(r for r in chefs["results"] if "timer" in r["memory"])
    assert "user_id" not in own and own["agent_id"] == "chef"  # added with only agent_id: no user
    with pytest.raises(ValueError, match="user_id, agent_id, run_id"):
        m.search("anything")
    with pytest.raises(ValueError, match="not supported"):
        m.search("peanuts", filters={"user_id": "ada", "topic": {"gt": 3}})

    m.delete_all(user_id="ada", agent_id="chef")
    left = texts(m.get_all(user_id="ada"))
    assert "peanuts" not in left and "Oslo" in left


def test_infer_false_keeps_messages_verbatim_and_update_metadata(m):
    res = m.add([{"role": "system", "content": "be brief"}, {"role": "user", "content": "Call me Dee."},
                 {"role": "assistant", "content": "Sure, Dee."}], user_id="dee", infer=False, metadata={"k": "v"})
    assert [r["memory"] for r in res["results"]] == ["Call me Dee.", "Sure, Dee."]
    first = res["results"][0]["id"]
    assert m.update(first, metadata={"k": "w", "extra": 1}) == {"message": "Memory updated successfully!"}
    got = m.get(first)
    assert got["memory"] == "Call me Dee." and got["metadata"] == {"k": "w", "extra": 1}
    assert m.get("epi_nonexistent") is None
    assert m.delete(first) == {"message": "Memory deleted successfully!"}
    assert m.get(first) is None and m.history(first)[-1]["is_deleted"] is True


def test_async_memory(tmp_path, embedder):
    import asyncio

    mx = Mirix(tmp_path / "data", embedder=embedder)

    async def main():
        am = AsyncMemory(mx=mx)
        await am.add("I play the cello.", user_id="ada")
        return await am.search("instrument cello", filters={"user_id": "ada"})

    try:
        assert "cello" in asyncio.run(main())["results"][0]["memory"]
    finally:
        mx.close()


def test_secrets_go_to_the_vault_even_when_not_inferred(m):
    res = m.add("For the record my VPN password is Tr0ub4dor&3xyz", user_id="ada", infer=False)
    assert "Tr0ub4dor" not in str(res) and "Tr0ub4dor" not in str(m.get_all(user_id="ada"))
    assert any(r["memory_type"] == "knowledge_vault" for r in res["results"])


def test_expiration_date_is_mem0s_utc_day_included(m):
    """mem0's `expiration_date` ("YYYY-MM-DD", UTC, inclusive): the memories expire at the start of the next
    day; `update` sets or clears it; a malformed or past date is refused and nothing is written."""
    from datetime import datetime, timedelta, timezone

    from mirix_py.compat.mem0 import expiry_of_date
    from mirix_py.errors import InvalidInput

    assert expiry_of_date("2030-01-31") == datetime(2030, 2, 1, tzinfo=timezone.utc)
    assert expiry_of_date(None) is None
    for bad in ("2030-1-31", "31/01/2030", "2030-02-30", 20300131):
        with pytest.raises(InvalidInput, match="YYYY-MM-DD"):
            expiry_of_date(bad)
    res = m.add("My trial of the Pro plan runs this month.", user_id="ada", expiration_date="2030-01-31")
    items = [r for r in m.get_all(user_id="ada")["results"] if r["memory_type"] != "core"]
    assert items and all(r["expiration_date"] == "2030-01-31" for r in items)
    raw = m.add("Call me Dee.", user_id="dee", infer=False, expiration_date="2030-01-31")["results"]
    assert m.get(raw[0]["id"])["expiration_date"] == "2030-01-31"
    memory_id = next(r["id"] for r in res["results"] if r["memory_type"] == "episodic")
    m.update(memory_id, expiration_date="2031-06-30")
    assert m.get(memory_id)["expiration_date"] == "2031-06-30"
    m.update(memory_id, expiration_date=None)
    assert "expiration_date" not in m.get(memory_id)
    yesterday = (datetime.now(timezone.utc) - timedelta(days=1)).date().isoformat()
    with pytest.raises(InvalidInput, match="not in the future"):
        m.add("Too late.", user_id="eve", expiration_date=yesterday)
    assert m.get_all(user_id="eve") == {"results": []}


def test_metadata_nested_past_any_reason_is_refused_not_a_recursion_error(m):
    from mirix_py.errors import InvalidInput

    deep: dict = {}
    inner = deep
    for _ in range(1000):
        inner["a"] = inner = {}
    for infer in (True, False):
        with pytest.raises(InvalidInput, match="nested more than 64 levels deep"):
            m.add("I like tea.", user_id="ada", metadata=deep, infer=infer)
    assert m.get_all(user_id="ada") == {"results": []}


def test_an_episode_kept_verbatim_states_its_day_on_the_users_clock(tmp_path, embedder):
    from zoneinfo import ZoneInfo

    from mirix_py.settings import Settings

    zone = ZoneInfo("Pacific/Kiritimati")
    with Mirix(settings=Settings(data_dir=tmp_path / "d", timezone=zone.key), embedder=embedder) as mx:
        added = Memory(mx=mx).add("I cooked lasagna tonight.", user_id="ada", infer=False)
        episode = mx.get(added["results"][0]["id"], user_id="ada")
        local = episode.occurred_at.astimezone(zone)
        assert episode.said_offset_minutes == 14 * 60
        assert episode.search_text().startswith(f"[{local.day} {local:%B} {local.year}, {local:%H:%M}]")
