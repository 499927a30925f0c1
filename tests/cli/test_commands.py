"""The `mirix` command, run as a user would (in-process through typer's runner)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mirix_py.cli.commands import app

runner = CliRunner()


@pytest.fixture
def run(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "data"))

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(app, list(args), input=input, catch_exceptions=False)

    return invoke


def test_add_search_list_show_history(run):
    added = run("add", "My brother Tom is a pilot.", "--user", "ada", "--occurred-at", "2024-05-01T10:00:00+00:00",
                "--json")
    assert added.exit_code == 0, added.output
    result = json.loads(added.stdout)
    assert result["status"] == "processed" and result["changes"]

    found = run("search", "pilot", "--user", "ada", "--json")
    hits = json.loads(found.stdout)
    assert hits and "pilot" in hits[0]["text"]

    table = run("search", "pilot", "--user", "ada")
    assert "pilot" in table.stdout and "score" in table.stdout

    listed = json.loads(run("list", "--user", "ada", "--type", "semantic", "--json").stdout)
    assert [m["name"] for m in listed] == ["Tom"]
    memory_id = listed[0]["id"]

    shown = run("show", memory_id, "--user", "ada", "--history", "--json")
    data = json.loads(shown.stdout)
    assert data["memory"]["id"] == memory_id and data["history"][0]["operation"] == "insert"
    assert "insert" in run("show", memory_id, "--user", "ada", "--history").stdout


def test_add_reads_stdin(run):
    out = run("add", "--user", "bo", "--json", input="Planted basil on the balcony\n")
    assert json.loads(out.stdout)["status"] == "processed"
    assert "basil" in run("list", "--user", "bo").stdout


def test_add_with_an_expiry(run):
    added = run("add", "My parking spot this week is P3-17.", "--user", "ada", "--expires-at",
                "2030-01-31T18:00:00+01:00", "--json")
    assert added.exit_code == 0, added.output
    listed = json.loads(run("list", "--user", "ada", "--type", "episodic", "--json").stdout)
    assert [m["expires_at"] for m in listed] == ["2030-01-31T17:00:00Z"]
    late = runner.invoke(app, ["add", "Too late.", "--user", "ada", "--expires-at", "2001-01-01T00:00:00+00:00"])
    assert late.exit_code == 2 and "not in the future" in late.output


def test_errors_exit_2_with_a_message(run):
    out = runner.invoke(app, ["add", "", "--user", "ada"])
    assert out.exit_code == 2 and "empty" in out.output
    out = runner.invoke(app, ["show", "epi_nope", "--user", "ada"])
    assert out.exit_code == 2 and "epi_nope" in out.output
    out = runner.invoke(app, ["search", "x", "--user", "ada", "--method", "psychic"])
    assert out.exit_code == 2 and "unknown search method" in out.output
    out = runner.invoke(app, ["add", "hi", "--user", "ada", "--occurred-at", "2024-13-01T00:00:00"])
    assert out.exit_code == 2 and "not an ISO 8601" in out.output


def test_export_import(run, tmp_path, monkeypatch):
    run("add", "Bought a kayak named Wave", "--user", "ada")
    dump = tmp_path / "memories.jsonl"
    assert "exported 1" in run("export", str(dump)).stdout
    key = (tmp_path / "data" / "vault.key").read_text()
    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "other"))
    monkeypatch.setenv("MIRIX_VAULT_KEY", key)
    assert "imported 1" in run("import", str(dump), "--create").stdout
    assert "kayak" in run("list", "--user", "ada").stdout
    assert runner.invoke(app, ["import", str(tmp_path / "missing.jsonl")]).exit_code == 2


def test_schemas_export(run, tmp_path):
    out = run("schemas", "export", "--out", str(tmp_path / "s"))
    assert out.exit_code == 0
    schema = json.loads((tmp_path / "s" / "search_hit.schema.json").read_text())
    assert "text" in schema["properties"] and "score" in schema["properties"]


def test_stats_reports_offline_mode(run):
    run("add", "hello there general", "--user", "ada")
    info = json.loads(run("stats", "--json").stdout)
    assert info["mode"] == "offline" and info["memories"]["episodic"] == 1


def test_demo_runs_offline(run):
    out = run("demo")
    assert out.exit_code == 0
    assert "mode: offline" in out.stdout
    assert "hunter2" not in out.stdout  # the demo's planted password never prints
    assert "history of sem_" in out.stdout


def test_quickstart_example_runs(tmp_path, capsys):
    import runpy

    from pathlib import Path

    module = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"))
    module["main"](str(tmp_path / "qs"))
    out = capsys.readouterr().out
    assert "mode: offline" in out
    first_hit = out.splitlines()[1]
    assert "Priya" in first_hit and "'m2'" in first_hit  # the best hit for "who is Priya?" cites her message
    assert "core: Sam: name: Sam | Sam: prefers window seats" in out
    vault = next(line for line in out.splitlines() if line.startswith("vault (masked):"))
    assert "4417#" not in out and "K1ngfisher!" not in out and "[secret]" in vault  # the secrets never print
    assert "history: [('insert', 'semantic_memory_manager'), ('update', 'api')]" in out


def test_chat_offline(run):
    run("add", "My brother Tom is a pilot.", "--user", "ada")
    out = run("chat", "what does Tom do?", "--user", "ada", "--json")
    data = json.loads(out.stdout)
    assert data["mode"] == "offline" and data["memory_ids"] and "pilot" in data["answer"]


def test_undo_takes_back_an_input(run):
    kept = json.loads(run("add", "I keep bees on the roof.", "-u", "ada", "--json").stdout)
    bad = json.loads(run("add", "I moved to Porto and sold the boat.", "-u", "ada", "--json").stdout)
    undone = run("undo", bad["input_ids"][0], "-u", "ada")
    assert undone.exit_code == 0, undone.output
    assert f"undid input {bad['input_ids'][0]}: {len(bad['changes'])} change(s)" in undone.stdout
    listed = {m["id"] for m in json.loads(run("list", "-u", "ada", "--json").stdout)}
    assert listed == {c["memory_id"] for c in kept["changes"]}
    again = run("undo", bad["input_ids"][0], "-u", "ada")
    assert again.exit_code == 2 and "already undone" in again.output


def test_a_data_dir_that_does_not_exist_is_an_error_unless_created(run, tmp_path):
    missing = tmp_path / "mistyped"
    out = runner.invoke(app, ["list", "-u", "ada", "-d", str(missing)])
    assert out.exit_code == 2 and "does not exist" in out.output and "--create" in out.output
    assert not missing.exists()  # no empty store, no new vault key
    out = runner.invoke(app, ["add", "hello", "-u", "ada", "-d", str(missing), "--create"])
    assert out.exit_code == 0 and (missing / "vault.key").exists()


def test_paths_that_are_not_what_a_command_needs_are_one_line_errors(run, tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a data dir")
    for args, says in ((["list", "-u", "ada", "-d", str(a_file)], "is a file, not a directory"),
                       (["export", str(tmp_path / "no" / "such" / "dir" / "out.jsonl")], "No such file or directory"),
                       (["import", str(tmp_path)], "is not a file")):
        out = runner.invoke(app, args)
        assert out.exit_code == 2 and says in out.output and "Traceback" not in out.output, (args, out.output)


def test_json_messages_on_stdin_are_messages(run):
    piped = json.dumps([{"role": "user", "name": "Ada", "id": "t1", "content": "I love sushi."},
                        {"role": "assistant", "content": "Noted!"}])
    added = run("add", "-u", "ada", "--json", input=piped)
    assert added.exit_code == 0, added.output
    memories = json.loads(run("list", "-u", "ada", "--json").stdout)
    text = " ".join(json.dumps(m) for m in memories)
    assert "I love sushi." in text and '"}' not in " ".join(m.get("summary", "") for m in memories)
    assert any("t1" in m["source_ids"] for m in memories)
    bad = runner.invoke(app, ["add", "-u", "ada", "--messages"], input="not json")
    assert bad.exit_code == 2 and "JSON list" in bad.output
    assert "--json-messages" not in runner.invoke(app, ["add", "--help"]).output


def test_delete_update_and_id_prefixes(run):
    added = json.loads(run("add", "My brother Tom is a pilot.", "-u", "ada", "--json").stdout)
    fact = next(c["memory_id"] for c in added["changes"] if c["memory_type"] == "semantic")
    short = fact[:8]
    updated = run("update", short, "summary=Tom flies for Lufthansa", 'tags=["family"]', "-u", "ada", "--json")
    assert updated.exit_code == 0, updated.output
    assert json.loads(updated.stdout)["summary"] == "Tom flies for Lufthansa"
    assert json.loads(updated.stdout)["tags"] == ["family"]
    history = run("show", short, "-u", "ada", "--history")
    assert "~ summary:" in history.stdout and "→" in history.stdout and "Lufthansa" in history.stdout
    assert run("update", short, "-u", "ada").exit_code == 2  # nothing to update
    assert run("delete", short, "-u", "ada").stdout.strip() == f"deleted {fact}"
    gone = run("show", fact, "-u", "ada", "--history")
    assert "is deleted" in gone.stdout and "(deleted)" in gone.stdout
    ambiguous = run("show", fact[:4], "-u", "ada")  # "sem_" or "epi_": every id of the type
    assert ambiguous.exit_code in (0, 2)
    assert run("show", "zzzz9", "-u", "ada").exit_code == 2


def test_deleting_a_turn_names_what_it_took_back(run):
    added = json.loads(run("add", "My sister Anna paints seascapes in Bergen.", "-u", "ada", "--json").stdout)
    turn = next(c["memory_id"] for c in added["changes"] if c["memory_type"] == "episodic")
    said_only_there = {c["memory_id"] for c in added["changes"] if c["memory_id"] != turn}
    assert said_only_there  # a fact (or a core line) made from the turn alone
    deleted = json.loads(run("delete", turn, "-u", "ada", "--json").stdout)
    assert deleted["deleted"] == turn
    assert {entry.split(" ", 1)[1] for entry in deleted["taken_back"]} >= {
        m for m in said_only_there if not m.startswith("core_")}
    assert "Anna" not in run("list", "-u", "ada", "--json").stdout


def test_an_unknown_type_lists_the_valid_ones_and_aliases_work(run):
    run("add", "The wifi password is hunter2-x", "-u", "ada")
    out = run("list", "-u", "ada", "-t", "vaults")
    assert out.exit_code == 2 and "knowledge_vault" in out.output and "episodic" in out.output
    listed = json.loads(run("list", "-u", "ada", "-t", "vault", "--json").stdout)
    assert listed and all(m["memory_type"] == "knowledge_vault" for m in listed)


def test_a_date_without_a_zone_is_local_time(run, monkeypatch):
    import time

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        added = json.loads(run("add", "Met Ines at the crag.", "-u", "ada", "--occurred-at", "2024-05-01T10:00",
                               "--json").stdout)
        assert added["status"] == "processed"
        (episode,) = json.loads(run("list", "-u", "ada", "-t", "episodic", "--json").stdout)
        assert episode["occurred_at"].startswith("2024-05-01T14:00")  # 10:00 EDT is 14:00 UTC
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_import_under_another_key_hints_at_the_vault_key(run, tmp_path):
    run("add", "The garage code is 55-19-77.", "-u", "ada")
    dump = tmp_path / "m.jsonl"
    run("export", str(dump))
    out = runner.invoke(app, ["import", str(dump), "-d", str(tmp_path / "new"), "--create"])
    assert out.exit_code == 2 and "vault.key" in out.output and "hint" in out.output


RUN_IN_TERMINAL = ("\x1b", "\x07", "\x9b", "\x7f", "\r")  # ESC, BEL, CSI, DEL, CR: a terminal acts on them


def _cells(table: str) -> str:
    """A table's text without its borders and the line breaks its narrow columns fold at."""
    return "".join(ch for ch in table if ch not in "│ \n")


