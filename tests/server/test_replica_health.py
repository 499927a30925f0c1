"""`/health` with a read replica says how far behind the primary it is: bytes of log not yet replayed."""

from __future__ import annotations

from mirix_py.engine import Mirix
from mirix_py.settings import Settings
from standby import replay_paused, wait_replayed
from waiting import wait_for



def test_health_says_how_far_behind_the_replica_is(tmp_path, embedder, pgvector_replica, live_server_factory):
    primary, replica = pgvector_replica
    settings = Settings(data_dir=tmp_path / "data", database_url=primary, database_read_url=replica,
                        vector_store="pgvector")
    server, live = live_server_factory(tmp_path, embedder, settings=settings)
    try:
        health = live.client(None)
        wait_replayed(primary, replica)
        wait_for(lambda: health.get("/health").json()["replica_behind_bytes"] == 0)
        with replay_paused(replica), \
                Mirix(settings=Settings(data_dir=tmp_path / "data", database_url=primary, vector_store="pgvector"),
                      embedder=embedder) as writer:
            writer.add("My sister Lena moved to Lisbon in May.", user_id="alice")
            # the write reaches the primary's written log within its writer's delay (asynchronous commits here)
            wait_for(lambda: health.get("/health").json()["replica_behind_bytes"] > 0)
            assert health.get("/health").json()["status"] == "ok" and live.mx.stats()["replica_behind_bytes"] > 0
        wait_for(lambda: health.get("/health").json()["replica_behind_bytes"] == 0)
    finally:
        for c in live.clients:
            c.close()
        server.__exit__()
        live.mx.close()


def test_health_without_a_replica_says_nothing_of_one(mx_sqlite):
    assert mx_sqlite.replica_behind() is None and "replica_behind_bytes" not in mx_sqlite.stats()
