"""Tesseract's `image_to_data` output built from rows, for the OCR parser's tests."""

from __future__ import annotations


def tesseract_data(rows):
    """image_to_data DICT from (block, par, line, word, left, top, width, height, conf, text) rows."""
    cols = {k: [] for k in ("level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top",
                            "width", "height", "conf", "text")}
    for block, par, line, word, left, top, width, height, conf, text in rows:
        for k, v in zip(cols, (5, 1, block, par, line, word, left, top, width, height, conf, text)):
            cols[k].append(v)
    # a non-word row, as Tesseract emits for pages/blocks/lines
    for k, v in zip(cols, (2, 1, 1, 0, 0, 0, 0, 0, 100, 100, -1, "")):
        cols[k].append(v)
    return cols
