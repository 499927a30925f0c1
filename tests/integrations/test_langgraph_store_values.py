"""MirixStore values the JSON of a tag writes with escapes: secrets in quotes or after a line break are
kept out of every file and export (not only out of the memory's text) and read back exactly; control
characters and a terminal's escape sequences are kept in the value and left out of the indexed text;
a batch runs as LangGraph's own stores run one."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.integrations.langgraph import MirixStore
from mirix_py.records import MemoryType
from mirix_py.text.storable import CONTROL, printable


@pytest.fixture
def mx(tmp_path, embedder, backend):
    engine = Mirix(tmp_path / "data", embedder=embedder, database_url=backend)
    yield engine
    engine.close()


# text the secret rules vault -> the secret in it (what must not be stored in plain text)
SECRET_FORMS = {
    'my password is "Tr0ub4dor&3" ok': "Tr0ub4dor&3",
    "password:\nhunter2!x": "hunter2!x",
    "password:\thunter3!x": "hunter3!x",
    'api_key = "sk-live_abcdefghijklmnopqrstu"': "sk-live_abcdefghijklmnopqrstu",
    'DB_PASSWORD="p@ss\\\\word9"': "word9",
    'the gate code is "773194"': "773194",
    "wifi key is “Gr33n!Tea”": "Gr33n!Tea",
    "pin: 48213\n": "48213",
    'export AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"': "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    'mysql -u root -p"Sup3r!"': "Sup3r!",
    'token: "ghp_abcdefghijklmnopqrstuvwxyz0123456789"': "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    'seed phrase: "abandon ability able about above absent absorb abstract absurd abuse access accident"':
        "abandon ability able about above absent absorb abstract absurd abuse access accident",
    'passphrase is "correct horse battery staple"': "correct horse battery staple",
    'Password\n"Quoted!Pw1"': "Quoted!Pw1",
    'my PIN is 48213, "door code" is "551277"': "551277",
}
NOT_A_SECRET = 'cvv "123"'  # the rules take no secret from it: kept as it is


def stored_rows(mx) -> str:
    """Every value in every table of the engine's database, as one text."""
    from sqlalchemy import inspect, text

    with mx.store.engine.connect() as conn:
        return "\n".join(str(value) for table in inspect(conn).get_table_names()
                         for row in conn.execute(text(f'SELECT * FROM "{table}"')) for value in row)


def data_dir_bytes(data_dir: Path) -> bytes:
    """Every file of the data dir (the SQLite database, its write-ahead log, the vector index)."""
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file())


def exported(mx, user: str) -> str:
    out = io.StringIO()
    mx.export(out, user_id=user)
    return out.getvalue()


def test_secrets_in_any_string_of_a_value_are_stored_in_no_file_and_read_back_exactly(mx, tmp_path, backend):
    store = MirixStore(mx)
    items = {f"s{i}": {"content": text, "notes": {"again": text}, "lines": ["first", text]}
             for i, text in enumerate([*SECRET_FORMS, NOT_A_SECRET])}
    items["indexed"] = {"title": "vpn", "how": 'my password is "Tr0ub4dor&3" ok'}
    for key, value in items.items():
        store.put(("ada", "memories"), key, value, index=["how"] if key == "indexed" else None)

    for key, value in items.items():
        assert store.get(("ada", "memories"), key).value == value
    assert {i.key: i.value for i in store.search(("ada", "memories"), limit=100)} == items
    tags = "".join(t for m in mx.list(user_id="ada", limit=100) for t in mx.get(m.id, user_id="ada").tags)
    rows, export = stored_rows(mx), exported(mx, "ada")
    files = data_dir_bytes(tmp_path / "data") if backend is None else b""
    for secret in SECRET_FORMS.values():
        assert secret not in tags and secret not in rows and secret not in export
        assert secret.encode() not in files
    assert NOT_A_SECRET in store.get(("ada", "memories"), f"s{len(SECRET_FORMS)}").value["content"]


