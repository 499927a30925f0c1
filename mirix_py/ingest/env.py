"""Screenshot settings from the environment, and the screenshot modules imported on demand.

Pillow and pytesseract (the `screenshots` extra) are imported only when screenshots are used;
`screenshots_module()` turns their absence into an InvalidInput naming what to install.
"""

from __future__ import annotations

import os
from datetime import timedelta
from types import ModuleType
from typing import TYPE_CHECKING

from mirix_py.errors import InvalidInput

if TYPE_CHECKING:
    from mirix_py.ingest.screenshots import ScreenshotConfig

__all__ = ["screenshot_config_from_env", "screenshots_module"]


def screenshots_module() -> ModuleType:
    """`mirix_py.ingest.screenshots`, or InvalidInput naming the extra and the apt package."""
    try:
        from mirix_py.ingest import screenshots
    except ImportError as exc:
        raise InvalidInput(f"screenshot ingestion needs Pillow and pytesseract: pip install 'mirix-py[screenshots]' "
                           f"and apt-get install tesseract-ocr ({exc})") from exc
    return screenshots


def screenshot_config_from_env(env: dict[str, str] | None = None) -> ScreenshotConfig:
    """ScreenshotConfig from MIRIX_OCR_LANG, MIRIX_OCR_WORKERS, MIRIX_SCREENSHOT_SIMILARITY,
    MIRIX_SCREENSHOT_BATCH_FRAMES, MIRIX_SCREENSHOT_BATCH_SECONDS, MIRIX_KEEP_THUMBNAILS,
    MIRIX_THUMBNAIL_RETENTION_DAYS and MIRIX_KEEP_OCR_TEXT (unset ones keep their defaults)."""
    from mirix_py.ingest.batching import BatchPolicy

    module = screenshots_module()  # Pillow and pytesseract are there, or a clear error
    from mirix_py.ingest.ocr import OcrConfig

    env = dict(os.environ if env is None else env)
    try:
        ocr = OcrConfig(lang=env.get("MIRIX_OCR_LANG", "eng"))
        batch = BatchPolicy(max_frames=int(env.get("MIRIX_SCREENSHOT_BATCH_FRAMES", 20)),
                            max_seconds=float(env.get("MIRIX_SCREENSHOT_BATCH_SECONDS", 60)))
        workers = env.get("MIRIX_OCR_WORKERS")
        retention = env.get("MIRIX_THUMBNAIL_RETENTION_DAYS")
        config: ScreenshotConfig = module.ScreenshotConfig(
            ocr=ocr, batch=batch, workers=int(workers) if workers else None,
            similarity_threshold=float(env.get("MIRIX_SCREENSHOT_SIMILARITY", 0.99)),
            keep_thumbnails=env.get("MIRIX_KEEP_THUMBNAILS", "").lower() in ("1", "true", "yes"),
            keep_ocr_text=env.get("MIRIX_KEEP_OCR_TEXT", "").lower() in ("1", "true", "yes"),
            thumbnail_retention=timedelta(days=float(retention)) if retention else timedelta(days=7),
        )
        return config
    except ValueError as exc:
        raise InvalidInput(f"screenshot settings in the environment: {exc}") from exc
