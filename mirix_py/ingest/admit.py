"""The first stage: a loaded frame admitted or skipped, before any OCR.

The metadata is checked (InvalidInput writes nothing), a frame that nearly repeats the last kept
frame of its window is skipped (`ingest.dedup`), its PNG size is measured for the storage report,
and the downscaled copies a vision model and a thumbnail take are made; they wait in memory until
OCR says which lines hold secrets (`ingest.mask`).
"""

from __future__ import annotations

import threading
from datetime import datetime

from mirix_py.errors import InvalidInput
from mirix_py.ingest.config import ScreenshotConfig
from mirix_py.ingest.dedup import Deduplicator
from mirix_py.ingest.frames import LoadedFrame, png_size
from mirix_py.ingest.multimodal import downscale_for_vision
from mirix_py.ingest.outcomes import FrameOutcome
from mirix_py.ingest.processed import ProcessedFrame
from mirix_py.ingest.thumbnails import Thumbnails
from mirix_py.boundary.inputs import check_source_id, check_storable, check_user, parse_said
from mirix_py.records import new_input_id, utcnow

PNG_SIZES_KEPT = 4096  # windows come and go: the PNG sizes of the recent ones are kept


class FrameAdmission:
    """Per user, the last kept frame of each window (to skip repeats) and its PNG size (what a
    skipped in-memory frame is counted as)."""

    def __init__(self, config: ScreenshotConfig, thumbnails: Thumbnails) -> None:
        self.config = config
        self.thumbnails = thumbnails
        self._lock = threading.Lock()
        self._dedup: dict[str, Deduplicator] = {}
        self._png_sizes: dict[tuple, int | None] = {}  # (user, window) -> PNG bytes of its last kept frame

    def _deduplicator(self, user_id: str) -> Deduplicator:
        dedup = self._dedup.get(user_id)
        if dedup is None:
            dedup = self._dedup[user_id] = Deduplicator(self.config.similarity_threshold)
        return dedup

    def admit(self, loaded: LoadedFrame, *, user_id: str, captured_at: datetime | str | None, app: str | None,
              window_title: str | None, source_id: str | None,
              vision: bool) -> tuple[ProcessedFrame | None, FrameOutcome]:
        """Validate the metadata and dedup. Returns (frame, outcome); frame None when skipped.
        `vision`: keep a downscaled copy for a vision model."""
        check_user(user_id)
        when = parse_said(captured_at, "captured_at") or utcnow()  # the capture's clock kept: the memory's text states it
        for name, value in (("app", app), ("window_title", window_title)):
            if value is not None and (not isinstance(value, str) or len(value) > 1000):
                raise InvalidInput(f"{name} must be a string of at most 1000 characters")
            check_storable(value, name)
        check_source_id(source_id)  # as `add` checks it: here, so a frame is refused alone, not its batch
        app = (app or "").strip() or None
        window_title = (window_title or "").strip() or None
        # PNG size for the storage report: exact for PNG input; an in-memory frame (the capture
        # loop) is encoded only when kept, and its duplicates count the size of the frame they repeat
        png = loaded.png_bytes
        outcome = FrameOutcome(name=loaded.name, status="pending", captured_at=when, app=app,
                               window_title=window_title, png_bytes=png)
        frame = ProcessedFrame(user_id=user_id, captured_at=when, app=app, window_title=window_title,
                               name=loaded.name, source_id=source_id, png_bytes=png, outcome=outcome,
                               input_id=new_input_id())
        if self.config.dedup:
            with self._lock:
                decision, sig = self._deduplicator(user_id).observe(loaded.image, (app, window_title))
            outcome.similarity = None if decision.compared_with is None else round(decision.similarity, 4)
            if decision.duplicate:
                outcome.status = "duplicate"
                if outcome.png_bytes is None and self.config.measure_png_bytes:
                    outcome.png_bytes = self._png_sizes.get((user_id, decision.compared_with))
                return None, outcome
            frame.signature = sig
        if png is None and self.config.measure_png_bytes:
            png = outcome.png_bytes = frame.png_bytes = png_size(loaded)
        with self._lock:
            key = (user_id, (app, window_title))
            self._png_sizes.pop(key, None)
            self._png_sizes[key] = png
            if len(self._png_sizes) > PNG_SIZES_KEPT:
                del self._png_sizes[next(iter(self._png_sizes))]
        if vision:
            frame.vision_image = downscale_for_vision(loaded.image, self.config.vision_max_side)
        if self.config.keep_thumbnails and self.thumbnails.due(user_id, when):
            frame.thumbnail_image = downscale_for_vision(loaded.image, self.config.thumbnail_max_side)
        outcome.input_id = frame.input_id
        return frame, outcome

    def remember(self, loaded: LoadedFrame, *, user_id: str, app: str | None, window_title: str | None) -> None:
        """Make `loaded` the last kept frame of its window without admitting it (an earlier run kept it)."""
        if not self.config.dedup:
            return
        with self._lock:
            dedup = self._deduplicator(user_id)
        sig = dedup.signature(loaded.image)
        with self._lock:
            dedup.remember(sig, (app, window_title))

    def forget(self, frame: ProcessedFrame) -> None:
        """The frame's OCR failed: an identical frame of its window gets another chance."""
        if frame.signature is not None:
            with self._lock:
                self._deduplicator(frame.user_id).forget((frame.app, frame.window_title), frame.signature)

    def delete_user(self, user_id: str) -> None:
        with self._lock:
            self._dedup.pop(user_id, None)
