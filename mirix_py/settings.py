"""Engine settings: one pydantic model, filled from arguments or the environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from mirix_py.text.small_talk import WHOLE_HITS

PromptOrder = Literal["batch_first", "instructions_first"]


# The turns around the first N matches that every search for a reader returns (SDK, REST, chat, `/context`,
# MCP, AutoGen, `mirix search`) and that `mirix eval locomo` measures. 0: on LoCoMo dev at 750 words no
# other setting gained without losing in a held-out conversation, and each turn of context costs words at
# small budgets (benchmarks/README.md, "One search default").
SEARCH_CONTEXT = 0


def default_data_dir() -> Path:
    return Path(os.environ.get("MIRIX_DATA_DIR", Path.home() / ".mirix"))


class Settings(BaseModel):
    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = Field(default=None, description="SQLAlchemy URL; SQLite under data_dir when unset.")
    database_read_url: str | None = Field(
        default=None, description="A read-only PostgreSQL URL, a streaming replica of database_url: searches, chat's "
                                  "retrieval and /context read from it; writes, get, list and ingestion's own "
                                  "searches stay on database_url. Unset: everything on database_url.")
    read_your_writes: bool = Field(
        default=True, description="With database_read_url: a user's searches read database_url until the replica "
                                  "has replayed that user's last write through this engine, so a caller never "
                                  "misses its own write. Off: every search reads the replica, as far as it has "
                                  "replayed.")
    chroma_url: str | None = Field(default=None, description="http://host:port of a Chroma server; embedded when unset.")
    vector_store: str = Field(default="auto", pattern="^(auto|chroma|pgvector)$",
                              description="'pgvector' (vectors in the PostgreSQL database), 'chroma', or 'auto': "
                                          "pgvector on a PostgreSQL database with the extension and no Chroma URL.")
    embedder: str = Field(default="minilm", description="'minilm' (offline; 'minilm:onnx' or 'minilm:torch' picks its runtime, 'minilm:int8' its int8 graph), "
                          "'openai:<model>', or 'none'.")
    fact_parser: str = Field(default="spacy", pattern="^(spacy|none)$",
                             description="What the offline rules also read facts with: 'spacy' (a dependency parse, "
                                         "when mirix-py[parser] is installed) or 'none' (the patterns alone).")
    vault_key: str | None = Field(default=None, description="Fernet key; else MIRIX_VAULT_KEY; else data_dir/vault.key.")
    sqlite_driver: str = Field(default="auto", pattern="^(auto|pysqlite3|stdlib)$",
                               description="The SQLite library of a SQLite database: 'pysqlite3' (pysqlite3-binary's "
                                           "newer SQLite, faster full-text ranking), 'stdlib' (Python's sqlite3), "
                                           "or 'auto': pysqlite3 where installed.")
    max_input_chars: int = Field(default=200_000, gt=0)
    batch_size: int = Field(default=8, gt=0, description="Queued inputs of one user processed as one batch.")
    batch_seconds: float = Field(default=2.0, ge=0, description="How long a queued input may wait for its batch.")
    session_leg: bool = Field(default=False, description="Hybrid search also ranks whole sessions (each input's "
                                                         "episodes) as a third leg (`store.search`); off: it did "
                                                         "not gain in every LoCoMo conversation (benchmarks/README.md).")
    name_legs: bool = Field(default=True, description="A hybrid search whose query names people the memory heard "
                                                      "from is also run without the names (`store.names`); off: "
                                                      "one pair of legs per search.")
    whole_hits: int = Field(default=WHOLE_HITS, ge=0, description=(
        "A search's first hits shown as said; the chat turns after them are shown without their small talk "
        "(sentences of fewer than two content words, `text.small_talk`), and to a question asking for one moment "
        "(when, how long, what date, which first) as their sentences that share a word with it (`text.moments`), "
        "so a reader's context holds more of the ranking. A number at least the search's limit shows every hit "
        "whole; `hit.memory` is always whole."))
    search_context: int = Field(default=SEARCH_CONTEXT, ge=0, le=20, description=(
        "Turns said just before and after each of the first N matches that a search for a reader returns "
        "(`Mirix.search`, REST, chat, `/context`, MCP, AutoGen, `mirix search`) unless the call passes `context`; "
        "0: the matches only."))
    timezone: str | None = Field(default=None, description="IANA zone times are shown in (e.g. 'Europe/Lisbon'); "
                                                           "this machine's when unset. Times are stored in UTC.")
    llm_provider: str | None = None
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_timeout_s: float = Field(default=120.0, gt=0, description="Seconds one model call may take.")
    llm_max_tokens: int = Field(default=512, gt=0,
                                description="Completion tokens per call unless an agent's `model.max_tokens` says.")
    llm_seed: int | None = Field(default=None, description=(
        "Sampling seed sent with every model call (OpenAI's `seed`; llama-cpp-python seeds its sampler with it). "
        "It fixes the sampler's draws, not the arithmetic: a server that reuses its last prompt's state may still "
        "answer one prompt differently at a temperature above 0. Unset: the server's own."))
    llm_max_managers: int = Field(
        default=3, ge=1, le=6,
        description="Memory managers one batch may run when the router picks more: the types the batch's form "
                    "offers first (vault, procedures, resources), then episodes, facts, core last.")
    llm_prompt_order: PromptOrder = Field(
        default="batch_first",
        description="Where the batch sits in each agent's prompt: batch_first (first, the same start for every "
                    "agent of a batch: a server that keeps its last prompt's state, such as llama-cpp-python or "
                    "Ollama, reads it once a batch) or instructions_first (each agent's instructions first: for a "
                    "server caching many prompts' prefixes, such as vLLM).")
    llm_memories_shown: Literal["sources", "keys", "none", "own_words"] = Field(
        default="keys",
        description="How a reader of a built context (the chat, `/context`, the framework adapters' contexts) is handed a "
                    "memory a model wrote from turns that memory keeps word for word: sources (the turns it "
                    "cites, in the speakers' words, in its place), keys (those turns in its place but no more "
                    "memories than the other hits: the lowest ranked give way), none (not at all: a reader gets what "
                    "the rules kept, as without a model) or own_words (the model's text). `search` and the "
                    "memory tools built on it return the model's memories whatever this says.")
    llm_structured_output: str = Field(
        default="auto", pattern="^(auto|json_schema|json_object_schema|none)$",
        description="How text-mode replies are constrained: json_schema (OpenAI, vLLM), json_object_schema "
                    "(llama-cpp-python), none, or auto (try them in that order, keep what the server takes).")

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        """Held as an absolute path: the database, the vectors and the vault key are opened again
        later (a new connection, a new thread), and a relative path would then follow the process's
        working directory to another place."""
        return value.expanduser().absolute()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        """A zone name that does not exist is refused when the settings are made, not at first display."""
        if value:
            from mirix_py.boundary.timezones import display_zone

            display_zone(value)
        return value or None

    @model_validator(mode="after")
    def _replica_of_postgres(self) -> "Settings":
        """A read URL is a replica of a PostgreSQL primary: SQLite has no replicas, and one engine's
        rows read from another kind of database would not be the same rows."""
        if self.database_read_url:
            for name, url in (("database_url", self.database_url), ("database_read_url", self.database_read_url)):
                if not (url or "").startswith("postgresql"):
                    raise ValueError(f"database_read_url (MIRIX_DATABASE_READ_URL) is a PostgreSQL replica of a "
                                     f"PostgreSQL database_url; {name} is {'unset' if not url else 'not PostgreSQL'}")
        return self

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        env = os.environ
        values: dict[str, Any] = {  # strings from the environment: the model parses them
            "database_url": env.get("MIRIX_DATABASE_URL"),
            "database_read_url": env.get("MIRIX_DATABASE_READ_URL"),
            "read_your_writes": env.get("MIRIX_READ_YOUR_WRITES") or None,
            "chroma_url": env.get("MIRIX_CHROMA_URL"),
            "vector_store": env.get("MIRIX_VECTOR_STORE") or None,
            "embedder": env.get("MIRIX_EMBEDDER", "minilm"),
            "vault_key": env.get("MIRIX_VAULT_KEY"),
            "llm_provider": env.get("MIRIX_LLM_PROVIDER"),
            "llm_model": env.get("MIRIX_LLM_MODEL"),
            "llm_base_url": env.get("MIRIX_LLM_BASE_URL"),
            "timezone": env.get("MIRIX_TIMEZONE"),
            "session_leg": env.get("MIRIX_SESSION_LEG") or None,
            "name_legs": env.get("MIRIX_NAME_LEGS") or None,
            "sqlite_driver": env.get("MIRIX_SQLITE_DRIVER") or None,
            "fact_parser": env.get("MIRIX_FACT_PARSER") or None,
            "search_context": env.get("MIRIX_SEARCH_CONTEXT") or None,
            "whole_hits": env.get("MIRIX_WHOLE_HITS") or None,
        }
        for key, name in (("llm_timeout_s", "MIRIX_LLM_TIMEOUT"), ("llm_max_tokens", "MIRIX_LLM_MAX_TOKENS"),
                          ("llm_structured_output", "MIRIX_LLM_STRUCTURED_OUTPUT"),
                          ("llm_max_managers", "MIRIX_LLM_MAX_MANAGERS"),
                          ("llm_prompt_order", "MIRIX_LLM_PROMPT_ORDER"), ("llm_seed", "MIRIX_LLM_SEED"),
                          ("llm_memories_shown", "MIRIX_LLM_MEMORIES_SHOWN")):
            if env.get(name):
                values[key] = env[name]
        if env.get("MIRIX_MAX_INPUT_CHARS"):
            values["max_input_chars"] = int(env["MIRIX_MAX_INPUT_CHARS"])
        values = {k: v for k, v in values.items() if v is not None}
        given = {k: v for k, v in overrides.items() if v is not None}
        if given.get("database_url", values.get("database_url")) != values.get("database_url"):
            # the environment's replica follows the environment's database, not one named in code
            values.pop("database_read_url", None)
        values.update(given)
        return cls(**values)

    @property
    def sql_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'mirix.db'}"

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_provider or self.llm_model)
