"""Screenshot methods of `Mirix`, kept out of engine.py: `add_screenshot`, `ingest_screenshots`,
`configure_screenshots`, and `EngineScreenshotHost`, the engine side of the screenshot pipeline
(`mirix_py.ingest.host.ScreenshotHost`: log inputs, process a batch, data dir, limits).

The engine creates its `ScreenshotIngestor` on first use (so Pillow and Tesseract, the
`screenshots` extra, are only needed by those who ingest screenshots) and closes it with the
engine. Nothing here imports Pillow at import time. The ingest package never sees the engine:
it talks to the host.
"""

from __future__ import annotations

import threading
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from mirix_py.errors import InvalidInput
from mirix_py.ingest.env import screenshot_config_from_env, screenshots_module
from mirix_py.ingest.host import Mode
from mirix_py.records import AddResult, InputRecord, InputStatus
from mirix_py.settings import Settings

if TYPE_CHECKING:
    from mirix_py.engine import Mirix
    from mirix_py.ingest.frames import ImageSource
    from mirix_py.ingest.screenshots import (
        IngestReport, ProcessedFrame, ScreenshotConfig, ScreenshotIngestor, ScreenshotResult,
    )

__all__ = ["SCREENSHOT_METHODS", "EngineScreenshotHost", "ScreenshotsMixin"]

# public methods AsyncMirix wraps as coroutines
SCREENSHOT_METHODS = ("add_screenshot", "ingest_screenshots", "configure_screenshots")

_LOCK = threading.Lock()


class EngineScreenshotHost:
    """`ScreenshotHost` over a `Mirix`: frames are logged claimed by the engine's worker (no other
    worker takes them while their batch waits) and processed by the engine's flow, with their
    downscaled images when the model takes them."""

    def __init__(self, engine: Mirix) -> None:
        self.engine = engine

    @property
    def data_dir(self) -> Path | None:
        return Path(self.engine.settings.data_dir)

    @property
    def max_input_chars(self) -> int:
        return self.engine.settings.max_input_chars

    @property
    def mode(self) -> Mode:
        return "llm" if self.engine.mode == "llm" else "offline"

    @property
    def supports_vision(self) -> bool:
        return self.engine.supports_vision

    def log_inputs(self, records: Sequence[InputRecord]) -> None:
        self.engine.inputs.append(list(records), claimed_by=self.engine.worker_id)

    def process_batch(self, records: Sequence[InputRecord], frames: Sequence[ProcessedFrame]) -> AddResult:
        """One screenshot batch through the managers. With a vision model, each frame's downscaled
        image (held in memory for this batch only, the lines of its secrets already painted out by
        the ingestor: `ingest.masking`) goes with its OCR text; otherwise the OCR text alone."""
        images: dict[str, Any] = {}
        if self.supports_vision:
            for frame in frames:
                if frame.record is not None and frame.vision_image is not None:
                    images[frame.record.id] = frame.vision_image
        return self.engine._process(list(records), images=images or None)

    def mark_failed(self, input_ids: Sequence[str], error: str) -> None:
        self.engine.inputs.mark(list(input_ids), InputStatus.failed, error)

    def compact_inputs(self, input_ids: Sequence[str]) -> None:
        self.engine.inputs.compact(list(input_ids))


