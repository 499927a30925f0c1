"""mirix_py.compat.mem0, where mem0's own behaviour is the reference: system messages are never
memories, an unknown id raises a ValueError, counts of 0 ask for nothing, ids are trimmed, and
get_all's default count is mem0's."""

from __future__ import annotations

import pytest

from mirix_py.compat.mem0 import Memory
from mirix_py.engine import Mirix
from mirix_py.errors import MemoryNotFound

SYSTEM = {"role": "system", "content": "You are a travel assistant. Never reveal internal pricing rules: markup is 35%."}


@pytest.fixture
def m(tmp_path, embedder):
    mx = Mirix(tmp_path / "data", embedder=embedder)
    yield Memory(mx=mx)
    mx.close()


def test_an_inferred_add_keeps_no_system_message(m):
    added = m.add([SYSTEM, {"role": "user", "content": "I prefer aisle seats."},
                   {"role": "assistant", "content": "Got it."}], user_id="alex")["results"]
    assert added and not any("markup" in r["memory"] for r in added)
    assert not any("markup" in r["memory"] for r in m.get_all(user_id="alex")["results"])
    assert not any("markup" in r["memory"] for r in m.search("pricing rules markup", user_id="alex")["results"])
    assert m.add([SYSTEM], user_id="bea") == {"results": []}  # nothing else to keep: nothing written
    assert m.get_all(user_id="bea") == {"results": []}


def test_an_unknown_id_raises_a_value_error_as_mem0_does(m):
    for call in (lambda: m.delete("epi_nonexistent"), lambda: m.update("epi_nonexistent", "x")):
        with pytest.raises(ValueError) as caught:
            call()
        assert isinstance(caught.value, MemoryNotFound)  # and still mirix's own error (a LookupError)
    added = m.add("Call me Dee.", user_id="dee", infer=False)["results"][0]["id"]
    m.delete(added)
    with pytest.raises(ValueError):
        m.delete(added)
    assert m.get(added) is None


def test_a_count_of_zero_asks_for_nothing_and_a_negative_one_is_refused(m):
    m.add("I play the cello.", user_id="ada", infer=False)
    assert m.get_all(user_id="ada", limit=0) == {"results": []}
    assert m.get_all(filters={"user_id": "ada"}, top_k=0) == {"results": []}
    assert m.search("cello", user_id="ada", limit=0) == {"results": []}
    assert m.search("cello", filters={"user_id": "ada"}, top_k=0) == {"results": []}
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="top_k / limit"):
            m.get_all(user_id="ada", top_k=bad)
        with pytest.raises(ValueError, match="top_k / limit"):
            m.search("cello", user_id="ada", limit=bad)


def test_ids_are_trimmed_and_an_empty_one_is_refused(m):
    m.add("I play the cello.", user_id=" ada ", agent_id=" band ", infer=False)
    for user in ("ada", " ada", "ada\t"):
        assert [r["memory"] for r in m.get_all(user_id=user)["results"]] == ["I play the cello."]
    assert m.get_all(filters={"user_id": "ada ", "agent_id": " band"})["results"][0]["agent_id"] == "band"
    assert m.search("cello", filters={"user_id": "  ada"})["results"]
    for blank in ("", "   "):
        with pytest.raises(ValueError, match="empty"):
            m.get_all(user_id=blank)
        with pytest.raises(ValueError, match="empty"):
            m.add("x", user_id=blank)
    m.delete_all(user_id=" ada ")
    assert m.get_all(user_id="ada") == {"results": []}


def test_get_all_returns_mem0s_default_count_for_each_call_style(m):
    m.add([{"role": "user", "content": f"Note {i} about the garden."} for i in range(105)], user_id="gus", infer=False)
    assert len(m.get_all(filters={"user_id": "gus"})["results"]) == 20  # mem0 2.x: top_k=20
    assert len(m.get_all(user_id="gus")["results"]) == 100  # mem0 1.x: limit=100
    assert len(m.get_all(user_id="gus", limit=105)["results"]) == 105
