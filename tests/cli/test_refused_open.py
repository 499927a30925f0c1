"""A store the engine may not open (another vault key) is said in one line, exit 2, not a traceback."""

from __future__ import annotations

from cryptography.fernet import Fernet
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.engine import Mirix

runner = CliRunner()


def test_a_store_written_under_another_vault_key_is_refused_in_one_line(tmp_path, embedder, monkeypatch):
    with Mirix(tmp_path / "d", embedder=embedder) as mx:
        mx.add("I drink green tea every morning.", user_id="ada")
    monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())
    for command in (["stats"], ["doctor"], ["list", "--user", "ada"]):
        result = runner.invoke(app, [*command, "-d", str(tmp_path / "d")])
        assert result.exit_code == 2, (command, result.output)
        assert "vault key differs" in result.output and "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
