"""`mirix delete ID --erase`: the turn's words leave history and the input log."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mirix_py.cli.commands import app

runner = CliRunner()


@pytest.fixture
def run(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))

    def invoke(*args: str):
        return runner.invoke(app, list(args), catch_exceptions=False)

    return invoke


def test_delete_with_erase_leaves_no_word_in_history(run):
    added = json.loads(run("add", "I live in Zorblatt street, in Quixhaven.", "-u", "ada", "--json").stdout)
    turn = next(c["memory_id"] for c in added["changes"] if c["memory_type"] == "episodic")

    erased = run("delete", turn[:12], "-u", "ada", "--erase")

    assert erased.exit_code == 0, erased.output
    assert erased.stdout.startswith(f"erased {turn}")
    history = run("show", turn, "-u", "ada", "--history", "--json")
    assert "Quixhaven" not in history.stdout
    assert [e["erased"] for e in json.loads(history.stdout)["history"]] == [True, True]
    assert "(erased)" in run("show", turn, "-u", "ada", "--history").stdout
