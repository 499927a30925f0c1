"""The REST API: FastAPI over one `Mirix` engine, with API keys bound to users.

    from mirix_py.server import create_app
    app = create_app(data_dir="./memory")          # uvicorn mirix_py.server.app:app, or `mirix serve`

Every route under `/v1/users/{user_id}/...` checks that the caller's key may act for `user_id`
(403 otherwise; 401 for a missing, unknown or revoked key). Engine methods are synchronous and
thread-safe, so endpoints are plain `def` functions that FastAPI runs in its thread pool.
Bad input is a 4xx with a message (`{"error", "message", "detail"}`), never a 5xx.
"""

# no `from __future__ import annotations`: FastAPI must see the local Annotated aliases as objects

import io
import json
import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import quote
from typing import Any, Annotated

from fastapi import Depends, FastAPI, File, Form, Path as PathParam, Query, Request, Response, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from pydantic import ValidationError
from sqlalchemy import select, text, union
from sqlalchemy.exc import StatementError
from starlette.exceptions import HTTPException as StarletteHTTPException

from mirix_py.errors import CoreMemoryFull, DependencyMissing, InvalidInput, MemoryNotFound
from mirix_py.integrations.context import MemoryContext, retrieve_context
from mirix_py.records import (
    AddResult, ChatResponse, CoreMemory, HistoryEvent, Memory, MemoryType, SearchHit, utcnow,
)
from mirix_py.redaction import scrub, scrub_data
from mirix_py.server.keys import ApiKeyInfo, CreatedKey, KeyStore, Principal, check_user_id
from mirix_py.server.models import (
    AddRequest, ChatRequest, ContextRequest, CoreAppendRequest, CoreRewriteRequest, CreateKeyRequest, DeletedUser,
    ErrorOut, Health, InputStatusOut, Me, SearchRequest, UpdateRequest, UsersOut, When,
)

try:  # the engine's screenshot result (an AddResult plus what happened to the frame)
    from mirix_py.ingest.screenshots import ScreenshotResult as ScreenshotOut
except ImportError:  # pragma: no cover - Pillow missing: the endpoint still answers with an AddResult
    ScreenshotOut = AddResult  # type: ignore[misc, assignment]

log = logging.getLogger("mirix_py.server")
STATIC = Path(__file__).parent / "static"
API_PREFIX = "/v1"


def _version() -> str:
    try:
        return version("mirix-py")
    except PackageNotFoundError:  # pragma: no cover
        return "0+unknown"


@dataclass
class Limits:
    """Request size limits (bytes). Larger bodies get 413 before anything is parsed."""

    max_body: int = 1 << 20            # JSON bodies: 1 MiB
    max_upload: int = 20 << 20         # screenshot uploads: 20 MiB
    max_image_pixels: int = 50_000_000  # 50 MP; decompression bombs are refused


class ApiError(Exception):
    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.error, self.message, self.headers = status, error, message, headers


