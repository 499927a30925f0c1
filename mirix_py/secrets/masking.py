"""Which lines of a screen hold a secret, so that no kept or sent copy of the frame shows one.

After OCR the secret rules run over the frame's text, and every OCR line holding any part of a
secret is returned whole, because a label and its value are often split over several words
("Password:" "Correct" "Horse!42") and Tesseract's word boxes are tight. Painting the boxes out of
the image is ingest's (`ingest.masking.mask_regions`).

Tesseract sometimes reads one token as two words ("sk-live-7Hq2 Xe4Rt6..."), and then neither half
looks like a secret; `split_secret_words` finds such pairs on a line, so OCR can join them back into
one word before anything reads its text.

The OCR result is read through its shape (`ScreenText`), so this package needs nothing of ingest.
"""

from __future__ import annotations

import re
from typing import Callable, Protocol, Sequence

from mirix_py.secrets.detection import find_secrets, prefixed_key_spans
from mirix_py.secrets.guard import Secret

__all__ = ["Box", "ScreenText", "secret_line_boxes", "split_secret_words"]

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


def split_secret_words(words: Sequence[str], detect: Callable[[str], Sequence[Secret]] = find_secrets
                       ) -> list[tuple[int, int]]:
    """The runs of adjacent words of one OCR line, as word index ranges `(start, end)` (end
    exclusive, two words each, in order), that `detect` sees as (part of) one secret only once the
    space between them is dropped.

    Why: OCR can split a key at a wide glyph gap, and the halves ("sk-live-7Hq2", "Xe4Rt6...") are
    each too short or too plain for any rule, so the secret reached the memory text and the kept
    images. Careful, because prose must stay prose: a pair counts only when a secret of the joined
    line spans the join, and neither word is touched by a secret of the line as read (a word that
    already is, or is part of, a secret is not glued to its neighbour). Detection sees the whole
    line, so a cue on it ("password:") counts as it would in the text; a label on another line does
    not. And a word that reads as prose (`_reads_as_prose`) is never glued either: after a cue, the
    rules take what follows as the value, so "password is fine, thanks" or "pass: seat 12A" would
    turn into secrets ("fine,thanks", "seat12A"). Pure: texts in, ranges out.
    """
    if len(words) < 2:
        return []
    line = " ".join(words)
    starts = _word_starts(words)
    found = [(m.start, m.end) for m in detect(line)]
    touched = [any(s < start + len(word) and start < e for s, e in found) for word, start in zip(words, starts)]
    keyed = [any(s < start + len(word) and start < e for s, e in prefixed_key_spans(line))
             for word, start in zip(words, starts)]
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(words) - 1:
        join = starts[i + 1] - 1  # the space dropped; in the joined line, word i + 1 starts here
        joined = line[:join] + line[join + 1:]
        plain = not (_reads_as_prose(words[i]) or _reads_as_prose(words[i + 1]))
        glue = plain and not (touched[i] or touched[i + 1]) and any(m.start < join < m.end for m in detect(joined))
        if glue or (plain and _completes_a_key(i, joined, join, touched, keyed)):
            runs.append((i, i + 2))
            i += 2
        else:
            i += 1
    return runs


def _completes_a_key(i: int, joined: str, join: int, touched: list[bool], keyed: list[bool]) -> bool:
    """Word i is a secret's value by a cue ("OPENAI_API_KEY=sk-proj-4fGhJk7") but the provider's key
    shape appears only with word i + 1 glued on: OCR cut the key, and the rest of it would stay in the
    text. A word that is a whole key of that shape already keeps its neighbour."""
    return (touched[i] and not keyed[i] and not touched[i + 1]
            and any(s < join < e for s, e in prefixed_key_spans(joined)))


_PROSE_WORD = re.compile(r"[A-Z]?[a-z]+(?:['’-][a-z]+)*[.,;:!?)\"”’]*|.*[,;]")


def _reads_as_prose(word: str) -> bool:
    """A lower-case or capitalised word (perhaps with closing punctuation), or any word ending a
    clause with "," or ";": text a person wrote, where a token's fragment would hold a digit, a
    symbol or a capital inside."""
    return _PROSE_WORD.fullmatch(word) is not None


def _word_starts(words: Sequence[str]) -> list[int]:
    """Where each word starts in `" ".join(words)`."""
    starts, at = [], 0
    for word in words:
        starts.append(at)
        at += len(word) + 1
    return starts
