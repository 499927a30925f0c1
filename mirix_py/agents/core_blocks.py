"""Core-block rules, in one place: the labels, a block's limit, appending a line, fitting a block.

Every writer of core memory (the API, the offline rules, the LLM tools) goes through these, so a
limit or a label means the same thing on every path.
"""

from __future__ import annotations

from typing import Sequence

from mirix_py.records import CoreLabel, CoreMemory, MemoryType

CORE_LABELS: tuple[CoreLabel, ...] = ("persona", "human")
DEFAULT_LIMIT: int = CoreMemory.model_fields["limit"].default


def block_limit(block: CoreMemory | None) -> int:
    """The block's own limit, or the records' default for a block not written yet."""
    return block.limit if block is not None else DEFAULT_LIMIT


def appended(value: str, line: str) -> str:
    """`value` with `line` as its last line."""
    line = line.strip()
    return f"{value}\n{line}" if value else line


def over_limit(value: str, block: CoreMemory | None) -> str | None:
    """Why `value` cannot be the block's value, or None when it fits."""
    limit = block_limit(block)
    if len(value) > limit:
        return f"would hold {len(value)} characters, over its limit of {limit}"
    return None


def keep_newest(lines: Sequence[str], block: CoreMemory | None) -> str:
    """The lines joined, dropping the oldest until the block fits (the offline rewrite)."""
    kept = list(lines)
    limit = block_limit(block)
    while kept and len("\n".join(kept)) > limit:
        kept.pop(0)
    return "\n".join(kept)


def find_block(store, user_id: str, label: str) -> CoreMemory | None:
    """The user's block with this label, or None when it was never written."""
    for memory in store.list(user_id=user_id, memory_types=[MemoryType.core], limit=10):
        if isinstance(memory, CoreMemory) and memory.label == label:
            return memory
    return None
