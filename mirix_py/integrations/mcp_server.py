"""An MCP server over a `Mirix` engine, built with the official `mcp` SDK (v2, `MCPServer`).

Tools: `add_memory`, `search_memory`, `chat_with_memory`, `list_memories`, `delete_memory`,
`get_core_memory`. Transports:

    mirix mcp --user ada                                   # stdio, for a desktop client's config
    mirix mcp --transport http --port 8765                 # streamable HTTP at /mcp, API keys required
    mirix serve                                            # the REST app with MCP mounted at /mcp

`mirix mcp` over stdio sends the tool calls to a `mirix serve` running on the same data dir when
there is one (`integrations/mcp_remote.py`): one process writes the store.

Over stdio the process acts for the users given with `--user` (the first is the default). Over
HTTP each request carries an API key (`Authorization: Bearer mxk_...`) checked by the same key
store as the REST API, and the key's users are the ones the tools may touch.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Protocol, Sequence

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings

from pydantic import AnyHttpUrl, Field

from mirix_py.boundary.sizes import (
    MAX_LIST_LIMIT, MAX_MESSAGE_CHARS, MAX_OFFSET, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, MAX_SOURCE_ID_CHARS,
)
from mirix_py.tools import params as P
from mirix_py.text.passages import focus
from mirix_py.errors import MirixError
from mirix_py.secrets.redaction import scrub
from mirix_py.records import to_jsonable

if TYPE_CHECKING:  # pragma: no cover
    from mirix_py.engine import Mirix
    from mirix_py.integrations.mcp_remote import RemoteMemory


class KeyOwner(Protocol):
    """Who a verified API key belongs to (the server's `Principal` fits)."""

    @property
    def key_id(self) -> str: ...

    @property
    def users(self) -> frozenset[str]: ...


class ApiKeys(Protocol):
    """Checks API keys (the server's `KeyStore` fits): this module never imports the server."""

    def verify(self, key: str) -> KeyOwner | None: ...

MemoryTypeName = P.MemoryTypeName
# Every parameter a client's model sees is described; closed sets are enumerated (from the records).
UserId = Annotated[str | None, Field(description="Whose memory; defaults to the server's first user.")]
# MemoryTypeName is a Literal built from the records at import time, which mypy cannot read as a type
Types = Annotated[list[MemoryTypeName] | None,  # type: ignore[valid-type]
                  Field(description="Only these memory types; all six when omitted.")]
When = Annotated[str | None, Field(description="ISO 8601 date or time with a zone, e.g. 2024-05-07T00:00:00+00:00.")]
INSTRUCTIONS = (
    "Long-term memory of the user (mirix-py, six memory types: core, episodic, semantic, procedural, "
    "resource, knowledge_vault). Call search_memory before answering questions about the user's past, "
    "people, preferences or how-tos; call add_memory with facts worth keeping. Cite memory ids."
)
USER_SCOPE = "user:"


class KeyVerifier:
    """`mcp`'s TokenVerifier over mirix API keys: a key's users become `user:<id>` scopes."""

    def __init__(self, keys: ApiKeys) -> None:
        self.keys = keys

    async def verify_token(self, token: str) -> AccessToken | None:
        import anyio

        principal = await anyio.to_thread.run_sync(self.keys.verify, token)
        if principal is None:
            return None
        return AccessToken(token=token, client_id=principal.key_id,
                           scopes=[f"{USER_SCOPE}{u}" for u in sorted(principal.users)])


_dump = to_jsonable  # one conversion for every JSON surface (mirix_py.records)


def build_mcp_server(mx: "Mirix | RemoteMemory", *, users: Sequence[str] | None = None, keys: ApiKeys | None = None,
                     http: bool = False, host: str = "127.0.0.1", port: int = 8765) -> MCPServer:
    """The MCP server. `users`: who the tools may act for without keys ("*" for anyone; the first
    is the default `user_id`). `keys`: check API keys on HTTP instead (required with `http` unless
    `users` is given). `mx` is an engine, or a `RemoteMemory` sending the calls to a running server."""
    import anyio

    static_users = [u for u in (users or []) if u]
    if keys is None and not static_users:
        raise ValueError("give the users this MCP server acts for (--user), or a key store for HTTP")
    auth_kwargs: dict[str, Any] = {}
    if http and keys is not None:
        # API keys are bearer tokens no OAuth server issues: no resource URL, so a 401 names no
        # protected-resource metadata (`/.well-known/oauth-protected-resource/...`) that nothing serves
        auth_kwargs = {
            "token_verifier": KeyVerifier(keys),
            "auth": AuthSettings(issuer_url=AnyHttpUrl(f"http://{host}:{port}"), resource_server_url=None),
        }
    server = MCPServer("mirix", instructions=INSTRUCTIONS, **auth_kwargs)

    def allowed() -> list[str]:
        token = get_access_token()
        if token is not None:
            return [s[len(USER_SCOPE):] for s in token.scopes if s.startswith(USER_SCOPE)]
        if keys is not None and http:
            raise ToolError("an API key is required")
        return static_users

    def resolve(user_id: str | None) -> str:
        may = allowed()
        if not user_id:
            concrete = [u for u in may if u != "*"]
            if len(concrete) != 1:
                raise ToolError("pass user_id: this server acts for several users")
            return concrete[0]
        if "*" not in may and user_id not in may:
            raise ToolError(f"not allowed to act for user {user_id!r}")
        return user_id

    async def call(fn, *args: Any, **kwargs: Any) -> Any:
        try:
            return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
        except MirixError as exc:  # bad input, no such memory, a remote server gone: the message says which
            raise ToolError(scrub(str(exc))) from exc

    @server.tool(description="Remember text: a fact, an event, a how-to, a note. Returns the changes made.")
    async def add_memory(
        content: Annotated[str, Field(description="The text to remember, as the user or a document said it.",
                                      min_length=1, max_length=MAX_MESSAGE_CHARS)],
        user_id: UserId = None,
        occurred_at: Annotated[str | None, Field(description="When it happened, ISO 8601 with a zone; now when "
                                                             "omitted.")] = None,
        source_id: Annotated[str | None, Field(description="The caller's own id for this input, kept as its "
                                                           "provenance; not of the engine's input ids' form "
                                                           "('in_' and 32 hex digits).", max_length=MAX_SOURCE_ID_CHARS)] = None,
        wait: Annotated[bool, Field(description="false: log it and return at once; it is processed in the "
                                                "background.")] = True,
        expires_at: Annotated[str | None, Field(description="Only for what stops being true at a known time (a "
                                                            "code for this week, a trial that ends): when the "
                                                            "memories made from it expire, ISO 8601 with a zone, "
                                                            "in the future. Omit to keep them.")] = None,
    ) -> dict[str, Any]:
        """occurred_at: ISO 8601 with a zone (default now). wait=false logs it and returns at once."""
        user = resolve(user_id)
        result = await call(mx.add, content, user_id=user, occurred_at=occurred_at, source_id=source_id, wait=wait,
                            expires_at=expires_at)
        return {"status": result.status.value, "input_ids": result.input_ids, "error": result.error,
                "changes": [_dump(c) for c in result.changes]}

    @server.tool(description="Search the user's memories (hybrid BM25 + embeddings). Returns texts, ids, scores; "
                             "a long memory's text is cut to its first line and the lines about the query. With "
                             "the engine's search context set (MIRIX_SEARCH_CONTEXT), the first matches come "
                             "with the turns said just before and after them, marked context_for (the match's "
                             "id).")
    async def search_memory(
        query: Annotated[str, Field(description="What to look for: words, names, a question.", min_length=1,
                                    max_length=MAX_QUERY_CHARS)],
        user_id: UserId = None,
        memory_types: Types = None,
        limit: Annotated[int, Field(description=f"How many hits, 1 to {MAX_SEARCH_LIMIT}.", ge=1,
                                    le=MAX_SEARCH_LIMIT)] = 10,
        start: When = None,
        end: When = None,
        method: Annotated[P.SearchMethodName, Field(description="hybrid (default), bm25 for exact names and "
                                                                "numbers, embedding for paraphrases, string for an "
                                                                "exact substring.")] = "hybrid",
    ) -> list[dict[str, Any]]:
        """start/end: ISO 8601 bounds on when things happened."""
        user = resolve(user_id)
        hits = await call(mx.search, query, user_id=user, limit=limit, memory_types=memory_types, start=start, end=end,
                          method=method)
        # the engine's search context (`search_context`), as every reader's path has it
        return [{"id": h.memory.id, "memory_type": h.memory.memory_type.value, "text": focus(h.text, query),
                 "score": round(h.score, 6), "occurred_at": _dump(h.memory).get("occurred_at"),
                 "source_ids": h.memory.source_ids, **({"context_for": h.context_for} if h.context_for else {})}
                for h in hits]

    @server.tool(description="Ask a question answered from memory, with the ids of the memories it cites.")
    async def chat_with_memory(
        message: Annotated[str, Field(description="The question, in the user's words.", min_length=1,
                                      max_length=MAX_MESSAGE_CHARS)],
        user_id: UserId = None,
        remember: Annotated[bool, Field(description="Feed the exchange back into memory.")] = True,
    ) -> dict[str, Any]:
        user = resolve(user_id)
        response = await call(mx.chat, message, user_id=user, remember=remember)
        return {"answer": response.answer, "memory_ids": response.memory_ids, "topics": response.topics,
                "mode": response.mode}

    @server.tool(description="List the user's memories, newest first, optionally of some types.")
    async def list_memories(
        user_id: UserId = None,
        memory_types: Types = None,
        limit: Annotated[int, Field(description=f"How many, 1 to {MAX_LIST_LIMIT}.", ge=1, le=MAX_LIST_LIMIT)] = 20,
        offset: Annotated[int, Field(description="How many of the newest to skip.", ge=0, le=MAX_OFFSET)] = 0,
    ) -> list[dict[str, Any]]:
        user = resolve(user_id)
        memories = await call(mx.list, user_id=user, memory_types=memory_types, limit=limit, offset=offset)
        return [{"id": m.id, "memory_type": m.memory_type.value, "text": m.search_text(),
                 "occurred_at": _dump(m).get("occurred_at")} for m in memories]

    @server.tool(description="Delete one memory by id (the deletion is kept in its history, unless erase). Deleting a "
                             "conversation turn also takes back what was said only in it (core lines, facts, "
                             "procedures, resources, vault entries); "
                             "`taken_back` lists them. With erase, their words leave the store too.")
    async def delete_memory(
        memory_id: Annotated[str, Field(description="The id of the memory, as search_memory or list_memories "
                                                    "gave it.", min_length=1, max_length=200)],
        user_id: UserId = None,
        erase: Annotated[bool, Field(description="True when the user asks to forget what they said (\"forget "
                                                 "that I said that\"): the words also leave the memory's history "
                                                 "and the input log, and cannot be undone. False (default): "
                                                 "the deletion is kept in history.")] = False,
    ) -> dict[str, Any]:
        user = resolve(user_id)
        changes = await call(mx.delete, memory_id, user_id=user, actor="mcp", erase=erase)
        return {"deleted": memory_id, "taken_back": [c.memory_id for c in changes if c.memory_id != memory_id]}

    @server.tool(description="Read core memory: the persona and human blocks always given to the assistant.")
    async def get_core_memory(user_id: UserId = None) -> dict[str, Any]:
        user = resolve(user_id)
        blocks = await call(mx.core_memory, user_id=user)
        return {label: {"value": b.value, "limit": b.limit, "id": b.id or None} for label, b in blocks.items()}

    server.mirix_engine = mx  # type: ignore[attr-defined]
    return server


def run(mx: "Mirix", *, transport: str = "stdio", users: Sequence[str] | None = None, keys: ApiKeys | None = None,
        host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until stopped. HTTP without keys is allowed on loopback only."""
    if transport == "stdio":
        build_mcp_server(mx, users=users).run("stdio")
        return
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if keys is None and not loopback:
        raise ValueError("an MCP server on a non-loopback address needs API keys")
    server = build_mcp_server(mx, users=None if keys is not None else users, keys=keys, http=True, host=host,
                              port=port)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=loopback,
                                         allowed_hosts=[f"{host}:{port}", f"localhost:{port}", f"127.0.0.1:{port}"])
    server.run("streamable-http", host=host, port=port, transport_security=security)


def mcp_tool_schemas() -> dict[str, dict[str, Any]]:
    """Tool name -> {description, input schema} of the MCP server (`schemas/tools.json`)."""
    server = build_mcp_server(None, users=["schema"])  # type: ignore[arg-type]  # tools are only listed
    tools = asyncio.run(server.list_tools())
    return {t.name: {"description": t.description, "input_schema": t.input_schema} for t in sorted(tools, key=lambda t: t.name)}


__all__ = ["build_mcp_server", "mcp_tool_schemas", "run", "KeyVerifier"]