class ScreenshotsMixin:
    """Mixed into `Mirix` (its public screenshot methods). Expects `settings`, `inputs`, `_process`,
    `mode` and `model_client`."""

    settings: Settings
    model_client: Any

    _screenshot_config: ScreenshotConfig | None = None

    # ------------------------------------------------------------ ingestor

    @property
    def screenshots(self) -> ScreenshotIngestor:
        """The engine's screenshot pipeline (created on first use)."""
        ingestor = self.__dict__.get("_screenshot_ingestor")
        if ingestor is None:
            with _LOCK:
                ingestor = self.__dict__.get("_screenshot_ingestor")
                if ingestor is None:
                    config = self._screenshot_config or screenshot_config_from_env()
                    ingestor = screenshots_module().ScreenshotIngestor(self._screenshot_host(), config)
                    self.__dict__["_screenshot_ingestor"] = ingestor
        return ingestor

    def configure_screenshots(self, config: ScreenshotConfig | None = None, **changes: Any) -> ScreenshotConfig:
        """Set how screenshots are read (OCR language, workers, dedup threshold, batches,
        thumbnails). Pending frames are processed first."""
        from dataclasses import replace

        base = config or self._screenshot_config or screenshot_config_from_env()
        try:
            new = replace(base, **changes) if changes else base
        except TypeError as exc:
            raise InvalidInput(f"unknown screenshot setting: {exc}") from exc
        with _LOCK:
            old = self.__dict__.pop("_screenshot_ingestor", None)
            self._screenshot_config = new
        if old is not None:
            old.close()
        return new

    def add_screenshot(self, image: ImageSource, *, user_id: str, captured_at: datetime | str | None,
                       app: str | None = None, window_title: str | None = None, wait: bool = True,
                       source_id: str | None = None) -> ScreenshotResult:
        """Remember what is on a screenshot (a PIL image, a path, or PNG/JPEG/WebP bytes).

        The frame is validated, skipped when it nearly repeats the last kept frame of its window,
        read with Tesseract, and its text logged with `captured_at` (None: now), `app` and
        `window_title`. wait=True processes it as a batch of its own (searchable on return);
        wait=False queues it into per-app batches of N frames / T seconds, and `flush()` processes
        what is pending. The image itself is never stored. Bad images raise InvalidInput.
        """
        return self.screenshots.add(image, user_id=user_id, captured_at=captured_at, app=app,
                                    window_title=window_title, wait=wait, source_id=source_id)

    def ingest_screenshots(self, source: str | Path | Iterable[str | Path], *, user_id: str,
                           recursive: bool = False, app: str | None = None, window_title: str | None = None,
                           default_tz: tzinfo | None = None,
                           progress: Callable[[int], None] | None = None) -> IngestReport:
        """Ingest a directory (or a list) of screenshot files in capture order.

        Capture times come from PNG metadata, EXIF, the file name, or the file's mtime; bad files
        are reported in the returned IngestReport and the rest are processed.
        """
        from mirix_py.ingest.frames import list_image_files

        if isinstance(source, (str, Path)):
            path = Path(source)
            paths = list_image_files(path, recursive=recursive) if path.is_dir() else [path]
        else:
            paths = [Path(p) for p in source]
        return self.screenshots.ingest_paths(paths, user_id=user_id, app=app, window_title=window_title,
                                             default_tz=default_tz, progress=progress)

    def screenshot_thumbnail(self, input_id: str, *, user_id: str) -> Path | None:
        """The WebP kept for one of the user's screenshot inputs (`keep_thumbnails`); None when none
        was kept, it has expired, or the input is not this user's."""
        record = self.inputs.get(input_id)  # type: ignore[attr-defined]  # the engine's input log
        if record is None or record.user_id != user_id:
            return None
        return screenshots_module().kept_thumbnail(Path(self.settings.data_dir) / "thumbnails", user_id,
                                                   record.metadata.get("thumbnail"))

    def _screenshot_host(self) -> EngineScreenshotHost:
        return EngineScreenshotHost(self)  # type: ignore[arg-type]  # mixed into Mirix only

    # ------------------------------------------------------------ the LLM path

    @property
    def supports_vision(self) -> bool:
        """True when the engine's model takes images (`model_info["vision"]`): screenshot batches
        then carry their downscaled frames along with the OCR text."""
        if self.model_client is None:
            return False
        from mirix_py.ingest.multimodal import model_supports_vision

        return model_supports_vision(self.model_client)

    def _flush_screenshots(self) -> None:
        ingestor = self.__dict__.get("_screenshot_ingestor")
        if ingestor is not None:
            ingestor.flush()

    def _close_screenshots(self) -> None:
        with _LOCK:
            ingestor = self.__dict__.pop("_screenshot_ingestor", None)
        if ingestor is not None:
            ingestor.close()

    def _delete_user_screenshots(self, user_id: str) -> int:
        ingestor = self.__dict__.get("_screenshot_ingestor")
        if ingestor is None:
            root = Path(self.settings.data_dir) / "thumbnails"
            if not root.exists():
                return 0
            module = screenshots_module()
            ingestor = module.ScreenshotIngestor(self._screenshot_host(),
                                                 self._screenshot_config or module.ScreenshotConfig())
            try:
                return int(ingestor.delete_user(user_id))
            finally:
                ingestor.ocr.close()
        return int(ingestor.delete_user(user_id))
