"""Strings every backend stores alike and a terminal prints as written: a NUL, a control character and
a lone surrogate are named with where they are."""

from __future__ import annotations

from mirix_py.text.storable import first_problem, id_problem, printable, problem, terminal_safe


def test_plain_text_and_any_script_are_storable():
    for text in ("tea at 5", "naïve café — 東京 🍣", "line one\nline two\ttab", ""):
        assert problem(text) is None


def test_a_nul_and_a_lone_surrogate_are_named_with_their_position():
    assert problem("ab\x00c") == "holds a NUL character (\\x00) at position 2"
    assert problem("x\ud800y") == "is not valid Unicode (a lone surrogate at position 1)"
    assert problem("🍣\udfff") == "is not valid Unicode (a lone surrogate at position 1)"


def test_a_control_character_is_named_with_its_position_but_tabs_and_line_breaks_are_text():
    assert problem("Bo\x1b[2J") == "holds a control character (\\x1b) at position 2"
    assert problem("tea \x07") == "holds a control character (\\x07) at position 4"
    assert problem("a\x7fb") == "holds a control character (\\x7f) at position 1"  # DEL, as REST refuses it
    assert problem("a\x9b31m") == "holds a control character (\\x9b) at position 1"  # C1: CSI
    assert problem("shopping:\r\n- milk\tx2\n") is None


def test_what_printable_makes_of_a_models_text_is_storable():
    text = "Tom\x1b[31m is\x85a pilot\x00\t(\x7f)\x1b[0m\r\n\ud800"
    assert printable(text) == "Tom is\na pilot\t()\r\n\ufffd"
    assert problem(printable(text)) is None


def test_printable_takes_escape_sequences_whole_and_keeps_words_apart():
    assert printable("\x1b]0;title\x07Done \x1b[1;32mOK\x1b[0m\x1b(B") == "Done OK"
    assert printable("page one\x0cpage two\x0bend") == "page one\npage two\nend"
    assert printable("a\x9b31mb\x1bc") == "ab"  # C1 CSI; a lone ESC before a letter is a sequence of its own
    assert printable("naïve café — 東京 🍣\tok\n") == "naïve café — 東京 🍣\tok\n"


def test_terminal_safe_writes_out_controls_but_newlines_and_tabs():
    stored = "Bo\x1b[2J\x1b]0;pwned\x07 likes\ttea\nand \x9b31m\x7f\r東京"
    shown = terminal_safe(stored)
    assert shown == "Bo\\x1b[2J\\x1b]0;pwned\\x07 likes\ttea\nand \\x9b31m\\x7f\\x0d東京"
    assert not any(ord(ch) < 32 and ch not in "\n\t" or 0x7F <= ord(ch) < 0xA0 for ch in shown)
    assert terminal_safe("naïve café — 東京 🍣") == "naïve café — 東京 🍣"


def test_first_problem_walks_dicts_and_lists_and_names_the_path():
    assert first_problem({"summary": "ok", "tags": ["fine", "b\x00d"]}, "fields") == \
        "fields.tags[1] holds a NUL character (\\x00) at position 1"
    assert first_problem({"k\ud800": "v"}, "metadata") == \
        "metadata key is not valid Unicode (a lone surrogate at position 1)"
    assert first_problem({"n": 5, "when": None, "deep": {"x": ("a", "b")}}, "fields") is None
    assert first_problem("plain", "summary") is None


def test_an_id_is_one_visible_line():
    assert id_problem("alice@example.com") is None and id_problem("ユーザー 7") is None
    for bad in ("a\x00b", "a\nb", "a\x7fb", "a\u2028b", "a\ud800b", "a\x85b"):
        assert id_problem(bad) == "holds control characters or line separators", repr(bad)


def test_an_id_read_from_bytes_that_were_not_utf8_is_refused():
    """`%FE` and `%FF` in a URL path both decode to U+FFFD: as ids they would name one user."""
    assert id_problem(b"\xfe".decode("utf-8", "replace")) == "holds U+FFFD, the mark of bytes that were not UTF-8"
