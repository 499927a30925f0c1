"""`MirixMemory`: mirix-py as an AutoGen `Memory` (autogen-core), for `AssistantAgent(memory=[...])`.

    from autogen_agentchat.agents import AssistantAgent
    from mirix_py.integrations.autogen import MirixMemory

    memory = MirixMemory(user_id="ada", data_dir="./memory")          # an embedded engine
    memory = MirixMemory(user_id="ada", base_url="http://127.0.0.1:8000", api_key="mxk_...")  # a `mirix serve`
    agent = AssistantAgent("assistant", model_client=client, memory=[memory])

Before each model call `update_context` takes the latest user message, extracts topics from it,
and adds one system message with core memory and the best matches of every memory type, in one
ranking (coarse retrieval, as MIRIX's chat agent does; high-sensitivity vault items never, vault secrets masked).
`add` remembers text, chat messages (JSON) and images (screenshot ingestion); `query` searches.
A chat message without an id that only asks (every sentence ending with "?") is marked as chat marks its
question (`integrations.tools.marked`), so search ranks it below what the user said; a message's own id
is kept.
Text or chat longer than the engine's `max_input_chars` is sent as consecutive inputs, cut at
paragraph, line, sentence or word breaks (`integrations.tools.inputs_within`), as `ListMemory` takes
any length (a Markdown document, `metadata["document"]`, stays one input).
Text the agent hands over (a user message, a query, added text) is made plain first
(`text.storable.printable`: a terminal's escape sequences dropped, form feeds made line breaks), so a
run never fails on a control character that AutoGen's own `ListMemory` takes. `clear` deletes
everything mirix holds for this user, as mem0's `Mem0Memory.clear` deletes all of its user's
memories: what other memories, integrations (a LangGraph store, OpenAI Agents sessions) and `add`
calls wrote for them too. The memory is an AutoGen component (`dump_component()` /
`MirixMemory.load_component(...)`), and its config never holds an API key: only the name of the
environment variable to read it from.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from autogen_core import CancellationToken, Component, Image
from autogen_core.memory import Memory, MemoryContent, MemoryMimeType, MemoryQueryResult, UpdateContextResult
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage
from pydantic import BaseModel, Field
from typing_extensions import Self

from mirix_py.text.passages import focus
from mirix_py.errors import InvalidInput
from mirix_py.integrations.context import shareable
from mirix_py.integrations.tools import input_limit, inputs_within, marked
from mirix_py.text.pieces import pieces_within
from mirix_py.records import MemoryContext, Message, SearchHit
from mirix_py.text.storable import printable


class MirixMemoryConfig(BaseModel):
    """Serialisable settings of a `MirixMemory` (no secrets: the API key comes from `api_key_env`)."""

    user_id: str = Field(min_length=1, max_length=256)
    name: str | None = None
    data_dir: str | None = Field(default=None, description="Embedded engine: its data directory.")
    database_url: str | None = Field(default=None, description="Embedded engine: SQL URL (else SQLite in data_dir).")
    chroma_url: str | None = Field(default=None, description="Embedded engine: Chroma server (else embedded).")
    base_url: str | None = Field(default=None, description="A `mirix serve` REST server instead of an embedded engine.")
    api_key_env: str = Field(default="MIRIX_API_KEY", description="Environment variable holding the REST API key.")
    max_items: int = Field(default=10, ge=1, le=50, description="Memories put into the context per model call.")
    wait: bool = Field(default=True, description="`add` waits until memories are extracted.")


def _hit_content(hit: SearchHit, query: str) -> MemoryContent:
    """A hit as autogen memory content: its text cut to the lines about `query` when it is long."""
    m = hit.memory
    return MemoryContent(content=focus(hit.text, query), mime_type=MemoryMimeType.TEXT, metadata={
        "id": m.id, "memory_type": m.memory_type.value, "score": hit.score, "source_ids": list(m.source_ids),
        "occurred_at": m.occurred_at.isoformat() if m.occurred_at else None,
    })


_MESSAGE_FIELDS = frozenset(Message.model_fields)
_ROLES = frozenset(get_args(Message.model_fields["role"].annotation))
_TEXT_BYTES = ("text/", MemoryMimeType.JSON.value)  # bytes of these types are UTF-8 text


def _is_message(value: Any) -> bool:
    """Whether `value` is one chat message as `Mirix.add` takes it: a text `content`, a known role,
    no other keys than a message has."""
    return isinstance(value, dict) and isinstance(value.get("content"), str) \
        and value.get("role", "user") in _ROLES and value.keys() <= _MESSAGE_FIELDS


def _as_messages(value: Any) -> list[dict[str, Any]] | None:
    """`value` as chat messages (a list of them, one, or `{"messages": [...]}`), or None when it is other JSON."""
    if isinstance(value, dict) and "messages" in value:
        value = value["messages"]
    elif _is_message(value):
        value = [value]
    if isinstance(value, list) and value and all(_is_message(v) for v in value):
        return value
    return None


def _json_content(value: Any) -> str | list[dict[str, Any]]:
    """JSON memory content as chat messages, or else as its text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise InvalidInput(f"JSON memory content is not valid JSON: {exc}") from exc
    messages = _as_messages(value)
    if messages is not None:
        return messages
    if value in (None, "", [], {}):
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _decoded(value: bytes, mime: str) -> str:
    """Text bytes as text; InvalidInput when they are no UTF-8."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{mime} content is not UTF-8 text (byte {exc.start} cannot be decoded); "
                           "pass it as a string") from exc


def _plain(content: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Content as plain text (`printable`), messages left blank by it dropped; blank when nothing is left."""
    if isinstance(content, str):
        return printable(content)
    plain = [{**m, "content": printable(m["content"])} for m in content]
    return [m for m in plain if m["content"].strip()]


