"""The batch runner keeps each user's inputs their own, even when handed a batch that mixes users."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.records import InputStatus

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


class Killed(BaseException):
    """Stands in for SIGKILL: nothing after it runs."""


def _frame(text: str, n: int):
    return normalize_add(text, user_id="ada", occurred_at=WHEN, source_id=f"frame{n}.png", kind="screenshot",
                         max_chars=10_000, metadata={"app": "Notes", "window_title": f"w{n}"})


def _episodes_saying(mx, words: str) -> int:
    return sum(words in m.search_text() for m in mx.list(user_id="ada", memory_types=["episodic"]))


def test_an_input_resumed_in_a_batch_with_others_runs_no_manager_twice(tmp_path, embedder, monkeypatch):
    """A process stopped after some managers wrote for one input; the next start claims it with
    another input: the managers done for it are skipped for it, and run for the other."""
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        half, fresh = _frame("Zephyr budget review at 3pm", 0), _frame("Quarterly planning with Ines", 1)
        mx.inputs.append([half, fresh], claimed_by=mx.worker_id)
        apply, calls = mx.store.apply, []

        def stopped_after_one_manager(*args, **kwargs):
            calls.append(kwargs.get("actor"))
            if len(calls) > 1:
                raise Killed
            return apply(*args, **kwargs)

        monkeypatch.setattr(mx.store, "apply", stopped_after_one_manager)
        with pytest.raises(Killed):
            mx.runner.process([half])
        monkeypatch.undo()
        assert mx.inputs.done_actors([half.id]) == {calls[0]}
        result = mx.runner.process([half, fresh])
        assert result.status.value == "processed" and sorted(result.input_ids) == sorted([half.id, fresh.id])
        assert _episodes_saying(mx, "Zephyr budget review") == 1
        assert _episodes_saying(mx, "Quarterly planning") == 1


def test_retry_failed_runs_every_failed_input_however_many(tmp_path):
    """More failed inputs than a status listing returns at once (1,000) are all run again, not the oldest 1,000."""
    with Mirix(tmp_path / "data", embedder=None) as mx:
        records = [normalize_add(f"Note {n}: the parcel code is Q{n:04d}.", user_id="ada", occurred_at=WHEN,
                                 source_id=None, kind="text", max_chars=10_000) for n in range(1_005)]
        mx.inputs.append(records)
        mx.inputs.mark([r.id for r in records], InputStatus.failed, error="the model was down")
        retried = mx.retry_failed(user_id="ada")
        assert len(retried) == 1_005 and {r.status.value for r in retried} == {"processed"}
        assert mx.inputs.ids_by_status([InputStatus.failed, InputStatus.degraded], user_id="ada") == []
        assert "Q1004" in " ".join(m.search_text() for m in mx.list(user_id="ada", limit=50))
