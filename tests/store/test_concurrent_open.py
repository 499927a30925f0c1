"""Several processes opening one new database at the same moment all open it: the schema's upgrade
(and pgvector's extension) is made by one of them while the others wait, on PostgreSQL and on SQLite
(a writer and engines opened for reading beside it)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

import pytest
from sqlalchemy import create_engine, text

from standby import server_of

PROCESSES = 4

# A process that opens an engine (or, with "pgvector_url", only pgvector's index) once `go` exists,
# after telling it is ready (imports done), so that the opens start together; it prints OK or fails.
OPENER = r"""
import json, sys, time
from pathlib import Path
from mirix_py.engine import Mirix
from mirix_py.settings import Settings
from mirix_py.store.db import make_engine
from mirix_py.store.pgvectors import PgVectorIndex

args = json.loads(sys.argv[1])
Path(args["ready"]).touch()
while not Path(args["go"]).exists():
    time.sleep(0.005)
if "pgvector_url" in args:
    PgVectorIndex(make_engine(args["pgvector_url"]))
else:
    with Mirix(settings=Settings(**args["settings"]), embedder=None, lock=args["lock"]):
        pass
print("OK")
"""


def _fresh_database(server_url: str):
    """A new, empty database on `server_url`'s server (no extension, no schema), dropped afterwards."""
    name = "t_open_" + uuid.uuid4().hex[:12]
    base, _, _ = server_url.split("?", 1)[0].rpartition("/")
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield f"{base}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


SCHEMA_FIXTURE = {"postgres": "pg_schema_url", "pgvector": "pgvector_schema_url"}  # they name the servers


@pytest.fixture
def fresh_database(request):
    """A callable that makes one more new database on a test server ("postgres" or "pgvector")."""
    made = []

    def make(server: str) -> str:
        gen = _fresh_database(server_of(request.getfixturevalue(SCHEMA_FIXTURE[server])))
        made.append(gen)
        return next(gen)

    yield make
    for gen in made:
        next(gen, None)


def _open_at_once(workdir: Path, openers: list[dict],
                  meanwhile: Callable[[list[subprocess.Popen]], None] = lambda procs: None,
                  ) -> list[subprocess.CompletedProcess]:
    """Start one process per entry of `openers` (Settings and lock), release them together, call
    `meanwhile` with them, and wait. Their output goes to files: a pipe left unread could stall one
    that holds the upgrade."""
    go = workdir / "go"
    procs, ready, outputs = [], [], []
    for i, opener in enumerate(openers):
        ready.append(workdir / f"ready-{i}")
        outputs.append((workdir / f"out-{i}", workdir / f"err-{i}"))
        args = json.dumps({**opener, "ready": str(ready[-1]), "go": str(go)})
        with outputs[-1][0].open("w") as out, outputs[-1][1].open("w") as err:
            procs.append(subprocess.Popen([sys.executable, "-c", OPENER, args], cwd=workdir, env=dict(os.environ),
                                          stdout=out, stderr=err))
    try:
        deadline = time.monotonic() + 300
        while not all(r.exists() for r in ready) and all(p.poll() is None for p in procs):
            assert time.monotonic() < deadline, "the opening processes did not start"
            time.sleep(0.02)
        go.touch()
        meanwhile(procs)
        for p in procs:
            p.wait(timeout=600)
    finally:
        for p in procs:  # none is left waiting when the test failed before they finished
            if p.poll() is None:
                p.kill()
                p.wait()
    return [subprocess.CompletedProcess(p.args, p.returncode, out.read_text(), err.read_text())
            for p, (out, err) in zip(procs, outputs)]


def _error_of(stderr: str) -> str:
    """The exception line of a failed process's traceback."""
    lines = [line for line in stderr.splitlines() if re.match(r"[A-Za-z_][\w.]*: ", line)]
    return lines[-1][:300] if lines else stderr[-300:]


def _all_opened(done: list[subprocess.CompletedProcess]) -> None:
    failed = [_error_of(d.stderr) for d in done if d.returncode != 0 or d.stdout.strip() != "OK"]
    assert not failed, f"{len(failed)} of {len(done)} opens failed: {failed}"


def _waiting_on_locks(engine) -> int:
    """Sessions of this database waiting for a lock (a transaction of its own per call: within one,
    PostgreSQL answers pg_stat_activity from the snapshot it took first)."""
    with engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                 "AND wait_event_type = 'Lock'")).scalar_one()


def _vault_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


@pytest.mark.parametrize("server", ["postgres", "pgvector"])
def test_engines_opening_one_new_postgres_database_at_once_all_open(request, tmp_path, fresh_database, server):
    """pgvector: the database has no `vector` extension yet, so the opening engines also create it."""
    url, key = fresh_database(server), _vault_key()
    vectors = ({"vector_store": "pgvector"} if server == "pgvector" else
               {"vector_store": "chroma", "chroma_url": request.getfixturevalue("chroma_url").rstrip("/")
                + "/t_" + uuid.uuid4().hex[:12]})
    openers = [{"settings": {"data_dir": str(tmp_path / f"data-{i}"), "database_url": url, "vault_key": key,
                             **vectors}, "lock": True} for i in range(PROCESSES)]
    _all_opened(_open_at_once(tmp_path, openers))


def test_pgvector_indexes_opening_on_a_database_without_the_extension_at_once_all_open(fresh_database, tmp_path):
    """The schema is there, the `vector` extension is not: one creates it and the table, the others
    wait for it and find them. This test holds an uncommitted CREATE EXTENSION until every process
    waits (for it, or for the one that will create it), then rolls it back: all of them decided
    before any could see the extension."""
    from mirix_py.store.db import create_schema, make_engine

    url = fresh_database("pgvector")
    engine = make_engine(url)
    create_schema(engine)
    with engine.connect() as holder:
        held = holder.begin()
        holder.execute(text("CREATE EXTENSION vector"))

        def all_waiting_then_roll_back(procs: list[subprocess.Popen]) -> None:
            try:
                deadline = time.monotonic() + 300
                while all(p.poll() is None for p in procs) and _waiting_on_locks(engine) < PROCESSES:
                    assert time.monotonic() < deadline, "the processes did not all reach the extension"
                    time.sleep(0.02)
            finally:
                held.rollback()

        done = _open_at_once(tmp_path, [{"pgvector_url": url}] * PROCESSES, all_waiting_then_roll_back)
    engine.dispose()
    _all_opened(done)


def test_a_writer_and_readers_opening_one_new_sqlite_data_dir_at_once_all_open(tmp_path):
    """The writer lock (`store.writer_lock`) keeps out a second writer only: engines opened for
    reading (`lock=False`) beside it upgrade the same file."""
    settings = {"data_dir": str(tmp_path / "data"), "vault_key": _vault_key()}
    openers = [{"settings": settings, "lock": i == 0} for i in range(PROCESSES)]
    _all_opened(_open_at_once(tmp_path, openers))
