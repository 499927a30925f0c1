"""Unsure secret-shaped words (keys, passwords, ids, addresses) are read again, closer, and replace the
first reading only when the second is better."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from mirix_py.ingest import ocr
from mirix_py.ingest.ocr import OcrConfig
from mirix_py.ingest.reread import (
    better_reading, readings_by_row, reread_tokens, secret_shaped, stack_crops, words_to_reread,
)


def _data(rows):
    """image_to_data DICT from (left, top, width, height, conf, text) word rows (level 5)."""
    cols = {k: [] for k in ("level", "left", "top", "width", "height", "conf", "text")}
    for left, top, width, height, conf, text in rows:
        for k, v in zip(cols, (5, left, top, width, height, conf, text)):
            cols[k].append(v)
    return cols


def test_only_unsure_secret_shaped_words_are_read_again():
    data = _data([(0, 0, 50, 10, 49, "f2VRp9euDY-AcYy"), (60, 0, 50, 10, 95, "sk_live_HUXgw2y4"),
                  (0, 20, 50, 10, 30, "hello"), (0, 40, 50, 10, -1, "ab12cd34ef"), (0, 60, 50, 10, 61, "<ada@b.org>"),
                  (0, 80, 50, 10, 40, "c07e5f9"), (0, 90, 50, 10, 40, "lena@laptop:~/src$"),
                  (0, 100, 50, 10, 40, "'origin/main'.")])
    assert words_to_reread(data, below=80) == [0, 4]  # not: sure, plain, no confidence, short hash, prompt, path
    assert words_to_reread(data, below=80, limit=1) == [0]


@pytest.mark.parametrize("word,expected", [
    ("f2VRp9euDY-AcYy", True), ('"sk_live_HUXgw2y4hvNw2ha2wKNm9bpU"', True), ("ravi.tanaka@acme-analytics.com", True),
    ("c07e5f9", False), ("TIMEQUT_SECONDS", False), ("lena@laptop", False), ("run(port=8080)", True),
    ("hello", False),
])
def test_secret_shaped_words(word, expected):
    assert secret_shaped(word) is expected


def test_crops_are_stacked_one_per_row_and_readings_come_back_by_row():
    page = Image.new("L", (400, 100), 255)
    data = _data([(10, 10, 100, 12, 40, "first-token1"), (200, 60, 80, 12, 40, "second_tok2")])
    stacked, rows = stack_crops(page, data, [0, 1], factor=2.0)
    assert [r.index for r in rows] == [0, 1] and rows[0].bottom < rows[1].top
    assert stacked.width >= 2 * 100 and stacked.height > rows[1].bottom
    middle = lambda r: r.top + 2  # noqa: E731
    second = _data([(30, middle(rows[0]), 60, 4, 91, "first-"), (95, middle(rows[0]), 40, 4, 88, "token1"),
                    (30, middle(rows[1]), 90, 4, 93, "second_tok2")])
    assert readings_by_row(second, rows) == {0: ("first-token1", 88.0), 1: ("second_tok2", 93.0)}


def test_a_new_reading_must_be_surer_and_a_close_variant():
    assert better_reading("f2VRp9euDY-AcYy", 49, "fzVRp9euDY-AcYy", 90)
    assert better_reading("TIMEQUT_SECONDS", 20, "TIMEOUT_SECONDS", 85)
    assert not better_reading("f2VRp9euDY-AcYy", 49, "fzVRp9euDY-AcYy", 40)      # less sure
    assert not better_reading("'origin/main'.", 59, "‘origin/main'.", 90)          # only punctuation moved
    assert not better_reading("c07e5f9", 60, "hello world", 95)                      # a space: not one word
    assert not better_reading("c07e5f9", 60, "x", 95)                                # another length
    assert not better_reading("c07e5f9", 60, "zzzzzzz", 95)                          # another word


def test_a_second_read_that_finds_nothing_leaves_the_first():
    data = _data([(0, 0, 50, 10, 49, "f2VRp9euDY-AcYy")])

    def read(page):
        return _data([])

    assert reread_tokens(Image.new("L", (100, 30), 255), data, below=80, factor=2.0, read=read) == 0
    assert data["text"] == ["f2VRp9euDY-AcYy"]


def test_real_tesseract_gets_a_chat_password_right_that_the_first_pass_misreads(tesseract):
    from mirix_synth.screens import ScreenSynth

    synth = ScreenSynth(seed=7)
    frame = next(f for f in synth.session(days=2, dwell=(3, 7)) if "chat-password" in f.facts)
    image = frame.image()
    secret = synth.facts["chat-password"].secret
    first_pass = ocr.ocr_image(image, OcrConfig(reread_below=0)).text
    assert secret not in first_pass and secret[2:] in first_pass  # one character read wrong
    assert secret in ocr.ocr_image(image).text


def test_a_frame_without_unsure_tokens_costs_no_second_call(monkeypatch, tesseract):
    image = Image.new("RGB", (640, 120), "white")
    ImageDraw.Draw(image).text((10, 40), "plain words only", fill="black")
    calls = []
    original = ocr._image_to_data

    def counting(*args, **kwargs):
        calls.append(kwargs.get("args"))
        return original(*args, **kwargs)

    monkeypatch.setattr(ocr, "_image_to_data", counting)
    ocr.ocr_image(image)
    assert len(calls) == 1
