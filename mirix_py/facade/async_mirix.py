"""`AsyncMirix`: the `Mirix` facade, awaitable.

Every method is the engine method of the same name and parameters, run in a worker thread
(`asyncio.to_thread`): the engine blocks on SQL, embeddings and its own model event loop, so an
async caller's loop keeps serving while it works. The methods are written out (not generated) so
type checkers and IDEs see them; `tests/test_engine.py` checks they match `Mirix` one for one.
"""

from __future__ import annotations

import asyncio
import builtins
from datetime import datetime, tzinfo
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Coroutine, Iterable, Sequence

from mirix_py.engine import CLOSE_GRACE_S, Mirix
from mirix_py.records import (
    AddResult, ChatResponse, CloseReport, CoreMemory, HistoryEvent, InputRecord, Memory, MemoryBase, MemoryChange,
    MemoryType, Mode, SearchHit, SearchMethod,
)

if TYPE_CHECKING:
    from mirix_py.upkeep.doctor import DoctorReport
    from mirix_py.ingest.frames import ImageSource
    from mirix_py.ingest.screenshots import IngestReport, ScreenshotConfig, ScreenshotResult
    from mirix_py.screens.activity import FrameGroup
    from mirix_py.secrets.doctor import SecretReport

__all__ = ["ASYNC_METHODS", "AsyncMirix"]


