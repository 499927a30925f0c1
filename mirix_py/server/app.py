"""The REST API: FastAPI over one `Mirix` engine, with API keys bound to users.

    from mirix_py.server import create_app
    app = create_app(data_dir="./memory")          # uvicorn mirix_py.server.app:app, or `mirix serve`

`create_app` only assembles: the engine, key store and limits go on `app.state` (routes get them
as dependencies, `server/deps.py`), one router per resource (`server/routes/`), the body-size
middleware (`server/limits.py`), the error mapping (`server/errors.py`) and, with `mcp=True`,
the MCP server at `/mcp` (and `/mcp/`).

Every route under `/v1/users/{user_id}/...` checks that the caller's key may act for `user_id`
(403 otherwise; 401 for a missing, unknown or revoked key). Engine methods are synchronous and
thread-safe, so endpoints are plain `def` functions that FastAPI runs in its thread pool.
Bad input is a 4xx with a message (`{"error", "message", "detail"}`), never a 5xx.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator

from fastapi import FastAPI
from starlette.routing import Route

from mirix_py.server.errors import ApiError, install_error_handlers
from mirix_py.server.keys import KeyStore
from mirix_py.server.limits import API_PREFIX, BodyLimitMiddleware, Limits
from mirix_py.server.models import ErrorOut
from mirix_py.server.routes import ROUTERS
from mirix_py.server.routes.service import package_version

if TYPE_CHECKING:
    from mirix_py.engine import Mirix

__all__ = ["API_PREFIX", "ApiError", "Limits", "app_from_env", "create_app"]


def create_app(mx: Mirix | None = None, *, data_dir: str | Path | None = None, keys: KeyStore | None = None,
               auth: bool = True, limits: Limits | None = None, mcp: bool = False, threads: int | None = None,
               mcp_host: str = "127.0.0.1", mcp_port: int = 8000) -> FastAPI:
    """Build the app over `mx` (a `Mirix`), or over a new engine for `data_dir` (closed on shutdown).

    `auth=False` serves without keys (every caller may act for every user): for a single-user
    machine on loopback only; `mirix serve` refuses it on other addresses. `mcp=True` mounts the MCP
    server (streamable HTTP, same keys) at `/mcp`. `threads` sizes the thread pool engine calls run in.
    """
    from mirix_py.engine import Mirix

    owned = mx is None
    engine = Mirix(data_dir) if mx is None else mx
    keys = keys or KeyStore(engine.engine)
    mcp_server = None
    if mcp:
        from mirix_py.integrations.mcp_server import build_mcp_server

        mcp_server = build_mcp_server(engine, keys=keys if auth else None, users=None if auth else ["*"],
                                      http=True, host=mcp_host, port=mcp_port)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if threads:  # engine calls run in the thread pool: size it for the expected concurrency
            import anyio.to_thread

            anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        if mcp_server is not None:
            async with mcp_server.session_manager.run():
                yield
        else:
            yield
        if owned:
            engine.close()

    app = FastAPI(
        title="mirix-py", version=package_version(), lifespan=lifespan,
        docs_url=None, redoc_url=None,  # served from local assets by routes/docs.py (no CDN)
        description="Memory engine for LLM agents (MIRIX-style): six memory types, hybrid search, history. "
                    "Authenticate with `Authorization: Bearer <key>` (or `X-API-Key`); a key acts only for "
                    "the users it is bound to.",
        responses={401: {"model": ErrorOut}, 403: {"model": ErrorOut}, 413: {"model": ErrorOut},
                   422: {"model": ErrorOut}},
    )
    app.state.mx = engine
    app.state.keys = keys
    app.state.limits = limits or Limits()
    app.state.auth = auth
    app.add_middleware(BodyLimitMiddleware, limits=app.state.limits,
                       routes=[route for router in ROUTERS for route in router.routes])  # the limit is the route's
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    if mcp_server is not None:
        _mount_mcp(app, mcp_server.streamable_http_app(streamable_http_path="/"))
    return app


def _mount_mcp(app: FastAPI, mcp_app: Any) -> None:
    """Serve the MCP app at `/mcp` and `/mcp/` alike. A mount alone answers `/mcp` with a 307 to
    `/mcp/`, so a client without a key would get a redirect instead of the Bearer challenge."""
    app.mount("/mcp", mcp_app)
    app.router.routes.append(Route("/mcp", endpoint=_AsMountRoot(mcp_app), include_in_schema=False))


class _AsMountRoot:
    """ASGI: a mounted app answering its mount path itself (`/mcp` as `/mcp/`, same root path a
    mount would give it)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"]
        raw_path = scope.get("raw_path") or path.encode()
        await self.app({**scope, "path": path + "/", "raw_path": raw_path + b"/", "root_path": path}, receive, send)


def app_from_env() -> FastAPI:
    """`uvicorn --factory mirix_py.server.app:app_from_env`: the engine from MIRIX_* variables."""
    return create_app(auth=True)

