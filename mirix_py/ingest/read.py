"""The OCR stage: admitted frames are read by the OCR pool (`ingest.ocr`) while the next ones are
admitted; a frame's text is taken only once its images are painted (`ingest.mask`).

A frame whose OCR failed fails closed: it keeps `error`, no image of it is kept or sent (nothing
says where its secrets are), and its window forgets it, so an identical frame gets another chance.
"""

from __future__ import annotations

import threading
from typing import Callable

from PIL import Image

from mirix_py.ingest.ocr import OcrPool, OcrResult
from mirix_py.ingest.outcomes import IngestReport
from mirix_py.ingest.processed import ProcessedFrame

Mask = Callable[[ProcessedFrame, "OcrResult | None"], None]


class FrameReader:
    """`mask` paints a read frame's images; `forget` is told of a frame whose OCR failed; OCR time
    counts in `totals`."""

    def __init__(self, ocr: OcrPool, *, mask: Mask, forget: Callable[[ProcessedFrame], None], totals: IngestReport,
                 lock: threading.RLock) -> None:
        self.ocr = ocr
        self.mask = mask
        self.forget = forget
        self.totals = totals
        self.lock = lock
        self._checked = False

    def check(self) -> None:
        """Tesseract and the language data are there (raises TesseractMissing / InvalidInput)."""
        if not self._checked:
            self.ocr.check()
            self._checked = True

    def start(self, frame: ProcessedFrame, image: Image.Image) -> None:
        frame.future = self.ocr.submit(image)

    def finish(self, frame: ProcessedFrame) -> bool:
        """Wait for the frame's OCR, then paint its secrets out of its images; False (with
        frame.error, and no image kept or sent) when it failed. Once per frame."""
        if frame.ocr is not None or frame.error is not None:
            return frame.error is None
        try:
            ocr = frame.future.result() if frame.future else None
        except Exception as exc:
            frame.error = f"OCR failed: {exc}"
            frame.vision_image = frame.thumbnail_image = None  # fail closed: nothing says where secrets are
            self.forget(frame)
            return False
        finally:
            frame.future = None
        self.mask(frame, ocr)
        frame.ocr = ocr  # only now: a frame with OCR text is one whose images are safe
        if ocr is not None:
            with self.lock:
                self.totals.ocr_seconds += ocr.seconds
        return True

    @property
    def workers(self) -> int:
        return self.ocr.workers

    def close(self) -> None:
        self.ocr.close()
