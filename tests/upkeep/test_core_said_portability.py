"""An export and a backup carry a core block's clocks (`said_offsets`): the imported or restored block
states the days its lines were said as the original does."""

from __future__ import annotations

import io

from mirix_py.engine import Mirix
from mirix_py.settings import Settings

DATED = ["lives in Lisbon (said 2 January 2026)", "works as a nurse (said 1 January 2026)"]


def _said_late_in_los_angeles(mx, user_id):
    mx.add([{"role": "user", "content": "I work as a nurse."},
            {"role": "user", "content": "I live in Lisbon.", "occurred_at": "2026-01-02T16:31:00+09:00"}],
           user_id=user_id, occurred_at="2026-01-01T23:30:00-08:00")
    block = mx.core_memory(user_id=user_id)["human"]
    assert block.dated_lines() == DATED
    return block


def test_an_exported_block_imports_with_its_clocks(mx, user_id, tmp_path, embedder):
    block = _said_late_in_los_angeles(mx, user_id)
    exported = io.StringIO()
    mx.export(exported, user_id=user_id)
    with Mirix(settings=Settings(data_dir=tmp_path / "dst"), embedder=embedder) as copy:
        copy.import_(exported.getvalue().splitlines())
        imported = copy.core_memory(user_id=user_id)["human"]
    assert imported.said_offsets == block.said_offsets == {"works as a nurse": -480, "lives in Lisbon": 540}
    assert imported.dated_lines() == DATED


def test_a_backed_up_block_restores_with_its_clocks(mx_sqlite, user_id, tmp_path, embedder):
    block = _said_late_in_los_angeles(mx_sqlite, user_id)
    mx_sqlite.backup(tmp_path / "b.tar.gz")
    key = (mx_sqlite.settings.data_dir / "vault.key").read_text().strip()
    with Mirix.restore(tmp_path / "b.tar.gz", tmp_path / "r", vault_key=key, embedder=embedder) as restored:
        copy = restored.core_memory(user_id=user_id)["human"]
    assert copy.said_offsets == block.said_offsets and copy.dated_lines() == DATED
