"""A real hot standby in tests: wait until it has replayed the primary, or pause its replay so that
what the primary writes meanwhile is missing there."""

from __future__ import annotations

import time
from contextlib import contextmanager

from sqlalchemy import create_engine, text


def server_of(url: str) -> str:
    return url.split("?", 1)[0]


def wait_replayed(primary_url: str, replica_url: str, timeout_s: float = 60.0) -> None:
    """Wait until the replica has replayed everything the primary has written so far."""
    primary, replica = create_engine(server_of(primary_url)), create_engine(server_of(replica_url))
    try:
        with primary.connect() as conn:
            # the insert position: the test server commits asynchronously, so the write position may
            # still be short of the last commit's record
            written = conn.execute(text("SELECT CAST(pg_current_wal_insert_lsn() AS text)")).scalar_one()
        deadline = time.monotonic() + timeout_s
        while True:
            with replica.connect() as conn:
                if conn.execute(text("SELECT pg_last_wal_replay_lsn() >= CAST(:w AS pg_lsn)"), {"w": written}).scalar():
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"the replica did not replay {written} within {timeout_s} s")
            time.sleep(0.05)
    finally:
        primary.dispose()
        replica.dispose()


@contextmanager
def replay_paused(replica_url: str):
    """The replica's replay paused: what the primary writes meanwhile is not on the replica."""
    replica = create_engine(server_of(replica_url), isolation_level="AUTOCOMMIT")
    try:
        with replica.connect() as conn:
            conn.execute(text("SELECT pg_wal_replay_pause()"))
        yield
    finally:
        with replica.connect() as conn:
            conn.execute(text("SELECT pg_wal_replay_resume()"))
        replica.dispose()
