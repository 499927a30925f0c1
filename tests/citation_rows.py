"""The citation index's rows against what the memories' `source_ids` call for: the two sets a test of
`store.citations` (or of doctor's check of it) compares."""

from __future__ import annotations

import json

from sqlalchemy import text

from mirix_py import Mirix
from mirix_py.store.citations import MAX_INDEXED_ID


def cited(mx: Mirix) -> set[tuple[str, str, str, str]]:
    """(memory, cited id, user, type) of every id a memory row cites that the index keeps, as the rows'
    `source_ids` say."""
    with mx.engine.connect() as conn:
        rows = conn.execute(text("SELECT id, user_id, memory_type, source_ids FROM memory")).all()
    return {(memory_id, source_id, user_id, memory_type) for memory_id, user_id, memory_type, sources in rows
            for source_id in (sources if isinstance(sources, list) else json.loads(sources))
            if len(source_id) <= MAX_INDEXED_ID}


def indexed(mx: Mirix) -> set[tuple[str, str, str, str]]:
    """(memory, cited id, user, type) rows the index holds."""
    with mx.engine.connect() as conn:
        return {tuple(r) for r in conn.execute(text("SELECT memory_id, source_id, user_id, memory_type FROM memory_source"))}
