"""`mirix migrate-vectors`: move an existing Chroma index into the PostgreSQL database (pgvector).

The vectors are copied, not recomputed (an embedding pass over 100k memories takes minutes on a
small machine): for every memory row, its vector is read from Chroma by id and written to
`memory_vector` in batches. Vectors whose row is gone are left behind (Chroma's orphans); rows that
Chroma has no vector for are counted and left to `doctor --repair`, which embeds them. Running it
twice is harmless (writes are upserts). Chroma itself is not changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

import typer
from sqlalchemy import select
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput
from mirix_py.store.memories import MemoryStore
from mirix_py.store.pgvectors import PgVectorIndex
from mirix_py.store.tables import MemoryRow
from mirix_py.store.vectors import ChromaVectorIndex, VectorItem

if TYPE_CHECKING:
    from mirix_py.engine import Mirix

BATCH = 500


def migrate(store: MemoryStore, source: ChromaVectorIndex,
            progress: Callable[[int], None] = lambda n: None) -> dict[str, int]:
    """Copy every row's Chroma vector into the store's pgvector index; returns counts."""
    target = store.vectors
    if not isinstance(target, PgVectorIndex):
        raise InvalidInput("the target engine does not use pgvector: open it with MIRIX_VECTOR_STORE=pgvector "
                           "on a PostgreSQL database")
    counts = {"users": 0, "copied": 0, "rows_without_vectors": 0, "vectors_without_rows": 0}
    rows: dict[str, list[tuple[str, str]]] = {}
    with Session(store.engine) as session:
        for user_id, memory_id, memory_type in session.execute(
                select(col(MemoryRow.user_id), col(MemoryRow.id), col(MemoryRow.memory_type))
                .order_by(col(MemoryRow.user_id))):
            rows.setdefault(user_id, []).append((memory_id, memory_type))
    for user_id in sorted(set(rows) | set(source.users())):
        mine = rows.get(user_id, [])
        counts["users"] += 1
        in_chroma = source.count(user_id)
        found = 0
        for start in range(0, len(mine), BATCH):
            chunk = mine[start:start + BATCH]
            vectors = source.get(user_id, [i for i, _ in chunk])
            items = [VectorItem(i, vectors[i], t) for i, t in chunk if i in vectors]
            if items and target.dimension is not None and len(items[0].embedding) != target.dimension:
                raise InvalidInput(f"Chroma holds {len(items[0].embedding)}-d vectors and the pgvector column is "
                                   f"{target.dimension}-d: another embedder made them; run `mirix doctor --repair` "
                                   "on the pgvector layout instead (it re-embeds)")
            target.upsert(user_id, items)
            found += len(items)
            counts["rows_without_vectors"] += len(chunk) - len(items)
            progress(len(chunk))
        counts["copied"] += found
        counts["vectors_without_rows"] += max(in_chroma - found, 0)
    return counts


def _why_not_postgresql(data_dir: Optional[Path]) -> str | None:
    """Why there is no pgvector to move vectors into: the store's memories are not in PostgreSQL
    (the engine would only say that pgvector needs it). None when they are."""
    from sqlalchemy.engine import make_url

    from mirix_py.settings import Settings

    url = make_url(Settings.from_env(data_dir=data_dir).sql_url)
    if url.get_backend_name() == "postgresql":
        return None
    where = f"SQLite ({url.database})" if url.get_backend_name() == "sqlite" else url.get_backend_name()
    return (f"migrate-vectors moves the vectors of a store kept in PostgreSQL from Chroma into pgvector in that "
            f"database; this store's memories are in {where}, which keeps its vectors in Chroma. To migrate a "
            "PostgreSQL store, set MIRIX_DATABASE_URL to its database.")


def register(app: typer.Typer, open_engine: Callable[[Optional[Path]], Mirix]) -> None:
    """Add `migrate-vectors` to the `mirix` command."""
    @app.command("migrate-vectors")
    def migrate_vectors(
            chroma_url: Optional[str] = typer.Option(None, "--chroma-url", envvar="MIRIX_CHROMA_URL",
                                                     help="The Chroma server the vectors are in."),
            chroma_path: Optional[Path] = typer.Option(None, "--chroma-path",
                                                       help="An embedded Chroma folder (default: DATA_DIR/chroma)."),
            data_dir: Optional[Path] = typer.Option(None, "--data-dir", "-d", envvar="MIRIX_DATA_DIR",
                                                    help="Data directory (default ~/.mirix)."),
    ) -> None:
        """Move an existing Chroma index into PostgreSQL (pgvector), without re-embedding."""
        from rich.console import Console
        from rich.markup import escape

        console = Console(soft_wrap=True)  # one line per fact, for scripts and logs
        errors = Console(stderr=True, soft_wrap=True)  # an error in one line: a long path is not cut
        not_postgresql = _why_not_postgresql(data_dir)
        if not_postgresql:
            errors.print(f"[bold red]error:[/] {escape(not_postgresql)}")
            raise typer.Exit(2)
        try:
            mx = open_engine(data_dir)
        except InvalidInput as exc:
            errors.print(f"[bold red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from exc
        with mx:
            if chroma_path is not None:
                source = ChromaVectorIndex.embedded(chroma_path)
            elif chroma_url:
                source = ChromaVectorIndex.server(chroma_url)
            else:
                chroma_path = mx.settings.data_dir / "chroma"
                if not chroma_path.exists():
                    errors.print(f"[bold red]error:[/] no Chroma index at {escape(str(chroma_path))}: "
                                 "pass --chroma-url or --chroma-path")
                    raise typer.Exit(2)
                source = ChromaVectorIndex.embedded(chroma_path)
            try:
                counts = migrate(mx.store, source)
            except InvalidInput as exc:
                errors.print(f"[bold red]error:[/] {escape(str(exc))}")
                raise typer.Exit(2) from exc
            report = mx.doctor()
        console.print(f"copied {counts['copied']} vectors of {counts['users']} users into PostgreSQL; "
                      f"{counts['rows_without_vectors']} rows had none in Chroma, "
                      f"{counts['vectors_without_rows']} Chroma vectors had no row (left behind)")
        console.print("doctor: clean" if report.clean else
                      f"doctor: {report.summary()} -- run `mirix doctor --repair` to embed what is missing")
