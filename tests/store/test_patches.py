"""An update's earlier long texts are kept as line patches against the text that replaced them."""

from __future__ import annotations

import json

import pytest

from mirix_py.store.patches import (
    MIN_PATCH_CHARS, PATCH_KEY, apply_line_patch, diff_state, line_patch, undiff_state,
)

LINES = [f"line {i}: minutes of the garden committee, hedges and compost" for i in range(40)]


@pytest.mark.parametrize("old,new", [
    ("\n".join(LINES), "\n".join(LINES[:10] + ["a new line"] + LINES[11:])),   # one line changed
    ("\n".join(LINES), "\n".join(LINES) + "\n"),                                # trailing newline added
    ("\n".join(LINES[5:]), "\n".join(LINES)),                                   # lines removed before
    ("", "\n".join(LINES)),                                                     # text was empty
    ("\n".join(LINES), ""),                                                     # text emptied
    ("α\r\nβ\n\nγ", "β\nγ\nδ"),                                                # unicode, CRLF, blank lines
])
def test_a_patch_rebuilds_the_earlier_text_exactly(old, new):
    assert apply_line_patch(new, line_patch(new, old)) == old


def test_a_patch_keeps_only_the_lines_that_differ():
    old = "\n".join(LINES)
    new = "\n".join(LINES[:20] + ["changed"] + LINES[21:])
    patch = line_patch(new, old)
    assert [p for p in patch if isinstance(p, str)] == [LINES[20] + "\n"]


def test_a_state_stores_patches_only_for_long_texts_that_shrink():
    old_content = "\n".join(LINES)
    before = {"title": "Screenshot of Firefox", "content": old_content, "summary": "s" * MIN_PATCH_CHARS}
    after = {"title": "Screenshot of Firefox", "content": old_content.replace("line 3:", "line three:"),
             "summary": "t" * MIN_PATCH_CHARS}
    stored = diff_state(before, after)
    assert set(stored[PATCH_KEY]) == {"content"}  # the summary changed whole: a patch would not be smaller
    assert stored["summary"] == before["summary"] and "content" not in stored
    assert len(json.dumps(stored)) < len(old_content) / 4
    assert undiff_state(stored, after) == before


def test_a_patched_state_without_its_following_state_is_an_error():
    stored = diff_state({"content": "\n".join(LINES)}, {"content": "\n".join(LINES[1:])})
    with pytest.raises(ValueError):
        undiff_state(stored, None)
    with pytest.raises(ValueError):
        undiff_state(stored, {"content": None})
    assert undiff_state({"content": "plain"}, None) == {"content": "plain"}


def test_a_line_range_outside_the_base_is_an_error():
    with pytest.raises(ValueError):
        apply_line_patch("one line", [[0, 5]])
