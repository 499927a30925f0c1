"""`/health` with a read replica says how far behind the primary it is: bytes of log not yet replayed."""

from __future__ import annotations

from mirix_py.client import MirixClient
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


def test_a_write_position_from_another_process_is_read_over_rest(tmp_path, embedder, pgvector_replica,
                                                                 live_server_factory):
    """A write made through another process of the service: the server's search misses it on the paused
    replica, and finds it when the client passes the write's position (`X-Mirix-Read-After`)."""
    primary, replica = pgvector_replica
    settings = Settings(data_dir=tmp_path / "data", database_url=primary, database_read_url=replica,
                        vector_store="pgvector")
    server, live = live_server_factory(tmp_path, embedder, settings=settings)
    try:
        c = live.client(live.alice)
        wait_replayed(primary, replica)
        with replay_paused(replica), Mirix(settings=settings, embedder=embedder) as other:
            position = other.add("My sister Lena moved to Lisbon in May.", user_id="alice").write_position
            assert position is not None
            query = {"query": "Where did Lena move?"}
            assert not any("Lisbon" in h["text"] for h in c.post("/v1/users/alice/search", json=query).json())
            after = {"X-Mirix-Read-After": position}
            hits = c.post("/v1/users/alice/search", json=query, headers=after).json()
            assert any("Lisbon" in h["text"] for h in hits)
            context = c.post("/v1/users/alice/context", json={"message": "Where did Lena move?"}, headers=after)
            assert "Lisbon" in context.json()["prompt"]
            with MirixClient(live.url, api_key=live.alice) as client:  # the SDK's client sends the header
                assert any("Lisbon" in h.text for h in client.search("Where did Lena move?", user_id="alice",
                                                                     read_after=position))
                assert "Lisbon" in client.context("Where did Lena move?", user_id="alice", read_after=position).prompt
            bad = c.post("/v1/users/alice/search", json=query, headers={"X-Mirix-Read-After": "yesterday"})
            assert bad.status_code == 422
            # the server's own writes give their position back, in the body and in a header
            added = c.post("/v1/users/alice/memories", json={"content": "I play the cello.", "wait": True})
            assert added.json()["write_position"] and added.headers["X-Mirix-Write-Position"]
            cello = next(h["memory"]["id"] for h in c.post("/v1/users/alice/search", json={"query": "cello"}).json()
                         if h["memory"]["memory_type"] == "episodic")
            assert c.delete(f"/v1/users/alice/memories/{cello}").headers["X-Mirix-Write-Position"]
            # an add accepted with 202 writes later: its input's status gives the position once processed
            queued = c.post("/v1/users/alice/memories", json={"content": "My bike is a green Brompton."})
            assert queued.status_code == 202
            wait_for(lambda: c.get(queued.headers["Location"]).json()["status"] == "processed")
            status = c.get(queued.headers["Location"])
            after = {"X-Mirix-Read-After": status.headers["X-Mirix-Write-Position"]}
            hits = c.post("/v1/users/alice/search", json={"query": "What bike do I ride?"}, headers=after).json()
            assert any("Brompton" in h["text"] for h in hits)
    finally:
        for c in live.clients:
            c.close()
        server.__exit__()
        live.mx.close()
