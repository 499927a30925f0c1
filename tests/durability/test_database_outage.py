"""A PostgreSQL server stopped and started again under a running engine: inputs it accepted with
`wait=False` are all processed once the server is back, without restarting the engine (the queue's
retries, then the idle worker's sweep). The server is a private one of this test: the suite's shared
servers keep running for the other tests."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from mirix_py.engine import Mirix
from mirix_py.records import InputStatus
from mirix_py.settings import Settings
from waiting import wait_for


def _bindir() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not found or not os.access(f"{found[-1]}/initdb", os.X_OK):
        pytest.skip("no PostgreSQL server binaries (scripts/setup.sh installs them)")
    return found[-1]


def _as_postgres(args: list[str]) -> subprocess.CompletedProcess:
    """Run a server command as the postgres OS user when we are root (the server refuses root)."""
    prefix = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
    return subprocess.run(prefix + args, cwd="/", stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120, check=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivatePostgres:
    def __init__(self) -> None:
        self.bindir = _bindir()
        self.root = Path(tempfile.mkdtemp(prefix="mirix-outage-pg-"))
        self.root.chmod(0o755)
        if os.getuid() == 0:
            shutil.chown(self.root, "postgres")
        self.data, self.port = self.root / "data", _free_port()
        _as_postgres([f"{self.bindir}/initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                      "--no-locale"])
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\nunix_socket_directories = '{self.root}'\n"
                       "fsync = off\nfull_page_writes = off\n")
        self.start()
        subprocess.run([f"{self.bindir}/psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                        "-d", "postgres", "-c", "CREATE DATABASE mirix"], check=True, capture_output=True, timeout=60)
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/mirix"

    def start(self) -> None:
        _as_postgres([f"{self.bindir}/pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "60",
                      "start"])

    def stop(self) -> None:
        _as_postgres([f"{self.bindir}/pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop"])

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def postgres():
    server = PrivatePostgres()
    try:
        yield server
    finally:
        server.remove()



def statuses(mx: Mirix, input_ids: list[str]) -> set[str]:
    return {mx.input_status(i).status.value for i in input_ids}


@pytest.mark.parametrize("path", ["retried", "swept"])
def test_inputs_queued_before_the_database_stopped_are_processed_once_it_is_back(tmp_path, embedder, postgres, path,
                                                                                 caplog):
    settings = Settings(data_dir=tmp_path / "data", database_url=postgres.url, vector_store="chroma",
                        batch_seconds=1.0)
    with Mirix(settings=settings, embedder=embedder) as mx:
        if path == "swept":  # no retries: the batch is given up at once and the sweep takes it up
            mx._queue.retries = 0
            mx._queue.sweep_every_s = 0.5
            mx.maintenance.left_after_s = 0.0
        else:
            mx._queue.retry_base_s = 0.5  # 0.5, 1, 2, 4, 8, 16 s
        before = mx.add("I adopted a cat named Miso last spring.", user_id="ada", wait=False)
        mx.flush(timeout=60)
        queued = [mx.add(text, user_id="ada", wait=False).input_ids[0]
                  for text in ("My sister Lena moved to Lisbon in May.", "I play the cello on Sundays.")]
        with caplog.at_level("WARNING", logger="mirix_py.facade.background"):
            postgres.stop()  # before their batch is due (batch_seconds)
            wait_for(lambda: "background batch of 2 input(s) failed" in caplog.text, 120.0)  # it ran while down
            postgres.start()
        wait_for(lambda: statuses(mx, queued) == {"processed"}, 120.0)
        assert statuses(mx, before.input_ids) == {"processed"}
        found = {w for q, w in (("Where did Lena move?", "Lisbon"), ("What do I play?", "cello"))
                 if any(w in h.text for h in mx.search(q, user_id="ada"))}
        assert found == {"Lisbon", "cello"}
        assert mx.doctor().clean


def test_a_screenshot_batch_run_while_the_database_is_down_is_processed_once_it_is_back(tmp_path, embedder, postgres,
                                                                                       caplog):
    """The frame's OCR text is logged; its batch runs while the server is stopped and raises; the engine's
    background worker makes its memories from the logged text once the server is back."""
    import shutil

    if shutil.which("tesseract") is None:
        pytest.skip("no tesseract (scripts/setup.sh installs tesseract-ocr)")
    from mirix_py.ingest.batching import BatchPolicy
    from mirix_synth.screens import ScreenSynth

    settings = Settings(data_dir=tmp_path / "data", database_url=postgres.url, vector_store="chroma")
    with Mirix(settings=settings, embedder=embedder) as mx:
        mx._queue.retry_base_s = 0.5  # 0.5, 1, 2, 4, 8, 16 s
        mx.configure_screenshots(workers=1, batch=BatchPolicy(max_frames=20, max_seconds=4.0))
        frame = ScreenSynth(seed=7).frame("chat")
        queued = mx.add_screenshot(frame, user_id="ada", captured_at=None, app="Slack", wait=False)
        (input_id,) = queued.input_ids
        wait_for(lambda: mx.inputs.get(input_id) is not None, 60.0)  # OCR done, text logged
        with caplog.at_level("WARNING"):
            postgres.stop()  # before its batch is due (max_seconds)
            wait_for(lambda: "screenshot batch of 1 frame(s) failed" in caplog.text, 120.0)
            postgres.start()
        wait_for(lambda: mx.input_status(input_id).status.value == "processed", 120.0)
        made = [m for m in mx.list(user_id="ada", memory_types=["episodic"]) if input_id in m.source_ids]
        assert made and mx.inputs.by_status(InputStatus.failed, user_id="ada") == []
        assert mx.doctor().clean
