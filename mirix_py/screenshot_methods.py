"""Screenshot methods of `Mirix`, kept out of engine.py: `add_screenshot`, `ingest_screenshots`,
`configure_screenshots`, `_process_screenshots` (a batch to the managers, frames with it for a
vision model), plus the lookups the offline managers use for screens and the vault.

The engine creates its `ScreenshotIngestor` on first use (so Pillow and Tesseract, the
`screenshots` extra, are only needed by those who ingest screenshots) and closes it with the
engine. Nothing here imports Pillow at import time.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from mirix_py.errors import InvalidInput
from mirix_py.records import AddResult, InputRecord, KnowledgeVaultMemory, MemoryType, ResourceMemory

if TYPE_CHECKING:
    from mirix_py.ingest.frames import ImageSource
    from mirix_py.ingest.screenshots import IngestReport, ScreenshotConfig, ScreenshotIngestor, ScreenshotResult

__all__ = ["SCREENSHOT_METHODS", "ScreenshotsMixin", "screenshot_config_from_env"]

# public methods AsyncMirix wraps as coroutines
SCREENSHOT_METHODS = ("add_screenshot", "ingest_screenshots", "configure_screenshots")


def _screenshots_module():
    try:
        from mirix_py.ingest import screenshots
    except ImportError as exc:
        raise InvalidInput(f"screenshot ingestion needs Pillow and pytesseract: pip install 'mirix-py[screenshots]' "
                           f"and apt-get install tesseract-ocr ({exc})") from exc
    return screenshots

_LOCK = threading.Lock()


def screenshot_config_from_env(env: dict[str, str] | None = None) -> ScreenshotConfig:
    """ScreenshotConfig from MIRIX_OCR_LANG, MIRIX_OCR_WORKERS, MIRIX_SCREENSHOT_SIMILARITY,
    MIRIX_SCREENSHOT_BATCH_FRAMES, MIRIX_SCREENSHOT_BATCH_SECONDS, MIRIX_KEEP_THUMBNAILS,
    MIRIX_THUMBNAIL_RETENTION_DAYS and MIRIX_KEEP_OCR_TEXT (unset ones keep their defaults)."""
    from mirix_py.ingest.batching import BatchPolicy

    ocr_module = _screenshots_module().ocr_module
    env = dict(os.environ if env is None else env)
    try:
        ocr = ocr_module.OcrConfig(lang=env.get("MIRIX_OCR_LANG", "eng"))
        batch = BatchPolicy(max_frames=int(env.get("MIRIX_SCREENSHOT_BATCH_FRAMES", 20)),
                            max_seconds=float(env.get("MIRIX_SCREENSHOT_BATCH_SECONDS", 60)))
        workers = env.get("MIRIX_OCR_WORKERS")
        retention = env.get("MIRIX_THUMBNAIL_RETENTION_DAYS")
        return _screenshots_module().ScreenshotConfig(
            ocr=ocr, batch=batch, workers=int(workers) if workers else None,
            similarity_threshold=float(env.get("MIRIX_SCREENSHOT_SIMILARITY", 0.99)),
            keep_thumbnails=env.get("MIRIX_KEEP_THUMBNAILS", "").lower() in ("1", "true", "yes"),
            keep_ocr_text=env.get("MIRIX_KEEP_OCR_TEXT", "").lower() in ("1", "true", "yes"),
            thumbnail_retention=timedelta(days=float(retention)) if retention else timedelta(days=7),
        )
    except ValueError as exc:
        raise InvalidInput(f"screenshot settings in the environment: {exc}") from exc


class ScreenshotsMixin:
    """Mixed into `Mirix`. Expects `settings`, `inputs`, `store`, `searcher`, `_process`, `mode`."""

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
                    ingestor = _screenshots_module().ScreenshotIngestor(self, config)
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

    # ------------------------------------------------------------ the LLM path

    @property
    def supports_vision(self) -> bool:
        """True when the engine's model takes images (`model_info["vision"]`): screenshot batches
        then carry their downscaled frames along with the OCR text."""
        client = getattr(self, "model_client", None)
        if client is None:
            return False
        from mirix_py.ingest.multimodal import model_supports_vision

        return model_supports_vision(client)

    def _process_screenshots(self, records: Sequence[InputRecord], frames: Sequence[Any]) -> AddResult:
        """One screenshot batch through the managers. With a vision model, each frame's
        downscaled image (held in memory for this batch only) goes with its OCR text, secrets the
        vault rules find in the text blacked out on the image; otherwise the OCR text alone."""
        images: dict[str, Any] = {}
        if self.supports_vision:
            from mirix_py.ingest.multimodal import mask_secrets

            for frame in frames:
                record = getattr(frame, "record", None)
                if record is not None and frame.vision_image is not None:
                    images[record.id] = mask_secrets(frame.vision_image, frame.ocr)
        return self._process(list(records), images=images or None)  # type: ignore[attr-defined]

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
            root = Path(self.settings.data_dir) / "thumbnails"  # type: ignore[attr-defined]
            if not root.exists():
                return 0
            module = _screenshots_module()
            ingestor = module.ScreenshotIngestor(self, self._screenshot_config or module.ScreenshotConfig())
            try:
                return ingestor.delete_user(user_id)
            finally:
                ingestor.ocr.close()
        return ingestor.delete_user(user_id)
