"""`mirix ingest-screenshots` and `mirix capture`, run as a user would."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_synth.screens import write_session

runner = CliRunner()


def _text(result) -> str:
    """Output with rich's line wrapping undone."""
    return " ".join(result.output.split())


def test_ingest_screenshots_reports_and_remembers(tmp_path, monkeypatch, synth, tesseract):
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")  # full text only: keeps the CLI test light
    frames = synth.session(days=1, dwell=(2, 2), scenes=["calendar", "chat"])
    write_session(frames, tmp_path / "shots", synth=synth)
    (tmp_path / "shots" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnope")
    out = runner.invoke(app, ["ingest-screenshots", str(tmp_path / "shots"), "--user", "ada", "--json", "--create",
                              "--workers", "2"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["frames"] == len(frames) + 1 and report["invalid"] == 1
    assert report["errors"][0]["name"] == "broken.png" and "not an image" in report["errors"][0]["error"]
    assert report["processed"] >= 2 and report["duplicates"] + report["processed"] == len(frames)
    assert report["png_bytes"] > 0 and 0 < report["stored_share"] < 0.05
    found = runner.invoke(app, ["search", "Dentist", "--user", "ada", "--json", "--method", "bm25"])
    assert found.exit_code == 0 and json.loads(found.stdout)

    table = runner.invoke(app, ["ingest-screenshots", str(tmp_path / "shots"), "--user", "bob"])
    assert table.exit_code == 0 and "skipped as near-duplicates" in _text(table)


def test_ingest_screenshots_refuses_a_missing_folder_and_bad_zone(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    out = runner.invoke(app, ["ingest-screenshots", str(tmp_path / "nope"), "--user", "ada"])
    assert out.exit_code == 2 and "not a directory" in _text(out)
    (tmp_path / "empty").mkdir()
    out = runner.invoke(app, ["ingest-screenshots", str(tmp_path / "empty"), "--user", "ada"])
    assert out.exit_code == 2 and "no PNG" in _text(out)
    out = runner.invoke(app, ["ingest-screenshots", str(tmp_path / "empty"), "--user", "ada", "--tz", "Mars/Base"])
    assert out.exit_code == 2 and "unknown time zone" in _text(out)


def test_capture_without_a_display_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    out = runner.invoke(app, ["capture", "--user", "ada", "--interval", "1.5"])
    assert out.exit_code == 2
    assert "no display to capture" in _text(out) and "ingest-screenshots" in _text(out)
    assert not (tmp_path / "data").exists()  # nothing opened, nothing written
