"""Which memories cite an id: `memory_source`, a row per (memory, id it cites), so "the episodes of
the user that cite message `m`" is an index seek. Deleting a turn asks it of every message and input
the turn cites (`agents.derived.cited_alone`), and an erasing write of what is still cited
(`store.erase.still_cited`); reading every memory of the user's type for its `source_ids` made each
delete cost as much as the user had memories.

`source_ids` stays the source of truth: triggers on `memory` write the rows from it in the
transaction of each write, whatever writes it (`MemoryStore.apply`, `delete_user`, a restore, a
migration), so the two cannot disagree through the engine; `mirix doctor` finds a table drifted by
other means (a hand edit, a restore by another tool, a dropped trigger: `rows_apart`, `triggers_off`)
and `--repair` makes the triggers and the rows again. An update follows `source_ids` only: a memory's
id, user and type never change (`memories.IMMUTABLE_FIELDS`). SQLite: row triggers over `json_each`; PostgreSQL:
statement triggers over the transition tables, as `store.pg_postings` keeps its postings; made by
revision 0020, so a change to their SQL needs a migration that makes them again. An id longer than
MAX_INDEXED_ID (no caller's input id is: `boundary.sizes`) gets no row, so every index entry stays
within PostgreSQL's size for one; `citing` finds those few in the memories' own lists.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from sqlalchemy import select, text
from sqlalchemy.engine import Connection
from sqlmodel import col

from mirix_py.store.tables import MemoryRow, MemorySourceRow

TABLE = "memory_source"
MAX_INDEXED_ID = 256  # characters of a cited id that gets its row (`boundary.sizes.MAX_SOURCE_ID_CHARS`)
IDS_PER_QUERY = 500  # cited ids in one IN (...)
COLUMNS = "memory_id, source_id, user_id, memory_type"
OPERATIONS = ("insert", "delete", "update")


def _sqlite_pairs(row: str, source: str) -> str:
    """SELECT of the (memory, cited id) rows of memory row `row` read from `source` (a FROM list whose
    last item is the row's `json_each`, alias j): each text id of its list once, those longer than
    MAX_INDEXED_ID left out."""
    return (f"SELECT DISTINCT {row}.id, j.value, {row}.user_id, {row}.memory_type FROM {source} "
            f"WHERE json_type({row}.source_ids) = 'array' AND j.type = 'text' AND length(j.value) <= {MAX_INDEXED_ID}")


def _sqlite_triggers() -> dict[str, str]:
    new_pairs = (_sqlite_pairs("NEW", "json_each(NEW.source_ids) j")
                 + f" AND j.value NOT IN (SELECT source_id FROM {TABLE} WHERE memory_id = NEW.id)")
    return {
        "insert": f"AFTER INSERT ON memory BEGIN INSERT INTO {TABLE} ({COLUMNS}) {new_pairs}; END",
        "delete": f"AFTER DELETE ON memory BEGIN DELETE FROM {TABLE} WHERE memory_id = OLD.id; END",
        "update": (f"AFTER UPDATE OF source_ids ON memory WHEN OLD.source_ids IS NOT NEW.source_ids BEGIN "
                   f"DELETE FROM {TABLE} WHERE memory_id = NEW.id AND source_id NOT IN "
                   "(SELECT j.value FROM json_each(NEW.source_ids) j WHERE j.type = 'text'); "
                   f"INSERT INTO {TABLE} ({COLUMNS}) {new_pairs}; END"),
    }


def _pg_pairs(rows: str) -> str:
    """SELECT of the (memory, cited id) rows of the memory rows `rows` (alias r), as `_sqlite_pairs`."""
    array = "CASE WHEN json_typeof(r.source_ids) = 'array' THEN r.source_ids ELSE CAST('[]' AS json) END"
    return (f"SELECT DISTINCT r.id AS memory_id, e.v #>> '{{}}' AS source_id, r.user_id, r.memory_type "
            f"FROM {rows} r CROSS JOIN LATERAL json_array_elements({array}) e(v) "
            f"WHERE json_typeof(e.v) = 'string' AND length(e.v #>> '{{}}') <= {MAX_INDEXED_ID}")


# the rows of an UPDATE whose `source_ids` changed (a bulk update of other columns changes none)
_PG_CHANGED = ("changed AS (SELECT n.* FROM new_rows n JOIN old_rows o ON o.id = n.id "
               "WHERE CAST(o.source_ids AS text) IS DISTINCT FROM CAST(n.source_ids AS text))")

# Statement-level triggers with transition tables: a bulk write (a user deleted, a restore) is one join.
PG_TRIGGERS = {
    "insert": ("REFERENCING NEW TABLE AS new_rows",
               f"INSERT INTO {TABLE} ({COLUMNS}) {_pg_pairs('new_rows')} ON CONFLICT DO NOTHING;"),
    "delete": ("REFERENCING OLD TABLE AS old_rows",
               f"DELETE FROM {TABLE} s USING old_rows o WHERE s.memory_id = o.id;"),
    "update": ("REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
               # what the rows cited and no longer cite, as a set difference: the planner takes a row
               # count of one for `json_array_elements` and, asked NOT EXISTS, rescans the kept ids for
               # every indexed one (quadratic in a core block's thousands of cited ids)
               f"WITH {_PG_CHANGED}, gone AS (SELECT s.memory_id, s.source_id FROM {TABLE} s JOIN changed c "
               f"ON s.memory_id = c.id EXCEPT SELECT p.memory_id, p.source_id FROM ({_pg_pairs('changed')}) p) "
               f"DELETE FROM {TABLE} s USING gone g WHERE s.memory_id = g.memory_id AND s.source_id = g.source_id;\n"
               f"WITH {_PG_CHANGED} INSERT INTO {TABLE} ({COLUMNS}) {_pg_pairs('changed')} ON CONFLICT DO NOTHING;"),
}


def create_triggers(conn: Connection) -> None:
    """The triggers that keep the table in step with `memory` (the table itself is the migration's)."""
    if conn.dialect.name == "postgresql":
        for op, (referencing, body) in PG_TRIGGERS.items():
            # the schema the tables are in now, whatever the search path of the session that writes
            conn.execute(text(f"CREATE OR REPLACE FUNCTION mirix_memory_sources_{op}() RETURNS trigger "
                              f"LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN\n{body}\nRETURN NULL; END $$"))
            conn.execute(text(f"DROP TRIGGER IF EXISTS memory_sources_{op} ON memory"))
            conn.execute(text(f"CREATE TRIGGER memory_sources_{op} AFTER {op.upper()} ON memory {referencing} "
                              f"FOR EACH STATEMENT EXECUTE FUNCTION mirix_memory_sources_{op}()"))
        return
    for op, body in _sqlite_triggers().items():
        conn.execute(text(f"DROP TRIGGER IF EXISTS memory_sources_{op}"))
        conn.execute(text(f"CREATE TRIGGER memory_sources_{op} {body}"))


def drop_triggers(conn: Connection) -> None:
    """The triggers and their functions (a downgrade past revision 0020)."""
    for op in OPERATIONS:
        if conn.dialect.name == "postgresql":
            conn.execute(text(f"DROP TRIGGER IF EXISTS memory_sources_{op} ON memory"))
            conn.execute(text(f"DROP FUNCTION IF EXISTS mirix_memory_sources_{op}()"))
        else:
            conn.execute(text(f"DROP TRIGGER IF EXISTS memory_sources_{op}"))


def rebuild(conn: Connection) -> int:
    """Every row again from the memories' `source_ids`; returns how many."""
    conn.execute(text(f"DELETE FROM {TABLE}"))
    conn.execute(text(f"INSERT INTO {TABLE} ({COLUMNS}) {_expected_rows(conn)}"))
    return int(conn.execute(text(f"SELECT count(*) FROM {TABLE}")).scalar_one())


def _expected_rows(conn: Connection) -> str:
    """SELECT of every row the table should hold, as `rebuild` writes them."""
    if conn.dialect.name == "postgresql":
        return _pg_pairs("memory")
    return _sqlite_pairs("m", "memory m, json_each(m.source_ids) j")


def rows_apart(conn: Connection) -> tuple[int, int]:
    """(rows the memories' `source_ids` call for that the table lacks, rows it holds that no memory's
    `source_ids` calls for): a drift the triggers cannot make, left by a hand edit, a restore by
    another tool or a dropped trigger. Both set differences counted in one read-only statement: one
    snapshot, each side computed once (a CTE named twice is materialized on both backends)."""
    missing, extra = conn.execute(text(
        f"WITH expected AS ({_expected_rows(conn)}), held AS (SELECT {COLUMNS} FROM {TABLE}) SELECT "
        "(SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM held) missing), "
        "(SELECT count(*) FROM (SELECT * FROM held EXCEPT SELECT * FROM expected) extra)")).one()
    return int(missing), int(extra)


def triggers_off(conn: Connection) -> list[str]:
    """Names of the triggers that keep the table (`create_triggers`) that are missing, or on PostgreSQL
    disabled (a restore tool may leave them so): writes then leave the table behind."""
    if conn.dialect.name == "postgresql":
        # 'O' fires in a normal session, 'A' always; 'D' (disabled) and 'R' (replicas only) do not
        query = "SELECT tgname FROM pg_trigger WHERE tgrelid = CAST('memory' AS regclass) AND tgenabled IN ('O', 'A')"
    else:
        query = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'memory'"
    firing = set(conn.execute(text(query)).scalars())
    return [name for name in (f"memory_sources_{op}" for op in OPERATIONS) if name not in firing]


def citing(conn: Connection, user_id: str, ids: Iterable[str], memory_types: Sequence[str]) -> dict[str, list[str]]:
    """Cited id -> the ids of the user's memories of `memory_types` (values) whose `source_ids` hold it,
    for those of `ids` some such memory cites. Reads in `conn`'s transaction: inside a write, what it
    wrote so far counts."""
    wanted = list(dict.fromkeys(ids))
    indexed = [i for i in wanted if len(i) <= MAX_INDEXED_ID]
    out: dict[str, list[str]] = {}
    for start in range(0, len(indexed), IDS_PER_QUERY):
        rows = conn.execute(select(col(MemorySourceRow.source_id), col(MemorySourceRow.memory_id)).where(
            col(MemorySourceRow.user_id) == user_id, col(MemorySourceRow.source_id).in_(indexed[start:start + IDS_PER_QUERY]),
            col(MemorySourceRow.memory_type).in_(list(memory_types))).order_by(col(MemorySourceRow.memory_id)))
        for source_id, memory_id in rows:
            out.setdefault(source_id, []).append(memory_id)
    longer = set(wanted) - set(indexed)
    if longer:
        out.update(_citing_unindexed(conn, user_id, longer, memory_types))
    return out


def _citing_unindexed(conn: Connection, user_id: str, ids: set[str], memory_types: Sequence[str]) -> dict[str, list[str]]:
    """`citing` for ids too long for a row: every memory of the user's types read for its `source_ids`."""
    out: dict[str, list[str]] = {}
    query = select(col(MemoryRow.id), col(MemoryRow.source_ids)).where(
        col(MemoryRow.user_id) == user_id, col(MemoryRow.memory_type).in_(list(memory_types)))
    for memory_id, sources in conn.execute(query.order_by(col(MemoryRow.id))):
        for source_id in ids.intersection(sources or ()):
            out.setdefault(source_id, []).append(memory_id)
    return out


__all__ = ["MAX_INDEXED_ID", "TABLE", "citing", "create_triggers", "drop_triggers", "rebuild", "rows_apart",
           "triggers_off"]
