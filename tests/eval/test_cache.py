"""Cached ingestions: a data dir a database still needs (its vault key, its vectors) is never deleted to
start over, `--fresh` or not; an embedded store's data dir is (its rows go with it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirix_py.errors import MirixError
from mirix_py.eval.cache import cache_key, mark_complete, open_cached_dir
from mirix_py.eval.locomo_eval import LocomoEvalConfig, run_locomo

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"
PARTS = {"data": "digest", "embedder": "none"}


def ingested_dir(root: Path, *held: str) -> Path:
    """A complete cached ingestion whose data dir holds these files or folders of the engine's."""
    cached = open_cached_dir(root, "locomo", PARTS)
    for name in held:
        if name == "chroma":
            (cached.path / name).mkdir()
        else:
            (cached.path / name).write_text("kept")
    mark_complete(cached, {"sessions": 3})
    return cached.path


@pytest.mark.parametrize(("held", "named"), [(["vault.key"], "vault key"), (["chroma"], "vectors"),
                                             (["vault.key", "chroma"], "vault key and the vectors")])
def test_fresh_never_deletes_what_a_databases_memories_need(tmp_path, held, named):
    """A data dir without a store of its own (no mirix.db) belongs to a database elsewhere: its vault key
    decrypts that database's inputs, its embedded Chroma holds that database's vectors."""
    path = ingested_dir(tmp_path, *held)
    with pytest.raises(MirixError, match=f"holds the {named} of memories kept in a database") as refused:
        open_cached_dir(tmp_path, "locomo", PARTS, fresh=True)
    assert "new database or schema" in str(refused.value)
    assert all((path / name).exists() for name in held) and (path / "ingested.json").exists()
    (path / "ingested.json").unlink()  # an ingestion left unfinished: not deleted either
    with pytest.raises(MirixError, match="starting over would delete them"):
        open_cached_dir(tmp_path, "locomo", PARTS)
    assert all((path / name).exists() for name in held)


@pytest.mark.parametrize("held", [["mirix.db", "vault.key", "chroma"], []])
def test_fresh_starts_an_embedded_store_over(tmp_path, held):
    """An embedded store's data dir holds its rows with its key and vectors; one the engine never
    opened holds nothing: either is only a cache."""
    path = ingested_dir(tmp_path, *held)
    cached = open_cached_dir(tmp_path, "locomo", PARTS, fresh=True)
    assert cached.path == path == tmp_path / cache_key("locomo", PARTS) and not cached.reused
    assert sorted(p.name for p in path.iterdir()) == ["key.json"]


def test_fresh_on_a_database_keeps_its_vault_key_and_vectors(tmp_path, embedder, pg_schema_url, monkeypatch):
    """`--fresh` on a database without MIRIX_VAULT_KEY deleted the only key its inputs were encrypted
    under (and its embedded vectors) while the database kept the rows: the next run was refused for
    another vault key, and the rows could not be read again."""
    from mirix_py.cli.commands import app

    monkeypatch.setenv("MIRIX_DATABASE_URL", pg_schema_url)
    monkeypatch.delenv("MIRIX_VAULT_KEY", raising=False)
    config = LocomoEvalConfig(data=FIXTURE, cache_dir=tmp_path / "cache", budget_words=750, baselines=False)
    first = run_locomo(config, embedder=embedder)
    data_dir = Path(first["engine"]["data_dir"])
    held = {name: (data_dir / name).exists() for name in ("vault.key", "chroma", "mirix.db")}
    assert held == {"vault.key": True, "chroma": True, "mirix.db": False}, held
    key = (data_dir / "vault.key").read_bytes()

    result = CliRunner().invoke(app, ["eval", "locomo", "--data", str(FIXTURE), "--out", str(tmp_path / "out"),
                                      "--cache-dir", str(tmp_path / "cache"), "--no-baselines", "--fresh"])
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert "--fresh would delete them" in line and "new database or schema" in line
    assert (data_dir / "vault.key").read_bytes() == key
    again = run_locomo(config, embedder=embedder)  # the cached ingestion still opens and scores alike
    assert again["engine"]["cache_reused"] is True
    scores = ("evidence_recall", "answer_token_recall")
    assert [again["summary"]["engine"]["overall_1_4"][k] for k in scores] == \
        [first["summary"]["engine"]["overall_1_4"][k] for k in scores]
    assert json.loads((data_dir / "ingested.json").read_text())["sessions"] == 3
