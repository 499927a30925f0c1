"""REST request and response bodies. Records (memories, hits, results) come from `mirix_py.records`
unchanged; these models only add what a request needs on top, and reuse record fields where they exist."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from mirix_py.boundary.sizes import MAX_ADD_MESSAGES, MAX_MESSAGE_CHARS, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, MAX_SOURCE_ID_CHARS
from mirix_py.records import InputKind, InputStatus, MemoryType, Message, SearchMethod
from mirix_py.screens.activity import FrameGroup
from mirix_py.text import storable



def clean_text(value: str) -> str:
    """Reject control characters (a request's text is plain text) and what no backend stores alike
    (`text.storable`: a lone surrogate)."""
    if any(ch in storable.CONTROL for ch in value):
        raise ValueError("text holds control characters")
    found = storable.problem(value)
    if found:
        raise ValueError(f"text {found}")
    return value


def clean_value(value: Any, depth: int = 0) -> Any:
    """`clean_text` over a JSON value (update fields), with a nesting limit."""
    if depth > 8:
        raise ValueError("fields are nested too deeply")
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(k, depth + 1): clean_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v, depth + 1) for v in value]
    if isinstance(value, float) and value != value:
        raise ValueError("NaN is not a valid value")
    return value


def check_when(value: datetime | None) -> datetime | None:
    """An aware date-time that stays inside the calendar in UTC (what the database stores)."""
    if value is None:
        return None
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("date-time has no time zone; add one, e.g. 2024-05-01T10:00:00+00:00")
    try:
        value.astimezone(timezone.utc)
    except OverflowError as exc:
        raise ValueError("date-time is out of range once converted to UTC") from exc
    return value


Text = Annotated[str, AfterValidator(clean_text)]
When = Annotated[datetime, AfterValidator(check_when)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChatTurn(_Body):
    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS), AfterValidator(clean_text)]


class AddRequest(_Body):
    """Text, or a list of chat messages, to remember."""

    content: str | Annotated[list[Message], Field(min_length=1, max_length=MAX_ADD_MESSAGES)] = Field(
        description="Text, or chat messages ({role, content, name?, id?, occurred_at?}).")
    occurred_at: When | None = Field(default=None, description="When it happened (ISO 8601 with zone); now if unset.")
    source_id: Annotated[str, Field(min_length=1, max_length=MAX_SOURCE_ID_CHARS), AfterValidator(clean_text)] | None = Field(
        default=None, description="Caller id kept as provenance in source_ids; not of the engine's input ids' "
                          "form ('in_' and 32 hex digits).")
    kind: Literal["text", "document"] = "text"
    wait: bool = Field(default=False, description="Process before answering (200 with the changes) instead of "
                                                  "accepting it for background processing (202).")
    expires_at: When | None = Field(default=None, description=(
        "When the memories made from it expire (ISO 8601 with zone, in the future): past it they are not read, "
        "and are deleted. Core blocks and what other inputs also said are kept."))

    @field_validator("content")
    @classmethod
    def _clean_messages(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("content is empty")
            clean_text(value)
        if isinstance(value, list):
            for message in value:
                for text in (message.content, message.name, message.id):
                    if text is not None:
                        clean_text(text)
                check_when(message.occurred_at)
        return value


class SearchRequest(_Body):
    query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS), AfterValidator(clean_text)]
    limit: int = Field(default=10, ge=1, le=MAX_SEARCH_LIMIT)
    memory_types: list[MemoryType] | None = Field(default=None, max_length=6)
    start: When | None = Field(default=None, description="occurred_at >= start")
    end: When | None = Field(default=None, description="occurred_at < end")
    method: SearchMethod = SearchMethod.hybrid
    context: int | None = Field(default=None, ge=0, le=20, description=(
        "The turns said just before and after each of the first N matches (marked `context_for`, not counted in "
        "`limit`); the server's `search_context` when omitted, 0 for the matches only."))


class ChatRequest(_Body):
    message: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS), AfterValidator(clean_text)]
    history: list[ChatTurn] = Field(default_factory=list, max_length=50)
    remember: bool = Field(default=True, description="Feed the exchange back into memory.")


class ContextRequest(_Body):
    message: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS), AfterValidator(clean_text)]
    max_items: int = Field(default=10, ge=1, le=50, description=(
        "Matches put into the context; the turns said around the first of them (the server's `search_context`) "
        "follow their match and are not counted."))


class UpdateRequest(_Body):
    fields: Annotated[dict[str, Any], Field(min_length=1, max_length=50), AfterValidator(clean_value)] = Field(
        description="Type-specific or common fields to change, e.g. {\"summary\": \"...\"}; the id stays.")


class CoreRewriteRequest(_Body):
    value: Annotated[str, Field(max_length=100_000), AfterValidator(clean_text)]


class CoreAppendRequest(_Body):
    text: Annotated[str, Field(min_length=1, max_length=100_000), AfterValidator(clean_text)]


class InputStatusOut(BaseModel):
    """An input log entry without its content: where processing stands."""

    id: str
    user_id: str
    kind: InputKind
    status: InputStatus
    error: str | None = None
    attempts: int = 0
    source_id: str | None = None
    occurred_at: datetime
    created_at: datetime
    processed_at: datetime | None = None
    metadata: dict[str, str] = Field(default_factory=dict)


class DeletedUser(BaseModel):
    user_id: str
    deleted: dict[str, int]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    mode: Literal["offline", "llm"]
    database: str
    replica_behind_bytes: int | None = Field(
        default=None, description="With a read replica: bytes of the primary's log it has not replayed yet "
                                  "(0: caught up); null without one.")
    max_input_chars: int = Field(description=(
        "The most characters one add takes (MIRIX_MAX_INPUT_CHARS): a client splits longer text to fit."))
    max_body_bytes: int = Field(description=(
        "The largest JSON request body in bytes (--max-body); larger get 413 before they are read."))


class Me(BaseModel):
    key_id: str
    users: list[str]
    admin: bool


class UsersOut(BaseModel):
    users: list[str]
    all_users: bool = Field(description="True when the key may act for every user (the list is those with data).")


class CreateKeyRequest(_Body):
    users: list[Annotated[str, Field(min_length=1, max_length=256), AfterValidator(clean_text)]] = Field(
        min_length=1, max_length=1000)
    name: Annotated[str, Field(max_length=200), AfterValidator(clean_text)] = ""
    admin: bool = False


class ErrorOut(BaseModel):
    error: str = Field(description="A short code: invalid_input, not_found, unauthorized, forbidden, ...")
    message: str
    detail: Any = None


REST_MODELS: dict[str, type[BaseModel]] = {
    "rest_add_request": AddRequest,
    "rest_search_request": SearchRequest,
    "rest_chat_request": ChatRequest,
    "rest_context_request": ContextRequest,
    "rest_update_request": UpdateRequest,
    "rest_core_rewrite_request": CoreRewriteRequest,
    "rest_core_append_request": CoreAppendRequest,
    "rest_create_key_request": CreateKeyRequest,
    "rest_input_status": InputStatusOut,
    "rest_frame_group": FrameGroup,
    "rest_error": ErrorOut,
}
"""REST bodies written to schemas/ beside the records (`mirix schemas export`)."""
