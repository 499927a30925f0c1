"""`mirix eval screenshots`' cached ingestions on a database (MIRIX_DATABASE_URL): the data dir may hold the
database's only vault key (no MIRIX_VAULT_KEY) and its embedded vectors, so neither `--fresh`, nor a run after
an unfinished ingestion, nor the cleanup of older engine sources deletes it; and the cache key names the
database, as the LoCoMo eval's does (`tests/eval/test_cache.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from typer.testing import CliRunner

from mirix_py.eval.cache import DataDirNeeded
from mirix_py.eval.screenshot_qa import ingestion
from mirix_py.eval.screenshot_qa.ingestion import ScreenshotQAConfig, ingest_cached

ONE_DAY = ScreenshotQAConfig(seed=7, days=1, dwell=(1, 2), workers=1)


class Stopped(Exception):
    """Raised where the session's frames would be written: the ingestion got past the cache."""


@pytest.fixture(autouse=True)
def fixed_fingerprint(monkeypatch):
    """Other work may change the engine's source while a test runs: pin the cache key's source hash."""
    monkeypatch.setattr(ingestion, "engine_fingerprint", lambda: "testsource00")


@pytest.fixture
def stop_at_writing(monkeypatch):
    """The cache dirs ingestions got to, each stopped before writing its frames."""
    reached: list[Path] = []

    def write_session(frames, out, **kwargs):
        reached.append(out.parent)
        raise Stopped

    monkeypatch.setattr("mirix_synth.screens.write_session", write_session)
    return reached


def entry_of(tmp_path: Path, reached: list[Path]) -> Path:
    """The cache dir this configuration's ingestion uses."""
    with pytest.raises(Stopped):
        ingest_cached(ONE_DAY, tmp_path, embedder=None)
    return reached[-1]


def a_databases_data_dir(entry: Path, *held: str) -> Path:
    """`entry` as a database's ingestion left it: its data dir holds these, and no mirix.db."""
    data = entry / "data"
    data.mkdir(parents=True)
    for name in held:
        if name == "chroma":
            (data / name).mkdir()
        else:
            (data / name).write_text("kept")
    return data


@pytest.mark.parametrize(("held", "named"), [(["vault.key"], "vault key"), (["chroma"], "vectors")])
def test_fresh_never_deletes_a_databases_vault_key_or_vectors(tmp_path, stop_at_writing, held, named):
    entry = entry_of(tmp_path, stop_at_writing)
    data = a_databases_data_dir(entry, *held)
    (entry / "ingested.json").write_text('{"reused": false}')
    with pytest.raises(DataDirNeeded, match=f"holds the {named} of memories kept in a database.*--fresh would "
                                            "delete them.*new database or schema"):
        ingest_cached(ONE_DAY, tmp_path, embedder=None, fresh=True)
    (entry / "ingested.json").unlink()  # an ingestion left unfinished: not deleted either
    with pytest.raises(DataDirNeeded, match="starting over would delete them"):
        ingest_cached(ONE_DAY, tmp_path, embedder=None)
    assert all((data / name).exists() for name in held)


def test_fresh_starts_an_embedded_store_over(tmp_path, stop_at_writing):
    """An embedded store's data dir holds its rows with its key and vectors: only a cache."""
    entry = entry_of(tmp_path, stop_at_writing)
    a_databases_data_dir(entry, "vault.key", "chroma", "mirix.db")
    (entry / "ingested.json").write_text('{"reused": false}')
    with pytest.raises(Stopped):
        ingest_cached(ONE_DAY, tmp_path, embedder=None, fresh=True)
    assert stop_at_writing[-1] == entry and not (entry / "data").exists() and not (entry / "ingested.json").exists()


def test_an_older_engine_sources_entry_a_database_needs_is_kept(tmp_path, stop_at_writing, monkeypatch):
    """The cleanup of entries of older engine sources deleted a database's vault key and vectors too."""
    monkeypatch.setattr(ingestion, "engine_fingerprint", lambda: "oldsource000")
    needed = entry_of(tmp_path, stop_at_writing)
    a_databases_data_dir(needed, "vault.key")
    cache_only = tmp_path / needed.name.replace("oldsource000", "oldsource001")
    a_databases_data_dir(cache_only, "vault.key", "mirix.db")
    monkeypatch.setattr(ingestion, "engine_fingerprint", lambda: "newsource000")
    assert entry_of(tmp_path, stop_at_writing).name.endswith("-newsource000")
    assert (needed / "data" / "vault.key").read_text() == "kept"
    assert not cache_only.exists()


def test_the_cache_key_names_the_database(tmp_path, stop_at_writing, monkeypatch):
    """Two databases shared one entry: the second reused the first one's data dir (its vault key) and
    read a database nobody had ingested into."""
    monkeypatch.delenv("MIRIX_DATABASE_URL", raising=False)
    monkeypatch.delenv("MIRIX_CHROMA_URL", raising=False)
    embedded = entry_of(tmp_path, stop_at_writing)
    entries = []
    for url in ("postgresql+psycopg://me:one@db/a", "postgresql+psycopg://me:two@db/a",
                "postgresql+psycopg://me:one@db/b"):
        monkeypatch.setenv("MIRIX_DATABASE_URL", url)
        entries.append(entry_of(tmp_path, stop_at_writing))
    assert entries[0] == entries[1]  # the same database, another password
    assert len({embedded, entries[0], entries[2]}) == 3


