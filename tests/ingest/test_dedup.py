"""Near-duplicate detection: the regional similarity, the per-window reference, and the synthetic sessions."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw

from mirix_py.ingest.dedup import Deduplicator, dhash, hamming, signature, similarity


def _screen(text_lines: int = 10, pointer: tuple[int, int] | None = None, extra: str | None = None) -> Image.Image:
    image = Image.new("RGB", (1920, 1080), (245, 245, 247))
    draw = ImageDraw.Draw(image)
    for i in range(text_lines):
        draw.rectangle([100, 100 + i * 40, 900, 116 + i * 40], fill=(30, 30, 30))  # a line of "text"
    if extra:
        draw.rectangle([1000, 600, 1500, 640], fill=(30, 30, 30))
    if pointer:
        x, y = pointer
        draw.polygon([(x, y), (x, y + 17), (x + 12, y + 12)], fill=(0, 0, 0))
    return image


def test_identical_frames_score_one_and_hash_equal():
    a, b = signature(_screen()), signature(_screen())
    assert similarity(a, b) == 1.0 and a.hash == b.hash and hamming(a.hash, b.hash) == 0


def test_pointer_move_is_a_duplicate_new_text_is_not():
    base = signature(_screen(pointer=(1200, 300)))
    moved = signature(_screen(pointer=(1400, 700)))
    new_text = signature(_screen(pointer=(1200, 300), extra="line"))
    assert similarity(base, moved) >= 0.99
    assert similarity(base, new_text) < 0.99


def test_frames_of_different_sizes_are_never_duplicates():
    assert similarity(signature(_screen()), signature(_screen().resize((1280, 720)))) == 0.0


def test_dhash_moves_with_content():
    assert hamming(dhash(_screen(3)), dhash(_screen(20))) > 0


def test_deduplicator_compares_with_the_last_kept_frame_of_the_window():
    d = Deduplicator(0.99)
    first, _ = d.observe(_screen(5), ("Editor", "a.py"))
    assert not first.duplicate and first.compared_with is None
    again, _ = d.observe(_screen(5), ("Editor", "a.py"))
    assert again.duplicate and again.similarity == 1.0
    other, _ = d.observe(_screen(12), ("Chat", "#team"))  # new window: compared with the last kept frame
    assert not other.duplicate and other.compared_with == ("Editor", "a.py")
    back, _ = d.observe(_screen(5), ("Editor", "a.py"))  # back to the editor, unchanged: no OCR
    assert back.duplicate and back.compared_with == ("Editor", "a.py")


def test_slow_drift_is_caught_against_the_last_kept_frame():
    d = Deduplicator(0.99)
    d.observe(_screen(5), "w")
    # each frame adds a sliver; against the previous frame each is a duplicate, against the kept one not
    slivers = []
    for step in range(1, 12):
        image = _screen(5)
        ImageDraw.Draw(image).rectangle([100, 700, 100 + step * 18, 716], fill=(30, 30, 30))
        slivers.append(d.observe(image, "w")[0])
    assert slivers[0].duplicate and not all(s.duplicate for s in slivers)


def test_forget_only_drops_the_reference_it_was_given():
    d = Deduplicator()
    _, sig = d.observe(_screen(5), "w")
    d.forget("w", signature(_screen(5)))  # another signature: kept
    assert d.check(signature(_screen(5)), "w").duplicate
    d.forget("w", sig)
    assert not d.check(signature(_screen(5)), "w").duplicate


def test_threshold_is_validated():
    with pytest.raises(ValueError):
        Deduplicator(0.0)
    with pytest.raises(ValueError):
        Deduplicator(1.5)


def test_synthetic_session_pointer_and_clock_frames_are_skipped_content_changes_kept(synth):
    """The manifest says which frames only differ by pointer/clock: dedup must agree on every one."""
    frames = synth.session(days=2)
    d = Deduplicator(0.99)
    wrong = []
    for f in frames:
        decision, _ = d.observe(f.image(), (f.app, f.window_title))
        expected = f.expect_duplicate
        if f.change == "new_window" and f.day > 0:
            # a window seen on an earlier day may come back unchanged; that is a true duplicate too
            continue
        if decision.duplicate != expected:
            wrong.append((f.index, f.change, round(decision.similarity, 4)))
    assert not wrong, wrong
