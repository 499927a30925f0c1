"""Ingested data directories kept between evaluation runs, keyed by what determines their content.

A key is built from the data (a file digest or a generator seed), the settings that change what is
stored (embedder, ingestion mode, model) and a hash of the engine's own source, so editing a rule
or the store re-ingests while re-scoring with other budgets or metrics does not. A directory is
only reused once its `ingested.json` marker was written, i.e. after a complete ingestion. One that
holds what a database's memories need (their vault key, their embedded vectors) is never deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import mirix_py
from mirix_py.errors import MirixError

MARKER = "ingested.json"
SQLITE_STORE = "mirix.db"  # an embedded store's database, in its data dir
# what a data dir holds for a database elsewhere: the key its encrypted values were written under
# (without MIRIX_VAULT_KEY) and its vectors (embedded Chroma)
DATABASE_NEEDS = {"vault.key": "vault key", "chroma": "vectors"}


class DataDirNeeded(MirixError):
    """A cached data dir a database still needs: deleting it for a new ingestion would lose the
    database's vault key or vectors while the database keeps its rows."""


def default_cache_dir(kind: str) -> Path:
    """`$XDG_CACHE_HOME/mirix/<kind>` (default `~/.cache/mirix/<kind>`): outside the checkout, shared by runs."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "mirix" / kind


def engine_fingerprint() -> str:
    """Hash of the package's Python source outside `eval/` (the harness may change without re-ingesting)."""
    root = Path(mirix_py.__file__).parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "eval":
            continue
        h.update(str(rel).encode())
        h.update(path.read_bytes())
    from mirix_py.agents.definitions import default_agents_dir

    agents = default_agents_dir()  # prompts change what an LLM ingestion stores
    for path in sorted(agents.glob("*.md")) if agents.is_dir() else []:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def cache_key(kind: str, parts: Mapping[str, Any]) -> str:
    """`kind-<hash of parts and the engine fingerprint>`: a directory name."""
    blob = json.dumps({**parts, "engine": engine_fingerprint()}, sort_keys=True, default=str)
    return f"{kind}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class CachedDir:
    path: Path
    reused: bool
    info: dict[str, Any]  # what the ingestion wrote into its marker (empty when not reused)


def open_cached_dir(cache_root: Path, kind: str, parts: Mapping[str, Any], *, fresh: bool = False) -> CachedDir:
    """The data dir for these parts: reused when complete, else emptied for a new ingestion (refused
    with what to do when a database still needs it: `needed_by_a_database`)."""
    path = Path(cache_root) / cache_key(kind, parts)
    marker = path / MARKER
    if marker.exists() and not fresh:
        return CachedDir(path, True, json.loads(marker.read_text()))
    if path.exists():
        refuse_deleting_what_a_database_needs(path, fresh=fresh)
        shutil.rmtree(path)  # partial or forced: start over
    path.mkdir(parents=True)
    (path / "key.json").write_text(json.dumps({**parts, "engine": engine_fingerprint()}, indent=1, default=str))
    return CachedDir(path, False, {})


def refuse_deleting_what_a_database_needs(path: Path, *, fresh: bool, data_dir: Path | None = None) -> None:
    """DataDirNeeded, saying what to do, when the data dir of the cached ingestion `path` (`data_dir`,
    by default `path` itself) holds what a database's memories need: `needed_by_a_database`."""
    held = needed_by_a_database(path if data_dir is None else data_dir)
    if held:
        raise DataDirNeeded(
            f"{path} holds the {' and the '.join(held)} of memories kept in a database (MIRIX_DATABASE_URL): "
            f"{'--fresh' if fresh else 'starting over'} would delete them while the database keeps its rows. "
            "Give a new database or schema to ingest into, or drop the old one's tables and then delete "
            "this directory")


def needed_by_a_database(path: Path) -> list[str]:
    """What of a database's memories `path` holds ("vault key", "vectors"): nothing for an embedded
    store's data dir, whose rows are deleted with it (its `mirix.db` is there)."""
    if (path / SQLITE_STORE).exists():
        return []
    return [what for name, what in DATABASE_NEEDS.items() if (path / name).exists()]


def open_for_ingestion(entry: Path, open_engine: Callable[[], Any], refuse: Callable[[Any], None]) -> Any:
    """The engine `open_engine` opens on a new cache entry, once `refuse` (the users already held) lets
    it be ingested into. A refused open leaves no entry behind: nothing was written under the vault key
    it made, and a key left there would make the next run refuse to start over."""
    mx = None
    try:
        mx = open_engine()
        refuse(mx)
        return mx
    except BaseException:
        if mx is not None:
            mx.close()
        shutil.rmtree(entry, ignore_errors=True)
        raise


def store_outside(settings: Any) -> dict[str, Any] | None:
    """Where memories live when not under the data dir (a database or Chroma server, passwords hidden),
    None for the embedded default: the cache key must tell such stores apart."""
    from sqlalchemy.engine import make_url

    from mirix_py.store.vector_home import shown_url

    if not (settings.database_url or settings.chroma_url):
        return None
    url = make_url(settings.database_url).render_as_string(hide_password=True) if settings.database_url else None
    chroma = shown_url(settings.chroma_url) if settings.chroma_url else None
    return {"database_url": url, "chroma_url": chroma, "vector_store": settings.vector_store}


def mark_complete(cached: CachedDir, info: Mapping[str, Any]) -> None:
    (cached.path / MARKER).write_text(json.dumps(dict(info), indent=1, default=str))
