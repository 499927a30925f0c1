"""What a history state keeps beside a memory's fields, for undo: `history()` shows none of it.

A vault entry's earlier secret, encrypted (its states are masked), and a merge's members: the
survivor's merge event lists the memories folded in, each one's deletion the memory it went into, so
undo can take the whole merge back and an erasure can erase what was folded into what it erases.
"""

from __future__ import annotations

SECRET_TOKEN = "$secret"  # a vault entry's earlier secret, encrypted, in its history `before`
MERGED = "$merged"
MERGED_INTO = "$merged_into"
UNDO_KEYS = frozenset({SECRET_TOKEN, MERGED, MERGED_INTO})

__all__ = ["MERGED", "MERGED_INTO", "SECRET_TOKEN", "UNDO_KEYS"]
