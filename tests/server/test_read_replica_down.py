"""A read replica that does not answer (`Settings.database_read_url`): searches answer 503 and say
so, the health check too, while adds, reads by id and listings, which go to the primary, still work."""

from __future__ import annotations

import socket

import pytest

from mirix_py.settings import Settings


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_with_replica_down(tmp_path, embedder, pgvector_schema_url, live_server_factory):
    down = f"postgresql+psycopg://postgres@127.0.0.1:{closed_port()}/mirix_test"
    settings = Settings(data_dir=tmp_path / "data", database_url=pgvector_schema_url, database_read_url=down,
                        vector_store="pgvector")
    server, live = live_server_factory(tmp_path, embedder, settings=settings)
    yield live
    for c in live.clients:
        c.close()
    server.__exit__()
    live.mx.close()


def test_searches_answer_503_when_the_replica_is_down_and_writes_still_land(live_with_replica_down):
    live = live_with_replica_down
    c = live.client(live.alice)
    added = c.post("/v1/users/alice/memories", json={"content": "My locker code is on the blue card.", "wait": True})
    assert added.status_code in (200, 201), added.text
    listed = c.get("/v1/users/alice/memories").json()
    assert any("locker" in str(m) for m in listed)
    for path, body in (("/v1/users/alice/search", {"query": "locker"}),
                       ("/v1/users/alice/context", {"message": "Where is my locker code?"})):
        r = c.post(path, json=body)
        assert r.status_code == 503, r.text
        assert r.json()["error"] == "unavailable" and "database unavailable" in r.json()["message"]
        assert "127.0.0.1" not in r.text  # the URL stays out of the answer
    health = live.client(None).get("/health")
    assert health.status_code == 503 and "database unavailable" in health.text
    assert [m["id"] for m in c.get("/v1/users/alice/memories").json()] == [m["id"] for m in listed]
