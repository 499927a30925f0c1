"""Agent definitions load from agents/*.md and fail clearly when malformed."""

from __future__ import annotations

import shutil

import pytest

from mirix_py.agents.definitions import default_agents_dir, load_definitions, parse_definition
from mirix_py.errors import InvalidInput

GOOD = """---
name: semantic_memory_manager
role: memory_manager
memory_type: semantic
tools: [insert_semantic, update_memory]
---
You maintain semantic memory. Facts about named things go here.
"""


def test_shipped_definitions_cover_every_agent():
    definitions = load_definitions()
    assert len(definitions) == 8
    semantic = definitions["semantic_memory_manager"]
    assert semantic.memory_type.value == "semantic" and "update_memory" in semantic.tools
    assert "nothing_to_record" in semantic.system_prompt and "only listed ids" in semantic.system_prompt.lower()
    assert definitions["meta_memory_manager"].tools == ["trigger_memory_managers"]


def test_parse_good_definition():
    definition = parse_definition(GOOD, "x.md")
    assert definition.tools == ["insert_semantic", "update_memory"] and definition.model == {}


@pytest.mark.parametrize("text, match", [
    (GOOD.replace("update_memory]", "launch_rockets]"), "unknown tool"),
    (GOOD.replace("memory_type: semantic\n", ""), "needs memory_type"),
    (GOOD.replace("role: memory_manager", "role: wizard"), "role"),
    (GOOD.replace("tools: [insert_semantic, update_memory]\n", ""), "tools"),
    (GOOD.replace("tools: [insert_semantic, update_memory]", "tools: [insert_episodic]"), "unknown tool"),
    ("no front matter at all", "front matter"),
    ("---\n: : :\n---\nbody text long enough to pass", "front matter"),
    (GOOD.replace("name: semantic_memory_manager", "name: x\ncolour: blue"), "colour"),
])
def test_bad_definitions_name_the_problem(text, match):
    with pytest.raises(InvalidInput, match=match) as info:
        parse_definition(text, "bad.md")
    assert "bad.md" in str(info.value)


def test_user_folder_and_missing_agents(tmp_path):
    folder = tmp_path / "agents"
    shutil.copytree(default_agents_dir(), folder)
    custom = (folder / "chat_agent.md").read_text().replace("Be brief.", "Answer like a pirate.")
    (folder / "chat_agent.md").write_text(custom)
    assert "pirate" in load_definitions(folder)["chat_agent"].system_prompt
    (folder / "procedural_memory_manager.md").unlink()
    with pytest.raises(InvalidInput, match="procedural_memory_manager"):
        load_definitions(folder)
    (folder / "copy.md").write_text((folder / "chat_agent.md").read_text())
    with pytest.raises(InvalidInput, match="defined twice"):
        load_definitions(folder)


def test_engine_validates_definitions_at_start(tmp_path, embedder):
    from mirix_py.engine import Mirix

    folder = tmp_path / "agents"
    shutil.copytree(default_agents_dir(), folder)
    (folder / "chat_agent.md").write_text(GOOD.replace("semantic_memory_manager", "chat_agent")
                                          .replace("role: memory_manager", "role: chat"))
    with pytest.raises(InvalidInput, match="chat_agent.md"):
        Mirix(tmp_path / "d", embedder=embedder, agents_dir=folder)
