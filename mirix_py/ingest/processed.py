"""A frame on its way through the pipeline (`ProcessedFrame`), and the seam to the memory managers:
`frames_to_records` turns frames into InputRecords of kind "screenshot"."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

from PIL import Image

from mirix_py.ingest.dedup import FrameSignature
from mirix_py.ingest.ocr import OcrResult
from mirix_py.ingest.outcomes import FrameOutcome
from mirix_py.boundary.inputs import normalize_add
from mirix_py.records import InputRecord


@dataclass
class ProcessedFrame:
    """A frame after OCR, on its way to the input log and the memory managers."""

    user_id: str
    captured_at: datetime
    app: str | None
    window_title: str | None
    name: str
    ocr: OcrResult | None = None
    input_id: str | None = None
    source_id: str | None = None
    thumbnail: str | None = None
    vision_image: Image.Image | None = field(default=None, repr=False)
    thumbnail_image: Image.Image | None = field(default=None, repr=False)  # until OCR says what to paint out
    png_bytes: int | None = None
    future: Future | None = field(default=None, repr=False)
    signature: FrameSignature | None = field(default=None, repr=False)
    record: InputRecord | None = field(default=None, repr=False)
    outcome: FrameOutcome | None = field(default=None, repr=False)
    error: str | None = None
    # the input another run (or an earlier frame of its batch) logged this frame's file as, found when this
    # one came to log it: not logged twice
    logged_elsewhere: str | None = None
    claim_id: str | None = None  # this run's claim on the frame's file while it is read (`ingest.files`)

    @property
    def text(self) -> str:
        return self.ocr.text if self.ocr else ""


def clean_text(text: str) -> str:
    """OCR text without control characters (newlines and tabs stay), stripped."""
    return "".join(ch for ch in text if ch in "\n\t" or ord(ch) >= 32).strip()


def frames_to_records(frames: Sequence[ProcessedFrame], user_id: str, *, max_chars: int = 200_000) -> list[InputRecord]:
    """The seam between ingestion and the memory managers: one InputRecord per frame.

    kind "screenshot", the OCR text as the message content, the capture time as occurred_at,
    metadata {"app", "window_title"} (and "thumbnail" when one is kept), the file name as source_id.
    Frames without text are left out.
    """
    records = []
    for frame in frames:
        text = clean_text(frame.text)
        if not text:
            continue
        metadata = {k: v for k, v in (("app", frame.app), ("window_title", frame.window_title),
                                      ("thumbnail", frame.thumbnail)) if v}
        record = normalize_add(text[:max_chars], user_id=user_id, occurred_at=frame.captured_at,
                               source_id=frame.source_id, kind="screenshot", max_chars=max_chars, metadata=metadata)
        if frame.input_id:
            record = record.model_copy(update={"id": frame.input_id})
        records.append(record)
    return records
