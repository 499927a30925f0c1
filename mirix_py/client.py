"""A small synchronous client for the REST API (httpx), returning the same records the engine does.

    from mirix_py.client import MirixClient
    with MirixClient("http://127.0.0.1:8000", api_key="mxk_...") as client:
        client.add("My brother Tom is a pilot.", user_id="ada", wait=True)
        client.search("who flies planes", user_id="ada")

Errors come back as the engine's exceptions where one fits (InvalidInput, MemoryNotFound,
CoreMemoryFull); anything else raises `ApiError` with the status and the server's message.
`max_input_chars` is the longest input `add` can send the server (read once from its /health).
"""

from __future__ import annotations

import builtins
import io
from datetime import datetime
from typing import Any, Literal, Sequence, get_args
from urllib.parse import quote

import httpx
from pydantic import BaseModel, Field, TypeAdapter

from mirix_py.errors import CoreMemoryFull, InvalidInput, MemoryNotFound, MirixError
from mirix_py.settings import Settings
from mirix_py.screens.activity import FrameGroup
from mirix_py.records import (
    MEMORY_ADAPTER, AddResult, ChatResponse, CoreLabel, CoreMemory, HistoryEvent, Memory, MemoryBase, MemoryChange,
    MemoryContext, SearchHit,
)

_HITS = TypeAdapter(list[SearchHit])
_HISTORY = TypeAdapter(list[HistoryEvent])
_CHANGES = TypeAdapter(list[MemoryChange])
_GROUPS = TypeAdapter(list[FrameGroup])


class InputPage(BaseModel):
    """A page of the input log as `MirixClient.inputs` reads it."""

    inputs: list[dict[str, Any]] = Field(description=(
        "The inputs, newest first, without their contents, each as `input_status` returns it."))
    next: str | None = Field(default=None, description=(
        "The `before` that reads the next (older) page; None when this page ends with the oldest input."))


class MemoryPage(BaseModel):
    """A page of a user's memories as `MirixClient.memories` reads it."""

    memories: list[Memory] = Field(description="The memories, newest first (as `Mirix.list` orders them).")
    next: str | None = Field(default=None, description=(
        "The `before` that reads the next (older) page; None when this page ends with the last memory listed."))


class ApiError(MirixError):
    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(f"{status} {error}: {message}")
        self.status, self.error, self.message = status, error, message


