"""mirix_py.compat.mem0: a secret in mem0's `metadata` goes to the user's vault, as one in the text
does: no database file (its write-ahead log included) and no export holds it in plain text."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mirix_py.compat.mem0 import Memory
from mirix_py.engine import Mirix

SECRETS = ("Hunter2!xyz", "Tr0ub4dor&3q", "sk-abcdefghijklmnopqrstuvwx1234", "Zebra9!qq")


def _files_holding(data_dir: Path, value: str) -> list[str]:
    needle = value.encode("utf-8")
    return [str(p) for p in data_dir.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def test_a_secret_in_metadata_is_vaulted_not_kept_in_plain_text(mx, tmp_path):
    m = Memory(mx=mx)
    raw = m.add("Set up the router today.", user_id="u", agent_id="home", infer=False,
                metadata={"note": "wifi password is Hunter2!xyz"})["results"]
    inferred = m.add("I reset the modem.", user_id="u", metadata={"password": "Tr0ub4dor&3q", "room": "hall"})
    episode = next(r for r in raw if r["memory_type"] == "episodic")
    assert episode["metadata"]["note"].startswith("wifi password is [vault:kv_")
    vault_id = episode["metadata"]["note"].removeprefix("wifi password is [vault:").rstrip("]")
    assert mx.get(vault_id, user_id="u", reveal=True).secret_value == "Hunter2!xyz"
    assert any(r["memory_type"] == "knowledge_vault" for r in inferred["results"])
    assert all(r["metadata"]["room"] == "hall" and r["metadata"]["password"].startswith("[vault:")
               for r in inferred["results"] if r["memory_type"] != "knowledge_vault")

    memory_id = episode["id"]
    m.update(memory_id, metadata={"keys": ["sk-abcdefghijklmnopqrstuvwx1234"]})
    assert m.get(memory_id)["metadata"]["keys"][0].startswith("[vault:")
    m.add("the wifi password is Zebra9!qq", user_id="u", infer=False)  # the text's own path, for comparison

    shown = str(m.get_all(user_id="u")) + str(m.search("router wifi", user_id="u"))
    exported = io.StringIO()
    mx.export(exported, user_id="u")
    mx.close()  # its files as they are at rest, the write-ahead log's frames included
    for value in SECRETS:
        assert value not in shown and value not in exported.getvalue()
        assert _files_holding(tmp_path / "data", value) == [], value


def test_an_agents_metadata_secret_goes_with_the_agents_memories(mx):
    m = Memory(mx=mx)
    m.add("Router set up.", user_id="u", agent_id="home", metadata={"pin": 4821}, infer=False)
    kinds = {r["memory_type"] for r in m.get_all(agent_id="home")["results"]}
    assert kinds == {"episodic", "knowledge_vault"}
    m.delete_all(agent_id="home")
    assert m.get_all(user_id="u") == {"results": []}
