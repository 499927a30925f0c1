"""A second, closer look at the words a memory must keep exactly: keys, passwords, ids, addresses.

Tesseract reads a whole 1080p screen at about x1.25, where a password like `fzVRp9euDY-AcYy` can
come out as `f2VRp9euDY-AcYy` with low confidence, and a wrong secret in the vault is worse than
none. The secret-shaped words (`secret_shaped`) that it was unsure of are cut out, enlarged,
stacked one per row on a blank page and read again in one Tesseract call (one call per frame,
not per word: starting Tesseract costs ~0.1 s). A new reading replaces the old one only when
Tesseract is surer of it and it is a close variant (a few characters differ), so a bad crop
cannot turn a word into something else. Pure functions except `reread_tokens`, which runs
Tesseract through the `read` callable it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Callable, Sequence

from PIL import Image

_TOKEN_PUNCT = frozenset("@/:._=-#+~$%&?")


def looks_like_token(word: str) -> bool:
    """URLs, e-mail addresses, paths, identifiers and keys: Tesseract's language model gives them
    low confidence even when it reads them right, and they are what a memory most needs to keep.
    At least 6 characters, 4 of them alphanumeric, and punctuation typical of such tokens or a
    mix of letters and digits."""
    if len(word) < 6:
        return False
    alnum = sum(ch.isalnum() for ch in word)
    if alnum < 4 or alnum < len(word) / 2:
        return False
    has_punct = any(ch in _TOKEN_PUNCT for ch in word)
    mixed = any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)
    return has_punct or mixed


MAX_WORDS = 48  # per frame
PAD = 4  # pixels around a word's box, in the prepared image
MIN_SIMILARITY = 0.6  # of a new reading to the old one (difflib ratio)


@dataclass(frozen=True)
class Row:
    """One word's crop on the stacked page: which entry of the Tesseract data, and where it sits."""

    index: int
    top: int
    bottom: int


def secret_shaped(word: str) -> bool:
    """A token a memory must keep character for character: keys, passwords, ids (letters and digits
    mixed, 8 characters or more) and e-mail addresses. Paths, commands and short hashes are left to
    the first reading: re-reading every token-shaped word cost a second Tesseract call on most
    terminal and editor frames."""
    if not looks_like_token(word):
        return False
    core = word.strip("\"'“”‘’`.,;:()[]{}<>")
    if "@" in core and "." in core.split("@", 1)[1]:
        return True
    return len(core) >= 8 and any(ch.isdigit() for ch in core) and any(ch.isalpha() for ch in core)


def words_to_reread(data: dict[str, list], below: float, limit: int = MAX_WORDS) -> list[int]:
    """Indices of secret-shaped word entries read with less than `below` confidence."""
    out: list[int] = []
    for i, raw in enumerate(data["text"]):
        text = str(raw or "").strip()
        if int(data["level"][i]) != 5 or not text or not secret_shaped(text):
            continue
        try:
            conf = float(data["conf"][i])
        except (TypeError, ValueError):
            continue
        if 0 <= conf < below:
            out.append(i)
            if len(out) == limit:
                break
    return out


def stack_crops(prepared: Image.Image, data: dict[str, list], indices: Sequence[int], factor: float
                ) -> tuple[Image.Image, list[Row]]:
    """The words' boxes cut from `prepared` (the image Tesseract read), enlarged by `factor`, one per
    row on a white page with a blank row's height between them."""
    crops: list[tuple[int, Image.Image]] = []
    for i in indices:
        left, top, width, height = (int(data[k][i]) for k in ("left", "top", "width", "height"))
        box = (max(0, left - PAD), max(0, top - PAD), min(prepared.width, left + width + PAD),
               min(prepared.height, top + height + PAD))
        crop = prepared.crop(box)
        if abs(factor - 1.0) > 0.01:
            crop = crop.resize((max(1, round(crop.width * factor)), max(1, round(crop.height * factor))),
                               Image.Resampling.BICUBIC)
        crops.append((i, crop))
    margin = 16
    gap = max([c.height for _, c in crops] + [20])
    page = Image.new("L", (max(c.width for _, c in crops) + 2 * margin,
                           sum(c.height + gap for _, c in crops) + gap), 255)
    rows: list[Row] = []
    y = gap
    for i, crop in crops:
        page.paste(crop.convert("L"), (margin, y))
        rows.append(Row(i, y, y + crop.height))
        y += crop.height + gap
    return page, rows


def readings_by_row(data: dict[str, list], rows: Sequence[Row]) -> dict[int, tuple[str, float]]:
    """{word index: (text, confidence)} from the Tesseract data of the stacked page: the words whose
    vertical centre falls in a row, left to right, joined without spaces (it was one word); the
    confidence of the least sure of them."""
    found: dict[int, list[tuple[int, str, float]]] = {}
    for j, raw in enumerate(data["text"]):
        text = str(raw or "").strip()
        if int(data["level"][j]) != 5 or not text:
            continue
        try:
            conf = float(data["conf"][j])
        except (TypeError, ValueError):
            continue
        middle = int(data["top"][j]) + int(data["height"][j]) / 2
        for row in rows:
            if row.top <= middle <= row.bottom:
                found.setdefault(row.index, []).append((int(data["left"][j]), text, conf))
                break
    return {index: ("".join(t for _, t, _ in sorted(parts)), min(c for _, _, c in parts))
            for index, parts in found.items()}


def _letters_and_digits(word: str) -> str:
    return "".join(ch for ch in word if ch.isalnum())


def better_reading(old: str, old_conf: float, new: str, new_conf: float) -> bool:
    """Whether the second reading should replace the first: surer, and a close variant of it."""
    if not new or new_conf <= old_conf or any(ch.isspace() for ch in new):
        return False
    if _letters_and_digits(new) == _letters_and_digits(old):
        return False  # quotes and dots flip between readings; only a changed character is worth it
    if not 0.75 <= len(new) / max(len(old), 1) <= 1.34:
        return False
    return SequenceMatcher(None, old, new, autojunk=False).ratio() >= MIN_SIMILARITY


def reread_tokens(prepared: Image.Image, data: dict[str, list], *, below: float, factor: float,
                  read: Callable[[Image.Image], dict[str, list]]) -> int:
    """Read the unsure secret-shaped words of `data` again (see the module docstring) and write the
    better readings into `data` in place; returns how many words changed. `read` runs Tesseract on
    the stacked page and returns its image_to_data dict."""
    indices = words_to_reread(data, below)
    if not indices:
        return 0
    page, rows = stack_crops(prepared, data, indices, factor)
    readings = readings_by_row(read(page), rows)
    changed = 0
    for i in indices:
        if i not in readings:
            continue
        new, new_conf = readings[i]
        old = str(data["text"][i]).strip()
        if better_reading(old, float(data["conf"][i]), new, new_conf):
            data["text"][i], data["conf"][i] = new, new_conf
            changed += 1
    return changed
