"""PostgreSQL has no single writer: two workers writing the same secret for one user at once still
make one vault entry, because `MemoryStore.apply` takes a per-user advisory lock before the guard
looks at the vault (SQLite's BEGIN IMMEDIATE does it there). Against the real PostgreSQL server."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from sqlalchemy import text

from mirix_py.engine import Mirix
from mirix_py.tools.ops import InsertOp
from mirix_py.records import EpisodicMemory

WIFI = "CorrectHorse!42"
WAIT = 60  # seconds: a guard against a hang, never a measurement


@pytest.fixture
def pg(tmp_path, pg_schema_url):
    engine = Mirix(tmp_path / "data", embedder=None, database_url=pg_schema_url)
    yield engine
    engine.close()


def _write(mx: Mirix, user_id: str, summary: str, out: dict[str, Any], key: str) -> None:
    try:
        (change,) = [c for c in mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary=summary))],
                                               user_id=user_id, actor="episodic_memory_manager")
                     if c.memory_type.value == "episodic"]
        out[key] = change.memory_id
    except BaseException as exc:  # reported by the test thread
        out[key] = exc


def _vault(mx: Mirix, user_id: str) -> list[tuple[str, str]]:
    return [(v.id, mx.get(v.id, user_id=user_id, reveal=True).secret_value)
            for v in mx.list(user_id=user_id, memory_types=["knowledge_vault"], limit=100)]


def _blocked_by(mx: Mirix, pid: int) -> int:
    with mx.store.engine.connect() as conn:
        return int(conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"),
                                {"pid": pid}).scalar_one())


def _until(condition) -> None:
    """Poll `condition` until it holds (or WAIT seconds pass; the assertion after it then fails)."""
    stop = threading.Event()
    for _ in range(WAIT * 20):
        if condition():
            return
        stop.wait(0.05)


def _pause_first_writer(mx: Mirix, monkeypatch) -> tuple[threading.Event, threading.Event, dict[str, int]]:
    """The first transaction to write its rows stops there, inside its transaction, until released;
    `holder["pid"]` is its server process."""
    inside, release, holder = threading.Event(), threading.Event(), {}
    original = mx.store.fulltext.upsert

    def upsert(conn, rows):
        if not inside.is_set():
            holder["pid"] = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
            inside.set()
            assert release.wait(WAIT), "the paused writer was never released"
        return original(conn, rows)

    monkeypatch.setattr(mx.store.fulltext, "upsert", upsert)
    return inside, release, holder


def test_a_second_writer_of_the_same_user_waits_and_reuses_the_first_ones_vault_entry(pg, user_id, monkeypatch):
    inside, release, holder = _pause_first_writer(pg, monkeypatch)
    out: dict[str, Any] = {}
    first = threading.Thread(target=_write, args=(pg, user_id, f"the wifi password at home is {WIFI}", out, "a"))
    first.start()
    assert inside.wait(WAIT), out
    second = threading.Thread(target=_write, args=(pg, user_id, f"Bob asked: wifi password: {WIFI}", out, "b"))
    second.start()
    # the second writer is held by the first one's lock (the server's state, polled): it has not read the vault
    _until(lambda: _blocked_by(pg, holder["pid"]) > 0 or not second.is_alive())
    assert _blocked_by(pg, holder["pid"]) == 1 and second.is_alive()
    # another user's writer does not wait for this one
    other = "other-" + user_id
    done: dict[str, Any] = {}
    elsewhere = threading.Thread(target=_write, args=(pg, other, f"my wifi password is {WIFI}", done, "c"))
    elsewhere.start()
    elsewhere.join(WAIT)
    assert not elsewhere.is_alive() and isinstance(done["c"], str), done
    release.set()
    first.join(WAIT)
    second.join(WAIT)
    assert isinstance(out["a"], str) and isinstance(out["b"], str), out
    ((vault_id, value),) = _vault(pg, user_id)  # exactly one entry for the secret
    assert value == WIFI
    for memory_id in (out["a"], out["b"]):
        summary = pg.get(memory_id, user_id=user_id).summary
        assert f"[vault:{vault_id}]" in summary and WIFI not in summary
    assert [v for _, v in _vault(pg, other)] == [WIFI]


def test_writers_racing_after_their_drafts_make_one_entry_per_secret(pg, user_id, monkeypatch):
    """Both writers plan against the empty vault before either takes the lock (a barrier where the
    embedding runs, between the draft and the write); each secret still gets one entry."""
    barrier = threading.Barrier(2, timeout=WAIT)
    crossed = threading.local()
    original = pg.store._embed_texts

    def embed(texts):
        if not getattr(crossed, "done", False):
            crossed.done = True
            barrier.wait()
        return original(texts)

    monkeypatch.setattr(pg.store, "_embed_texts", embed)
    secrets = [f"Tr0ub4dor&{i}x" for i in range(4)]
    for secret in secrets:
        out: dict[str, Any] = {}
        threads = [threading.Thread(target=_write, args=(pg, user_id, f"{who}: the wifi password is {secret}", out, who))
                   for who in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert all(isinstance(out[k], str) for k in "ab"), out
        entries = [vid for vid, value in _vault(pg, user_id) if value == secret]
        assert len(entries) == 1, (secret, entries)
        for key in "ab":
            assert f"[vault:{entries[0]}]" in pg.get(out[key], user_id=user_id).summary
    assert sorted(v for _, v in _vault(pg, user_id)) == sorted(secrets)
