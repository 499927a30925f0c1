"""Backups and restores that are interrupted (Ctrl-C raises KeyboardInterrupt) or fail part way: no
half backup is left, a half-restored data dir keeps the backup's vault key, and the restore can be
run again into it. The interrupt is injected at the point (no real signals, no timing)."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.facade import maintenance
from mirix_py.store.agent_sessions import FILE_NAME, SessionStore
from mirix_py.store.crypto import Cipher
from mirix_py.upkeep import backup as backup_module
from mirix_py.upkeep.backup import read_manifest

SECRET = "Interrupt-Secret-5521q"
USER = "ada"


@pytest.fixture
def source(tmp_path, embedder):
    """A data dir with memories, a vault secret and agent sessions; its backup and vault key."""
    with Mirix(tmp_path / "src", embedder=embedder) as mx:
        mx.add([{"role": "user", "content": f"My name is Ada. My password is {SECRET}"},
                {"role": "user", "content": "Tom lives in Rome."}], user_id=USER)
        SessionStore(mx.settings.data_dir / FILE_NAME, mx.store.cipher).add_items(
            USER, "chat-1", [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."}])
        manifest = mx.backup(tmp_path / "b.tar.gz")
        key = (mx.settings.data_dir / "vault.key").read_text().strip()
        memories = {m.id for m in mx.list(user_id=USER, limit=100)}
    return tmp_path / "b.tar.gz", key, manifest, memories


class _Interrupted:
    """A full-text index whose rebuild is interrupted, as Ctrl-C does (`fulltext_for` stand-in)."""

    def __init__(self, engine) -> None:
        pass

    def rebuild(self, conn, **_) -> int:
        raise KeyboardInterrupt


def _interrupt_in_fulltext_rebuild(monkeypatch, src, target, key, embedder, database_url=None) -> None:
    with monkeypatch.context() as patched:
        patched.setattr(maintenance, "fulltext_for", _Interrupted)
        with pytest.raises(KeyboardInterrupt):
            Mirix.restore(src, target, vault_key=key, embedder=embedder, database_url=database_url)


def _assert_restored(copy: Mirix, key: str, memories: set[str]) -> None:
    assert {m.id for m in copy.list(user_id=USER, limit=100)} == memories
    vault = copy.list(user_id=USER, memory_types=["knowledge_vault"])[0]
    assert copy.get(vault.id, user_id=USER, reveal=True).secret_value == SECRET
    assert copy.search("Tom Rome", user_id=USER, method="bm25")
    assert (copy.settings.data_dir / "vault.key").read_text().strip() == key
    assert not (copy.settings.data_dir / maintenance.RESTORE_MARKER).exists()
    sessions = SessionStore(copy.settings.data_dir / FILE_NAME, copy.store.cipher)
    assert sessions.get_items(USER, "chat-1") == [{"role": "user", "content": "Hi."},
                                                 {"role": "assistant", "content": "Hello."}]
    assert copy.doctor().clean


def test_a_restore_interrupted_after_its_rows_are_in_keeps_the_key_and_runs_again(
        source, tmp_path, monkeypatch, embedder):
    src, key, manifest, memories = source
    target = tmp_path / "restored"
    _interrupt_in_fulltext_rebuild(monkeypatch, src, target, key, embedder)

    # the rows are committed: the key that opens them is there, and the dir says the restore did not finish
    assert (target / "vault.key").read_text().strip() == key
    unfinished = maintenance.unfinished_restore(target)
    assert unfinished is not None and "did not finish" in unfinished.advice(target)
    with pytest.raises(InvalidInput, match="did not finish"):  # half a backup is not opened as a store
        Mirix(target, embedder=embedder)
    assert Cipher((target / "vault.key").read_bytes().strip()).decrypt(manifest["key_check"]) == backup_module.KEY_CHECK

    with Mirix.restore(src, target, vault_key=key, embedder=embedder) as copy:  # starts over
        _assert_restored(copy, key, memories)
    assert maintenance.unfinished_restore(target) is None


def test_an_interrupted_restore_into_pgvector_starts_over_with_its_vectors(tmp_path, monkeypatch, embedder,
                                                                           pgvector_schema_url, more_pgvector_schemas):
    with Mirix(tmp_path / "src", embedder=embedder, database_url=pgvector_schema_url) as mx:
        mx.add("Tom lives in Rome.", user_id=USER)
        manifest = mx.backup(tmp_path / "b.tar.gz")
        key = (mx.settings.data_dir / "vault.key").read_text().strip()
        memories = {m.id for m in mx.list(user_id=USER)}
    assert manifest["counts"]["memory_vector"] > 0
    target, url = tmp_path / "restored", more_pgvector_schemas()
    _interrupt_in_fulltext_rebuild(monkeypatch, tmp_path / "b.tar.gz", target, key, embedder, database_url=url)
    with Mirix.restore(tmp_path / "b.tar.gz", target, vault_key=key, embedder=embedder, database_url=url) as copy:
        assert {m.id for m in copy.list(user_id=USER)} == memories
        assert copy.store.vectors.count(USER) == manifest["counts"]["memory_vector"]
        assert copy.search("Tom Rome", user_id=USER, method="bm25") and copy.doctor().clean


def test_a_restore_whose_backup_falls_short_commits_nothing_and_can_be_run_again(source, tmp_path, embedder):
    src, key, manifest, memories = source
    short = tmp_path / "short.tar.gz"
    with tarfile.open(src) as good, tarfile.open(short, "w:gz") as bad:  # the manifest promises one memory more
        for member in good.getmembers():
            data = good.extractfile(member).read()
            if member.name == "manifest.json":
                promised = json.loads(data)
                promised["counts"]["memory"] += 1
                data = json.dumps(promised).encode()
                member.size = len(data)
            bad.addfile(member, io.BytesIO(data))
    target = tmp_path / "restored"
    with pytest.raises(InvalidInput, match="incomplete"):
        Mirix.restore(short, target, vault_key=key, embedder=embedder)
    with Mirix.restore(src, target, vault_key=key, embedder=embedder) as copy:
        _assert_restored(copy, key, memories)


def test_a_restore_stopped_while_re_embedding_is_finished_by_the_next_open(source, tmp_path, monkeypatch, embedder):
    src, key, _, memories = source
    target = tmp_path / "restored"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(embedder, "embed", interrupted)  # stopped while embedding the restored rows
        with pytest.raises(KeyboardInterrupt):
            Mirix.restore(src, target, vault_key=key, embedder=embedder)
    with pytest.raises(InvalidInput, match=r"holds data .*opening it finishes that restore"):
        Mirix.restore(src, target, vault_key=key, embedder=embedder)
    assert maintenance.unfinished_restore(target) is None  # every row is in: only the vectors are missing
    with Mirix(target, embedder=embedder) as opened:  # nothing run by hand: the open writes them
        report = opened.doctor()
        assert report.clean and not report.rows_without_vectors, report
        hits = opened.search("Tom lives in Rome", user_id=USER, method="embedding")
        assert hits and "Rome" in hits[0].memory.search_text()
        _assert_restored(opened, key, memories)


def test_a_restore_shows_the_vectors_written_as_the_engine_opens(source, tmp_path, embedder):
    src, key, _, memories = source
    shown: list[int] = []

    def progress(batches, total):
        shown.append(total)
        return batches

    with Mirix.restore(src, tmp_path / "restored", vault_key=key, embedder=embedder, progress=progress) as copy:
        assert copy.doctor().clean
        _assert_restored(copy, key, memories)
    assert shown and shown[0] >= 1  # the open's batches went through the caller's progress


def test_an_unfinished_restore_into_another_database_wipes_nothing_here(source, tmp_path, monkeypatch, embedder):
    src, key, _, _ = source
    target = tmp_path / "restored"
    _interrupt_in_fulltext_rebuild(monkeypatch, src, target, key, embedder)
    elsewhere = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    with Mirix(tmp_path / "other", embedder=embedder, database_url=elsewhere) as other:
        other.add("Bob keeps bees.", user_id="bob")
        kept = {m.id for m in other.list(user_id="bob")}
    with pytest.raises(InvalidInput, match="holds data"):  # the marker is for target's own database
        Mirix.restore(src, target, vault_key=key, embedder=embedder, database_url=elsewhere)
    with Mirix(tmp_path / "other", embedder=embedder, database_url=elsewhere) as other:
        assert kept and {m.id for m in other.list(user_id="bob")} == kept


def test_an_interrupted_backup_leaves_no_partial_file(source, tmp_path, monkeypatch, embedder):
    src, key, _, _ = source
    written = backup_module._add_bytes

    def interrupted_after_the_manifest(tar, name, data):
        if name != "manifest.json":
            raise KeyboardInterrupt
        written(tar, name, data)

    with Mirix(tmp_path / "src", embedder=embedder) as mx:
        with monkeypatch.context() as patched:
            patched.setattr(backup_module, "_add_bytes", interrupted_after_the_manifest)
            with pytest.raises(KeyboardInterrupt):
                mx.backup(tmp_path / "again.tar.gz")
        assert sorted(p.name for p in tmp_path.glob("again.tar.gz*")) == []
        mx.backup(tmp_path / "again.tar.gz")
    assert read_manifest(tmp_path / "again.tar.gz")["counts"] == read_manifest(src)["counts"]


def test_a_backup_to_a_folder_or_a_missing_folder_is_refused_before_writing(source, tmp_path, embedder):
    folder = tmp_path / "folder"
    folder.mkdir()
    with Mirix(tmp_path / "src", embedder=embedder) as mx:
        with pytest.raises(InvalidInput, match="is a directory"):
            mx.backup(folder)
        with pytest.raises(InvalidInput, match="does not exist"):
            mx.backup(tmp_path / "missing" / "b.tar.gz")
    assert not (tmp_path / "folder.partial").exists() and not (tmp_path / "missing").exists()
    assert list(folder.iterdir()) == []


def test_a_truncated_backup_or_a_file_as_data_dir_is_refused_before_writing(source, tmp_path, embedder):
    src, key, _, _ = source
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    with pytest.raises(InvalidInput, match="truncated"):
        Mirix.restore(cut, tmp_path / "r1", vault_key=key, embedder=embedder)
    assert not (tmp_path / "r1").exists()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a data dir")
    with pytest.raises(InvalidInput, match="is a file"):
        Mirix.restore(src, a_file, vault_key=key, embedder=embedder)
    assert a_file.read_text() == "not a data dir"
