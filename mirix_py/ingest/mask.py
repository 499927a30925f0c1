"""The mask stage: once OCR says where a frame's secrets are, every OCR line holding one is painted
out of the frame's vision image and thumbnail (`ingest.masking`), then the thumbnail is written.

Fails closed: a frame without usable text (it makes no input), or any error here, keeps no
thumbnail and sends no image.
"""

from __future__ import annotations

import logging

from mirix_py.ingest.masking import mask_regions
from mirix_py.ingest.ocr import OcrResult
from mirix_py.ingest.processed import ProcessedFrame, clean_text
from mirix_py.ingest.thumbnails import Thumbnails
from mirix_py.secrets.masking import secret_line_boxes

log = logging.getLogger("mirix_py.screenshots")


class ImageMasking:
    """`min_text_chars`: a frame with less text makes no input, so its images go too."""

    def __init__(self, min_text_chars: int, thumbnails: Thumbnails) -> None:
        self.min_text_chars = min_text_chars
        self.thumbnails = thumbnails

    def protect(self, frame: ProcessedFrame, ocr: OcrResult | None) -> None:
        """Paint the secret lines out of the frame's images, then write its thumbnail."""
        thumb, frame.thumbnail_image = frame.thumbnail_image, None
        if frame.vision_image is None and thumb is None:
            return
        try:
            if ocr is None or len(clean_text(ocr.text)) < self.min_text_chars:
                frame.vision_image = None
                return
            boxes = secret_line_boxes(ocr)
            if boxes:
                if frame.vision_image is not None:
                    frame.vision_image = mask_regions(frame.vision_image, boxes, source_size=ocr.size)
                if thumb is not None:
                    thumb = mask_regions(thumb, boxes, source_size=ocr.size)
            if thumb is not None:
                frame.thumbnail = self.thumbnails.write(thumb, frame.user_id, frame.captured_at)
        except Exception:
            log.exception("painting secrets out of a frame's images failed: the frame keeps and sends none")
            frame.vision_image, frame.thumbnail = None, None
