"""`mirix eval locomo` says why the engine refused a run in one `error:` line and exits 2, as the main
CLI does, instead of a Python traceback."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.engine import Mirix

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"


def locomo(tmp_path: Path, cache: str, *extra: str):
    return CliRunner().invoke(app, ["eval", "locomo", "--data", str(FIXTURE), "--out", str(tmp_path / "out"),
                                    "--cache-dir", str(tmp_path / cache), "--no-baselines", *extra])


def refused_in_one_line(result) -> str:
    """The one `error:` line of a refused run (exit 2, no traceback): its text."""
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), (result.output, result.exception)
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    return line


def test_a_cached_store_changed_since_is_refused_in_one_line(tmp_path, monkeypatch):
    """The engine's "changed since" RuntimeError went out as a traceback."""
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")  # BM25 only: the command, not the embedder, is under test
    assert locomo(tmp_path, "cache").exit_code == 0
    data_dir = json.loads((tmp_path / "out" / "locomo_eval.json").read_text())["engine"]["data_dirs"]["mini-1"]
    with Mirix(data_dir, embedder=None) as mx:  # someone deletes a memory in between
        mx.delete(mx.list(user_id="locomo:mini-1", limit=1)[0].id, user_id="locomo:mini-1")
    line = refused_in_one_line(locomo(tmp_path, "cache"))
    assert "changed since" in line and "--fresh" in line


def test_a_database_another_vault_key_wrote_is_refused_in_one_line(tmp_path, pg_schema_url, monkeypatch):
    """Another cache's data dir on the same database: the engine's VaultKeyMismatch went out as a traceback."""
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    monkeypatch.setenv("MIRIX_DATABASE_URL", pg_schema_url)
    monkeypatch.delenv("MIRIX_VAULT_KEY", raising=False)
    assert locomo(tmp_path, "cache").exit_code == 0
    assert "vault key differs" in refused_in_one_line(locomo(tmp_path, "other"))


def test_a_fresh_ingestion_into_a_database_holding_its_users_is_refused_in_one_line(tmp_path, pgvector_schema_url,
                                                                                   monkeypatch):
    """The harness's own refusal (a RuntimeError) went out as a traceback."""
    from cryptography.fernet import Fernet

    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    monkeypatch.setenv("MIRIX_DATABASE_URL", pgvector_schema_url)
    monkeypatch.setenv("MIRIX_VECTOR_STORE", "pgvector")
    monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())  # the data dir holds nothing it needs
    assert locomo(tmp_path, "cache").exit_code == 0
    assert "the store already holds memories for" in refused_in_one_line(locomo(tmp_path, "cache", "--fresh"))


def test_a_refusal_is_said_without_the_secrets_it_quotes(tmp_path, monkeypatch):
    """The line goes where logs go: a key a message quotes is scrubbed, as the main CLI does."""
    from mirix_py.eval import locomo_eval

    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"

    def refuse(*args, **kwargs):
        raise RuntimeError(f"the server refused key {secret}")

    monkeypatch.setattr(locomo_eval, "open_engines", refuse)
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    line = refused_in_one_line(locomo(tmp_path, "cache"))
    assert "the server refused key" in line and secret not in line


def test_eval_screenshots_says_a_refused_run_in_one_line(tmp_path, monkeypatch):
    """The other eval command: a RuntimeError of its run (a baseline OCR that failed) went out as a traceback."""
    from mirix_py.eval import screenshot_qa

    def refuse(*args, **kwargs):
        raise RuntimeError("baseline OCR of f0001.png failed: tesseract was killed")

    monkeypatch.setattr(screenshot_qa, "run_benchmark", refuse)
    result = CliRunner().invoke(app, ["eval", "screenshots", "--out", str(tmp_path / "o"), "--cache-dir",
                                      str(tmp_path / "c")])
    assert "baseline OCR of f0001.png failed" in refused_in_one_line(result)
