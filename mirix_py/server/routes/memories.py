"""Memories of one user: add (text or chat messages), list, get, change in place, delete, history."""

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Response

from mirix_py.boundary.sizes import MAX_OFFSET
from mirix_py.errors import InvalidInput
from mirix_py.records import AddResult, HistoryEvent, Memory, MemoryChange, MemoryType
from mirix_py.server.deps import Actor, Engine, MemoryId, User, give_write_position
from mirix_py.server.errors import ApiError
from mirix_py.server.limits import API_PREFIX
from mirix_py.server.models import AddRequest, ErrorOut, UpdateRequest, When
from mirix_py.server.routes.inputs import NEXT_CURSOR
from mirix_py.store.memories import MemoryPosition, listing_start

router = APIRouter(prefix=f"{API_PREFIX}/users/{{user_id}}/memories", tags=["memories"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut}}
CURSOR_CHARS = 512  # a cursor of the longest memory id (200 characters) is about 430


def input_location(user_id: str, input_id: str) -> str:
    """Where the status of an accepted input can be polled."""
    return f"{API_PREFIX}/users/{quote(user_id, safe='')}/inputs/{input_id}"


@router.post("", response_model=AddResult, status_code=202,
             responses={200: {"model": AddResult, "description": "Processed (wait=true)."},
                        202: {"description": "Accepted: logged, processed in the background."}})
def add(user_id: User, body: AddRequest, response: Response, mx: Engine) -> AddResult:
    """Remember text or chat messages. Accepted at once (202, poll the input's status) unless `wait`."""
    content = body.content if isinstance(body.content, str) else [m.model_dump() for m in body.content]
    result = mx.add(content, user_id=user_id, occurred_at=body.occurred_at, source_id=body.source_id,
                    kind=body.kind, wait=body.wait, expires_at=body.expires_at)
    response.status_code = 200 if body.wait else 202
    if result.input_ids:
        response.headers["Location"] = input_location(user_id, result.input_ids[0])
    give_write_position(response, mx, user_id)
    return result


@router.get("", response_model=list[Memory], responses={
    200: {"headers": {NEXT_CURSOR: {"schema": {"type": "string"}, "description": (
        "The `before` of the next (older) page; absent when this page ends with the last memory listed.")}}},
    422: {"model": ErrorOut, "description": "A bad query parameter, such as a cursor this listing did not give."}})
def list_memories(user_id: User, mx: Engine, response: Response,
                  memory_type: Annotated[list[MemoryType] | None, Query(
                      max_length=6, description="Only memories of these types (may repeat); all when omitted.")] = None,
                  limit: Annotated[int, Query(ge=1, le=1000, description="How many memories a page holds.")] = 100,
                  before: Annotated[str | None, Query(max_length=CURSOR_CHARS, description=(
                      "The previous page's `X-Mirix-Next-Cursor` header, as given: this page lists the memories "
                      "after that page's last one, so none is listed twice or left out while memories are "
                      "written or deleted between pages (one whose `occurred_at` is edited meanwhile can move "
                      "across the cursor: listed twice or not at all). Opaque; a cursor the listing did not "
                      "give is refused with 422. Omitted: the first page (the newest)."))] = None,
                  offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description=(
                      "How many of the newest to skip, not with `before`. Kept for older clients: a memory "
                      "written between two pages shifts the next page by one, so it repeats a memory (a "
                      "deleted one makes it skip one); page with `before` instead."))] = 0,
                  start: When | None = None, end: When | None = None) -> list[Any]:
    """A user's memories, newest first (by when they happened, then when stored, then id; memories
    without a time last), a page at a time. When more follow, `X-Mirix-Next-Cursor` is the `before`
    of the next page."""
    _check_cursor(before, offset)
    memories = mx.list(user_id=user_id, memory_types=memory_type or None, limit=limit + 1, offset=offset,
                       start=start, end=end, before=before)
    if len(memories) > limit:  # one more than the page was read: more follow
        response.headers[NEXT_CURSOR] = MemoryPosition.of(memories[limit - 1]).cursor()
    return memories[:limit]


def _check_cursor(before: str | None, offset: int) -> None:
    """A 422 naming `before` for a cursor the listing cannot start after (the engine checks it again)."""
    if before is None:
        return
    try:
        listing_start(before, offset=offset, newest_first=True)
    except InvalidInput as exc:
        raise ApiError(422, "invalid_input", f"query.before: {exc}") from None


@router.get("/{memory_id}", response_model=Memory, responses=NOT_FOUND)
def get_memory(user_id: User, memory_id: MemoryId, mx: Engine, reveal: bool = False) -> Any:
    """One memory. Vault secrets are masked unless `reveal=true`."""
    return mx.get(memory_id, user_id=user_id, reveal=reveal)


@router.patch("/{memory_id}", response_model=Memory, responses=NOT_FOUND)
def update_memory(user_id: User, memory_id: MemoryId, body: UpdateRequest, mx: Engine, actor: Actor,
                  response: Response) -> Any:
    """Change fields in place (the id stays); the change is a history event."""
    updated = mx.update(memory_id, body.fields, user_id=user_id, actor=actor)
    give_write_position(response, mx, user_id)
    return updated


@router.delete("/{memory_id}", response_model=list[MemoryChange], responses=NOT_FOUND)
def delete_memory(user_id: User, memory_id: MemoryId, mx: Engine, actor: Actor, response: Response,
                  erase: Annotated[bool, Query(description=(
                      "Also take the words of what goes out of the store: the history states of what it "
                      "deletes are emptied, those of what it changes rewritten without them, and an input "
                      "no turn or frame cites any more loses its text (`Mirix.delete`'s `erase`)."))] = False,
                  ) -> list[MemoryChange]:
    """Delete a memory. The changes made: the deletion first, then what a turn's deletion took back with
    it (the core lines, facts, procedures, resources and vault entries said in that turn alone);
    `?erase=true` erases their words too."""
    changes = mx.delete(memory_id, user_id=user_id, actor=actor, erase=erase)
    give_write_position(response, mx, user_id)
    return changes


@router.get("/{memory_id}/history", response_model=list[HistoryEvent], responses=NOT_FOUND)
def history(user_id: User, memory_id: MemoryId, mx: Engine) -> list[HistoryEvent]:
    """Every change to a memory (before, after, operation, actor, input), oldest first."""
    return mx.history(memory_id, user_id=user_id)
