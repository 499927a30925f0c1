"""Near-duplicate frames, found before OCR. Pure: images in, numbers out; no engine, no I/O.

A desktop captured every 1.5-3 s mostly repeats itself. What must not be lost is a small change
of content (a new chat line, a command's output), while a moved pointer, a blinking caret or the
clock ticking must not cost an OCR run. A whole-frame score cannot tell those apart (a new line
of text is a fraction of a percent of a 1080p frame), so the similarity here is regional: the
frame is cut into a grid of tiles (6 x 4 by default), each tile scores the share of its pixels
that did not change, and the frame's similarity is its *least* similar tile. With the default
threshold of 0.99 (MIRIX's figure) a frame is a duplicate when no region of the screen changed
by more than 1%. On the synthetic sessions of `synth.py` a moved pointer or a clock tick scored
0.995 or more, and every real content change (a chat message, a command's output, a new line
in an editor) 0.975 or less.

Signatures are small grey thumbnails (480 pixels wide by default, ~130 KB for 16:9), compared
with a tolerance that absorbs JPEG noise and anti-aliasing; a 64-bit difference hash (dHash)
comes with each signature for logs and cheap equality checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable

import numpy as np
from PIL import Image, ImageOps

from mirix_py.ingest.defaults import SIMILARITY

__all__ = ["DedupDecision", "Deduplicator", "FrameSignature", "dhash", "hamming", "signature", "similarity"]

DEFAULT_THRESHOLD = SIMILARITY


@dataclass(frozen=True, eq=False)  # compared by identity; `similarity` compares contents
class FrameSignature:
    grey: np.ndarray = field(repr=False)  # uint8, (height, width) of the thumbnail
    hash: int = 0  # 64-bit dHash
    size: tuple[int, int] = (0, 0)  # the original frame's size


def dhash(image: Image.Image, bits: int = 8) -> int:
    """Difference hash: bits*bits booleans of 'left pixel brighter than right' on a tiny grey image."""
    small = ImageOps.grayscale(image).resize((bits + 1, bits), Image.Resampling.BOX)
    a = np.asarray(small, dtype=np.int16)
    diff = (a[:, 1:] > a[:, :-1]).flatten()
    return int("".join("1" if b else "0" for b in diff), 2)


def hamming(a: int, b: int) -> int:
    return bin(a ^ b).count("1")


def signature(image: Image.Image, *, width: int = 480) -> FrameSignature:
    """Grey thumbnail `width` pixels wide (aspect kept) plus its dHash."""
    if width < 16:
        raise ValueError("signature width must be at least 16 pixels")
    grey = ImageOps.grayscale(image) if image.mode != "L" else image
    height = max(1, round(grey.height * width / max(grey.width, 1)))
    thumb = grey.resize((width, height), Image.Resampling.BOX)
    return FrameSignature(grey=np.asarray(thumb, dtype=np.uint8), hash=dhash(thumb), size=image.size)


def similarity(a: FrameSignature, b: FrameSignature, *, grid: tuple[int, int] = (6, 4), tolerance: int = 24) -> float:
    """1.0 for identical frames; otherwise 1 minus the changed share of the most changed tile.

    A pixel counts as changed when its grey level moved by more than `tolerance`. Frames of
    different sizes or aspect are not comparable and score 0.
    """
    if a.size != b.size or a.grey.shape != b.grey.shape:
        return 0.0
    if a.hash == b.hash and np.array_equal(a.grey, b.grey):
        return 1.0
    changed = np.abs(a.grey.astype(np.int16) - b.grey.astype(np.int16)) > tolerance
    cols, rows = grid
    h, w = changed.shape
    ys = np.linspace(0, h, rows + 1).astype(int)
    xs = np.linspace(0, w, cols + 1).astype(int)
    worst = 0.0
    for r in range(rows):
        band = changed[ys[r]:ys[r + 1]]
        for c in range(cols):
            tile = band[:, xs[c]:xs[c + 1]]
            if tile.size:
                worst = max(worst, float(tile.mean()))
    return 1.0 - worst


@dataclass(frozen=True)
class DedupDecision:
    duplicate: bool
    similarity: float  # against the frame it was compared with; 0.0 when there was none
    compared_with: Hashable | None = None  # the key whose last kept frame was used


class Deduplicator:
    """Remembers the last kept frame per key (e.g. app + window title) and judges new frames.

    A frame is compared with the last kept frame of its own key when there is one (so switching
    between two unchanged windows costs no OCR), else with the last kept frame of any key.
    Comparing with the last *kept* frame, not the last seen, means slow drift (typing a letter
    per frame) still triggers a new OCR once it adds up.
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, *, grid: tuple[int, int] = (6, 4), tolerance: int = 24,
                 width: int = 480, max_keys: int = 64) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError("similarity threshold must be in (0, 1]; 1.0 skips only identical frames")
        self.threshold = threshold
        self.grid = grid
        self.tolerance = tolerance
        self.width = width
        self.max_keys = max_keys
        self._by_key: dict[Hashable, FrameSignature] = {}
        self._last_key: Hashable | None = None
        self._has_last = False

    def signature(self, image: Image.Image) -> FrameSignature:
        return signature(image, width=self.width)

    def check(self, sig: FrameSignature, key: Hashable = None) -> DedupDecision:
        if key in self._by_key:
            ref_key = key
        elif self._has_last:
            ref_key = self._last_key
        else:
            return DedupDecision(False, 0.0, None)
        score = similarity(sig, self._by_key[ref_key], grid=self.grid, tolerance=self.tolerance)
        return DedupDecision(score >= self.threshold, score, ref_key)

    def remember(self, sig: FrameSignature, key: Hashable = None) -> None:
        self._by_key.pop(key, None)
        self._by_key[key] = sig
        self._last_key, self._has_last = key, True
        while len(self._by_key) > self.max_keys:  # forget the least recently kept window
            oldest = next(iter(self._by_key))
            if oldest == key:
                break
            del self._by_key[oldest]

    def forget(self, key: Hashable, sig: FrameSignature | None = None) -> None:
        """Drop a key's reference (e.g. its OCR failed), only if it is still `sig` when given."""
        if key in self._by_key and (sig is None or self._by_key[key] is sig):
            del self._by_key[key]
            if self._last_key == key:
                self._has_last = bool(self._by_key)
                self._last_key = next(reversed(self._by_key)) if self._by_key else None

    def observe(self, image: Image.Image, key: Hashable = None) -> tuple[DedupDecision, FrameSignature]:
        """Check a frame and, when it is kept, remember it: the usual one-call use."""
        sig = self.signature(image)
        decision = self.check(sig, key)
        if not decision.duplicate:
            self.remember(sig, key)
        return decision, sig

    def reset(self) -> None:
        self._by_key.clear()
        self._last_key, self._has_last = None, False