def _inputs(content: str | list[dict[str, Any]], max_chars: int) -> list[Any]:
    """Text or chat messages as the consecutive inputs the engine takes, each within `max_chars`."""
    return pieces_within(content, max_chars) if isinstance(content, str) else inputs_within(content, max_chars)


def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                return message.content
            return " ".join(part for part in message.content if isinstance(part, str))
    return ""


class _Local:
    def __init__(self, mx: Any, owned: bool) -> None:
        self.mx, self.owned = mx, owned
        self.max_chars = input_limit(mx)

    def context(self, message: str, user_id: str, max_items: int) -> MemoryContext:
        from mirix_py.integrations.context import retrieve_context

        return retrieve_context(self.mx, user_id, message, max_items=max_items)

    def search(self, query: str, user_id: str, **kwargs: Any) -> list[SearchHit]:
        return self.mx.search(query, user_id=user_id, **kwargs)

    def add(self, content: Any, user_id: str, **kwargs: Any) -> Any:
        return self.mx.add(content, user_id=user_id, **kwargs)

    def add_screenshot(self, image: Any, user_id: str, **kwargs: Any) -> Any:
        ingest = getattr(self.mx, "add_screenshot", None)
        if ingest is None:
            raise NotImplementedError("screenshot ingestion is not available in this build (Mirix.add_screenshot)")
        return ingest(image, user_id=user_id, **kwargs)

    def delete_user(self, user_id: str) -> dict[str, int]:
        return self.mx.delete_user(user_id)

    def close(self) -> None:
        if self.owned:
            self.mx.close()


class _Remote:
    def __init__(self, base_url: str, api_key: str | None) -> None:
        from mirix_py.client import MirixClient

        self.client = MirixClient(base_url, api_key=api_key)

    @property
    def max_chars(self) -> int:
        """The server's limit on one input (`MirixClient.max_input_chars`: asked of it once, when first needed)."""
        return input_limit(self.client)

    def context(self, message: str, user_id: str, max_items: int) -> MemoryContext:
        return self.client.context(message, user_id=user_id, max_items=max_items)

    def search(self, query: str, user_id: str, **kwargs: Any) -> list[SearchHit]:
        return self.client.search(query, user_id=user_id, **kwargs)

    def add(self, content: Any, user_id: str, **kwargs: Any) -> Any:
        return self.client.add(content, user_id=user_id, **kwargs)

    def add_screenshot(self, image: Any, user_id: str, **kwargs: Any) -> Any:
        from mirix_py.client import ApiError

        try:
            return self.client.add_screenshot(image, user_id=user_id, **kwargs)
        except ApiError as exc:
            if exc.status == 501:
                raise NotImplementedError(exc.message) from exc
            raise

    def delete_user(self, user_id: str) -> dict[str, int]:
        return self.client.delete_user(user_id)

    def close(self) -> None:
        self.client.close()


