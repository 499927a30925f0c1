"""Secrets painted out of a frame's pixels: what the text redacts, no kept or sent image shows.

A kept thumbnail and the image a vision model gets are downscaled copies of the frame. After OCR
the vault rules run over the frame's text (`secret_line_boxes`), and every OCR line holding any
part of a secret is painted solid, whole and with a margin, on those copies (`mask_regions`)
before either is written or sent. The whole line, because a label and its value are often split
over several words ("Password:" "Correct" "Horse!42") and Tesseract's word boxes are tight.

Both functions are pure: boxes in the original frame's pixels in, a new image out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from PIL import Image, ImageDraw

if TYPE_CHECKING:
    from mirix_py.ingest.ocr import OcrResult
    from mirix_py.store.guard import Secret

__all__ = ["Box", "MASK_FILL", "mask_regions", "secret_line_boxes"]

Box = tuple[int, int, int, int]  # left, top, width, height, in the original frame's pixels
MASK_FILL = (0, 0, 0)
LINE_MARGIN = 0.3  # of the line's height, on every side
MIN_MARGIN_PX = 3  # in the image painted: a downscaled glyph's blur reaches ~3 px past its box


def _vault_rules(text: str) -> Sequence[Secret]:
    from mirix_py.agents.offline.rules.vault import find_secrets

    return find_secrets(text)


def secret_line_boxes(ocr: OcrResult | None, detect: Callable[[str], Sequence[Secret]] = _vault_rules) -> list[Box]:
    """The boxes of the OCR lines that hold (part of) a secret `detect` finds in `ocr.text`.

    Detection runs once over the whole text, as the engine sees it (a label on one line can make
    the value on the next a secret); each match is mapped back to the lines its characters came
    from, rebuilding `OcrResult.text` (words joined by " ", lines by "\\n", blocks by "\\n\\n").
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
    if offset - 2 != len(text):  # pragma: no cover - OcrResult.text changed how it joins lines
        raise ValueError("OCR text and its lines disagree: secret boxes cannot be placed")
    return boxes


def mask_regions(image: Image.Image, boxes: Iterable[Box], *, source_size: tuple[int, int],
                 margin: float = LINE_MARGIN, fill: tuple[int, int, int] = MASK_FILL) -> Image.Image:
    """An RGB copy of `image` (the frame, possibly downscaled from `source_size`) with each box
    painted solid `fill`, grown by `margin` times its height on every side and by at least
    MIN_MARGIN_PX pixels of `image`. `image` itself is never changed."""
    width, height = source_size
    if width <= 0 or height <= 0:
        raise ValueError(f"source_size must be positive, not {source_size}")
    fx, fy = image.width / width, image.height / height
    out = image.convert("RGB") if image.mode != "RGB" else image.copy()
    draw = ImageDraw.Draw(out)
    for left, top, w, h in boxes:
        if w <= 0 or h <= 0:
            continue
        grow = margin * h
        mx, my = max(grow * fx, MIN_MARGIN_PX), max(grow * fy, MIN_MARGIN_PX)
        x0, y0 = max(0, int(left * fx - mx)), max(0, int(top * fy - my))
        x1, y1 = min(out.width - 1, int((left + w) * fx + mx) + 1), min(out.height - 1, int((top + h) * fy + my) + 1)
        if x0 <= x1 and y0 <= y1:
            draw.rectangle([x0, y0, x1, y1], fill=fill)
    return out
