"""Where a PostgreSQL database's vectors are: one data dir's embedded Chroma, one Chroma server, or
pgvector in the database itself.

Engines on one database that keep vectors in different places each see all the rows but only their
own vectors: a search's vector leg misses the others' memories, and `doctor` reports rows without
vectors. So the database records where its vectors are, in the comment of its `memory` table (no
table of its own, so no migration), and an engine opening it with another place is refused; pgvector,
the place `mirix migrate-vectors` moves vectors to, takes the record over.

A data dir is known by a random id it keeps (`chroma.id`), not by host and path: a container
started again under another host name, or a volume mounted at another path, is still the same data
dir. A copy of a data dir carries its id, so it counts as the same one. A Chroma server is known by a
collection the first engine made on it (`mirix_home_<id>`), not by its URL, which differs from host
to host.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from pathlib import Path
from typing import Annotated, Callable, Literal, Union
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
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


class ChromaServer(BaseModel):
    """A Chroma server (and database on it), as the database records it."""

    kind: Literal["chroma-server"] = Field(default="chroma-server", description="marks the table comment as this record")
    id: str = Field(description="the id in the name of the collection the first engine made on the server")
    url: str = Field(description="the server's URL as that engine gave it, for the error message")


class PgVector(BaseModel):
    """The database's own `memory_vector` table (pgvector)."""

    kind: Literal["pgvector"] = Field(default="pgvector", description="marks the table comment as this record")


VectorHome = Annotated[Union[EmbeddedChroma, ChromaServer, PgVector], Field(discriminator="kind")]
_HOME = TypeAdapter(VectorHome)
MARKER_PREFIX = "mirix_home_"  # a marker collection's name: never a user's (theirs start with "mx_")


def described(home: EmbeddedChroma | ChromaServer | PgVector) -> str:
    """Where `home` keeps vectors, in words."""
    if isinstance(home, EmbeddedChroma):
        return f"the embedded Chroma of the data dir {home.path} on {home.host}"
    if isinstance(home, ChromaServer):
        return f"the Chroma server {home.url}"
    return "this database (pgvector)"


class VectorsElsewhere(InvalidInput):
    """The database's vectors are somewhere other than where this engine keeps them."""

    def __init__(self, recorded: EmbeddedChroma | ChromaServer | PgVector,
                 mine: EmbeddedChroma | ChromaServer | PgVector) -> None:
        where = described(mine)
        if isinstance(mine, EmbeddedChroma):
            where = f"its own data dir {mine.path} on {mine.host}"
        super().__init__(
            f"this database's vectors are kept in {described(recorded)}, and this engine would keep them in "
            f"{where}: it would neither see those vectors nor share its own. Give every process on the database "
            f"one vector index: {_remedy(recorded)}")
        self.recorded = recorded
        self.mine = mine


def _remedy(recorded: EmbeddedChroma | ChromaServer | PgVector) -> str:
    if isinstance(recorded, PgVector):
        return "MIRIX_VECTOR_STORE=pgvector (or auto) and no MIRIX_CHROMA_URL."
    move = "MIRIX_VECTOR_STORE=pgvector (`mirix migrate-vectors` moves the vectors there), "
    if isinstance(recorded, ChromaServer):
        return (f"{move}or MIRIX_CHROMA_URL set to that server (the one holding the collection "
                f"{MARKER_PREFIX}{recorded.id}).")
    return (f"{move}a Chroma server (MIRIX_CHROMA_URL) for every process, or the same data dir. If that data dir "
            f"moved here, copy its {ID_FILE} into this one.")


def this_data_dir(data_dir: Path, *, make_id: bool = True) -> EmbeddedChroma:
    """The embedded Chroma of `data_dir`, its id made (0600) the first time it is asked for (with
    `make_id` off, as it would be, for a message: no file written)."""
    path = Path(data_dir) / ID_FILE
    if make_id and not path.exists():
        _make_id(path)
    own = path.read_text().strip() if path.exists() else ""
    return EmbeddedChroma(id=own, host=socket.gethostname(), path=str(Path(data_dir).resolve()))


