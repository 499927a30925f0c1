"""Fields that appear verbatim in a row's search text are stored as references into it."""

from __future__ import annotations

import pytest

from mirix_py.store.textrefs import MIN_REF_CHARS, REFS_KEY, from_refs, to_refs


def test_long_strings_found_in_the_text_become_references_and_come_back_exactly():
    summary = "Viewed Firefox — Garden club minutes: hedges and compost"
    details = "Page 47. The boiler code is in the red binder\n\n  indented line  \n"
    text = f"[2024-05-01 09:41] user: {summary} — {details}"
    fields = {"event_type": "screen_activity", "summary": summary, "details": details, "actor": "user",
              "steps": ["a long step that is a list item, not a string field"]}
    stored = to_refs(fields, text)
    assert "summary" not in stored and "details" not in stored
    assert stored["event_type"] == "screen_activity" and stored["steps"] == fields["steps"]
    assert set(stored[REFS_KEY]) == {"summary", "details"}
    assert from_refs(stored, text) == fields


def test_short_or_absent_strings_stay_inline():
    short = "x" * (MIN_REF_CHARS - 1)
    elsewhere = "a sentence long enough to be referenced but not in the text"
    stored = to_refs({"a": short, "b": elsewhere, "c": ""}, f"{short} and more text around it")
    assert stored == {"a": short, "b": elsewhere, "c": ""}
    assert from_refs(stored, "") == stored


def test_rows_without_references_read_as_they_are():
    assert from_refs({"summary": "plain", "details": ""}, "anything") == {"summary": "plain", "details": ""}


def test_a_reference_outside_the_text_is_an_error_not_wrong_data():
    stored = to_refs({"content": "the whole content of a long document"}, "T: the whole content of a long document")
    with pytest.raises(ValueError, match="content"):
        from_refs(stored, "T: the whole content")
