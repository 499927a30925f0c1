"""Opening a store refuses a vault key that is not the database's: every process on one database
must share the key (`store/opening.py`)."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import update
from sqlmodel import Session

from mirix_py.engine import Mirix
from mirix_py.settings import Settings
from mirix_py.store.crypto import VaultKeyError
from mirix_py.store.tables import InputRow

REFUSED = "vault key differs from this engine's: every process must use the same MIRIX_VAULT_KEY"


def _engine(data_dir, key: str | None = None, **kwargs) -> Mirix:
    return Mirix(settings=Settings(data_dir=data_dir, vault_key=key, **kwargs), embedder=None)


def test_another_vault_key_is_refused_at_open(tmp_path, user_id):
    with _engine(tmp_path / "d") as mx:
        mx.add("The wifi password is Hunter2-Blue-Sky.", user_id=user_id)
    with pytest.raises(VaultKeyError, match=REFUSED):
        _engine(tmp_path / "d", Fernet.generate_key().decode())
    with _engine(tmp_path / "d") as again:  # its own key (the data dir's vault.key) still opens it
        assert again.list(user_id=user_id)


def test_an_engine_of_another_data_dir_and_key_is_refused_on_a_shared_database(tmp_path, pgvector_schema_url,
                                                                                user_id):
    key = Fernet.generate_key().decode()
    with _engine(tmp_path / "a", key, database_url=pgvector_schema_url) as first:
        first.add("Kim's dentist is Dr. Okafor on Baker Street.", user_id=user_id)
    with pytest.raises(VaultKeyError, match=REFUSED):
        _engine(tmp_path / "b", database_url=pgvector_schema_url)  # its own new vault.key
    with _engine(tmp_path / "c", key, database_url=pgvector_schema_url) as shared:
        assert shared.list(user_id=user_id)


def test_one_damaged_value_does_not_refuse_the_right_key(tmp_path, user_id):
    with _engine(tmp_path / "d") as mx:
        first = mx.add("Fed the cat at noon.", user_id=user_id).input_ids[0]
        mx.add("Watered the tulips.", user_id=user_id)
        with Session(mx.engine) as session:
            session.execute(update(InputRow).where(InputRow.id == first).values(payload="not-a-fernet-token"))
            session.commit()
    with _engine(tmp_path / "d") as again:
        assert again.doctor().undecryptable_inputs == [first]
