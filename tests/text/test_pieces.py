"""A long text as pieces within a limit (`text.pieces`): they join back into what was said and are
cut where a reader would cut."""

from __future__ import annotations

import pytest

from mirix_py.text.pieces import pieces_within

TEXT = ("Our trip, day one.\nWe took the early train.\n\nDay two was wet. We stayed in! "
        "Then the sun came out and we walked for hours along the cliffs " + "x" * 45)


@pytest.mark.parametrize("limit", [7, 20, 40, 64, len(TEXT) - 1, len(TEXT)])
def test_pieces_join_back_into_the_text_each_within_the_limit(limit):
    pieces = pieces_within(TEXT, limit)
    assert "".join(pieces) == TEXT
    assert all(0 < len(p) <= limit for p in pieces)


def test_a_piece_of_blanks_alone_is_not_sent():
    pieces = pieces_within(TEXT, 1)  # the spaces between words are pieces of their own: nothing said
    assert "".join(pieces) == "".join(TEXT.split()) and all(len(p) == 1 for p in pieces)
    pieces = pieces_within("Hello." + " " * 30 + "Bye.", 10)
    assert all(p.strip() for p in pieces) and "".join(pieces).split() == ["Hello.", "Bye."]


def test_pieces_end_at_a_paragraph_then_a_line_then_a_sentence_then_a_word():
    assert pieces_within(TEXT, 50)[:2] == ["Our trip, day one.\nWe took the early train.\n\n",
                                           "Day two was wet. We stayed in! "]
    assert pieces_within("Our trip, day one.\nWe took the early train.", 30) == \
        ["Our trip, day one.\n", "We took the early train."]
    assert pieces_within("Then the sun came out and we walked", 20) == ["Then the sun came ", "out and we walked"]
    assert pieces_within("y" * 25, 10) == ["y" * 10, "y" * 10, "y" * 5]  # no break: cut at the limit
