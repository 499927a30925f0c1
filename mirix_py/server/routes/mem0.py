"""mem0's REST routes (`POST /memories`, `POST /search`, `GET /memories`, ...) beside ours, answered
by `mirix_py.compat.mem0.Memory` over this server's engine, with mem0's bodies and result shapes.

Keys work as everywhere else: a mem0 call acts for the mirix user its ids name (`user_id`, else
`agent:<agent_id>`, else `run:<run_id>`), and a call by memory id only for a memory of a user the
key may act for (404 otherwise); a list, search or delete without `user_id` reaches only the users
the key may act for (`Memory.reach`). `POST /reset` needs an admin key. What differs from mem0:
docs/integrations.md.
"""

# no `from __future__ import annotations`: FastAPI reads the Annotated aliases as objects

from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import AfterValidator, BaseModel, Field

from mirix_py.compat.mem0 import Memory, user_for
from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.records import MemoryBase
from mirix_py.server.deps import Admin, Caller, Engine, MemoryId
from mirix_py.server.errors import ApiError
from mirix_py.server.keys import check_user_id
from mirix_py.server.models import clean_text, clean_value

router = APIRouter(tags=["mem0"])


# Every string a mem0 body carries is plain text every backend stores (`clean_text`): a NUL in an
# agent id or a metadata value was kept, escaped, in a memory's provenance.
Plain = Annotated[str, AfterValidator(clean_text)]
PlainJson = Annotated[dict[str, Any], AfterValidator(clean_value)]
# `metadata` is checked by `Memory` itself (`compat.mem0_values`), as the SDK's is: the same values (no
# NaN or Infinity, nested at most 64 deep), the same message naming the key, 422, nothing written.
Metadata = dict[str, Any]


class Mem0Message(BaseModel):
    role: Plain = Field(min_length=1, max_length=32, description="Role of the message (user or assistant).")
    content: Plain = Field(description="Message content.")


class Mem0Create(BaseModel):
    messages: list[Mem0Message] = Field(min_length=1, max_length=1000, description="Messages to store.")
    user_id: Plain | None = Field(default=None, max_length=256)
    agent_id: Plain | None = Field(default=None, max_length=200)
    run_id: Plain | None = Field(default=None, max_length=200)
    metadata: Metadata | None = None
    infer: bool = Field(default=True, description="False: keep each message as one memory, as it is.")
    expiration_date: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$",
                                        description="YYYY-MM-DD (UTC, the day included): after it the memories "
                                                    "are not read, and are deleted.")


class Mem0Search(BaseModel):
    query: Plain = Field(min_length=1, max_length=10_000)
    user_id: Plain | None = Field(default=None, max_length=256)
    agent_id: Plain | None = Field(default=None, max_length=200)
    run_id: Plain | None = Field(default=None, max_length=200)
    filters: PlainJson | None = None
    limit: int | None = Field(default=None, ge=1, le=100)
    top_k: int | None = Field(default=None, ge=1, le=100)


class Mem0Update(BaseModel):
    text: Plain | None = Field(default=None, min_length=1, description="The memory's new text (or `data`, `memory`).")
    data: Plain | None = Field(default=None, min_length=1)
    memory: Plain | None = Field(default=None, min_length=1)
    metadata: Metadata | None = None
    expiration_date: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$",
                                        description="YYYY-MM-DD (UTC, the day included); null clears it.")


def _scope(caller: Any, user_id: str | None, agent_id: str | None, run_id: str | None) -> None:
    """403 unless the caller's key may act for the mirix user these ids name."""
    try:
        user = check_user_id(user_for(user_id, agent_id, run_id))
    except (ValueError, InvalidInput) as exc:
        raise ApiError(400, "bad_request", str(exc)) from exc
    if not caller.may_act_for(user):
        raise ApiError(403, "forbidden", f"this key may not act for user {user!r}")


def _owned(mx: Any, caller: Any, memory_id: str) -> MemoryBase:
    """The memory, when the caller's key may act for its user (404 either way otherwise)."""
    memory = mx.store.get(memory_id)
    if not caller.may_act_for(memory.user_id):
        raise MemoryNotFound(memory_id)
    return memory


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:  # mem0's argument errors (InvalidInput is mapped to 422 by the app)
        if isinstance(exc, InvalidInput):
            raise
        raise ApiError(422, "invalid_input", str(exc)) from exc


