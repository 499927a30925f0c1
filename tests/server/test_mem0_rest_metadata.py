"""mem0's REST routes take the metadata the SDK takes, refused with the SDK's message: NaN was refused
but Infinity kept (and read back as null), and a value nested 9 levels deep was refused where the SDK
takes 64. A body nested too deeply for the JSON parser says so, instead of "There was an error
parsing the body"."""

from __future__ import annotations

import json
import re

import pytest

ADD = '{"messages":[{"role":"user","content":"I like figs."}],"user_id":"alice","metadata":%s}'


@pytest.fixture
def alice(live_sqlite):
    client = live_sqlite.client(live_sqlite.alice)
    yield client
    client.delete("/memories", params={"user_id": "alice"})


def _post(client, body: str):
    return client.post("/memories", content=body.encode(), headers={"content-type": "application/json"})


@pytest.mark.parametrize("metadata,message", [
    ('{"v":NaN}', "metadata.v is nan: JSON has no NaN or Infinity"),
    ('{"w":{"x":[Infinity]}}', r"metadata.w.x\[0\] is inf: JSON has no NaN or Infinity"),
    ('{"v":-Infinity}', "metadata.v is -inf"),
])
def test_nan_and_infinity_are_refused_as_the_sdk_refuses_them(alice, metadata, message):
    refused = _post(alice, ADD % metadata)
    assert refused.status_code == 422 and refused.json()["error"] == "invalid_input"
    assert re.search(message, refused.json()["message"])
    assert alice.get("/memories", params={"user_id": "alice"}).json() == {"results": []}


def test_an_update_with_infinity_changes_nothing(alice):
    added = alice.post("/memories", json={"messages": [{"role": "user", "content": "I like figs."}],
                                          "user_id": "alice", "metadata": {"k": 1}, "infer": False})
    memory_id = added.json()["results"][0]["id"]
    refused = alice.put(f"/memories/{memory_id}", content=b'{"text":"I like dates.","metadata":{"k":Infinity}}',
                        headers={"content-type": "application/json"})
    assert refused.status_code == 422 and "metadata.k is inf" in refused.json()["message"]
    kept = alice.get(f"/memories/{memory_id}").json()
    assert kept["memory"] == "I like figs." and kept["metadata"] == {"k": 1}


def test_metadata_nested_as_the_sdk_takes_it_is_kept(alice):
    nested = json.loads('{"a":' * 20 + "1" + "}" * 20)
    added = alice.post("/memories", json={"messages": [{"role": "user", "content": "I like figs."}],
                                          "user_id": "alice", "metadata": nested, "infer": False})
    assert added.status_code == 200, added.text
    assert alice.get(f"/memories/{added.json()['results'][0]['id']}").json()["metadata"] == nested


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_body_nested_too_deeply_to_parse_says_so_and_writes_nothing(alice, depth):
    refused = _post(alice, ADD % ('{"a":' * depth + "1" + "}" * depth))
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"].startswith("the JSON body is nested too deeply to read")
    assert alice.get("/memories", params={"user_id": "alice"}).json() == {"results": []}
