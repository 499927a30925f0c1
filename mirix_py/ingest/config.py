"""What a user may change about screenshot ingestion (`ScreenshotConfig`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from mirix_py.errors import InvalidInput
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.ingest.dedup import DEFAULT_THRESHOLD
from mirix_py.ingest.defaults import THUMBNAIL_DAYS
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
    thumbnail_retention: timedelta | None = timedelta(days=THUMBNAIL_DAYS)
    vision: bool | None = None
    vision_max_side: int = VISION_MAX_SIDE
    keep_ocr_text: bool = False
    measure_png_bytes: bool = True

    def __post_init__(self) -> None:
        self._check_types()
        if not 0 < self.similarity_threshold <= 1:
            raise InvalidInput("similarity_threshold must be in (0, 1]")
        if self.workers is not None and self.workers < 0:
            raise InvalidInput("workers must be >= 0 (0 runs OCR in the calling process)")
        if self.thumbnail_max_side < 16:
            raise InvalidInput("thumbnail_max_side must be at least 16 pixels")
        if self.thumbnail_retention is not None and self.thumbnail_retention <= timedelta(0):
            raise InvalidInput("thumbnail_retention must be positive (or None to keep thumbnails)")
        if self.min_text_chars < 0:
            raise InvalidInput("min_text_chars must be >= 0")
        if self.vision_max_side < 64:
            raise InvalidInput("vision_max_side must be at least 64 pixels")

    def _check_types(self) -> None:
        """Each setting of the type it names: `keep_thumbnails="false"` is a true string, and would
        keep images the caller meant not to."""
        flags = ("dedup", "keep_thumbnails", "keep_ocr_text", "measure_png_bytes")
        counts = ("min_text_chars", "thumbnail_max_side", "vision_max_side")
        for name in flags:
            if not isinstance(getattr(self, name), bool):
                raise InvalidInput(f"{name} must be true or false, not {getattr(self, name)!r}")
        for name in counts:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidInput(f"{name} must be a whole number, not {value!r}")
        if self.workers is not None and (isinstance(self.workers, bool) or not isinstance(self.workers, int)):
            raise InvalidInput(f"workers must be a whole number or None, not {self.workers!r}")
        if self.vision is not None and not isinstance(self.vision, bool):
            raise InvalidInput(f"vision must be true, false or None, not {self.vision!r}")
        if isinstance(self.similarity_threshold, bool) or not isinstance(self.similarity_threshold, (int, float)):
            raise InvalidInput(f"similarity_threshold must be a number, not {self.similarity_threshold!r}")
        if self.thumbnail_retention is not None and not isinstance(self.thumbnail_retention, timedelta):
            raise InvalidInput(f"thumbnail_retention must be a timedelta or None, not {self.thumbnail_retention!r}")
        if not isinstance(self.ocr, OcrConfig):
            raise InvalidInput(f"ocr must be an OcrConfig, not {self.ocr!r}")
        if not isinstance(self.batch, BatchPolicy):
            raise InvalidInput(f"batch must be a BatchPolicy, not {self.batch!r}")
