"""Which embedded Chroma holds a PostgreSQL database's vectors.

Embedded Chroma keeps vectors in the data dir of the engine that wrote them: two engines on one
PostgreSQL database with two data dirs each see all the rows but only their own vectors (a search
misses the other's memories, `doctor` reports rows without vectors). So the database records the
embedded Chroma that first holds its vectors, in the comment of its `memory` table (no table of its
own, so no migration), and an engine opening it with another one is refused.

A data dir is known by a random id it keeps (`chroma.id`), not by host and path: a container
started again under another host name, or a volume mounted at another path, is still the same data
dir. A copy of a data dir carries its id, so it counts as the same one.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from mirix_py.errors import InvalidInput
from mirix_py.store.private import private_dir

log = logging.getLogger("mirix_py.store")

ID_FILE = "chroma.id"
RECORD_TABLE = "memory"
RECORD_LOCK = text("SELECT pg_advisory_xact_lock(hashtext('mirix vector store'))")


class EmbeddedChroma(BaseModel):
    """One data dir's embedded Chroma, as the database records it."""

    kind: Literal["chroma-embedded"] = Field(default="chroma-embedded",
                                             description="marks the table comment as this record")
    id: str = Field(description="the data dir's own id (its `chroma.id`)")
    host: str = Field(description="the machine it was last opened on, for the error message")
    path: str = Field(description="the data dir's absolute path there, for the error message")


class VectorsElsewhere(InvalidInput):
    """The database's vectors are in another data dir's embedded Chroma than this engine's."""

    def __init__(self, recorded: EmbeddedChroma, mine: EmbeddedChroma) -> None:
        super().__init__(
            f"this database's vectors are kept in the embedded Chroma of the data dir {recorded.path} on "
            f"{recorded.host}, and this engine's data dir is {mine.path} on {mine.host}: an engine with another "
            "data dir would neither see those vectors nor share its own. Give every process on the database one "
            "vector index: MIRIX_VECTOR_STORE=pgvector (`mirix migrate-vectors` moves the vectors there), a "
            "Chroma server (MIRIX_CHROMA_URL), or the same data dir. If that data dir moved here, copy its "
            f"{ID_FILE} into this one.")
        self.recorded = recorded
        self.mine = mine


def this_data_dir(data_dir: Path) -> EmbeddedChroma:
    """The embedded Chroma of `data_dir`, its id made (0600) the first time it is asked for."""
    path = Path(data_dir) / ID_FILE
    if not path.exists():
        _make_id(path)
    return EmbeddedChroma(id=path.read_text().strip(), host=socket.gethostname(), path=str(Path(data_dir).resolve()))


def _make_id(path: Path) -> None:
    """Write a new id beside `path` and link it into place: another engine of the data dir making one
    at the same time never reads a file half written, and the first link wins."""
    private_dir(path.parent)
    draft = path.with_name(f"{ID_FILE}.{uuid.uuid4().hex}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(uuid.uuid4().hex)
    try:
        os.link(draft, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not path.exists():
            os.replace(draft, path)
    finally:
        draft.unlink(missing_ok=True)


def recorded(conn: Connection) -> EmbeddedChroma | None:
    """The embedded Chroma the database records, None when it records none."""
    return _parsed(_comment(conn))


def hold_vectors(conn: Connection, mine: EmbeddedChroma) -> None:
    """Refuse `mine` when the database's vectors are in another embedded Chroma; record it when the
    database records none yet. Runs in the caller's transaction, which it locks against another
    engine deciding at the same time (held until that transaction ends)."""
    conn.execute(RECORD_LOCK)
    comment = _comment(conn)
    known = _parsed(comment)
    if known is not None and known.id != mine.id:
        raise VectorsElsewhere(known, mine)
    if known == mine:
        return
    if known is None and comment:
        log.warning("the table %s has a comment of its own: this database cannot record which data dir's "
                    "embedded Chroma holds its vectors, and engines with other data dirs are not refused",
                    RECORD_TABLE)
        return
    _record(conn, mine)


def _comment(conn: Connection) -> str | None:
    return conn.execute(text(f"SELECT obj_description(CAST('{RECORD_TABLE}' AS regclass), 'pg_class')")).scalar()


def _parsed(comment: str | None) -> EmbeddedChroma | None:
    if not comment:
        return None
    try:
        return EmbeddedChroma.model_validate_json(comment)
    except ValidationError:  # a comment an administrator wrote: not a record
        return None


def _record(conn: Connection, mine: EmbeddedChroma) -> None:
    """Write the record (or bring its host and path up to date); without the right to (not the
    table's owner), say that engines with other data dirs cannot be refused."""
    literal = "'" + json.dumps(mine.model_dump()).replace("'", "''") + "'"
    literal = literal.replace(":", "\\:")  # text() would take ':name' for a parameter
    try:
        with conn.begin_nested():
            conn.execute(text(f"COMMENT ON TABLE {RECORD_TABLE} IS {literal}"))
    except DBAPIError as exc:
        log.warning("could not record which embedded Chroma holds this database's vectors (%s): engines with "
                    "other data dirs on this database are not refused, and would each keep vectors of their own",
                    str(exc.orig).strip().splitlines()[0] if exc.orig else exc)
