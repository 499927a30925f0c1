"""Opening a data dir's store: the database with its schema migrated, the vault key, the vector
index the settings choose (`store.vector_layout`), and the memory store and input log over them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sqlalchemy.engine import Engine

from mirix_py.store.crypto import Cipher, load_or_create_key
from mirix_py.store.db import create_schema, make_engine
from mirix_py.store.embeddings import Embedder
from mirix_py.secrets.guard import SecretGuard
from mirix_py.store.fulltext import FullTextIndex
from mirix_py.store.inputs import InputLog
from mirix_py.store.memories import MemoryStore
from mirix_py.store.pg_fulltext import PostgresFullText
from mirix_py.store.sqlite_fulltext import SQLiteFullText
from mirix_py.store.vector_layout import open_vector_index


@dataclass
class OpenStore:
    engine: Engine
    memories: MemoryStore
    inputs: InputLog


def fulltext_for(engine: Engine) -> FullTextIndex:
    """The full-text index of this engine's database."""
    return PostgresFullText() if engine.dialect.name == "postgresql" else SQLiteFullText()


def open_store(sql_url: str, data_dir: Path, *, sqlite_driver: str, vault_key: str | None, embedder: Embedder | None,
               vector_store: str, chroma_url: str | None, guard: SecretGuard,
               redact: Callable[[str], str]) -> OpenStore:
    """`guard` keeps secrets out of every memory written; `redact` out of the input log's plain columns."""
    engine = make_engine(sql_url, sqlite_driver)
    create_schema(engine)
    cipher = Cipher(load_or_create_key(data_dir, vault_key))
    vectors = open_vector_index(engine, requested=vector_store, chroma_url=chroma_url,
                                chroma_dir=data_dir / "chroma", embedder=embedder)
    memories = MemoryStore(engine, fulltext_for(engine), cipher, vectors, embedder, guard=guard)
    return OpenStore(engine, memories, InputLog(engine, cipher, redact=redact))
