"""The screenshot settings' defaults, in one place that imports nothing heavy: the config dataclasses
take them, and so do the CLI's help texts, which cannot import Pillow when `mirix` starts."""

from __future__ import annotations

OCR_LANG = "eng"
SIMILARITY = 0.99  # a frame at least this like the last kept one of its window is skipped
BATCH_FRAMES = 20
BATCH_SECONDS = 60.0
THUMBNAIL_DAYS = 7.0