class AsyncMirix:
    """The same methods as `Mirix`, awaitable; blocking work runs in a worker thread."""

    def __init__(self, data_dir: str | Path | None = None, **kwargs: Any) -> None:
        """`kwargs` are `Mirix`'s (settings, embedder, database_url, model_client, ...)."""
        self.sync = Mirix(data_dir, **kwargs)

    @property
    def mode(self) -> Mode:
        return self.sync.mode

    @classmethod
    async def restore(cls, src: str | Path, data_dir: str | Path | None = None, **kwargs: Any) -> AsyncMirix:
        """`Mirix.restore`, awaitable; returns an AsyncMirix on the restored data."""
        instance = cls.__new__(cls)
        instance.sync = await asyncio.to_thread(Mirix.restore, src, data_dir, **kwargs)
        return instance

    async def __aenter__(self) -> AsyncMirix:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ inputs

    async def add(self, content: str | Sequence[dict[str, Any]], *, user_id: str,
                  occurred_at: datetime | str | None = None, source_id: str | None = None, kind: str = "text",
                  wait: bool = True, expires_at: datetime | str | None = None) -> AddResult:
        return await asyncio.to_thread(self.sync.add, content, user_id=user_id, occurred_at=occurred_at,
                                       source_id=source_id, kind=kind, wait=wait, expires_at=expires_at)

    async def flush(self, timeout: float | None = None) -> None:
        await asyncio.to_thread(self.sync.flush, timeout)

    async def resume(self, *, wait: bool = True, limit: int = 10_000) -> int:
        return await asyncio.to_thread(self.sync.resume, wait=wait, limit=limit)

    async def work(self) -> int:
        return await asyncio.to_thread(self.sync.work)

    async def retry_failed(self, *, user_id: str | None = None) -> list[AddResult]:
        return await asyncio.to_thread(self.sync.retry_failed, user_id=user_id)

    async def input_status(self, input_id: str, *, user_id: str | None = None) -> InputRecord:
        return await asyncio.to_thread(self.sync.input_status, input_id, user_id=user_id)

    # ------------------------------------------------------------ screenshots

    async def add_screenshot(self, image: ImageSource, *, user_id: str, captured_at: datetime | str | None,
                             app: str | None = None, window_title: str | None = None, wait: bool = True,
                             source_id: str | None = None) -> ScreenshotResult:
        return await asyncio.to_thread(self.sync.add_screenshot, image, user_id=user_id, captured_at=captured_at,
                                       app=app, window_title=window_title, wait=wait, source_id=source_id)

    async def ingest_screenshots(self, source: str | Path | Iterable[str | Path], *, user_id: str,
                                 recursive: bool = False, app: str | None = None, window_title: str | None = None,
                                 default_tz: tzinfo | None = None,
                                 progress: Callable[[int], None] | None = None) -> IngestReport:
        return await asyncio.to_thread(self.sync.ingest_screenshots, source, user_id=user_id, recursive=recursive,
                                       app=app, window_title=window_title, default_tz=default_tz,
                                       progress=progress)

    async def configure_screenshots(self, config: ScreenshotConfig | None = None,
                                    **changes: Any) -> ScreenshotConfig:
        return await asyncio.to_thread(self.sync.configure_screenshots, config, **changes)

    async def screenshot_thumbnail(self, input_id: str, *, user_id: str) -> Path | None:
        return await asyncio.to_thread(self.sync.screenshot_thumbnail, input_id, user_id=user_id)

    async def screen_activity(self, *, user_id: str, since: datetime | str | None = None,
                              until: datetime | str | None = None, limit: int = 50) -> builtins.list[FrameGroup]:
        return await asyncio.to_thread(self.sync.screen_activity, user_id=user_id, since=since, until=until,
                                       limit=limit)

    # ------------------------------------------------------------ reads

    async def chat(self, message: str, *, user_id: str, history: Sequence[dict[str, Any]] | None = None,
                   remember: bool = True, read_after: str | None = None) -> ChatResponse:
        return await asyncio.to_thread(self.sync.chat, message, user_id=user_id, history=history,
                                       remember=remember, read_after=read_after)

    async def search(self, query: str, *, user_id: str, limit: int = 10,
                     memory_types: Sequence[MemoryType | str] | None = None, start: datetime | None = None,
                     end: datetime | None = None, method: SearchMethod | str = "hybrid",
                     context: int | None = None, read_after: str | None = None) -> list[SearchHit]:
        return await asyncio.to_thread(self.sync.search, query, user_id=user_id, limit=limit,
                                       memory_types=memory_types, start=start, end=end, method=method,
                                       context=context, read_after=read_after)

    async def get(self, memory_id: str, *, user_id: str, reveal: bool = False) -> MemoryBase:
        return await asyncio.to_thread(self.sync.get, memory_id, user_id=user_id, reveal=reveal)

    async def list(self, *, user_id: str, memory_types: Sequence[MemoryType | str] | None = None,
                   limit: int = 100, offset: int = 0, start: datetime | None = None,
                   end: datetime | None = None, before: str | None = None) -> builtins.list[Memory]:
        """`before`: the previous page's cursor, as `Mirix.list` takes it."""
        return await asyncio.to_thread(self.sync.list, user_id=user_id, memory_types=memory_types, limit=limit,
                                       offset=offset, start=start, end=end, before=before)

    async def history(self, memory_id: str, *, user_id: str) -> builtins.list[HistoryEvent]:
        return await asyncio.to_thread(self.sync.history, memory_id, user_id=user_id)

    async def user_ids(self) -> builtins.list[str]:
        return await asyncio.to_thread(self.sync.user_ids)

    async def core_memory(self, *, user_id: str) -> dict[str, CoreMemory]:
        return await asyncio.to_thread(self.sync.core_memory, user_id=user_id)

    async def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.stats, user_id=user_id)

    async def describe(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.describe)

    async def ping(self) -> str:
        return await asyncio.to_thread(self.sync.ping)

    async def replica_behind(self) -> int | None:
        return await asyncio.to_thread(self.sync.replica_behind)

    async def run_on_model_loop(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return await asyncio.to_thread(self.sync.run_on_model_loop, coro)

    # ------------------------------------------------------------ writes

    async def update(self, memory_id: str, fields: dict[str, Any] | None = None, *, user_id: str,
                     actor: str = "api", **more: Any) -> MemoryBase:
        return await asyncio.to_thread(self.sync.update, memory_id, fields, user_id=user_id, actor=actor, **more)

    async def delete(self, memory_id: str, *, user_id: str, actor: str = "api",
                     erase: bool = False) -> builtins.list[MemoryChange]:
        return await asyncio.to_thread(self.sync.delete, memory_id, user_id=user_id, actor=actor, erase=erase)

    async def undo(self, input_id: str, *, user_id: str, force: bool = False) -> builtins.list[MemoryChange]:
        return await asyncio.to_thread(self.sync.undo, input_id, user_id=user_id, force=force)

    async def delete_user(self, user_id: str) -> dict[str, int]:
        return await asyncio.to_thread(self.sync.delete_user, user_id)

    async def write_position(self, user_id: str) -> str | None:
        return await asyncio.to_thread(self.sync.write_position, user_id)

    async def delete_expired(self) -> int:
        return await asyncio.to_thread(self.sync.delete_expired)

    async def purge_thumbnails(self) -> int:
        return await asyncio.to_thread(self.sync.purge_thumbnails)

    async def core_append(self, label: str, text: str, *, user_id: str, actor: str = "api") -> CoreMemory:
        return await asyncio.to_thread(self.sync.core_append, label, text, user_id=user_id, actor=actor)

    async def core_rewrite(self, label: str, value: str, *, user_id: str, actor: str = "api") -> CoreMemory:
        return await asyncio.to_thread(self.sync.core_rewrite, label, value, user_id=user_id, actor=actor)

    # ------------------------------------------------------------ data and maintenance

    async def export(self, dest: str | Path | IO[str], *, user_id: str | None = None) -> int:
        return await asyncio.to_thread(self.sync.export, dest, user_id=user_id)

    async def import_(self, src: str | Path | IO[str] | Iterable[str]) -> dict[str, int]:
        return await asyncio.to_thread(self.sync.import_, src)

    async def backup(self, dest: str | Path) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.backup, dest)

    async def doctor(self, *, repair: bool = False,
                     progress: Callable[[Iterable, int], Iterable] | None = None) -> DoctorReport:
        return await asyncio.to_thread(self.sync.doctor, repair=repair, progress=progress)

    async def doctor_secrets(self, *, repair: bool = False) -> SecretReport:
        return await asyncio.to_thread(self.sync.doctor_secrets, repair=repair)

    async def close(self, timeout: float | None = None, *, grace: float = CLOSE_GRACE_S) -> CloseReport:
        """`Mirix.close`: what was left pending, what it waited for, and what still runs past its cap."""
        return await asyncio.to_thread(self.sync.close, timeout, grace=grace)


setattr(AsyncMirix, "import", AsyncMirix.import_)  # `import` is a keyword: reachable only by getattr

# every awaitable engine method (what `tests/test_engine.py` compares with `Mirix`)
ASYNC_METHODS: tuple[str, ...] = tuple(
    name for name, value in vars(AsyncMirix).items()
    if not name.startswith("_") and asyncio.iscoroutinefunction(value) and name != "import"
)
