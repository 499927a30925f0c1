"""`mirix ingest-screenshots` and `mirix capture`, run as a user would."""

from __future__ import annotations

import json
import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
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


def _report(out) -> dict:
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    return {key: report[key] for key in ("processed", "duplicates", "batches", "thumbnail_bytes")}


def test_ingest_screenshots_takes_settings_from_the_environment_and_flags_over_them(tmp_path, monkeypatch, synth,
                                                                                   tesseract):
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    write_session(synth.session(days=1, dwell=(3, 3), scenes=["chat"]), tmp_path / "shots", synth=synth)
    shots = ["ingest-screenshots", str(tmp_path / "shots"), "--json", "--workers", "1"]

    monkeypatch.setenv("MIRIX_OCR_LANG", "eng+zzz")
    out = runner.invoke(app, [*shots, "--user", "ada", "--create"])
    assert out.exit_code == 2 and "no language data for zzz" in _text(out)

    for name, value in {"MIRIX_SCREENSHOT_SIMILARITY": "1", "MIRIX_SCREENSHOT_BATCH_FRAMES": "1",
                        "MIRIX_KEEP_THUMBNAILS": "1", "MIRIX_THUMBNAIL_RETENTION_DAYS": "36500"}.items():
        monkeypatch.setenv(name, value)
    from_env = _report(runner.invoke(app, [*shots, "--user", "ada", "--create", "--lang", "eng"]))
    assert from_env["duplicates"] == 0 and from_env["batches"] == from_env["processed"] == 3
    assert from_env["thumbnail_bytes"] > 0

    flags = _report(runner.invoke(app, [*shots, "--user", "bob", "--lang", "eng", "--similarity", "0.99",
                                        "--batch-frames", "20", "--no-keep-thumbnails"]))
    assert flags["duplicates"] >= 1 and flags["batches"] == 1 and flags["thumbnail_bytes"] == 0


def test_a_bad_screenshot_setting_in_the_environment_is_a_clear_error(tmp_path, monkeypatch, synth):
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRIX_SCREENSHOT_SIMILARITY", "2")
    write_session(synth.session(days=1, dwell=(1, 1), scenes=["chat"]), tmp_path / "shots", synth=synth)
    out = runner.invoke(app, ["ingest-screenshots", str(tmp_path / "shots"), "--user", "ada", "--create"])
    assert out.exit_code == 2
    assert "screenshot settings in the environment" in _text(out) and "similarity_threshold" in _text(out)
    assert not (tmp_path / "data").exists()  # refused before anything was opened


@pytest.mark.parametrize(("variable", "bad", "flag"), [
    ("MIRIX_SCREENSHOT_SIMILARITY", "2", ["--similarity", "0.99"]),
    ("MIRIX_SCREENSHOT_BATCH_FRAMES", "many", ["--batch-frames", "20"]),
    ("MIRIX_SCREENSHOT_BATCH_SECONDS", "a minute", ["--batch-seconds", "60"]),
    ("MIRIX_OCR_WORKERS", "two", ["--workers", "1"]),
    ("MIRIX_THUMBNAIL_RETENTION_DAYS", "a week", ["--thumbnail-days", "7"]),
])
def test_a_flag_replaces_a_bad_setting_of_the_environment(tmp_path, monkeypatch, synth, tesseract, variable, bad,
                                                           flag):
    """The environment's value was read, and refused, even where a flag gave the setting."""
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    monkeypatch.setenv(variable, bad)
    write_session(synth.session(days=1, dwell=(1, 1), scenes=["chat"]), tmp_path / "shots", synth=synth)
    shots = ["ingest-screenshots", str(tmp_path / "shots"), "--user", "ada", "--create", "--json"]
    refused = runner.invoke(app, [*shots, "-d", str(tmp_path / "without")])
    assert refused.exit_code == 2 and "screenshot settings in the environment" in _text(refused)
    given = runner.invoke(app, [*shots, "-d", str(tmp_path / "with"), *flag])
    assert given.exit_code == 0, given.output
    assert json.loads(given.stdout)["processed"] >= 1


def test_capture_takes_settings_from_the_environment_and_flags_over_them(tmp_path, monkeypatch, synth, tesseract):
    from PIL import ImageGrab

    screen = synth.session(days=1, dwell=(1, 1), scenes=["chat"])[0].image()
    monkeypatch.setattr(ImageGrab, "grab", lambda **kw: screen.copy())
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    monkeypatch.setenv("MIRIX_KEEP_THUMBNAILS", "1")
    grab = ["capture", "--max-frames", "2", "--interval", "0.1", "--workers", "0", "--create"]

    from_env = runner.invoke(app, [*grab, "--user", "ada", "-d", str(tmp_path / "env")])
    assert from_env.exit_code == 0, from_env.output
    assert list((tmp_path / "env").rglob("*.webp"))

    flag = runner.invoke(app, [*grab, "--user", "ada", "-d", str(tmp_path / "flag"), "--no-keep-thumbnails"])
    assert flag.exit_code == 0, flag.output
    assert (tmp_path / "flag").is_dir() and not list((tmp_path / "flag").rglob("*.webp"))


def test_ingest_screenshots_again_skips_the_files_already_ingested(tmp_path, monkeypatch, synth, tesseract, backend):
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    if backend is not None:
        monkeypatch.setenv("MIRIX_DATABASE_URL", backend)
    write_session(synth.session(days=1, dwell=(2, 2), scenes=["calendar", "chat"]), tmp_path / "shots", synth=synth)
    shots = ["ingest-screenshots", str(tmp_path / "shots"), "--user", "ada", "--workers", "1"]
    first = runner.invoke(app, [*shots, "--json", "--create"])
    assert first.exit_code == 0, first.output
    read = json.loads(first.stdout)["processed"]

    again = runner.invoke(app, [*shots, "--json"])
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["processed"] == report["unique"] == report["batches"] == 0 and report["ingested"] == read > 0
    table = runner.invoke(app, shots)
    assert table.exit_code == 0 and re.search(rf"already ingested \(skipped\)\W*{read}\b", _text(table))


@pytest.mark.parametrize(("flag", "zone"), [([], "Europe/Berlin"), (["--tz", "Asia/Tokyo"], "Asia/Tokyo")])
def test_a_stamp_without_a_zone_is_read_in_tz_else_mirix_timezone_with_its_dates_offset(
        tmp_path, monkeypatch, machine_zone, tesseract, flag, zone):
    from mirix_py.engine import Mirix
    from mirix_py.records import InputKind
    from mirix_synth.screens import text_window

    machine_zone("America/Los_Angeles")
    monkeypatch.setenv("MIRIX_TIMEZONE", "Europe/Berlin")
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    (tmp_path / "shots").mkdir()
    text_window("Quarterly budget row 42 total 9,870", width=1300).save(
        tmp_path / "shots" / "Screenshot_20240603-161000.png")
    out = runner.invoke(app, ["ingest-screenshots", str(tmp_path / "shots"), "--user", "ada", "--workers", "1",
                              "-d", str(tmp_path / "data"), "--create", *flag])
    assert out.exit_code == 0, out.output
    with Mirix(tmp_path / "data", embedder=None) as mx:
        (record,) = mx.inputs.by_kind(InputKind.screenshot, user_id="ada")
    assert record.occurred_at == datetime(2024, 6, 3, 16, 10, tzinfo=ZoneInfo(zone))
