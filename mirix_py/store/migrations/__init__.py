"""Alembic migrations of the SQL schema. `upgrade(engine)` brings any database to the current head."""

from __future__ import annotations

import functools

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

from mirix_py.errors import MirixError

HERE = Path(__file__).resolve().parent


class SchemaAhead(MirixError):
    """The database's schema is at a revision this version does not have: a newer mirix-py upgraded
    it. Without this, alembic's "Can't locate revision" came out as a traceback, and an older engine
    reading or writing a newer layout is not something any version was tested for."""

    def __init__(self, found: str, head: str) -> None:
        super().__init__(f"this database's schema is at revision {found}, which this mirix-py (schema {head}) does not "
                         "know: a newer mirix-py upgraded it. Open it with that version (upgrade this package), "
                         "or restore a backup made by this one")
        self.found, self.head = found, head


def alembic_config(connection=None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(HERE))
    config.attributes["connection"] = connection
    return config


@functools.cache
def head_revision() -> str:
    """The newest migration this version has (read once: the scripts do not change while it runs)."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head() or ""


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def refuse_unknown(revision: str | None) -> None:
    """`SchemaAhead` when `revision` is none of this version's migrations."""
    if revision is None:
        return
    try:
        ScriptDirectory.from_config(alembic_config()).get_revision(revision)
    except CommandError:  # alembic's ResolutionError is one
        raise SchemaAhead(revision, head_revision()) from None


def behind(engine: Engine) -> bool:
    """Whether `upgrade` would change this database (not created yet, or at an earlier revision);
    `SchemaAhead` when a newer version upgraded it. Reads only: no lock is taken."""
    found = current_revision(engine)
    refuse_unknown(found)
    return found != head_revision()


def _unversioned_revision(conn) -> str | None:
    """A database made before migrations existed: which revision does its layout match?"""
    inspector = inspect(conn)
    if "memory" not in inspector.get_table_names():
        return None
    if "api_key" in inspector.get_table_names():
        fts = [c["name"] for c in inspector.get_columns("memory_fts")] if "memory_fts" in inspector.get_table_names() else []
        return "0004_fts_memory_type" if "mtype" in fts else "0003_api_keys"
    columns = {c["name"] for c in inspector.get_columns("input_log")}
    return "0002_claims_usage" if "done_actors" in columns else "0001_initial"


# a transaction-level advisory lock: PostgreSQL drops it at the upgrade's commit or rollback
_UPGRADE_LOCK = text("SELECT pg_advisory_xact_lock(hashtext('mirix schema upgrade'))")


def _wait_for_other_upgrades(conn: Connection) -> None:
    """Engines opening one database at once upgrade it one after the other: the first creates the
    schema, the others then find it at head. Without this two ran the same DDL and one failed (a
    duplicate type or table). On SQLite an engine opened for reading (`lock=False`) upgrades only
    under the data dir's writer lock (`store.opening.bring_schema_up`); the upgrade also takes SQLite's
    write lock before it reads the schema's revision (the driver begins no transaction before DDL,
    so each statement would commit on its own)."""
    if conn.dialect.name == "postgresql":
        conn.execute(_UPGRADE_LOCK)
    elif conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # waits up to the engine's busy timeout


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to `revision` (the current schema by default), data intact. Alembic runs
    inside this one transaction (`env.py` configures it on this connection)."""
    with engine.begin() as conn:
        _wait_for_other_upgrades(conn)
        config = alembic_config(conn)
        current = MigrationContext.configure(conn).get_current_revision()
        refuse_unknown(current)
        if current is None:
            found = _unversioned_revision(conn)
            if found:
                command.stamp(config, found)
        command.upgrade(config, revision)
