"""`mirix backup` and `mirix restore` given paths or files they cannot use: one line that says what is
wrong, exit code 2, nothing left behind; and a data dir a restore did not finish is recognised."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.facade import maintenance

runner = CliRunner()


@pytest.fixture
def src(tmp_path, monkeypatch):
    """A data dir with a memory, its backup and the file holding its vault key."""
    monkeypatch.delenv("MIRIX_DATA_DIR", raising=False)
    monkeypatch.delenv("MIRIX_VAULT_KEY", raising=False)
    data = tmp_path / "src"
    assert runner.invoke(app, ["add", "Tom lives in Rome.", "-u", "ada", "-d", str(data), "--create"]).exit_code == 0
    assert runner.invoke(app, ["backup", str(tmp_path / "b.tar.gz"), "-d", str(data)]).exit_code == 0
    return data, tmp_path / "b.tar.gz", data / "vault.key"


def _one_line_error(out, says: str) -> None:
    assert out.exit_code == 2, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit), repr(out.exception)
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], out.output


def test_a_backup_into_a_missing_folder_or_onto_a_folder_is_one_line_and_leaves_nothing(src, tmp_path):
    data, _, _ = src
    folder = tmp_path / "folder"
    folder.mkdir()
    _one_line_error(runner.invoke(app, ["backup", str(tmp_path / "nodir" / "x.tar.gz"), "-d", str(data)]),
                    "does not exist")
    _one_line_error(runner.invoke(app, ["backup", str(folder), "-d", str(data)]), "is a directory")
    assert not (tmp_path / "nodir").exists() and not (tmp_path / "folder.partial").exists()
    assert list(folder.iterdir()) == []


def test_a_restore_of_a_truncated_backup_into_a_file_or_with_no_key_file_is_one_line(src, tmp_path):
    _, backup, key_file = src
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(backup.read_bytes()[: backup.stat().st_size // 2])
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a data dir")
    for args, says in ((["restore", str(cut), "-d", str(tmp_path / "r1"), "--vault-key-file", str(key_file)],
                        "truncated"),
                       (["restore", str(backup), "-d", str(a_file), "--vault-key-file", str(key_file)],
                        "is a file, not a directory"),
                       (["restore", str(backup), "-d", str(tmp_path / "r2"), "--vault-key-file",
                         str(tmp_path / "no.key")], "No such file")):
        _one_line_error(runner.invoke(app, args), says)
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()
    assert a_file.read_text() == "not a data dir"


def test_a_data_dir_whose_restore_was_interrupted_says_so_and_restore_starts_it_over(src, tmp_path, monkeypatch):
    _, backup, key_file = src
    target = tmp_path / "restored"

    class Interrupted:  # the full-text rebuild, after the rows are committed, stopped by Ctrl-C
        def __init__(self, engine) -> None:
            pass

        def rebuild(self, conn, **_) -> int:
            raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(maintenance, "fulltext_for", Interrupted)
        stopped = runner.invoke(app, ["restore", str(backup), "-d", str(target), "--vault-key-file", str(key_file)])
    assert stopped.exit_code != 0 and isinstance(stopped.exception, (KeyboardInterrupt, SystemExit))
    assert (target / "vault.key").read_text().strip() == key_file.read_text().strip()

    _one_line_error(runner.invoke(app, ["list", "-u", "ada", "-d", str(target)]), "did not finish")
    again = runner.invoke(app, ["restore", str(backup), "-d", str(target), "--vault-key-file", str(key_file)])
    assert again.exit_code == 0 and "restored" in again.stdout, again.output
    listed = runner.invoke(app, ["search", "Tom Rome", "-u", "ada", "-d", str(target), "--method", "bm25", "--json"])
    assert listed.exit_code == 0 and "Tom lives in Rome" in listed.stdout
