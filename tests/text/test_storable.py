"""Strings every backend stores alike: a NUL and a lone surrogate are named with where they are."""

from __future__ import annotations

from mirix_py.text.storable import first_problem, id_problem, problem


def test_plain_text_and_any_script_are_storable():
    for text in ("tea at 5", "naïve café — 東京 🍣", "line one\nline two\ttab", ""):
        assert problem(text) is None


def test_a_nul_and_a_lone_surrogate_are_named_with_their_position():
    assert problem("ab\x00c") == "holds a NUL character (\\x00) at position 2"
    assert problem("x\ud800y") == "is not valid Unicode (a lone surrogate at position 1)"
    assert problem("🍣\udfff") == "is not valid Unicode (a lone surrogate at position 1)"


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