def test_overwriting_and_deleting_items_with_quoted_secrets_keeps_them_readable_then_drops_their_entries(mx):
    store = MirixStore(mx)
    value = {"content": 'DB_PASSWORD="p@ss\\\\word9" and mysql -u root -p"Sup3r!"'}
    store.put(("ada", "notes"), "db", value)
    store.put(("ada", "notes"), "db", dict(value))  # the same secrets again: their entries stay in use
    assert store.get(("ada", "notes"), "db").value == value
    store.put(("ada", "notes"), "copy", dict(value))
    store.delete(("ada", "notes"), "db")
    assert store.get(("ada", "notes"), "copy").value == value
    store.delete(("ada", "notes"), "copy")
    assert mx.list(user_id="ada", memory_types=["knowledge_vault"]) == []


CONTROL_VALUES = {
    "form feed": {"content": "page one\x0cpage two alpha"},
    "ansi": {"content": "\x1b[31mred alert\x1b[0m bravo", "raw": "\x1b]0;title\x07 \x9b1m"},
    "nul and others": {"content": "nul\x00here charlie", "bell": "\x07", "del": "x\x7fy", "nel": "a\x85b"},
    "keys": {"content": "delta", "k\x1bey": {"nested\x0c": ["\x1b[0m", "\x0b"]}},
}


def test_control_characters_in_values_are_kept_and_the_indexed_text_is_plain(mx):
    store = MirixStore(mx)
    reference = InMemoryStore()
    for key, value in CONTROL_VALUES.items():
        store.put(("ada", "notes"), key, value)
        reference.put(("ada", "notes"), key, value)

    for key, value in CONTROL_VALUES.items():
        assert store.get(("ada", "notes"), key).value == value == reference.get(("ada", "notes"), key).value
        memory = mx.get(store._item_id("ada", ("ada", "notes"), key, MemoryType.semantic), user_id="ada")
        assert memory.summary == printable(value["content"])  # what search finds it by
        assert not any(c in CONTROL for c in memory.summary + "".join(memory.tags))  # nothing a terminal runs
    assert mx.get(store._item_id("ada", ("ada", "notes"), "ansi", MemoryType.semantic), user_id="ada").summary \
        == "red alert bravo"
    assert [i.key for i in store.search(("ada", "notes"), query="page two")][0] == "form feed"
    assert "ansi" in [i.key for i in store.search(("ada", "notes"), query="bravo\x1b[0m")]
    assert [i.key for i in store.search(("ada", "notes"), query="\x1b[0m")]  # no words: every item, as with no query


def test_what_a_value_or_key_may_not_hold_is_still_refused(mx):
    store = MirixStore(mx)
    deep: dict = {}
    inner = deep
    for _ in range(100):
        inner["a"] = {}
        inner = inner["a"]
    for namespace, key, value in [
        (("ada", "notes"), "k", {"content": "half a pair \ud800"}),  # not Unicode: no JSON reads it back
        (("ada", "notes"), "k\x1b", {"content": "a key is an id: one line, nothing a terminal runs"}),
        (("ada", "n\x0c"), "k", {"content": "so is a namespace label"}),
        (("ada", "notes"), "k", deep),  # nested deeper than a caller's value may be
    ]:
        with pytest.raises(InvalidInput):
            store.put(namespace, key, value)
    assert mx.list(user_id="ada") == []


def run_batch(store) -> list:
    results = store.batch([
        PutOp(("ada", "b"), "x", {"content": "one"}), GetOp(("ada", "b"), "x"),
        PutOp(("ada", "b"), "x", {"content": "two"}), SearchOp(("ada", "b"), None, 10, 0, None),
    ])
    return [r if not isinstance(r, list) else [i.value for i in r] for r in results]


def test_a_batch_reads_the_store_as_it_was_then_its_last_put_of_a_key_wins(mx):
    store, reference = MirixStore(mx), InMemoryStore()
    assert run_batch(store) == run_batch(reference) == [None, None, None, []]
    assert store.get(("ada", "b"), "x").value == reference.get(("ada", "b"), "x").value == {"content": "two"}
    assert len(mx.list(user_id="ada")) == 1

    with pytest.raises(InvalidInput):  # a bad put in a batch: none of its puts is made
        store.batch([PutOp(("ada", "b"), "y", {"content": "three"}), PutOp(("ada", "b"), "z", {"when": {1, 2}})])
    assert store.get(("ada", "b"), "y") is None