@router.post("/memories", summary="Create memories (mem0)")
def add_memory(body: Mem0Create, caller: Caller, mx: Engine) -> dict[str, Any]:
    _scope(caller, body.user_id, body.agent_id, body.run_id)
    result: dict[str, Any] = _call(Memory(mx=mx).add, [m.model_dump() for m in body.messages], user_id=body.user_id,
                                   agent_id=body.agent_id, run_id=body.run_id, metadata=body.metadata,
                                   infer=body.infer, expiration_date=body.expiration_date)
    return result


@router.get("/memories", summary="Get memories (mem0)")
def get_all_memories(caller: Caller, mx: Engine, user_id: str | None = None, run_id: str | None = None,
                     agent_id: str | None = None) -> dict[str, Any]:
    _scope(caller, user_id, agent_id, run_id)
    memory = Memory(mx=mx, reach=caller.may_act_for)
    result: dict[str, Any] = _call(memory.get_all, user_id=user_id, agent_id=agent_id, run_id=run_id)
    return result


@router.get("/memories/{memory_id}", summary="Get a memory (mem0)")
def get_memory(memory_id: MemoryId, caller: Caller, mx: Engine) -> dict[str, Any]:
    _owned(mx, caller, memory_id)
    found = Memory(mx=mx).get(memory_id)
    if found is None:
        raise MemoryNotFound(memory_id)
    return found


@router.post("/search", summary="Search memories (mem0)")
def search_memories(body: Mem0Search, caller: Caller, mx: Engine) -> dict[str, Any]:
    filters = body.filters or {}
    ids = {k: body.model_dump()[k] or (filters.get(k) if isinstance(filters.get(k), str) else None)
           for k in ("user_id", "agent_id", "run_id")}
    _scope(caller, ids["user_id"], ids["agent_id"], ids["run_id"])
    memory = Memory(mx=mx, reach=caller.may_act_for)
    result: dict[str, Any] = _call(memory.search, body.query, user_id=body.user_id, agent_id=body.agent_id,
                                   run_id=body.run_id, filters=body.filters, limit=body.limit, top_k=body.top_k)
    return result


@router.put("/memories/{memory_id}", summary="Update a memory (mem0)")
def update_memory(memory_id: MemoryId, body: Mem0Update, caller: Caller, mx: Engine) -> dict[str, str]:
    _owned(mx, caller, memory_id)
    expiry = {"expiration_date": body.expiration_date} if "expiration_date" in body.model_fields_set else {}
    result: dict[str, str] = _call(Memory(mx=mx).update, memory_id, text=body.text or body.data or body.memory,
                                   metadata=body.metadata, **expiry)
    return result


@router.get("/memories/{memory_id}/history", summary="Get memory history (mem0)")
def memory_history(memory_id: MemoryId, caller: Caller, mx: Engine) -> list[dict[str, Any]]:
    users = sorted({e.user_id for e in mx.store.history(memory_id) if caller.may_act_for(e.user_id)})
    if not users:
        raise MemoryNotFound(memory_id)
    memory = Memory(mx=mx)  # every event the caller may see, none of another user's under the same id
    return sorted((row for u in users for row in memory.history(memory_id, user_id=u)), key=lambda row: row["id"])


@router.delete("/memories/{memory_id}", summary="Delete a memory (mem0)")
def delete_memory(memory_id: MemoryId, caller: Caller, mx: Engine) -> dict[str, str]:
    _owned(mx, caller, memory_id)
    Memory(mx=mx).delete(memory_id)
    return {"message": "Memory deleted successfully"}


@router.delete("/memories", summary="Delete all memories (mem0)")
def delete_all_memories(caller: Caller, mx: Engine, user_id: str | None = None, run_id: str | None = None,
                        agent_id: str | None = None) -> dict[str, str]:
    _scope(caller, user_id, agent_id, run_id)
    memory = Memory(mx=mx, reach=caller.may_act_for)
    _call(memory.delete_all, user_id=user_id, agent_id=agent_id, run_id=run_id)
    return {"message": "All relevant memories deleted"}


@router.post("/reset", summary="Reset all memories (mem0; an admin key for every user)")
def reset_memory(admin: Admin, mx: Engine) -> dict[str, str]:
    if not admin.all_users:
        raise ApiError(403, "forbidden", "reset deletes every user's memories: it needs an admin key for every user")
    Memory(mx=mx).reset()
    return {"message": "All memories reset"}
