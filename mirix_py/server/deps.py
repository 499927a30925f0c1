"""FastAPI dependencies shared by the routers: the engine, the key store, the caller and the user.

`create_app` puts the engine, the key store, the limits and whether keys are required on
`app.state`; routes ask for them through these dependencies (`Engine`, `Keys`, `Caller`, `User`,
`Admin`), so a router never holds an engine of its own and tests may override any of them.
"""

# no `from __future__ import annotations`: FastAPI reads the Annotated aliases as objects

from typing import Annotated, Literal

from fastapi import Depends, Header, Path as PathParam, Request, Response
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.server.errors import ApiError
from mirix_py.server.keys import KeyStore, Principal, check_user_id
from mirix_py.server.limits import Limits

__all__ = ["Actor", "Admin", "Caller", "Engine", "Keys", "MemoryId", "ReadAfter", "RequestLimits", "User",
           "UserPath"]

LOCAL = Principal(key_id="local", users=frozenset({"*"}), admin=True)  # auth=False: one user's machine


def get_engine(request: Request) -> Mirix:
    engine: Mirix = request.app.state.mx
    return engine


def get_keys(request: Request) -> KeyStore:
    keys: KeyStore = request.app.state.keys
    return keys


def get_limits(request: Request) -> Limits:
    limits: Limits = request.app.state.limits
    return limits


Engine = Annotated[Mirix, Depends(get_engine)]
Keys = Annotated[KeyStore, Depends(get_keys)]
RequestLimits = Annotated[Limits, Depends(get_limits)]


# Declared as security schemes, so the OpenAPI spec says how to authenticate and Swagger UI's
# "Authorize" sends the key; auto_error=False: a missing key is this module's 401, with its message.
BEARER = HTTPBearer(auto_error=False, scheme_name="bearer", description="An API key from `mirix keys create`.")
API_KEY_HEADER = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="apiKey",
                              description="The same API key, for clients that cannot set Authorization.")


def principal(request: Request, keys: Keys,
              bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)] = None,
              api_key: Annotated[str | None, Depends(API_KEY_HEADER)] = None) -> Principal:
    """The caller's key (Authorization: Bearer, or X-API-Key); 401 when missing, unknown or revoked."""
    if not request.app.state.auth:
        return LOCAL
    key = bearer.credentials.strip() if bearer is not None and bearer.credentials else api_key
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
    """The `{user_id}` of the path, when the caller's key may act for it (403 otherwise)."""
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


def write_actor(x_mirix_actor: Annotated[
        Literal["rest", "mcp", "cli"],
        Header(description="Who made an edit, as its history records it: `rest` (the default), or `mcp` / `cli` "
                           "when `mirix mcp` or the CLI sends it to this server on a person's behalf.")] = "rest",
                ) -> str:
    """The actor a REST edit is recorded under. One of three names, never free text: an actor such
    as `undo:<input id>` means something to the engine and cannot be claimed by a client."""
    return x_mirix_actor


Actor = Annotated[str, Depends(write_actor)]

WRITE_POSITION = "X-Mirix-Write-Position"


def give_write_position(response: Response, mx: Mirix, user_id: str) -> None:
    """`X-Mirix-Write-Position`: with searches on a replica, what a read on another process passes as
    `X-Mirix-Read-After` to see the user's writes so far (none once the replica has them)."""
    position = mx.write_position(user_id)
    if position is not None:
        response.headers[WRITE_POSITION] = position


# a write position (`write_position` of an add, the `X-Mirix-Write-Position` header of a write) a read must
# see: with searches on a replica, it reads the primary until the replica has replayed past it
ReadAfter = Annotated[str | None, Header(
    alias="X-Mirix-Read-After", pattern=r"^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$",
    description="A write position from this service (an add's `write_position`, a write's "
                "`X-Mirix-Write-Position`), like `16/B374D848`: the read sees that write even on a replica.")]
