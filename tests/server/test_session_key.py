"""The key a server makes for its own run (written to server.json for `mirix mcp`)."""

from __future__ import annotations

from mirix_py.server.keys import KeyStore
from mirix_py.store.db import make_engine


def test_session_key_acts_for_everyone_while_its_store_lives(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'mirix.db'}")
    keys = KeyStore(engine)
    key = keys.session_key()
    found = keys.verify(key)
    assert found is not None and found.all_users and not found.admin
    assert keys.verify(key[:-2] + "xx") is None
    assert KeyStore(engine).verify(key) is None  # never stored: another server run does not take it
    assert all(info.id != "session" for info in keys.list())
    first, second = key, keys.session_key()
    assert keys.verify(first) is None and keys.verify(second) is not None
