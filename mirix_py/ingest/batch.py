"""The batch stage: read frames of one user and app into the input log, then to the memory managers.

A frame's OCR text is logged once (so a crash loses nothing acknowledged), the batch goes to the
host's managers (`host.process_batch`, or the `process` given) with the frames' downscaled images,
which do not outlive it, and a processed batch's log entries drop their text, keeping provenance
and a hash (`ScreenshotConfig.keep_ocr_text` keeps it). A batch whose managers raise (the database
failing, say) is queued again by the host, to be tried from its logged text without the images;
when the host cannot, its inputs are marked failed and keep their text for `retry_failed`.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from mirix_py.ingest.config import ScreenshotConfig
from mirix_py.ingest.host import ScreenshotHost
from mirix_py.ingest.outcomes import FrameOutcome, IngestReport
from mirix_py.ingest.processed import ProcessedFrame, clean_text, frames_to_records
from mirix_py.llm.loop import EngineClosed
from mirix_py.records import AddResult, InputRecord, InputStatus

if TYPE_CHECKING:
    from mirix_py.store.inputs import LoggedSource

log = logging.getLogger("mirix_py.screenshots")

Processor = Callable[[Sequence[InputRecord], Sequence[ProcessedFrame]], AddResult]


class BatchWriter:
    """`finish` waits for a frame's OCR and masking (`FrameReader.finish`); logged text counts in `totals`."""

    def __init__(self, host: ScreenshotHost, config: ScreenshotConfig, *, process: Processor,
                 finish: Callable[[ProcessedFrame], bool], totals: IngestReport, lock: threading.RLock,
                 drop_thumbnail: Callable[[str, str], None] = lambda user_id, relative: None) -> None:
        """`drop_thumbnail(user_id, relative)`: delete the thumbnail of a frame that makes no input here."""
        self.host = host
        self.config = config
        self.process = process
        self.finish = finish
        self.drop_thumbnail = drop_thumbnail
        self.totals = totals
        self.lock = lock

    def log(self, frames: Sequence[ProcessedFrame], *, once: bool = False) -> list[ProcessedFrame]:
        """Write OCR text to the input log (once per frame); returns the frames logged with text. A frame
        counts as logged (`frame.record`) only once the log took it: when the write raises, the next
        call writes it again. `once`: frames of files, not logged when the log holds their file already
        (another run over the folder logged it meanwhile, or an earlier frame of the batch is of the same
        file: `frame.logged_elsewhere`); such a frame's thumbnail and image go at once."""
        fresh: list[tuple[ProcessedFrame, InputRecord]] = []
        with_text: list[ProcessedFrame] = []
        for frame in frames:
            if frame.record is None:
                if frame.error is not None or len(clean_text(frame.text)) < self.config.min_text_chars:
                    continue
                records = frames_to_records([frame], frame.user_id, max_chars=self.host.max_input_chars)
                if not records:
                    continue
                fresh.append((frame, records[0]))
            with_text.append(frame)
        if fresh:
            logged_before = self._write([record for _, record in fresh], once=once)
            for frame, record in fresh:
                if record.id in logged_before:
                    frame.logged_elsewhere = logged_before[record.id].id
                    with_text.remove(frame)
                    self._forget_images(frame)
                else:
                    frame.record, frame.input_id = record, record.id
            with self.lock:
                self.totals.text_bytes += sum(len(m.content.encode("utf-8")) for _, r in fresh
                                              if r.id not in logged_before for m in r.messages)
        return with_text

    def _forget_images(self, frame: ProcessedFrame) -> None:
        """A frame the log holds as another input: its kept thumbnail is deleted and its image not sent."""
        if frame.thumbnail is not None:
            self.drop_thumbnail(frame.user_id, frame.thumbnail)
        frame.thumbnail, frame.vision_image = None, None

    def _write(self, records: Sequence[InputRecord], *, once: bool) -> Mapping[str, LoggedSource]:
        """Log the records; returns, by record id, those left out for an input the log held (`once`)."""
        if once:
            return self.host.log_new_inputs(records)
        self.host.log_inputs(records)
        return {}

    def run(self, frames: Sequence[ProcessedFrame], *, once: bool = False) -> AddResult | None:
        """OCR results → input log → memory managers, for one batch of one user and app (`once`: as `log`)."""
        for frame in frames:
            self.finish(frame)
        with_text = self.log(frames, once=once)
        if not with_text:
            return None
        records = [f.record for f in with_text if f.record is not None]
        try:
            result = self.process(records, with_text)
        except Exception as exc:  # the managers failed as a whole: the inputs stay logged
            result = self._set_aside(records, exc)
        finally:
            for frame in with_text:
                frame.vision_image = None  # images do not outlive their batch
        if result is not None and result.status is InputStatus.processed and not self.config.keep_ocr_text:
            try:  # the memories hold the text now; the log keeps provenance and a hash
                self.host.compact_inputs([r.id for r in records])
            except Exception:  # the batch stands; the entries merely keep their text
                log.exception("compacting the input log failed")
        return result

    def _set_aside(self, records: Sequence[InputRecord], exc: Exception) -> AddResult:
        """A batch that raised: queued again (`pending`, the error kept), else marked failed."""
        ids, error = [r.id for r in records], f"{type(exc).__name__}: {exc}"
        if isinstance(exc, EngineClosed) and self.host.queue_again(records):  # cut short by close: no fault
            log.info("closing: a screenshot batch of %d frame(s) was cut short; left pending in the input log "
                     "for the next open", len(ids))
            return AddResult(input_ids=ids, status=InputStatus.pending,
                             error="left pending by close: the next start processes it")
        if self.host.queue_again(records):
            log.warning("screenshot batch of %d frame(s) failed (%s); queued to be tried again", len(ids), error)
            return AddResult(input_ids=ids, status=InputStatus.pending, error=f"{error}; queued to be tried again")
        log.error("screenshot batch failed", exc_info=exc)
        self.host.mark_failed(ids, error)
        return AddResult(input_ids=ids, status=InputStatus.failed, error=error)


def outcome_after(frame: ProcessedFrame, outcome: FrameOutcome, result: AddResult | None) -> FrameOutcome:
    """The frame's final outcome once its batch ran (`result` None: nothing of it reached the managers)."""
    if frame.error is not None:
        outcome.status, outcome.error, outcome.input_id = "failed", frame.error, None
    elif frame.logged_elsewhere is not None:  # another run over the folder logged the file first
        outcome.status, outcome.input_id = "ingested", frame.logged_elsewhere
    elif frame.record is None:
        outcome.status, outcome.input_id = "no_text", None
    elif result is not None and result.status is InputStatus.failed:
        outcome.status, outcome.error, outcome.input_id = "failed", result.error, frame.input_id
    elif result is not None and result.status is InputStatus.pending:  # queued again after its batch raised
        outcome.status, outcome.error, outcome.input_id = "pending", result.error, frame.input_id
    else:
        outcome.status, outcome.input_id = "processed", frame.input_id
    outcome.text_chars = len(frame.text)
    return outcome
