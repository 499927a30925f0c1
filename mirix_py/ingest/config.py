"""What a user may change about screenshot ingestion (`ScreenshotConfig`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from mirix_py.errors import InvalidInput
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.ingest.dedup import DEFAULT_THRESHOLD
from mirix_py.ingest.multimodal import VISION_MAX_SIDE
from mirix_py.ingest.ocr import OcrConfig


@dataclass(frozen=True)
class ScreenshotConfig:
    """Everything about screenshot ingestion that a user may want to change.

    workers: OCR processes (default: one per core, each running single-threaded Tesseract).
    similarity_threshold: a frame at least this similar (regionally, see dedup.py) to the last
        kept frame of the same window is skipped before OCR; 1.0 skips only identical frames.
    batch: frames per update (max_frames) and seconds per update (max_seconds), grouped by app.
    min_text_chars: frames with less recognised text than this are not memorised.
    keep_thumbnails / thumbnail_max_side / thumbnail_retention: raw frames are never kept; a small
        WebP thumbnail can be, deleted after the retention period (None keeps them). It is written
        after OCR, with every line holding a secret painted out (`ingest.masking`); a frame whose
        OCR failed or found no text keeps none.
    vision / vision_max_side: keep a downscaled copy of each frame in memory until its batch is
        processed, for a vision-capable model (None: ask the host's `supports_vision`); its secret
        lines are painted out the same way, and a frame whose OCR failed sends no image.
    keep_ocr_text: keep each frame's OCR text in the input log after its batch is processed.
        By default a processed frame's entry keeps its id, capture time, file name, app, window
        and a hash of the text, and the text itself lives on in the memories made from it
        (`InputLog.compact`); frames not yet processed, or failed, always keep their text.
    """

    ocr: OcrConfig = field(default_factory=OcrConfig)
    workers: int | None = None
    dedup: bool = True
    similarity_threshold: float = DEFAULT_THRESHOLD
    batch: BatchPolicy = field(default_factory=BatchPolicy)
    min_text_chars: int = 3
    keep_thumbnails: bool = False
    thumbnail_max_side: int = 320
    thumbnail_retention: timedelta | None = timedelta(days=7)
    vision: bool | None = None
    vision_max_side: int = VISION_MAX_SIDE
    keep_ocr_text: bool = False
    measure_png_bytes: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.similarity_threshold <= 1:
            raise InvalidInput("similarity_threshold must be in (0, 1]")
        if self.workers is not None and self.workers < 0:
            raise InvalidInput("workers must be >= 0 (0 runs OCR in the calling process)")
        if self.thumbnail_max_side < 16:
            raise InvalidInput("thumbnail_max_side must be at least 16 pixels")
        if self.thumbnail_retention is not None and self.thumbnail_retention <= timedelta(0):
            raise InvalidInput("thumbnail_retention must be positive (or None to keep thumbnails)")
