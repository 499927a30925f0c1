"""Screenshot settings from the environment, and the screenshot modules imported on demand.

Pillow and pytesseract (the `screenshots` extra) are imported only when screenshots are used;
`screenshots_module()` turns their absence into an InvalidInput naming what to install.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import timedelta
from types import ModuleType
from typing import TYPE_CHECKING

from mirix_py.errors import InvalidInput

if TYPE_CHECKING:
    from mirix_py.ingest.screenshots import ScreenshotConfig

__all__ = ["ENV_VARS", "screenshot_config_from_env", "screenshots_module"]


def screenshots_module() -> ModuleType:
    """`mirix_py.ingest.screenshots`, or InvalidInput naming the extra and the apt package."""
    try:
        from mirix_py.ingest import screenshots
    except ImportError as exc:
        raise InvalidInput(f"screenshot ingestion needs Pillow and pytesseract: pip install 'mirix-py[screenshots]' "
                           f"and apt-get install tesseract-ocr ({exc})") from exc
    return screenshots


# The environment variable of each setting a user may give there (unset ones keep the defaults of
# `ingest.defaults`, which the config dataclasses hold).
ENV_VARS = {
    "lang": "MIRIX_OCR_LANG",
    "workers": "MIRIX_OCR_WORKERS",
    "similarity": "MIRIX_SCREENSHOT_SIMILARITY",
    "batch_frames": "MIRIX_SCREENSHOT_BATCH_FRAMES",
    "batch_seconds": "MIRIX_SCREENSHOT_BATCH_SECONDS",
    "keep_thumbnails": "MIRIX_KEEP_THUMBNAILS",
    "thumbnail_days": "MIRIX_THUMBNAIL_RETENTION_DAYS",
    "keep_ocr_text": "MIRIX_KEEP_OCR_TEXT",
}
_YES = ("1", "true", "yes")


def screenshot_config_from_env(env: Mapping[str, str] | None = None, *,
                               overridden: Collection[str] = ()) -> ScreenshotConfig:
    """ScreenshotConfig from the variables of `ENV_VARS` that are set (the process environment by
    default). The settings named in `overridden` (keys of ENV_VARS) are not read: a caller giving its
    own value for one (a command-line flag) is not refused for an environment value it replaces."""
    module = screenshots_module()  # Pillow and pytesseract are there, or a clear error
    from mirix_py.ingest.batching import BatchPolicy
    from mirix_py.ingest.ocr import OcrConfig

    source = os.environ if env is None else env
    given = {name: source[var] for name, var in ENV_VARS.items() if name not in overridden and var in source}
    try:
        ocr = OcrConfig(lang=given["lang"]) if "lang" in given else OcrConfig()
        batch = BatchPolicy()
        if "batch_frames" in given:
            batch = replace(batch, max_frames=int(given["batch_frames"]))
        if "batch_seconds" in given:
            batch = replace(batch, max_seconds=float(given["batch_seconds"]))
        config: ScreenshotConfig = module.ScreenshotConfig(ocr=ocr, batch=batch)
        if given.get("workers"):
            config = replace(config, workers=int(given["workers"]))
        if "similarity" in given:
            config = replace(config, similarity_threshold=float(given["similarity"]))
        if given.get("thumbnail_days"):
            config = replace(config, thumbnail_retention=timedelta(days=float(given["thumbnail_days"])))
        if "keep_thumbnails" in given:
            config = replace(config, keep_thumbnails=given["keep_thumbnails"].lower() in _YES)
        if "keep_ocr_text" in given:
            config = replace(config, keep_ocr_text=given["keep_ocr_text"].lower() in _YES)
        return config
    except ValueError as exc:
        raise InvalidInput(f"screenshot settings in the environment: {exc}") from exc
