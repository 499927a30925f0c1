"""Request size limits: bodies over their limit get 413 before anything is parsed.

The limit is the route's: the request is matched against the API's routes first (in order, the
first full match, as the router does), and only an endpoint marked `@upload` (screenshot upload)
gets `max_upload`; every other body, whatever its path ends with (a memory may have the id
"screenshots") and whatever app serves it (the mem0-style routes, the MCP app at /mcp), gets
`max_body`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

from starlette.routing import Match

from mirix_py.server.errors import error_response

__all__ = ["API_PREFIX", "BodyLimitMiddleware", "Limits", "upload"]

F = TypeVar("F", bound=Callable[..., Any])
_UPLOAD = "__mirix_upload__"


def upload(endpoint: F) -> F:
    """Mark an endpoint as an upload: its bodies may reach `Limits.max_upload` (apply below the route)."""
    setattr(endpoint, _UPLOAD, True)
    return endpoint


def route_limit(scope: dict[str, Any], limits: Limits, routes: Sequence[Any]) -> int:
    """The body limit of the first of `routes` this request fully matches (`max_body` when none does)."""
    for route in routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return limits.max_upload if getattr(getattr(route, "endpoint", None), _UPLOAD, False) else limits.max_body
    return limits.max_body

API_PREFIX = "/v1"


@dataclass
class Limits:
    """Request size limits (bytes). Larger bodies get 413 before anything is parsed."""

    max_body: int = 1 << 20            # JSON bodies: 1 MiB
    max_upload: int = 20 << 20         # screenshot uploads: 20 MiB
    max_image_pixels: int = 50_000_000  # 50 MP; decompression bombs are refused


class BodyLimitMiddleware:
    """Pure ASGI: reads a request body up to its limit and answers 413 past it; replays it otherwise."""

    def __init__(self, app: Any, limits: Limits, routes: Sequence[Any] = ()) -> None:
        """`routes`: the API's routes in the router's order (`APIRouter.routes` of each router)."""
        self.app = app
        self.limits = limits
        self.routes = list(routes)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            return await self.app(scope, receive, send)
        # every path: /v1, the mem0-style routes and the mounted MCP app alike
        limit = route_limit(scope, self.limits, self.routes)
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > limit
            except ValueError:
                return await error_response(400, "bad_request", "Content-Length is not a number")(scope, receive, send)
            if too_big:
                return await _too_large(limit)(scope, receive, send)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return await _too_large(limit)(scope, receive, send)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
        return None


def _too_large(limit: int) -> Any:
    return error_response(413, "too_large", f"request body is over the limit of {limit} bytes")
