"""A secret on screen stays out of the pixels that are kept or sent: the thumbnail (`keep_thumbnails`)
and the vision model's image show the secret's line painted solid, the other lines as they were.
Rendered screens read by the real Tesseract; the frames' fail-closed paths with a scripted OCR pool."""

from __future__ import annotations

from concurrent.futures import Future
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from PIL import Image, ImageDraw, ImageFont

from mirix_py.engine import Mirix
from mirix_py.ingest.masking import MASK_FILL
from mirix_py.ingest.ocr import OcrBlock, OcrConfig, OcrError, OcrLine, OcrResult, OcrWord, ocr_image
from mirix_py.ingest.screenshots import ScreenshotConfig, ScreenshotIngestor
from mirix_py.records import AddResult, InputRecord, InputStatus
from mirix_synth.screens import find_font

USER = "ada"
SECRET = "CorrectHorse!42"
LINES = ("Home network notes", "The quarterly review moved to Friday morning", f"wifi password: {SECRET}",
         "Router model Archer AX55 in the hallway")
SECRET_LINE, NORMAL_LINES = 2, (1, 3)
WHEN = datetime(2026, 11, 24, 10, 0, tzinfo=timezone.utc)


def _screen() -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    """A 1400 x 420 window with LINES in a 36 px font; each line's ink box (left, top, right, bottom)."""
    path = find_font()
    font = ImageFont.truetype(str(path), 36) if path else ImageFont.load_default(36)
    image = Image.new("RGB", (1400, 420), (250, 250, 248))
    draw = ImageDraw.Draw(image)
    boxes = []
    for i, line in enumerate(LINES):
        xy = (40, 40 + 90 * i)
        draw.text(xy, line, fill=(30, 30, 35), font=font)
        boxes.append(tuple(int(v) for v in draw.textbbox(xy, line, font=font)))
    return image, boxes


def _region(image: Image.Image, box: tuple[int, int, int, int], frame_width: int) -> Image.Image:
    f = image.width / frame_width
    return image.crop(tuple(round(v * f) for v in box))


def _assert_secret_line_painted(image: Image.Image, boxes, frame_width: int, *, tolerance: int) -> None:
    secret = _region(image, boxes[SECRET_LINE], frame_width).convert("L")
    low, high = secret.getextrema()
    assert high - MASK_FILL[0] <= tolerance, (low, high)  # one colour, the mask's, over the secret's line
    for i in NORMAL_LINES:
        low, high = _region(image, boxes[i], frame_width).convert("L").getextrema()
        assert low < 100 and high > 200, (i, low, high)  # dark text on a light background, untouched


def _read(image: Image.Image) -> str:
    """What Tesseract reads on `image` enlarged three times (a thumbnail is too small to read as it is)."""
    big = image.resize((image.width * 3, image.height * 3), Image.Resampling.LANCZOS)
    return ocr_image(big, OcrConfig(scale=1.0)).text


def _route_episodic(req):
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": ["episodic"]})]
    return [("insert_episodic", {"summary": "Read network notes", "actor": "user"})]


def test_the_thumbnail_and_the_vision_image_show_the_secrets_line_painted(tmp_path, tesseract):
    from autogen_core import Image as AGImage

    from mirix_py.llm.scripted import ScriptedChatCompletionClient

    screen, boxes = _screen()
    client = ScriptedChatCompletionClient(_route_episodic, vision=True)
    engine = Mirix(tmp_path / "data", embedder=None, model_client=client)
    try:
        engine.configure_screenshots(workers=1, keep_thumbnails=True, thumbnail_max_side=800, thumbnail_retention=None,
                                     vision_max_side=1024)
        result = engine.add_screenshot(screen, user_id=USER, captured_at=WHEN, app="Notes")
        assert result.status is InputStatus.processed, result.error
        assert "[vault:" in result.text or "[redacted:" in result.text  # the text the engine got was redacted
        thumb_file = engine.screenshot_thumbnail(result.input_ids[0], user_id=USER)
        assert thumb_file is not None
        with Image.open(thumb_file) as im:
            thumb = im.convert("RGB")
        assert thumb.size == (800, 240)
        _assert_secret_line_painted(thumb, boxes, screen.width, tolerance=24)  # WebP is lossy
        read = _read(thumb)
        assert "quarterly review" in read and "Archer" in read  # the control: a thumbnail's text can be read
        assert SECRET not in read and "Horse" not in read and "password" not in read
        images = [p.image for req in client.requests for p in req.messages[-1].content
                  if not isinstance(req.messages[-1].content, str) and isinstance(p, AGImage)]
        assert images and all(im.size == (1024, 307) for im in images)
        for image in images:
            _assert_secret_line_painted(image.convert("RGB"), boxes, screen.width, tolerance=0)
        read = _read(images[0])
        assert "quarterly review" in read and SECRET not in read and "Horse" not in read
    finally:
        engine.close()


def test_a_directory_run_keeps_painted_thumbnails(tmp_path, tesseract):
    screen, boxes = _screen()
    shots = tmp_path / "shots"
    shots.mkdir()
    screen.save(shots / "2026-11-24_10-00-00.png")
    with Mirix(tmp_path / "data", embedder=None) as engine:
        engine.configure_screenshots(workers=1, keep_thumbnails=True, thumbnail_max_side=800, thumbnail_retention=None)
        report = engine.ingest_screenshots(shots, user_id=USER, app="Notes")
        (outcome,) = report.outcomes
        assert outcome.status == "processed", outcome.error
        (thumb_file,) = list((tmp_path / "data" / "thumbnails").rglob("*.webp"))
        assert engine.screenshot_thumbnail(outcome.input_id, user_id=USER) == thumb_file.resolve()
        with Image.open(thumb_file) as im:
            _assert_secret_line_painted(im.convert("RGB"), boxes, screen.width, tolerance=24)


