"""SQLModel tables. The relational store is the source of truth; Chroma only mirrors it."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, Text, TypeDecorator
from sqlmodel import Field, SQLModel


class UTCDateTime(TypeDecorator):
    """Stores aware datetimes as UTC and always returns aware UTC (SQLite drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime reached the database")
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


class MemoryRow(SQLModel, table=True):
    """All six memory types share one table: one id space, one history, one full-text index.

    Type-specific fields live in `fields` (validated by the pydantic record of the type);
    `text` is the record's prompt/search text; vault secrets live only in `secret`, encrypted.
    A long field that appears verbatim in `text` is stored as a reference into it
    (`store.textrefs`): whatever rewrites `text` rewrites `fields` with it.
    """

    __tablename__ = "memory"
    __table_args__ = (
        Index("ix_memory_user_type_time", "user_id", "memory_type", "occurred_at"),
        # an input's memories of a type in time order: SQLite, without statistics, took the (user, type,
        # time) index for these and read every memory of the user's type when it had only (user, input)
        Index("ix_memory_user_input", "user_id", "input_id", "memory_type", "occurred_at"),
        Index("ix_memory_user_actor", "user_id", "actor"),
        Index("ix_memory_expires_at", "expires_at"),
    )

    id: str = Field(primary_key=True, max_length=64)
    user_id: str = Field(index=True, max_length=256)
    memory_type: str = Field(max_length=32)
    text: str = Field(sa_column=Column(Text, nullable=False))
    occurred_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    source_ids: list[str] = Field(default_factory=list, sa_type=JSON)
    tags: list[str] = Field(default_factory=list, sa_type=JSON)
    fields: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    secret: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    embedding_model: str | None = Field(default=None, max_length=128)
    input_id: str | None = Field(default=None, max_length=256,
                                 description="An episode's input (`store.sessions.input_of`): its session.")
    actor: str | None = Field(default=None, sa_column=Column(Text, nullable=True),
                              description="Who said an episode (None for the other types): the names a "
                                          "search's question may name (`MemoryStore.actors`).")
    expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime,
                                        description="Past it the memory is not read, and the sweep deletes it.")


class MemorySourceRow(SQLModel, table=True):
    """One id a memory cites (an input's, a message's, a caller's), so the memories citing an id are an
    index seek (`store.citations`), not a read of every memory of the user. Written by triggers on
    `memory`, in the transaction of each write, from `source_ids`, which stays the source of truth."""

    __tablename__ = "memory_source"
    __table_args__ = (Index("ix_memory_source_cited", "user_id", "source_id", "memory_type", "memory_id"),)

    memory_id: str = Field(primary_key=True, max_length=64)
    source_id: str = Field(primary_key=True, max_length=256,
                           description="A cited id of at most `citations.MAX_INDEXED_ID` characters.")
    user_id: str = Field(max_length=256)
    memory_type: str = Field(max_length=32)


class HistoryRow(SQLModel, table=True):
    """One change to one memory (before/after are masked record dumps). `after` is left empty and
    read from the next event or the row; an update's long texts in `before` are line patches
    against that state (`store.patches`). Read it through `MemoryStore.history()`."""

    __tablename__ = "memory_history"
    __table_args__ = (Index("ix_memory_history_user_input", "user_id", "input_id"),)  # what an input changed

    id: int | None = Field(default=None, primary_key=True)
    memory_id: str = Field(index=True, max_length=64)
    user_id: str = Field(index=True, max_length=256)
    memory_type: str = Field(max_length=32)
    operation: str = Field(max_length=16)
    before: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    after: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    actor: str = Field(max_length=128)
    input_id: str | None = Field(default=None, max_length=64)
    created_at: datetime = Field(sa_type=UTCDateTime)


class InputRow(SQLModel, table=True):
    """The input log. `payload` is the encrypted JSON of the messages: raw input may hold secrets."""

    __tablename__ = "input_log"
    __table_args__ = (Index("ix_input_status", "status", "created_at"),
                      Index("ix_input_user_kind_source", "user_id", "kind", "source_id"))  # `InputLog.by_source`

    id: str = Field(primary_key=True, max_length=64)
    user_id: str = Field(index=True, max_length=256)
    kind: str = Field(max_length=32)
    payload: str = Field(sa_column=Column(Text, nullable=False))
    source_id: str | None = Field(default=None, max_length=256)
    occurred_at: datetime = Field(sa_type=UTCDateTime)
    status: str = Field(max_length=16)
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    attempts: int = 0
    created_at: datetime = Field(sa_type=UTCDateTime)
    processed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    claimed_by: str | None = Field(default=None, max_length=128, description="worker processing it")
    claimed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    done_actors: list[str] = Field(default_factory=list, sa_type=JSON,
                                   description="managers whose writes for this input are committed")
    refused: list[str] = Field(default_factory=list, sa_type=JSON,
                               description="model writes refused for this input, with their reasons")


class SourceClaimRow(SQLModel, table=True):
    """A worker's claim on a source it reads before the input log holds it (a screenshot file in OCR):
    other workers skip the source while the claim is alive (`InputLog.claim_source`). The id is a hash of
    the user and the source (`source_claim_id`): neither a user nor a file name is kept outside the input log."""

    __tablename__ = "source_claim"

    id: str = Field(primary_key=True, max_length=64)
    claimed_by: str = Field(max_length=128)
    claimed_at: datetime = Field(sa_type=UTCDateTime)


class UsageRow(SQLModel, table=True):
    """LLM accounting of one batch or one chat, for `mirix stats`."""

    __tablename__ = "llm_usage"

    id: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(index=True, max_length=256)
    kind: str = Field(max_length=16)  # "update" | "chat"
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sequential_rounds: int = 0
    wall_seconds: float = 0.0
    created_at: datetime = Field(sa_type=UTCDateTime)


class VectorPendingRow(SQLModel, table=True):
    """A memory whose vector a committed write has yet to put into a vector index outside the SQL
    transaction (Chroma): marked in the write's transaction, cleared once the index has it, replayed
    at open and by `doctor --repair` when the process died in between (`store.vector_outbox`)."""

    __tablename__ = "vector_pending"

    write_id: str = Field(primary_key=True, max_length=32)
    memory_id: str = Field(primary_key=True, max_length=64)
    user_id: str = Field(max_length=256)
