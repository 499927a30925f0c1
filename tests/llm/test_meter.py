"""How a prompt's estimated tokens are split by part, wherever the batch sits."""

from __future__ import annotations

from autogen_core.models import SystemMessage, UserMessage

from mirix_py.llm.meter import estimate_tokens, prompt_parts

BATCH = "New inputs (2), to remember, not to answer:\n[id=m1] Ada: I moved to Lisbon.\n[id=m2] Ada: Tom flies."
INSTRUCTIONS = "# agent: semantic_memory_manager\nYou maintain semantic memory."
MEMORIES = "Existing semantic memories (only these ids may be edited):\n(none)"
ASK = "Your tool calls:"


def test_a_batch_leading_the_system_prompt_counts_as_batch_not_instructions():
    parts = prompt_parts([SystemMessage(content=f"{BATCH}\n\n{INSTRUCTIONS}"),
                          UserMessage(content=f"{MEMORIES}\n\n{ASK}", source="user")])
    assert parts["batch"] == estimate_tokens(BATCH)
    assert parts["system"] == estimate_tokens(INSTRUCTIONS)
    assert parts["memories"] == estimate_tokens(f"{MEMORIES}\n\n{ASK}") and parts["correction"] == 0


def test_a_batch_in_the_task_counts_as_batch_after_the_listed_memories():
    parts = prompt_parts([SystemMessage(content=INSTRUCTIONS), UserMessage(content=f"{MEMORIES}\n\n{BATCH}",
                                                                           source="user")])
    assert parts["system"] == estimate_tokens(INSTRUCTIONS)
    assert parts["batch"] == estimate_tokens(BATCH) and parts["memories"] == estimate_tokens(MEMORIES)


def test_schemas_in_a_text_mode_system_prompt_count_as_tools():
    schemas = '[{"name": "insert_semantic", "parameters": {}}]'
    parts = prompt_parts([SystemMessage(content=f"{BATCH}\n\n{INSTRUCTIONS}\n\nThe tools:\n{schemas}"),
                          UserMessage(content=ASK, source="user")])
    assert parts["tools"] == estimate_tokens(schemas) and parts["batch"] == estimate_tokens(BATCH)
