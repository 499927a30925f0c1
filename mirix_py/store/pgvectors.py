"""Vector index in PostgreSQL with pgvector: one table beside `memory`, written in the same
transaction as the rows.

`memory_vector(memory_id, user_id, memory_type, embedding)` references `memory(id)` ON DELETE
CASCADE, so a deleted memory (or user) takes its vector with it in the same commit, and a memory's
row, full-text entry and vector commit together: SQL and vectors cannot disagree after a crash.
The column gets the embedder's dimension on first use (`ensure`), with an HNSW index for cosine
distance. Searches are scoped by user with a plain WHERE clause: PostgreSQL scans a tenant exactly
through the B-tree on (user_id, memory_type) while that is cheaper, and uses the graph for large
tenants, where pgvector 0.8's iterative index scan (`hnsw.iterative_scan`) keeps walking until
enough rows pass the filter (recall measured in benchmarks/tenant_recall.py). A user with
`TENANT_INDEX_MIN` vectors or more can have a graph of their own (`index_tenant`, built by `mirix
doctor --repair`): a partial HNSW index on `user_id = '<user>'` over the vectors in half precision
(`embedding::halfvec`). Their queries order by that expression, which the shared graph cannot serve,
so the planner walks their own graph instead of filtering the shared one (a plain partial index it
passed over for a user of half the rows); the candidates are then ranked by the exact distance.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import TYPE_CHECKING, Sequence

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection, Engine

from mirix_py.errors import DependencyMissing
from mirix_py.store.vectors import VectorItem, lost_in_results

if TYPE_CHECKING:
    from mirix_py.store.vectors import TransactionalVectorIndex

log = logging.getLogger("mirix_py.store")

TABLE = "memory_vector"
HNSW_INDEX = "ix_memory_vector_hnsw"
TENANT_INDEX_PREFIX = "ix_memory_vector_t_"
TENANT_INDEX_MIN = 20_000  # vectors a user holds before a graph of their own pays (benchmarks/docs/layouts.md)
TENANT_BUILD_MEMORY = "512MB"  # maintenance_work_mem while a tenant's graph is built: 100k x 384-d fits
TENANT_CACHE_S = 30.0  # which users have a graph of their own, as this process last read it
# Set once per pooled connection (`apply_settings`). Iterative scans may return rows slightly out of order
# (`relaxed_order`); `query` re-sorts them. Where the planner uses the shared graph, a plain post-filter
# loses most of a tenant's true top 10 and iterative scans recover it (figures: docs/scaling.md,
# benchmarks/docs/layouts.md).
QUERY_SETTINGS = {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "200",
                  "hnsw.max_scan_tuples": "20000"}

# Always: a plan per query, never psycopg's prepared generic plan. A generic plan cannot see which
# user is asked for, so after five searches on a connection PostgreSQL may use one plan for a user
# of 300 vectors and one of 100k alike (the graph for the first, an exact scan for the second).
SESSION_SETTINGS = {"plan_cache_mode": "force_custom_plan"}
SETTINGS_KEY = "mirix_pgvector_settings"


class PgVectorUnavailable(DependencyMissing):
    """The database cannot hold a pgvector index (not PostgreSQL, or no `vector` extension)."""


_DDL_LOCK = text("SELECT pg_advisory_xact_lock(hashtext('mirix memory_vector ddl'))")  # until commit


def vector_literal(embedding: Sequence[float]) -> str:
    """pgvector's text form: '[0.1,0.2,...]' (repr keeps every float32 digit)."""
    return "[" + ",".join(repr(float(x)) for x in embedding) + "]"


def parse_vector(value: str | Sequence[float]) -> list[float]:
    if isinstance(value, str):
        return [float(x) for x in value.strip("[]").split(",") if x]
    return [float(x) for x in value]


def has_extension(conn: Connection) -> bool:
    """True when the `vector` extension is installed in this database."""
    if conn.dialect.name != "postgresql":
        return False
    return bool(conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).scalar())


def create_table(conn: Connection) -> None:
    """The table without a fixed dimension (the migration runs before any embedder is known)."""
    conn.execute(text(f"""
        CREATE TABLE IF NOT EXISTS {TABLE} (
            memory_id varchar(64) PRIMARY KEY REFERENCES memory(id) ON DELETE CASCADE,
            user_id varchar(256) NOT NULL,
            memory_type varchar(32) NOT NULL,
            embedding vector NOT NULL
        )"""))
    conn.execute(text(f"CREATE INDEX IF NOT EXISTS ix_memory_vector_user_type ON {TABLE} (user_id, memory_type)"))


def tenant_index_name(user_id: str) -> str:
    return TENANT_INDEX_PREFIX + hashlib.sha1(user_id.encode()).hexdigest()[:24]


