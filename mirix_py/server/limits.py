"""Request size limits: bodies over their limit get 413 before anything is parsed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mirix_py.server.errors import error_response

__all__ = ["API_PREFIX", "BodyLimitMiddleware", "Limits"]

API_PREFIX = "/v1"


@dataclass
class Limits:
    """Request size limits (bytes). Larger bodies get 413 before anything is parsed."""

    max_body: int = 1 << 20            # JSON bodies: 1 MiB
    max_upload: int = 20 << 20         # screenshot uploads: 20 MiB
    max_image_pixels: int = 50_000_000  # 50 MP; decompression bombs are refused


class BodyLimitMiddleware:
    """Pure ASGI: reads a request body up to its limit and answers 413 past it; replays it otherwise."""

    def __init__(self, app: Any, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
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
