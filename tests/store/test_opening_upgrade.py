"""Opening a store whose schema is not this version's (`store/opening.py`): an engine opened for
reading (`lock=False`) beside the process that writes the data dir never upgrades the schema under
it (that process may be an older mirix-py, which would go on writing its older layout), and a
database a newer mirix-py upgraded is refused, both with what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text

from mirix_py.engine import Mirix
from mirix_py.settings import Settings
from mirix_py.store import writer_lock
from mirix_py.store.db import make_engine
from mirix_py.store.migrations import SchemaAhead, alembic_config, current_revision, head_revision
from mirix_py.store.writer_lock import UpgradeBlocked

# an older `mirix serve`'s hold on the data dir, as every version before the lock's stamp named its
# schema took it: the flock, and its pid and command in the file; kept until stdin closes
OLD_HOLD = ("import fcntl, json, os, sys\n"
            "fd = os.open(os.path.join(sys.argv[1], 'writer.lock'), os.O_RDWR | os.O_CREAT, 0o600)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nos.ftruncate(fd, 0)\n"
            "os.pwrite(fd, json.dumps({'pid': os.getpid(), 'process': 'mirix serve'}).encode(), 0)\n"
            "print('held', flush=True)\nsys.stdin.read()\n")


def _holder(data: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", OLD_HOLD, str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _stop(proc: subprocess.Popen) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


def _revision(data: Path) -> str | None:
    engine = make_engine(f"sqlite:///{data / 'mirix.db'}")
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def _store_one_revision_behind(data: Path) -> tuple[str, list[str]]:
    """A data dir holding memories whose schema is one migration behind this version's (its head
    migration undone): what an older mirix-py left. Returns that revision and the memories' ids."""
    with Mirix(data, embedder=None) as mx:
        mx.add("Ada rows on the river every Sunday.", user_id="ada")
        mx.flush(timeout=60)
        stored = sorted(m.id for m in mx.list(user_id="ada"))
    assert stored
    prior = ScriptDirectory.from_config(alembic_config()).get_revision(head_revision()).down_revision
    assert isinstance(prior, str)
    engine = make_engine(f"sqlite:///{data / 'mirix.db'}")
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), prior)
    engine.dispose()
    assert _revision(data) == prior
    return prior, stored


def test_a_reader_beside_a_writer_leaves_an_older_schema_and_says_what_to_do(tmp_path):
    data = tmp_path / "data"
    prior, stored = _store_one_revision_behind(data)
    holder = _holder(data)
    try:
        with pytest.raises(UpgradeBlocked) as blocked:
            Mirix(data, embedder=None, lock=False)
        said = str(blocked.value)
        assert prior in said and head_revision() in said and f"mirix serve (pid {holder.pid})" in said
        assert "\n" not in said and blocked.value.holder["pid"] == holder.pid
        assert _revision(data) == prior  # nothing changed under the writer
        cli = subprocess.run([sys.executable, "-m", "mirix_py.cli", "list", "-u", "ada", "-d", str(data)],
                             capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "400"})
        assert cli.returncode == 2 and f"pid {holder.pid}" in cli.stderr and prior in cli.stderr
        assert _revision(data) == prior
    finally:
        _stop(holder)
    with Mirix(data, embedder=None, lock=False) as reader:  # no writer now: it upgrades, under the lock
        assert _revision(data) == head_revision()
        assert sorted(m.id for m in reader.list(user_id="ada")) == stored
        assert not writer_lock.held_here(data)  # taken for the upgrade only
    holder = _holder(data)  # the writer is back: a current schema reads beside it as before
    try:
        with Mirix(data, embedder=None, lock=False) as reader:
            assert sorted(m.id for m in reader.list(user_id="ada")) == stored
    finally:
        _stop(holder)


def test_a_database_a_newer_version_upgraded_is_refused(tmp_path, backend):
    settings = Settings(data_dir=tmp_path / "data", database_url=backend)
    with Mirix(settings=settings, embedder=None):
        pass
    engine = make_engine(settings.sql_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0099_from_a_newer_version'"))
    for lock in (True, False):
        with pytest.raises(SchemaAhead, match="revision 0099_from_a_newer_version, which this mirix-py .* does not "
                                              "know: a newer mirix-py upgraded it"):
            Mirix(settings=settings, embedder=None, lock=lock)
    assert current_revision(engine) == "0099_from_a_newer_version"
    engine.dispose()
