"""`mirix doctor --secrets`: plaintext secrets written the way older versions did are found (where,
never what), moved into the vault by `--repair`, and a second scan is clean down to the file bytes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import text as sql
from typer.testing import CliRunner

from mirix_py.cli.commands import app
from mirix_py.engine import Mirix
from mirix_py.tools.ops import DeleteOp, InsertOp, UpdateOp
from mirix_py.records import EpisodicMemory, KnowledgeVaultMemory, SemanticMemory
from mirix_py.secrets.doctor import BINARY_MIN_CHARS, database_files, holds_text
from mirix_py.store import secret_scan
from mirix_py.store.memories import MemoryStore
from test_guard import KEYS_IN_OTHER_SCRIPTS, _pieces  # a key against each script, and its pieces
from waiting import wait_for

PASSPHRASE = "correct horse battery staple"
WIFI = "CorrectHorse!42"
LOGIN = "tr0ub4dor&3"
DOOR = "7781"
TOKEN = "ghp_Zq81kLm0Pq9Xw2Rt5Yv7Bn3Cd6Fg4Hj1Kl0M"
PLANTED = [PASSPHRASE, WIFI, LOGIN, DOOR, TOKEN]


def _old_store(mx: Mirix) -> MemoryStore:
    """The store as an older version had it: no guard on writes."""
    s = mx.store
    return MemoryStore(s.engine, s.fulltext, s.cipher, s.vectors, s.embedder)


def plant(mx: Mirix, user_id: str) -> dict[str, str]:
    """Secrets in every place an older version left them; returns the planted memories' ids."""
    old = _old_store(mx)
    mx.add("I planted tulips in the front garden.", user_id=user_id)
    episode = EpisodicMemory(id="ep_backup", user_id=user_id, summary=f"The passphrase for the backup drive is: {PASSPHRASE}")
    fact = SemanticMemory(id="se_wifi", user_id=user_id, name="home wifi", summary="the router in the hall")
    vault = KnowledgeVaultMemory(id="kv_old", user_id=user_id, entry_type="password", secret_value=WIFI,
                                 caption=f"home wifi {WIFI}")  # older captions kept the value
    gone = EpisodicMemory(id="ep_gone", user_id=user_id, summary=f"Door code: {DOOR}")
    old.apply([InsertOp(memory=m) for m in (episode, fact, vault, gone)], user_id=user_id, actor="old")
    # an update keeps the earlier text in history; a delete keeps the whole memory there
    old.apply([UpdateOp(memory_id="se_wifi", fields={"summary": f"the wifi password at home is {WIFI}"})],
              user_id=user_id, actor="old")
    old.apply([UpdateOp(memory_id="se_wifi", fields={"summary": "the router in the hall"})], user_id=user_id, actor="old")
    old.apply([DeleteOp(memory_id="ep_gone")], user_id=user_id, actor="old")
    # older versions sent the text along with the vector
    coll = mx.store.vectors._collection(user_id)
    got = coll.get(ids=["ep_backup"], include=["embeddings"])
    coll.upsert(ids=["ep_backup"], embeddings=[list(got["embeddings"][0])],
                documents=[f"{episode.summary} (token {TOKEN})"])
    with mx.engine.begin() as conn:  # an error message that quoted the input
        conn.execute(sql("UPDATE input_log SET error = :e WHERE user_id = :u"),
                     {"e": f"failed on 'login: ada / pass: {LOGIN}'", "u": user_id})
    return {"episode": "ep_backup", "fact": "se_wifi", "vault": "kv_old"}


def _held(text: str, values: list[str]) -> list[str]:
    """Values found in `text` as whole tokens: the door code "7781" inside a random hex id such as
    "[vault:kv_…7781…]" is no copy of it (0.04% of 32-digit hex ids hold a given 4-digit run)."""
    return [v for v in values if re.search(r"(?<![A-Za-z0-9])" + re.escape(v) + r"(?![A-Za-z0-9])", text)]


def _bytes_with(data_dir: Path, values: list[str]) -> dict[str, list[str]]:
    """Values found as whole tokens ("7781" inside a random hex id is not the door code); in Chroma's
    binary graph files only long ones, whose stale bytes spell a short one by chance (`secrets.doctor`)."""
    found: dict[str, list[str]] = {}
    for path in database_files(data_dir):
        blob = path.read_bytes()
        looked_for = values if holds_text(path) else [v for v in values if len(v) >= BINARY_MIN_CHARS]
        hits = [v for v in looked_for if re.search(rb"(?<![A-Za-z0-9])" + re.escape(v.encode()) + rb"(?![A-Za-z0-9])", blob)]
        if hits:
            found[str(path.relative_to(data_dir))] = hits
    return found


