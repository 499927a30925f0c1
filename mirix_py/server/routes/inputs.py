"""Inputs: where an accepted input stands."""

from typing import Annotated

from fastapi import APIRouter, Path as PathParam, Query, Response
from fastapi.responses import FileResponse

from mirix_py.boundary.sizes import MAX_OFFSET
from mirix_py.errors import InvalidInput, LaterChanges
from mirix_py.server.deps import Engine, User, give_write_position
from mirix_py.server.errors import ApiError
from mirix_py.server.limits import API_PREFIX
from mirix_py.records import AddResult, InputRecord, InputStatus, MemoryChange
from mirix_py.secrets.redaction import scrub
from mirix_py.store.inputs import InputPosition
from mirix_py.server.models import ErrorOut, InputStatusOut

router = APIRouter(prefix=f"{API_PREFIX}/users/{{user_id}}/inputs", tags=["memories"])


NEXT_CURSOR = "X-Mirix-Next-Cursor"
CURSOR_CHARS = 256  # a cursor of the longest input id is about 160


@router.get("", response_model=list[InputStatusOut], responses={
    200: {"headers": {NEXT_CURSOR: {"schema": {"type": "string"}, "description": (
        "The `before` of the next (older) page; absent when this page ends with the oldest input.")}}},
    422: {"model": ErrorOut, "description": "A bad query parameter, such as a cursor this listing did not give."}})
def list_inputs(user_id: User, mx: Engine, response: Response,
                status: Annotated[list[InputStatus] | None, Query(
                    max_length=6, description="Only inputs of these statuses (may repeat); all when omitted.")] = None,
                limit: Annotated[int, Query(ge=1, le=500, description="How many inputs a page holds.")] = 100,
                before: Annotated[str | None, Query(max_length=CURSOR_CHARS, description=(
                    "The previous page's `X-Mirix-Next-Cursor` header, as given: this page lists the inputs "
                    "after that page's last one, so none is listed twice or left out while inputs arrive, "
                    "are retried or are deleted between pages. Opaque; a cursor the listing did not give is "
                    "refused with 422. Omitted: the first page (the newest)."))] = None,
                offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description=(
                    "How many of the newest to skip (as the memories list), not with `before`. Kept for "
                    "older clients: an input logged between two pages shifts the next page by one, so it "
                    "repeats an input (a removed one makes it skip one); page with `before` instead."))] = 0,
                ) -> list[InputStatusOut]:
    """The user's input log, newest first, a page at a time, without contents: each input's status,
    why it failed or was degraded, and a screenshot's app and window (`metadata`). When older inputs
    exist, `X-Mirix-Next-Cursor` is the `before` of the next page."""
    try:
        records = mx.inputs.newest(user_id=user_id, statuses=status or list(InputStatus), limit=limit + 1,
                                   offset=offset, before=before)
    except InvalidInput as exc:
        raise ApiError(422, "invalid_input", f"query.before: {exc}") from None
    if len(records) > limit:  # one more than the page was read: older inputs exist
        response.headers[NEXT_CURSOR] = InputPosition.of(records[limit - 1]).cursor()
    return [_status_out(r) for r in records[:limit]]


def _status_out(record: InputRecord) -> InputStatusOut:
    """An input as listed: without its contents, and with a secret in its app or window title (a
    settings page's title, say) replaced by a placeholder, as in its memories."""
    data = record.model_dump(exclude={"messages"})
    data["metadata"] = {key: scrub(value) for key, value in record.metadata.items()}
    return InputStatusOut.model_validate(data)


@router.post("/retry", response_model=list[AddResult])
def retry_inputs(user_id: User, mx: Engine) -> list[AddResult]:
    """Run this user's failed and degraded inputs again (what the offline rules wrote in a model's
    place is replaced, not duplicated)."""
    return mx.retry_failed(user_id=user_id)


@router.get("/{input_id}", response_model=InputStatusOut)
def input_status(user_id: User, input_id: Annotated[str, PathParam(max_length=64)], mx: Engine,
                 response: Response) -> InputStatusOut:
    """Where an accepted input stands: pending, processing, processed or failed (with the reason).
    Once it is processed, `X-Mirix-Write-Position` is where a read on another process must be to see
    its memories (an add accepted with 202 has written none yet)."""
    try:
        record = mx.input_status(input_id, user_id=user_id)
    except InvalidInput:
        raise ApiError(404, "not_found", f"no input {input_id!r} for this user") from None
    if record.status in (InputStatus.processed, InputStatus.degraded):
        give_write_position(response, mx, user_id)
    return _status_out(record)


@router.get("/{input_id}/thumbnail", response_class=FileResponse,
            responses={200: {"content": {"image/webp": {}}, "description": "The frame's thumbnail."},
                       404: {"model": ErrorOut, "description": "None kept (or expired) for this input."}})
def input_thumbnail(user_id: User, input_id: Annotated[str, PathParam(max_length=64)], mx: Engine) -> FileResponse:
    """The small WebP kept of a screenshot input (`keep_thumbnails`, deleted after its retention);
    never the frame itself."""
    path = mx.screenshot_thumbnail(input_id, user_id=user_id)
    if path is None:
        raise ApiError(404, "not_found", f"no thumbnail kept for input {input_id!r}")
    return FileResponse(path, media_type="image/webp", headers={"Cache-Control": "private, max-age=3600"})


@router.post("/{input_id}/undo", response_model=list[MemoryChange], responses={422: {"model": ErrorOut}})
def undo_input(user_id: User, input_id: Annotated[str, PathParam(max_length=64)], mx: Engine,
               force: Annotated[bool, Query(description="Also overwrite the later changes to its memories.")] = False,
               ) -> list[MemoryChange]:
    """Revert every change this input caused: its inserts deleted, its updates and deletions restored.
    The reverts are history events (actor `undo:<input id>`). 422 when it changed nothing, was undone
    already, or (error `later_changes`, so a client can offer `force=true`) a memory it touched was
    changed later."""
    try:
        return mx.undo(input_id, user_id=user_id, force=force)
    except LaterChanges as exc:
        raise ApiError(422, "later_changes", str(exc)) from None
