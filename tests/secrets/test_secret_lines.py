"""Which lines of a screen hold a secret (`secret_line_boxes`), on OCR results as ingest reads them."""

from __future__ import annotations

from mirix_py.ingest.ocr import OcrBlock, OcrLine, OcrResult, OcrWord
from mirix_py.secrets.masking import secret_line_boxes


def _line(*words: tuple[str, int]) -> OcrLine:
    """Words 20 px high on one row, each at its given left edge, 10 px per character wide."""
    return OcrLine(tuple(OcrWord(text, 95, (left, 0, 10 * len(text), 20)) for text, left in words))


def _at(line: OcrLine, top: int) -> OcrLine:
    return OcrLine(tuple(OcrWord(w.text, w.confidence, (w.box[0], top, w.box[2], w.box[3])) for w in line.words))


def _screen() -> OcrResult:
    title = _at(_line(("Network", 10), ("settings", 100)), 10)
    secret = _at(_line(("wifi", 10), ("password:", 60), ("CorrectHorse!42", 170)), 100)
    status = _at(_line(("Signal", 10), ("strong", 80)), 200)
    mail = _at(_line(("Mail", 1000), ("ada.lovelace@example.com", 1060)), 10)
    return OcrResult(blocks=(OcrBlock((title, secret, status)), OcrBlock((mail,))), size=(2000, 1000))


def test_the_lines_holding_a_secret_are_found_whole():
    ocr = _screen()
    assert "wifi password: CorrectHorse!42" in ocr.text and "ada.lovelace@example.com" in ocr.text
    boxes = secret_line_boxes(ocr)
    # the whole password line (label and value), and the mail line of the second block; nothing else
    assert sorted(boxes) == [(10, 100, 310, 20), (1000, 10, 300, 20)]


def test_a_value_on_the_line_below_its_label_is_found_on_its_own_line():
    label, value = _at(_line(("Password:", 10)), 10), _at(_line(("fuzzyzebra512", 10)), 50)
    boxes = secret_line_boxes(OcrResult(blocks=(OcrBlock((label, value)),), size=(400, 100)))
    assert boxes == [value.box]


def test_no_secret_no_ocr_no_boxes():
    plain = OcrResult(blocks=(OcrBlock((_line(("Hello", 0), ("world", 60)),)),), size=(200, 40))
    assert secret_line_boxes(plain) == [] and secret_line_boxes(None) == [] and secret_line_boxes(OcrResult()) == []


def test_the_detector_is_a_parameter():
    ocr = OcrResult(blocks=(OcrBlock((_line(("alpha", 0)), _at(_line(("beta", 0)), 40))),), size=(200, 80))

    class Match:
        def __init__(self, start: int, end: int) -> None:
            self.start, self.end = start, end

    def detect(text: str) -> list[Match]:
        return [Match(text.index("beta"), text.index("beta") + 4)]

    assert secret_line_boxes(ocr, detect) == [(0, 40, 40, 20)]