@pytest.fixture
def planted(tmp_path, embedder, user_id):
    mx = Mirix(tmp_path / "data", embedder=embedder)
    ids = plant(mx, user_id)
    yield mx, ids
    mx.close()


def test_scan_finds_every_place_and_prints_no_secret(planted, user_id):
    mx, _ = planted
    report = mx.doctor_secrets()
    places = {f.place for f in report.findings}
    assert {"memory.text", "memory_history.before", "memory_fts.text", "vectors.documents",
            "input_log.error"} <= places, places
    assert any(f.place == "file" for f in report.findings)  # the planted text is in mirix.db / its WAL
    assert any(f.id == "kv_old" for f in report.findings)  # the caption holding its own value
    shown = json.dumps(report.summary())
    assert not _held(shown, PLANTED)
    assert report.payload_secrets == 0  # the one logged input holds none


def test_repair_moves_secrets_into_the_vault_and_a_second_scan_is_clean(planted, user_id):
    mx, ids = planted
    assert _bytes_with(mx.settings.data_dir, PLANTED)  # the planted plaintext is on disk
    report = mx.doctor_secrets(repair=True)
    assert report.clean, report.summary()
    assert report.repaired["vaulted"] >= 3 and report.repaired["memories"] >= 2
    assert mx.doctor_secrets().clean
    vault = {mx.get(v.id, user_id=user_id, reveal=True).secret_value
             for v in mx.list(user_id=user_id, memory_types=["knowledge_vault"], limit=100)}
    assert {PASSPHRASE, WIFI, LOGIN, DOOR} <= vault
    episode = mx.get(ids["episode"], user_id=user_id)
    assert PASSPHRASE not in episode.summary and "[vault:kv_" in episode.summary
    assert mx.get("kv_old", user_id=user_id).caption == "home wifi [secret]"
    for memory_id in (ids["fact"], "ep_gone"):
        assert not _held(json.dumps([h.model_dump(mode="json") for h in mx.history(memory_id, user_id=user_id)]),
                         PLANTED)
    assert not _held(mx.input_status(mx.inputs.by_status(
        __import__("mirix_py.records", fromlist=["InputStatus"]).InputStatus.processed, user_id=user_id)[0].id).error or "",
        PLANTED)
    hits = mx.search("backup drive passphrase", user_id=user_id)
    assert ids["episode"] in [h.memory.id for h in hits[:3]]  # still found, by the words around the secret
    assert mx.doctor().clean  # vectors agree with SQL after the rebuild
    mx.close()
    assert _bytes_with(mx.settings.data_dir, PLANTED) == {}


def _chroma_database(data_dir: Path) -> tuple[str, int]:
    """`chroma.sqlite3`'s integrity check and free pages, read by a process of its own: the engine's
    Chroma, with a SQLite of its own, may be open in this one."""
    program = ("import json, sqlite3, sys; db = sqlite3.connect(sys.argv[1]); print(json.dumps("
               "[db.execute('PRAGMA integrity_check').fetchone()[0], db.execute('PRAGMA freelist_count').fetchone()[0]]))")
    done = subprocess.run([sys.executable, "-c", program, str(data_dir / "chroma" / "chroma.sqlite3")],
                          capture_output=True, text=True, check=True)
    integrity, free_pages = json.loads(done.stdout)
    return integrity, free_pages


def test_repair_leaves_no_free_pages_in_chromas_database_and_its_chroma_reads_and_writes_after(planted, user_id):
    """The documents' collection is dropped and filled again (its rows' pages freed), then the database
    is rewritten without them, while the engine's Chroma is open in this process."""
    mx, ids = planted
    assert mx.doctor_secrets(repair=True).clean
    assert _chroma_database(mx.settings.data_dir) == ("ok", 0)
    added = mx.add("The spare key of the shed is under the blue flowerpot.", user_id=user_id)
    turn = next(c.memory_id for c in added.changes if c.memory_type.value == "episodic")
    assert turn in [h.memory.id for h in mx.search("where is the key of the shed", user_id=user_id, method="embedding")]
    assert ids["episode"] in [h.memory.id for h in mx.search("backup drive", user_id=user_id, method="embedding")]
    assert mx.doctor().clean  # the vectors agree with SQL


