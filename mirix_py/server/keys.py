"""API keys: stored hashed, compared in constant time, each bound to the users it may act for.

A key looks like `mxk_<key id>.<secret>`. Only the SHA-256 of the whole key is stored; the key id
finds the row and `hmac.compare_digest` compares the hashes, so neither the lookup nor the compare
leaks how much of a guessed secret was right. The key itself is shown once, when it is created.

`users` lists the user ids a key may read and change; `["*"]` means every user. An `admin` key
may also create, list and revoke keys over REST. Keys live in the same SQL database as the
memories (table `api_key`), so `mirix keys ...` and the server see the same set.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from pydantic import BaseModel, Field as PField
from sqlalchemy import JSON, select
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel

from mirix_py.errors import InvalidInput
from mirix_py.records import utcnow
from mirix_py.store.tables import UTCDateTime

KEY_PREFIX = "mxk_"
ALL_USERS = "*"
_CONTROL = {chr(c) for c in range(32)} | {"\x7f"}


class ApiKeyRow(SQLModel, table=True):
    __tablename__ = "api_key"

    id: str = Field(primary_key=True, max_length=40)
    name: str = Field(default="", max_length=200)
    key_hash: str = Field(max_length=64)
    users: list[str] = Field(default_factory=list, sa_type=JSON)
    admin: bool = False
    created_at: datetime = Field(sa_type=UTCDateTime)
    revoked_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class ApiKeyInfo(BaseModel):
    """A key as it is listed: never the key itself."""

    id: str
    name: str = ""
    users: list[str] = PField(description="User ids this key may act for; '*' means every user.")
    admin: bool = False
    created_at: datetime
    revoked_at: datetime | None = None


class CreatedKey(BaseModel):
    key: str = PField(description="The API key. Shown once: only its hash is stored.")
    info: ApiKeyInfo


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's id, the users it may act for, and whether it is an admin key."""

    key_id: str
    users: frozenset[str]
    admin: bool = False

    @property
    def all_users(self) -> bool:
        return ALL_USERS in self.users

    def may_act_for(self, user_id: str) -> bool:
        return self.all_users or user_id in self.users


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def check_user_id(user_id: str) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInput("user id is empty")
    if len(user_id) > 256:
        raise InvalidInput("user id is longer than 256 characters")
    if user_id != ALL_USERS and any(ch in _CONTROL or "\ud800" <= ch <= "\udfff" for ch in user_id):
        raise InvalidInput("user id holds control characters")
    return user_id


def _info(row: ApiKeyRow) -> ApiKeyInfo:
    return ApiKeyInfo(id=row.id, name=row.name, users=list(row.users), admin=row.admin, created_at=row.created_at,
                      revoked_at=row.revoked_at)


class KeyStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        ApiKeyRow.__table__.create(engine, checkfirst=True)  # type: ignore[attr-defined]

    def create(self, users: Sequence[str], *, name: str = "", admin: bool = False) -> CreatedKey:
        users = sorted({check_user_id(u.strip()) for u in users})
        if not users:
            raise InvalidInput("a key needs at least one user (or '*' for every user)")
        if len(name) > 200:
            raise InvalidInput("key name is longer than 200 characters")
        key_id = uuid.uuid4().hex[:16]
        key = f"{KEY_PREFIX}{key_id}.{secrets.token_urlsafe(32)}"
        row = ApiKeyRow(id=key_id, name=name, key_hash=hash_key(key), users=users, admin=admin, created_at=utcnow())
        with Session(self.engine) as session:
            session.add(row)
            session.commit()
            session.refresh(row)
            return CreatedKey(key=key, info=_info(row))

    def verify(self, key: str | None) -> Principal | None:
        """The principal of a valid, unrevoked key; None for anything else."""
        if not key or not key.startswith(KEY_PREFIX) or "." not in key or len(key) > 200:
            return None
        key_id = key[len(KEY_PREFIX):].split(".", 1)[0]
        with Session(self.engine) as session:
            row = session.get(ApiKeyRow, key_id)
            presented = hash_key(key)
            stored = row.key_hash if row is not None else hash_key(secrets.token_hex(16))
            if not hmac.compare_digest(presented, stored) or row is None or row.revoked_at is not None:
                return None
            return Principal(key_id=row.id, users=frozenset(row.users), admin=row.admin)

    def list(self, *, include_revoked: bool = False) -> list[ApiKeyInfo]:
        query = select(ApiKeyRow).order_by(ApiKeyRow.created_at)
        if not include_revoked:
            query = query.where(ApiKeyRow.revoked_at.is_(None))  # type: ignore[union-attr]
        with Session(self.engine) as session:
            return [_info(r) for r in session.execute(query).scalars().all()]

    def get(self, key_id: str) -> ApiKeyInfo | None:
        with Session(self.engine) as session:
            row = session.get(ApiKeyRow, key_id)
            return None if row is None else _info(row)

    def revoke(self, key_id: str) -> bool:
        """Revoke a key; False when there is no such (unrevoked) key."""
        with Session(self.engine) as session:
            row = session.get(ApiKeyRow, key_id)
            if row is None or row.revoked_at is not None:
                return False
            row.revoked_at = utcnow()
            session.add(row)
            session.commit()
            return True