# ---------------------------------------------------------------- fail closed, with a scripted OCR pool


class _Ocr:
    """An OcrPool that answers every frame with `answer` (an OcrResult, or an exception to raise)."""

    workers = 1

    def __init__(self, answer: OcrResult | Exception) -> None:
        self.answer = answer

    def check(self) -> str:
        return "scripted"

    def submit(self, image: Image.Image) -> Future:
        future: Future = Future()
        if isinstance(self.answer, Exception):
            future.set_exception(self.answer)
        else:
            future.set_result(self.answer)
        return future

    def close(self) -> None:
        pass


class _Host:
    """A ScreenshotHost that records what it is given."""

    mode = "offline"
    supports_vision = True
    max_input_chars = 10_000

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.logged: list[InputRecord] = []
        self.batches: list[list[Any]] = []

    def log_inputs(self, records: Sequence[InputRecord]) -> None:
        self.logged += records

    def process_batch(self, records: Sequence[InputRecord], frames: Sequence[Any]) -> AddResult:
        self.batches.append([f.vision_image for f in frames])
        return AddResult(input_ids=[r.id for r in records], status=InputStatus.processed)

    def queue_again(self, records: Sequence[InputRecord]) -> bool:
        return False

    def mark_failed(self, input_ids: Sequence[str], error: str) -> None:
        pass

    def compact_inputs(self, input_ids: Sequence[str]) -> None:
        pass


def _ingestor(tmp_path: Path, answer: OcrResult | Exception) -> tuple[ScreenshotIngestor, _Host]:
    host = _Host(tmp_path / "data")
    config = ScreenshotConfig(keep_thumbnails=True, thumbnail_retention=None, vision=True, dedup=False)
    return ScreenshotIngestor(host, config, ocr=_Ocr(answer)), host  # type: ignore[arg-type]


def _thumbnails(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "data" / "thumbnails").rglob("*.webp"))


def _ocr_of_secret_screen() -> OcrResult:
    words = [OcrWord("wifi", 95, (40, 220, 70, 30)), OcrWord("password:", 95, (120, 220, 180, 30)),
             OcrWord(SECRET, 95, (310, 220, 300, 30))]
    return OcrResult(blocks=(OcrBlock((OcrLine(tuple(words)),)),), size=(1400, 420))


def test_a_frame_whose_ocr_failed_keeps_no_thumbnail_and_sends_no_image(tmp_path):
    ingestor, host = _ingestor(tmp_path, OcrError("Tesseract failed: scripted"))
    with ingestor:
        result = ingestor.add(_screen()[0], user_id=USER, captured_at=WHEN, app="Notes")
    assert result.status is InputStatus.failed and "OCR failed" in (result.error or "")
    assert _thumbnails(tmp_path) == [] and host.batches == [] and host.logged == []


def test_a_frame_whose_secrets_cannot_be_placed_keeps_and_sends_no_image(tmp_path, monkeypatch):
    from mirix_py.ingest import mask

    def broken(ocr):
        raise ValueError("OCR text and its lines disagree")

    monkeypatch.setattr(mask, "secret_line_boxes", broken)
    ingestor, host = _ingestor(tmp_path, _ocr_of_secret_screen())
    with ingestor:
        result = ingestor.add(_screen()[0], user_id=USER, captured_at=WHEN, app="Notes")
    assert result.status is InputStatus.processed  # the text still goes (the store's guard redacts it)
    assert _thumbnails(tmp_path) == [] and host.batches == [[None]] and "thumbnail" not in host.logged[0].metadata


def test_a_frame_without_text_keeps_no_thumbnail(tmp_path):
    ingestor, host = _ingestor(tmp_path, OcrResult(size=(1400, 420)))
    with ingestor:
        result = ingestor.add(_screen()[0], user_id=USER, captured_at=WHEN, app="Notes")
    assert result.frame.status == "no_text" and _thumbnails(tmp_path) == [] and host.batches == []


def test_the_scripted_frame_is_painted_where_its_ocr_found_the_secret(tmp_path):
    ingestor, host = _ingestor(tmp_path, _ocr_of_secret_screen())
    with ingestor:
        result = ingestor.add(_screen()[0], user_id=USER, captured_at=WHEN, app="Notes")
    assert result.status is InputStatus.processed
    (thumb_file,) = _thumbnails(tmp_path)
    assert host.logged[0].metadata["thumbnail"].endswith(thumb_file.name)
    with Image.open(thumb_file) as im:
        thumb = im.convert("L")  # 320 x 96: the line (40, 220)-(610, 250) is at (9, 50)-(139, 57)
    assert thumb.crop((9, 50, 139, 57)).getextrema()[1] <= 24
    ((image,),) = host.batches
    assert image.size == (1280, 384) and image.crop((37, 201, 557, 228)).getcolors() == [(520 * 27, MASK_FILL)]


def test_a_queued_frame_is_painted_before_its_thumbnail_is_written(tmp_path):
    ingestor, host = _ingestor(tmp_path, _ocr_of_secret_screen())
    with ingestor:
        pending = ingestor.add(_screen()[0], user_id=USER, captured_at=WHEN, app="Notes", wait=False)
        assert pending.status is InputStatus.pending
        ingestor.flush()
    (thumb_file,) = _thumbnails(tmp_path)
    assert host.logged[0].metadata["thumbnail"].endswith(thumb_file.name)
    with Image.open(thumb_file) as im:
        assert im.convert("L").crop((9, 50, 139, 57)).getextrema()[1] <= 24
    ((image,),) = host.batches
    assert image.crop((37, 201, 557, 228)).getcolors() == [(520 * 27, MASK_FILL)]
