"""A caller's ids that memories cite (an add's `source_id`, a message's `id`) never start as the engine's
input ids do: cited beside the input's own id, one would be read as an input id, another user's even.
`add` refuses one before anything is written; so does a screenshot's admission."""

from __future__ import annotations

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.records import INPUT_PREFIX, InputStatus


@pytest.fixture
def mx(tmp_path):
    engine = Mirix(tmp_path / "data", embedder=None)
    yield engine
    engine.close()


def _stored(mx, user_id):
    """What the store holds of the user: their inputs (of every status) and memories."""
    return mx.inputs.newest(user_id=user_id, statuses=list(InputStatus), limit=100), mx.list(user_id=user_id)


def test_an_add_whose_source_id_poses_as_another_users_input_is_refused_and_writes_nothing(mx):
    [theirs] = mx.add("My sister is a nurse in Porto.", user_id="bob", source_id="ward-7").input_ids

    with pytest.raises(InvalidInput) as refused:
        mx.add("I went sailing on Lake Geneva with Tom.", user_id="alice", source_id=theirs)

    assert str(refused.value) == (f"source_id {theirs!r} starts with {INPUT_PREFIX!r}, as only the engine's input "
                                  "ids do (memories cite it beside them): choose an id that does not")
    assert _stored(mx, "alice") == ([], [])


@pytest.mark.parametrize("wait", [True, False])
def test_a_message_id_starting_as_an_input_id_is_refused_too(mx, wait):
    said = [{"role": "user", "content": "Hi there.", "id": "D1:1"},
            {"role": "user", "content": "I keep bees.", "id": "in_0123456789abcdef0123456789abcdef"}]

    with pytest.raises(InvalidInput, match="^message 1 id 'in_0123456789abcdef0123456789abcdef' starts with 'in_'"):
        mx.add(said, user_id="alice", wait=wait)

    assert _stored(mx, "alice") == ([], [])


def test_ids_that_only_hold_the_prefix_elsewhere_are_taken(mx):
    result = mx.add([{"role": "user", "content": "I keep bees on the roof.", "id": "turn-in_1"}], user_id="alice",
                    source_id="chat/in_progress")
    episode = next(m for m in mx.list(user_id="alice", memory_types=["episodic"]))
    assert episode.source_ids == [*result.input_ids, "chat/in_progress", "turn-in_1"]


def test_a_screenshot_source_id_starting_as_an_input_id_is_refused_alone(mx, tmp_path):
    """A folder's file names are its frames' source ids: such a file is reported invalid on its own,
    before any batch (where its refusal would fail the frames read with it)."""
    pytest.importorskip("PIL")
    from PIL import Image

    folder = tmp_path / "shots"
    folder.mkdir()
    Image.new("RGB", (64, 32), "white").save(folder / "in_frame.png")
    with pytest.raises(InvalidInput, match="^source_id 'in_frame' starts with 'in_'"):
        mx.add_screenshot(folder / "in_frame.png", user_id="alice", captured_at=None, source_id="in_frame")
    report = mx.ingest_screenshots(folder, user_id="alice")
    assert [(o.name, o.status) for o in report.outcomes] == [("in_frame.png", "invalid")]
    assert "starts with 'in_'" in (report.outcomes[0].error or "")
    assert _stored(mx, "alice") == ([], [])
