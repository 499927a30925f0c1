"""LoCoMo ingestion through the engine: one `add` per session, waited on or queued and flushed.

tests/fixtures/locomo_mini.json: two conversations, 8 turns in all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirix_py.engine import Mirix
from mirix_py.eval.locomo import ingest_conversation, ingest_conversations, load_locomo

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"


def stored(mx: Mirix, user_id: str) -> list[tuple]:
    """What a user's memories say, without the input ids (new for every add)."""
    return sorted((m.memory_type.value, m.search_text(), str(m.occurred_at), tuple(s for s in m.source_ids if not s.startswith("in_")))
                  for m in mx.list(user_id=user_id, limit=1000))


def test_queued_sessions_store_the_same_memories_as_waited_ones(tmp_path, embedder):
    convs = load_locomo(FIXTURE)
    waited = Mirix(tmp_path / "waited", embedder=embedder)
    queued = Mirix(tmp_path / "queued", embedder=embedder)
    try:
        a = ingest_conversations(waited, convs)
        b = ingest_conversations(queued, convs, wait=False)
        assert (b.conversations, b.sessions, b.turns, b.failed_sessions) == (a.conversations, a.sessions, a.turns, [])
        for conv in convs:
            assert stored(queued, conv.user_id) == stored(waited, conv.user_id)
            assert len(stored(waited, conv.user_id)) >= len(conv.turns)
            for q in conv.questions:
                ranked = [[[s for s in h.memory.source_ids if not s.startswith("in_")]
                           for h in mx.search(q.question, user_id=conv.user_id, limit=10)] for mx in (waited, queued)]
                assert ranked[0] == ranked[1]
    finally:
        waited.close()
        queued.close()


def test_queued_sessions_report_progress_with_their_final_status(tmp_path, embedder):
    conv = load_locomo(FIXTURE)[0]
    seen = []
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        stats = ingest_conversation(mx, conv, wait=False,
                                    on_session=lambda session, stats, record: seen.append((session.number, record.status.value)))
    assert seen == [(s.number, "processed") for s in conv.sessions]
    assert stats.sessions == len(conv.sessions) and stats.turns == len(conv.turns)


def test_a_queued_session_left_unprocessed_is_reported_failed(tmp_path, embedder, monkeypatch):
    conv = load_locomo(FIXTURE)[0]
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        def broken(records):
            raise RuntimeError("disk on fire")

        monkeypatch.setattr(mx, "_process_queued", broken)
        monkeypatch.setattr(mx._queue, "_process", broken)
        stats = ingest_conversation(mx, conv, wait=False)
        assert stats.sessions == len(conv.sessions)
        assert len(stats.failed_sessions) == len(conv.sessions)
        assert all(line.startswith(f"{conv.sample_id}/session_") and "left pending" in line
                   for line in stats.failed_sessions)
        assert mx.list(user_id=conv.user_id, limit=10) == []


@pytest.mark.parametrize("wait", [True, False])
def test_every_session_is_counted_once(tmp_path, embedder, wait):
    convs = load_locomo(FIXTURE)
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        stats = ingest_conversations(mx, convs, wait=wait)
    assert stats.conversations == len(convs)
    assert stats.sessions == sum(len(c.sessions) for c in convs)
    assert stats.turns == sum(len(c.turns) for c in convs)


@pytest.mark.parametrize("data, says", [
    ({"not": "locomo"}, r"conversation 0 is not in LoCoMo's form: it has no 'conversation', 'qa'"),
    ([{"conversation": {"session_1": [{"speaker": "A"}], "session_1_date_time": "1:56 pm on 8 May, 2023"}, "qa": []}],
     r"conversation 0 is not in LoCoMo's form: session_1 turn 0 has no 'dia_id', 'text'"),
    ([5], "conversation 0 is not in LoCoMo's form: it is a number, not an object"),
    ("text", "not LoCoMo's form: a string, not a list of conversations"),
])
def test_a_file_of_another_shape_is_a_clear_error(tmp_path, data, says):
    path = tmp_path / "other.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=says):
        load_locomo(path)
