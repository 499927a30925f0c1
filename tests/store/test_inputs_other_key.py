"""An input logged under another vault key than the engine's is left as it is, with a warning: a
claim (the resume at open, the sweep, a worker) never fails on it and never fills its `limit` with it."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from cryptography.fernet import Fernet
from sqlmodel import Session

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.records import InputStatus
from mirix_py.settings import Settings
from mirix_py.store.crypto import Cipher
from mirix_py.store.inputs import InputLog
from mirix_py.store.tables import InputRow

WHEN = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)


def _input(text: str, user_id: str):
    return normalize_add(text, user_id=user_id, occurred_at=WHEN, source_id=None, kind="text",
                         max_chars=10_000, metadata={})


def _engine(data_dir, key: str, **kwargs) -> Mirix:
    return Mirix(settings=Settings(data_dir=data_dir, vault_key=key), embedder=None, **kwargs)


def test_the_resume_at_open_leaves_an_input_of_another_key_pending(tmp_path, user_id, caplog):
    key = Fernet.generate_key().decode()
    with _engine(tmp_path / "d", key) as mx:
        mx.add("Fed the cat at noon.", user_id=user_id)  # the database's values are under `key`
        foreign, own = _input("Kim's dentist is Dr. Okafor.", user_id), _input("Watered the tulips.", user_id)
        InputLog(mx.engine, Cipher(Fernet.generate_key())).append([foreign])  # as an engine with its own key
        mx.inputs.append([own])
    with caplog.at_level(logging.WARNING, logger="mirix_py.store"):
        with _engine(tmp_path / "d", key) as again:  # resumes both at open
            again.flush()
            assert again.input_status(own.id).status is InputStatus.processed
            assert "Watered the tulips." in [m.summary for m in again.list(user_id=user_id)
                                             if m.memory_type.value == "episodic"]
            left = again.inputs.claim("someone", limit=10)  # still there for the key that logged it, untouched
            assert left == []
    assert any(foreign.id in r.getMessage() and "MIRIX_VAULT_KEY" in r.getMessage() for r in caplog.records)
    with _engine(tmp_path / "d", key, resume=False) as after:
        with Session(after.engine) as session:
            row = session.get(InputRow, foreign.id)
            assert (row.status, row.attempts, row.claimed_by) == ("pending", 0, None)


def test_inputs_of_another_key_do_not_fill_a_claim(tmp_path, user_id):
    key = Fernet.generate_key().decode()
    with _engine(tmp_path / "d", key, resume=False) as mx:
        foreign = [_input(f"Foreign note {i}.", user_id) for i in range(3)]
        InputLog(mx.engine, Cipher(Fernet.generate_key())).append(foreign)  # logged first: oldest
        own = _input("Watered the tulips.", user_id)
        mx.inputs.append([own])
        taken = mx.inputs.claim("worker", limit=2)
        assert [r.id for r in taken] == [own.id]
        assert mx.inputs.claim("worker", limit=2) == []  # and nothing else is taken, nothing raises
