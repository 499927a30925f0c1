"""Short references for the memories in one chat turn's prompts: "m1", "m2", … in the order they are shown.

A memory's id is a type and 32 hex digits: some twenty tokens a memory for a small model to read and copy
when it cites, and random, so two stores holding the same memories in the same order hand the answerer
different prompts (and a sampling model different answers). The answerer is shown a memory's place in the
turn instead; its citations are written back as ids before anyone else reads the answer.
"""

from __future__ import annotations

import re

_REF = re.compile(r"\bm([1-9][0-9]{0,3})\b")
# a bracketed or parenthesised list of references alone: "[m2]", "[m1, m3]", "(m4)"
_CITED = re.compile(r"[\[(]\s*m[1-9][0-9]{0,3}(?:\s*[,;]\s*m[1-9][0-9]{0,3})*\s*[\])]")


class PromptRefs:
    """The references of one turn: the same memory keeps its reference across the turn's prompts (the
    retrieved memories, then the targeted search's results)."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._refs: dict[str, str] = {}

    def ref(self, memory_id: str) -> str:
        """The memory's reference, given on first sight."""
        if memory_id not in self._refs:
            self._ids.append(memory_id)
            self._refs[memory_id] = f"m{len(self._ids)}"
        return self._refs[memory_id]

    def memory_id(self, ref: str) -> str | None:
        match = _REF.fullmatch(ref.strip())
        index = int(match.group(1)) - 1 if match else -1
        return self._ids[index] if 0 <= index < len(self._ids) else None

    def decoded(self, answer: str) -> str:
        """`answer` with each citation of references written as the ids they stand for ("[m2]" ->
        "[epi_…]", "(m1, m3)" -> "[epi_…, sem_…]"); a reference this turn never gave stays as written."""
        def decode(match: re.Match[str]) -> str:
            ids = [self.memory_id(m.group(0)) for m in _REF.finditer(match.group(0))]
            return match.group(0) if None in ids else "[" + ", ".join(i for i in ids if i) + "]"

        return _CITED.sub(decode, answer)