def test_fresh_on_a_database_keeps_its_vault_key(tmp_path, pg_schema_url, monkeypatch):
    """Through the command, on PostgreSQL: `--fresh` deleted the only key the database's inputs were
    encrypted under while the database kept the rows."""
    pytest.importorskip("pytesseract")
    from mirix_py.cli.commands import app

    monkeypatch.setenv("MIRIX_DATABASE_URL", pg_schema_url)
    monkeypatch.delenv("MIRIX_VAULT_KEY", raising=False)
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    data, info, _ = ingest_cached(ONE_DAY, tmp_path / "cache", embedder=None)
    assert {name: (data / name).exists() for name in ("vault.key", "mirix.db")} == {"vault.key": True,
                                                                                      "mirix.db": False}
    key = (data / "vault.key").read_bytes()
    result = CliRunner().invoke(app, ["eval", "screenshots", "--days", "1", "--dwell", "1-2", "--workers", "1",
                                      "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
                                      "--fresh"])
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert "--fresh would delete them" in line and "new database or schema" in line
    assert (data / "vault.key").read_bytes() == key
    again, reused, _ = ingest_cached(ONE_DAY, tmp_path / "cache", embedder=None)
    assert again == data and reused["reused"] is True
    assert info["settings"]["store"]["database_url"].startswith("postgresql")  # the key names the database


def test_the_cache_key_names_the_time_zone(tmp_path, stop_at_writing, monkeypatch):
    """A memory's text states its day in the user's zone: a store ingested in one zone was reused in another."""
    monkeypatch.delenv("MIRIX_DATABASE_URL", raising=False)
    entries = []
    for zone in (None, "America/Los_Angeles", "Asia/Tokyo", "America/Los_Angeles"):
        if zone is None:
            monkeypatch.delenv("MIRIX_TIMEZONE", raising=False)
        else:
            monkeypatch.setenv("MIRIX_TIMEZONE", zone)
        entries.append(entry_of(tmp_path, stop_at_writing))
    assert len(set(entries[:3])) == 3 and entries[1] == entries[3]


def _database_with_a_memory_of(data_dir: Path, user_id: str) -> None:
    from mirix_py.engine import Mirix
    from mirix_py.settings import Settings

    with Mirix(settings=Settings.from_env(data_dir=data_dir)) as mx:
        mx.add("I keep my notes in the blue folder.", user_id=user_id)


@pytest.mark.parametrize("shared_key", [True, False], ids=["one vault key", "the data dir's own key"])
def test_a_database_already_holding_the_user_is_refused(tmp_path, pgvector_schema_url, monkeypatch, shared_key):
    """The session's memories were mixed with those the database held, and the questions scored on both.
    Without MIRIX_VAULT_KEY the new data dir's key cannot open the database's values: refused too, and
    neither refusal leaves a data dir the next run would refuse to start over."""
    pytest.importorskip("pytesseract")
    monkeypatch.setenv("MIRIX_DATABASE_URL", pgvector_schema_url)
    monkeypatch.setenv("MIRIX_VECTOR_STORE", "pgvector")  # engines of other data dirs share the vectors
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    if shared_key:  # every engine on one database shares its key
        monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())
    else:
        monkeypatch.delenv("MIRIX_VAULT_KEY", raising=False)
    _database_with_a_memory_of(tmp_path / "other", ONE_DAY.user_id)
    refusal = "already holds 1 memories of the user 'screenshot-qa'" if shared_key else "vault key differs"
    for _ in range(2):
        with pytest.raises(Exception, match=refusal):
            ingest_cached(ONE_DAY, tmp_path / "cache", embedder=None)
        assert list((tmp_path / "cache").iterdir()) == []


def test_a_reused_ingestion_whose_database_changed_is_refused(tmp_path, pgvector_schema_url, monkeypatch):
    """A database written to after its ingestion was cached was scored as if it held the session alone."""
    pytest.importorskip("pytesseract")
    from mirix_py.cli.commands import app

    monkeypatch.setenv("MIRIX_DATABASE_URL", pgvector_schema_url)
    monkeypatch.setenv("MIRIX_VECTOR_STORE", "pgvector")
    monkeypatch.setenv("MIRIX_EMBEDDER", "none")
    monkeypatch.setenv("MIRIX_VAULT_KEY", Fernet.generate_key().decode())
    ingest_cached(ONE_DAY, tmp_path / "cache", embedder=None)
    _database_with_a_memory_of(tmp_path / "other", ONE_DAY.user_id)
    result = CliRunner().invoke(app, ["eval", "screenshots", "--days", "1", "--dwell", "1-2", "--workers", "1",
                                      "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")])
    assert result.exit_code == 2, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert "changed since" in line and "--fresh on an empty database" in line
    assert not (tmp_path / "out" / "screenshot_qa.json").exists()
