import pytest

from mirix_py.agents.offline.rules.resource import ResourceDraft, classify_resource

PYTHON = '''import os
# load config
def main():
    path = os.environ.get("CONFIG", "app.yaml")
    # comment
    return path

if __name__ == "__main__":
    main()
'''

MARKDOWN = """# Project Plan

This document describes the launch plan. We ship in May. Then we rest.

## Goals
- one
- two

```python
print(1)
```
"""

CSV = "name,age,city\nAlice,30,Berlin\nBob,25,Paris\nCarol,41,Rome\nDan,33,Oslo\nEve,29,Lima\nFay,50,Kyiv\nGus,22,Bonn\n"

PIPE = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |"


def test_code_is_detected_from_structure():
    draft = classify_resource(PYTHON)
    assert draft is not None
    assert draft.resource_type == "code"
    assert draft.title == "import os"
    assert draft.content == PYTHON
    assert draft.summary  # falls back to a description when there is no prose


def test_markdown_document():
    draft = classify_resource(MARKDOWN, kind="document")
    assert draft == ResourceDraft(
        title="Project Plan",
        summary="This document describes the launch plan. We ship in May.",
        resource_type="markdown",
        content=MARKDOWN,
    )


def test_csv_table_from_line_count():
    draft = classify_resource(CSV)
    assert draft.resource_type == "table"
    assert draft.title == "name,age,city"


def test_pipe_table_as_document():
    draft = classify_resource(PIPE, kind="document")
    assert draft.resource_type == "table"
    assert draft.title == "a | b"


def test_screenshot_always_fires_and_keeps_its_type():
    draft = classify_resource("Meeting notes from Monday. We agreed to ship. Bob owns QA.", kind="screenshot")
    assert draft.resource_type == "screenshot"
    assert draft.title == "Meeting notes from Monday. We agreed to ship. Bob owns QA."
    assert draft.summary == "Meeting notes from Monday. We agreed to ship."


def test_short_document_fires_as_document():
    draft = classify_resource("Lease agreement\n\nThe tenant pays rent on the first of each month. Pets are allowed.", kind="document")
    assert draft.resource_type == "document"
    assert draft.title == "Lease agreement"
    assert draft.summary == "The tenant pays rent on the first of each month. Pets are allowed."


def test_long_pasted_prose_fires_by_length():
    text = "Chapter One\n\n" + "The rain fell on the quiet town all night long. " * 40
    draft = classify_resource(text)
    assert draft.resource_type == "document"
    assert draft.title == "Chapter One"
    assert draft.summary == "The rain fell on the quiet town all night long. The rain fell on the quiet town all night long."


def test_min_chars_is_configurable():
    text = "A plain paragraph of ordinary text that is not very long at all, really."
    assert classify_resource(text) is None
    assert classify_resource(text, min_chars=20).resource_type == "document"


def test_title_and_summary_are_bounded():
    text = "x" * 500 + "\n" + ("This is a very long sentence that keeps going " * 30) + "."
    draft = classify_resource(text, kind="document")
    assert len(draft.title) <= 80
    assert len(draft.summary) <= 300
    assert draft.content == text


def test_markdown_from_structured_lines():
    text = "# Notes\n" + "\n".join(f"- item number {i}" for i in range(10))
    draft = classify_resource(text)
    assert draft.resource_type == "markdown"
    assert draft.title == "Notes"


@pytest.mark.parametrize(
    "text",
    [
        "Hey Mel! Good to see you! I'm swamped with the kids & work.",
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "Thanks! Here's my list:\n- eggs\n- milk\n- bread",
        "Line one\nLine two\nLine three\nLine four\nLine five\nLine six\nLine seven\nLine eight\nLine nine",
        "I love painting, hiking, and reading, and also cooking, baking and dancing with friends.",
    ],
)
def test_ordinary_chat_is_not_a_resource(text):
    assert classify_resource(text) is None


@pytest.mark.parametrize("kind", ["text", "document", "screenshot"])
def test_blank_text_is_never_a_resource(kind):
    assert classify_resource("  \n ", kind=kind) is None
