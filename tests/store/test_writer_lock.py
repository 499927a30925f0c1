"""The data dir's writer lock: shared by the engines of one process, refused to another process
with who holds it, dropped by the OS when the holder is killed, skipped by readers."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.store import writer_lock
from mirix_py.store.writer_lock import StoreBusy, process_label

HOLD = ("import sys\nfrom pathlib import Path\nfrom mirix_py.store import writer_lock\n"
        "try:\n    writer_lock.acquire(Path(sys.argv[1]))\nexcept writer_lock.StoreBusy as exc:\n"
        "    print('busy', exc, flush=True)\n    sys.exit(3)\nprint('held', flush=True)\nsys.stdin.read()\n")


def _other_process(data: Path) -> subprocess.Popen:
    """A process that takes the lock and keeps it until its stdin closes (or it is killed)."""
    return subprocess.Popen([sys.executable, "-c", HOLD, str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


def _try_from_other_process(data: Path) -> str:
    proc = _other_process(data)
    line = proc.stdout.readline().strip()
    proc.stdin.close()
    proc.wait(timeout=60)
    return line


def test_process_label_names_the_command_never_its_arguments():
    assert process_label(["/usr/bin/mirix", "serve", "--port", "8000"]) == "mirix serve"
    assert process_label(["/repo/mirix_py/cli/__main__.py", "mcp", "--user", "ada"]) == "mirix mcp"
    assert process_label(["/usr/bin/mirix", "my password is hunter2"]) == "mirix"
    assert process_label(["notebook.py", "hunter2"]) == "notebook.py"
    assert process_label(["-c"]) == "python"


def test_engines_of_one_process_share_it_and_another_process_is_refused(tmp_path):
    data = tmp_path / "data"
    first = Mirix(data, embedder=None)
    second = Mirix(data, embedder=None)  # the same process: the same lock
    refused = _try_from_other_process(data)
    assert refused.startswith("busy") and f"pid {os.getpid()}" in refused
    first.close()
    assert _try_from_other_process(data).startswith("busy")  # `second` still writes
    second.close()
    assert _try_from_other_process(data) == "held"


def test_a_killed_holder_frees_it_and_readers_never_need_it(tmp_path):
    data = tmp_path / "data"
    Mirix(data, embedder=None).close()  # a store to read
    holder = _other_process(data)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(StoreBusy) as busy:
        Mirix(data, embedder=None)
    assert busy.value.holder["pid"] == holder.pid and "one writer process" in str(busy.value)
    with Mirix(data, embedder=None, lock=False) as reader:  # reading beside the writer
        assert reader.list(user_id="ada") == []
        assert not writer_lock.held_here(data)
        # its writes would miss the writer's vector index: refused, nothing logged
        for write in (lambda: reader.add("Ada rows on Sundays.", user_id="ada"),
                      lambda: reader.core_append("human", "Rows on Sundays.", user_id="ada")):
            with pytest.raises(InvalidInput, match="opened for reading"):
                write()
        assert reader.store.count() == {} and reader.user_ids() == []
    holder.kill()
    holder.wait(timeout=60)
    with Mirix(data, embedder=None):  # SIGKILL dropped it: nothing stale
        assert writer_lock.held_here(data)
    assert not writer_lock.held_here(data)


def test_an_engine_that_fails_to_open_lets_go(tmp_path):
    data = tmp_path / "data"
    with pytest.raises(InvalidInput, match="agents folder"):
        Mirix(data, embedder=None, agents_dir=tmp_path / "missing")
    gc.collect()
    assert not writer_lock.held_here(data)
    assert _try_from_other_process(data) == "held"
