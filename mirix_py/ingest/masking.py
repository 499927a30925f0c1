"""Secrets painted out of a frame's pixels: what the text redacts, no kept or sent image shows.

A kept thumbnail and the image a vision model gets are downscaled copies of the frame. After OCR
the secret rules find the lines holding a secret (`secrets.masking.secret_line_boxes`), and each is
painted solid, whole and with a margin, on those copies (`mask_regions`) before either is written
or sent.

`mask_regions` is pure: boxes in the original frame's pixels in, a new image out.
"""

from __future__ import annotations

from typing import Iterable

from PIL import Image, ImageDraw

from mirix_py.secrets.masking import Box

__all__ = ["MASK_FILL", "mask_regions"]

MASK_FILL = (0, 0, 0)
LINE_MARGIN = 0.3  # of the line's height, on every side
MIN_MARGIN_PX = 3  # in the image painted: a downscaled glyph's blur reaches ~3 px past its box


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