def test_control_characters_a_store_holds_are_shown_not_run(run, tmp_path):
    """A store written before control characters were refused may hold an ESC sequence: `list`, `search`
    and `show --history` write it out (`\\x1b[2J`) instead of letting it clear the screen or retitle it."""
    from mirix_py.engine import Mirix
    from mirix_py.tools.ops import UpdateOp

    run("add", "I like green tea very much.", "--user", "ada")
    stored = "green tea\x1b]0;pwned\x07\x1b[2J\x9b31m\x7fRED\r"
    with Mirix(tmp_path / "data") as mx:  # the store takes what an older version's `update` let through
        (episode,) = mx.list(user_id="ada", memory_types=["episodic"])
        mx.store.apply([UpdateOp(memory_id=episode.id, fields={"summary": stored})], user_id="ada", actor="older")
        assert mx.get(episode.id, user_id="ada").summary == stored
    outputs = {args[0]: run(*args, "--user", "ada") for args in (
        ("list",), ("search", "green tea", "--method", "bm25"), ("show", episode.id, "--history"))}
    for command, out in outputs.items():
        assert out.exit_code == 0, out.output
        assert not any(c in out.stdout for c in RUN_IN_TERMINAL), (command, out.stdout)
        assert "tea\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x7fRED\\x0d" in _cells(out.stdout), (command, out.stdout)
    assert '"summary": "green tea\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u007fRED\\r"' in outputs["show"].stdout
    listed = run("list", "--user", "ada", "--json").stdout
    assert not any(c in listed for c in RUN_IN_TERMINAL)
    assert stored in [m.get("summary") for m in json.loads(listed)]  # the JSON still reads back as stored


