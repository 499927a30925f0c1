"""The batch runner keeps each user's inputs their own, even when handed a batch that mixes users."""

from __future__ import annotations

from datetime import datetime, timezone

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix

WHEN = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)


def test_a_batch_of_two_users_inputs_writes_each_users_words_as_theirs(tmp_path, embedder):
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        records = [normalize_add(text, user_id=user, occurred_at=WHEN, source_id=None, kind="text", max_chars=10_000)
                   for user, text in (("ada", "My diagnosis is Zanzibar fever."),
                                      ("bob", "My grocery list: apples and bread."))]
        mx.inputs.append(records, claimed_by=mx.worker_id)
        result = mx.runner.process(records)
        assert result.status.value == "processed" and result.input_ids == [r.id for r in records]
        ada = " ".join(m.search_text() for m in mx.list(user_id="ada"))
        bob = " ".join(m.search_text() for m in mx.list(user_id="bob"))
        assert "Zanzibar" in ada and "apples" not in ada
        assert "apples" in bob and "Zanzibar" not in bob
        assert {mx.input_status(r.id).status.value for r in records} == {"processed"}
