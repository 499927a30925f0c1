"""A key that Tesseract reads as two words ("sk-live-7Hq2 Xe4Rt6...") is still a secret: one word in the
OCR text, a placeholder in memory, its whole line painted out of the kept thumbnail."""

from __future__ import annotations

from datetime import datetime, timezone

from PIL import Image, ImageDraw, ImageFont

from mirix_py.engine import Mirix
from mirix_py.ingest.masking import MASK_FILL
from mirix_py.ingest.ocr import parse_tesseract_data
from mirix_py.records import InputStatus
from mirix_synth.screens import find_font

USER = "ada"
HEAD, TAIL = "sk-live-7Hq2", "Xe4Rt6Yu8Wz3Pa5Sd7"  # one key; the gap drawn between them makes OCR read two words
WHEN = datetime(2026, 11, 24, 10, 0, tzinfo=timezone.utc)
INK, PAPER = (30, 30, 35), (250, 250, 248)


def _screen() -> tuple[Image.Image, tuple[int, int, int, int], list[tuple[int, int, int, int]]]:
    """A 1400 x 420 window in a 36 px font: prose, "Live key <HEAD> <TAIL>" with a gap wider than a space
    inside the key, prose. Returns the image, the key's ink box and the other lines' ink boxes."""
    path = find_font()
    font = ImageFont.truetype(str(path), 36) if path else ImageFont.load_default(36)
    image = Image.new("RGB", (1400, 420), PAPER)
    draw = ImageDraw.Draw(image)
    prose = []
    for xy, line in (((40, 40), "Deploy checklist for Friday"), ((40, 220), "Rotate it after the release")):
        draw.text(xy, line, fill=INK, font=font)
        prose.append(tuple(int(v) for v in draw.textbbox(xy, line, font=font)))
    draw.text((40, 130), "Live key", fill=INK, font=font)
    head_at = (40 + draw.textlength("Live key ", font=font), 130)
    tail_at = (head_at[0] + draw.textlength(HEAD, font=font) + 18, 130)
    draw.text(head_at, HEAD, fill=INK, font=font)
    draw.text(tail_at, TAIL, fill=INK, font=font)
    left, top, _, _ = draw.textbbox(head_at, HEAD, font=font)
    _, _, right, bottom = draw.textbbox(tail_at, TAIL, font=font)
    return image, (int(left), int(top), int(right), int(bottom)), prose


def _region(image: Image.Image, box: tuple[int, int, int, int], frame_width: int) -> Image.Image:
    f = image.width / frame_width
    return image.crop(tuple(round(v * f) for v in box)).convert("L")


def _words(*rows: tuple[int, int, int, str]) -> dict[str, list]:
    """image_to_data DICT for words of one line: (left, width, conf, text) rows, 30 px high at top 100."""
    data: dict[str, list] = {k: [] for k in ("level", "page_num", "block_num", "par_num", "line_num", "word_num",
                                             "left", "top", "width", "height", "conf", "text")}
    for n, (left, width, conf, text) in enumerate(rows, 1):
        for k, v in zip(data, (5, 1, 1, 1, 1, n, left, 100, width, 30, conf, text)):
            data[k].append(v)
    return data


def test_the_two_words_of_a_read_key_become_one_word_covering_both_boxes():
    result = parse_tesseract_data(_words((40, 60, 96, "Live"), (110, 50, 95, "key"), (170, 220, 91, HEAD),
                                         (410, 380, 88, TAIL)), min_confidence=45)
    (block,) = result.blocks
    (line,) = block.lines
    assert [w.text for w in line.words] == ["Live", "key", HEAD + TAIL]
    assert line.words[-1].box == (170, 100, 620, 30) and line.words[-1].confidence == 88


def test_a_key_read_as_two_words_is_a_placeholder_in_memory_and_painted_in_the_thumbnail(tmp_path, tesseract):
    screen, key_box, prose_boxes = _screen()
    with Mirix(tmp_path / "data", embedder=None) as engine:
        engine.configure_screenshots(workers=1, keep_thumbnails=True, thumbnail_max_side=800,
                                     thumbnail_retention=None)
        result = engine.add_screenshot(screen, user_id=USER, captured_at=WHEN, app="Notes")
        assert result.status is InputStatus.processed, result.error
        assert "Deploy checklist" in result.text and "Live key [redacted:api_key]" in result.text
        memories = engine.list(user_id=USER, memory_types=["episodic", "resource", "semantic", "procedural", "core"])
        # the control: the frame's text is there, the key as a placeholder
        assert any("Deploy checklist" in m.search_text() and "[vault:" in m.search_text() for m in memories)
        for text in [result.text, *(m.search_text() for m in memories)]:
            assert "7Hq2" not in text and "Xe4Rt6" not in text, text
        vault = [engine.get(m.id, user_id=USER, reveal=True) for m in engine.list(
            user_id=USER, memory_types=["knowledge_vault"])]
        keys = [v.secret_value for v in vault if v.entry_type == "api_key"]
        assert len(keys) == 1 and keys[0].startswith(HEAD + "Xe4Rt6") and len(keys[0]) == len(HEAD + TAIL), keys
        thumb_file = engine.screenshot_thumbnail(result.input_ids[0], user_id=USER)
        assert thumb_file is not None
        with Image.open(thumb_file) as im:
            thumb = im.convert("RGB")
    assert _region(thumb, key_box, screen.width).getextrema()[1] - MASK_FILL[0] <= 24  # both halves: WebP is lossy
    for box in prose_boxes:
        low, high = _region(thumb, box, screen.width).getextrema()
        assert low < 100 and high > 200, (box, low, high)  # dark text on a light background, untouched
