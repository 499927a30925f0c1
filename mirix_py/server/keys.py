"""API keys: stored hashed, compared in constant time, each bound to the users it may act for.

A key looks like `mxk_<key id>.<secret>`. Only the SHA-256 of the whole key is stored; the key id
finds the row and `hmac.compare_digest` compares the hashes, so neither the lookup nor the compare
leaks how much of a guessed secret was right. The key itself is shown once, when it is created.

`users` lists the user ids a key may read and change; `["*"]` means every user. An `admin` key
may also create, list and revoke keys over REST. Keys live in the same SQL database as the
memories (table `api_key`), so `mirix keys ...` and the server see the
same set.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Sequence

from pydantic import BaseModel, Field as PField
from sqlalchemy import JSON, Boolean, Column, MetaData, String, Table, insert, select, update
from sqlalchemy.engine import Engine

from mirix_py.boundary.inputs import PATH_STEPS
from mirix_py.errors import InvalidInput
from mirix_py.records import utcnow
from mirix_py.store.tables import UTCDateTime
from mirix_py.text.storable import id_problem

KEY_PREFIX = "mxk_"
ALL_USERS = "*"
# Its own MetaData: queried with SQLAlchemy Core. `KeyStore` brings the engine's schema up to date
# first (so a key made before the first `mirix serve` leaves a database the migrations recognise),
# then creates this table if that did not.
KEY_METADATA = MetaData()
api_key_table = Table(
    "api_key", KEY_METADATA,
    Column("id", String(40), primary_key=True),
    Column("name", String(200), nullable=False, default=""),
    Column("key_hash", String(64), nullable=False),
    Column("users", JSON, nullable=False),
    Column("admin", Boolean, nullable=False, default=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
)


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

    def may_manage(self, users: Iterable[str]) -> bool:
        """An admin key manages keys only inside its own users: one bound to some users cannot make,
        see or revoke a key for anyone else, nor one for every user."""
        return self.admin and (self.all_users or set(users) <= self.users)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def check_user_id(user_id: str) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInput("user id is empty")
    if len(user_id) > 256:
        raise InvalidInput("user id is longer than 256 characters")
    if user_id != ALL_USERS and (found := id_problem(user_id)):
        raise InvalidInput(f"user id {found}")
    if user_id in PATH_STEPS:
        raise InvalidInput(f"user id {user_id!r} is a path step, not an id (a URL cannot name it)")
    return user_id


def _info(row: Any) -> ApiKeyInfo:
    return ApiKeyInfo(id=row.id, name=row.name, users=list(row.users), admin=bool(row.admin),
                      created_at=row.created_at, revoked_at=row.revoked_at)


SESSION_KEY_ID = "session"


class KeyStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._session_hash: str | None = None  # a key for this server run only (`session_key`)
        from mirix_py.store.db import create_schema

        create_schema(engine)  # the engine's schema (its migrations include this table) ...
        KEY_METADATA.create_all(engine, checkfirst=True)  # ... and the table itself where they do not

    def create(self, users: Sequence[str], *, name: str = "", admin: bool = False) -> CreatedKey:
        users = sorted({check_user_id(u.strip()) for u in users})
        if not users:
            raise InvalidInput("a key needs at least one user (or '*' for every user)")
        if len(name) > 200:
            raise InvalidInput("key name is longer than 200 characters")
        if id_problem(name):
            raise InvalidInput("key name holds control characters or line separators")
        key_id = uuid.uuid4().hex[:16]
        key = f"{KEY_PREFIX}{key_id}.{secrets.token_urlsafe(32)}"
        values: dict[str, Any] = {"id": key_id, "name": name, "key_hash": hash_key(key), "users": users, "admin": admin,
                  "created_at": utcnow(), "revoked_at": None}
        with self.engine.begin() as conn:
            conn.execute(insert(api_key_table).values(**values))
        return CreatedKey(key=key, info=ApiKeyInfo(**{k: v for k, v in values.items() if k != "key_hash"}))

    def session_key(self) -> str:
        """A key for every user, valid while this `KeyStore` lives and never stored in the database:
        a server writes it to its data dir's `server.json` (0600) for local processes such as
        `mirix mcp` (`store/discovery.py`). One per store; asking again replaces it."""
        key = f"{KEY_PREFIX}{SESSION_KEY_ID}.{secrets.token_urlsafe(32)}"
        self._session_hash = hash_key(key)
        return key

    def verify(self, key: str | None) -> Principal | None:
        """The principal of a valid, unrevoked key; None for anything else."""
        if not key or not key.startswith(KEY_PREFIX) or "." not in key or len(key) > 200:
            return None
        key_id = key[len(KEY_PREFIX):].split(".", 1)[0]
        if key_id == SESSION_KEY_ID:
            valid = self._session_hash is not None and hmac.compare_digest(hash_key(key), self._session_hash)
            return Principal(key_id=SESSION_KEY_ID, users=frozenset({ALL_USERS})) if valid else None
        with self.engine.connect() as conn:
            row = conn.execute(select(api_key_table).where(api_key_table.c.id == key_id)).first()
        presented = hash_key(key)
        stored = row.key_hash if row is not None else hash_key(secrets.token_hex(16))
        if not hmac.compare_digest(presented, stored) or row is None or row.revoked_at is not None:
            return None
        return Principal(key_id=row.id, users=frozenset(row.users), admin=bool(row.admin))

    def list(self, *, include_revoked: bool = False) -> list[ApiKeyInfo]:
        query = select(api_key_table).order_by(api_key_table.c.created_at)
        if not include_revoked:
            query = query.where(api_key_table.c.revoked_at.is_(None))
        with self.engine.connect() as conn:
            return [_info(r) for r in conn.execute(query)]

    def get(self, key_id: str) -> ApiKeyInfo | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(api_key_table).where(api_key_table.c.id == key_id)).first()
        return None if row is None else _info(row)

    def revoke(self, key_id: str) -> bool:
        """Revoke a key; False when there is no such (unrevoked) key."""
        with self.engine.begin() as conn:
            done = conn.execute(update(api_key_table).where(api_key_table.c.id == key_id,
                                                            api_key_table.c.revoked_at.is_(None))
                                .values(revoked_at=utcnow()))
            return done.rowcount == 1