def _iso(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


Actor = Literal["rest", "mcp", "cli"]  # the names a server records an edit under (`X-Mirix-Actor`)


def _actor(actor: Actor | None) -> dict[str, str]:
    return {"X-Mirix-Actor": actor} if actor else {}


def _after(read_after: str | None) -> dict[str, str]:
    """The header carrying a write position a read must see."""
    return {} if read_after is None else {"X-Mirix-Read-After": read_after}


def _segment(value: Any, what: str) -> str:
    """`value` as one path segment. HTTP clients resolve "." and ".." in a path before sending it
    (`/users/ada/memories/..` is `/users/ada`), so those, and "", never name what was meant."""
    if not isinstance(value, str) or value in ("", ".", ".."):
        raise InvalidInput(f"{what} {value!r} cannot be sent in a URL path")
    return quote(value, safe="")


def _memory_segment(memory_id: Any) -> str:
    """A memory id as a path segment; one no memory can have is not found, as the engine says."""
    if isinstance(memory_id, str) and memory_id in ("", ".", ".."):
        raise MemoryNotFound(memory_id)
    return _segment(memory_id, "memory id")


def _label(label: Any) -> str:
    if label not in get_args(CoreLabel):
        raise InvalidInput(f"core label must be one of {', '.join(get_args(CoreLabel))}, not {label!r}")
    return str(label)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def sendable_chars(health: dict[str, Any]) -> int:
    """The longest input one add can carry to a server whose /health says `health`: its
    `max_input_chars`, or fewer when that much text could be over its `max_body_bytes` (a character of
    text a server takes is at most 4 bytes of the JSON httpx sends; a fifth of the body is left for the
    add's other fields and its messages' keys). A server that does not say (an older one) has the default."""
    limit = _positive(health.get("max_input_chars")) or Settings.model_fields["max_input_chars"].default
    body = _positive(health.get("max_body_bytes"))
    return limit if body is None else max(1, min(limit, body // 5))


class MirixClient:
    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 60.0,
                 http: httpx.Client | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self.http = http or httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)
        self._max_input_chars: int | None = None

    @property
    def max_input_chars(self) -> int:
        """The most characters one `add` can send this server (`sendable_chars`: its `max_input_chars`, fewer
        when its body limit would refuse that much text first), so a caller splits longer text to fit.
        Read from /health (no key needed) the first time it is asked for, then kept: a server's limits
        are set when it starts."""
        if self._max_input_chars is None:
            self._max_input_chars = sendable_chars(self.health())
        return self._max_input_chars

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "MirixClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ plumbing

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._response(method, path, **kwargs)
        return None if response.status_code == 204 else response.json()

    def _response(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The server's answer, or the error it stands for raised (its headers matter to some calls)."""
        response = self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                body = response.json()
                error, message = body.get("error", "error"), body.get("message", response.text)
            except ValueError:
                error, message = "error", response.text
            if response.status_code == 404 and "memory" in message:
                raise MemoryNotFound(path.rsplit("/", 1)[-1])
            if response.status_code == 409 and error == "core_memory_full":
                raise CoreMemoryFull(message)
            if response.status_code == 422:
                raise InvalidInput(message)
            raise ApiError(response.status_code, error, message)
        return response

    @staticmethod
    def _user(user_id: str) -> str:
        if isinstance(user_id, str) and "/" in user_id:  # the server reads %2F as '/' before routing
            raise InvalidInput(f"user_id {user_id!r} holds '/', which a /v1 URL path cannot carry; the embedded "
                               "engine and the mem0 routes (user_id as a parameter) reach this user")
        return f"/v1/users/{_segment(user_id, 'user_id')}"

    # ------------------------------------------------------------ memories

    def add(self, content: str | Sequence[dict[str, Any]], *, user_id: str, occurred_at: datetime | str | None = None,
            source_id: str | None = None, kind: str = "text", wait: bool = False,
            expires_at: datetime | str | None = None) -> AddResult:
        payload: Any = content if isinstance(content, str) else [
            {k: _iso(v) if isinstance(v, datetime) else v for k, v in dict(m).items()} for m in content]
        body = {"content": payload, "occurred_at": _iso(occurred_at), "source_id": source_id, "kind": kind,
                "wait": wait, "expires_at": _iso(expires_at)}
        return AddResult.model_validate(self._call("POST", f"{self._user(user_id)}/memories", json=body))

    def add_screenshot(self, image: bytes | Any, *, user_id: str, captured_at: datetime | str | None = None,
                       app: str | None = None, window_title: str | None = None, wait: bool = True) -> AddResult:
        if not isinstance(image, (bytes, bytearray)):  # a PIL image
            buf = io.BytesIO()
            image.save(buf, format="PNG")
            image = buf.getvalue()
        form = {k: v for k, v in {"captured_at": _iso(captured_at), "app": app, "window_title": window_title,
                                  "wait": "true" if wait else "false"}.items() if v is not None}
        data = self._call("POST", f"{self._user(user_id)}/screenshots", data=form,
                          files={"image": ("screenshot.png", bytes(image), "image/png")})
        return AddResult.model_validate(data)

    def screen_activity(self, *, user_id: str, since: datetime | str | None = None,
                        until: datetime | str | None = None, limit: int = 50) -> builtins.list[FrameGroup]:
        """What was on the user's screen, by app and window, newest first (see `Mirix.screen_activity`)."""
        params = {k: v for k, v in {"since": _iso(since), "until": _iso(until), "limit": limit}.items()
                  if v is not None}
        return _GROUPS.validate_python(self._call("GET", f"{self._user(user_id)}/screen-activity", params=params))

    def input_status(self, input_id: str, *, user_id: str) -> dict[str, Any]:
        return self._call("GET", f"{self._user(user_id)}/inputs/{_segment(input_id, 'input id')}")

    def inputs(self, *, user_id: str, statuses: Sequence[str] | None = None, limit: int = 100,
               before: str | None = None, offset: int = 0) -> InputPage:
        """A page of the user's input log, newest first, without contents (`statuses`: only these).
        `before`: the previous page's `next`, which lists the inputs after it, none twice or left out
        while inputs arrive between pages; `offset` (not with `before`) is kept for older callers."""
        params: builtins.list[tuple[str, Any]] = [("limit", limit), ("offset", offset)]
        params += [("before", before)] if before is not None else []
        params += [("status", s) for s in statuses or ()]
        response = self._response("GET", f"{self._user(user_id)}/inputs", params=params)
        return InputPage(inputs=response.json(), next=response.headers.get("X-Mirix-Next-Cursor"))

    def search(self, query: str, *, user_id: str, limit: int = 10, memory_types: Sequence[str] | None = None,
               start: datetime | str | None = None, end: datetime | str | None = None,
               method: str = "hybrid", context: int | None = None, read_after: str | None = None) -> list[SearchHit]:
        """`context`: the turns around the first N matches; the server's `search_context` when None.
        `read_after`: a write position (an add's `write_position`) the search must see."""
        body = {"query": query, "limit": limit, "memory_types": list(memory_types) if memory_types else None,
                "start": _iso(start), "end": _iso(end), "method": method}
        if context is not None:
            body["context"] = context
        return _HITS.validate_python(self._call("POST", f"{self._user(user_id)}/search", json=body,
                                                headers=_after(read_after)))

    def chat(self, message: str, *, user_id: str, history: Sequence[dict[str, Any]] | None = None,
             remember: bool = True, read_after: str | None = None) -> ChatResponse:
        body = {"message": message, "history": list(history or []), "remember": remember}
        return ChatResponse.model_validate(self._call("POST", f"{self._user(user_id)}/chat", json=body,
                                                      headers=_after(read_after)))

    def context(self, message: str, *, user_id: str, max_items: int = 10, read_after: str | None = None) -> MemoryContext:
        data = self._call("POST", f"{self._user(user_id)}/context", json={"message": message, "max_items": max_items},
                          headers=_after(read_after))
        return MemoryContext.model_validate(data)

    def list(self, *, user_id: str, memory_types: Sequence[str] | None = None, limit: int = 100,
             offset: int = 0) -> list[MemoryBase]:
        """A page of the user's memories, newest first, counted by `offset` (`memories` pages by cursor)."""
        return builtins.list(self.memories(user_id=user_id, memory_types=memory_types, limit=limit,
                                           offset=offset).memories)

    def memories(self, *, user_id: str, memory_types: Sequence[str] | None = None, limit: int = 100,
                 before: str | None = None, offset: int = 0, start: datetime | str | None = None,
                 end: datetime | str | None = None) -> MemoryPage:
        """A page of the user's memories, newest first (`memory_types`: only these; `start`/`end`: what
        happened in that range) and the cursor of the next. `before`: the previous page's `next`, which
        lists the memories after it, none twice or left out while memories are written or deleted
        between pages (one whose `occurred_at` is edited meanwhile can move across the cursor: listed
        twice or not at all); `offset` (not with `before`) is kept for older callers."""
        params: builtins.list[tuple[str, Any]] = [("limit", limit), ("offset", offset)]
        params += [(name, value) for name, value in (("before", before), ("start", _iso(start)), ("end", _iso(end)))
                   if value is not None]
        params += [("memory_type", t) for t in memory_types or ()]
        response = self._response("GET", f"{self._user(user_id)}/memories", params=params)
        return MemoryPage(memories=response.json(), next=response.headers.get("X-Mirix-Next-Cursor"))

    def get(self, memory_id: str, *, user_id: str, reveal: bool = False) -> MemoryBase:
        data = self._call("GET", f"{self._user(user_id)}/memories/{_memory_segment(memory_id)}",
                          params={"reveal": str(reveal).lower()})
        return MEMORY_ADAPTER.validate_python(data)

    def update(self, memory_id: str, fields: dict[str, Any], *, user_id: str, actor: Actor | None = None) -> MemoryBase:
        """`actor`: `mcp` or `cli` when a tool sends the edit for a person (history then says so);
        left out, the server records `rest`."""
        data = self._call("PATCH", f"{self._user(user_id)}/memories/{_memory_segment(memory_id)}",
                          json={"fields": fields}, headers=_actor(actor))
        return MEMORY_ADAPTER.validate_python(data)

    def delete(self, memory_id: str, *, user_id: str, actor: Actor | None = None,
               erase: bool = False) -> builtins.list[MemoryChange]:
        """Delete a memory; the changes made, as `Mirix.delete` returns them (what a turn took back too).
        `erase=True`: their words leave the store too, as `Mirix.delete(..., erase=True)`."""
        return _CHANGES.validate_python(self._call(
            "DELETE", f"{self._user(user_id)}/memories/{_memory_segment(memory_id)}", headers=_actor(actor),
            params={"erase": "true"} if erase else None))

    def history(self, memory_id: str, *, user_id: str) -> builtins.list[HistoryEvent]:  # `list` is a method here
        return _HISTORY.validate_python(
            self._call("GET", f"{self._user(user_id)}/memories/{_memory_segment(memory_id)}/history"))

    def undo(self, input_id: str, *, user_id: str, force: bool = False) -> builtins.list[MemoryChange]:
        """Revert every change one input caused (see `Mirix.undo`)."""
        return _CHANGES.validate_python(self._call(
            "POST", f"{self._user(user_id)}/inputs/{_segment(input_id, 'input id')}/undo", params={"force": str(force).lower()}))

    def core_memory(self, *, user_id: str) -> dict[str, CoreMemory]:
        data = self._call("GET", f"{self._user(user_id)}/core")
        return {label: CoreMemory.model_validate(block) for label, block in data.items()}

    def core_append(self, label: str, text: str, *, user_id: str, actor: Actor | None = None) -> CoreMemory:
        return CoreMemory.model_validate(self._call("POST", f"{self._user(user_id)}/core/{_label(label)}/append",
                                                    json={"text": text}, headers=_actor(actor)))

    def core_rewrite(self, label: str, value: str, *, user_id: str, actor: Actor | None = None) -> CoreMemory:
        return CoreMemory.model_validate(self._call("PUT", f"{self._user(user_id)}/core/{_label(label)}",
                                                    json={"value": value}, headers=_actor(actor)))

    def delete_user(self, user_id: str) -> dict[str, int]:
        return self._call("DELETE", self._user(user_id))["deleted"]

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        return self._call("GET", f"{self._user(user_id)}/stats" if user_id else "/v1/stats")

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/health")