def _write_episodes(data_dir, hours: range) -> list[str]:
    """Episodes of ada said an hour apart, written by an engine closed again; their ids, the newest first."""
    from datetime import datetime, timezone

    from mirix_py.engine import Mirix
    from mirix_py.records import EpisodicMemory
    from mirix_py.tools.ops import InsertOp

    said = datetime(2024, 6, 1, tzinfo=timezone.utc)
    with Mirix(data_dir, embedder=None) as mx:
        changes = mx.store.apply([InsertOp(memory=EpisodicMemory(user_id="ada", summary=f"Hour {h}.",
                                                                  occurred_at=said.replace(hour=h)))
                                  for h in hours], user_id="ada", actor="test")
    return list(reversed([c.memory_id for c in changes]))


def test_list_pages_by_the_cursor_it_prints_while_memories_are_written(run, tmp_path):
    newest_first = _write_episodes(tmp_path / "data", range(0, 5))
    pages, cursor = [], []
    for _ in range(3):
        out = run("list", "-u", "ada", "-n", "2", "--json", *(["--before", cursor[-1]] if cursor else []))
        assert out.exit_code == 0, out.output
        pages.append([m["id"] for m in json.loads(out.stdout)])
        cursor += [line.removeprefix("More: --before ") for line in out.stderr.splitlines() if line.startswith("More:")]
        _write_episodes(tmp_path / "data", range(20, 22))  # newer than every listed one
    assert pages == [newest_first[:2], newest_first[2:4], newest_first[4:]]
    assert len(cursor) == 2  # the last page printed none
    table = run("list", "-u", "ada", "-n", "2", "--before", cursor[0])
    assert "2 memories of ada" in table.stdout and table.stderr.startswith("More: --before ")
    bad = run("list", "-u", "ada", "--before", "nope")
    assert bad.exit_code == 2 and "is not a cursor of the memory list" in bad.output