def sql_literal(value: str) -> str:
    """A string as an SQL literal, for DDL that takes no parameters (an index predicate)."""
    if "\x00" in value:
        raise ValueError("a NUL character cannot be stored in PostgreSQL text")
    return "'" + value.replace("'", "''") + "'"


def column_dimension(conn: Connection) -> int | None:
    """The embedding column's fixed dimension, None while it has none."""
    typmod = conn.execute(text(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = CAST(:t AS regclass) AND attname = 'embedding'"),
        {"t": TABLE}).scalar()
    return None if typmod is None or typmod < 0 else int(typmod)


class PgVectorIndex:
    """Same interface as `ChromaVectorIndex`, plus `write()` inside the caller's transaction."""

    kind = "pgvector"
    transactional = True  # MemoryStore writes vectors in the transaction of the rows

    def __init__(self, engine: Engine, settings: dict[str, str] | None = None, *, read_only: bool = False) -> None:
        """`read_only`: the engine is a replica's (`Settings.database_read_url`), for queries only: the
        table, the extension and the index are the primary's, which the replica follows (and may not
        have replayed yet when both start), so nothing is asked of it here; set `dimension` from the
        primary's index."""
        if engine.dialect.name != "postgresql":
            raise PgVectorUnavailable("pgvector needs a PostgreSQL database (MIRIX_DATABASE_URL)")
        self.engine = engine
        self.settings = dict(QUERY_SETTINGS if settings is None else settings)
        self.dimension: int | None = None
        self._graphs: tuple[float, frozenset[str]] = (-TENANT_CACHE_S, frozenset())
        if read_only:
            return
        with engine.begin() as conn:
            conn.execute(_DDL_LOCK)  # engines opening one new database at once: one creates the extension
            if not has_extension(conn):
                try:
                    with conn.begin_nested():
                        conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
                except Exception as exc:  # no such extension on the server, or no right to create it
                    raise PgVectorUnavailable(
                        f"the database has no pgvector extension and it could not be created ({exc}); "
                        "run `CREATE EXTENSION vector` as an administrator or choose MIRIX_VECTOR_STORE=chroma") from exc
            create_table(conn)
            self.dimension = column_dimension(conn)

    # ------------------------------------------------------------ schema

    def ensure(self, dim: int) -> None:
        """Fix the column to `dim` and build the HNSW index. Vectors of another dimension (another
        embedder) are dropped: their rows read as missing to `doctor`, which re-embeds them."""
        if dim <= 0:
            raise ValueError("embedding dimension must be positive")
        with self.engine.begin() as conn:
            conn.execute(_DDL_LOCK)
            current = column_dimension(conn)
            if current != dim:
                if current is not None:
                    log.warning("embedder dimension changed (%s -> %s): dropping the old vectors", current, dim)
                conn.execute(text(f"DROP INDEX IF EXISTS {HNSW_INDEX}"))
                for name in self._tenant_indexes(conn):  # cast to the old dimension: they cannot stay
                    conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
                if current is not None:
                    conn.execute(text(f"DELETE FROM {TABLE}"))
                else:
                    conn.execute(text(f"DELETE FROM {TABLE} WHERE vector_dims(embedding) <> :d"), {"d": dim})
                conn.execute(text(f"ALTER TABLE {TABLE} ALTER COLUMN embedding TYPE vector({dim})"))
            conn.execute(text(f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON {TABLE} "
                              "USING hnsw (embedding vector_cosine_ops)"))
        self.dimension = dim

    # ------------------------------------------------------------ writes

    def write(self, conn: Connection, user_id: str, items: Sequence[VectorItem], deletes: Sequence[str] = ()) -> None:
        """Upsert and delete inside the caller's transaction."""
        if deletes:
            conn.execute(text(f"DELETE FROM {TABLE} WHERE user_id = :u AND memory_id IN :ids")
                         .bindparams(bindparam("ids", expanding=True)), {"u": user_id, "ids": list(deletes)})
        if items:
            conn.execute(text(f"""
                INSERT INTO {TABLE} (memory_id, user_id, memory_type, embedding)
                VALUES (:id, :u, :t, CAST(:e AS vector))
                ON CONFLICT (memory_id) DO UPDATE SET memory_type = EXCLUDED.memory_type,
                    embedding = EXCLUDED.embedding
                WHERE {TABLE}.user_id = EXCLUDED.user_id"""),
                [{"id": i.id, "u": user_id, "t": i.memory_type, "e": vector_literal(i.embedding)} for i in items])

    def upsert(self, user_id: str, items: Sequence[VectorItem]) -> None:
        """Outside a memory write (doctor, migrate-vectors): vectors of rows that exist."""
        if items:
            with self.engine.begin() as conn:
                self.write(conn, user_id, items)

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        if ids:
            with self.engine.begin() as conn:
                self.write(conn, user_id, (), ids)

    # ------------------------------------------------------------ reads

    def _order(self, user_id: str, column: str, query: str) -> str | None:
        """The ORDER BY expression of the user's own graph (half precision), None without one."""
        if self.dimension is None or tenant_index_name(user_id) not in self._tenant_graphs():
            return None
        half = f"halfvec({int(self.dimension)})"
        return f"CAST({column} AS {half}) <=> CAST({query} AS {half})"

    def query_sql(self, user_id: str, memory_types: Sequence[str] | None = None) -> str:
        """The SQL of `query` for this user (parameters :u, :q, :k and, with types, :types): ordered
        by the expression of the user's own graph when they have one."""
        where = "user_id = :u" + (" AND memory_type IN :types" if memory_types else "")
        order = self._order(user_id, "embedding", "CAST(:q AS vector)") or "d"
        return (f"SELECT memory_id, embedding <=> CAST(:q AS vector) AS d FROM {TABLE} "
                f"WHERE {where} ORDER BY {order} LIMIT :k")

    def query(self, user_id: str, embedding: list[float], k: int,
              memory_types: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) best first, among this user's vectors (of these types)."""
        params: dict[str, object] = {"u": user_id, "q": vector_literal(embedding), "k": int(k)}
        stmt = text(self.query_sql(user_id, memory_types))
        if memory_types:
            params["types"] = sorted(set(memory_types))
            stmt = stmt.bindparams(bindparam("types", expanding=True))
        with self.engine.connect() as conn:
            self.apply_settings(conn)
            rows = conn.execute(stmt, params).all()
        # relaxed_order scans may return near-ties unordered; a user's own graph ranks in half precision
        rows = sorted(rows, key=lambda r: (r[1], r[0]))
        return [(memory_id, 1.0 - float(d)) for memory_id, d in rows]

    def apply_settings(self, conn: Connection) -> None:
        """Set the query settings on this pooled connection once (session level), not a round trip
        per search; a change of `settings` (tenant_recall tries several) is applied on next use."""
        wanted = {**SESSION_SETTINGS, **self.settings}
        info = conn.connection.info  # lives as long as the database connection itself
        applied = info.get(SETTINGS_KEY, {})
        if applied == wanted:
            return
        for name in applied:
            if name not in wanted:
                conn.execute(text("SELECT set_config(:n, reset_val, false) FROM pg_settings WHERE name = :n"), {"n": name})
        names = list(wanted)
        conn.execute(text("SELECT " + ", ".join(f"set_config(:n{i}, :v{i}, false)" for i in range(len(names)))),
                     {**{f"n{i}": n for i, n in enumerate(names)}, **{f"v{i}": wanted[n] for i, n in enumerate(names)}})
        conn.commit()  # a session setting made in a transaction that rolls back (pool reset) is undone
        info[SETTINGS_KEY] = wanted

    def ids(self, user_id: str) -> set[str]:
        with self.engine.connect() as conn:
            return set(conn.execute(text(f"SELECT memory_id FROM {TABLE} WHERE user_id = :u"), {"u": user_id}).scalars())

    def count(self, user_id: str) -> int:
        with self.engine.connect() as conn:
            query = text(f"SELECT count(*) FROM {TABLE} WHERE user_id = :u")
            return int(conn.execute(query, {"u": user_id}).scalar_one())

    def users(self) -> dict[str, str]:
        """user id -> where their vectors are (the table), for every user that has any."""
        with self.engine.connect() as conn:
            return {u: TABLE for u in conn.execute(text(f"SELECT DISTINCT user_id FROM {TABLE}")).scalars()}

    def get(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(text(f"SELECT memory_id, CAST(embedding AS text) FROM {TABLE} "
                                     "WHERE user_id = :u AND memory_id IN :ids")
                                .bindparams(bindparam("ids", expanding=True)), {"u": user_id, "ids": list(ids)})
            return {m: parse_vector(v) for m, v in rows}

    def unreachable(self, user_id: str, k: int = 10, only: Sequence[str] | None = None) -> list[str]:
        """Ids that a query with their own stored vector (through the HNSW index the user's queries
        walk, with the query settings) does not return (of `only`, when given); see `lost_in_results`
        for ties."""
        if only is not None and not only:
            return []
        order = self._order(user_id, "w.embedding", "v.embedding") or "d"
        among = "" if only is None else " AND v.memory_id = ANY(:only)"
        with self.engine.connect() as conn:
            self.apply_settings(conn)
            rows = conn.execute(text(f"""
                SELECT v.memory_id, top.ids, top.ds FROM {TABLE} v CROSS JOIN LATERAL (
                    SELECT array_agg(n.memory_id) AS ids, array_agg(n.d) AS ds FROM (
                        SELECT w.memory_id, w.embedding <=> v.embedding AS d FROM {TABLE} w
                        WHERE w.user_id = :u ORDER BY {order} LIMIT :k) n) top
                WHERE v.user_id = :u{among}"""),
                {"u": user_id, "k": int(k), **({} if only is None else {"only": list(only)})}).all()
        return lost_in_results([r[0] for r in rows], [r[1] or [] for r in rows],
                               [sorted(r[2] or []) for r in rows])

    def close(self) -> None:
        """Nothing held: the vectors live in the database, whose engine is the caller's."""

    def purge(self, user_id: str) -> None:
        """Nothing to do: the deleted rows are gone from every read, and their dead versions stay in
        the table files until PostgreSQL's own VACUUM reclaims them (docs/durability.md)."""

    def rebuild(self, user_id: str) -> int:
        """Rebuild the HNSW index (it holds every user's vectors) and the user's own graph if they
        have one; returns this user's count."""
        with self.engine.connect() as conn:
            conn.execute(text(f"REINDEX INDEX {HNSW_INDEX}"))
            if tenant_index_name(user_id) in self._tenant_indexes(conn):
                conn.execute(text(f"REINDEX INDEX {tenant_index_name(user_id)}"))
            conn.commit()
        return self.count(user_id)

    # ------------------------------------------------------------ tenants

    @staticmethod
    def _tenant_indexes(conn: Connection) -> set[str]:
        return set(conn.execute(text(
            "SELECT indexname FROM pg_indexes WHERE tablename = :t AND schemaname = current_schema() "
            "AND indexname LIKE :p"), {"t": TABLE, "p": TENANT_INDEX_PREFIX + "%"}).scalars())

    def tenants_without_index(self, min_vectors: int | None = None) -> list[str]:
        """Users holding at least `min_vectors` (`TENANT_INDEX_MIN`) vectors and no graph of their own."""
        min_vectors = TENANT_INDEX_MIN if min_vectors is None else min_vectors
        with self.engine.connect() as conn:
            big = conn.execute(text(f"SELECT user_id FROM {TABLE} GROUP BY user_id HAVING count(*) >= :m "
                                    "ORDER BY user_id"), {"m": int(min_vectors)}).scalars().all()
            have = self._tenant_indexes(conn)
        return [u for u in big if tenant_index_name(u) not in have]

    def _tenant_graphs(self) -> frozenset[str]:
        """Names of the users' own graphs, read again every TENANT_CACHE_S (a graph built or dropped
        by another process is seen by then; until then a query is still right, only slower)."""
        now = time.monotonic()
        if now - self._graphs[0] >= TENANT_CACHE_S:
            with self.engine.connect() as conn:
                self._graphs = (now, frozenset(self._tenant_indexes(conn)))
        return self._graphs[1]

    def index_tenant(self, user_id: str) -> str:
        """Build the user's own HNSW graph (a partial index in half precision), without blocking
        writes; returns its name."""
        if self.dimension is None:
            raise PgVectorUnavailable("the vector column has no dimension yet: nothing has been embedded")
        name = tenant_index_name(user_id)
        half = f"halfvec({int(self.dimension)})"
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f"SET maintenance_work_mem = '{TENANT_BUILD_MEMORY}'"))
            # a build cut short leaves an invalid index that IF NOT EXISTS would keep
            conn.execute(text("DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                              "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                              f"AND c.relname = '{name}' AND NOT i.indisvalid) THEN DROP INDEX {name}; END IF; END $$"))
            conn.execute(text(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {TABLE} "
                              f"USING hnsw ((CAST(embedding AS {half})) halfvec_cosine_ops) "
                              f"WHERE user_id = {sql_literal(user_id)}"))
            conn.execute(text("RESET maintenance_work_mem"))
        self._graphs = (-TENANT_CACHE_S, frozenset())
        return name

    def drop_user(self, user_id: str) -> None:
        with self.engine.begin() as conn:
            self.drop_user_in(conn, user_id)

    def drop_user_in(self, conn: Connection, user_id: str) -> None:
        conn.execute(text(f"DELETE FROM {TABLE} WHERE user_id = :u"), {"u": user_id})
        conn.execute(text(f"DROP INDEX IF EXISTS {tenant_index_name(user_id)}"))
        self._graphs = (-TENANT_CACHE_S, frozenset())


if TYPE_CHECKING:  # mypy checks that this index keeps what `in_transaction` promises
    _TRANSACTIONAL: type[TransactionalVectorIndex] = PgVectorIndex
