"""Ids typed short: a unique prefix of a memory or input id of one user stands for the whole id
(`mirix show epi_3f2a`). Ambiguous or unknown prefixes are errors that name the candidates."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.store.tables import HistoryRow, InputRow, MemoryRow

MIN_PREFIX = 4


def _resolve(engine: Engine, columns, user_id: str, prefix: str, what: str) -> str:
    prefix = prefix.strip()
    found: set[str] = set()
    with Session(engine) as session:
        for column, owner in columns:
            exact = session.execute(select(column).where(column == prefix, owner == user_id).limit(1)).first()
            if exact is not None:
                return prefix
            if len(prefix) >= MIN_PREFIX:
                rows = session.execute(select(column).distinct().where(
                    func.substr(column, 1, len(prefix)) == prefix, owner == user_id).limit(6)).scalars()
                found.update(rows)
    if len(found) == 1:
        return found.pop()
    if not found:
        raise (MemoryNotFound(prefix) if what == "memory" else InvalidInput(f"no {what} id starts with {prefix!r}"))
    listed = ", ".join(sorted(found)[:5])
    raise InvalidInput(f"{prefix!r} matches several {what} ids ({listed}{', …' if len(found) > 5 else ''}): type more of it")


def memory_id(engine: Engine, user_id: str, prefix: str) -> str:
    """The memory id (a live memory's, or one that history still knows) that `prefix` names."""
    return _resolve(engine, [(MemoryRow.id, MemoryRow.user_id), (HistoryRow.memory_id, HistoryRow.user_id)],
                    user_id, prefix, "memory")


def input_id(engine: Engine, user_id: str, prefix: str) -> str:
    return _resolve(engine, [(InputRow.id, InputRow.user_id), (HistoryRow.input_id, HistoryRow.user_id)],
                    user_id, prefix, "input")