class MirixMemory(Memory, Component[MirixMemoryConfig]):
    """AutoGen memory backed by mirix-py, scoped to one user."""

    component_type = "memory"
    component_provider_override = "mirix_py.integrations.autogen.MirixMemory"
    component_config_schema = MirixMemoryConfig

    def __init__(self, user_id: str, *, mx: Any = None, data_dir: str | Path | None = None,
                 database_url: str | None = None, chroma_url: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, api_key_env: str = "MIRIX_API_KEY", max_items: int = 10,
                 wait: bool = True, name: str | None = None) -> None:
        if base_url and (mx is not None or data_dir is not None):
            raise ValueError("give either base_url (a REST server) or an embedded engine (mx / data_dir), not both")
        if mx is not None and data_dir is None:
            data_dir = mx.settings.data_dir
            database_url = database_url or mx.settings.database_url
            chroma_url = chroma_url or mx.settings.chroma_url
        self._config = MirixMemoryConfig(
            user_id=user_id, name=name, data_dir=str(data_dir) if data_dir is not None else None,
            database_url=database_url, chroma_url=chroma_url, base_url=base_url, api_key_env=api_key_env,
            max_items=max_items, wait=wait)
        self._api_key = api_key
        self._mx = mx
        self._backend: _Local | _Remote | None = None
        self._lock = threading.Lock()  # not an asyncio.Lock: the memory may be used from several loops

    @property
    def name(self) -> str:
        return self._config.name or f"mirix:{self._config.user_id}"

    @property
    def user_id(self) -> str:
        return self._config.user_id

    def _open(self) -> _Local | _Remote:
        with self._lock:
            return self._open_locked()

    def _open_locked(self) -> _Local | _Remote:
        if self._backend is None:
            c = self._config
            if c.base_url:
                self._backend = _Remote(c.base_url, self._api_key or os.environ.get(c.api_key_env))
            elif self._mx is not None:
                self._backend = _Local(self._mx, owned=False)
            else:
                from mirix_py.engine import Mirix

                self._backend = _Local(Mirix(c.data_dir, database_url=c.database_url, chroma_url=c.chroma_url),
                                       owned=True)
        return self._backend

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        backend = self._backend or await asyncio.to_thread(self._open)  # engine calls are thread-safe
        return await asyncio.to_thread(getattr(backend, method), *args, **kwargs)

    # ------------------------------------------------------------ Memory protocol

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Add core memory and the best memories for the latest user message as one system message."""
        message = printable(_last_user_text(await model_context.get_messages()))
        if not message.strip():
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        context: MemoryContext = await self._call("context", message, self.user_id, self._config.max_items)
        text = context.render()
        if text:
            await model_context.add_message(SystemMessage(content=text))
        results = [MemoryContent(content=f"[{label}] {value}", mime_type=MemoryMimeType.TEXT,
                                 metadata={"memory_type": "core", "label": label})
                   for label, value in context.core.items()]
        results += [_hit_content(h, message) for h in context.hits]
        return UpdateContextResult(memories=MemoryQueryResult(results=results))

    async def query(self, query: str | MemoryContent, cancellation_token: CancellationToken | None = None,
                    **kwargs: Any) -> MemoryQueryResult:
        """Search this user's memories. kwargs: limit, memory_types, start, end, method, context (the turns
        around the first N matches; the engine's `search_context` by default, as `update_context` uses).
        High-sensitivity vault entries are left out and vault secrets stay masked, as in `update_context`:
        what a query returns is usually put in a prompt."""
        text = printable(query if isinstance(query, str) else str(query.content))
        if not text.strip():
            return MemoryQueryResult(results=[])
        kwargs.setdefault("limit", self._config.max_items)
        hits = await self._call("search", text, self.user_id, **kwargs)
        return MemoryQueryResult(results=[_hit_content(h, text) for h in shareable(hits)])

    async def add(self, content: MemoryContent, cancellation_token: CancellationToken | None = None) -> None:
        """Text and Markdown (a string, or UTF-8 bytes) are remembered as text; JSON as chat messages
        (a list of {role, content}, one, or {"messages": [...]}; mere questions marked as chat
        marks its own, `marked`) or else as its text; images go through
        screenshot ingestion. Text is made plain first (`printable`); content with no text left (an
        empty string, `[]`) writes nothing, as there is nothing to remember; text or chat over the
        engine's limit goes as consecutive inputs (a document stays one).
        metadata may give occurred_at / source_id (text) or captured_at / app / window_title (images)."""
        meta = dict(content.metadata or {})
        mime = content.mime_type.value if isinstance(content.mime_type, MemoryMimeType) else str(content.mime_type)
        value: Any = content.content
        if isinstance(value, Image) or mime.startswith("image/"):
            await self._add_image(value, meta)
            return
        if isinstance(value, (bytes, bytearray)):
            if not mime.startswith(_TEXT_BYTES):
                raise InvalidInput(f"cannot remember binary content of type {mime!r}; pass text or an image")
            value = _decoded(bytes(value), mime)
        is_json = mime == MemoryMimeType.JSON.value or isinstance(value, dict)
        text = _plain(_json_content(value) if is_json else value)
        if not text or (isinstance(text, str) and not text.strip()):
            return
        if isinstance(text, list):  # a saved exchange: its mere questions state nothing
            text = [marked(m) for m in text]
        kwargs = {k: meta[k] for k in ("occurred_at", "source_id") if meta.get(k) is not None}
        kind = "document" if mime == MemoryMimeType.MARKDOWN.value and meta.get("document") else "text"
        backend = self._backend if self._backend is not None else await asyncio.to_thread(self._open)
        inputs: list[Any] = [text]
        if kind != "document":  # over REST the limit is the server's, asked of it once
            inputs = _inputs(text, await asyncio.to_thread(lambda: backend.max_chars))
        for said in inputs:
            await self._call("add", said, self.user_id, kind=kind, wait=self._config.wait, **kwargs)

    async def _add_image(self, value: Any, meta: dict[str, Any]) -> None:
        picture: Any
        if isinstance(value, Image):
            picture = value.image
        elif isinstance(value, (bytes, bytearray)):
            picture = bytes(value)  # the engine reads and checks it (InvalidImage names what is wrong)
        else:
            raise InvalidInput("image memory content must be an autogen Image or image bytes")
        captured = meta.get("captured_at") or datetime.now().astimezone()
        await self._call("add_screenshot", picture, self.user_id, captured_at=captured, app=meta.get("app"),
                         window_title=meta.get("window_title"), wait=self._config.wait)

    async def clear(self) -> None:
        """Delete everything mirix holds for this memory's user (`Mirix.delete_user`), as mem0's
        `Mem0Memory.clear` deletes all of its user's memories: every memory, history event and input,
        those other memories and integrations wrote too (LangGraph store items, OpenAI Agents session
        items). A memory merges what several inputs said, so what this object added alone cannot be
        told apart; to keep the rest, delete memories one by one (`Mirix.delete`, `Mirix.undo`)."""
        await self._call("delete_user", self.user_id)

    async def close(self) -> None:
        if self._backend is not None:
            backend, self._backend = self._backend, None
            await asyncio.to_thread(backend.close)

    # ------------------------------------------------------------ component

    def _to_config(self) -> MirixMemoryConfig:
        return self._config.model_copy()

    @classmethod
    def _from_config(cls, config: MirixMemoryConfig) -> Self:
        return cls(config.user_id, data_dir=config.data_dir, database_url=config.database_url,
                   chroma_url=config.chroma_url, base_url=config.base_url, api_key_env=config.api_key_env,
                   max_items=config.max_items, wait=config.wait, name=config.name)


__all__ = ["MirixMemory", "MirixMemoryConfig"]
