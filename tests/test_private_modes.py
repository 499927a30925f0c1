"""The data dir is owner-only under a permissive umask: folders 0700, files 0600 (the SQLite database
and its -wal/-shm, Chroma's files, thumbnails, the vault key, backups and exports). `mirix doctor`
reports an older store's wider modes and `--repair` narrows them."""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.engine import Mirix
from mirix_py.store.private import narrow, open_to_others, private_dir, private_file

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        out[path.relative_to(root).as_posix()] = stat.S_IMODE(path.lstat().st_mode)
    return out


def _wide(root: Path, skip: str | None = None) -> dict[str, str]:
    return {p: oct(m) for p, m in _modes(root).items()
            if m & 0o077 and not (skip and p.startswith(skip))}


def _screen():
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (900, 240), "white")
    ImageDraw.Draw(image).text((20, 100), "Trip notes: ferry to Bergen at 9:40", fill="black")
    return image


def test_everything_the_engine_writes_is_owner_only(tmp_path, embedder, umask_022):
    data = tmp_path / "home" / "memory"  # two levels the engine creates
    mx = Mirix(data, embedder=embedder)
    try:
        mx.add("My brother Tom is a pilot and I keep bees on the roof.", user_id="ada")
        mx.configure_screenshots(keep_thumbnails=True)
        mx.add_screenshot(_screen(), user_id="ada", captured_at=datetime.now(timezone.utc), app="Firefox",
                          window_title="Trip notes", wait=True)
        mx.backup(data / "backup.tar.gz")
        mx.export(data / "memories.jsonl")
        modes = _modes(data)
        assert {"mirix.db", "mirix.db-wal", "mirix.db-shm", "vault.key", "backup.tar.gz", "memories.jsonl"} <= set(modes)
        assert any(p.startswith("thumbnails/") and p.endswith(".webp") for p in modes)
        assert any(p.startswith("chroma/") for p in modes)
        assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700
        # while open: nothing reachable by others; outside Chroma's folder nothing is even wider than 0600/0700
        assert open_to_others(data) == []
        assert _wide(data, skip="chroma/") == {}
        assert mx.doctor().clean
    finally:
        mx.close()
    assert _wide(data) == {}  # Chroma's own files are narrowed too
    assert {m for p, m in _modes(data).items() if (data / p).is_dir()} == {0o700}


def test_doctor_reports_and_repairs_an_older_store(tmp_path, embedder, umask_022):
    data = tmp_path / "data"
    with Mirix(data, embedder=embedder) as mx:
        mx.add("I planted tulips in the front garden.", user_id="ada")
    # as an older version left it under umask 022
    for path in [data, *data.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    os.chmod(data / "vault.key", 0o600)
    runner = CliRunner()
    found = runner.invoke(app, ["doctor", "--json", "--data-dir", str(data)])
    assert found.exit_code == 1, found.output
    listed = json.loads(found.output)["open_to_others"]
    assert ". (0755)" in listed and "mirix.db (0644)" in listed and not [p for p in listed if "vault.key" in p]
    fixed = runner.invoke(app, ["doctor", "--repair", "--json", "--data-dir", str(data)])
    assert fixed.exit_code == 0, fixed.output
    summary = json.loads(fixed.output)
    assert summary["clean"] is True and summary["repaired"]["modes_narrowed"] >= 3
    assert _wide(data) == {}


def test_a_file_inside_an_owner_only_folder_is_not_reachable(tmp_path, umask_022):
    root = private_dir(tmp_path / "d")
    inner = private_dir(root / "inner")
    (inner / "loose").write_text("x")  # 0644, but inside a 0700 folder
    os.chmod(inner, 0o700)
    assert open_to_others(root) == []
    os.chmod(inner, 0o755)
    assert open_to_others(root) == []  # the data dir itself still shuts others out
    os.chmod(root, 0o711)  # others may pass through, not list
    assert open_to_others(root) == [". (0711)", "inner (0755)", "inner/loose (0644)"]
    assert narrow(root) == 3 and open_to_others(root) == []


def test_private_file_is_created_0600_and_an_existing_one_is_left(tmp_path, umask_022):
    path = private_file(tmp_path / "new" / "mirix.db")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.stat().st_size == 0
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.write_bytes(b"kept")
    private_file(path)
    assert path.read_bytes() == b"kept"