def _vacuum_running() -> bool:
    """Whether a process this one started is running a VACUUM (`chroma_files.vacuum`'s program)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if parent == os.getpid() and b"VACUUM" in (stat.parent / "cmdline").read_bytes():
                return True
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
    return False


def test_the_repairs_vacuum_of_chromas_database_waits_for_a_write_another_sqlite_of_the_process_holds(
        mx_sqlite, user_id):
    """Chroma links its own SQLite, and two SQLite libraries in one process do not see each other's locks:
    the repair's VACUUM through this process's sqlite3 went ahead in the middle of a write Chroma held,
    whose commit then failed ("disk I/O error"). pysqlite3 stands in for Chroma's SQLite, holding a write
    while the engine's Chroma is open; the repair's compaction of Chroma's files runs at that moment (the
    rest of the repair is left out: Chroma's reads close files of its own, which under POSIX drops every
    lock of the process on the file, the stand-in's too)."""
    other_sqlite = pytest.importorskip("pysqlite3.dbapi2")
    if not Path(f"/proc/{os.getpid()}/stat").exists():
        pytest.skip("processes are looked up in /proc")
    for text in ("I planted tulips in the front garden.", "My sister Anna paints harbours."):
        mx_sqlite.add(text, user_id=user_id)
    data_dir = mx_sqlite.settings.data_dir
    writer = other_sqlite.connect(str(data_dir / "chroma" / "chroma.sqlite3"), isolation_level=None)
    writer.execute("CREATE TABLE probe (x TEXT)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO probe VALUES ('written while the doctor ran')")
    failed: list[Exception] = []

    def compact() -> None:
        try:
            secret_scan._compact_chroma(data_dir)
        except Exception as exc:  # said below, in this thread
            failed.append(exc)

    repair = threading.Thread(target=compact)
    repair.start()
    wait_for(lambda: not repair.is_alive() or _vacuum_running())
    writer.execute("COMMIT")  # the VACUUM has waited for it
    repair.join()
    assert failed == []
    assert writer.execute("SELECT x FROM probe").fetchall() == [("written while the doctor ran",)]
    writer.close()
    assert _chroma_database(data_dir) == ("ok", 0)
    mx_sqlite.add("The spare key of the shed is under the blue flowerpot.", user_id=user_id)
    hits = mx_sqlite.search("where is the key of the shed", user_id=user_id, method="embedding")
    assert "flowerpot" in hits[0].text
    assert mx_sqlite.store.vectors.ids(user_id) == {m.id for m in mx_sqlite.list(user_id=user_id, limit=100)}


def test_cli_reports_then_repairs(tmp_path, embedder, user_id):
    data = tmp_path / "data"
    with Mirix(data, embedder=embedder) as mx:
        plant(mx, user_id)
    runner = CliRunner()
    found = runner.invoke(app, ["doctor", "--secrets", "--json", "--data-dir", str(data)])
    assert found.exit_code == 1, found.output
    assert json.loads(found.output)["findings"] > 0 and not _held(found.output, PLANTED)
    fixed = runner.invoke(app, ["doctor", "--secrets", "--repair", "--json", "--data-dir", str(data)])
    assert fixed.exit_code == 0, fixed.output
    assert json.loads(fixed.output)["clean"] is True


def test_a_data_dir_written_by_this_version_scans_clean(mx_sqlite, user_id):
    for text in (f"My bank PIN is 4921 and the wifi password at home is {WIFI}", f"login: ada / pass: {LOGIN}",
                 f"The passphrase for the backup drive is: {PASSPHRASE}"):
        mx_sqlite.add(text, user_id=user_id)
    episode = mx_sqlite.list(user_id=user_id, memory_types=["episodic"])[0]
    mx_sqlite.update(episode.id, user_id=user_id, summary=f"Door code: {DOOR}")  # the guard on an API write
    report = mx_sqlite.doctor_secrets()
    assert report.clean, report.summary()
    assert report.payload_secrets == 3  # the raw inputs, kept encrypted for retries


def test_the_files_are_scanned_at_rest_after_the_vector_documents_are_read(mx_sqlite, user_id):
    """Reading the vector documents opens an embedded Chroma again, and its first read writes the graph
    back with fresh capacity past the elements in use: the files are scanned only once that is zeroed."""
    from mirix_py.store.chroma_files import scrub

    for text in (f"login: ada / pass: {LOGIN}", "I planted tulips in the front garden."):
        mx_sqlite.add(text, user_id=user_id)
    assert mx_sqlite.doctor_secrets().clean
    assert scrub(mx_sqlite.settings.data_dir / "chroma") == 0


