"""Vector index on Chroma, one collection per user.

Scoping by a metadata `where` filter is Chroma's slow path (41 ms against 1.8 ms at 100k vectors
on these machines), so each user gets a collection of their own; memory-type filters over-fetch
and filter, and time filters are applied against SQL. Only ids, vectors and the memory type go to
Chroma: no documents, never a vault secret.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import subprocess
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence, TypeGuard, TypeVar
from urllib.parse import urlparse

from mirix_py.errors import InvalidInput
from mirix_py.store.kept_vectors import KeptVectors, KeptVectorsCache, shared_cache
from mirix_py.store.chroma_files import HeapCleared, allocations_cleared, purge_deleted, scrub
from mirix_py.store.private import narrow, private_dir

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


log = logging.getLogger(__name__)
# Chroma keeps one system a folder per process, counted by its clients, in a dict it does not lock: a
# client opened in one thread while another engine's client of the same folder closes in another found
# the system and then lost it (KeyError). Opening and closing embedded clients take turns.
CHROMA_SYSTEMS = threading.Lock()

CHROMA_DATABASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]")


def collection_name(user_id: str) -> str:
    return "mx_" + hashlib.sha1(user_id.encode()).hexdigest()[:32]


def rebuilding_name(user_id: str) -> str:
    """The collection a rebuild fills before it takes the user's name (`users` lists only "mx_" names)."""
    return "mxr_" + hashlib.sha1(user_id.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class VectorItem:
    id: str
    embedding: list[float]
    memory_type: str


class VectorIndex(Protocol):
    """What the store, search and doctor need of a vector index (Chroma or pgvector).

    `kind` names the layout (`describe()["vectors"]`); a `transactional` index also has
    `write(conn, user_id, items, deletes)` and `drop_user_in(conn, user_id)`, which run inside the
    SQL transaction of the rows."""

    kind: str
    transactional: bool

    def upsert(self, user_id: str, items: Sequence[VectorItem]) -> None: ...
    def query(self, user_id: str, embedding: list[float], k: int,
              memory_types: Sequence[str] | None = None) -> list[tuple[str, float]]: ...
    def delete(self, user_id: str, ids: Sequence[str]) -> None: ...
    def ids(self, user_id: str) -> set[str]: ...
    def count(self, user_id: str) -> int: ...
    def users(self) -> dict[str, str]: ...
    def get(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]: ...
    def drop_user(self, user_id: str) -> None: ...
    def unreachable(self, user_id: str, k: int = 10, only: Sequence[str] | None = None) -> list[str]:
        """Ids a query with their own stored vector does not return (of `only`, when given)."""
        ...
    def rebuild(self, user_id: str) -> int: ...
    def purge(self, user_id: str) -> None:
        """Take what the index keeps of the user's deleted vectors out of the files it owns (after
        `delete_user`, or an erasing `delete`); the user's live vectors stay searchable."""
        ...
    def close(self) -> None:
        """Release what the index holds open and leave its files at rest (an embedded Chroma); a
        later use opens it again. Nothing to do for an index that holds nothing."""
        ...


class TransactionalVectorIndex(VectorIndex, Protocol):
    """A vector index written inside the SQL transaction of the rows (pgvector)."""

    def write(self, conn: Connection, user_id: str, items: Sequence[VectorItem],
              deletes: Sequence[str] = ()) -> None: ...
    def drop_user_in(self, conn: Connection, user_id: str) -> None: ...


def in_transaction(index: VectorIndex | None) -> TypeGuard[TransactionalVectorIndex]:
    """Whether `index` is written in the rows' transaction: its `transactional` flag, which
    promises `write` and `drop_user_in`."""
    return index is not None and index.transactional


def lost_in_results(own_ids: Sequence[str], found: Sequence[Sequence[str]],
                    distances: Sequence[Sequence[float]]) -> list[str]:
    """Of queries made with each id's own vector, the ids their results miss. A result at distance
    zero is a memory with the same vector (the same text stored more than once): a search reaches
    that content, and HNSW may return any of the copies, so the id is not counted as lost."""
    return [own for own, ids, dists in zip(own_ids, found, distances)
            if own not in ids and not any(float(d) <= 1e-6 for d in dists)]


def _sync_every(coll, writes: int) -> None:
    """Have Chroma write `coll`'s graph to disk every `writes` writes."""
    with warnings.catch_warnings():  # chromadb reads its stored config with a DeprecationWarning of its own
        warnings.simplefilter("ignore", DeprecationWarning)
        coll.modify(configuration={"hnsw": {"sync_threshold": writes}})


def _merged(hits: list[tuple[str, float]], more: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """The `k` best of two (id, similarity) lists, best first, equal similarities by id."""
    best = dict(hits)
    for i, similarity in more:
        best[i] = max(similarity, best.get(i, similarity))
    return sorted(best.items(), key=lambda hit: (-hit[1], hit[0]))[:k]


def exact_nearest(ids: Sequence[str], embeddings: Sequence[Sequence[float]], query: Sequence[float],
                  n: int) -> tuple[list[str], list[float]]:
    """The `n` of `ids` nearest `query` by cosine distance (1 - cosine, as a Chroma collection of
    space "cosine" reports it), nearest first, equal distances by id: `KeptVectors.nearest`'s scan."""
    if not ids or n <= 0:
        return [], []
    found = KeptVectors.of(ids, embeddings, [None] * len(ids)).nearest(query, n)
    return [i for i, _ in found], [1.0 - similarity for _, similarity in found]


# A user's collection this small is searched exactly when its graph returns fewer vectors than asked
# for and than it holds: Chroma's HNSW graph can lose a live node (chroma-core/chroma#7758), and an
# embedded Chroma builds a collection's graph afresh from its log at each open until it persists it
# (every 1,000 writes), so a graph checked by `doctor` is not the one the next process walks.
EXACT_SCAN_MAX = 5_000

# A user's collection names in its metadata, space-separated, the ids its graph did not reach when
# `rebuild` made it: Chroma's HNSW graph (M 16, ef 100) leaves a few vectors of a dense cluster that
# no query walks to (3 of 5,000 "Note i: I bought i pears." turns, 55 of 9,192 look-alike lines; fewer,
# not none, with M 32 or 48 or ef_construction 200: docs/scaling.md), and a rebuild builds another such
# graph. Every query of the user also scores those few exactly (`_exact_of`), so a search finds them
# and `doctor` counts them reached.
EXACT_IDS_KEY = "mirix_exact_ids"
# A rebuild fills its collection with the graph written to disk after every call (`sync_threshold` 1),
# then sets Chroma's default (1,000) back: the next open loads the graph the rebuild checked, where one
# built again from the log at each open can miss others (2 of 4 reopens of 2,600 crowded vectors did).
FILL_SYNC_THRESHOLD = 1
SYNC_THRESHOLD = 1_000

UNWRITTEN_SEGMENT = "Nothing found on disk"  # embedded Chroma: a collection whose first vectors are still being written


def _unwritten_as_empty(query: Callable[[], dict]) -> dict:
    """`query()`, once more if embedded Chroma says the collection's index segment is not on disk
    yet (a query racing the first write of a user's vectors, chroma-core/chroma#4212), then no hits:
    the search still answers from full text instead of failing."""
    for attempt in range(2):
        try:
            return query()
        except Exception as exc:  # chromadb.errors.InternalError; its module is imported lazily
            if UNWRITTEN_SEGMENT not in str(exc):
                raise
            if attempt == 0:
                time.sleep(0.05)
    return {"ids": [[]], "distances": [[]], "metadatas": [[]]}  # a new one: callers may extend it



T = TypeVar("T")


def _reopening(method: Callable[..., T]) -> Callable[..., T]:
    """A user's collection that another engine dropped (its `delete_user`, a `doctor` rebuild) is
    opened again: the handle this engine keeps names a collection that is gone, and every write,
    search and `doctor` of that user raised `NotFoundError` until a restart."""

    @functools.wraps(method)
    def call(self: "ChromaVectorIndex", user_id: str, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, user_id, *args, **kwargs)
        except Exception as exc:
            from chromadb.errors import NotFoundError  # imported by then: a call reached Chroma

            if not isinstance(exc, NotFoundError):
                raise
            self._collections.pop(collection_name(user_id), None)
            self._exact.pop(user_id, None)
            return method(self, user_id, *args, **kwargs)

    return call


class ChromaVectorIndex:
    transactional = False  # mirrored after the SQL commit; `doctor` repairs a failed mirror

    def __init__(self, client=None, kind: str = "chroma-embedded", *,
                 connect: Callable[[], object] | None = None, kept: KeptVectorsCache | None = None) -> None:
        """A Chroma `client`, or `connect` to open one on first use: importing chromadb and opening
        an embedded store costs ~1 s that a command reading only SQL (`list`, `show`) should not pay.
        `kept`: small users' vectors kept in memory and searched exactly (`store/kept_vectors.py`),
        for a client that no other process writes through (an embedded one)."""
        if client is None and connect is None:
            raise ValueError("ChromaVectorIndex needs a client or a connect function")
        self._kept = kept
        self._opened = client
        self._connect = connect
        self._connect_lock = threading.Lock()
        self.kind = kind
        self._collections: dict[str, object] = {}
        self._short_warned: set[str] = set()  # users whose graph returned fewer vectors than it holds
        self._exact: dict[str, KeptVectors] = {}  # user -> the vectors their graph misses (`EXACT_IDS_KEY`)
        self.path: Path | None = None  # an embedded store's folder (owner-only: `store/private.py`)
        self.opened_at: float | None = None  # when the embedded client was opened

    @property
    def _client(self):
        if self._opened is None:
            with self._connect_lock:
                if self._opened is None:
                    self._opened = self._connect()  # type: ignore[misc]
        return self._opened

    @classmethod
    def embedded(cls, path: Path) -> "ChromaVectorIndex":
        """Chroma writes its files with the process umask: the folder is 0700 and its files are
        narrowed to 0600 when the store opens, a user's collection is made, and `close`."""
        private_dir(path)

        def connect():
            import chromadb
            from chromadb.config import Settings as ChromaSettings

            index.opened_at = time.time() - 2  # a coarse file clock must not hide a write from `close`
            with allocations_cleared(), CHROMA_SYSTEMS:
                client = chromadb.PersistentClient(path=str(path), settings=ChromaSettings(anonymized_telemetry=False))
            narrow(path)
            return HeapCleared(client)  # every call of it, and of its collections, with the heap cleared

        index = cls(connect=connect, kept=shared_cache(str(Path(path).resolve())))
        index.path = Path(path)
        return index

    def close(self) -> None:
        """Release an embedded client this index opened, then zero the stale bytes Chroma left in its
        graph files (`store/chroma_files.py`) and narrow what it wrote since it opened; a later use
        opens it again. Chroma keeps one system a folder per process while a client holds it: kept,
        a folder deleted and made again in the same process was written through the old, deleted
        database ("attempt to write a readonly database")."""
        if self._kept is not None:
            self._kept.forget()
        self._exact.clear()
        opened = self._opened
        if opened is None:
            return
        if self._connect is not None:  # ours to release (a client passed in is its owner's)
            with self._connect_lock:
                self._opened = None
                self._collections = {}
            with CHROMA_SYSTEMS:
                opened.close()  # type: ignore[attr-defined]
        if self.path is not None:
            scrub(self.path, since=self.opened_at)
            narrow(self.path)

    @classmethod
    def server(cls, url: str) -> "ChromaVectorIndex":
        """`http://host:port` (Chroma's default database) or `http://host:port/NAME`: a database of
        its own on a shared server (created when missing), so deployments never see each other's
        collections (doctor would take them for orphans)."""
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        parsed = urlparse(url)
        host, port, ssl = parsed.hostname or "127.0.0.1", parsed.port or 8000, parsed.scheme == "https"
        settings = ChromaSettings(anonymized_telemetry=False)
        database = parsed.path.strip("/")
        if database and not CHROMA_DATABASE_NAME.fullmatch(database):
            raise InvalidInput(f"Chroma database name {database!r} in {url!r}: use 3-512 characters of "
                               "letters, digits, '.', '_' or '-', starting and ending with a letter or digit")
        if not database:
            return cls(chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings), kind="chroma-server")
        admin_settings = ChromaSettings(anonymized_telemetry=False, chroma_api_impl="chromadb.api.fastapi.FastAPI",
                                        chroma_server_host=host, chroma_server_http_port=port,
                                        chroma_server_ssl_enabled=ssl)
        admin = chromadb.AdminClient(admin_settings)
        try:
            admin.get_database(database)
        except Exception:  # NotFoundError: make it (a racing creator may win; then it exists)
            try:
                admin.create_database(database)
            except Exception:
                admin.get_database(database)
        return cls(chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings, database=database),
                   kind="chroma-server")

    def _collection(self, user_id: str, create: bool = True):
        name = collection_name(user_id)
        coll = self._collections.get(name)
        if coll is not None:
            return coll
        return self._open_collection(name, user_id, create)

    def _open_collection(self, name: str, user_id: str, create: bool):
        if create:
            coll = self._client.get_or_create_collection(
                name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None,
                metadata={"mirix_user": user_id},
            )
            if self.path is not None:
                narrow(self.path)  # the collection's segment folder
        else:
            try:
                coll = self._client.get_collection(name, embedding_function=None)
            except Exception:  # chroma raises NotFoundError / ValueError depending on version
                return None
        if self.path is not None:  # an embedded store's: its calls with the heap cleared, as the client's
            coll = HeapCleared(coll)
        self._collections[name] = coll
        return coll

    @_reopening
    def upsert(self, user_id: str, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        self._collection(user_id).upsert(
            ids=[i.id for i in items],
            embeddings=[i.embedding for i in items],
            metadatas=[{"memory_type": i.memory_type} for i in items],
        )
        if self._kept is not None:
            self._kept.upserted(user_id, [i.id for i in items], [i.embedding for i in items],
                                [i.memory_type for i in items])
        self._exact_written(user_id, [i.id for i in items])

    @_reopening
    def query(self, user_id: str, embedding: list[float], k: int,
              memory_types: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) best first."""
        coll = self._collection(user_id, create=False)
        if coll is None:
            return []
        kept = self._kept_vectors(user_id, coll)
        if kept is not None:
            return kept.nearest(embedding, k, memory_types)
        # no count() first: it costs ~8 ms at 100k vectors, and Chroma caps n_results itself
        wanted = set(memory_types or ())
        fetch = k if not wanted else k * 4
        # metadata only when filtering on type: reading it back costs ~1 ms at 100k vectors
        include = ["metadatas", "distances"] if wanted else ["distances"]
        result = _unwritten_as_empty(lambda: coll.query(query_embeddings=[embedding], n_results=fetch,
                                                         include=include))
        if len(result["ids"][0]) < fetch:  # the collection holds fewer, or its graph lost some
            result = self._whole_or_exact(user_id, coll, embedding, fetch, result, include)
        returned = len(result["ids"][0])
        metadatas = result.get("metadatas") or [None]
        hits = [
            (id_, 1.0 - float(dist))
            for id_, meta, dist in zip(result["ids"][0], metadatas[0] or [None] * returned, result["distances"][0])
            if not wanted or (meta or {}).get("memory_type") in wanted
        ]
        if wanted and len(hits) < k and returned == fetch:
            # too few of the wanted types among the nearest: take the filtered (slower) path
            where = {"memory_type": {"$in": sorted(wanted)}}
            result = coll.query(query_embeddings=[embedding], n_results=k, where=where, include=["distances"])
            if len(result["ids"][0]) < k:
                result = self._whole_or_exact(user_id, coll, embedding, k, result, ["distances"], where)
            hits = [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0])]
        exact = self._exact_of(user_id, coll)
        if len(exact):  # the few its graph misses, scored exactly
            return _merged(hits, exact.nearest(embedding, k, memory_types), k)
        return hits[:k]

    def _exact_of(self, user_id: str, coll) -> KeptVectors:
        """The vectors the user's collection names as missed by its graph (`EXACT_IDS_KEY`), read at
        the first query after it is opened or one of them is written."""
        exact = self._exact.get(user_id)
        if exact is not None:
            return exact
        ids = str((coll.metadata or {}).get(EXACT_IDS_KEY) or "").split()
        got = coll.get(ids=ids, include=["embeddings", "metadatas"]) if ids else {"ids": [], "embeddings": []}
        metadatas = got.get("metadatas") or [None] * len(got["ids"])
        embeddings = got["embeddings"] if got["embeddings"] is not None else []
        exact = KeptVectors.of(got["ids"], embeddings, [(m or {}).get("memory_type") for m in metadatas])
        self._exact[user_id] = exact
        return exact

    def _exact_written(self, user_id: str, ids: Sequence[str]) -> None:
        """Forget the user's exactly scored vectors when a write touched one of them (read again)."""
        exact = self._exact.get(user_id)
        if exact is not None and not set(exact.ids).isdisjoint(ids):
            self._exact.pop(user_id, None)

    def _kept_vectors(self, user_id: str, coll) -> KeptVectors | None:
        """The user's vectors kept for exact search, read from the collection at its first search
        when it holds at most `EXACT_QUERY_MAX`; None: search the graph (a large user, no cache, or a
        collection whose first vectors are still being written)."""
        cache = self._kept
        if cache is None or cache.is_large(user_id):
            return None
        kept = cache.get(user_id)
        if kept is not None:
            return kept
        writes = cache.writes(user_id)
        try:
            if coll.count() > cache.limit:  # ~0.4 ms a small collection, ~8 ms at 100k: once a user
                cache.mark_large(user_id)
                return None
            got = coll.get(include=["embeddings", "metadatas"])
        except Exception as exc:  # a collection still being written, or a delete racing the read
            # ("Error finding id"): this search walks the graph, the next one reads again
            log.debug("vectors of user %s not kept this time: %s", user_id, exc)
            return None
        metadatas = got.get("metadatas") or [None] * len(got["ids"])
        embeddings = got["embeddings"] if got["embeddings"] is not None else []
        kept = KeptVectors.of(got["ids"], embeddings, [(m or {}).get("memory_type") for m in metadatas])
        cache.keep(user_id, kept, writes)  # not kept when a write came meanwhile: read again next time
        return kept

    def _whole_or_exact(self, user_id: str, coll, embedding: list[float], n: int, result: dict, include: list[str],
                        where: dict | None = None) -> dict:
        """`result`, a query's `n` nearest that came back short, when the collection (its vectors
        `where` selects) holds no more than it returned; else, for a collection of up to
        EXACT_SCAN_MAX vectors, the exact `n` nearest of all it holds, in `result`'s shape: a vector
        the graph cannot reach is still found (`EXACT_SCAN_MAX`)."""
        returned = len(result["ids"][0])
        held = coll.count() if where is None else len(coll.get(where=where, include=[])["ids"])
        if returned >= min(n, held):
            return result
        if user_id not in self._short_warned:  # once a user and process: a search would repeat it
            self._short_warned.add(user_id)
            log.warning("the vector index of user %s returned %d of the %d nearest it holds (its graph lost a "
                        "node): %s", user_id, returned, min(n, held),
                        "`mirix doctor --repair` rebuilds it" if held > EXACT_SCAN_MAX else "searched exactly")
        if held > EXACT_SCAN_MAX:
            return result
        got = coll.get(where=where, include=["embeddings", *(["metadatas"] if "metadatas" in include else [])])
        ids, distances = exact_nearest(got["ids"], got["embeddings"], embedding, n)
        exact: dict = {"ids": [ids], "distances": [distances]}
        if "metadatas" in include:
            meta = dict(zip(got["ids"], got.get("metadatas") or [None] * len(got["ids"])))
            exact["metadatas"] = [[meta[i] for i in ids]]
        return exact

    @_reopening
    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        coll = self._collection(user_id, create=False)
        if coll is not None and ids:
            coll.delete(ids=list(ids))
            if self._kept is not None:
                self._kept.deleted(user_id, list(ids))
            self._exact_written(user_id, ids)

    @_reopening
    def ids(self, user_id: str) -> set[str]:
        coll = self._collection(user_id, create=False)
        if coll is None:
            return set()
        return set(coll.get(include=[])["ids"])

    @_reopening
    def count(self, user_id: str) -> int:
        coll = self._collection(user_id, create=False)
        if coll is None:
            return 0
        return coll.count()

    @_reopening
    def get(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """id -> stored vector, for those of `ids` the index holds."""
        coll = self._collection(user_id, create=False)
        if coll is None or not ids:
            return {}
        got = coll.get(ids=list(ids), include=["embeddings"])
        return {i: [float(x) for x in e] for i, e in zip(got["ids"], got["embeddings"])}

    def has_marker(self, name: str) -> bool:
        """Whether this server holds the collection `name` (`vector_home`'s mark of a server)."""
        from chromadb.errors import NotFoundError

        try:
            self._client.get_collection(name)
        except NotFoundError:
            return False
        return True

    def make_marker(self, name: str) -> None:
        """An empty collection `name` that tells this server from another (`vector_home.hold_server`)."""
        self._client.get_or_create_collection(name, metadata={"mirix": "where a database's vectors are"})

    def users(self) -> dict[str, str]:
        """user id -> collection name, for every collection this index holds."""
        found = {}
        for coll in self._client.list_collections():
            user = (coll.metadata or {}).get("mirix_user")
            if coll.name.startswith("mx_") and user:
                found[user] = coll.name
        return found

    def documents(self) -> Iterator[tuple[str, str, str]]:
        """(user id, memory id, document) of every vector that carries a document. This version
        sends none; older ones sent the memory's text (`mirix doctor --secrets` looks for it)."""
        for user_id in self.users():
            coll = self._collection(user_id, create=False)
            if coll is None:
                continue
            got = coll.get(include=["documents"])
            for memory_id, document in zip(got["ids"], got.get("documents") or []):
                if document:
                    yield user_id, memory_id, document

    @staticmethod
    def _stored(coll, include: list[str], total: int, page: int = 5000) -> Iterator[dict]:
        """The collection's `total` vectors (its `count()`), a page at a time."""
        for offset in range(0, total, page):
            yield coll.get(include=include, limit=page, offset=offset)

    @_reopening
    def unreachable(self, user_id: str, k: int = 10, only: Sequence[str] | None = None) -> list[str]:
        """Ids that a search with their own stored vector does not return. Chroma's HNSW graph can
        lose a live node after updates and deletes while `get` still returns it
        (chroma-core/chroma#7758, open on 1.5.9: seen here once after a SIGKILL and restart), and
        leaves a few of a dense cluster unreached by any query (`EXACT_IDS_KEY`). None for a user
        searched exactly from kept vectors (the graph is not walked), and not those the collection
        names for exact scoring: a search finds them."""
        coll = self._collection(user_id, create=False)
        if coll is None or self._kept_vectors(user_id, coll) is not None:
            return []
        total = coll.count()  # ~8 ms at 100k vectors: asked once
        served = set(self._exact_of(user_id, coll).ids)
        pages = self._stored(coll, ["embeddings"], total) if only is None else \
            [coll.get(ids=list(only), include=["embeddings"])] if only else []
        return [i for got in pages for i in self._missed(coll, got["ids"], got["embeddings"], min(k, total))
                if i not in served]

    @staticmethod
    def _missed(coll, ids: Sequence[str], embeddings: Sequence, n: int) -> list[str]:
        """Of `ids`, those a query of `coll`'s graph with their own vector (`embeddings`) misses in its `n` nearest."""
        lost: list[str] = []
        for start in range(0, len(ids), 256):
            result = coll.query(query_embeddings=embeddings[start:start + 256], n_results=n, include=["distances"])
            lost += lost_in_results(ids[start:start + 256], result["ids"], result["distances"])
        return lost

    @_reopening
    def rebuild(self, user_id: str) -> int:
        """Re-create the user's collection from its stored vectors (a fresh graph reaches every node and
        holds nothing of the vectors deleted from the old one); returns how many. The new collection is
        filled under `rebuilding_name` while searches still read the old one, then takes the user's
        name: a crash while it fills leaves the old one whole (the next rebuild or `drop_user` drops
        the half-filled one); a crash between the drop and the rename leaves rows without vectors,
        which `doctor` re-embeds from SQL. The new graph is checked as `doctor` checks it: the ids
        it does not reach are named in the collection's metadata (`EXACT_IDS_KEY`), and every query
        of the user scores them exactly (a second graph of the same vectors misses others)."""
        coll = self._collection(user_id, create=False)
        if coll is None:
            return 0
        ids: list[str] = []
        embeddings: list = []
        metadatas: list = []
        for got in self._stored(coll, ["embeddings", "metadatas"], coll.count()):
            ids += got["ids"]
            embeddings += list(got["embeddings"])
            metadatas += got["metadatas"]
        aside_name = rebuilding_name(user_id)
        self._drop(aside_name)  # a rebuild a crash cut short
        aside = self._open_collection(aside_name, user_id, create=True)
        _sync_every(aside, FILL_SYNC_THRESHOLD)
        for start in range(0, len(ids), 1000):
            aside.add(ids=ids[start:start + 1000], embeddings=embeddings[start:start + 1000],
                      metadatas=metadatas[start:start + 1000])
        _sync_every(aside, SYNC_THRESHOLD)
        missed = self._missed(aside, ids, embeddings, min(10, len(ids)))
        self._drop(collection_name(user_id))
        aside.modify(name=collection_name(user_id),
                     metadata={"mirix_user": user_id, EXACT_IDS_KEY: " ".join(missed)} if missed else None)
        self._collections.pop(aside_name, None)  # opened again by the user's name at its next use
        self._exact.pop(user_id, None)
        if self._kept is not None:  # a search meanwhile read the old collection: read the new one
            self._kept.forget(user_id)
        return len(ids)

    def purge(self, user_id: str) -> None:
        """An embedded Chroma's files without the user's deleted vectors: its collection rebuilt from
        the live ones (the old graph and log keep the deleted ones; there are none after
        `delete_user`), then `chroma.sqlite3` rewritten without free pages and the dropped
        collections' graph folders removed (`chroma_files.purge_deleted`; no client is closed, so
        searches and other users' writes go on). Call it holding the user's turn. A Chroma server's
        files are not ours to rewrite: nothing is done there. The deletion is committed by then, so a
        failure is logged, not raised; the next purge takes what this one left."""
        if self.path is None:
            return
        try:
            self.rebuild(user_id)
        except Exception as exc:  # Chroma's errors; the old collection stays whole (`rebuild`)
            log.warning("the vector index of user %s was not rebuilt: its deleted vectors stay in %s until "
                        "the next delete_user or erase: %s", user_id, self.path, exc)
        try:
            removed = purge_deleted(self.path)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            log.warning("deleted vectors stay in %s until the next delete_user or erase: %s", self.path, exc)
            return
        log.debug("purged %s (%d dropped collection folders removed)", self.path, removed)

    def drop_user(self, user_id: str) -> None:
        """Drop the user's collection, and one a crash left half-filled by `rebuild`."""
        if self._kept is not None:
            self._kept.forget(user_id)
        self._exact.pop(user_id, None)
        self._drop(collection_name(user_id))
        self._drop(rebuilding_name(user_id))

    def _drop(self, name: str) -> None:
        self._collections.pop(name, None)
        try:
            self._client.delete_collection(name)
        except Exception:  # no collection: nothing to drop
            pass
