"""The input log: compaction of processed inputs keeps provenance, never an unprocessed input's text;
its listing pages by cursor."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.boundary.inputs import normalize_add
from mirix_py.errors import InvalidInput
from mirix_py.records import InputStatus
from mirix_py.store.inputs import InputPosition, compact_digest

WHEN = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)
TEXT = "Inbox\nMeeting moved to Friday 15:00"


def _record(i: int):
    return normalize_add(TEXT, user_id="ada", occurred_at=WHEN, source_id=f"frame{i}.png", kind="screenshot",
                         max_chars=10_000, metadata={"app": "Thunderbird", "window_title": "Inbox"})


def test_only_processed_inputs_lose_their_text(tmp_path):
    mx = Mirix(tmp_path / "d", embedder=None, resume=False)
    try:
        pending, processed, failed = _record(0), _record(1), _record(2)
        mx.inputs.append([pending, processed, failed])
        mx.inputs.mark([processed.id], InputStatus.processed)
        mx.inputs.mark([failed.id], InputStatus.failed, "boom")
        assert mx.inputs.compact([pending.id, processed.id, failed.id]) == 1
        assert mx.inputs.compact([processed.id]) == 0  # already compact
        for record in (pending, failed):
            assert mx.inputs.get(record.id).messages[0].content == TEXT
        after = mx.inputs.get(processed.id)
        assert after.messages == [] and after.status is InputStatus.processed
        assert after.occurred_at == WHEN and after.source_id == "frame1.png" and after.kind.value == "screenshot"
        assert after.metadata == {"app": "Thunderbird", "window_title": "Inbox", **compact_digest([TEXT])}
        assert after.metadata["text_sha256"] == hashlib.sha256(TEXT.encode()).hexdigest()[:32]
        assert after.metadata["text_chars"] == str(len(TEXT))
        assert mx.doctor().undecryptable_inputs == []  # still encrypted like every payload
    finally:
        mx.close()


def test_a_claim_can_take_only_inputs_logged_before_a_time(tmp_path):
    """The background worker's sweep takes up inputs left pending, not those just queued elsewhere."""
    from datetime import timedelta

    mx = Mirix(tmp_path / "d", embedder=None, resume=False)
    try:
        old, new = _record(0), _record(1)
        old = old.model_copy(update={"created_at": old.created_at - timedelta(minutes=5)})
        mx.inputs.append([old, new])
        cutoff = new.created_at - timedelta(minutes=1)
        taken = mx.inputs.claim("sweeper", limit=10, include_stale=False, logged_before=cutoff)
        assert [r.id for r in taken] == [old.id]
        assert mx.inputs.get(new.id).status is InputStatus.pending
    finally:
        mx.close()


def test_a_worker_gives_back_only_what_it_holds(tmp_path):
    """`release`: this worker's held inputs go back to pending; another worker's, and finished ones, stay."""
    mx = Mirix(tmp_path / "d", embedder=None, resume=False)
    try:
        mine, theirs, done = _record(0), _record(1), _record(2)
        mx.inputs.append([mine, done], claimed_by="me")
        mx.inputs.append([theirs], claimed_by="them")
        mx.inputs.mark([done.id], InputStatus.processed)
        assert mx.inputs.release([mine.id, theirs.id, done.id], "me") == 1
        assert [mx.inputs.get(r.id).status for r in (mine, theirs, done)] == [
            InputStatus.pending, InputStatus.processing, InputStatus.processed]
        assert [r.id for r in mx.inputs.claim("sweeper", limit=10, include_stale=False)] == [mine.id]
    finally:
        mx.close()



def test_an_input_read_for_a_user_is_one_of_theirs(tmp_path):
    """`get` with a user: another user's input reads as none, as the paths acting for a user show it."""
    mx = Mirix(tmp_path / "d", embedder=None, resume=False)
    try:
        adas = _record(0)
        mx.inputs.append([adas])
        assert mx.inputs.get(adas.id, user_id="bob") is None
        assert mx.inputs.get(adas.id, user_id="ada").messages[0].content == TEXT
        assert mx.inputs.get(adas.id).user_id == "ada"  # no user given: maintenance reads any input
        with pytest.raises(InvalidInput, match="no input"):
            mx.input_status(adas.id, user_id="bob")
        assert mx.input_status(adas.id, user_id="ada").id == adas.id
        assert mx.screenshot_thumbnail(adas.id, user_id="bob") is None
    finally:
        mx.close()

def _logged(mx, count, at):
    """`count` processed inputs of ada, all logged at `at`; their ids."""
    records = [_record(i).model_copy(update={"created_at": at}) for i in range(count)]
    mx.inputs.append(records)
    mx.inputs.mark([r.id for r in records], InputStatus.processed)
    return [r.id for r in records]


def test_a_listing_goes_on_after_a_cursor_whatever_is_logged_meanwhile(tmp_path):
    mx = Mirix(tmp_path / "d", embedder=None, resume=False)
    try:
        newest_first = sorted(_logged(mx, 5, WHEN), reverse=True)  # one instant: the id orders them
        listing = dict(user_id="ada", statuses=list(InputStatus), limit=2)
        first = mx.inputs.newest(**listing)
        _logged(mx, 3, WHEN + timedelta(hours=1))  # newer than the whole first page
        cursor = InputPosition.of(first[-1]).cursor()
        second = mx.inputs.newest(**listing, before=cursor)
        third = mx.inputs.newest(**listing, before=InputPosition.of(second[-1]).cursor())
        assert [[r.id for r in page] for page in (first, second, third)] == \
            [newest_first[:2], newest_first[2:4], newest_first[4:]]
        assert InputPosition.from_cursor(cursor) == InputPosition(created_at=WHEN, id=first[-1].id)
        with pytest.raises(InvalidInput, match="is not a cursor of the input log"):
            mx.inputs.newest(**listing, before=cursor[:-3])
        with pytest.raises(InvalidInput, match="cannot be combined"):
            mx.inputs.newest(**listing, before=cursor, offset=2)
    finally:
        mx.close()