def shown_url(url: str) -> str:
    """A server's URL without its password, for a record other engines read."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


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


def recorded(conn: Connection) -> EmbeddedChroma | ChromaServer | PgVector | None:
    """Where the database records its vectors, None when it records nothing."""
    return _parsed(_comment(conn))


def hold_vectors(conn: Connection, mine: EmbeddedChroma) -> None:
    """Refuse the embedded Chroma `mine` when the database's vectors are elsewhere; record it when the
    database records nothing yet. Runs in the caller's transaction, which it locks against another
    engine deciding at the same time (held until that transaction ends)."""
    known, comment = _locked(conn)
    if known is not None and not (isinstance(known, EmbeddedChroma) and known.id == mine.id):
        raise VectorsElsewhere(known, mine)
    if known == mine:
        return
    if _unrecordable(known, comment):
        return
    _record(conn, mine)


def hold_server(conn: Connection, url: str, has_marker: Callable[[str], bool], make_marker: Callable[[str], None]) -> None:
    """Refuse the Chroma server at `url` when the database's vectors are elsewhere (another server: one
    without the recorded marker collection); on a database that records nothing yet, mark the server
    and record it. Locked as `hold_vectors` is."""
    known, comment = _locked(conn)
    mine = ChromaServer(id=known.id if isinstance(known, ChromaServer) else uuid.uuid4().hex, url=url)
    if isinstance(known, ChromaServer):
        if not has_marker(MARKER_PREFIX + known.id):
            raise VectorsElsewhere(known, mine)
        return
    if known is not None:
        raise VectorsElsewhere(known, mine)
    if _unrecordable(known, comment):
        return
    make_marker(MARKER_PREFIX + mine.id)
    _record(conn, mine)


def hold_pgvector(conn: Connection) -> None:
    """Record that the database's vectors are in pgvector. A record of Chroma is taken over, with a
    warning: pgvector is where `mirix migrate-vectors` moves them, and an engine of the old place is
    refused from then on rather than keep vectors nobody else sees."""
    known, comment = _locked(conn)
    if isinstance(known, PgVector) or _unrecordable(known, comment):
        return
    if known is not None:
        log.warning("this database recorded its vectors in %s; this engine keeps them in pgvector, which the "
                    "database now records: engines keeping them there are refused from now on (run `mirix "
                    "migrate-vectors` if the vectors were not moved; `mirix doctor --repair` embeds what is missing)",
                    described(known))
    _record(conn, PgVector())


def _locked(conn: Connection) -> tuple[EmbeddedChroma | ChromaServer | PgVector | None, str | None]:
    """The record and the comment it was read from, read under the lock that keeps one engine deciding at a
    time (held until the caller's transaction ends)."""
    conn.execute(RECORD_LOCK)
    comment = _comment(conn)
    return _parsed(comment), comment


def _unrecordable(known: object, comment: str | None) -> bool:
    """A comment an administrator wrote: where the vectors are cannot be recorded (said in a warning)."""
    if known is None and comment:
        log.warning("the table %s has a comment of its own: this database cannot record where its vectors are "
                    "kept, and engines keeping them elsewhere are not refused", RECORD_TABLE)
        return True
    return False


def _comment(conn: Connection) -> str | None:
    return conn.execute(text(f"SELECT obj_description(CAST('{RECORD_TABLE}' AS regclass), 'pg_class')")).scalar()


def _parsed(comment: str | None) -> EmbeddedChroma | ChromaServer | PgVector | None:
    if not comment:
        return None
    try:
        return _HOME.validate_json(comment)
    except ValidationError:  # a comment an administrator wrote: not a record
        return None


def _record(conn: Connection, mine: EmbeddedChroma | ChromaServer | PgVector) -> None:
    """Write the record (or bring its host and path up to date); without the right to (not the
    table's owner), say that engines with other data dirs cannot be refused."""
    literal = "'" + json.dumps(mine.model_dump()).replace("'", "''") + "'"
    literal = literal.replace(":", "\\:")  # text() would take ':name' for a parameter
    try:
        with conn.begin_nested():
            conn.execute(text(f"COMMENT ON TABLE {RECORD_TABLE} IS {literal}"))
    except DBAPIError as exc:
        log.warning("could not record where this database's vectors are kept (%s): engines keeping them "
                    "elsewhere are not refused, and would each keep vectors of their own",
                    str(exc.orig).strip().splitlines()[0] if exc.orig else exc)