def test_ids_and_times_in_history_are_no_secrets(mx_sqlite, user_id):
    """A random hex id can hold a Luhn-valid digit run ("epi_4111111111111111…" reads as a card number):
    history keeps whole records, and only the fields the guard cleans are scanned and repaired."""
    card_like = "epi_4111111111111111abcdefabcdefab"
    episode = EpisodicMemory(id=card_like, user_id=user_id, summary="I planted tulips in the front garden.",
                             source_ids=["in_5555555555554444aaaaaaaaaaaaaaaa"])
    mx_sqlite.store.apply([InsertOp(memory=episode)], user_id=user_id, actor="test")
    mx_sqlite.update(card_like, user_id=user_id, summary="I planted roses in the front garden.")
    assert mx_sqlite.doctor_secrets().clean
    planted_in_text = "I paid with the card 4111 1111 1111 1111."
    with mx_sqlite.engine.begin() as conn:  # an older version's history event with a card in its text
        conn.execute(sql("UPDATE memory_history SET before = json_set(before, '$.summary', :s) "
                         "WHERE memory_id = :m AND operation = 'update'"), {"s": planted_in_text, "m": card_like})
    found = mx_sqlite.doctor_secrets()
    assert [(f.place, f.entry_type) for f in found.findings if f.place.startswith("memory_history")] == [
        ("memory_history.before", "card_number")]
    assert mx_sqlite.doctor_secrets(repair=True).clean
    before = [h.before for h in mx_sqlite.history(card_like, user_id=user_id) if h.before][0]
    assert before["id"] == card_like and before["source_ids"] == episode.source_ids  # ids are left alone
    assert "4111 1111" not in before["summary"] and "[vault:kv_" in before["summary"]


def test_binary_vector_files_are_scanned_only_for_long_values(tmp_path):
    """Chroma's vector graph holds float vectors and neighbour lists, never text: a short value there is
    a chance spelling of random bytes, a long one would be a real copy. SQLite files are scanned for both."""
    from mirix_py.secrets.doctor import scan_files

    data = tmp_path / "data"
    graph = data / "chroma" / "0b6c1d3e-0000-4000-8000-000000000000"
    graph.mkdir(parents=True)
    (graph / "data_level0.bin").write_bytes(b"\x00\x3d" + DOOR.encode() + b"\x3c\x00" * 20)
    assert scan_files(data, [DOOR, PASSPHRASE]) == []
    (graph / "data_level0.bin").write_bytes(b"\x00" + PASSPHRASE.encode() + b"\x00")
    assert [f.id for f in scan_files(data, [DOOR, PASSPHRASE])] == [f"{graph.relative_to(data)}/data_level0.bin (1 copies)"]
    (data / "chroma" / "chroma.sqlite3").write_bytes(b"\x00door " + DOOR.encode() + b"\x00")
    (data / "mirix.db-wal").write_bytes(b"\x00code: " + DOOR.encode() + b"\x00")
    assert sorted(f.id for f in scan_files(data, [DOOR])) == ["chroma/chroma.sqlite3 (1 copies)", "mirix.db-wal (1 copies)"]


def test_stale_bytes_in_an_open_engines_graph_are_zeroed_before_the_files_are_read(mx_sqlite, user_id):
    mx_sqlite.add(f"The passphrase for the backup drive is: {PASSPHRASE}", user_id=user_id)
    mx_sqlite.add("I planted tulips in the front garden.", user_id=user_id)
    (level0,) = (mx_sqlite.settings.data_dir / "chroma").glob("*/data_level0.bin")
    with open(level0, "r+b") as fh:  # process memory hnswlib wrote past the elements in use
        fh.seek(-64, 2)
        fh.write(PASSPHRASE.encode().ljust(64, b"\0"))
    report = mx_sqlite.doctor_secrets()
    assert report.clean, report.summary()
    assert _bytes_with(mx_sqlite.settings.data_dir, [PASSPHRASE]) == {}
    hits = mx_sqlite.search("tulips in the garden", user_id=user_id, method="embedding")
    assert "tulips" in hits[0].text  # the index opened again


def test_a_stored_key_next_to_another_script_is_found_and_repaired(mx_sqlite, user_id):
    """What an older guard let through: a key written straight against Chinese, Arabic, Cyrillic... letters,
    or cut by a zero-width space, stored as plain text. The scan finds each and the repair vaults it whole."""
    planted = {f"ep_script_{i}": case for i, case in enumerate(KEYS_IN_OTHER_SCRIPTS.values())}
    _old_store(mx_sqlite).apply([InsertOp(memory=EpisodicMemory(id=memory_id, user_id=user_id, summary=text))
                                 for memory_id, (text, _) in planted.items()], user_id=user_id, actor="old")
    report = mx_sqlite.doctor_secrets()
    assert set(planted) <= {f.id for f in report.findings if f.entry_type == "api_key"}, report.summary()
    assert mx_sqlite.doctor_secrets(repair=True).clean
    assert mx_sqlite.doctor_secrets().clean
    vault = {mx_sqlite.get(v.id, user_id=user_id, reveal=True).secret_value
             for v in mx_sqlite.list(user_id=user_id, memory_types=["knowledge_vault"], limit=100)}
    assert vault == {key for _, key in planted.values()}
    for memory_id, (_, key) in planted.items():
        summary = mx_sqlite.get(memory_id, user_id=user_id).summary
        assert "[vault:kv_" in summary and not [p for p in _pieces(key) if p in summary], summary
