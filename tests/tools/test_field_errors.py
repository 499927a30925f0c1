"""A bad memory edit: one readable line naming each field, and nothing changed (SDK and CLI)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.tools.field_errors import describe
from mirix_py.records import MEMORY_ADAPTER


def _error(data: dict) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        MEMORY_ADAPTER.validate_python(data)
    return caught.value


def test_describe_names_each_field_without_pydantic_noise():
    base = {"memory_type": "episodic", "user_id": "ada", "summary": "x"}
    line = describe(_error({**base, "summary": 5}), memory_type="episodic", fields=["summary", "details"])
    assert line == "invalid fields for episodic memory: summary: should be a valid string (got 5)"
    unknown = describe(_error({**base, "colour": "red"}), memory_type="episodic", fields=["summary", "details"])
    assert unknown == ("invalid fields for episodic memory: colour: not a field of an episodic memory "
                       "(its fields: details, summary)")
    many = describe(_error({**base, "summary": 1, "details": 2, "actor": 3, "tags": 4}), memory_type="episodic",
                    fields=[])
    assert many.count("should be") == 3 and many.endswith("; and 1 more") and "\n" not in many
    assert "errors.pydantic.dev" not in many and "tagged-union" not in many
    long = describe(_error({**base, "summary": ["w" * 200]}), memory_type="episodic", fields=[])
    assert len(long) < 160 and "..." in long


@pytest.fixture()
def stored(tmp_path):
    with Mirix(tmp_path / "data", embedder=None) as mx:
        mx.add("I went sailing on Lake Geneva last weekend with Tom.", user_id="ada")
        memory = mx.list(user_id="ada", memory_types=["episodic"])[0]
        yield mx, memory


@pytest.mark.parametrize("fields, named", [
    ({"summary": 5}, "summary: should be a valid string (got 5)"),
    ({"source_ids": "abc"}, "source_ids: should be a valid list (got 'abc')"),  # never split into letters
    ({"occurred_at": "yesterday"}, "occurred_at: should be a valid datetime"),
    ({"colour": "red"}, "colour: not a field of an episodic memory (its fields: actor, details"),
    ({"summary": "Sailing with Tom", "details": ["a"]}, "details: should be a valid string"),  # all or nothing
])
def test_a_bad_update_says_which_field_and_changes_nothing(stored, fields, named):
    mx, before = stored
    history = mx.history(before.id, user_id="ada")
    with pytest.raises(InvalidInput) as refused:
        mx.update(before.id, fields, user_id="ada")
    assert named in str(refused.value) and "\n" not in str(refused.value)
    assert mx.get(before.id, user_id="ada") == before
    assert mx.history(before.id, user_id="ada") == history


def test_cli_update_error_is_one_readable_line(tmp_path):
    data = tmp_path / "data"
    with Mirix(data, embedder=None) as mx:
        mx.add("I went sailing on Lake Geneva last weekend with Tom.", user_id="ada")
        before = mx.list(user_id="ada", memory_types=["episodic"])[0]
    runner = CliRunner()
    result = runner.invoke(app, ["update", before.id, "summary=42", "colour=red", "-u", "ada", "-d", str(data)])
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "summary: should be a valid string (got 42)" in out and "colour: not a field of an episodic memory" in out
    assert "pydantic" not in out
    with Mirix(data, embedder=None) as mx:
        assert mx.get(before.id, user_id="ada") == before
