"""A real uvicorn server on loopback over a real engine, with keys for two tenants and an admin."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field

import httpx
import pytest
from sqlalchemy import create_engine, text

from mirix_py.server.thread import ServerThread

PG_URL = os.environ.get("MIRIX_TEST_PG_URL")


class LiveServer(ServerThread):
    """The app under uvicorn in a thread, on 127.0.0.1 and a free port."""

    def __enter__(self) -> "LiveServer":
        super().__enter__()
        assert self.url.startswith("http://127.0.0.1:")
        return self


@dataclass
class Live:
    url: str
    mx: object
    keys: object
    alice: str          # key bound to alice
    bob: str            # key bound to bob and carol
    admin: str          # admin key for every user
    clients: list = field(default_factory=list)

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        c = httpx.Client(base_url=self.url, headers=headers, timeout=60)
        self.clients.append(c)
        return c


def _pg_schema():
    schema = "srv_" + uuid.uuid4().hex[:10]
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in PG_URL else "?"
    return admin, schema, f"{PG_URL}{sep}options=-csearch_path%3D{schema}"


def start_live(tmp_path, embedder, database_url=None, settings=None, **app_kwargs):
    """`settings`: the engine's whole settings instead of a data dir under `tmp_path` and `database_url`."""
    from mirix_py.engine import Mirix
    from mirix_py.server import KeyStore, create_app

    mx = Mirix(tmp_path / "data", embedder=embedder, database_url=database_url, settings=settings)
    keys = KeyStore(mx.engine)
    app = create_app(mx, keys=keys, **app_kwargs)
    server = LiveServer(app).__enter__()
    live = Live(url=server.url, mx=mx, keys=keys,
                alice=keys.create(["alice"], name="alice").key,
                bob=keys.create(["bob", "carol"], name="bob+carol").key,
                admin=keys.create(["*"], name="ops", admin=True).key)
    return server, live


@pytest.fixture
def live_server_factory():
    """`start_live` itself, for a test that needs a server with options of its own (a test module
    cannot import it: another folder's `conftest` may hold that module name)."""
    return start_live


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def live(request, tmp_path_factory, embedder):
    """A live server per backend; the PostgreSQL one needs MIRIX_TEST_PG_URL (scripts/test.sh)."""
    admin = schema = None
    url = None
    if request.param == "postgres":
        if not PG_URL:
            if os.environ.get("CI") == "true":
                pytest.fail("MIRIX_TEST_PG_URL is not set in CI")
            pytest.skip("MIRIX_TEST_PG_URL not set (run through scripts/test.sh)")
        admin, schema, url = _pg_schema()
    server, live = start_live(tmp_path_factory.mktemp(f"live-{request.param}"), embedder, url)
    yield live
    for c in live.clients:
        c.close()
    server.__exit__()
    live.mx.close()
    if admin is not None:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(scope="module")
def live_sqlite(tmp_path_factory, embedder):
    server, live = start_live(tmp_path_factory.mktemp("live-sqlite"), embedder)
    yield live
    for c in live.clients:
        c.close()
    server.__exit__()
    live.mx.close()


@pytest.fixture
def live_without_tesseract(tmp_path, embedder, monkeypatch):
    """A server on a machine where the tesseract program is missing."""
    monkeypatch.setenv("MIRIX_TESSERACT_CMD", str(tmp_path / "nowhere" / "tesseract"))
    server, live = start_live(tmp_path, embedder)
    yield live
    for c in live.clients:
        c.close()
    server.__exit__()
    live.mx.close()
