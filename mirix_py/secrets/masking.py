"""Which lines of a screen hold a secret, so that no kept or sent copy of the frame shows one.

After OCR the secret rules run over the frame's text, and every OCR line holding any part of a
secret is returned whole, because a label and its value are often split over several words
("Password:" "Correct" "Horse!42") and Tesseract's word boxes are tight. Painting the boxes out of
the image is ingest's (`ingest.masking.mask_regions`).

The OCR result is read through its shape (`ScreenText`), so this package needs nothing of ingest.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

from mirix_py.secrets.detection import find_secrets
from mirix_py.secrets.guard import Secret

__all__ = ["Box", "ScreenText", "secret_line_boxes"]

Box = tuple[int, int, int, int]  # left, top, width, height, in the original frame's pixels


class ScreenLine(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def words(self) -> Sequence[object]: ...
    @property
    def box(self) -> Box: ...


class ScreenBlock(Protocol):
    @property
    def lines(self) -> Sequence[ScreenLine]: ...


class ScreenText(Protocol):
    """An OCR result: `text` is its lines' texts, words joined by " ", lines by "\\n", blocks by "\\n\\n"."""

    @property
    def text(self) -> str: ...
    @property
    def blocks(self) -> Sequence[ScreenBlock]: ...


def secret_line_boxes(ocr: ScreenText | None, detect: Callable[[str], Sequence[Secret]] = find_secrets) -> list[Box]:
    """The boxes of the OCR lines that hold (part of) a secret `detect` finds in `ocr.text`.

    Detection runs once over the whole text, as the engine sees it (a label on one line can make
    the value on the next a secret); each match is mapped back to the lines its characters came
    from, rebuilding `ocr.text` (words joined by " ", lines by "\\n", blocks by "\\n\\n").
    """
    if ocr is None or not ocr.blocks:
        return []
    text = ocr.text
    spans = [(m.start, m.end) for m in detect(text)]
    if not spans:
        return []
    boxes: list[Box] = []
    offset = 0
    for block in (b for b in ocr.blocks if b.lines):
        for line in block.lines:
            start, end = offset, offset + len(line.text)
            if line.words and any(s < end and start < e for s, e in spans):
                boxes.append(line.box)
            offset = end + 1  # "\n" after a line
        offset += 1  # the blank line between blocks ("\n\n"; the last line's "\n" counted above)
    if offset - 2 != len(text):  # pragma: no cover - the OCR text changed how it joins lines
        raise ValueError("OCR text and its lines disagree: secret boxes cannot be placed")
    return boxes
