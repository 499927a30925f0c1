"""Agent definitions: `agents/*.md` files with YAML front matter and a system prompt.

    ---
    name: semantic_memory_manager
    role: memory_manager            # meta | memory_manager | chat
    memory_type: semantic           # memory managers only
    tools: [insert_semantic, update_memory, merge_memories, delete_memory]
    model: {temperature: 0}         # optional overrides passed to the model call
    ---
    You maintain semantic memory: ...

They are validated when loaded (unknown tool, missing field, duplicate name: a clear error naming
the file). A user can point at a folder of their own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirix_py.errors import InvalidInput
from mirix_py.records import MemoryType

ROLE_TOOLS: dict[str, set[str]] = {
    "meta": {"trigger_memory_managers"},
    "chat": {"search_in_memory"},
}
MANAGER_TOOLS: dict[MemoryType, set[str]] = {
    MemoryType.core: {"core_memory_append", "core_memory_rewrite"},
    **{t: {f"insert_{t.value}", "update_memory", "merge_memories", "delete_memory"}
       for t in MemoryType if t is not MemoryType.core},
}
REQUIRED_AGENTS = {"meta_memory_manager", "chat_agent", *(f"{t.value}_memory_manager" for t in MemoryType
                                                          if t is not MemoryType.knowledge_vault),
                   "knowledge_vault_manager"}


class AgentDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    role: Literal["meta", "memory_manager", "chat"]
    memory_type: MemoryType | None = None
    tools: list[str] = Field(min_length=1)
    model: dict[str, Any] = Field(default_factory=dict)
    system_prompt: str = Field(min_length=20)
    path: str = ""

    @model_validator(mode="after")
    def _tools_fit_the_role(self) -> "AgentDefinition":
        if self.role == "memory_manager":
            if self.memory_type is None:
                raise ValueError("a memory_manager needs memory_type")
            allowed = MANAGER_TOOLS[self.memory_type]
        else:
            allowed = ROLE_TOOLS[self.role]
        unknown = sorted(set(self.tools) - allowed)
        if unknown:
            raise ValueError(f"unknown tool(s) {unknown} for {self.role}"
                             f"{' of ' + self.memory_type.value if self.memory_type else ''}; allowed: {sorted(allowed)}")
        return self


def default_agents_dir() -> Path:
    checkout = Path(__file__).resolve().parents[2] / "agents"
    if checkout.is_dir():
        return checkout
    installed = Path(sys.prefix) / "share" / "mirix-py" / "agents"
    if installed.is_dir():
        return installed
    raise InvalidInput("agent definitions not found: reinstall mirix-py or pass agents_dir")


def parse_definition(text: str, path: str = "<string>") -> AgentDefinition:
    if not text.startswith("---"):
        raise InvalidInput(f"{path}: an agent file starts with '---' YAML front matter")
    try:
        _, front, body = text.split("---", 2)
        meta = yaml.safe_load(front) or {}
    except (ValueError, yaml.YAMLError) as exc:
        raise InvalidInput(f"{path}: unreadable front matter: {exc}") from exc
    if not isinstance(meta, dict):
        raise InvalidInput(f"{path}: front matter must be a mapping")
    try:
        return AgentDefinition(**meta, system_prompt=body.strip(), path=path)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in exc.errors())
        raise InvalidInput(f"{path}: {problems}") from exc


def load_definitions(folder: str | Path | None = None) -> dict[str, AgentDefinition]:
    """Every agent of a folder, validated; the folder must define all the agents the engine runs."""
    folder = Path(folder) if folder else default_agents_dir()
    if not folder.is_dir():
        raise InvalidInput(f"agents folder {folder} does not exist")
    definitions: dict[str, AgentDefinition] = {}
    for path in sorted(folder.glob("*.md")):
        definition = parse_definition(path.read_text(encoding="utf-8"), str(path))
        if definition.name in definitions:
            raise InvalidInput(f"{path}: agent {definition.name!r} is defined twice")
        definitions[definition.name] = definition
    missing = sorted(REQUIRED_AGENTS - set(definitions))
    if missing:
        raise InvalidInput(f"{folder}: missing agent definition(s) {missing}")
    return definitions


def manager_for(definitions: dict[str, AgentDefinition], memory_type: MemoryType) -> AgentDefinition:
    for definition in definitions.values():
        if definition.role == "memory_manager" and definition.memory_type is memory_type:
            return definition
    raise InvalidInput(f"no memory manager defined for {memory_type.value}")