def _error(status: int, error: str, message: str, detail: Any = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    """Every error body; a message or detail that quotes the request holds placeholders, not secrets."""
    message, detail = scrub(message), scrub_data(detail)
    return JSONResponse(ErrorOut(error=error, message=message, detail=detail).model_dump(mode="json"),
                        status_code=status, headers=headers)


class BodyLimitMiddleware:
    """Pure ASGI: reads a request body up to its limit and answers 413 past it; replays it otherwise."""

    def __init__(self, app: Any, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            return await self.app(scope, receive, send)
        if not scope["path"].startswith(API_PREFIX):  # the MCP app and others bring their own limits
            return await self.app(scope, receive, send)
        limit = self.limits.max_upload if scope["path"].endswith("/screenshots") else self.limits.max_body
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > limit
            except ValueError:
                return await _error(400, "bad_request", "Content-Length is not a number")(scope, receive, send)
            if too_big:
                return await _too_large(limit)(scope, receive, send)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return await _too_large(limit)(scope, receive, send)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _too_large(limit: int) -> JSONResponse:
    return _error(413, "too_large", f"request body is over the limit of {limit} bytes")


def create_app(mx: Any = None, *, data_dir: str | Path | None = None, keys: KeyStore | None = None,
               auth: bool = True, limits: Limits | None = None, mcp: bool = False, threads: int | None = None,
               mcp_host: str = "127.0.0.1", mcp_port: int = 8000) -> FastAPI:
    """Build the app over `mx` (a `Mirix`), or over a new engine for `data_dir` (closed on shutdown).

    `auth=False` serves without keys (every caller may act for every user): for a single-user
    machine on loopback only; `mirix serve` refuses it on other addresses. `mcp=True` mounts the MCP
    server (streamable HTTP, same keys) at `/mcp`. `threads` sizes the thread pool engine calls run in.
    """
    from mirix_py.engine import Mirix

    owned = mx is None
    if mx is None:
        mx = Mirix(data_dir)
    keys = keys or KeyStore(mx.engine)
    limits = limits or Limits()
    mcp_server = None
    if mcp:
        from mirix_py.integrations.mcp_server import build_mcp_server

        mcp_server = build_mcp_server(mx, keys=keys if auth else None, users=None if auth else ["*"],
                                      http=True, host=mcp_host, port=mcp_port)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if threads:  # engine calls run in the thread pool: size it for the expected concurrency
            import anyio.to_thread

            anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        if mcp_server is not None:
            async with mcp_server.session_manager.run():
                yield
        else:
            yield
        if owned:
            mx.close()

    app = FastAPI(
        title="mirix-py", version=_version(), lifespan=lifespan,
        description="Memory engine for LLM agents (MIRIX-style): six memory types, hybrid search, history. "
                    "Authenticate with `Authorization: Bearer <key>` (or `X-API-Key`); a key acts only for "
                    "the users it is bound to.",
        responses={401: {"model": ErrorOut}, 403: {"model": ErrorOut}, 413: {"model": ErrorOut},
                   422: {"model": ErrorOut}},
    )
    app.state.mx = mx
    app.state.keys = keys
    app.state.limits = limits
    app.add_middleware(BodyLimitMiddleware, limits=limits)
    _install_error_handlers(app)

    # ------------------------------------------------------------ auth

    def principal(request: Request) -> Principal:
        if not auth:
            return Principal(key_id="local", users=frozenset({"*"}), admin=True)
        header = request.headers.get("authorization", "")
        key = header[7:].strip() if header[:7].lower() == "bearer " else request.headers.get("x-api-key")
        if not key:
            raise ApiError(401, "unauthorized", "an API key is required (Authorization: Bearer <key>)",
                           {"WWW-Authenticate": "Bearer"})
        found = keys.verify(key)
        if found is None:
            raise ApiError(401, "unauthorized", "the API key is not valid or was revoked",
                           {"WWW-Authenticate": "Bearer"})
        return found

    Caller = Annotated[Principal, Depends(principal)]
    UserPath = Annotated[str, PathParam(min_length=1, max_length=256, description="The user whose memories these are.")]
    MemoryId = Annotated[str, PathParam(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]

    def user_scope(user_id: UserPath, caller: Caller) -> str:
        try:
            check_user_id(user_id)
        except InvalidInput as exc:
            raise ApiError(422, "invalid_input", str(exc)) from exc
        if user_id == "*":
            raise ApiError(422, "invalid_input", "'*' is not a user id")
        if not caller.may_act_for(user_id):
            raise ApiError(403, "forbidden", f"this key may not act for user {user_id!r}")
        return user_id

    User = Annotated[str, Depends(user_scope)]

    def admin_only(caller: Caller) -> Principal:
        if not caller.admin:
            raise ApiError(403, "forbidden", "this needs an admin key")
        return caller

    Admin = Annotated[Principal, Depends(admin_only)]

    # ------------------------------------------------------------ service

    @app.get("/health", response_model=Health, tags=["service"])
    def health() -> Health:
        """Liveness and readiness: the database answers. No key needed."""
        try:
            with mx.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except Exception as exc:  # the database is down: say so with 503
            raise ApiError(503, "unavailable", f"database unavailable: {type(exc).__name__}") from exc
        return Health(version=_version(), mode=mx.mode, database=mx.engine.dialect.name)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/viewer")

    @app.get("/viewer", include_in_schema=False)
    def viewer() -> FileResponse:
        return _static("viewer.html")

    @app.get("/viewer/{name}", include_in_schema=False)
    def viewer_asset(name: str) -> FileResponse:
        if name not in ("viewer.js", "viewer.css"):
            raise ApiError(404, "not_found", "no such file")
        return _static(name)

    @app.get(f"{API_PREFIX}/me", response_model=Me, tags=["service"])
    def me(caller: Caller) -> Me:
        """The calling key: its id, the users it may act for, whether it is an admin key."""
        return Me(key_id=caller.key_id, users=sorted(caller.users), admin=caller.admin)

    @app.get(f"{API_PREFIX}/users", response_model=UsersOut, tags=["service"])
    def users(caller: Caller) -> UsersOut:
        """Users this key may act for; for an all-users key, every user that has data."""
        if not caller.all_users:
            return UsersOut(users=sorted(caller.users), all_users=False)
        from mirix_py.store.tables import InputRow, MemoryRow

        query = union(select(MemoryRow.user_id).distinct(), select(InputRow.user_id).distinct())
        with mx.engine.connect() as conn:
            found = sorted({row[0] for row in conn.execute(query)})
        return UsersOut(users=found, all_users=True)

    @app.get(f"{API_PREFIX}/stats", tags=["service"])
    def stats_all(caller: Caller) -> dict[str, Any]:
        """Mode, backends and memory counts over all users (all-users keys only)."""
        if not caller.all_users:
            raise ApiError(403, "forbidden", "stats over all users need an all-users key; "
                                             "use /v1/users/{user_id}/stats")
        return _public_stats(mx.stats())

    # ------------------------------------------------------------ memories

    @app.post(f"{API_PREFIX}/users/{{user_id}}/memories", response_model=AddResult, status_code=202,
              tags=["memories"], responses={200: {"model": AddResult, "description": "Processed (wait=true)."},
                                            202: {"description": "Accepted: logged, processed in the background."}})
    def add(user_id: User, body: AddRequest, response: Response) -> AddResult:
        """Remember text or chat messages. Accepted at once (202, poll the input's status) unless `wait`."""
        content = body.content if isinstance(body.content, str) else [m.model_dump() for m in body.content]
        result = mx.add(content, user_id=user_id, occurred_at=body.occurred_at, source_id=body.source_id,
                        kind=body.kind, wait=body.wait)
        response.status_code = 200 if body.wait else 202
        if result.input_ids:
            response.headers["Location"] = f"{API_PREFIX}/users/{quote(user_id, safe='')}/inputs/{result.input_ids[0]}"
        return result

    @app.post(f"{API_PREFIX}/users/{{user_id}}/screenshots", response_model=ScreenshotOut, status_code=202,
              tags=["memories"], responses={200: {"model": ScreenshotOut, "description": "Processed (wait=true)."},
                                            202: {"description": "Accepted: OCR and memories in the background."},
                                            501: {"model": ErrorOut}, 503: {"model": ErrorOut}})
    def add_screenshot(user_id: User, response: Response,
                       image: UploadFile = File(description="PNG, JPEG or WebP screenshot."),
                       captured_at: When | None = Form(None, description="When it was taken; now if unset."),
                       app_name: str | None = Form(None, alias="app", max_length=200),
                       window_title: str | None = Form(None, max_length=1000),
                       wait: bool = Form(False)) -> AddResult:
        """Upload a screenshot (multipart): OCR, then memories, as with text. A frame that nearly repeats the
        last one of its window, or holds no text, is `processed` with no input (`frame.outcome` says which).
        The image itself is never stored."""
        ingest = getattr(mx, "add_screenshot", None)
        if ingest is None:
            raise ApiError(501, "not_implemented", "screenshot ingestion is not available in this build "
                                                   "(Mirix.add_screenshot is missing)")
        from PIL import Image, UnidentifiedImageError

        from mirix_py.server.models import clean_text

        try:
            for value in (app_name, window_title):
                if value is not None:
                    clean_text(value)
        except ValueError as exc:
            raise ApiError(422, "invalid_input", str(exc)) from exc
        data = image.file.read()
        if not data:
            raise ApiError(422, "invalid_input", "the image is empty")
        try:
            with Image.open(io.BytesIO(data)) as probe:
                width, height = probe.size
                probe.verify()
            if width * height > limits.max_image_pixels:
                raise ApiError(413, "too_large", f"image is {width}x{height}, over {limits.max_image_pixels} pixels")
            picture = Image.open(io.BytesIO(data))
            picture.load()
        except ApiError:
            raise
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            raise ApiError(422, "invalid_input", f"not a readable image: {exc}") from exc
        result = ingest(picture, user_id=user_id, captured_at=captured_at or utcnow(), app=app_name,
                        window_title=window_title, wait=wait)
        response.status_code = 200 if wait else 202
        if result.input_ids:
            response.headers["Location"] = f"{API_PREFIX}/users/{quote(user_id, safe='')}/inputs/{result.input_ids[0]}"
        return result

    @app.get(f"{API_PREFIX}/users/{{user_id}}/inputs/{{input_id}}", response_model=InputStatusOut, tags=["memories"])
    def input_status(user_id: User, input_id: Annotated[str, PathParam(max_length=64)]) -> InputStatusOut:
        """Where an accepted input stands: pending, processing, processed or failed (with the reason)."""
        try:
            record = mx.input_status(input_id)
        except InvalidInput:
            record = None
        if record is None or record.user_id != user_id:
            raise ApiError(404, "not_found", f"no input {input_id!r} for this user")
        return InputStatusOut.model_validate(record.model_dump(exclude={"messages"}))

    @app.post(f"{API_PREFIX}/users/{{user_id}}/search", response_model=list[SearchHit], tags=["memories"])
    def search(user_id: User, body: SearchRequest) -> list[SearchHit]:
        """Hybrid (BM25 + vectors, fused), `bm25`, `embedding` or `string` search, with type and time filters."""
        return mx.search(body.query, user_id=user_id, limit=body.limit, memory_types=body.memory_types,
                         start=body.start, end=body.end, method=body.method)

    @app.post(f"{API_PREFIX}/users/{{user_id}}/chat", response_model=ChatResponse, tags=["memories"])
    def chat(user_id: User, body: ChatRequest) -> ChatResponse:
        """Answer from memory (offline: the best memories, cited)."""
        return mx.chat(body.message, user_id=user_id, history=[t.model_dump() for t in body.history],
                       remember=body.remember)

    @app.post(f"{API_PREFIX}/users/{{user_id}}/context", response_model=MemoryContext, tags=["memories"])
    def context(user_id: User, body: ContextRequest) -> MemoryContext:
        """Topics, core memory and the best items of every type for a message: what an agent puts in its prompt."""
        return retrieve_context(mx, user_id, body.message, max_items=body.max_items)

    @app.get(f"{API_PREFIX}/users/{{user_id}}/memories", response_model=list[Memory], tags=["memories"])
    def list_memories(user_id: User,
                      memory_type: Annotated[list[MemoryType] | None, Query(max_length=6)] = None,
                      limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                      offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
                      start: When | None = None, end: When | None = None) -> list[Any]:
        """A user's memories, newest first; `memory_type` may repeat."""
        return mx.list(user_id=user_id, memory_types=memory_type or None, limit=limit, offset=offset,
                       start=start, end=end)

    @app.get(f"{API_PREFIX}/users/{{user_id}}/memories/{{memory_id}}", response_model=Memory, tags=["memories"],
             responses={404: {"model": ErrorOut}})
    def get_memory(user_id: User, memory_id: MemoryId, reveal: bool = False) -> Any:
        """One memory. Vault secrets are masked unless `reveal=true`."""
        return mx.get(memory_id, user_id=user_id, reveal=reveal)

    @app.patch(f"{API_PREFIX}/users/{{user_id}}/memories/{{memory_id}}", response_model=Memory, tags=["memories"],
               responses={404: {"model": ErrorOut}})
    def update_memory(user_id: User, memory_id: MemoryId, body: UpdateRequest) -> Any:
        """Change fields in place (the id stays); the change is a history event."""
        return mx.update(memory_id, body.fields, user_id=user_id, actor="rest")

    @app.delete(f"{API_PREFIX}/users/{{user_id}}/memories/{{memory_id}}", status_code=204, tags=["memories"],
                responses={404: {"model": ErrorOut}})
    def delete_memory(user_id: User, memory_id: MemoryId) -> Response:
        mx.delete(memory_id, user_id=user_id, actor="rest")
        return Response(status_code=204)

    @app.get(f"{API_PREFIX}/users/{{user_id}}/memories/{{memory_id}}/history", response_model=list[HistoryEvent],
             tags=["memories"], responses={404: {"model": ErrorOut}})
    def history(user_id: User, memory_id: MemoryId) -> list[HistoryEvent]:
        """Every change to a memory (before, after, operation, actor, input), oldest first."""
        return mx.history(memory_id, user_id=user_id)

    # ------------------------------------------------------------ core memory and users

    @app.get(f"{API_PREFIX}/users/{{user_id}}/core", response_model=dict[str, CoreMemory], tags=["core memory"])
    def core(user_id: User) -> dict[str, CoreMemory]:
        """The `persona` and `human` blocks (a block never written comes back empty)."""
        return mx.core_memory(user_id=user_id)

    CoreLabel = Annotated[str, PathParam(pattern="^(persona|human)$")]

    @app.put(f"{API_PREFIX}/users/{{user_id}}/core/{{label}}", response_model=CoreMemory, tags=["core memory"],
             responses={409: {"model": ErrorOut}})
    def core_rewrite(user_id: User, label: CoreLabel, body: CoreRewriteRequest) -> CoreMemory:
        return mx.core_rewrite(label, body.value, user_id=user_id, actor="rest")

    @app.post(f"{API_PREFIX}/users/{{user_id}}/core/{{label}}/append", response_model=CoreMemory,
              tags=["core memory"], responses={409: {"model": ErrorOut, "description": "The block would be over its limit."}})
    def core_append(user_id: User, label: CoreLabel, body: CoreAppendRequest) -> CoreMemory:
        return mx.core_append(label, body.text, user_id=user_id, actor="rest")

    @app.get(f"{API_PREFIX}/users/{{user_id}}/stats", tags=["service"])
    def stats_user(user_id: User) -> dict[str, Any]:
        """Memory counts and LLM usage of one user."""
        return _public_stats(mx.stats(user_id=user_id))

    @app.delete(f"{API_PREFIX}/users/{{user_id}}", response_model=DeletedUser, tags=["users"])
    def delete_user(user_id: User) -> DeletedUser:
        """Remove every memory, vector, history event and input of the user."""
        return DeletedUser(user_id=user_id, deleted=mx.delete_user(user_id))

    # ------------------------------------------------------------ keys (admin)

    @app.post(f"{API_PREFIX}/keys", response_model=CreatedKey, status_code=201, tags=["keys"])
    def create_key(_: Admin, body: CreateKeyRequest) -> CreatedKey:
        """Create a key bound to `users` ('*' for every user). The key is in this answer only."""
        return keys.create(body.users, name=body.name, admin=body.admin)

    @app.get(f"{API_PREFIX}/keys", response_model=list[ApiKeyInfo], tags=["keys"])
    def list_keys(_: Admin, include_revoked: bool = False) -> list[ApiKeyInfo]:
        return keys.list(include_revoked=include_revoked)

    @app.delete(f"{API_PREFIX}/keys/{{key_id}}", status_code=204, tags=["keys"], responses={404: {"model": ErrorOut}})
    def revoke_key(_: Admin, key_id: Annotated[str, PathParam(max_length=40)]) -> Response:
        if not keys.revoke(key_id):
            raise ApiError(404, "not_found", f"no active key {key_id!r}")
        return Response(status_code=204)

    if mcp_server is not None:
        app.mount("/mcp", mcp_server.streamable_http_app(streamable_http_path="/"))

    return app


def _static(name: str) -> FileResponse:
    headers = {
        "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                                   "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    return FileResponse(STATIC / name, headers=headers)


def _public_stats(stats: dict[str, Any]) -> dict[str, Any]:
    """Stats without the server's file paths."""
    return {k: v for k, v in stats.items() if k != "data_dir"}


def _validation_message(errors: list[dict[str, Any]]) -> str:
    parts = []
    for err in errors[:3]:
        loc = [str(p) for p in err.get("loc", ()) if p != "body" and "[" not in str(p)]
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        part = f"{'.'.join(loc) or 'request'}: {message}"
        if part not in parts:
            parts.append(part)
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(parts) + more


def _jsonable_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for err in errors[:20]:
        item = {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", "")), "type": err.get("type")}
        out.append(item)
    return json.loads(json.dumps(out, default=str))


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.error, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        return _error(422, "invalid_input", _validation_message(errors), _jsonable_errors(errors))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 413: "too_large"}
        return _error(exc.status_code, codes.get(exc.status_code, "error"), str(exc.detail),
                      headers=getattr(exc, "headers", None))

    @app.exception_handler(MemoryNotFound)
    async def _not_found(_: Request, exc: MemoryNotFound) -> JSONResponse:
        return _error(404, "not_found", str(exc))

    @app.exception_handler(CoreMemoryFull)
    async def _core_full(_: Request, exc: CoreMemoryFull) -> JSONResponse:
        return _error(409, "core_memory_full", str(exc))

    @app.exception_handler(InvalidInput)
    async def _invalid(_: Request, exc: InvalidInput) -> JSONResponse:
        return _error(422, "invalid_input", str(exc))

    @app.exception_handler(DependencyMissing)  # e.g. no Tesseract on the server: not the caller's fault
    async def _unavailable(_: Request, exc: DependencyMissing) -> JSONResponse:
        return _error(503, "unavailable", str(exc))

    @app.exception_handler(ValidationError)
    async def _model_invalid(_: Request, exc: ValidationError) -> JSONResponse:
        errors = list(exc.errors())
        return _error(422, "invalid_input", _validation_message(errors), _jsonable_errors(errors))

    @app.exception_handler(StatementError)
    async def _statement(_: Request, exc: StatementError) -> JSONResponse:
        if isinstance(exc.orig, (OverflowError, UnicodeError)):  # a value the database cannot hold
            return _error(422, "invalid_input", f"value cannot be stored: {exc.orig}")
        log.error("database error: %s", exc)
        return _error(500, "internal", "database error")

    @app.exception_handler(OverflowError)
    async def _overflow(_: Request, exc: OverflowError) -> JSONResponse:  # e.g. a date at the edge of the calendar
        return _error(422, "invalid_input", f"value out of range: {exc}")


def app_from_env() -> FastAPI:
    """`uvicorn --factory mirix_py.server.app:app_from_env`: the engine from MIRIX_* variables."""
    return create_app(auth=True)
